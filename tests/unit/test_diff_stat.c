// SPDX-License-Identifier: MIT
/*
 * The statistics of `gtrace-bpf diff` (diff/diff_stat.c): exact medians,
 * moments padded with the iterations a name was not in, the bootstrap interval of a ratio of medians (its
 * determinism, and that it covers a known ratio about as often as a 95 %
 * interval should), and the classification of rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "diff/diff_stat.h"

/* A fixed generator for the test data (not the one under test). */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void test_median(void **state)
{
	uint64_t odd[] = { 9, 1, 7, 3, 5 }, even[] = { 40, 10, 30, 20 }, one[] = { 42 };

	(void)state;
	assert_true(diff_stat__median(odd, 5) == 5.0);
	assert_true(diff_stat__median(even, 4) == 25.0);
	assert_true(diff_stat__median(one, 1) == 42.0);
	assert_true(diff_stat__median(NULL, 0) == 0.0);
}

static void test_moments_pad(void **state)
{
	struct diff_moments m = { 0 };
	double var;

	(void)state;
	/* 4, 8 in two of five iterations: values 4 8 0 0 0, mean 2.4,
	 * squared deviations 2.56 + 31.36 + 3 * 5.76 = 51.2, variance 12.8 */
	diff_moments__add(&m, 4);
	diff_moments__add(&m, 8);
	diff_moments__pad(&m, 5);
	assert_int_equal(m.n, 5);
	assert_true(m.mean > 2.4 - 1e-12 && m.mean < 2.4 + 1e-12);
	var = diff_moments__var(&m);
	assert_true(var > 12.8 - 1e-9 && var < 12.8 + 1e-9);
	/* padding to fewer changes nothing */
	diff_moments__pad(&m, 3);
	assert_int_equal(m.n, 5);
	m = (struct diff_moments){ 0 };
	diff_moments__pad(&m, 4);
	assert_true(m.mean == 0 && diff_moments__var(&m) == 0);
}

static void test_ratio_basics(void **state)
{
	uint64_t a[] = { 2000, 2200, 1800, 2100, 1900, 2000, 2300 };
	uint64_t b[] = { 1000, 1100, 900, 1050, 950, 1000, 1150 };
	struct diff_ratio r, r2;

	(void)state;
	assert_int_equal(diff_stat__ratio(a, 7, b, 7, DIFF_RESAMPLES, DIFF_SEED, &r), 0);
	assert_true(r.valid && r.interval);
	assert_true(r.point == 2.0);
	assert_true(r.base_ns == 2000.0 && r.opt_ns == 1000.0);
	assert_true(r.lo <= 2.0 && r.hi >= 2.0 && r.lo < r.hi);
	assert_true(r.lo > 1.5 && r.hi < 2.7);
	/* the same inputs and seed: the same interval */
	assert_int_equal(diff_stat__ratio(a, 7, b, 7, DIFF_RESAMPLES, DIFF_SEED, &r2), 0);
	assert_true(r2.lo == r.lo && r2.hi == r.hi);
	/* identical sides: 1, and an interval around it */
	assert_int_equal(diff_stat__ratio(a, 7, a, 7, DIFF_RESAMPLES, DIFF_SEED, &r), 0);
	assert_true(r.point == 1.0 && r.lo <= 1.0 && r.hi >= 1.0);
	/* one value a side: the ratio, no interval */
	assert_int_equal(diff_stat__ratio(a, 1, b, 1, DIFF_RESAMPLES, DIFF_SEED, &r), 0);
	assert_true(r.valid && !r.interval && r.point == 2.0);
	/* nothing, or a zero median: no ratio */
	assert_int_equal(diff_stat__ratio(a, 0, b, 7, DIFF_RESAMPLES, DIFF_SEED, &r), 0);
	assert_false(r.valid);
	{
		uint64_t z[] = { 0, 0, 0 };

		assert_int_equal(diff_stat__ratio(a, 7, z, 3, DIFF_RESAMPLES, DIFF_SEED, &r), 0);
		assert_false(r.valid);
	}
}

/* 200 pairs of samples drawn around a ratio of 1.5: the interval contains
 * 1.5 in about 95 % of them (binomial: below 88 % or at 100 % would say the
 * interval is too narrow or too wide). */
static void test_ratio_coverage(void **state)
{
	uint64_t seed = 12345, a[41], b[41];
	int hits = 0, rounds = 200;

	(void)state;
	for (int k = 0; k < rounds; k++) {
		struct diff_ratio r;
		size_t na = 15 + (size_t)(lcg(&seed) % 27), nb = 15 + (size_t)(lcg(&seed) % 27);

		/* a symmetric spread about the medians 15000 and 10000: +-20 % */
		for (size_t i = 0; i < na; i++)
			a[i] = 12000 + lcg(&seed) % 6001;
		for (size_t i = 0; i < nb; i++)
			b[i] = 8000 + lcg(&seed) % 4001;
		assert_int_equal(diff_stat__ratio(a, na, b, nb, DIFF_RESAMPLES, DIFF_SEED + (uint64_t)k, &r), 0);
		assert_true(r.interval);
		hits += r.lo <= 1.5 && 1.5 <= r.hi;
	}
	fprintf(stderr, "coverage of 1.5: %d of %d intervals\n", hits, rounds);
	assert_true(hits >= rounds * 88 / 100);
	assert_true(hits < rounds);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* the median of n values drawn with replacement from v, drawn one by one */
static double brute_median(const uint64_t *v, size_t n, uint64_t *tmp, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[lcg(seed) % n];
	qsort(tmp, n, sizeof(*tmp), cmp_u64);
	return n % 2 ? (double)tmp[n / 2] : ((double)tmp[n / 2 - 1] + (double)tmp[n / 2]) / 2.0;
}

/* Many iterations (5001 against 4000, odd and even: diff_stat.c draws each
 * resample's median from its distribution above 2048): the interval is the
 * one of the bootstrap done draw by draw, here with its own generator, to
 * within the Monte Carlo noise of 2000 resamples (0.2 % of the ratio); and
 * it covers a known ratio about 95 % of the time. */
static void test_ratio_many(void **state)
{
	enum { NA = 5001, NB = 4000, R = 2000 };
	uint64_t seed = 777, *a = malloc(NA * sizeof(*a)), *b = malloc(NB * sizeof(*b));
	uint64_t *tmp = malloc(NA * sizeof(*tmp));
	double *rat = malloc(R * sizeof(*rat));
	struct diff_ratio r;
	int hits = 0, rounds = 100;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(tmp);
	assert_non_null(rat);
	for (size_t i = 0; i < NA; i++)
		a[i] = 12000 + lcg(&seed) % 6001;
	for (size_t i = 0; i < NB; i++)
		b[i] = 8000 + lcg(&seed) % 4001;
	assert_int_equal(diff_stat__ratio(a, NA, b, NB, R, DIFF_SEED, &r), 0);
	assert_true(r.interval);
	for (int i = 0; i < R; i++)
		rat[i] = brute_median(a, NA, tmp, &seed) / brute_median(b, NB, tmp, &seed);
	qsort(rat, R, sizeof(*rat), cmp_dbl);
	fprintf(stderr, "many: [%.5f, %.5f] against drawn one by one [%.5f, %.5f]\n", r.lo, r.hi,
		rat[R * 25 / 1000 - 1], rat[R * 975 / 1000 - 1]);
	assert_true(r.lo < r.point && r.point < r.hi);
	assert_true(r.lo > rat[R * 25 / 1000 - 1] * 0.998 && r.lo < rat[R * 25 / 1000 - 1] * 1.002);
	assert_true(r.hi > rat[R * 975 / 1000 - 1] * 0.998 && r.hi < rat[R * 975 / 1000 - 1] * 1.002);
	for (int k = 0; k < rounds; k++) {
		for (size_t i = 0; i < 3000; i++)
			a[i] = 12000 + lcg(&seed) % 6001;
		for (size_t i = 0; i < 2500; i++)
			b[i] = 8000 + lcg(&seed) % 4001;
		assert_int_equal(diff_stat__ratio(a, 3000, b, 2500, R, DIFF_SEED + (uint64_t)k, &r), 0);
		hits += r.lo <= 1.5 && 1.5 <= r.hi;
	}
	fprintf(stderr, "many: coverage of 1.5: %d of %d intervals\n", hits, rounds);
	assert_true(hits >= rounds * 88 / 100);
	assert_true(hits < rounds);
	free(a);
	free(b);
	free(tmp);
	free(rat);
}

static void test_classify(void **state)
{
	struct diff_obs none = { 0 }, b = { .count = 10, .mean = 1000, .var = 10000, .units = 10 };
	struct diff_obs o = b;
	double noise;

	(void)state;
	assert_int_equal(diff_stat__classify(&none, &b, &noise), DIFF_ADDED);
	assert_int_equal(diff_stat__classify(&b, &none, &noise), DIFF_REMOVED);
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_UNCHANGED);
	/* noise: 1.96 * sqrt(10000 / 10 + 10000 / 10) = 1.96 * 44.72 = 87.65 */
	assert_true(noise > 87.6 && noise < 87.7);
	o.mean = 1080;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_UNCHANGED);
	o.mean = 1090;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_SLOWER);
	o.mean = 910;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_FASTER);
	/* no spread at all: under 1 % is still unchanged, over it is not */
	b.var = o.var = 0;
	o.mean = 1009;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_UNCHANGED);
	assert_true(noise == 10.0);
	o.mean = 1011;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_SLOWER);
	o.mean = 1000;
	assert_int_equal(diff_stat__classify(&b, &o, &noise), DIFF_UNCHANGED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_moments_pad),
		cmocka_unit_test(test_ratio_basics),
		cmocka_unit_test(test_ratio_coverage),
		cmocka_unit_test(test_ratio_many),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
