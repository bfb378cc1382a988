// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU clock's fit (user/merge/gpu_clock.c) through the
 * merger's linking core (merge__link): jobs whose GPU clock drifts from the
 * host's, on an idle, a busy, a shared and a time-sliced GPU, linked by order
 * and by API records; the links, the records moved and the counters.  No
 * root, no GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "merge/link.h"
#include "merge_fixtures.h"

/* ------------------------------------------------------------ GPU clock drift */

/* N launches every 150 us for 3 s on one thread, three shapes in turn,
 * each kernel starting 5 us + (i % 4) us after its launch's entry on the
 * host's clock; its GPU timestamp drifting by ppm (negative: the GPU's
 * clock falls behind). busy 1: the GPU's queue full half the time (delays
 * up to 400 us in those stretches); 2: the GPU shared with another job,
 * busy through four stretches of 22.5 ms in five (every kernel there
 * waiting 50 us to 2.35 ms, never at the launch latency); 3: launches every
 * 40 us into a queue kept full but after every 150th; the API records of
 * the calls. */
#define DRIFT_N 20000

/* busy 2: launch i's wait behind the other job's work, 50 us to 2.35 ms,
 * how long varying from one stretch to the next (time slices) and within it */
static uint64_t shared_wait(int i)
{
	unsigned s = (unsigned)i / 150u;

	return 50 * US + (uint64_t)((s * 2654435761u) % 2000u) * US + (uint64_t)(((unsigned)i * 7919u) % 300u) * US;
}

/* busy 3: launches every 40 us into a queue that holds 100 us to 1.9 ms of
 * work (how much varying from one 20 ms stretch to the next and within it),
 * but for every 150th (after a synchronization): 3 or 4 kernels a stretch
 * that start at once, fewer than its 1st percentile */
static uint64_t queued_wait(int i)
{
	unsigned s = (unsigned)i / 500u;

	return 100 * US + (uint64_t)((s * 2246822519u) % 1500u) * US +
	       (uint64_t)(((unsigned)i * 2654435761u) % 300u) * US;
}

/* busy 4: launches every 40 us on a GPU time-sliced with another job: 149
 * in 150 wait 100 us to 1.9 ms (as in busy 3), the rest start at once, but
 * "at once" varies: 0 to 4 us more from one 20 ms stretch to the next (the
 * context switch it met) and 0 to 2 us within it. The floors scatter by
 * microseconds around the drift. */
static uint64_t sliced_wait(int i)
{
	unsigned s = (unsigned)i / 500u;

	if (i % 150)
		return queued_wait(i);
	return (uint64_t)((s * 2246822519u) % 41u) * 100 + (uint64_t)(((unsigned)i * 2654435761u) % 21u) * 100;
}

/* What launch i waits behind other work in drift_job's busy mode. */
static uint64_t busy_wait(int i, int busy)
{
	if (busy == 4)
		return sliced_wait(i);
	if (busy == 1 && (i / 2000) % 2)
		return (uint64_t)((i % 2000) * 200);
	if (busy == 2 && (i / 150) % 5)
		return shared_wait(i);
	if (busy == 3 && i % 150)
		return queued_wait(i);
	return 0;
}

static void drift_job(struct merge_call *c, struct merge_api *a, struct merge_gpu *g, double ppm, int busy)
{
	for (int i = 0; i < DRIFT_N; i++) {
		uint64_t e = T0 + (uint64_t)i * (busy >= 3 ? 40 : 150) * US, d = 5 * US + (uint64_t)(i % 4) * US;
		int64_t drift = (int64_t)(ppm * 1e-6 * (double)(e - T0));

		d += busy_wait(i, busy);
		c[i] = call_x(e, e + 3 * US, TID, MERGE_CALL_LAUNCH);
		c[i].shape = 1 + (uint64_t)(i % 3);
		a[i] = api(100 + (uint32_t)i, TID, e + 300, 2 * US);
		g[i] = gpu_rec(GT_REC_GPU_KERNEL, 100 + (uint32_t)i, (uint64_t)((int64_t)(e + d) + drift));
		g[i].shape = c[i].shape;
	}
}

struct drift_case {
	struct merge_call c[DRIFT_N];
	struct merge_api a[DRIFT_N];
	struct merge_gpu g[DRIFT_N];
};

/* k's job made (drift_job) and linked, by order or, with api, by its API
 * records too. */
static void drift_link(struct drift_case *k, double ppm, int busy, bool api, struct merge_link_stats *st)
{
	drift_job(k->c, k->a, k->g, ppm, busy);
	link_ok(k->c, DRIFT_N, api ? k->a : NULL, api ? DRIFT_N : 0, k->g, DRIFT_N, st);
}

/* Linked by order, the GPU clock 7 us a second behind (as a CuPy job on the
 * H200): without the fit, its kernels begin before their launches beyond the
 * 2 us tolerance after 0.4 s and order linking loses them; with it, every
 * kernel linked to its own launch, none before it, each moved back to within
 * a microsecond of its true start, flagged, the drift said. */
static void t_clock_drift_order(void **state)
{
	struct drift_case *k = calloc(1, sizeof(*k));
	struct merge_link_stats st;
	uint64_t worst = 0;

	(void)state;
	assert_non_null(k);
	drift_link(k, -7.0, 0, false, &st);
	assert_int_equal(st.linked, DRIFT_N);
	assert_int_equal(st.by_order, DRIFT_N);
	assert_int_equal(st.causality, 0);
	assert_int_equal(st.clock_fixed, 1);
	assert_int_equal(st.clock_busy, 0);
	assert_int_equal(st.clock_pid, PID);
	assert_true(st.clock_rate < -6.98e-6 && st.clock_rate > -7.02e-6);
	for (int i = 0; i < DRIFT_N; i++) {
		uint64_t truth = k->c[i].entry + 5 * US + (uint64_t)(i % 4) * US;
		uint64_t off = k->g[i].ts > truth ? k->g[i].ts - truth : truth - k->g[i].ts;

		assert_int_equal(k->g[i].call, i);
		assert_true(k->g[i].flags & GT_GPU_CLOCK_FIXED);
		worst = off > worst ? off : worst;
	}
	assert_true(worst < 1 * US);
	free(k);
}

/* The drift (ppm) on a GPU busy most of the time (busy 2, 3 or 4): every
 * kernel still linked to its own launch, none before it, each moved and
 * within max_off of its true start, the drift found to within max_ppm and
 * said to come from a busy GPU's few quick starts. */
static void busy_drift(int busy, double ppm, double max_ppm, uint64_t max_off)
{
	struct drift_case *k = calloc(1, sizeof(*k));
	struct merge_link_stats st;
	uint64_t worst = 0;

	assert_non_null(k);
	drift_link(k, ppm, busy, false, &st);
	assert_int_equal(st.linked, DRIFT_N);
	assert_int_equal(st.causality, 0);
	assert_int_equal(st.clock_fixed, 1);
	assert_int_equal(st.clock_busy, 1);
	assert_int_equal(st.clock_scattered, busy == 4);
	assert_true(st.clock_rate < (ppm + max_ppm) * 1e-6 && st.clock_rate > (ppm - max_ppm) * 1e-6);
	for (int i = 0; i < DRIFT_N; i++) {
		uint64_t truth = k->c[i].entry + 5 * US + (uint64_t)(i % 4) * US + busy_wait(i, busy);
		uint64_t off = k->g[i].ts > truth ? k->g[i].ts - truth : truth - k->g[i].ts;

		assert_int_equal(k->g[i].call, i);
		assert_true(k->g[i].flags & GT_GPU_CLOCK_FIXED);
		worst = off > worst ? off : worst;
	}
	assert_true(worst < max_off);
	free(k);
}

/* The drift on a GPU another job keeps busy four fifths of the time: the
 * floors of most stretches lie far above the launch latency, the line is
 * their lower envelope's. Without the envelope the drift was not taken out
 * (the median line ran through the busy stretches) and order linking lost
 * the kernels that start at once. */
static void t_clock_drift_shared(void **state)
{
	(void)state;
	busy_drift(2, -7.0, 0.1, 1 * US);
}

/* The drift in a job whose queue stays full (the GPU behind its launches, as
 * when another job shares it): 1 kernel in 150 starts at once, 3 or 4 in a
 * stretch, fewer than the 1st percentile of its 500 delays; the stretches'
 * second-least delays set the line. Without them nothing was fitted and the
 * kernels that start at once went unlinked after 0.3 s. */
static void t_clock_drift_queued(void **state)
{
	(void)state;
	busy_drift(3, -7.0, 0.2, 1 * US);
}

/* The drift on a GPU time-sliced with another job (what the H100 and the
 * H200 showed with a twin job beside an attached one): 3 or 4 quick starts a
 * stretch whose latency itself scatters by 6 us, so that no line holds the
 * floors within half a microsecond and the envelope's edge tilts with the
 * stretches that switched quickly. The GPU clock 10 us a second behind (8 us
 * over the recording): every kernel linked to its own launch, none before
 * it, each within 4 us of its true start (the floors' low quantile, moved
 * onto the lowest). Before, nothing was fitted: kernels began up to 3 us
 * before their launches, and on the GPU order linking lost them. */
static void t_clock_drift_sliced(void **state)
{
	(void)state;
	busy_drift(4, -10.0, 4.0, 4 * US);
}

/* The same scattered floors with the GPU clock ahead (floors rising): the
 * low quantile's line stays above zero, so the records are left where CUPTI
 * put them (a scattered line's slope is not exact enough to move them for
 * its own sake), every kernel linked; t_clock_steady holds them without a
 * drift. */
static void t_clock_sliced_ahead(void **state)
{
	struct drift_case *k = calloc(1, sizeof(*k));
	struct merge_link_stats st;

	(void)state;
	assert_non_null(k);
	drift_link(k, 5.0, 4, false, &st);
	assert_int_equal(st.linked, DRIFT_N);
	assert_int_equal(st.causality, 0);
	assert_int_equal(st.clock_fixed, 0);
	for (int i = 0; i < DRIFT_N; i++) {
		assert_int_equal(k->g[i].call, i);
		assert_false(k->g[i].flags & GT_GPU_CLOCK_FIXED);
	}
	free(k);
}

/* With API records every kernel links whatever the clock; the fit moves the
 * GPU records back all the same, and no link is a causality violation. */
static void t_clock_drift_api(void **state)
{
	struct drift_case *k = calloc(1, sizeof(*k));
	struct merge_link_stats st;

	(void)state;
	assert_non_null(k);
	drift_link(k, -7.0, 0, true, &st);
	assert_int_equal(st.linked, DRIFT_N);
	assert_int_equal(st.by_order, 0);
	assert_int_equal(st.causality, 0);
	assert_int_equal(st.clock_fixed, 1);
	for (int i = 0; i < DRIFT_N; i++) {
		assert_int_equal(k->g[i].call, i);
		assert_true(k->g[i].ts >= k->c[i].entry + 4 * US && k->g[i].ts <= k->c[i].entry + 9 * US);
	}
	free(k);
}

/* No drift: nothing moved, nothing flagged; a GPU busy half the time, or
 * four fifths of it (its delays far above the launch latency then), or
 * time-sliced (its quick starts scattered), is not taken for a drift. */
static void t_clock_steady(void **state)
{
	struct drift_case *k = calloc(1, sizeof(*k));
	struct merge_link_stats st;

	(void)state;
	assert_non_null(k);
	for (int busy = 0; busy < 5; busy++) {
		drift_link(k, 0, busy, false, &st);
		assert_int_equal(st.linked, DRIFT_N);
		assert_int_equal(st.clock_fixed, 0);
		for (int i = 0; i < DRIFT_N; i++)
			assert_false(k->g[i].flags & GT_GPU_CLOCK_FIXED);
		assert_int_equal(k->g[DRIFT_N - 1].ts, k->c[DRIFT_N - 1].entry + 5 * US + 3 * US +
				 busy_wait(DRIFT_N - 1, busy));
	}
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_clock_drift_order),
		cmocka_unit_test(t_clock_drift_shared),
		cmocka_unit_test(t_clock_drift_queued),
		cmocka_unit_test(t_clock_drift_sliced),
		cmocka_unit_test(t_clock_sliced_ahead),
		cmocka_unit_test(t_clock_drift_api),
		cmocka_unit_test(t_clock_steady),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
