// SPDX-License-Identifier: MIT
/*
 * Unit tests of the overhead estimate's arithmetic (user/daemon/budget/budget_est.c):
 * an interval's estimate is probe / (interval - probe); a probe time past
 * the interval is held where the estimate is BUDGET_EST_MAX, and the
 * estimate grows with the probe time up to there; the mean is the
 * time-weighted one and lies between the lowest and the highest interval's
 * estimate, also with intervals past the hold among them (the daemon's
 * status once said a mean of 802 % beside a max of 175 %).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "daemon/budget/budget_est.h"

#define L 5e9	/* a 5 s interval, ns */

static void test_interval(void **state)
{
	struct budget_est e = { 0 };
	double p;

	(void)state;
	assert_true(fabs(budget_est__add(&e, 0.04 * L, L, &p) - 0.04 / 0.96) < 1e-12);
	assert_true(p == 0.04 * L);
	assert_true(fabs(budget_est__add(&e, 0.5 * L, L, &p) - 1) < 1e-12);
	/* the hold: where the estimate is BUDGET_EST_MAX */
	assert_true(fabs(budget_est__add(&e, 2 * L, L, &p) - BUDGET_EST_MAX) < 1e-6);
	assert_true(p < L);
	assert_true(fabs(p / (L - p) - BUDGET_EST_MAX) < 1e-6);
	assert_true(fabs(budget_est__add(&e, L, L, &p) - BUDGET_EST_MAX) < 1e-6);
	/* no interval, no probe time */
	assert_true(budget_est__add(&e, 0, 0, &p) == 0);
	assert_true(budget_est__add(&e, -5, L, &p) == 0 && p == 0);
	assert_int_equal(e.n, 6);
}

/* The estimate never goes down as the probe time goes up (it once fell
 * from 900 % to 100 % past the interval). */
static void test_monotonic(void **state)
{
	struct budget_est e = { 0 };
	double p, prev = -1;

	(void)state;
	for (double f = 0; f <= 3; f += 0.001) {
		double est = budget_est__add(&e, f * L, L, &p);

		assert_true(est >= prev);
		assert_true(est <= BUDGET_EST_MAX * (1 + 1e-12));
		prev = est;
	}
}

/* Mean between the lowest and the highest estimate whatever the intervals:
 * short and long, under and past the hold, in any order. */
static void test_mean_within(void **state)
{
	static const double cases[][2] = {	/* probe, interval: the daemon's of the issue */
		{ 0.636 * L, L }, { 1.3 * L, L }, { 0.2 * L, L }, { 1.1 * L, 0.2 * L },
		{ 0.0001 * L, 3 * L }, { 0.9 * L, L }, { 7 * L, L }, { 0.01 * L, 10 * L },
	};
	struct budget_est e = { 0 };
	double lo = INFINITY, hi = 0, p;
	uint64_t seed = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double est = budget_est__add(&e, cases[i][0], cases[i][1], &p);

		lo = est < lo ? est : lo;
		hi = est > hi ? est : hi;
		assert_true(e.max == hi);
		assert_true(e.mean <= e.max);
		assert_true(e.mean >= lo * (1 - 1e-12));
	}
	/* and 10000 random intervals */
	for (int i = 0; i < 10000; i++) {
		double iv, pr, est;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		iv = 1e6 + (double)(seed >> 40) * 1e3;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		pr = iv * (double)(seed >> 40) / (double)(1ull << 23);	/* 0 .. 2 intervals */
		est = budget_est__add(&e, pr, iv, &p);
		lo = est < lo ? est : lo;
		hi = est > hi ? est : hi;
		assert_true(e.mean <= e.max && e.max == hi);
		assert_true(e.mean >= lo * (1 - 1e-12));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_mean_within),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
