// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU metric samples (GT_REC_GPU_METRIC) in dump, the
 * exports and stats: a dump line per sample with its GPU, metric name, exact
 * value and unit; dump --summary counts them by metric; CSV has a row per
 * sample and the metric, value and unit columns only for a trace recorded
 * with --gpu-metrics; the Perfetto export has a root track "GPU N metrics"
 * per GPU with a counter track per metric holding the values; Chrome JSON
 * counters named "GPU N metric (unit)"; stats -r gpu_metrics_sum has the
 * count, mean, p50, p95 and max per GPU and metric.  A sample cut short of
 * its struct is nothing anywhere and is counted as malformed.
 *
 * The trace (start 500, end 6 s), GPU 0: gpu_util 10 20 30 40 % at 1-4 s,
 * tensor_active 87.125 % at 2 and 3 s; GPU 1: power 350.123 W and mem_used
 * 1 GiB at 1 s, and metric id 30 (unknown to this build) 1.5 at 1 s; a
 * sample cut short at 5 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/stats.h"
#include "analysis/stats_int.h"
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
	assert_int_equal(cx_count_of(r.out, "\"type\":\"gpu_metric\""), 9);
	assert_null(strstr(r.out, "\"value\":99"));
	run_free(&r);

	cx_run_dump(write_gpum(), true, &r);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "gpu_util"), 4);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "tensor_active"), 2);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "power"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ngpu metric records\n", "unknown"), 1);
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
	assert_int_equal(cx_count_of(csv, ",gpu_metric,"), 9);
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
	assert_int_equal(cx_count_of(js, "\"cat\":\"gpu_metric\",\"ph\":\"C\""), 9);
	free(js);
}

/* ------------------------------------------------------------ Perfetto */

enum { EV_COUNTER = 4 };

static void test_perfetto_tracks(void **state)
{
	const char *why = NULL;
	const struct trk *g0, *g1, *util, *tensor, *power;
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
	assert_int_equal(count_type(&m, EV_COUNTER), 9);
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
	assert_int_equal(r.rc, 0);
	/* by GPU, then metric id; nearest-rank: p50 of 10 20 30 40 is 20 */
	assert_non_null(strstr(r.out,
		"{\"gpu\":0,\"metric\":\"gpu_util\",\"unit\":\"%\",\"samples\":4,\"mean\":25,\"p50\":20,"
		"\"p95\":40,\"max\":40},\n"
		"{\"gpu\":0,\"metric\":\"tensor_active\",\"unit\":\"%\",\"samples\":2,\"mean\":87.125,"
		"\"p50\":87.125,\"p95\":87.125,\"max\":87.125},\n"
		"{\"gpu\":1,\"metric\":\"mem_used\",\"unit\":\"B\",\"samples\":1,\"mean\":1073741824,"
		"\"p50\":1073741824,\"p95\":1073741824,\"max\":1073741824},\n"
		"{\"gpu\":1,\"metric\":\"power\",\"unit\":\"W\",\"samples\":1,\"mean\":350.123,"
		"\"p50\":350.123,\"p95\":350.123,\"max\":350.123},\n"
		"{\"gpu\":1,\"metric\":\"metric_30\",\"unit\":\"\",\"samples\":1,\"mean\":1.5,"
		"\"p50\":1.5,\"p95\":1.5,\"max\":1.5}]}"));
	run_free(&r);
	run_stats(write_gpum(), "gpu_metrics_sum", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " ** GPU Metrics Summary (gpu_metrics_sum):"));
	assert_non_null(strstr(r.out, "1,073,741,824"));
	run_free(&r);
	/* a trace without samples: the usual SKIPPED line */
	run_stats(tmp_path("nogpum.gtrace"), "gpu_metrics_sum", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
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
		cmocka_unit_test(test_mean),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
