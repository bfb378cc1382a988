// SPDX-License-Identifier: MIT
/*
 * Unit tests of the overhead budget's shedding decisions (record/
 * shed_policy.c): which always-on api is shed (the costliest eligible one,
 * none when nothing costs), when a shed api is given back (its retry time,
 * doubled per earlier shed up to 16x; only under the budget; the one shed
 * longest ago first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "daemon/budget/shed_policy.h"

#define MIN 60000000000ull

static void test_pick_costliest(void **state)
{
	double cost[6] = { 99, 10, 40, 0, 40.5, 5 };
	bool ok[6] = { true, true, true, true, true, true };

	(void)state;
	/* index 0 (no api) never counts, however costly */
	assert_int_equal(shed_policy__pick(cost, ok, 6, 0), 4);
	ok[4] = false;		/* already shed, or hot */
	assert_int_equal(shed_policy__pick(cost, ok, 6, 0), 2);
	/* equal costs: the first */
	cost[1] = 40;
	assert_int_equal(shed_policy__pick(cost, ok, 6, 0), 1);
}

static void test_pick_none(void **state)
{
	double cost[4] = { 0, 0, -1, 0 };
	bool ok[4] = { true, true, true, true };
	double nan_cost[3] = { 0, __builtin_nan(""), 0 };

	(void)state;
	assert_int_equal(shed_policy__pick(cost, ok, 4, 0), 0);
	assert_int_equal(shed_policy__pick(nan_cost, ok, 3, 0), 0);
	cost[3] = 7;
	ok[3] = false;
	assert_int_equal(shed_policy__pick(cost, ok, 4, 0), 0);
}

/* a floor: an api under min_ns is not shed however it ranks, one at it is */
static void test_pick_floor(void **state)
{
	double cost[4] = { 0, 3, 9.5, 10 };
	bool ok[4] = { true, true, true, true };

	(void)state;
	assert_int_equal(shed_policy__pick(cost, ok, 4, 10), 3);
	ok[3] = false;
	assert_int_equal(shed_policy__pick(cost, ok, 4, 10), 0);
	assert_int_equal(shed_policy__pick(cost, ok, 4, 9.5), 2);
	assert_int_equal(shed_policy__pick(cost, ok, 4, 1), 2);
}

static void test_retry_backoff(void **state)
{
	struct shed_entry e = { .api = 3, .shed_ts = 1000, .sheds = 1 };

	(void)state;
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), 1000 + 10 * MIN);
	e.sheds = 2;
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), 1000 + 20 * MIN);
	e.sheds = 3;
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), 1000 + 40 * MIN);
	e.sheds = 5;
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), 1000 + 160 * MIN);
	e.sheds = 40;		/* at most 16x */
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), 1000 + 160 * MIN);
	/* no overflow */
	e.shed_ts = UINT64_MAX - 5;
	assert_int_equal(shed_policy__retry_at(&e, 10 * MIN), UINT64_MAX);
	e.shed_ts = 0;
	assert_int_equal(shed_policy__retry_at(&e, UINT64_MAX / 2), UINT64_MAX);
}

static void test_give_back(void **state)
{
	struct shed_entry e[3] = {
		{ .api = 7, .shed_ts = 5 * MIN, .sheds = 1 },
		{ .api = 9, .shed_ts = 2 * MIN, .sheds = 2 },	/* retry at 2 + 20 min */
		{ .api = 4, .shed_ts = 3 * MIN, .sheds = 1 },	/* retry at 13 min */
	};

	(void)state;
	/* nothing before a retry time */
	assert_int_equal(shed_policy__give_back(e, 3, 12 * MIN, false, 10 * MIN), -1);
	/* api 4's has come */
	assert_int_equal(shed_policy__give_back(e, 3, 13 * MIN, false, 10 * MIN), 2);
	/* over the budget: none, whatever the time */
	assert_int_equal(shed_policy__give_back(e, 3, 100 * MIN, true, 10 * MIN), -1);
	/* several due: the one shed longest ago */
	assert_int_equal(shed_policy__give_back(e, 3, 22 * MIN, false, 10 * MIN), 1);
	assert_int_equal(shed_policy__give_back(e, 3, 15 * MIN, false, 10 * MIN), 2);
	assert_int_equal(shed_policy__give_back(e, 2, 15 * MIN, false, 10 * MIN), 0);
	assert_int_equal(shed_policy__give_back(e, 0, 100 * MIN, false, 10 * MIN), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_costliest),
		cmocka_unit_test(test_pick_none),
		cmocka_unit_test(test_pick_floor),
		cmocka_unit_test(test_retry_backoff),
		cmocka_unit_test(test_give_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
