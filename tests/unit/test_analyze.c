// SPDX-License-Identifier: MIT
/*
 * Unit tests of the core of `gtrace-bpf analyze` (user/analysis/analyze*.c):
 * the planted patterns of tests/fixtures/az_scenarios.h fed through a
 * decoder, each giving exactly its findings and figures worked out from the
 * scenario's timings; a clean program giving none; the CPU split with
 * scheduler records; capture ranges as scopes; late GPU records; kernel
 * classes.  No file, no root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/analyze.h"
#include "decode/decode.h"
#include "format/trace_file.h"
#include "tests/fixtures/az_scenarios.h"

#define US 1000ull
#define MS 1000000ull

static void put_dec(void *ctx, const struct gt_hdr *rec)
{
	assert_int_equal(gt_decoder__feed(ctx, rec), 0);
}

struct run {
	struct analyze *a;
	struct gt_decoder *d;
	struct azs s;
	struct analyze_result *r;
};

/* run_begin for a trace whose header has options (NULL: the usual ones). */
static void run_begin_opts(struct run *x, const struct analyze_opts *o, bool gpu, bool launch_exit,
			   const char *options)
{
	static const struct analyze_opts none;
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = AZS_T0 - 1000,
		.options = options ? options : gpu ? "trace=cuda,sched cupti=merged" : "trace=cuda,sched",
	};

	memset(x, 0, sizeof(*x));
	x->a = analyze__new(o ? o : &none, &info, NULL);
	assert_non_null(x->a);
	x->d = gt_decoder__new(analyze__call, analyze__other, x->a);
	assert_non_null(x->d);
	gt_decoder__set_entry_cb(x->d, analyze__entry);
	analyze__set_decoder(x->a, x->d);
	azs_init(&x->s, put_dec, x->d, gpu, launch_exit);
}

static void run_begin(struct run *x, const struct analyze_opts *o, bool gpu, bool launch_exit)
{
	run_begin_opts(x, o, gpu, launch_exit, NULL);
}

static void run_end(struct run *x)
{
	assert_int_equal(gt_decoder__finish(x->d), 0);
	assert_int_equal(analyze__finish(x->a, x->s.t, &x->r), 0);
	assert_non_null(x->r);
}

static void run_free(struct run *x)
{
	analyze_result__free(x->r);
	gt_decoder__free(x->d);
	analyze__free(x->a);
}

/* A scenario of az_scenarios.h, analyzed. */
static void run_scenario(struct run *x, const char *name, bool gpu)
{
	run_begin(x, NULL, gpu, false);
	assert_true(azs_run(&x->s, name));
	run_end(x);
	assert_int_equal(x->r->nscopes, 1);
}

/* The note of r that is text, NULL when there is none. */
static const char *note(const struct analyze_result *r, const char *text)
{
	for (int i = 0; r->notes[i]; i++)
		if (!strcmp(r->notes[i], text))
			return r->notes[i];
	return NULL;
}

/* The findings' ids, sorted, comma-separated. */
static const char *ids(const struct az_scope *s)
{
	static char buf[512];
	const char *v[AZ_RULE__COUNT];
	size_t n = 0, len = 0;

	for (size_t i = 0; i < s->nfindings && n < AZ_RULE__COUNT; i++)
		v[n++] = s->findings[i].id;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(v[j], v[i]) < 0) {
				const char *t = v[i];

				v[i] = v[j];
				v[j] = t;
			}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", v[i]);
	return buf;
}

static const struct az_finding *finding(const struct az_scope *s, const char *id)
{
	for (size_t i = 0; i < s->nfindings; i++)
		if (!strcmp(s->findings[i].id, id))
			return &s->findings[i];
	fail_msg("no finding %s (have %s)", id, ids(s));
	return NULL;
}

/* ------------------------------------------------------------ scenarios */

static void t_clean(void **state)
{
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_scenario(&x, "clean", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "");
	assert_int_equal(s->kind, AZ_SCOPE_PROCESS);
	assert_int_equal(s->pid, AZS_PID);
	assert_string_equal(s->name, "app");
	assert_int_equal(s->gpu.source, AZ_BUSY_GPU_RECORDS);
	assert_int_equal(s->par.streams, 2);
	assert_int_equal(s->work.kernels, 400);
	assert_int_equal(s->work.kernel_ns, 400 * 200 * US);
	assert_int_equal(s->work.kernel_median_ns, 200 * US);
	assert_int_equal(s->work.class_ns[AZ_KC_GEMM], 400 * 200 * US);
	assert_int_equal(s->work.bound, AZ_BOUND_COMPUTE);
	assert_true(s->gpu.busy_ns * 10 >= s->gpu.active_ns * 9);
	assert_true(s->gpu.concurrent_ns > 0);
	assert_int_equal(s->work.copy_count[GT_COPY_HTOD], 2);
	assert_int_equal(s->work.copy_bytes[GT_COPY_HTOD], 2 * AZS_MB);
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "Compute-bound"));
	run_free(&x);
}

/* 200 x (launch, stream sync, 10 us host), see az_scenarios.h: the process
 * runs from T0 to T0 + 7010 us; iteration i starts at T0 + 10 + 35 i us. */
static void t_sync_loop(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "sync_loop", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "cuda_api_sync,sync_in_loop");
	assert_int_equal(s->start_ts, AZS_T0);
	assert_int_equal(s->end_ts, AZS_T0 + 7010 * US);
	assert_int_equal(s->gpu.busy_ns, 200 * 20 * US);
	assert_int_equal(s->gpu.active_ns, 6985 * US);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_SYNC], 199 * 12 * US);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_LAUNCH], 199 * 3 * US);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_SUBMIT], 0);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_OTHER], 0);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_BEFORE], 13 * US);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_AFTER], 12 * US);
	assert_int_equal(s->gpu.idle_gaps[AZ_IDLE_SYNC], 199);
	assert_int_equal(s->par.waits, 200);
	assert_int_equal(s->par.launches_per_wait, 1);
	assert_int_equal(s->par.streams, 1);
	f = finding(s, "sync_in_loop");
	assert_int_equal(f->count, 200);
	assert_int_equal(f->cost_ns, 200 * 20 * US);
	assert_int_equal(f->severity, AZ_SEV_HIGH);
	assert_int_equal(f->nexamples, AZ_MAX_EXAMPLES);
	assert_string_equal(f->examples[0].what, "cuStreamSynchronize");
	assert_int_equal(f->examples[0].dur, 20 * US);
	assert_int_equal(f->examples[0].tid, AZS_PID);
	f = finding(s, "cuda_api_sync");
	assert_int_equal(f->count, 199);
	assert_int_equal(f->cost_ns, 199 * 12 * US);
	/* the CPU side: launches at entry only (no time), two 5 us allocs, the waits */
	assert_int_equal(s->cpu.threads, 1);
	assert_true(s->cpu.sched);
	assert_int_equal(s->cpu.span_ns, 7000 * US);
	assert_int_equal(s->cpu.calls_ns, 10 * US);
	assert_int_equal(s->cpu.sync_ns, 4000 * US);
	assert_int_equal(s->cpu.sync_blocked_ns, 0);
	assert_int_equal(s->cpu.off_ns, 0);
	assert_int_equal(s->cpu.outside_ns, 2990 * US);
	assert_int_equal(s->work.bound, AZ_BOUND_KERNELS);
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "GPU busy 57 % of 7.01 ms"));
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "behind synchronization"));
	run_free(&x);
}

/* Without GPU records: the busy time is the waits' (an estimate), and only
 * the pattern of the calls is found. */
static void t_sync_loop_no_gpu(void **state)
{
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_scenario(&x, "sync_loop", false);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "sync_in_loop");
	assert_int_equal(s->gpu.source, AZ_BUSY_SYNC_ESTIMATE);
	assert_int_equal(s->gpu.busy_ns, 4000 * US);
	assert_int_equal(s->gpu.devices, 0);
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "at least 57 %"));
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "an estimate"));
	run_free(&x);
}

/* A GPU metric sample into the decoder (as --gpu-metrics records it). */
static void put_metric(struct run *x, uint64_t ts, uint32_t metric, int64_t micro, uint32_t pid, size_t size)
{
	struct gt_gpu_metric m = {
		.hdr = { .ts = ts, .pid = pid, .type = GT_REC_GPU_METRIC, .size = (uint16_t)size },
		.metric = metric, .value_micro = micro,
	};

	assert_int_equal(gt_decoder__feed(x->d, &m.hdr), 0);
}

/* The same without GPU records but with GPU metric samples: the busy time
 * is the utilization's mean over the wall time; a process' memory and a
 * sample cut short count for nothing.  One sample with activity figures is
 * too few for their means: none, and the verdict does not rest on them. */
static void t_sync_loop_metrics(void **state)
{
	const size_t n = sizeof(struct gt_gpu_metric);
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_begin(&x, NULL, false, false);
	assert_true(azs_run(&x.s, "sync_loop"));
	put_metric(&x, AZS_T0 + 1000 * US, GT_GPUM_GPU_UTIL, 40000000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_GPU_UTIL, 60000000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_TENSOR_ACTIVE, 12500000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_DRAM_BW, 3000000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_SM_ACTIVE, 55000000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_PROC_MEM, 1000000, AZS_PID, n);
	put_metric(&x, AZS_T0 + 3000 * US, GT_GPUM_GPU_UTIL, 99000000, 0, n - 8);
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->gpu.source, AZ_BUSY_GPU_METRICS);
	assert_int_equal(s->gpu.util_samples, 2);
	assert_int_equal(s->gpu.util_micro, 50000000);
	assert_int_equal(s->gpu.busy_ns, 7010 * US / 2);
	assert_int_equal(s->work.metric_samples, 1);
	assert_int_equal(s->work.metric_idle, 0);
	assert_int_equal(s->work.tensor_micro, -1);
	assert_int_equal(s->work.dram_micro, -1);
	assert_int_equal(s->work.sm_micro, -1);
	assert_int_equal(s->work.bound, AZ_BOUND_KERNELS);
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "device-wide GPU utilization, the mean of 2 GPU metric samples"));
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "GPU metrics: too few samples while the GPU was "
				   "busy (1) to say"));
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "no tensor or DRAM figures to tell compute from "
				   "memory"));
	run_free(&x);
}

static void t_dtoh_loop(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "dtoh_loop", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "cuda_memcpy_sync");
	f = finding(s, "cuda_memcpy_sync");
	/* entry 5 us after the launch, the copy runs from the kernel's end
	 * (23 us) to 28 us, the call returns at 30 us */
	assert_int_equal(f->count, 199);
	assert_int_equal(f->cost_ns, 199 * 25 * US);
	assert_string_equal(f->examples[0].what, "cuMemcpyDtoH_v2");
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_SYNC], 199 * 12 * US);
	assert_int_equal(s->par.blocking_copies, 199);
	assert_int_equal(s->par.streams, 2);
	assert_int_equal(s->work.copy_count[GT_COPY_DTOH], 200);
	run_free(&x);
}

static void t_one_stream(void **state)
{
	struct run x;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "one_stream", true);
	assert_string_equal(ids(&x.r->scopes[0]), "single_stream");
	f = finding(&x.r->scopes[0], "single_stream");
	assert_int_equal(f->cost_ns, 100 * 100 * US);
	assert_true(f->cost_upper);
	assert_int_equal(x.r->scopes[0].work.bound, AZ_BOUND_TRANSFERS);
	run_free(&x);
}

static void t_host_gap(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "host_gap", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "host_stall");
	f = finding(s, "host_stall");
	assert_int_equal(f->count, 9);
	assert_int_equal(f->cost_ns, 9 * 5 * MS);
	assert_int_equal(f->examples[0].dur, 5 * MS);
	assert_string_equal(f->examples[0].what, "host gap");
	assert_int_equal(s->par.host_gaps, 9);
	assert_int_equal(s->work.bound, AZ_BOUND_KERNELS);
	run_free(&x);
}

static void t_tiny_grid(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "tiny_grid", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "small_grid");
	f = finding(s, "small_grid");
	assert_int_equal(f->count, 400);
	assert_int_equal(f->cost_ns, 400 * 50 * US);
	assert_true(s->par.sm_assumed);
	assert_int_equal(s->par.sm_count, AZ_SM_ASSUMED);
	assert_string_equal(f->examples[0].what, "tiny_kernel");
	assert_non_null(note(x.r, "the trace does not say how many SMs the GPU has: small_grid assumes 40 "
			     "(give --sms N)"));
	run_free(&x);
}

/* tiny_grid (8 blocks) in a trace whose header gives the GPUs' SM counts
 * (options): the count small_grid used, whether it was assumed, the
 * note on it (NULL: none about SMs), how many kernels were small. */
static void tiny_grid_sms(const struct analyze_opts *o, const char *options, uint32_t sms, bool assumed,
			  const char *want_note, uint64_t small)
{
	static const struct analyze_opts none;
	struct run x;
	const struct az_scope *s;

	run_begin_opts(&x, o ? o : &none, true, false, options);
	assert_true(azs_run(&x.s, "tiny_grid"));
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->par.sm_count, sms);
	assert_int_equal(s->par.sm_assumed, assumed);
	assert_int_equal(s->par.small_kernels, small);
	assert_string_equal(ids(s), small ? "small_grid" : "");
	if (want_note)
		assert_non_null(note(x.r, want_note));
	for (int i = 0; x.r->notes[i]; i++)
		if (!want_note || strcmp(x.r->notes[i], want_note))
			assert_null(strstr(x.r->notes[i], "SM"));
	run_free(&x);
}

#define GPUM "trace=cuda,sched cupti=merged gpu_metrics=10 gpu_metrics_devs=2 "

/* The SM count from the trace when --sms is not given: the GPUs' own; the
 * smallest when they differ, or the known ones' when some are not known,
 * said in a note; --sms still wins. */
static void t_tiny_grid_trace_sms(void **state)
{
	static const struct analyze_opts sms8 = { .sm_count = 8 };

	(void)state;
	/* every GPU the same: used, nothing said */
	tiny_grid_sms(NULL, GPUM "gpu_metrics_dev0=0x3ff gpu_metrics_dev0_sms=132 gpu_metrics_dev1=0x3ff "
		      "gpu_metrics_dev1_sms=132", 132, false, NULL, 400);
	/* they differ: the smallest (under the grids' 8 blocks: none small) */
	tiny_grid_sms(NULL, GPUM "gpu_metrics_dev0=0x3ff gpu_metrics_dev0_sms=132 gpu_metrics_dev1=0x3ff "
		      "gpu_metrics_dev1_sms=6", 6, false,
		      "GPUs of different SM counts (132, 6): small_grid uses 6; give --sms N", 0);
	/* one not known */
	tiny_grid_sms(NULL, GPUM "gpu_metrics_dev0=0x3fc gpu_metrics_dev0_mig=1 gpu_metrics_dev1=0x3ff "
		      "gpu_metrics_dev1_sms=114", 114, false,
		      "the SM count of 1 of 2 GPUs is not known: small_grid uses the others' 114; give --sms N",
		      400);
	tiny_grid_sms(NULL, "trace=cuda,sched cupti=merged gpu_metrics=10 gpu_metrics_devs=3 "
		      "gpu_metrics_dev0=0x3ff gpu_metrics_dev0_sms=132 gpu_metrics_dev1=0x3ff gpu_metrics_dev2=0x3ff "
		      "gpu_metrics_dev2_sms=114", 114, false,
		      "GPUs of different SM counts (132, 114; 1 GPU not known): small_grid uses 114; give --sms N",
		      400);
	/* none known: the assumption, as in a trace without the probe */
	tiny_grid_sms(NULL, GPUM "gpu_metrics_dev0=0x3ff gpu_metrics_dev1=0x3ff", AZ_SM_ASSUMED, true,
		      "the trace does not say how many SMs the GPU has: small_grid assumes 40 (give --sms N)",
		      400);
	/* --sms wins over the trace, differing or not, and says nothing */
	tiny_grid_sms(&sms8, GPUM "gpu_metrics_dev0=0x3ff gpu_metrics_dev0_sms=132 gpu_metrics_dev1=0x3ff "
		      "gpu_metrics_dev1_sms=6", 8, false, NULL, 0);
}

/* --sms below the grids: not small any more. */
static void t_tiny_grid_sms(void **state)
{
	struct analyze_opts o = { .sm_count = 8 };
	struct run x;

	(void)state;
	run_begin(&x, &o, true, false);
	assert_true(azs_run(&x.s, "tiny_grid"));
	run_end(&x);
	assert_string_equal(ids(&x.r->scopes[0]), "");
	assert_false(x.r->scopes[0].par.sm_assumed);
	assert_int_equal(x.r->scopes[0].par.small_kernels, 0);
	run_free(&x);
}

static void t_launch_bound(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "launch_bound", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "gpu_time_util,launch_bound");
	assert_int_equal(s->work.kernel_median_ns, 2 * US);
	assert_int_equal(s->work.launch_gap_median_ns, 5 * US);
	assert_int_equal(s->work.launch_median_ns, 0);
	assert_int_equal(s->gpu.idle_ns[AZ_IDLE_LAUNCH], 1999 * 3 * US);
	assert_int_equal(s->work.bound, AZ_BOUND_LAUNCH);
	f = finding(s, "launch_bound");
	assert_int_equal(f->count, 2000);
	assert_int_equal(f->cost_ns, 1999 * 3 * US);
	assert_non_null(strstr(f->summary, "2,000 kernels, median 2.00 us on the GPU, 5.00 us per "
				   "launch on the CPU (median interval between launches)"));
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "Launch-bound"));
	run_free(&x);
}

/* With launch exits the launch cost is the call's own. */
static void t_launch_bound_exits(void **state)
{
	struct run x;

	(void)state;
	run_begin(&x, NULL, true, true);
	assert_true(azs_run(&x.s, "launch_bound"));
	run_end(&x);
	assert_int_equal(x.r->scopes[0].work.launch_median_ns, 5 * US);
	assert_non_null(strstr(finding(&x.r->scopes[0], "launch_bound")->summary,
			       "(median launch call)"));
	/* the launches' time is in CUDA calls now */
	assert_int_equal(x.r->scopes[0].cpu.calls_ns, 10 * US + 2000 * 5 * US);
	run_free(&x);
}

static void t_pageable(void **state)
{
	struct run x;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "pageable", true);
	assert_string_equal(ids(&x.r->scopes[0]), "cuda_memcpy_async");
	f = finding(&x.r->scopes[0], "cuda_memcpy_async");
	assert_int_equal(f->count, 100);
	assert_int_equal(f->cost_ns, 100 * AZS_COPY_CPU);
	assert_string_equal(f->examples[0].what, "cuMemcpyHtoDAsync_v2");
	run_free(&x);
}

static void t_legacy(void **state)
{
	struct run x;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "legacy", true);
	assert_string_equal(ids(&x.r->scopes[0]), "default_stream");
	f = finding(&x.r->scopes[0], "default_stream");
	assert_int_equal(f->count, 50);
	assert_int_equal(f->severity, AZ_SEV_LOW);
	run_free(&x);
}

static void t_memset_loop(void **state)
{
	struct run x;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "memset_loop", true);
	assert_string_equal(ids(&x.r->scopes[0]), "cuda_memset_sync");
	f = finding(&x.r->scopes[0], "cuda_memset_sync");
	assert_int_equal(f->count, 49);
	assert_int_equal(f->cost_ns, 49 * AZS_COPY_CPU);
	run_free(&x);
}

static void t_long_gap(void **state)
{
	struct run x;
	const struct az_scope *s;
	const struct az_finding *f;

	(void)state;
	run_scenario(&x, "long_gap", true);
	s = &x.r->scopes[0];
	assert_string_equal(ids(s), "gpu_gaps,gpu_time_util,host_stall");
	f = finding(s, "gpu_gaps");
	assert_int_equal(f->count, 1);
	assert_true(f->cost_ns >= 600 * MS);
	f = finding(s, "host_stall");
	assert_int_equal(f->count, 1);
	assert_int_equal(f->cost_ns, 600 * MS);
	/* the sleep was off-CPU outside CUDA */
	assert_int_equal(s->cpu.off_ns, 600 * MS);
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "off-CPU"));
	run_free(&x);
}

/* ------------------------------------------------------------ pieces */

/* A wait with the thread off-CPU inside it: blocked, the rest spinning; a
 * sleep outside: off-CPU outside CUDA. */
static void t_cpu_split(void **state)
{
	struct run x;
	const struct az_scope *s;
	struct gt_call *c;
	struct gt_offcpu *o;

	(void)state;
	run_begin(&x, NULL, false, false);
	azs_alloc(&x.s, GT_API_cuMemAlloc_v2, AZS_DEV_BASE, AZS_MB);	/* T0 .. +5 us */
	c = (void *)azs_hdr(&x.s, GT_REC_CALL, sizeof(*c), AZS_T0 + 10 * US, GT_API_cuCtxSynchronize);
	azs_emit(&x.s);
	o = (void *)azs_hdr(&x.s, GT_REC_OFFCPU, sizeof(*o), AZS_T0 + 20 * US, 0);
	o->dur = 60 * US;
	azs_emit(&x.s);
	azs_ret(&x.s, AZS_T0 + 10 * US, 100 * US, GT_API_cuCtxSynchronize, 0);	/* to +110 us */
	o = (void *)azs_hdr(&x.s, GT_REC_OFFCPU, sizeof(*o), AZS_T0 + 120 * US, 0);
	o->dur = 30 * US;
	azs_emit(&x.s);
	x.s.t = AZS_T0 + 200 * US;
	azs_alloc(&x.s, GT_API_cuMemAlloc_v2, AZS_DEV_BASE + AZS_MB, AZS_MB);	/* to +205 us */
	x.s.t = AZS_T0 + 300 * US;
	azs_end(&x.s);
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->cpu.threads, 1);
	assert_int_equal(s->cpu.span_ns, 205 * US);
	assert_int_equal(s->cpu.calls_ns, 10 * US);
	assert_int_equal(s->cpu.sync_ns, 100 * US);
	assert_int_equal(s->cpu.sync_blocked_ns, 60 * US);
	assert_int_equal(s->cpu.off_ns, 30 * US);
	assert_int_equal(s->cpu.outside_ns, 95 * US);
	assert_int_equal(s->cpu.calls, 3);
	run_free(&x);
}

/* Without GPU records, GPU metric samples give the busy time and the bound:
 * 80 % utilization, tensor pipes at 60 %. */
static void t_metrics(void **state)
{
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_begin(&x, NULL, false, false);
	azs_alloc(&x.s, GT_API_cuMemAlloc_v2, AZS_DEV_BASE, AZS_MB);
	for (int i = 0; i < 100; i++) {
		azs_launch(&x.s, 1, "mystery_kernel", AZS_BIG, 5000, 100000);
		azs_host(&x.s, 95000);
		azs_metric(&x.s, x.s.t, GT_GPUM_GPU_UTIL, 80000000);
		azs_metric(&x.s, x.s.t, GT_GPUM_TENSOR_ACTIVE, i % 2 ? 50000000 : 70000000);
		azs_metric(&x.s, x.s.t, GT_GPUM_DRAM_BW, 20000000);
		azs_metric(&x.s, x.s.t, GT_GPUM_POWER, 500000000);
	}
	azs_sync(&x.s, -1);
	azs_end(&x.s);
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->gpu.source, AZ_BUSY_GPU_METRICS);
	assert_int_equal(s->gpu.util_samples, 100);
	assert_int_equal(s->gpu.util_micro, 80000000);
	assert_int_equal(s->gpu.busy_ns, (s->end_ts - s->start_ts) * 8 / 10);
	assert_int_equal(s->work.tensor_micro, 60000000);
	assert_int_equal(s->work.dram_micro, 20000000);
	assert_int_equal(s->work.sm_micro, -1);
	assert_int_equal(s->work.bound, AZ_BOUND_COMPUTE);
	assert_non_null(strstr(s->answer[AZ_Q_BUSY], "device-wide GPU utilization, the mean of 100 "
				   "GPU metric samples"));
	assert_int_equal(s->work.metric_samples, 100);
	assert_int_equal(s->work.metric_idle, 0);
	assert_false(s->work.metric_all);
	assert_int_equal(s->work.metric_hz, 0);
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "Compute-bound, as far as the GPU metrics show"));
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "GPU metrics over the 100 samples in which the GPU "
				   "was busy: tensor pipes active 60.0 %, DRAM bandwidth 20.0 % of its peak "
				   "(device-wide, sampled)"));
	run_free(&x);
}

/* s's JSON document, in a static buffer. */
static const char *json_of(const struct analyze_result *r)
{
	static char buf[65536];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	assert_int_equal(analyze__write(r, ANALYZE_JSON, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

#define GPUM_OPTS "trace=cuda,sched gpu_metrics=10 gpu_metrics_devs=2 gpu_metrics_dev0=0xffff01ff " \
		  "gpu_metrics_dev1=0x3ff"

/* What a gpum_ scenario of az_scenarios.h gives, without GPU records. */
struct gpum_want {
	const char *scenario;
	uint64_t util_samples;
	int64_t util_micro;
	uint64_t samples, idle;		/* activity: busy samples, idle ones left out */
	int64_t sm, tensor, dram;	/* their means, -1 none */
	enum az_bound bound;
	const char *answer;		/* in the bound answer */
	const char *json;		/* in the JSON document */
};

static void gpum_check(const struct gpum_want *w)
{
	struct run x;
	const struct az_scope *s;

	run_begin_opts(&x, NULL, false, false, GPUM_OPTS);
	assert_true(azs_run(&x.s, w->scenario));
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->gpu.source, AZ_BUSY_GPU_METRICS);
	assert_int_equal(s->gpu.util_samples, w->util_samples);
	assert_int_equal(s->gpu.util_micro, w->util_micro);
	assert_int_equal(s->work.metric_samples, w->samples);
	assert_int_equal(s->work.metric_idle, w->idle);
	assert_false(s->work.metric_all);
	assert_int_equal(s->work.metric_hz, 10);
	assert_int_equal(s->work.sm_micro, w->sm);
	assert_int_equal(s->work.tensor_micro, w->tensor);
	assert_int_equal(s->work.dram_micro, w->dram);
	assert_int_equal(s->work.bound, w->bound);
	if (!strstr(s->answer[AZ_Q_BOUND], w->answer))
		fail_msg("bound answer: %s", s->answer[AZ_Q_BOUND]);
	if (w->tensor < 0)
		assert_null(strstr(s->answer[AZ_Q_BOUND], "tensor pipes"));
	assert_non_null(strstr(json_of(x.r), w->json));
	run_free(&x);
}

/* Busy and idle samples alternating (az_scenarios.h gpum_alternate): the
 * activity means of the 5 busy ones of GPU 0 alone, not of all 10 (33.5,
 * 22.5, 7 %), nor gated by GPU 1's utilization (busy throughout); the
 * utilization's mean over all 20 (the busy fraction); the samples before
 * the process and after its exit left out.  Tensor 44 % is compute-bound
 * where the mean of all samples (22.5 %) would not be. */
static void t_metrics_busy(void **state)
{
	(void)state;
	gpum_check(&(struct gpum_want){
		"gpum_alternate", 20, 75000000, 5, 5, 64000000, 44000000, 12000000, AZ_BOUND_COMPUTE,
		"Compute-bound, as far as the GPU metrics show: utilization 75 %; GPU metrics over the "
		"5 samples in which the GPU was busy: tensor pipes active 44.0 %, DRAM bandwidth 12.0 % "
		"of its peak (device-wide, sampled at 10 Hz) (no GPU records",
		"\"tensor_pct\":44.000000,\"dram_pct\":12.000000,\"sm_pct\":64.000000,\"metric_samples\":5,"
		"\"metric_idle_samples\":5,\"metric_basis\":\"busy\",\"metric_hz\":10," });
}

/* Two busy samples (gpum_few): too few to say; no figures in the answer,
 * the JSON or the verdict (41 and 44 % tensor would be compute-bound). */
static void t_metrics_few(void **state)
{
	(void)state;
	gpum_check(&(struct gpum_want){
		"gpum_few", 12, 66666666, 2, 4, -1, -1, -1, AZ_BOUND_KERNELS,
		"GPU-bound, as far as the GPU metrics show (no tensor or DRAM figures to tell compute "
		"from memory): utilization 67 %; GPU metrics: too few samples while the GPU was busy (2) "
		"to say (no GPU records",
		"\"tensor_pct\":null,\"dram_pct\":null,\"sm_pct\":null,\"metric_samples\":2,"
		"\"metric_idle_samples\":4,\"metric_basis\":\"busy\",\"metric_hz\":10," });
}

/* No utilization in the trace (a GPU or NVML without it): the means of
 * every sample, said so; the rate above 10 Hz is GPM's, about 10 Hz. */
static void t_metrics_no_util(void **state)
{
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_begin_opts(&x, NULL, false, false, "trace=cuda,sched gpu_metrics=50");
	assert_true(azs_run(&x.s, "sync_loop"));
	for (int k = 1; k <= 4; k++) {
		put_metric(&x, AZS_T0 + (uint64_t)k * 1000 * US, GT_GPUM_POWER, 300000000, 0,
			   sizeof(struct gt_gpu_metric));
		put_metric(&x, AZS_T0 + (uint64_t)k * 1000 * US, GT_GPUM_TENSOR_ACTIVE,
			   k * 10000000, 0, sizeof(struct gt_gpu_metric));
		put_metric(&x, AZS_T0 + (uint64_t)k * 1000 * US, GT_GPUM_DRAM_BW, 0, 0,
			   sizeof(struct gt_gpu_metric));
	}
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->gpu.util_samples, 0);
	assert_int_equal(s->gpu.source, AZ_BUSY_SYNC_ESTIMATE);
	assert_int_equal(s->work.metric_samples, 4);
	assert_true(s->work.metric_all);
	assert_int_equal(s->work.tensor_micro, 25000000);
	assert_int_equal(s->work.dram_micro, 0);
	assert_non_null(strstr(json_of(x.r), "\"metric_samples\":4,\"metric_idle_samples\":0,"
					     "\"metric_basis\":\"all\",\"metric_hz\":50,"));
	run_free(&x);
	/* with GPU records the answer carries them */
	run_begin_opts(&x, NULL, true, false, "trace=cuda,sched cupti=merged gpu_metrics=50");
	assert_true(azs_run(&x.s, "clean"));
	for (int k = 1; k <= 3; k++)
		put_metric(&x, AZS_T0 + (uint64_t)k * 1000 * US, GT_GPUM_TENSOR_ACTIVE, 10000000, 0,
			   sizeof(struct gt_gpu_metric));
	run_end(&x);
	s = &x.r->scopes[0];
	assert_non_null(strstr(s->answer[AZ_Q_BOUND], "; GPU metrics over all 3 samples (no GPU "
				   "utilization in the trace to tell busy samples from idle ones): tensor "
				   "pipes active 10.0 %, DRAM bandwidth - of its peak (device-wide, sampled "
				   "at about 10 Hz)."));
	run_free(&x);
}

/* A sample is a GPU's round of records of one time, whatever their order
 * in it: GPM before the utilization counts as busy; a round whose
 * utilization read failed is left out where the scope has utilization;
 * records of GPUs beyond the 64 told apart are counted in a note. */
static void t_metrics_rounds(void **state)
{
	const size_t n = sizeof(struct gt_gpu_metric);
	struct run x;
	const struct az_scope *s;
	uint64_t t;

	(void)state;
	run_begin(&x, NULL, false, false);
	assert_true(azs_run(&x.s, "sync_loop"));
	for (int k = 0; k < 3; k++) {
		t = AZS_T0 + (uint64_t)(k + 1) * 1000 * US;
		put_metric(&x, t, GT_GPUM_TENSOR_ACTIVE, 30000000, 0, n);
		put_metric(&x, t, GT_GPUM_DRAM_BW, 60000000, 0, n);
		put_metric(&x, t, GT_GPUM_GPU_UTIL, 90000000, 0, n);
	}
	/* no utilization: failed */
	put_metric(&x, AZS_T0 + 4000 * US, GT_GPUM_POWER, 300000000, 0, n);
	put_metric(&x, AZS_T0 + 4000 * US, GT_GPUM_TENSOR_ACTIVE, 99000000, 0, n);
	/* GPUs 1 to 64: analyze tells 64 apart (AZ_METRIC_DEVS) */
	for (uint32_t d = 1; d <= 64; d++) {
		struct gt_gpu_metric m = {
			.hdr = { .ts = AZS_T0 + 5000 * US, .type = GT_REC_GPU_METRIC, .size = n },
			.device = d, .metric = GT_GPUM_GPU_UTIL, .value_micro = 0,
		};

		assert_int_equal(gt_decoder__feed(x.d, &m.hdr), 0);
	}
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->work.metric_samples, 3);
	assert_int_equal(s->work.metric_idle, 0);
	assert_int_equal(s->work.tensor_micro, 30000000);
	assert_int_equal(s->work.dram_micro, 60000000);
	/* GPU 0's 3, GPUs 1 to 63's one each; GPU 64's left out */
	assert_int_equal(s->gpu.util_samples, 3 + 63);
	assert_int_equal(s->work.bound, AZ_BOUND_HOST);
	bool noted = false;

	for (int i = 0; x.r->notes[i]; i++)
		noted |= !strcmp(x.r->notes[i], "1 GPU metric records of GPUs beyond the first 64 "
				 "were left out");
	assert_true(noted);
	run_free(&x);
}

/* A capture range: its own scope after the process', with what began in it. */
static void t_range(void **state)
{
	struct run x;
	struct gt_capture *cap;
	const struct az_scope *p, *r;

	(void)state;
	run_begin(&x, NULL, true, false);
	azs_alloc(&x.s, GT_API_cuMemAlloc_v2, AZS_DEV_BASE, AZS_MB);
	for (int i = 0; i < 30; i++) {
		if (i == 10 || i == 20) {
			cap = (void *)azs_hdr(&x.s, GT_REC_RANGE, sizeof(*cap), x.s.t, 0);
			cap->kind = i == 10 ? GT_CAP_RANGE_OPEN : GT_CAP_RANGE_CLOSE;
			cap->source = GT_CAPSRC_PROFILER;
			cap->index = 1;
			azs_emit(&x.s);
		}
		azs_launch(&x.s, 1, "step_kernel", AZS_BIG, 5000, 100000);
	}
	azs_sync(&x.s, -1);
	azs_end(&x.s);
	run_end(&x);
	assert_int_equal(x.r->nscopes, 2);
	p = &x.r->scopes[0];
	r = &x.r->scopes[1];
	assert_int_equal(p->kind, AZ_SCOPE_PROCESS);
	assert_int_equal(p->work.launches, 30);
	assert_int_equal(r->kind, AZ_SCOPE_RANGE);
	assert_int_equal(r->number, 1);
	assert_int_equal(r->work.launches, 10);
	assert_int_equal(r->work.kernels, 10);
	assert_int_equal(r->gpu.busy_ns, 10 * 100 * US);
	assert_int_equal(r->start_ts, AZS_T0 + 5 * US + 50 * US);
	run_free(&x);
}

/* --range: one scope, the span's, of its process only. */
static void t_span(void **state)
{
	struct analyze_opts o = {
		.span = true, .span_pid = AZS_PID, .span_start = AZS_T0 + 10 * US + 35 * US * 100,
		.span_end = AZS_T0 + 10 * US + 35 * US * 150 - 1, .span_kind = AZ_SCOPE_RANGE,
		.span_number = 3,
	};
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_begin(&x, &o, true, false);
	assert_true(azs_run(&x.s, "sync_loop"));
	run_end(&x);
	assert_int_equal(x.r->nscopes, 1);
	s = &x.r->scopes[0];
	assert_int_equal(s->kind, AZ_SCOPE_RANGE);
	assert_int_equal(s->number, 3);
	assert_int_equal(s->work.launches, 50);
	assert_int_equal(s->par.waits, 50);
	assert_int_equal(s->start_ts, o.span_start);
	run_free(&x);
}

/* A GPU record that comes after the timeline moved past its start. */
static void t_late(void **state)
{
	struct run x;
	struct gt_gpu_kernel *k;
	size_t n = sizeof("late_kernel");

	(void)state;
	run_begin(&x, NULL, true, false);
	azs_alloc(&x.s, GT_API_cuMemAlloc_v2, AZS_DEV_BASE, AZS_MB);
	for (int i = 0; i < 10; i++)
		azs_launch(&x.s, 1, "step_kernel", AZS_BIG, 5000, 100000);
	azs_host(&x.s, 100 * MS);
	azs_launch(&x.s, 1, "step_kernel", AZS_BIG, 5000, 100000);
	/* unlinked, started at T0 + 20 us: the sweep is past it */
	k = (void *)azs_hdr(&x.s, GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + n), AZS_T0 + 20 * US, 0);
	k->dur = 10 * US;
	k->len = (uint16_t)n;
	memcpy(k->name, "late_kernel", n);
	azs_emit(&x.s);
	azs_end(&x.s);
	run_end(&x);
	assert_int_equal(x.r->scopes[0].gpu.late, 1);
	assert_int_equal(x.r->scopes[0].gpu.unlinked, 1);
	assert_int_equal(x.r->scopes[0].work.kernels, 12);
	run_free(&x);
}

/* -p: another process' records are left out. */
static void t_pid(void **state)
{
	struct analyze_opts o = { .pid = 4242 };
	struct run x;
	struct analyze_result *r;

	(void)state;
	run_begin(&x, &o, true, false);
	assert_true(azs_run(&x.s, "sync_loop"));
	assert_int_equal(gt_decoder__finish(x.d), 0);
	assert_int_equal(analyze__finish(x.a, x.s.t, &r), 0);
	assert_int_equal(r->nscopes, 0);
	analyze_result__free(r);
	gt_decoder__free(x.d);
	analyze__free(x.a);
}

static void t_kclass(void **state)
{
	(void)state;
	assert_int_equal(az_kclass__of("ampere_sgemm_128x64_nn"), AZ_KC_GEMM);
	assert_int_equal(az_kclass__of("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"), AZ_KC_GEMM);
	assert_int_equal(az_kclass__of("void cutlass::Kernel<cutlass_80_tensorop>(Params)"),
			 AZ_KC_GEMM);
	assert_int_equal(az_kclass__of("void pytorch_flash::flash_fwd_kernel<Flash_fwd>(Params)"),
			 AZ_KC_ATTENTION);
	assert_int_equal(az_kclass__of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"),
			 AZ_KC_NCCL);
	assert_int_equal(az_kclass__of("void cudnn::cnn::conv2d_grouped_direct_kernel<float>()"),
			 AZ_KC_CONV);
	assert_int_equal(az_kclass__of("void at::native::reduce_kernel<512, 1>(ReduceOp)"),
			 AZ_KC_REDUCTION);
	assert_int_equal(az_kclass__of("void at::native::vectorized_elementwise_kernel<4>()"),
			 AZ_KC_ELEMENTWISE);
	assert_int_equal(az_kclass__of("vecAdd(float*, float*, float*, int)"), AZ_KC_ELEMENTWISE);
	assert_int_equal(az_kclass__of("mystery_kernel"), AZ_KC_OTHER);
}

static void t_names(void **state)
{
	(void)state;
	for (int i = 0; i < AZ_RULE__COUNT; i++) {
		assert_non_null(az_rule__id(i));
		assert_int_equal(az_rule__by_id(az_rule__id(i)), i);
	}
	assert_null(az_rule__id(AZ_RULE__COUNT));
	assert_int_equal(az_rule__by_id("no_such_rule"), -1);
	assert_string_equal(az_rule__id(AZ_RULE_MEMCPY_ASYNC), "cuda_memcpy_async");
	assert_string_equal(az_severity__name(AZ_SEV_HIGH), "high");
	assert_string_equal(az_idle__name(AZ_IDLE_SUBMIT), "submit");
	assert_string_equal(az_bound__name(AZ_BOUND_LAUNCH), "launch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_clean),
		cmocka_unit_test(t_sync_loop),
		cmocka_unit_test(t_sync_loop_no_gpu),
		cmocka_unit_test(t_sync_loop_metrics),
		cmocka_unit_test(t_dtoh_loop),
		cmocka_unit_test(t_one_stream),
		cmocka_unit_test(t_host_gap),
		cmocka_unit_test(t_tiny_grid),
		cmocka_unit_test(t_tiny_grid_trace_sms),
		cmocka_unit_test(t_tiny_grid_sms),
		cmocka_unit_test(t_launch_bound),
		cmocka_unit_test(t_launch_bound_exits),
		cmocka_unit_test(t_pageable),
		cmocka_unit_test(t_legacy),
		cmocka_unit_test(t_memset_loop),
		cmocka_unit_test(t_long_gap),
		cmocka_unit_test(t_cpu_split),
		cmocka_unit_test(t_metrics),
		cmocka_unit_test(t_metrics_busy),
		cmocka_unit_test(t_metrics_few),
		cmocka_unit_test(t_metrics_no_util),
		cmocka_unit_test(t_metrics_rounds),
		cmocka_unit_test(t_range),
		cmocka_unit_test(t_span),
		cmocka_unit_test(t_late),
		cmocka_unit_test(t_pid),
		cmocka_unit_test(t_kclass),
		cmocka_unit_test(t_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
