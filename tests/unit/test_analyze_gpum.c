// SPDX-License-Identifier: MIT
/*
 * Unit tests of analyze's figures from GPU metric samples (--gpu-metrics),
 * without GPU records: the busy time as the utilization's mean, the bound
 * from the activity means of the busy samples, too few samples saying
 * nothing, a GPU without utilization, samples as rounds of one time; in the
 * answers and the JSON document.  No file, no root.
 */
#include "analyze_fixtures.h"

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

/* Samples of the process' time written before its first record (the
 * recorder drains its metric queue and its ring buffer in turns): they are
 * its all the same, as when they come after; one from before its first
 * record is not. */
static void t_metrics_before_calls(void **state)
{
	const size_t n = sizeof(struct gt_gpu_metric);
	struct run x;
	const struct az_scope *s;

	(void)state;
	run_begin(&x, NULL, false, false);
	put_metric(&x, AZS_T0 - 1000 * US, GT_GPUM_GPU_UTIL, 90000000, 0, n);
	put_metric(&x, AZS_T0 + 1000 * US, GT_GPUM_GPU_UTIL, 40000000, 0, n);
	put_metric(&x, AZS_T0 + 2000 * US, GT_GPUM_GPU_UTIL, 60000000, 0, n);
	put_metric(&x, AZS_T0 + 3000 * US, GT_GPUM_GPU_UTIL, 20000000, 0, n);	/* judged at the end */
	assert_true(azs_run(&x.s, "sync_loop"));
	run_end(&x);
	s = &x.r->scopes[0];
	assert_int_equal(s->gpu.source, AZ_BUSY_GPU_METRICS);
	assert_int_equal(s->gpu.util_samples, 3);
	assert_int_equal(s->gpu.util_micro, 40000000);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sync_loop_metrics),
		cmocka_unit_test(t_metrics),
		cmocka_unit_test(t_metrics_before_calls),
		cmocka_unit_test(t_metrics_busy),
		cmocka_unit_test(t_metrics_few),
		cmocka_unit_test(t_metrics_no_util),
		cmocka_unit_test(t_metrics_rounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
