// SPDX-License-Identifier: MIT
/*
 * What repeats and when it is steady (analyze/steady.c): the period of
 * segment signatures, the phases of a series of iteration times (a warm-up,
 * a slow tail, an outlier inside, none at all), NVTX series that are
 * iterations or a library's, and the scan over call streams of the shapes
 * that misled diff before: eager steps against their CUDA graph, a loop
 * of launches + synchronize + host work, a GEMM loop after a slow start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyze/steady.h"
#include "format/api.h"

#define US 1000ull
#define MS 1000000ull

static void t_sig_period(void **state)
{
	uint64_t a[] = { 9, 1, 1, 1, 1, 1, 1, 7 };
	uint64_t b[] = { 5, 1, 2, 1, 2, 1, 2, 1, 2, 8 };
	uint64_t c[] = { 1, 2, 3, 4, 5, 6 };
	uint64_t d[] = { 1, 1 };
	struct steady_run r;

	(void)state;
	assert_true(steady__sig_period(a, 8, &r));
	assert_int_equal(r.k, 1);
	assert_int_equal(r.start, 1);
	assert_int_equal(r.iters, 6);
	assert_true(steady__sig_period(b, 10, &r));
	assert_int_equal(r.k, 2);
	assert_int_equal(r.start, 1);
	assert_int_equal(r.iters, 4);
	assert_false(steady__sig_period(c, 6, &r));
	assert_false(steady__sig_period(d, 2, &r));
}

/* n iterations back to back of the given times (ns). */
static void times(const uint64_t *d, size_t n, uint64_t *start, uint64_t *end)
{
	uint64_t t = 1000 * MS;

	for (size_t i = 0; i < n; i++) {
		start[i] = t;
		end[i] = t + d[i];
		t = end[i];
	}
}

static void t_phases(void **state)
{
	uint64_t d[40], s[40], e[40];
	struct steady_phases ph;

	(void)state;
	/* two warm-up iterations (compilation), 35 steady ones within 3 %, a
	 * slow tail of 3 */
	d[0] = 900 * MS;
	d[1] = 60 * MS;
	for (int i = 2; i < 37; i++)
		d[i] = 12 * MS + (uint64_t)(i % 5) * 80 * US;
	d[37] = d[38] = d[39] = 30 * MS;
	times(d, 40, s, e);
	assert_int_equal(steady__phases(s, e, 40, &ph), 0);
	assert_true(ph.found);
	assert_int_equal(ph.first, 2);
	assert_int_equal(ph.last, 36);
	assert_int_equal(ph.start_ts, s[2]);
	assert_int_equal(ph.end_ts, e[36]);
	assert_int_equal(ph.median_ns, 12 * MS + 160 * US);
	/* one outlier inside (a checkpoint) does not split it */
	d[20] = 200 * MS;
	times(d, 40, s, e);
	assert_int_equal(steady__phases(s, e, 40, &ph), 0);
	assert_true(ph.found);
	assert_int_equal(ph.first, 2);
	assert_int_equal(ph.last, 36);
	assert_int_equal(ph.in_band, 34);
	/* times that keep growing: no level holds */
	for (int i = 0; i < 40; i++)
		d[i] = MS << (i / 4);
	times(d, 40, s, e);
	assert_int_equal(steady__phases(s, e, 40, &ph), 0);
	assert_false(ph.found);
	/* too few */
	assert_int_equal(steady__phases(s, e, 2, &ph), 0);
	assert_false(ph.found);
}

static void t_ranges(void **state)
{
	uint64_t s[10], e[10];

	(void)state;
	/* steps: each range covers its step */
	for (int i = 0; i < 10; i++) {
		s[i] = 1000 * MS + (uint64_t)i * 12 * MS;
		e[i] = s[i] + 11 * MS;
	}
	assert_true(steady__ranges_are_iterations("step N", s, e, 10));
	/* a library's name */
	assert_false(steady__ranges_are_iterations("cub::DeviceRadixSort::SortPairs", s, e, 10));
	/* a sliver of each step */
	for (int i = 0; i < 10; i++)
		e[i] = s[i] + 200 * US;
	assert_false(steady__ranges_are_iterations("sort N", s, e, 10));
}

/* ---- the scan over call streams ---- */

struct cs {
	struct steady_scan *s;
	uint64_t t;
	uint32_t pid;
};

static void launch(struct cs *c, const char *kernel, uint64_t cpu)
{
	struct gt_callrec r = { .ts = c->t, .pid = c->pid, .tid = c->pid, .api = GT_API_cuLaunchKernel,
				.type = GT_T_LAUNCH, .kernel = kernel };

	assert_int_equal(steady_scan__call(c->s, &r), 0);
	c->t += cpu;
}

static void graph(struct cs *c, uint64_t exec, uint64_t cpu)
{
	struct gt_callrec r = { .ts = c->t, .pid = c->pid, .tid = c->pid, .api = GT_API_cuGraphLaunch,
				.type = GT_T_LAUNCH, .graph = true, .handle = exec, .kernel = "" };

	assert_int_equal(steady_scan__call(c->s, &r), 0);
	c->t += cpu;
}

static void sync_for(struct cs *c, uint64_t wait)
{
	struct gt_callrec r = { .ts = c->t, .dur = wait, .has_exit = true, .pid = c->pid,
				.tid = c->pid, .api = GT_API_cuCtxSynchronize, .type = GT_T_SYNC };

	assert_int_equal(steady_scan__call(c->s, &r), 0);
	c->t += wait;
}

static const char *const mlp[] = { "gemm_a", "bias", "relu", "gemm_b", "bias", "gemm_c" };

/* 10 eager MLP steps of 24 launches and a context synchronize per
 * iteration, after a start-up of other launches; 30 iterations. */
static void eager(struct cs *c)
{
	for (int i = 0; i < 50; i++)
		launch(c, i % 2 ? "fill" : "copy_init", 5 * US);
	for (int it = 0; it < 30; it++) {
		for (int st = 0; st < 10; st++)
			for (int l = 0; l < 24; l++)
				launch(c, mlp[l % 6], 4 * US);
		sync_for(c, 3 * MS);
	}
}

static void t_scan_eager_graph(void **state)
{
	struct cs a = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 10 };
	struct cs b = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 20 };
	const struct steady_series *x, *y;

	(void)state;
	eager(&a);
	for (int i = 0; i < 50; i++)
		launch(&b, "fill", 5 * US);
	for (int it = 0; it < 30; it++) {
		for (int st = 0; st < 10; st++)
			graph(&b, 0xabc, 3 * US);
		sync_for(&b, 1 * MS);
	}
	assert_int_equal(steady_scan__finish(a.s), 0);
	assert_int_equal(steady_scan__finish(b.s), 0);
	x = steady_scan__best(a.s, 10, 0, NULL, NULL);
	y = steady_scan__best(b.s, 20, 0, NULL, NULL);
	assert_non_null(x);
	assert_non_null(y);
	/* both: the synchronize closes each iteration */
	assert_int_equal(x->kind, STEADY_SYNC);
	assert_int_equal(y->kind, STEADY_SYNC);
	assert_string_equal(x->what, "cuCtxSynchronize");
	assert_int_equal(x->k, 1);
	assert_int_equal(x->n, 29);	/* from one synchronize's end to the next */
	assert_int_equal(y->n, 29);
	assert_int_equal(x->tokens, 241);
	assert_int_equal(y->tokens, 11);
	assert_int_equal(x->end[0] - x->start[0], 240 * 4 * US + 3 * MS);
	assert_int_equal(y->end[0] - y->start[0], 10 * 3 * US + 1 * MS);
	assert_null(steady_scan__best(a.s, 20, 0, NULL, NULL));
	steady_scan__free(a.s);
	steady_scan__free(b.s);
}

/* 20 launches of one kernel, a synchronize, host work: the iteration holds
 * the host work, not one launch */
static void t_scan_host_work(void **state)
{
	struct cs a = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 10 };
	const struct steady_series *x;

	(void)state;
	for (int it = 0; it < 12; it++) {
		for (int l = 0; l < 20; l++)
			launch(&a, "k", 5 * US);
		sync_for(&a, 2 * MS);
		a.t += 30 * MS;
	}
	assert_int_equal(steady_scan__finish(a.s), 0);
	x = steady_scan__best(a.s, 10, 0, NULL, NULL);
	assert_non_null(x);
	assert_int_equal(x->kind, STEADY_SYNC);
	assert_int_equal(x->n, 11);
	assert_int_equal(x->end[3] - x->start[3], 30 * MS + 100 * US + 2 * MS);
	steady_scan__free(a.s);
}

/* GEMMs back to back after a slow start: no synchronize repeats, the
 * kernel's launches cut the iterations; the phases leave the first out */
static void t_scan_gemm_loop(void **state)
{
	struct cs a = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 10 };
	const struct steady_series *x;
	struct steady_phases ph;

	(void)state;
	launch(&a, "init", 10 * US);
	launch(&a, "gemm", 84 * MS);	/* library loading inside the first call */
	for (int i = 0; i < 40; i++)
		launch(&a, "gemm", 1600 * US);
	sync_for(&a, 2 * MS);
	assert_int_equal(steady_scan__finish(a.s), 0);
	x = steady_scan__best(a.s, 10, 0, NULL, NULL);
	assert_non_null(x);
	assert_int_equal(x->kind, STEADY_LAUNCH);
	assert_string_equal(x->what, "gemm");
	assert_int_equal(x->n, 40);
	assert_int_equal(steady__phases(x->start, x->end, x->n, &ph), 0);
	assert_true(ph.found);
	assert_int_equal(ph.first, 1);
	assert_int_equal(ph.median_ns, 1600 * US);
	steady_scan__free(a.s);
}

/* A training step without a synchronize: a kernel 40 times, another 5
 * times, the optimizer's once, 12 ms a step; the iterations are the steps
 * (from a once-a-step kernel, or a period of 5 of the other), never a
 * fraction of one */
static void t_scan_async_steps(void **state)
{
	struct cs a = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 10 };
	const struct steady_series *x;

	(void)state;
	for (int i = 0; i < 30; i++)
		launch(&a, "init", 10 * US);
	/* a model's parameters put on the GPU one by one, each synchronized:
	 * a synchronize that recurs, in start-up only */
	for (int i = 0; i < 40; i++) {
		launch(&a, "copy_param", 50 * US);
		sync_for(&a, 200 * US);
	}
	for (int st = 0; st < 50; st++) {
		for (int l = 0; l < 40; l++)
			launch(&a, l % 8 ? "gemm" : "norm", 200 * US);
		for (int l = 0; l < 5; l++)
			launch(&a, "softmax", 300 * US);
		launch(&a, "adam", 500 * US);
	}
	assert_int_equal(steady_scan__finish(a.s), 0);
	x = steady_scan__best(a.s, 10, 0, NULL, NULL);
	assert_non_null(x);
	/* the steps outweigh the start-up's synchronizes many times */
	assert_int_equal(x->kind, STEADY_LAUNCH);
	assert_true(x->n >= 48 && x->n <= 49);
	/* asked for synchronizations only, those are there */
	assert_int_equal(steady_scan__best(a.s, 10, 1u << STEADY_SYNC, NULL, NULL)->kind, STEADY_SYNC);
	assert_int_equal(x->end[10] - x->start[10], 40 * 200 * US + 5 * 300 * US + 500 * US);
	steady_scan__free(a.s);
}

/* A boundary that recurs 40,000 times: kept in groups (memory bounded),
 * the run still found, its iterations groups of 4 of the steps */
static void t_scan_folded(void **state)
{
	struct cs a = { .s = steady_scan__new(), .t = 1000 * MS, .pid = 10 };
	const struct steady_series *x;

	(void)state;
	for (int st = 0; st < 40000; st++) {
		launch(&a, "a", 3 * US);
		launch(&a, st % 3 ? "b" : "c", 2 * US);
		sync_for(&a, 5 * US);
	}
	assert_int_equal(steady_scan__finish(a.s), 0);
	x = steady_scan__best(a.s, 10, 1u << STEADY_SYNC, NULL, NULL);
	assert_non_null(x);
	assert_int_equal(x->group, 4);
	assert_int_equal(x->k, 3);		/* b, b, c: three groups of 4 steps repeat */
	assert_true(x->n * x->k * x->group >= 39000 && x->n * x->k * x->group <= 40000);
	assert_int_equal(x->end[5] - x->start[5], 3 * 4 * 10 * US);
	steady_scan__free(a.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sig_period),
		cmocka_unit_test(t_phases),
		cmocka_unit_test(t_ranges),
		cmocka_unit_test(t_scan_eager_graph),
		cmocka_unit_test(t_scan_host_work),
		cmocka_unit_test(t_scan_gemm_loop),
		cmocka_unit_test(t_scan_async_steps),
		cmocka_unit_test(t_scan_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
