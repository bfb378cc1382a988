// SPDX-License-Identifier: MIT
/*
 * Unit tests of the log-linear histogram (user/lib/loghist.c): buckets of
 * width 1 below 64, at most 1/32 of their values wide above; medians and
 * percentiles exact for equal values and within a bucket otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "lib/loghist.h"

static void t_buckets(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 64; v++)
		assert_int_equal(loghist__bucket(v), v);
	assert_int_equal(loghist__bucket(64), 64);
	assert_int_equal(loghist__bucket(65), 64);	/* 64, 65 share a bucket */
	assert_int_equal(loghist__bucket(66), 65);
	assert_int_equal(loghist__bucket(UINT64_MAX), LOGHIST_BUCKETS - 1);
	/* monotone, and no bucket wider than 1/32 of its low end */
	for (uint64_t v = 64, prev = 63; v < (1ull << 40); v += v / 7 + 1) {
		unsigned b = loghist__bucket(v);

		assert_true(b >= loghist__bucket(prev));
		prev = v;
		assert_true(loghist__bucket(v + v / 32 + 1) > b);
	}
}

static void t_equal_values(void **state)
{
	struct loghist h = { 0 };

	(void)state;
	assert_int_equal(loghist__median(&h), 0);
	for (int i = 0; i < 1001; i++)
		assert_int_equal(loghist__add(&h, 2100), 0);
	assert_int_equal(h.n, 1001);
	assert_int_equal(h.sum, 1001 * 2100);
	assert_int_equal(loghist__median(&h), 2100);
	assert_int_equal(loghist__percentile(&h, 99), 2100);
	loghist__free(&h);
}

static void t_median(void **state)
{
	struct loghist h = { 0 };

	(void)state;
	/* small values are exact: 1..9, median 5; even count: mean of the middle two */
	for (uint64_t v = 1; v <= 9; v++)
		loghist__add(&h, v);
	assert_int_equal(loghist__median(&h), 5);
	loghist__add(&h, 10);
	assert_int_equal(loghist__median(&h), 5);	/* (5 + 6) / 2 */
	assert_int_equal(loghist__percentile(&h, 100), 10);
	assert_int_equal(loghist__percentile(&h, 10), 1);
	loghist__free(&h);
	/* larger ones within their bucket: 1000 x 1 ms and 10 x 1 s */
	for (int i = 0; i < 1000; i++)
		loghist__add(&h, 1000000 + (uint64_t)i);
	for (int i = 0; i < 10; i++)
		loghist__add(&h, 1000000000);
	assert_true(loghist__median(&h) >= 1000000 && loghist__median(&h) <= 1000999);
	assert_int_equal(loghist__percentile(&h, 100), 1000000000);
	assert_int_equal(h.max, 1000000000);
	assert_int_equal(h.min, 1000000);
	loghist__free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_buckets),
		cmocka_unit_test(t_equal_values),
		cmocka_unit_test(t_median),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
