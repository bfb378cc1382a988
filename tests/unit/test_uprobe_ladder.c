// SPDX-License-Identifier: MIT
/* The load ladder: uprobe_multi first, per-probe links when that fails,
 * no second rung after a permission error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include "lib/log.h"
#include "record/probes/uprobe_ladder.h"

struct fake {
	int multi_err, single_err;	/* what each rung returns */
	int loads, unloads;		/* calls seen */
	bool last_multi;		/* the rung of the last load */
};

static int fake_load(void *ctx, bool multi)
{
	struct fake *f = ctx;

	f->loads++;
	f->last_multi = multi;
	return multi ? f->multi_err : f->single_err;
}

static void fake_unload(void *ctx)
{
	((struct fake *)ctx)->unloads++;
}

static const struct uprobe_ladder_ops ops = { .load = fake_load, .unload = fake_unload };

static void test_multi_loads(void **state)
{
	struct fake f = { 0 };
	bool multi = false;

	(void)state;
	assert_int_equal(uprobe_ladder__load(&ops, &f, &multi), 0);
	assert_true(multi);
	assert_int_equal(f.loads, 1);
	assert_int_equal(f.unloads, 0);
}

static void test_falls_back_to_single(void **state)
{
	struct fake f = { .multi_err = -EINVAL };
	bool multi = true;

	(void)state;
	assert_int_equal(uprobe_ladder__load(&ops, &f, &multi), 0);
	assert_false(multi);
	assert_int_equal(f.loads, 2);
	assert_int_equal(f.unloads, 1);
	assert_false(f.last_multi);
}

static void test_permission_stops(void **state)
{
	struct fake f = { .multi_err = -EPERM };
	bool multi;

	(void)state;
	assert_int_equal(uprobe_ladder__load(&ops, &f, &multi), -EPERM);
	assert_int_equal(f.loads, 1);
}

static void test_both_fail(void **state)
{
	struct fake f = { .multi_err = -EINVAL, .single_err = -E2BIG };
	bool multi;

	(void)state;
	assert_int_equal(uprobe_ladder__load(&ops, &f, &multi), -E2BIG);
	assert_int_equal(f.loads, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_loads),
		cmocka_unit_test(test_falls_back_to_single),
		cmocka_unit_test(test_permission_stops),
		cmocka_unit_test(test_both_fail),
	};

	gt_log_level = -1;	/* the error lines are the ladder's, not the test's */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
