// SPDX-License-Identifier: MIT
/*
 * Unit tests of the core of `gtrace-bpf analyze` (user/analyze/analyze*.c):
 * the planted patterns of tests/fixtures/az_scenarios.h fed through a
 * decoder, each giving exactly its findings and figures worked out from the
 * scenario's timings; a clean program giving none; the CPU split with
 * scheduler records; capture ranges as scopes; late GPU records; kernel
 * classes (GPU metric samples: test_analyze_gpum.c).  No file, no root.
 */
#include "analyze_fixtures.h"

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

static int cmp_iv(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* GPU work whose starts do not follow its launches' order: a stream of long
 * kernels queues thousands of launches into the future while two streams
 * of short ones start at once, so that the work waiting to be placed is
 * partly in start order and partly not, and its queues grow past their
 * first sizes while in use.  Every record placed on time (none late) and
 * the busy time the union of the intervals, worked out here. */
static void t_order(void **state)
{
	enum { N = 6000 };
	static uint64_t iv[N][2];
	uint64_t busy = 0, end = 0;
	struct run x;

	(void)state;
	run_begin(&x, NULL, true, false);
	for (int k = 0; k < N; k++) {
		int i = k % 5 == 0 ? 1 : 2 + k % 2;
		uint64_t gpu = i == 1 ? 40 * US : 1 * US + (uint64_t)(k % 7) * 100;

		azs_launch(&x.s, i, i == 1 ? "long_kernel" : "short_kernel", AZS_BIG, 2 * US, gpu);
		iv[k][1] = x.s.st[i].free;
		iv[k][0] = iv[k][1] - gpu;
	}
	azs_end(&x.s);
	run_end(&x);
	qsort(iv, N, sizeof(iv[0]), cmp_iv);
	for (int k = 0; k < N; k++) {
		uint64_t a = iv[k][0] > end ? iv[k][0] : end;

		if (iv[k][1] > a)
			busy += iv[k][1] - a;
		if (iv[k][1] > end)
			end = iv[k][1];
	}
	/* the long stream ends far past the last launch: a good part waited */
	assert_true(iv[N - 1][1] > AZS_T0 + (uint64_t)N * 2 * US + 10 * MS);
	assert_int_equal(x.r->scopes[0].gpu.late, 0);
	assert_int_equal(x.r->scopes[0].gpu.work, N);
	assert_int_equal(x.r->scopes[0].gpu.busy_ns, busy);
	run_free(&x);
}

/* The waiting work in start order is a ring: placed from its head, so that
 * after a pause (the slack past, everything placed) new work goes on where
 * the last left off and wraps round; then more work in flight than there
 * are slots makes it grow while wrapped.  Every record placed once, in
 * order: none late, the busy time their durations' sum (one stream). */
static void t_order_ring(void **state)
{
	uint64_t busy = 0;
	struct run x;

	(void)state;
	run_begin(&x, NULL, true, false);
	for (int k = 0; k < 600; k++) {
		if (k == 200)
			azs_host(&x.s, 50 * MS);	/* past the 20 ms the work waits */
		azs_launch(&x.s, 1, "step_kernel", AZS_BIG, 2 * US, 1 * US + (uint64_t)(k % 3) * 100);
		busy += 1 * US + (uint64_t)(k % 3) * 100;
	}
	azs_end(&x.s);
	run_end(&x);
	assert_int_equal(x.r->scopes[0].gpu.late, 0);
	assert_int_equal(x.r->scopes[0].gpu.work, 600);
	assert_int_equal(x.r->scopes[0].gpu.busy_ns, busy);
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

/* A libcuda load that left a gap: the note names the process, the file
 * (escaped), the interval from the recording's start and why; a hold that
 * ended with the probes in place says nothing; several gaps are counted. */
static void put_libload(struct run *x, uint32_t pid, uint64_t ts, uint64_t end, uint64_t cont,
			uint16_t outcome, const char *path)
{
	_Alignas(8) unsigned char buf[sizeof(struct gt_libload) + 64] = { 0 };
	struct gt_libload *l = (void *)buf;
	size_t n = strlen(path) + 1;

	l->hdr = (struct gt_hdr){ .ts = ts, .pid = pid, .tid = pid, .type = GT_REC_LIBLOAD,
				  .size = (uint16_t)GT_REC_ALIGN(sizeof(*l) + n) };
	l->end_ts = end;
	l->cont_ts = cont;
	l->outcome = outcome;
	l->len = (uint16_t)n;
	memcpy(l->path, path, n);
	put_dec(x->d, &l->hdr);
}

static void t_libload_gap(void **state)
{
	struct run x;

	(void)state;
	/* a hold: nothing missed, nothing said */
	run_begin(&x, NULL, true, false);
	put_libload(&x, 7, AZS_T0 - 1000, AZS_T0 - 500, AZS_T0 - 400, GT_LL_HELD, "/h/libcuda.so.1");
	assert_true(azs_run(&x.s, "tiny_grid"));
	run_end(&x);
	for (int i = 0; x.r->notes[i]; i++)
		assert_null(strstr(x.r->notes[i], "probes"));
	run_free(&x);

	/* the trace starts at AZS_T0 - 1000 */
	run_begin(&x, NULL, true, false);
	put_libload(&x, 7, AZS_T0 - 1000 + 120 * MS, AZS_T0 - 1000 + 250 * MS, 0, GT_LL_JOB,
		    "/j/lib\x1b[2Jcuda.so.1");
	assert_true(azs_run(&x.s, "tiny_grid"));
	run_end(&x);
	assert_non_null(note(x.r, "pid 7 ran /j/lib\\x1b[2Jcuda.so.1 from +0.120 s to +0.250 s before its "
			     "probes were attached (not held: a job of a job-control shell): its calls then "
			     "were not recorded, and the figures of that process lack them"));
	run_free(&x);

	run_begin(&x, NULL, true, false);
	put_libload(&x, 7, AZS_T0 - 1000 + 1 * MS, 0, AZS_T0 - 1000 + 1001 * MS, GT_LL_ATTACH_FAILED,
		    "/f/libcuda.so.1");
	put_libload(&x, 8, AZS_T0 - 1000 + 2 * MS, AZS_T0 - 1000 + 3 * MS, 0, GT_LL_STALE, "/s/libcuda.so.1");
	assert_true(azs_run(&x.s, "tiny_grid"));
	run_end(&x);
	/* the first: held, continued, never probed: to the end of the trace */
	for (int i = 0; x.r->notes[i]; i++)
		if (strstr(x.r->notes[i], "2 processes ran a libcuda or libnccl before its probes were attached"))
			assert_non_null(strstr(x.r->notes[i], "(the first: pid 7, /f/libcuda.so.1, from +1.001 s "
						"to the end, +"));
	assert_true(x.r->notes[1] && strstr(x.r->notes[1], "2 processes ran a libcuda"));
	run_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_clean),
		cmocka_unit_test(t_sync_loop),
		cmocka_unit_test(t_sync_loop_no_gpu),
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
		cmocka_unit_test(t_range),
		cmocka_unit_test(t_span),
		cmocka_unit_test(t_late),
		cmocka_unit_test(t_order),
		cmocka_unit_test(t_order_ring),
		cmocka_unit_test(t_pid),
		cmocka_unit_test(t_kclass),
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_libload_gap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
