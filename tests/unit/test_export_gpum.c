// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU metric samples (GT_REC_GPU_METRIC) in dump, the
 * exports and stats: a dump line per sample with its GPU, metric name, exact
 * value and unit; dump --summary counts them by metric; CSV has a row per
 * sample and the metric, value and unit columns only for a trace recorded
 * with --gpu-metrics; the Perfetto export has a root track "GPU N metrics"
 * per GPU with a counter track per metric holding the values; Chrome JSON
 * counters named "GPU N metric (unit)"; a process' memory a counter in
 * its own process track (Perfetto) or of its process (JSON); stats -r
 * gpu_metrics_sum has the count, mean, p50, p95 and max per GPU and metric
 * in each scope: the run, each capture range, each kernel that was at
 * least 95 % of its GPU's work for 3 samples or more (sole occupancy,
 * checked against figures worked out by hand below: a GEMM with a short
 * set before each run, two kernels sharing the GPU, the 95 % boundary),
 * each process.  A sample cut short of its struct is nothing anywhere and
 * is counted as malformed.
 *
 * The trace (start 500, end 6 s), GPU 0: gpu_util 10 20 30 40 % at 1-4 s,
 * tensor_active 87.125 % at 2 and 3 s; GPU 1: power 350.123 W and mem_used
 * 1 GiB at 1 s, and metric id 30 (unknown to this build) 1.5 at 1 s, and
 * fell off at 4 s (gpu_lost); process 4242 on GPU 0: 1 MiB at 1 s, 3 MiB
 * at 2 s, gone at 3 s (0); a sample cut short at 5 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "stats/stats.h"
#include "stats/stats_int.h"
#include "export/dump.h"
#include "export/export.h"
#include "perfetto_fixtures.h"
#include "capture_fixtures.h"

#define S CX_S
#define OPTS "capture=full capture_range=none gpu_metrics=10 gpu_metrics_devs=2 " \
	     "gpu_metrics_dev0=0xff01ff gpu_metrics_dev1=0x1ff"

static void sample(uint64_t ts, uint32_t dev, uint32_t metric, int64_t micro, size_t size)
{
	struct gt_gpu_metric *m = tu_hdr(GT_REC_GPU_METRIC, size, ts, 0, 0, 0, 0);

	m->device = dev;
	m->metric = metric;
	m->value_micro = micro;
	tu_w_append(m);
}

/* A process' memory on GPU dev, bytes. */
static void proc_sample(uint64_t ts, uint32_t dev, uint32_t pid, int64_t bytes)
{
	struct gt_gpu_metric *m = tu_hdr(GT_REC_GPU_METRIC, sizeof(*m), ts, pid, 0, 0, 0);

	m->device = dev;
	m->metric = GT_GPUM_PROC_MEM;
	m->value_micro = bytes * 1000000;
	tu_w_append(m);
}

static const char *write_trace(const char *name, const char *opts)
{
	const char *path = tmp_path(name);
	const size_t n = sizeof(struct gt_gpu_metric);

	cx_open(path, opts);
	for (int i = 1; i <= 4; i++)
		sample(i * S, 0, GT_GPUM_GPU_UTIL, i * 10000000ll, n);
	sample(1 * S, 1, GT_GPUM_POWER, 350123000, n);
	sample(1 * S, 1, GT_GPUM_MEM_USED, 1073741824ll * 1000000, n);
	sample(1 * S, 1, 30, 1500000, n);
	sample(2 * S, 0, GT_GPUM_TENSOR_ACTIVE, 87125000, n);
	sample(3 * S, 0, GT_GPUM_TENSOR_ACTIVE, 87125000, n);
	proc_sample(1 * S, 0, 4242, 1048576);
	proc_sample(2 * S, 0, 4242, 3145728);
	proc_sample(3 * S, 0, 4242, 0);
	sample(4 * S, 1, GT_GPUM_LOST, 1000000, n);
	sample(5 * S, 0, GT_GPUM_GPU_UTIL, 99000000, n - 8);	/* cut short */
	cx_close(6 * S);
	return path;
}

static const char *write_gpum(void)
{
	return write_trace("gpum.gtrace", OPTS);
}

/* ------------------------------------------------------------ dump */

static void test_dump_lines(void **state)
{
	struct run r = { 0 };

	(void)state;
	cx_run_dump(write_gpum(), false, &r);
	assert_non_null(strstr(r.out, "{\"ts\":1000000000,\"pid\":0,\"tid\":0,\"type\":\"gpu_metric\","
				      "\"device\":0,\"metric\":\"gpu_util\",\"value\":10,\"unit\":\"%\"}\n"));
	assert_non_null(strstr(r.out, "{\"ts\":1000000000,\"pid\":0,\"tid\":0,\"type\":\"gpu_metric\","
				      "\"device\":1,\"metric\":\"power\",\"value\":350.123,\"unit\":\"W\"}\n"));
	assert_non_null(strstr(r.out, "\"device\":1,\"metric\":\"mem_used\",\"value\":1073741824,"
				      "\"unit\":\"B\"}\n"));
	assert_non_null(strstr(r.out, "\"device\":1,\"metric\":\"metric_30\",\"value\":1.5,\"unit\":\"\"}\n"));
	assert_non_null(strstr(r.out, "{\"ts\":3000000000,\"pid\":0,\"tid\":0,\"type\":\"gpu_metric\","
				      "\"device\":0,\"metric\":\"tensor_active\",\"value\":87.125,"
				      "\"unit\":\"%\"}\n"));
	/* a process' memory carries its pid */
	assert_non_null(strstr(r.out, "{\"ts\":2000000000,\"pid\":4242,\"tid\":0,\"type\":\"gpu_metric\","
				      "\"device\":0,\"metric\":\"proc_mem_used\",\"value\":3145728,\"unit\":\"B\"}\n"));
	assert_non_null(strstr(r.out, "{\"ts\":4000000000,\"pid\":0,\"tid\":0,\"type\":\"gpu_metric\","
				      "\"device\":1,\"metric\":\"gpu_lost\",\"value\":1,\"unit\":\"flag\"}\n"));
	assert_int_equal(cx_count_of(r.out, "\"type\":\"gpu_metric\""), 13);
	assert_null(strstr(r.out, "\"value\":99"));
	run_free(&r);

	cx_run_dump(write_gpum(), true, &r);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "gpu_util"), 4);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "tensor_active"), 2);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "power"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "unknown"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "proc_mem_used"), 3);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "gpu_lost"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ndecoder\n", "unknown_records"), 1);
	run_free(&r);
}

/* ------------------------------------------------------------ CSV */

static void test_csv_rows(void **state)
{
	char *csv;

	(void)state;
	csv = cx_export_text(write_gpum(), export_csv__write);
	/* the last columns: metric, value, unit (no overhead columns here) */
	assert_non_null(strstr(csv, ",suppressed,metric,value,unit\n"));
	assert_int_equal(cx_count_of(csv, ",gpu_metric,"), 13);
	assert_non_null(strstr(csv, "\n2000000000,4242,0,,gpu_metric,"));
	assert_non_null(strstr(csv, ",proc_mem_used,3145728,B\n"));
	assert_non_null(strstr(csv, ",tensor_active,87.125,%\n"));
	assert_non_null(strstr(csv, ",power,350.123,W\n"));
	free(csv);
	/* a trace recorded without --gpu-metrics keeps its columns */
	csv = cx_export_text(write_trace("nogpum.gtrace", "capture=full capture_range=none"),
			     export_csv__write);
	assert_null(strstr(csv, ",metric,value,unit"));
	assert_non_null(strstr(csv, ",suppressed\n"));
	free(csv);
}

/* ------------------------------------------------------------ JSON */

static void test_json_counters(void **state)
{
	char *js;

	(void)state;
	js = cx_export_text(write_gpum(), export_json__write);
	assert_non_null(strstr(js, "{\"name\":\"GPU 0 gpu_util (%)\",\"cat\":\"gpu_metric\",\"ph\":\"C\","
				   "\"ts\":2000000.000,\"pid\":1073741824,\"tid\":1073741824,"
				   "\"args\":{\"value\":20}}"));
	assert_non_null(strstr(js, "{\"name\":\"GPU 1 power (W)\",\"cat\":\"gpu_metric\",\"ph\":\"C\","
				   "\"ts\":1000000.000,\"pid\":1073741824,\"tid\":1073741824,"
				   "\"args\":{\"value\":350.123}}"));
	/* a process' memory: a counter of that process */
	assert_non_null(strstr(js, "{\"name\":\"GPU 0 memory (B)\",\"cat\":\"gpu_metric\",\"ph\":\"C\","
				   "\"ts\":2000000.000,\"pid\":4242,\"tid\":4242,\"args\":{\"value\":3145728}}"));
	assert_int_equal(cx_count_of(js, "\"name\":\"GPU 0 memory (B)\""), 3);
	assert_int_equal(cx_count_of(js, "\"cat\":\"gpu_metric\",\"ph\":\"C\""), 13);
	free(js);
}

/* ------------------------------------------------------------ Perfetto */

enum { EV_COUNTER = 4 };

static void test_perfetto_tracks(void **state)
{
	const char *why = NULL;
	const struct trk *g0, *g1, *util, *tensor, *power, *mem, *proc;
	uint64_t ts[8];
	double v[8];
	struct model m;

	(void)state;
	assert_int_equal(export_file(write_gpum(), &m, &why), 0);
	g0 = find_named_track(&m, "GPU 0 metrics");
	g1 = find_named_track(&m, "GPU 1 metrics");
	util = find_named_track(&m, "gpu_util (%)");
	tensor = find_named_track(&m, "tensor_active (%)");
	power = find_named_track(&m, "power (W)");
	assert_int_equal(g0->parent, 0);
	assert_int_equal(g1->parent, 0);
	assert_int_equal(util->parent, g0->uuid);
	assert_int_equal(tensor->parent, g0->uuid);
	assert_int_equal(power->parent, g1->uuid);
	assert_true(util->counter && tensor->counter && power->counter);
	assert_false(g0->counter);
	assert_int_equal(pf_counter_values(&m, util, ts, v, 8), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ts[i], (uint64_t)(i + 1) * S);
		assert_true(v[i] == (i + 1) * 10.0);
	}
	assert_int_equal(pf_counter_values(&m, tensor, ts, v, 8), 2);
	assert_true(v[0] == 87.125 && v[1] == 87.125);
	assert_int_equal(pf_counter_values(&m, power, ts, v, 8), 1);
	assert_true(v[0] == 350.123);
	/* process 4242's memory: in its process track, 1 MiB, 3 MiB, 0 */
	proc = find_track(&m, 'p', 4242);
	mem = find_named_track(&m, "GPU 0 memory (B)");
	assert_int_equal(mem->parent, proc->uuid);
	assert_true(mem->counter);
	assert_int_equal(pf_counter_values(&m, mem, ts, v, 8), 3);
	assert_true(v[0] == 1048576.0 && v[1] == 3145728.0 && v[2] == 0.0);
	assert_int_equal(ts[1], 2 * S);
	assert_int_equal(pf_counter_values(&m, find_named_track(&m, "gpu_lost (flag)"), ts, v, 8), 1);
	assert_int_equal(count_type(&m, EV_COUNTER), 13);
	model_free(&m);
}

/* ------------------------------------------------------------ stats */

static void run_stats(const char *path, const char *reports, enum stats_format fmt, struct run *r)
{
	struct stats_opts o = { .path = path, .reports = reports, .format = fmt };

	tu_run_open(r, &o.out, &o.err);
	r->rc = stats__run(&o);
	tu_run_close(o.out, o.err);
}

static void test_stats_sum(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats(write_gpum(), "gpu_metrics_sum", STATS_JSON, &r);
	/* the fixture's record cut short: the readers' rule */
	tu_check_rule(write_gpum(), r.rc, r.err, "the reports cover the records read");
	/* the run: by GPU, then metric id; nearest-rank: p50 of 10 20 30 40 is
	 * 20; then the process' memory, its pid in Of */
	assert_non_null(strstr(r.out,
		"{\"gpu\":0,\"scope\":\"run\",\"of\":null,\"metric\":\"gpu_util\",\"unit\":\"%\",\"samples\":4,"
		"\"mean\":25,\"p50\":20,\"p95\":40,\"max\":40,\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":0,\"scope\":\"run\",\"of\":null,\"metric\":\"tensor_active\",\"unit\":\"%\","
		"\"samples\":2,\"mean\":87.125,\"p50\":87.125,\"p95\":87.125,\"max\":87.125,"
		"\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":1,\"scope\":\"run\",\"of\":null,\"metric\":\"mem_used\",\"unit\":\"B\",\"samples\":1,"
		"\"mean\":1073741824,\"p50\":1073741824,\"p95\":1073741824,\"max\":1073741824,"
		"\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":1,\"scope\":\"run\",\"of\":null,\"metric\":\"power\",\"unit\":\"W\",\"samples\":1,"
		"\"mean\":350.123,\"p50\":350.123,\"p95\":350.123,\"max\":350.123,\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":1,\"scope\":\"run\",\"of\":null,\"metric\":\"gpu_lost\",\"unit\":\"flag\",\"samples\":1,"
		"\"mean\":1,\"p50\":1,\"p95\":1,\"max\":1,\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":1,\"scope\":\"run\",\"of\":null,\"metric\":\"metric_30\",\"unit\":\"\",\"samples\":1,"
		"\"mean\":1.5,\"p50\":1.5,\"p95\":1.5,\"max\":1.5,\"attribution\":\"whole GPU\"},\n"
		"{\"gpu\":0,\"scope\":\"process\",\"of\":\"4242\",\"metric\":\"proc_mem_used\",\"unit\":\"B\","
		"\"samples\":3,\"mean\":1398101.333333,\"p50\":1048576,\"p95\":3145728,\"max\":3145728,"
		"\"attribution\":\"per process\"}]"));
	run_free(&r);
	run_stats(write_gpum(), "gpu_metrics_sum", STATS_TABLE, &r);
	tu_check_rule(write_gpum(), r.rc, r.err, "the reports cover the records read");
	/* no GPU records: no kernel rows, and a note says why */
	assert_non_null(strstr(r.out, "no kernel rows: the trace has no GPU records"));
	assert_non_null(strstr(r.out, " ** GPU Metrics Summary (gpu_metrics_sum):"));
	assert_non_null(strstr(r.out, "1,073,741,824"));
	run_free(&r);
	/* a trace without samples: the usual SKIPPED line */
	cx_write_light(tmp_path("light.gtrace"));
	run_stats(tmp_path("light.gtrace"), "gpu_metrics_sum", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "SKIPPED"));
	run_free(&r);
}

/* ------------------------------------------------ scopes, sole occupancy */

#define MS (S / 1000)

/* A copy (GT_REC_GPU_MEMCPY) or set (GT_REC_GPU_MEMSET) of pid on CUPTI
 * device dev. */
static void gpu_copy(uint16_t type, uint64_t ts, uint64_t dur, uint32_t pid, uint32_t dev)
{
	struct gt_gpu_copy *c = tu_hdr(type, sizeof(*c), ts, pid, 0, 0, 0);

	c->dur = dur;
	c->device = dev;
	c->bytes = 4096;
	tu_w_append(c);
}

/* A kernel (name) or, name NULL, a copy of pid on CUPTI device dev. */
static void gpu_work(uint64_t ts, uint64_t dur, uint32_t pid, uint32_t dev, const char *name)
{
	size_t n;
	struct gt_gpu_kernel *k;

	if (!name) {
		gpu_copy(GT_REC_GPU_MEMCPY, ts, dur, pid, dev);
		return;
	}
	n = strlen(name) + 1;
	k = tu_hdr(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + n), ts, pid, 0, 0, 0);
	k->dur = dur;
	k->device = dev;
	k->len = (uint16_t)n;
	memcpy(k->name, name, n);
	tu_w_append(k);
}

/*
 * One GPU (0), sampled every 100 ms from 0.1 to 3.0 s: sm_active (GPM) k %
 * at k * 100 ms, gpu_util 50 %.  Process 100: a range 0.5-1.5 s; kernel
 * gemm 0.25-1.05 s; a copy 1.08-1.12 s; kernel tiny 10 ms at 1.52, 1.62,
 * 1.72, 1.82 s; mixA 2.05-2.08, mixB 2.09-2.11 s; late 2.45-2.95 s.
 * Process 300, no GPU records, listed by NVML with 1 MiB at 3.4 s.
 *   sm_active (an interval is the 100 ms before the sample): gemm k = 3-10
 *   (k = 11 has the copy too, 12 the copy alone): 3..10, mean 6.5, p50 6,
 *   p95 10; tiny k = 16-19: mean 17.5, p50 17, p95 19; mixA never alone,
 *   mixB once (k = 22: too few); late's k = 25-30 fall in process 300's
 *   listing (3.4 s less a second): none.
 *   gpu_util (the second before the sample): gemm t = 0.3-1.2 s (10: at
 *   1.1 and 1.2 s the copy's 20 and 40 ms beside gemm's 800 are 2.4 and
 *   4.8 % of the GPU time; at 1.3 s its 40 beside gemm's 750 are 5.1 %);
 *   tiny never (its seconds hold gemm or the copy, more than 5 %).
 *   range 1 (0.5-1.5 s): sm_active k = 5-15: mean 10, p50 10, p95 15;
 *   gemm's gpu_util t = 0.5-1.2 s (8).
 */
static const char *write_sole(void)
{
	const char *path = tmp_path("sole.gtrace");
	const size_t n = sizeof(struct gt_gpu_metric);

	cx_open(path, "capture=full capture_range=cudaProfilerApi capture_range_end=repeat gpu_metrics=10 "
		      "gpu_metrics_devs=1 gpu_metrics_dev0=0xfff03ff");
	for (int k = 1; k <= 30; k++) {
		sample(k * 100 * MS, 0, GT_GPUM_GPU_UTIL, 50000000, n);
		sample(k * 100 * MS, 0, GT_GPUM_SM_ACTIVE, k * 1000000ll, n);
	}
	cx_range(500 * MS, 100, GT_CAP_RANGE_OPEN, 1, 0);
	cx_range(1500 * MS, 100, GT_CAP_RANGE_CLOSE, 1, 0);
	gpu_work(250 * MS, 800 * MS, 100, 0, "gemm");
	gpu_work(1080 * MS, 40 * MS, 100, 0, NULL);
	for (int i = 0; i < 4; i++)
		gpu_work((1520 + 100 * i) * MS, 10 * MS, 100, 0, "tiny");
	gpu_work(2050 * MS, 30 * MS, 100, 0, "mixA");
	gpu_work(2090 * MS, 20 * MS, 100, 0, "mixB");
	gpu_work(2450 * MS, 500 * MS, 100, 0, "late");
	proc_sample(3400 * MS, 0, 300, 1048576);
	cx_close(6 * S);
	return path;
}

static void run_stats_range(const char *path, const char *range, struct run *r)
{
	struct stats_opts o = { .path = path, .reports = "gpu_metrics_sum", .format = STATS_JSON,
				.range = range };

	tu_run_open(r, &o.out, &o.err);
	r->rc = stats__run(&o);
	tu_run_close(o.out, o.err);
}

#define SOLE "sole occupancy (>= 95 %)"
#define ROW(scope, of, metric, unit, n, mean, p50, p95, max, attr)				\
	"{\"gpu\":0,\"scope\":\"" scope "\",\"of\":" of ",\"metric\":\"" metric "\",\"unit\":\"" unit	\
	"\",\"samples\":" #n ",\"mean\":" #mean ",\"p50\":" #p50 ",\"p95\":" #p95 ",\"max\":" #max	\
	",\"attribution\":\"" attr "\"}"

static void test_stats_scopes(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats_range(write_sole(), NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out,
		"\"rows\":[\n" ROW("run", "null", "gpu_util", "%", 30, 50, 50, 50, 50, "whole GPU") ",\n"
		ROW("run", "null", "sm_active", "%", 30, 15.5, 15, 29, 30, "whole GPU") ",\n"
		ROW("range", "\"1\"", "gpu_util", "%", 11, 50, 50, 50, 50, "whole GPU, by time") ",\n"
		ROW("range", "\"1\"", "sm_active", "%", 11, 10, 10, 15, 15, "whole GPU, by time") ",\n"
		ROW("kernel", "\"gemm\"", "gpu_util", "%", 10, 50, 50, 50, 50, SOLE) ",\n"
		ROW("kernel", "\"gemm\"", "sm_active", "%", 8, 6.5, 6, 10, 10, SOLE) ",\n"
		ROW("kernel", "\"tiny\"", "sm_active", "%", 4, 17.5, 17, 19, 19, SOLE) ",\n"
		ROW("process", "\"300\"", "proc_mem_used", "B", 1, 1048576, 1048576, 1048576, 1048576,
		    "per process") "]"));
	run_free(&r);
	run_stats(write_sole(), "gpu_metrics_sum", STATS_TABLE, &r);
	assert_non_null(strstr(r.out, "sole occupancy: that kernel was at least 95 % of the GPU's work in "
				      "the sample's interval"));
	assert_null(strstr(r.out, "could not be placed"));
	run_free(&r);
	/* --range 1: its scope, the kernels inside its time, no process row */
	run_stats_range(write_sole(), "1", &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out,
		"\"rows\":[\n" ROW("range", "\"1\"", "gpu_util", "%", 11, 50, 50, 50, 50, "whole GPU, by time") ",\n"
		ROW("range", "\"1\"", "sm_active", "%", 11, 10, 10, 15, 15, "whole GPU, by time") ",\n"
		ROW("kernel", "\"gemm\"", "gpu_util", "%", 8, 50, 50, 50, 50, SOLE) ",\n"
		ROW("kernel", "\"gemm\"", "sm_active", "%", 6, 7.5, 7, 10, 10, SOLE) "]"));
	run_free(&r);
}

/*
 * Two GPUs (0, 1), sm_active k % every 100 ms from 0.1 to 3.0 s on each;
 * a light-mode window 0.45-0.85 s (k = 5-8 on each GPU: mean 6.5).
 * Process 100: kernel a 0.25-2.05 s on CUPTI device 0, listed by NVML on
 * GPU 1 only: a is GPU 1's. Process 200: kernels on CUPTI devices 0 and 1
 * (b at 1.0-1.01 s, c at 5 s), listed nowhere: placed on no GPU, so the
 * sample its b overlaps (k = 11 on either GPU) is nobody's.
 *   GPU 1: a k = 3-21 but 11: 18 samples, sum 3..21 less 11 = 217, mean
 *   12.055556, p50 (9th) 12, p95 (18th) 21; GPU 0: nothing of a.
 */
static const char *write_two(void)
{
	const char *path = tmp_path("two.gtrace");
	const size_t n = sizeof(struct gt_gpu_metric);

	cx_open(path, "capture=light capture_range=none gpu_metrics=10 gpu_metrics_devs=2 "
		      "gpu_metrics_dev0=0xfff03ff gpu_metrics_dev1=0xfff03ff");
	cx_window(450 * MS, GT_CAP_WINDOW_OPEN, 1, 300);
	cx_window(850 * MS, GT_CAP_WINDOW_CLOSE, 1, 300);
	for (int k = 1; k <= 30; k++) {
		sample(k * 100 * MS, 0, GT_GPUM_SM_ACTIVE, k * 1000000ll, n);
		sample(k * 100 * MS, 1, GT_GPUM_SM_ACTIVE, k * 1000000ll, n);
	}
	for (int k = 1; k <= 3; k++)
		proc_sample(k * S, 1, 100, 1 << 30);
	gpu_work(250 * MS, 1800 * MS, 100, 0, "a");
	gpu_work(1000 * MS, 10 * MS, 200, 1, "b");
	gpu_work(5000 * MS, 10 * MS, 200, 0, "c");
	cx_close(6 * S);
	return path;
}

static void test_stats_placed(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats_range(write_two(), NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out,
		"{\"gpu\":1,\"scope\":\"kernel\",\"of\":\"a\",\"metric\":\"sm_active\",\"unit\":\"%\","
		"\"samples\":18,\"mean\":12.055556,\"p50\":12,\"p95\":21,\"max\":21,"
		"\"attribution\":\"" SOLE "\"}"));
	assert_int_equal(cx_count_of(r.out, "\"scope\":\"kernel\""), 1);
	/* the window's scope, of each GPU */
	assert_non_null(strstr(r.out, "{\"gpu\":0,\"scope\":\"window\",\"of\":\"1\",\"metric\":\"sm_active\","
				      "\"unit\":\"%\",\"samples\":4,\"mean\":6.5,\"p50\":6,\"p95\":8,\"max\":8,"
				      "\"attribution\":\"whole GPU, by time\"},\n"
				      "{\"gpu\":1,\"scope\":\"window\",\"of\":\"1\","));
	run_free(&r);
	run_stats(write_two(), "gpu_metrics_sum", STATS_TABLE, &r);
	assert_non_null(strstr(r.out, "2 GPU records of 1 process(es) could not be placed on an NVML GPU"));
	run_free(&r);
}

/* One GPU, a GPM metric every 10 ms at k * 10 ms (k = 1..n), k % unless
 * told: the fixture of the tests below, its work written by fill(). */
static const char *write_share(const char *name, uint32_t metric, int n, int64_t (*value)(int k),
			       void (*fill)(void))
{
	const char *path = tmp_path(name);

	cx_open(path, "capture=full capture_range=none gpu_metrics=100 gpu_metrics_devs=1 "
		      "gpu_metrics_dev0=0xfff03ff");
	for (int k = 1; k <= n; k++)
		sample(k * 10 * MS, 0, metric, value ? value(k) : k * 1000000ll, sizeof(struct gt_gpu_metric));
	fill();
	cx_close(6 * S);
	return path;
}

#define US (MS / 1000)

/* As on the H200 (torch.matmul of bf16): cuBLAS sets its workspace (1 us,
 * an unnamed set) before each 1.36 ms GEMM, one every 1.4 ms over 0-300 ms. */
static void fill_gemm(void)
{
	for (uint64_t t = 0; t < 300 * MS; t += 1400 * US) {
		gpu_copy(GT_REC_GPU_MEMSET, t, 1 * US, 100, 0);
		gpu_work(t + 2 * US, 1360 * US, 100, 0, "nvjet_gemm");
	}
}

static int64_t tensor_of(int k)
{
	return 86000000 + k * 100000ll;		/* 86 + k / 10 % */
}

/*
 * tensor_active 86 + k / 10 % at k = 1..21: every interval (10 ms) holds
 * sets beside the GEMM (about 7 us of 9.7 ms), none the GEMM alone; each
 * is the GEMM's: k = 2..21, 20 samples, mean 86 + 11.5 / 10 = 87.15, p50
 * (the 10th, k = 11) 87.1, p95 (the 19th, k = 20) 88, max 88.1.
 */
static void test_stats_share_set(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats_range(write_share("set.gtrace", GT_GPUM_TENSOR_ACTIVE, 21, tensor_of, fill_gemm), NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, ROW("kernel", "\"nvjet_gemm\"", "tensor_active", "%", 20, 87.15, 87.1,
					  88, 88.1, SOLE)));
	assert_int_equal(cx_count_of(r.out, "\"scope\":\"kernel\""), 1);
	run_free(&r);
}

/* Two kernels in every 10 ms: ka 4.8 ms, kb 3.2 ms (60 and 40 % of the
 * GPU time) over 0-300 ms. */
static void fill_split(void)
{
	for (uint64_t t = 0; t < 300 * MS; t += 10 * MS) {
		gpu_work(t + 1 * MS, 4800 * US, 100, 0, "ka");
		gpu_work(t + 6 * MS, 3200 * US, 100, 0, "kb");
	}
}

/* sm_active at k = 1..21: no interval is one kernel's, no kernel row; the
 * note says what the rule is. */
static void test_stats_share_split(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats_range(write_share("split.gtrace", GT_GPUM_SM_ACTIVE, 21, NULL, fill_split), NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, ROW("run", "null", "sm_active", "%", 21, 11, 11, 20, 21, "whole GPU")));
	assert_int_equal(cx_count_of(r.out, "\"scope\":\"kernel\""), 0);
	run_free(&r);
	run_stats(write_share("split.gtrace", GT_GPUM_SM_ACTIVE, 21, NULL, fill_split), "gpu_metrics_sum",
		  STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "sole occupancy: that kernel was at least 95 % of the GPU's work"));
	run_free(&r);
}

/* Interval k (10 ms before k * 10 ms): kernel edge 1.9 ms and a copy
 * 0.1 ms (95 % edge's) for k = 2..4; edge 1.898 ms and a copy 0.102 ms
 * (94.9 %) for k = 5..7. */
static void fill_edge(void)
{
	for (int k = 2; k <= 7; k++) {
		uint64_t lo = (uint64_t)(k - 1) * 10 * MS, d = k <= 4 ? 1900 * US : 1898 * US;

		gpu_work(lo + 1 * MS, d, 100, 0, "edge");
		gpu_copy(GT_REC_GPU_MEMCPY, lo + 5 * MS, 2000 * US - d, 100, 0);
	}
}

/* sm_active k % at k = 1..8: edge has k = 2..4 (exactly 95 %), not 5..7
 * (94.9 %): 3 samples, mean 3, p50 3, p95 4, max 4. */
static void test_stats_share_edge(void **state)
{
	struct run r = { 0 };

	(void)state;
	run_stats_range(write_share("edge.gtrace", GT_GPUM_SM_ACTIVE, 8, NULL, fill_edge), NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, ROW("kernel", "\"edge\"", "sm_active", "%", 3, 3, 3, 4, 4, SOLE)));
	assert_int_equal(cx_count_of(r.out, "\"scope\":\"kernel\""), 1);
	run_free(&r);
}

/* The mean: rounded to the nearest, halves away from zero, no overflow. */
static void test_mean(void **state)
{
	int64_t v[3] = { 1, 2, 2 }, big[2] = { INT64_MAX, INT64_MAX }, neg[2] = { -1, -2 };

	(void)state;
	assert_int_equal(stats_gpum__mean(v, 3), 2);		/* 1.67 */
	assert_int_equal(stats_gpum__mean(v, 2), 2);		/* 1.5 */
	assert_true(stats_gpum__mean(big, 2) == INT64_MAX);
	assert_int_equal(stats_gpum__mean(neg, 2), -2);		/* -1.5 */
	assert_int_equal(stats_gpum__mean(v, 0), 0);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_gpum");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_lines),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_json_counters),
		cmocka_unit_test(test_perfetto_tracks),
		cmocka_unit_test(test_stats_sum),
		cmocka_unit_test(test_stats_scopes),
		cmocka_unit_test(test_stats_placed),
		cmocka_unit_test(test_stats_share_set),
		cmocka_unit_test(test_stats_share_split),
		cmocka_unit_test(test_stats_share_edge),
		cmocka_unit_test(test_mean),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
