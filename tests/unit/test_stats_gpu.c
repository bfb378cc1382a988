// SPDX-License-Identifier: MIT
/*
 * Unit tests of `gtrace-bpf stats` (user/stats/stats.c, stats_acc.c,
 * stats_report.c), the reports of the GPU side: cuda_gpu_kern_sum,
 * cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum and
 * gpu_launch_latency on the merged trace of merged_trace.h must give exactly
 * the numbers worked out by hand; the latency percentiles are nearest-rank.
 * The CPU-side reports, formats and errors are in test_stats.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "stats/stats.h"
#include "stats/stats_acc.h"
#include "format/trace_file.h"
#include "merged_trace.h"
#include "test_util.h"
#include "stats_fixtures.h"

#define GPU_REPORTS "cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum," \
	"gpu_launch_latency"

/* The merged trace of merged_trace.h, worked out by hand:
 *   kernels by name: vecAdd 1000, 20, 100 -> 1120, mean 373.3, median 100,
 *   sd sqrt(592266.7 / 2) = 544.2; relu_kernel 200, 100 -> sd 70.7; step()
 *   100; all 1520: 73.7 %, 19.7 %, 6.6 %
 *   GPU copies: HtoD 300 ns, 4 MiB; memset 50 ns, 1 MiB: 85.7 %, 14.3 %
 *   NVTX: step 6000; fwd 1000, 500 (the mark left out): 80.0 %, 20.0 %
 *   latency (launch entry -> GPU start) of the linked kernels: 500, 200,
 *   100, 300 -> p50 (rank 2) 200, p90 and p99 (rank 4) 500; the kernel
 *   that started 10 ns before its launch is a causality violation */
static const char *const want_gpu_csv[] = {
	"# cuda_gpu_kern_sum",
	"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
	"73.7,1120,3,373.3,100.0,20,1000,544.2,\"vecAdd(float*, float*, float*, int)\"",
	"19.7,300,2,150.0,150.0,100,200,70.7,relu_kernel",
	"6.6,100,1,100.0,100.0,100,100,0.0,step()",
	"",
	"# cuda_gpu_mem_time_sum",
	"Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation",
	"85.7,300,1,300.0,300.0,300,300,0.0,HtoD",
	"14.3,50,1,50.0,50.0,50,50,0.0,memset",
	"",
	"# cuda_gpu_mem_size_sum",
	"Total (bytes),Count,Avg (bytes),Med (bytes),Min (bytes),Max (bytes),StdDev (bytes),Operation",
	"4194304,1,4194304.0,4194304.0,4194304,4194304,0.0,HtoD",
	"1048576,1,1048576.0,1048576.0,1048576,1048576,0.0,memset",
	"",
	"# nvtx_sum",
	"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Range",
	"80.0,6000,1,6000.0,6000.0,6000,6000,0.0,step",
	"20.0,1500,2,750.0,750.0,500,1000,353.6,fwd",
	"",
	"# gpu_launch_latency",
	"Count,Min (ns),P50 (ns),P90 (ns),P99 (ns),Max (ns),Causality,PID",
	"4,100,200,500,500,500,1,100",
};

static const char *const want_gpu_table[] = {
	"",
	" ** GPU Launch Latency (gpu_launch_latency):",
	"",
	" Count  Min (ns)  P50 (ns)  P90 (ns)  P99 (ns)  Max (ns)  Causality  PID",
	" -----  --------  --------  --------  --------  --------  ---------  ---",
	"     4       100       200       500       500       500          1  100",
	"",
	" Latency: from the entry of the launch call to the kernel's start on the GPU, of the "
	"kernels linked to their launch; it includes the time queued behind earlier work.",
	" Pnn: nearest-rank percentiles. Causality: linked kernels that started before their "
	"launch call (a clock or linking error), left out of the latencies.",
};

static void test_gpu_reports(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	struct run r = { 0 };

	(void)state;
	mt_file(path);
	run_stats(path, GPU_REPORTS, STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_text(r.out, want_gpu_csv, N(want_gpu_csv));
	run_free(&r);

	run_stats(path, "gpu_launch_latency", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	check_text(r.out, want_gpu_table, N(want_gpu_table));
	run_free(&r);

	/* the reports of the calls see the merged trace's calls as before */
	run_stats(path, "cuda_launch_sum", STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n3,75.0,1,64x1x1,256x1x1,cuLaunchKernel,"
				      "\"vecAdd(float*, float*, float*, int)\"\n"));
	run_free(&r);
}

/* Nearest-rank percentiles on known data: 100 launches whose kernels start
 * 10, 20, ... 1000 ns after them (in shuffled order), and two causality
 * violations, one flagged by the merger, one found by the times. */
static void test_latency_percentiles(void **state)
{
	const char *path = tmp_path("latency.gtrace");
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 1, .host = "h",
		.kernel = "k", .cmdline = "c", .options = "",
	};
	struct trace_writer_opts o = { .force = true };
	struct trace_writer *w;
	struct run r = { 0 };
	struct dvec d = { 0 };
	uint64_t five[] = { 5, 1, 4, 2, 3 };

	(void)state;
	assert_int_equal(trace_writer__create(path, &info, &o, &w), 0);
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t ts = 10000 + i * 10000, lat = ((i * 37) % 100 + 1) * 10;

		mt_launch(w, ts, 101);
		mt_kernel(w, ts + lat, 5, 101, ts, MT_LINKED, 7, (uint32_t)i, "k");
		mt_ret(w, ts + 2, 101, GT_API_cuLaunchKernel, 0, 0);
	}
	mt_launch(w, 2000000, 101);
	mt_kernel(w, 1999990, 5, 101, 2000000, MT_LINKED | GT_GPU_CAUSALITY, 7, 100, "k");
	mt_kernel(w, 1999995, 5, 101, 2000000, MT_LINKED, 7, 101, "k");
	mt_ret(w, 2000002, 101, GT_API_cuLaunchKernel, 0, 0);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);

	run_stats(path, "gpu_launch_latency,cuda_gpu_kern_sum", STATS_JSON, "us", &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "{\"count\":100,\"min\":0.010,\"p50\":0.500,\"p90\":0.900,"
				      "\"p99\":0.990,\"max\":1.000,\"causality\":2,\"pid\":100}"));
	assert_non_null(strstr(r.out, "\"total_time\":0.510,\"instances\":102,"));
	run_free(&r);

	/* and the function itself: rank ceil(p n / 100) */
	d.v = five;
	d.n = d.cap = 5;
	assert_int_equal(dvec__percentile(&d, 50), 3);
	assert_int_equal(dvec__percentile(&d, 90), 5);
	assert_int_equal(dvec__percentile(&d, 20), 1);
	assert_int_equal(dvec__percentile(&d, 21), 2);
	assert_int_equal(dvec__percentile(&d, 1), 1);
	assert_int_equal(dvec__percentile(&d, 100), 5);
	d.n = 0;
	assert_int_equal(dvec__percentile(&d, 50), 0);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_stats_gpu");
}

static int group_teardown(void **state)
{
	static const char *const files[] = {
		"merged.gtrace", "latency.gtrace",
	};

	(void)state;
	return tu_tmpdir_clean(files, N(files));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_reports),
		cmocka_unit_test(test_latency_percentiles),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
