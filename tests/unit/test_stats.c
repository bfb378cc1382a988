// SPDX-License-Identifier: MIT
/*
 * Unit tests of `gtrace-bpf stats` (user/stats/stats.c, stats_acc.c,
 * stats_report.c), the reports of the CPU side: a small trace whose every
 * number was worked out by hand (stats_fixtures.h describes it) must give
 * exactly the expected tables, CSV and JSON; time units scale exactly;
 * medians are exact for odd and even counts; an unknown report is refused
 * before the file is read; a damaged trace gives the reports of what was
 * read and one warning.  The GPU-side reports are in test_stats_gpu.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "stats/stats.h"
#include "stats/stats_acc.h"
#include "format/trace_file.h"
#include "test_util.h"
#include "stats_fixtures.h"

/* ------------------------------------------------------------ expected output */

static const char *const want_table[] = {
	"",
	" ** CUDA API Summary (cuda_api_sum):",
	"",
	" Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Incomplete  Name",
	" --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----------  -------------------",
	"     85.9            1,650          6     330.0     200.0        50     1,000        386.7           1  cuStreamSynchronize",
	"      5.2              100          1     100.0     100.0       100       100          0.0           0  cuModuleGetFunction",
	"      4.7               90          3      30.0      20.0        10        60         26.5           0  cuLaunchKernel",
	"      2.1               40          1      40.0      40.0        40        40          0.0           0  cuLaunchKernel_ptsz",
	"      1.1               21          2      10.5      10.5         5        16          7.8           0  cuMemcpyHtoD_v2",
	"      0.5                9          1       9.0       9.0         9         9          0.0           0  cuGraphLaunch",
	"      0.4                7          1       7.0       7.0         7         7          0.0           0  cuMemsetD32_v2",
	"      0.2                3          1       3.0       3.0         3         3          0.0           0  cuMemcpyDtoH_v2",
	"        -                -          1         -         -         -         -            -           1  cuCtxSynchronize",
	"",
	" Times are those of calls with an exit. Incomplete: calls whose exit was not recorded (recording stopped or the process ended inside the call); they count in Num Calls only. Launches are recorded at entry only unless the recording used --launch-exit: they count in Num Calls with no times.",
	" Med is the exact median; StdDev the sample standard deviation.",
	"",
	" ** CUDA Launch Summary (cuda_launch_sum):",
	"",
	" Launches  Launches (%)  Shapes  Grid    Block    Launch API           Name",
	" --------  ------------  ------  ------  -------  -------------------  -----------------------------------",
	"        3          60.0       2  64x1x1  256x1x1  cuLaunchKernel       vecAdd(float*, float*, float*, int)",
	"        1          20.0       -  -       -        cuGraphLaunch        [CUDA graph launch]",
	"        1          20.0       1  64x1x1  256x1x1  cuLaunchKernel_ptsz  unknown_kernel_0x3e7",
	"",
	" Launches: every launch call, failed and incomplete ones included. Shapes: distinct (grid, block) pairs; Grid and Block: the most frequent pair (the first seen on a tie).",
	"",
	" ** CUDA Memory Operation Summary (by Size) (cuda_mem_size_sum):",
	"",
	" Total (bytes)  Count  Avg (bytes)  Med (bytes)  Min (bytes)  Max (bytes)  StdDev (bytes)  Operation",
	" -------------  -----  -----------  -----------  -----------  -----------  --------------  ---------",
	"         4,000      2      2,000.0      2,000.0        1,000        3,000         1,414.2  HtoD",
	"         1,024      1      1,024.0      1,024.0        1,024        1,024             0.0  memset",
	"",
	" Bytes of the memcpy and memset calls by direction (as dump's \"kind\"); failed calls are left out, calls without an exit counted (their size is known at entry).",
	"",
	" ** CUDA Synchronization Summary (cuda_sync_sum):",
	"",
	" Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Incomplete  PID  Name",
	" --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----------  ---  -------------------",
	"     97.0            1,600          5     400.0     250.0       100     1,000        408.2           1  100  cuStreamSynchronize",
	"      3.0               50          1      50.0      50.0        50        50          0.0           0  200  cuStreamSynchronize",
	"        -                -          1         -         -         -         -            -           1  100  cuCtxSynchronize",
	"",
	" Calls that wait for the GPU or poll it, per process: *Synchronize, *Query and cuStreamWaitEvent (which only orders the GPU: its time is the call's own cost).",
	" Times are those of calls with an exit. Incomplete: waits whose exit was not recorded (recording stopped or the process ended while waiting).",
	"",
	" ** Process Summary (process_sum):",
	"",
	" PID  Events  Calls  API Time (ns)  Launches  Sync Time (ns)  Command",
	" ---  ------  -----  -------------  --------  --------------  ---------------",
	" 100      29     15          1,830         4           1,600  app --tag \"x\\y\"",
	" 200       6      2             90         1              50  worker",
	"",
	" Events: the process' records in the trace. API Time: summed time of its calls with an exit; Sync Time: that of its calls in cuda_sync_sum.",
};

/* the reports of libcuda calls, as -r would name them (all but ioctl_sum) */
#define CUDA_REPORTS "cuda_api_sum,cuda_launch_sum,cuda_mem_size_sum,cuda_sync_sum,process_sum"

static const char *const want_csv[] = {
	"# cuda_api_sum",
	"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Incomplete,Name",
	"85.9,1650,6,330.0,200.0,50,1000,386.7,1,cuStreamSynchronize",
	"5.2,100,1,100.0,100.0,100,100,0.0,0,cuModuleGetFunction",
	"4.7,90,3,30.0,20.0,10,60,26.5,0,cuLaunchKernel",
	"2.1,40,1,40.0,40.0,40,40,0.0,0,cuLaunchKernel_ptsz",
	"1.1,21,2,10.5,10.5,5,16,7.8,0,cuMemcpyHtoD_v2",
	"0.5,9,1,9.0,9.0,9,9,0.0,0,cuGraphLaunch",
	"0.4,7,1,7.0,7.0,7,7,0.0,0,cuMemsetD32_v2",
	"0.2,3,1,3.0,3.0,3,3,0.0,0,cuMemcpyDtoH_v2",
	",,1,,,,,,1,cuCtxSynchronize",
	"",
	"# cuda_launch_sum",
	"Launches,Launches (%),Shapes,Grid,Block,Launch API,Name",
	"3,60.0,2,64x1x1,256x1x1,cuLaunchKernel,\"vecAdd(float*, float*, float*, int)\"",
	"1,20.0,,,,cuGraphLaunch,[CUDA graph launch]",
	"1,20.0,1,64x1x1,256x1x1,cuLaunchKernel_ptsz,unknown_kernel_0x3e7",
	"",
	"# cuda_mem_size_sum",
	"Total (bytes),Count,Avg (bytes),Med (bytes),Min (bytes),Max (bytes),StdDev (bytes),Operation",
	"4000,2,2000.0,2000.0,1000,3000,1414.2,HtoD",
	"1024,1,1024.0,1024.0,1024,1024,0.0,memset",
	"",
	"# cuda_sync_sum",
	"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Incomplete,PID,Name",
	"97.0,1600,5,400.0,250.0,100,1000,408.2,1,100,cuStreamSynchronize",
	"3.0,50,1,50.0,50.0,50,50,0.0,0,200,cuStreamSynchronize",
	",,1,,,,,,1,100,cuCtxSynchronize",
	"",
	"# process_sum",
	"PID,Events,Calls,API Time (ns),Launches,Sync Time (ns),Command",
	"100,29,15,1830,4,1600,\"app --tag \"\"x\\y\"\"\"",
	"200,6,2,90,1,50,worker",
};

/* ------------------------------------------------------------ tests */

static void test_table(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };

	(void)state;
	write_trace(path, true);
	run_stats(path, CUDA_REPORTS, STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_text(r.out, want_table, N(want_table));
	run_free(&r);

	/* "ns" is the default; asked for by name it gives the same */
	run_stats(path, CUDA_REPORTS, STATS_TABLE, "ns", &r);
	assert_int_equal(r.rc, 0);
	check_text(r.out, want_table, N(want_table));
	run_free(&r);

	/* without -r: every report, the ioctl one after the CUDA ones, then
	 * those of the GPU side (this trace has neither ioctls nor GPU records) */
	run_stats(path, NULL, STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " ** Process Summary (process_sum):"));
	assert_non_null(strstr(r.out, " ** NVIDIA Driver ioctl Summary (ioctl_sum):\n\n SKIPPED: "));
	assert_true(strstr(r.out, "(process_sum)") < strstr(r.out, "(ioctl_sum)"));
	assert_true(strstr(r.out, "(ioctl_sum)") < strstr(r.out, "(cuda_gpu_kern_sum)"));
	{
		char want[512];

		snprintf(want, sizeof(want), " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
			 " SKIPPED: %s does not contain GPU records (kernels).\n", path);
		assert_non_null(strstr(r.out, want));
		snprintf(want, sizeof(want), " ** GPU Launch Latency (gpu_launch_latency):\n\n"
			 " SKIPPED: %s does not contain GPU records (kernels linked to their "
			 "launch).\n", path);
		assert_non_null(strstr(r.out, want));
		/* then capture control's */
		snprintf(want, sizeof(want), "\n ** Capture Ranges and Windows (capture_sum):\n\n"
			 " SKIPPED: %s does not contain capture ranges or light-mode windows.\n",
			 path);
		assert_non_null(strstr(r.out, want));
		assert_true(strstr(r.out, "(gpu_launch_latency)") < strstr(r.out, "(capture_sum)"));
		/* and the GPU metrics */
		snprintf(want, sizeof(want), "\n ** GPU Metrics Summary (gpu_metrics_sum):\n\n"
			 " SKIPPED: %s does not contain GPU metric samples (--gpu-metrics).\n", path);
		assert_non_null(strstr(r.out, want));
		assert_true(strstr(r.out, "(capture_sum)") < strstr(r.out, "(gpu_metrics_sum)"));
		/* and the devices': this trace has no context call, its calls'
		 * devices are unknown */
		assert_true(strstr(r.out, "(gpu_metrics_sum)") < strstr(r.out, "(cuda_device_sum)"));
		assert_non_null(strstr(r.out, "\n 100  unknown         4       2       4,000 "));
		assert_non_null(strstr(r.out, "\n 200  unknown         1       0           0 "));
		assert_non_null(strstr(r.out, "never guessed.\n"));
		/* then NCCL's */
		snprintf(want, sizeof(want), "\n ** NCCL Summary (nccl_sum):\n\n"
			 " SKIPPED: %s does not contain NCCL calls.\n", path);
		assert_non_null(strstr(r.out, want));
		assert_true(strstr(r.out, "(cuda_device_sum)") < strstr(r.out, "(nccl_sum)"));
		/* then the hosts of a job trace, the last report, which ends the output */
		snprintf(want, sizeof(want), "\n ** Host Summary (job trace) (host_sum):\n\n"
			 " SKIPPED: %s does not contain hosts (a job trace of merge --hosts).\n", path);
		assert_non_null(strstr(r.out, want));
		assert_true(strstr(r.out, "(nccl_sum)") < strstr(r.out, "(host_sum)"));
		assert_string_equal(strstr(r.out, want) + strlen(want), "");
	}
	assert_non_null(strstr(r.out, "(cuda_gpu_mem_time_sum):\n\n SKIPPED: "));
	assert_non_null(strstr(r.out, "(cuda_gpu_mem_size_sum):\n\n SKIPPED: "));
	assert_non_null(strstr(r.out, " ** NVTX Range Summary (nvtx_sum):\n\n SKIPPED: "));
	run_free(&r);
}

static void test_csv(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };

	(void)state;
	write_trace(path, true);
	run_stats(path, CUDA_REPORTS, STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_text(r.out, want_csv, N(want_csv));
	run_free(&r);
}

static void test_json(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };
	char *want;

	(void)state;
	write_trace(path, true);
	run_stats(path, "cuda_sync_sum,cuda_mem_size_sum,cuda_launch_sum", STATS_JSON, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_true(asprintf(&want,
		"{\"file\":\"%s\",\"timeunit\":\"ns\",\"truncated\":false,\"reports\":[\n"
		"{\"report\":\"cuda_sync_sum\",\"title\":\"CUDA Synchronization Summary\",\"rows\":[\n"
		"{\"time_pct\":97.0,\"total_time\":1600,\"num_calls\":5,\"avg\":400.0,\"med\":250.0,\"min\":100,\"max\":1000,\"stddev\":408.2,\"incomplete\":1,\"pid\":100,\"name\":\"cuStreamSynchronize\"},\n"
		"{\"time_pct\":3.0,\"total_time\":50,\"num_calls\":1,\"avg\":50.0,\"med\":50.0,\"min\":50,\"max\":50,\"stddev\":0.0,\"incomplete\":0,\"pid\":200,\"name\":\"cuStreamSynchronize\"},\n"
		"{\"time_pct\":null,\"total_time\":null,\"num_calls\":1,\"avg\":null,\"med\":null,\"min\":null,\"max\":null,\"stddev\":null,\"incomplete\":1,\"pid\":100,\"name\":\"cuCtxSynchronize\"}]},\n"
		"{\"report\":\"cuda_mem_size_sum\",\"title\":\"CUDA Memory Operation Summary (by Size)\",\"rows\":[\n"
		"{\"total\":4000,\"count\":2,\"avg\":2000.0,\"med\":2000.0,\"min\":1000,\"max\":3000,\"stddev\":1414.2,\"operation\":\"HtoD\"},\n"
		"{\"total\":1024,\"count\":1,\"avg\":1024.0,\"med\":1024.0,\"min\":1024,\"max\":1024,\"stddev\":0.0,\"operation\":\"memset\"}]},\n"
		"{\"report\":\"cuda_launch_sum\",\"title\":\"CUDA Launch Summary\",\"rows\":[\n"
		"{\"launches\":3,\"launches_pct\":60.0,\"shapes\":2,\"grid\":\"64x1x1\",\"block\":\"256x1x1\",\"launch_api\":\"cuLaunchKernel\",\"name\":\"vecAdd(float*, float*, float*, int)\"},\n"
		"{\"launches\":1,\"launches_pct\":20.0,\"shapes\":null,\"grid\":null,\"block\":null,\"launch_api\":\"cuGraphLaunch\",\"name\":\"[CUDA graph launch]\"},\n"
		"{\"launches\":1,\"launches_pct\":20.0,\"shapes\":1,\"grid\":\"64x1x1\",\"block\":\"256x1x1\",\"launch_api\":\"cuLaunchKernel_ptsz\",\"name\":\"unknown_kernel_0x3e7\"}]}\n"
		"]}\n", path) > 0);
	assert_string_equal(r.out, want);
	free(want);
	run_free(&r);

	/* strings escaped, time columns in the unit asked for */
	run_stats(path, "process_sum", STATS_JSON, "ms", &r);
	assert_int_equal(r.rc, 0);
	assert_true(asprintf(&want,
		"{\"file\":\"%s\",\"timeunit\":\"ms\",\"truncated\":false,\"reports\":[\n"
		"{\"report\":\"process_sum\",\"title\":\"Process Summary\",\"rows\":[\n"
		"{\"pid\":100,\"events\":29,\"calls\":15,\"api_time\":0.001830,\"launches\":4,\"sync_time\":0.001600,\"command\":\"app --tag \\\"x\\\\y\\\"\"},\n"
		"{\"pid\":200,\"events\":6,\"calls\":2,\"api_time\":0.000090,\"launches\":1,\"sync_time\":0.000050,\"command\":\"worker\"}]}\n"
		"]}\n", path) > 0);
	assert_string_equal(r.out, want);
	free(want);
	run_free(&r);
}

static void test_timeunits(void **state)
{
	/* one report: a header row and the rows, no other line */
	static const char *const want_us[] = {
		"Time (%),Total Time (us),Num Calls,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Incomplete,Name",
		"85.9,1.650,6,0.3300,0.2000,0.050,1.000,0.3867,1,cuStreamSynchronize",
		"5.2,0.100,1,0.1000,0.1000,0.100,0.100,0.0000,0,cuModuleGetFunction",
		"4.7,0.090,3,0.0300,0.0200,0.010,0.060,0.0265,0,cuLaunchKernel",
		"2.1,0.040,1,0.0400,0.0400,0.040,0.040,0.0000,0,cuLaunchKernel_ptsz",
		"1.1,0.021,2,0.0105,0.0105,0.005,0.016,0.0078,0,cuMemcpyHtoD_v2",
		"0.5,0.009,1,0.0090,0.0090,0.009,0.009,0.0000,0,cuGraphLaunch",
		"0.4,0.007,1,0.0070,0.0070,0.007,0.007,0.0000,0,cuMemsetD32_v2",
		"0.2,0.003,1,0.0030,0.0030,0.003,0.003,0.0000,0,cuMemcpyDtoH_v2",
		",,1,,,,,,1,cuCtxSynchronize",
	};
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };

	(void)state;
	write_trace(path, true);
	run_stats(path, "cuda_api_sum", STATS_CSV, "us", &r);
	assert_int_equal(r.rc, 0);
	check_text(r.out, want_us, N(want_us));
	run_free(&r);

	run_stats(path, "cuda_api_sum", STATS_CSV, "ms", &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n85.9,0.001650,6,0.0003300,0.0002000,0.000050,0.001000,"
				      "0.0003867,1,cuStreamSynchronize\n"));
	assert_non_null(strstr(r.out, "\n1.1,0.000021,2,0.0000105,0.0000105,0.000005,0.000016,"
				      "0.0000078,0,cuMemcpyHtoD_v2\n"));
	assert_non_null(strstr(r.out, "Total Time (ms)"));
	run_free(&r);

	run_stats(path, "cuda_api_sum", STATS_CSV, "s", &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n85.9,0.000001650,6,0.0000003300,0.0000002000,0.000000050,"
				      "0.000001000,0.0000003867,1,cuStreamSynchronize\n"));
	assert_non_null(strstr(r.out, "Avg (s)"));
	run_free(&r);

	/* the table groups the integer part only */
	run_stats(path, "cuda_sync_sum", STATS_TABLE, "us", &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n     97.0            1.600          5    0.4000    0.2500     0.100     1.000"
				      "       0.4082           1  100  cuStreamSynchronize\n"));
	run_free(&r);

	/* a big total: groups of three in the table, every digit kept in us */
	{
		static const char *const want_big[] = {
			"",
			" ** CUDA Synchronization Summary (cuda_sync_sum):",
			"",
			" Time (%)  Total Time (us)  Num Calls        Avg (us)        Med (us)       Min (us)       Max (us)  StdDev (us)  Incomplete  PID  Name",
			" --------  ---------------  ---------  --------------  --------------  -------------  -------------  -----------  ----------  ---  -------------------",
			"    100.0    1,234,567.891          1  1,234,567.8910  1,234,567.8910  1,234,567.891  1,234,567.891       0.0000           0  100  cuStreamSynchronize",
			"",
			" Calls that wait for the GPU or poll it, per process: *Synchronize, *Query and cuStreamWaitEvent (which only orders the GPU: its time is the call's own cost).",
			" Times are those of calls with an exit. Incomplete: waits whose exit was not recorded (recording stopped or the process ended while waiting).",
		};
		const char *big = tmp_path("big.gtrace");

		w_open(big);
		w_call_ret(1000, 1234567891ull, API(cuStreamSynchronize), 7, 0, 0);
		w_close(true);
		run_stats(big, "cuda_sync_sum", STATS_TABLE, "us", &r);
		assert_int_equal(r.rc, 0);
		check_text(r.out, want_big, N(want_big));
		run_free(&r);
	}
}

static void test_select(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };
	const char *a, *b;

	(void)state;
	write_trace(path, true);
	/* in the order asked, each once, blanks around names ignored */
	run_stats(path, "process_sum, cuda_api_sum,process_sum", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	a = strstr(r.out, "(process_sum):");
	b = strstr(r.out, "(cuda_api_sum):");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_null(strstr(a + 1, "(process_sum):"));
	assert_null(strstr(r.out, "cuda_launch_sum"));
	run_free(&r);

	/* the array main.c lists in its help */
	assert_string_equal(stats_report_names[0], "cuda_api_sum");
	assert_string_equal(stats_report_names[3], "cuda_sync_sum");
	assert_string_equal(stats_report_names[4], "cuda_sync_site_sum");
	assert_string_equal(stats_report_names[5], "process_sum");
	assert_string_equal(stats_report_names[6], "ioctl_sum");
	assert_string_equal(stats_report_names[7], "cuda_gpu_kern_sum");
	assert_string_equal(stats_report_names[8], "cuda_gpu_site_sum");
	assert_string_equal(stats_report_names[12], "gpu_launch_latency");
	assert_string_equal(stats_report_names[13], "capture_sum");
	assert_string_equal(stats_report_names[14], "gpu_metrics_sum");
	assert_string_equal(stats_report_names[15], "cuda_device_sum");
	assert_string_equal(stats_report_names[16], "nccl_sum");
	assert_string_equal(stats_report_names[17], "host_sum");
	assert_null(stats_report_names[18]);
}

static void test_unknown_report(void **state)
{
	static const char want[] = "gtrace-bpf: unknown report 'cuda_gpu_sum' (cuda_api_sum, "
		"cuda_launch_sum, cuda_mem_size_sum, cuda_sync_sum, cuda_sync_site_sum, process_sum, ioctl_sum, "
		"cuda_gpu_kern_sum, cuda_gpu_site_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum, "
		"gpu_launch_latency, capture_sum, gpu_metrics_sum, cuda_device_sum, nccl_sum, host_sum)\n";
	struct run r = { 0 };

	(void)state;
	/* refused before the file is read: it does not exist */
	run_stats(tmp_path("absent.gtrace"), "cuda_api_sum,cuda_gpu_sum", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 2);	/* a bad command line */
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);

	run_stats(tmp_path("absent.gtrace"), "", STATS_JSON, NULL, &r);
	assert_int_equal(r.rc, 2);	/* a bad command line */
	assert_string_equal(r.err, "gtrace-bpf: unknown report '' (cuda_api_sum, cuda_launch_sum, "
				   "cuda_mem_size_sum, cuda_sync_sum, cuda_sync_site_sum, process_sum, ioctl_sum, "
				   "cuda_gpu_kern_sum, cuda_gpu_site_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, "
				   "nvtx_sum, gpu_launch_latency, capture_sum, gpu_metrics_sum, "
				   "cuda_device_sum, nccl_sum, host_sum)\n");
	assert_string_equal(r.out, "");
	run_free(&r);

	run_stats(tmp_path("absent.gtrace"), NULL, STATS_TABLE, "h", &r);
	assert_int_equal(r.rc, 2);	/* a bad command line */
	assert_string_equal(r.err, "gtrace-bpf: unknown time unit 'h' (ns, us, ms, s)\n");
	assert_string_equal(r.out, "");
	run_free(&r);
}

static void test_unreadable(void **state)
{
	const char *path;
	struct run r = { 0 };
	char want[256];
	FILE *f;

	(void)state;
	path = tmp_path("absent.gtrace");
	run_stats(path, NULL, STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: No such file or directory\n", path);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);

	path = tmp_path("notes.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a trace\n", f);
	fclose(f);
	run_stats(path, NULL, STATS_JSON, NULL, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: not a gtrace file (bad magic)\n",
		 path);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);
}

static void test_truncated(void **state)
{
	const char *path = tmp_path("cut.gtrace");
	struct trace_reader *rd;
	const struct gt_hdr *rec;
	char want[512], *damage;
	struct run r = { 0 };
	unsigned nrec = 0;
	struct stat st;

	(void)state;
	write_trace(path, false);
	assert_int_equal(trace_reader__open(path, &rd, NULL), 0);
	while (trace_reader__next(rd, &rec) == 1)
		nrec++;
	assert_true(trace_reader__truncated(rd));
	damage = strdup(trace_reader__damage(rd));
	trace_reader__close(rd);
	assert_int_equal(stat(path, &st), 0);
	/* the readers' rule: the reports of what was read, status 1, one line
	 * saying how much (every byte: the recording stopped after its one
	 * chunk, without its trailer) */
	snprintf(want, sizeof(want),
		 "gtrace-bpf: %s is damaged: %s; read %u records before it (1 whole chunk, %lld of "
		 "%lld bytes); the reports cover the records read\n", path, damage, nrec,
		 (long long)st.st_size, (long long)st.st_size);

	run_stats(path, NULL, STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, want);
	/* all but pid 200's exit record was read */
	assert_non_null(strstr(r.out, "\n85.9,1650,6,330.0,200.0,50,1000,386.7,1,cuStreamSynchronize\n"));
	assert_non_null(strstr(r.out, "\n200,5,2,90,1,50,worker\n"));
	run_free(&r);

	run_stats(path, "cuda_launch_sum", STATS_JSON, NULL, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, want);
	snprintf(want, sizeof(want), "\"truncated\":true,\"damage\":\"%s\",\"reports\":[", damage);
	assert_non_null(strstr(r.out, want));
	run_free(&r);
	free(damage);
}

static void test_empty_reports(void **state)
{
	const char *path = tmp_path("empty.gtrace");
	struct run r = { 0 };
	char *want;

	(void)state;
	w_open(path);
	w_proc(GT_REC_EXEC, 100, 300, "lonely");
	w_proc(GT_REC_EXIT, 200, 300, "lonely");
	w_close(true);

	run_stats(path, "cuda_api_sum,process_sum", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_true(asprintf(&want,
		"\n ** CUDA API Summary (cuda_api_sum):\n\n"
		" SKIPPED: %s does not contain CUDA API calls.\n"
		"\n ** Process Summary (process_sum):\n\n"
		" PID  Events  Calls  API Time (ns)  Launches  Sync Time (ns)  Command\n"
		" ---  ------  -----  -------------  --------  --------------  -------\n"
		" 300       2      0              0         0               0  lonely\n"
		"\n Events: the process' records in the trace. API Time: summed time of its calls with "
		"an exit; Sync Time: that of its calls in cuda_sync_sum.\n", path) > 0);
	assert_string_equal(r.out, want);
	free(want);
	run_free(&r);

	run_stats(path, "cuda_launch_sum,cuda_mem_size_sum", STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
		"# cuda_launch_sum\n"
		"Launches,Launches (%),Shapes,Grid,Block,Launch API,Name\n"
		"\n# cuda_mem_size_sum\n"
		"Total (bytes),Count,Avg (bytes),Med (bytes),Min (bytes),Max (bytes),StdDev (bytes),Operation\n");
	run_free(&r);

	run_stats(path, "cuda_sync_sum", STATS_JSON, "s", &r);
	assert_int_equal(r.rc, 0);
	assert_true(asprintf(&want, "{\"file\":\"%s\",\"timeunit\":\"s\",\"truncated\":false,"
				    "\"reports\":[\n{\"report\":\"cuda_sync_sum\",\"title\":"
				    "\"CUDA Synchronization Summary\",\"rows\":[]}\n]}\n", path) > 0);
	assert_string_equal(r.out, want);
	free(want);
	run_free(&r);
}

/* Many launches of one kernel: shape counting, the most frequent shape. */
static void test_shapes(void **state)
{
	const char *path = tmp_path("shapes.gtrace");
	struct run r = { 0 };

	(void)state;
	w_open(path);
	w_str(GT_REC_CALL_STR, 10, 100, API(cuModuleGetFunction), 0x3000, 0, "_Z4fillPfif");
	w_ret(20, 100, 101, API(cuModuleGetFunction), 0, 0x5000, GT_RET_OUT);
	/* 1000 launches over 250 grids; grid 32 (i % 250 == 0 .. ) comes 4 + 100 times */
	for (int i = 0; i < 1000; i++)
		w_launch(100 + (uint64_t)i * 10, 1, 100, 101, i % 3 ? API(cuLaunchKernel) :
			 API(cuLaunchKernelEx), 0x5000, (uint32_t)(i % 250 + 1));
	for (int i = 0; i < 100; i++)
		w_launch(20000 + (uint64_t)i * 10, 1, 100, 101, API(cuLaunchKernel), 0x5000, 32);
	w_close(true);
	run_stats(path, "cuda_launch_sum", STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
		"Launches,Launches (%),Shapes,Grid,Block,Launch API,Name\n"
		"1100,100.0,250,32x1x1,256x1x1,\"cuLaunchKernel, cuLaunchKernelEx\","
		"\"fill(float*, int, float)\"\n");
	run_free(&r);
}

/* Launches recorded at entry only (the recorder's default) count as calls
 * and launches, with no time and not as incomplete; a sync between them
 * pairs with its own exit. */
static void test_entry_only(void **state)
{
	const char *path = tmp_path("entry_only.gtrace");
	struct run r = { 0 };

	(void)state;
	w_open(path);
	w_str(GT_REC_CALL_STR, 10, 100, API(cuModuleGetFunction), 0x3000, 0, "_Z4fillPfif");
	w_ret(20, 100, 101, API(cuModuleGetFunction), 0, 0x5000, GT_RET_OUT);
	w_launch(100, ENTRY_ONLY, 100, 101, API(cuLaunchKernel), 0x5000, 4);
	w_call(200, 100, 101, API(cuStreamSynchronize), 7, 0, 0);
	w_launch(250, ENTRY_ONLY, 100, 101, API(cuLaunchKernel), 0x5000, 4);
	w_ret(300, 100, 101, API(cuStreamSynchronize), 0, 0, 0);
	w_launch(400, ENTRY_ONLY, 100, 101, API(cuLaunchKernelEx), 0x5000, 8);
	w_launch(500, 30, 100, 101, API(cuLaunchKernel), 0x5000, 4);
	/* a process whose only calls are launches at entry: its API Time is
	 * unknown, not 0 */
	w_launch(600, ENTRY_ONLY, 300, 301, API(cuLaunchKernelEx), 0x6000, 2);
	w_close(true);
	run_stats(path, "cuda_api_sum,cuda_launch_sum,process_sum", STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out,
		"# cuda_api_sum\n"
		"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
		"Incomplete,Name\n"
		"71.4,100,1,100.0,100.0,100,100,0.0,0,cuStreamSynchronize\n"
		"21.4,30,3,30.0,30.0,30,30,0.0,0,cuLaunchKernel\n"
		"7.1,10,1,10.0,10.0,10,10,0.0,0,cuModuleGetFunction\n"
		",,2,,,,,,0,cuLaunchKernelEx\n"
		"\n"
		"# cuda_launch_sum\n"
		"Launches,Launches (%),Shapes,Grid,Block,Launch API,Name\n"
		"4,80.0,2,4x1x1,256x1x1,\"cuLaunchKernel, cuLaunchKernelEx\",\"fill(float*, int, float)\"\n"
		"1,20.0,1,2x1x1,256x1x1,cuLaunchKernelEx,unknown_kernel_0x6000\n"
		"\n"
		"# process_sum\n"
		"PID,Events,Calls,API Time (ns),Launches,Sync Time (ns),Command\n"
		"100,9,6,140,4,100,\n"
		"300,1,1,,1,0,\n");
	run_free(&r);

	/* the same in the other formats: "-" and null, not 0 */
	run_stats(path, "cuda_api_sum", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n        -                -          2         -         -"
				      "         -         -            -           0  cuLaunchKernelEx\n"));
	run_free(&r);
	run_stats(path, "cuda_api_sum,process_sum", STATS_JSON, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "{\"time_pct\":null,\"total_time\":null,\"num_calls\":2,"
				      "\"avg\":null,\"med\":null,\"min\":null,\"max\":null,"
				      "\"stddev\":null,\"incomplete\":0,\"name\":\"cuLaunchKernelEx\"}"));
	assert_non_null(strstr(r.out, "{\"pid\":300,\"events\":1,\"calls\":1,\"api_time\":null,"));
	run_free(&r);
}

/* CSV is one table a file: several reports on one stream are refused
 * before any work (status 2, one line), -o BASE writes BASE_<report>.csv
 * each, 0600, and replaces none without force. */
static void test_csv_files(void **state)
{
	const char *path = tmp_path("full.gtrace"), *base = tmp_path("run.csv");
	struct stats_opts o = { .path = path, .reports = "cuda_api_sum,process_sum",
				.format = STATS_CSV };
	char api[192], proc[192], *text;
	struct run r = { 0 };

	(void)state;
	write_trace(path, true);
	snprintf(api, sizeof(api), "%s/run_cuda_api_sum.csv", tmpdir);
	snprintf(proc, sizeof(proc), "%s/run_process_sum.csv", tmpdir);

	tu_run_open(&r, &o.out, &o.err);
	r.rc = stats__run(&o);
	tu_run_close(o.out, o.err);
	assert_int_equal(r.rc, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "gtrace-bpf: --format csv writes one report per file: choose "
			    "one with -r REPORT, or give -o BASE for BASE_<report>.csv each\n");
	run_free(&r);

	/* "-o run.csv" is the base "run" */
	o.output = base;
	tu_run_open(&r, &o.out, &o.err);
	r.rc = stats__run(&o);
	tu_run_close(o.out, o.err);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	run_free(&r);
	text = slurp(proc);
	assert_non_null(text);
	assert_string_equal(text, "PID,Events,Calls,API Time (ns),Launches,Sync Time (ns),Command\n"
			    "100,29,15,1830,4,1600,\"app --tag \"\"x\\y\"\"\"\n200,6,2,90,1,50,worker\n");
	free(text);
	text = slurp(api);
	assert_non_null(text);
	assert_true(!strncmp(text, "Time (%),Total Time (ns),Num Calls,", 35));
	free(text);

	/* there now: refused without --force, before the work, files kept */
	assert_int_equal(truncate(proc, 3), 0);
	tu_run_open(&r, &o.out, &o.err);
	r.rc = stats__run(&o);
	tu_run_close(o.out, o.err);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "run_cuda_api_sum.csv exists: use --force to replace it\n"));
	/* one line */
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	run_free(&r);
	text = slurp(proc);
	assert_string_equal(text, "PID");
	free(text);
	o.force = true;
	tu_run_open(&r, &o.out, &o.err);
	r.rc = stats__run(&o);
	tu_run_close(o.out, o.err);
	assert_int_equal(r.rc, 0);
	run_free(&r);
	text = slurp(proc);
	assert_true(!strncmp(text, "PID,Events,", 11));
	free(text);
	unlink(api);
	unlink(proc);
}

/* A full disk is named as such, whatever the format: not EIO. */
static void test_full_disk(void **state)
{
	static const enum stats_format fmts[] = { STATS_TABLE, STATS_CSV, STATS_JSON };
	const char *path = tmp_path("full.gtrace");

	(void)state;
	write_trace(path, true);
	for (size_t i = 0; i < N(fmts); i++) {
		struct stats_opts o = { .path = path, .format = fmts[i],
					.reports = fmts[i] == STATS_CSV ? "cuda_api_sum" : NULL };
		struct run r = { 0 };
		FILE *junk;

		tu_run_open(&r, &junk, &o.err);
		o.out = fopen("/dev/full", "w");
		assert_non_null(o.out);
		r.rc = stats__run(&o);
		fclose(o.out);
		tu_run_close(junk, o.err);
		assert_int_equal(r.rc, 1);
		assert_string_equal(r.err, "gtrace-bpf: cannot write standard output: No space left "
				    "on device\n");
		run_free(&r);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The selection-based median against a sort, on inputs that break naive
 * quickselects: sorted, reversed, all equal, few distinct, organ pipe. */
static void test_median(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 5, 10, 11, 100, 101, 1000, 4097 };
	uint64_t rng = 42;

	(void)state;
	for (size_t si = 0; si < N(sizes); si++) {
		for (int pattern = 0; pattern < 6; pattern++) {
			size_t n = sizes[si];
			struct dvec d = { .v = malloc(n * sizeof(uint64_t)), .n = n, .cap = n };
			uint64_t *ref = malloc(n * sizeof(uint64_t)), total = 0;
			struct dvec_summary sm;
			double want, mean, ss = 0, var;

			assert_non_null(d.v);
			assert_non_null(ref);
			for (size_t i = 0; i < n; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				switch (pattern) {
				case 0: d.v[i] = rng >> 40; break;
				case 1: d.v[i] = i; break;
				case 2: d.v[i] = n - i; break;
				case 3: d.v[i] = 7; break;
				case 4: d.v[i] = (rng >> 33) % 3; break;
				default: d.v[i] = i < n / 2 ? i : n - i; break;
				}
				ref[i] = d.v[i];
				total += d.v[i];
			}
			qsort(ref, n, sizeof(*ref), cmp_u64);
			want = n % 2 ? (double)ref[n / 2] : ((double)ref[n / 2 - 1] + (double)ref[n / 2]) / 2;
			mean = (double)total / (double)n;
			for (size_t i = 0; i < n; i++)
				ss += ((double)ref[i] - mean) * ((double)ref[i] - mean);
			var = n > 1 ? ss / (double)(n - 1) : 0;
			dvec__summarize(&d, total, &sm);
			if (sm.median != want) {
				fprintf(stderr, "n %zu pattern %d: median %f, want %f\n", n, pattern,
					sm.median, want);
				fail();
			}
			assert_true(sm.mean == mean);
			assert_true(sm.stddev >= 0);
			assert_true(sm.stddev * sm.stddev - var <= 1e-9 * (var + 1) &&
				    var - sm.stddev * sm.stddev <= 1e-9 * (var + 1));
			/* a permutation of the input */
			qsort(d.v, n, sizeof(*d.v), cmp_u64);
			assert_memory_equal(d.v, ref, n * sizeof(*ref));
			free(d.v);
			free(ref);
		}
	}
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_stats");
}

static int group_teardown(void **state)
{
	static const char *const files[] = {
		"full.gtrace", "cut.gtrace", "notes.txt", "empty.gtrace", "shapes.gtrace",
		"big.gtrace", "entry_only.gtrace",
	};

	(void)state;
	return tu_tmpdir_clean(files, N(files));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_timeunits),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_unknown_report),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_empty_reports),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_entry_only),
		cmocka_unit_test(test_csv_files),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_median),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
