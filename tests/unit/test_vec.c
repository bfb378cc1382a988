// SPDX-License-Identifier: MIT
/*
 * The growable-array helper (user/lib/vec.h) behind the readers' hand-grown
 * arrays: how the capacity grows, and that a request that cannot be met
 * leaves the array as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/vec.h"

static void test_first_room_is_min_then_doubles(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 1, 64), 0);
	assert_non_null(v);
	assert_int_equal(cap, 64);
	for (size_t i = 0; i < 64; i++)
		v[i] = i;
	/* room left: nothing moves */
	assert_int_equal(vec__reserve(&v, &cap, 63, 1, 64), 0);
	assert_int_equal(cap, 64);
	assert_int_equal(vec__reserve(&v, &cap, 64, 1, 64), 0);
	assert_int_equal(cap, 128);
	/* the elements survive the move */
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(v[i], i);
	free(v);
}

static void test_doubles_until_a_large_request_fits(void **state)
{
	char *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 16, 64), 0);
	assert_int_equal(cap, 64);
	assert_int_equal(vec__reserve(&v, &cap, 60, 900, 64), 0);
	assert_int_equal(cap, 1024);
	free(v);
}

static void test_len_beyond_cap_is_an_index_to_reach(void **state)
{
	uint32_t *v = NULL;
	uint32_t cap = 0;

	(void)state;
	/* room for index 200 of an array indexed like another table */
	assert_int_equal(vec__reserve(&v, &cap, 200, 1, 64), 0);
	assert_int_equal(cap, 256);
	v[200] = 1;
	free(v);
}

static void test_min_zero_starts_at_one(void **state)
{
	int *v = NULL;
	uint32_t cap = 0;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 1, 0), 0);
	assert_int_equal(cap, 1);
	free(v);
}

static void test_capacity_type_overflow_is_refused_unchanged(void **state)
{
	uint8_t *v = NULL;
	uint32_t cap = 0, before;
	uint8_t *p;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 8, 8), 0);
	p = v;
	before = cap;
	memset(v, 7, cap);
	/* len + n past UINT32_MAX cannot be a uint32_t capacity */
	assert_int_equal(vec__reserve(&v, &cap, UINT32_MAX - 2, 3, 8), -ENOMEM);
	assert_ptr_equal(v, p);
	assert_int_equal(cap, before);
	assert_int_equal(v[7], 7);
	free(v);
}

static void test_byte_size_overflow_is_refused_unchanged(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	uint64_t *p;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 4, 4), 0);
	p = v;
	v[3] = 42;
	/* elements of 8 bytes: SIZE_MAX / 4 of them do not fit in an object */
	assert_int_equal(vec__reserve(&v, &cap, 4, SIZE_MAX / 4, 4), -ENOMEM);
	assert_ptr_equal(v, p);
	assert_int_equal(cap, 4);
	/* len + n overflowing size_t itself */
	assert_int_equal(vec__reserve(&v, &cap, 4, SIZE_MAX, 4), -ENOMEM);
	assert_ptr_equal(v, p);
	assert_int_equal(cap, 4);
	assert_int_equal(v[3], 42);
	free(v);
}

static void test_failed_allocation_leaves_array_intact(void **state)
{
	char *v = NULL;
	size_t cap = 0;
	char *p;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 5, 8), 0);
	memcpy(v, "kept", 5);
	p = v;
	/* 2^60 bytes: a valid size, but more than any allocator gives */
	assert_int_equal(vec__reserve(&v, &cap, 5, (SIZE_MAX >> 4) - 5, 8), -ENOMEM);
	assert_ptr_equal(v, p);
	assert_int_equal(cap, 8);
	assert_string_equal(v, "kept");
	free(v);
}

static void test_grow_with_own_element_size(void **state)
{
	void *v = NULL;
	size_t cap = 0;

	(void)state;
	/* rows of 3 doubles: the element is the row */
	assert_int_equal(vec__grow(&v, &cap, 0, 1, 3 * sizeof(double), 16, SIZE_MAX), 0);
	assert_int_equal(cap, 16);
	((double *)v)[16 * 3 - 1] = 1.0;
	assert_int_equal(vec__grow(&v, &cap, 16, 1, 3 * sizeof(double), 16, SIZE_MAX), 0);
	assert_int_equal(cap, 32);
	assert_true(((double *)v)[16 * 3 - 1] == 1.0);
	free(v);
}

static void test_shrink_to_len_keeps_contents(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec__reserve(&v, &cap, 0, 100, 64), 0);
	assert_int_equal(cap, 128);
	for (uint32_t i = 0; i < 100; i++)
		v[i] = i * 7;
	vec__shrink(&v, &cap, 100);
	assert_int_equal(cap, 100);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(v[i], i * 7);
	/* an empty or already tight array is left alone */
	vec__shrink(&v, &cap, 0);
	assert_int_equal(cap, 100);
	vec__shrink(&v, &cap, 100);
	assert_int_equal(cap, 100);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_room_is_min_then_doubles),
		cmocka_unit_test(test_doubles_until_a_large_request_fits),
		cmocka_unit_test(test_len_beyond_cap_is_an_index_to_reach),
		cmocka_unit_test(test_min_zero_starts_at_one),
		cmocka_unit_test(test_capacity_type_overflow_is_refused_unchanged),
		cmocka_unit_test(test_byte_size_overflow_is_refused_unchanged),
		cmocka_unit_test(test_failed_allocation_leaves_array_intact),
		cmocka_unit_test(test_grow_with_own_element_size),
		cmocka_unit_test(test_shrink_to_len_keeps_contents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
