// SPDX-License-Identifier: MIT
/* lib/cmp.h: comparators of several keys sort by the first key, then the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "lib/cmp.h"

struct rec {
	uint32_t pid;
	int64_t ts;	/* signed: negative values sort first */
	uint32_t id;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->ts, y->ts);
	return cmp__u64(x->id, y->id);
}

static void test_cmp_u64_is_three_way(void **state)
{
	(void)state;
	assert_int_equal(cmp__u64(1, 2), -1);
	assert_int_equal(cmp__u64(2, 1), 1);
	assert_int_equal(cmp__u64(7, 7), 0);
	assert_int_equal(cmp__u64(0, UINT64_MAX), -1);
	assert_int_equal(cmp__u64(UINT64_MAX, 0), 1);
}

static void test_keys_in_order(void **state)
{
	struct rec v[] = {
		{ 2, 5, 0 }, { 1, 9, 1 }, { 2, -3, 2 }, { 1, 9, 0 }, { 1, -1, 3 }, { 2, 5, 4 },
	};
	static const uint32_t want[] = { 3, 0, 1, 2, 0, 4 };

	(void)state;
	qsort(v, 6, sizeof(v[0]), rec_cmp);
	for (int i = 0; i < 6; i++)
		assert_int_equal(v[i].id, want[i]);
	assert_int_equal(v[0].pid, 1);
	assert_true(v[0].ts == -1);
	assert_int_equal(v[3].pid, 2);
	assert_true(v[3].ts == -3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmp_u64_is_three_way),
		cmocka_unit_test(test_keys_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
