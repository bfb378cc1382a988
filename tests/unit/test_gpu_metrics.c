// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU-metrics sampler (user/record/gpu_metrics.c): the
 * rate's parsing, micro-units, the queue between the sampler and the loop,
 * and the sampler itself over the mock NVML (tests/mock/libnvml_mock.c):
 * the probe of its two GPUs (GPM on GPU 0 only) in the header's options,
 * scripted values in the records, GPM metrics from the second round on,
 * errors mid-run counted, no library -> no sampler and no failure.
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
#include "lib/log.h"
#include "record/gpu_metrics.h"

static void test_parse_rate(void **state)
{
	unsigned int hz = 99;

	(void)state;
	assert_int_equal(gpu_metrics__parse_rate(NULL, &hz), 0);
	assert_int_equal(hz, 10);
	assert_int_equal(gpu_metrics__parse_rate("off", &hz), 0);
	assert_int_equal(hz, 0);
	assert_int_equal(gpu_metrics__parse_rate("1", &hz), 0);
	assert_int_equal(hz, 1);
	assert_int_equal(gpu_metrics__parse_rate("1000", &hz), 0);
	assert_int_equal(hz, 1000);
	assert_int_equal(gpu_metrics__parse_rate("100Hz", &hz), 0);
	assert_int_equal(hz, 100);
	hz = 7;
	assert_int_equal(gpu_metrics__parse_rate("0", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("1001", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("-5", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("ten", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("10x", &hz), -EINVAL);
	assert_int_equal(gpu_metrics__parse_rate("99999999999999999999", &hz), -EINVAL);
	assert_int_equal(hz, 7);
}

static void test_micro(void **state)
{
	(void)state;
	assert_int_equal(gpu_metrics__micro(87.125), 87125000);
	assert_int_equal(gpu_metrics__micro(0.0000004), 0);
	assert_int_equal(gpu_metrics__micro(0.0000005), 1);
	assert_int_equal(gpu_metrics__micro(-1.5), -1500000);
	assert_true(gpu_metrics__micro(1e300) == INT64_MAX);
	assert_true(gpu_metrics__micro(-1e300) == INT64_MIN);
	assert_int_equal(gpu_metrics__micro(0.0 / 0.0), 0);
}

static void test_queue(void **state)
{
	struct gpum_queue *q = gpum_queue__new(4);
	struct gt_gpu_metric in[6] = { 0 }, out[8];

	(void)state;
	assert_non_null(q);
	for (int i = 0; i < 6; i++)
		in[i].value_micro = i;
	assert_int_equal(gpum_queue__push(q, in, 3), 3);
	assert_int_equal(gpum_queue__pop(q, out, 2), 2);
	assert_int_equal(out[0].value_micro, 0);
	assert_int_equal(out[1].value_micro, 1);
	/* wraps around; the fifth and sixth find no room */
	assert_int_equal(gpum_queue__push(q, in + 3, 3), 3);
	assert_int_equal(gpum_queue__push(q, in, 2), 0);
	assert_int_equal(gpum_queue__dropped(q), 2);
	assert_int_equal(gpum_queue__pop(q, out, 8), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i].value_micro, i + 2);
	assert_int_equal(gpum_queue__pop(q, out, 8), 0);
	gpum_queue__free(q);
}

static void test_no_library(void **state)
{
	struct gpu_metrics_opts o = { .hz = 10, .lib = "/nonexistent/libnvidia-ml.so.1" };
	struct gpu_metrics *g = (void *)1;

	(void)state;
	assert_int_equal(gpu_metrics__open(&o, &g), 0);
	assert_null(g);
	gpu_metrics__free(NULL);
}

struct got {
	struct gt_gpu_metric r[4096];
	size_t n;
};

static int collect(void *ctx, const struct gt_hdr *h)
{
	struct got *g = ctx;

	assert_int_equal(h->type, GT_REC_GPU_METRIC);
	assert_int_equal(h->size, sizeof(struct gt_gpu_metric));
	if (g->n < 4096)
		g->r[g->n++] = *(const struct gt_gpu_metric *)h;
	return 0;
}

static size_t count(const struct got *g, uint32_t dev, uint32_t metric)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		n += g->r[i].device == dev && g->r[i].metric == metric;
	return n;
}

static int64_t first(const struct got *g, uint32_t dev, uint32_t metric)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].device == dev && g->r[i].metric == metric)
			return g->r[i].value_micro;
	fail_msg("no sample of GPU %u metric %u", dev, metric);
	return 0;
}

static void test_mock(void **state)
{
	struct gpu_metrics_opts o = { .hz = 20, .lib = GT_NVML_MOCK };
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;
	char opts[256];
	size_t rounds;

	(void)state;
	unsetenv("GTRACE_MOCK_NVML_FAIL_AFTER");
	assert_int_equal(gpu_metrics__open(&o, &g), 0);
	assert_non_null(g);
	gpu_metrics__options(g, opts, sizeof(opts));
	/* GPU 0: the nine basic metrics and the twelve of GPM; GPU 1: basic */
	assert_string_equal(opts, "gpu_metrics=20 gpu_metrics_devs=2 gpu_metrics_dev0=0xfff01ff "
				  "gpu_metrics_dev1=0x1ff");
	assert_int_equal(gpu_metrics__start(g), 0);
	usleep(520000);
	gpu_metrics__stop(g);
	got.n = 0;
	assert_int_equal(gpu_metrics__drain(g, collect, &got), 0);
	gpu_metrics__stats(g, &st);
	rounds = st.samples;
	/* 20 Hz for 0.52 s: the first at the start, then every 50 ms */
	assert_in_range(rounds, 6, 12);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.records, got.n);
	assert_int_equal(count(&got, 0, GT_GPUM_GPU_UTIL), rounds);
	assert_int_equal(count(&got, 1, GT_GPUM_THROTTLE), rounds);
	assert_int_equal(count(&got, 1, GT_GPUM_SM_ACTIVE), 0);
	/* GPM pairs at least ~100 ms apart: every second round at 20 Hz */
	assert_in_range(count(&got, 0, GT_GPUM_TENSOR_ACTIVE), 2, rounds / 2 + 1);
	/* the scripted values: util's call 0 was the probe's */
	assert_int_equal(first(&got, 0, GT_GPUM_GPU_UTIL), 20000000);
	assert_int_equal(first(&got, 1, GT_GPUM_GPU_UTIL), 21000000);
	assert_int_equal(first(&got, 0, GT_GPUM_POWER), 350123000);
	assert_int_equal(first(&got, 1, GT_GPUM_TEMP), 46000000);
	assert_int_equal(first(&got, 0, GT_GPUM_TENSOR_ACTIVE), 87125000);
	assert_int_equal(first(&got, 0, GT_GPUM_PCIE_RX), 200250000);
	assert_int_equal(first(&got, 0, GT_GPUM_NVLINK_RX), 400000000);
	assert_true(first(&got, 0, GT_GPUM_MEM_TOTAL) == (80ll << 30) * 1000000);
	/* one round's records share a timestamp, rounds ~50 ms apart */
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.r[i].hdr.ts >= got.r[i - 1].hdr.ts);
	gpu_metrics__free(g);
}

static void test_errors_counted(void **state)
{
	struct gpu_metrics_opts o = { .hz = 50, .lib = GT_NVML_MOCK };
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;

	(void)state;
	setenv("GTRACE_MOCK_NVML_FAIL_AFTER", "6", 1);
	assert_int_equal(gpu_metrics__open(&o, &g), 0);
	assert_int_equal(gpu_metrics__start(g), 0);
	usleep(200000);
	gpu_metrics__stop(g);
	got.n = 0;
	assert_int_equal(gpu_metrics__drain(g, collect, &got), 0);
	gpu_metrics__stats(g, &st);
	unsetenv("GTRACE_MOCK_NVML_FAIL_AFTER");
	/* utilization failed on both GPUs from the third round on: counted, the
	 * other metrics kept coming */
	assert_int_equal(count(&got, 0, GT_GPUM_GPU_UTIL), 2);
	assert_int_equal(count(&got, 1, GT_GPUM_GPU_UTIL), 2);
	assert_int_equal(st.errors, 2 * (st.samples - 2));
	assert_int_equal(count(&got, 0, GT_GPUM_POWER), st.samples);
	assert_int_equal(st.lost, 0);
	gpu_metrics__free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_micro),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_mock),
		cmocka_unit_test(test_errors_counted),
	};

	gt_log_level = GT_LOG_WARN;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
