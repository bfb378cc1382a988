// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU-metrics sampler (user/record/gpum/gpu_metrics.c): the
 * rate's parsing, micro-units, the queue between the sampler and the loop,
 * and the sampler itself over the mock NVML (tests/mock/libnvml_mock.c):
 * the probe of its two GPUs (GPM on GPU 0 only) in the header's options,
 * scripted values in the records, GPM metrics from the second round on,
 * errors mid-run counted, no library -> no sampler and no failure; a GPU
 * that falls off (one gpu_lost record, the other GPU read on), a GPU in MIG
 * mode (what still works), each process' memory from its own thread (a 0
 * once a process is gone; a slow listing does not slow the rounds), and
 * the threads' CPU time; each GPU's SM count in the header with its source
 * (nvmlDeviceGetAttributes_v2, else the CUDA cores over the architecture's
 * cores per SM; none where NVML fails or the GPU is in MIG mode), keys that
 * do not fit left out whole.
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
#include "record/gpum/gpu_metrics.h"
#include "record/gpum/nvml_abi.h"

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

/* Samples over the mock with o for usec, stops, drains the records into
 * got and the figures into st; returns the sampler (to free). */
static struct gpu_metrics *sample_for(const struct gpu_metrics_opts *o, useconds_t usec, struct got *got,
				      struct gpu_metrics_stats *st)
{
	struct gpu_metrics *g = NULL;

	assert_int_equal(gpu_metrics__open(o, &g), 0);
	assert_non_null(g);
	assert_int_equal(gpu_metrics__start(g), 0);
	usleep(usec);
	gpu_metrics__stop(g);
	got->n = 0;
	assert_int_equal(gpu_metrics__drain(g, collect, got), 0);
	gpu_metrics__stats(g, st);
	return g;
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
	g = sample_for(&o, 520000, &got, &st);
	gpu_metrics__options(g, opts, sizeof(opts));
	/* GPU 0: the nine basic metrics, the processes' memory and the twelve
	 * of GPM; GPU 1: basic and processes; the mock's SM counts */
	assert_string_equal(opts, "gpu_metrics=20 gpu_metrics_devs=2 gpu_metrics_dev0=0xfff03ff "
				  "gpu_metrics_dev0_sms=132 gpu_metrics_dev0_sms_from=attributes "
				  "gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=114 gpu_metrics_dev1_sms_from=attributes");
	rounds = st.samples;
	/* 20 Hz for 0.52 s: the first at the start, then every 50 ms */
	assert_in_range(rounds, 6, 12);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.records, got.n);
	/* no process listed (no GTRACE_MOCK_NVML_PROCS): no memory of one */
	assert_int_equal(count(&got, 0, GT_GPUM_PROC_MEM), 0);
	assert_int_equal(st.proc_samples, 0);
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
	g = sample_for(&o, 200000, &got, &st);
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

static void test_lost(void **state)
{
	struct gpu_metrics_opts o = { .hz = 50, .lib = GT_NVML_MOCK };
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;
	size_t i, lost = 0;

	(void)state;
	/* GPU 1 falls off at its third utilization call after the probe's */
	setenv("GTRACE_MOCK_NVML_LOST", "1:3", 1);
	g = sample_for(&o, 300000, &got, &st);
	unsetenv("GTRACE_MOCK_NVML_LOST");
	assert_int_equal(st.lost, 1);
	/* a lost GPU's failing queries are the loss, not read errors */
	assert_int_equal(st.errors, 0);
	assert_int_equal(count(&got, 1, GT_GPUM_GPU_UTIL), 2);
	assert_int_equal(count(&got, 1, GT_GPUM_LOST), 1);
	assert_int_equal(count(&got, 0, GT_GPUM_LOST), 0);
	/* GPU 0 goes on every round */
	assert_int_equal(count(&got, 0, GT_GPUM_GPU_UTIL), st.samples);
	for (i = 0; i < got.n; i++) {
		if (got.r[i].metric == GT_GPUM_LOST) {
			assert_int_equal(got.r[i].value_micro, 1000000);
			lost = i;
		}
	}
	/* nothing of GPU 1 after its gpu_lost record */
	for (i = lost + 1; i < got.n; i++)
		assert_int_equal(got.r[i].device, 0);
	gpu_metrics__free(g);
}

static void test_mig(void **state)
{
	struct gpu_metrics_opts o = { .hz = 50, .lib = GT_NVML_MOCK };
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;
	char opts[256];

	(void)state;
	setenv("GTRACE_MOCK_NVML_MIG", "0", 1);
	g = sample_for(&o, 250000, &got, &st);
	gpu_metrics__options(g, opts, sizeof(opts));
	/* GPU 0 in MIG mode: no utilization, no GPM (refused though "supported"),
	 * no SM count (the mock's attributes and cores are the whole GPU's: not
	 * an instance's), from neither call */
	assert_string_equal(opts, "gpu_metrics=50 gpu_metrics_devs=2 gpu_metrics_dev0=0x3fc "
				  "gpu_metrics_dev0_mig=1 gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=114 "
				  "gpu_metrics_dev1_sms_from=attributes");
	unsetenv("GTRACE_MOCK_NVML_MIG");
	assert_int_equal(st.mig, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(count(&got, 0, GT_GPUM_GPU_UTIL), 0);
	assert_int_equal(count(&got, 0, GT_GPUM_SM_ACTIVE), 0);
	assert_int_equal(count(&got, 0, GT_GPUM_POWER), st.samples);
	assert_int_equal(count(&got, 1, GT_GPUM_GPU_UTIL), st.samples);
	gpu_metrics__free(g);
}

/* The records of one metric of process pid on GPU dev, in order. */
static size_t proc_values(const struct got *g, uint32_t dev, uint32_t pid, int64_t *v, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].device == dev && g->r[i].metric == GT_GPUM_PROC_MEM && g->r[i].hdr.pid == pid &&
		    n < max)
			v[n++] = g->r[i].value_micro;
	return n;
}

static void write_procs(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A new file of the mock's processes holding text, in
 * GTRACE_MOCK_NVML_PROCS; its path into path (PROCS_PATH's room). */
#define PROCS_PATH "/tmp/gtrace-nvml-procs.XXXXXX"
static void procs_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_procs(path, text);
	setenv("GTRACE_MOCK_NVML_PROCS", path, 1);
}

static void procs_done(const char *path)
{
	unsetenv("GTRACE_MOCK_NVML_PROCS");
	unlink(path);
}

static void test_procs(void **state)
{
	struct gpu_metrics_opts o = { .hz = 20, .lib = GT_NVML_MOCK, .procs_ns = 100000000 };
	char path[] = PROCS_PATH;
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;
	int64_t v[64];
	size_t n, i;

	(void)state;
	/* 4242 on both GPUs, 4343 on GPU 0 with no figure; 5050 on GPU 1,
	 * gone after the first listings */
	procs_file(path, "0 4242 1048576\n0 4343 -\n1 4242 2097152\n1 5050 512\n");
	assert_int_equal(gpu_metrics__open(&o, &g), 0);
	assert_int_equal(gpu_metrics__start(g), 0);
	usleep(250000);
	write_procs(path, "0 4242 1048576\n0 4343 -\n1 4242 3145728\n");
	usleep(300000);
	gpu_metrics__stop(g);
	got.n = 0;
	assert_int_equal(gpu_metrics__drain(g, collect, &got), 0);
	gpu_metrics__stats(g, &st);
	procs_done(path);
	/* listings at 0, 100, ... ms: about six in 0.55 s */
	n = proc_values(&got, 0, 4242, v, 64);
	assert_in_range(n, 4, 7);
	for (i = 0; i < n; i++)
		assert_true(v[i] == 1048576ll * 1000000);
	/* no figure, no record; none for a process NVML never listed */
	assert_int_equal(proc_values(&got, 0, 4343, v, 64), 0);
	assert_int_equal(proc_values(&got, 0, 5050, v, 64), 0);
	/* GPU 1: 2 MiB, then 3 MiB */
	n = proc_values(&got, 1, 4242, v, 64);
	assert_true(n >= 4);
	assert_true(v[0] == 2097152ll * 1000000);
	assert_true(v[n - 1] == 3145728ll * 1000000);
	/* 5050: its figure while listed, then one 0, then nothing */
	n = proc_values(&got, 1, 5050, v, 64);
	assert_true(n >= 2);
	for (i = 0; i + 1 < n; i++)
		assert_true(v[i] == 512ll * 1000000);
	assert_int_equal(v[n - 1], 0);
	/* the per-process records carry their pid, the others none */
	for (i = 0; i < got.n; i++)
		assert_int_equal(got.r[i].hdr.pid != 0, got.r[i].metric == GT_GPUM_PROC_MEM);
	assert_int_equal(st.proc_samples, proc_values(&got, 0, 4242, v, 64) + proc_values(&got, 1, 4242, v, 64) +
						  proc_values(&got, 1, 5050, v, 64));
	assert_int_equal(st.errors, 0);
	gpu_metrics__free(g);
}

/* A listing that takes 300 ms (its own thread) leaves the 50 Hz rounds on
 * time; the threads' CPU time is measured and below their wall time. */
static void test_slow_procs(void **state)
{
	struct gpu_metrics_opts o = { .hz = 50, .lib = GT_NVML_MOCK, .procs_ns = 100000000 };
	char path[] = PROCS_PATH;
	static struct got got;
	struct gpu_metrics_stats st;
	struct gpu_metrics *g = NULL;
	int64_t v[16];

	(void)state;
	procs_file(path, "0 77 4096\n");
	setenv("GTRACE_MOCK_NVML_PROCS_DELAY_MS", "300", 1);
	g = sample_for(&o, 700000, &got, &st);
	unsetenv("GTRACE_MOCK_NVML_PROCS_DELAY_MS");
	procs_done(path);
	/* 0.7 s at 50 Hz: 35 rounds (the first at the start), a few late on a
	 * loaded machine; listings of 300 ms each: two or three */
	assert_in_range(st.samples, 30, 37);
	assert_in_range(proc_values(&got, 0, 77, v, 16), 2, 3);
	assert_true(st.cpu_ns > 0);
	assert_true(st.cpu_ns < st.wall_ns);
	assert_true(st.wall_ns >= 650000000ull);
	gpu_metrics__free(g);
}

/* The SM counts: what nvmlDeviceGetAttributes_v2 says per GPU, else the
 * CUDA cores over the architecture's cores per SM, else nothing; keys past
 * the first that does not fit are left out, none cut off, an SM count never
 * without its source. */
static void test_sms(void **state)
{
	struct gpu_metrics_opts o = { .hz = 10, .lib = GT_NVML_MOCK };
	static const char whole[] = "gpu_metrics=10 gpu_metrics_devs=6 gpu_metrics_dev0=0xfff03ff "
				    "gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=96 "
				    "gpu_metrics_dev1_sms_from=attributes gpu_metrics_dev2=0xfff03ff "
				    "gpu_metrics_dev2_sms=132 gpu_metrics_dev2_sms_from=cores "
				    "gpu_metrics_dev3=0x3ff gpu_metrics_dev4=0xfff03ff gpu_metrics_dev5=0x3ff";
	struct gpu_metrics *g = NULL;
	char opts[512];
	size_t n, cut;

	(void)state;
	setenv("GTRACE_MOCK_NVML_GPUS", "6", 1);
	/* 0: both calls fail; 1: attributes 96; 2: attributes fail, 132 Hopper
	 * SMs of 16896 cores (an H200 on driver 580); 3: attributes fail, 132
	 * Ampere SMs (8448 cores: 64 or 128 a SM); 4: attributes fail, 16900
	 * Hopper cores (not a multiple of 128); 5: attributes and the
	 * architecture fail */
	setenv("GTRACE_MOCK_NVML_SMS", "-,96,-,-132,-,-", 1);
	setenv("GTRACE_MOCK_NVML_ARCH", ",,,7,,-", 1);
	setenv("GTRACE_MOCK_NVML_CORES", "-,,,,16900", 1);
	assert_int_equal(gpu_metrics__open(&o, &g), 0);
	unsetenv("GTRACE_MOCK_NVML_CORES");
	unsetenv("GTRACE_MOCK_NVML_ARCH");
	unsetenv("GTRACE_MOCK_NVML_SMS");
	unsetenv("GTRACE_MOCK_NVML_GPUS");
	assert_non_null(g);
	n = gpu_metrics__options(g, opts, sizeof(opts));
	assert_string_equal(opts, whole);
	assert_int_equal(n, strlen(whole));
	/* room for all but the last key's final digit: up to the key before */
	cut = strlen(whole);
	n = gpu_metrics__options(g, opts, cut);
	assert_string_equal(opts, "gpu_metrics=10 gpu_metrics_devs=6 gpu_metrics_dev0=0xfff03ff "
				  "gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=96 "
				  "gpu_metrics_dev1_sms_from=attributes gpu_metrics_dev2=0xfff03ff "
				  "gpu_metrics_dev2_sms=132 gpu_metrics_dev2_sms_from=cores "
				  "gpu_metrics_dev3=0x3ff gpu_metrics_dev4=0xfff03ff");
	assert_int_equal(n, strlen(opts));
	/* cut inside GPU 2's source: its count, its source and every key after
	 * them out */
	cut = strstr(whole, "_sms_from=cores") - whole + 12;
	gpu_metrics__options(g, opts, cut);
	assert_string_equal(opts, "gpu_metrics=10 gpu_metrics_devs=6 gpu_metrics_dev0=0xfff03ff "
				  "gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=96 "
				  "gpu_metrics_dev1_sms_from=attributes gpu_metrics_dev2=0xfff03ff");
	gpu_metrics__options(g, opts, 5);
	assert_string_equal(opts, "");
	gpu_metrics__free(g);
}

/* Cores over cores per SM: only for the architectures of one figure, only
 * when it divides them. */
static void test_sms_from_cores(void **state)
{
	(void)state;
	/* H100 / H200 SXM: 16896 cores, 132 SMs; V100: 5120, 80 */
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_HOPPER, 16896), 132);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_VOLTA, 5120), 80);
	/* T4: 2560 cores, 40 SMs; L4 (Ada): 7424, 58; B200: 148 SMs of 128 */
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_TURING, 2560), 40);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_ADA, 7424), 58);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_BLACKWELL, 148 * 128), 148);
	/* not a multiple, or none */
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_HOPPER, 16895), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_HOPPER, 16896 + 64), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_VOLTA, 5120 + 32), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_HOPPER, 0), 0);
	/* A100 (GA100, 64 a SM): 6912 cores, 108 SMs; an RTX 3090 (GA102, 128):
	 * 10496, 82; both divide by 64 and 128: Ampere gives none, nor Pascal
	 * (GP100 64, GP10x 128), Kepler, Maxwell, Rubin, unknown */
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_AMPERE, 6912), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_AMPERE, 10496), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_PASCAL, 3584), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_KEPLER, 2880), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_MAXWELL, 3072), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_RUBIN, 16896), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(NVMLABI_DEVICE_ARCH_UNKNOWN, 16896), 0);
	assert_int_equal(gpu_metrics__sms_from_cores(11, 2048), 0);
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
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_sms),
		cmocka_unit_test(test_sms_from_cores),
		cmocka_unit_test(test_procs),
		cmocka_unit_test(test_slow_procs),
	};

	gt_log_level = GT_LOG_WARN;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
