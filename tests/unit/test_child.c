// SPDX-License-Identifier: MIT
/* -- CMD: held until released, its status, never run when not released. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "record/child.h"

static void test_status_of_released_command(void **state)
{
	char *cmd[] = { "sh", "-c", "exit 7", NULL };
	struct child *c;

	(void)state;
	assert_int_equal(child__start(cmd, NULL, NULL, &c), 0);
	assert_int_equal(child__release(c), 0);
	assert_int_equal(child__wait(c), 7);
	assert_true(child__poll(c));
	assert_int_equal(child__status(c), 7);
	child__free(c);
}

static void test_signal_status(void **state)
{
	char *cmd[] = { "sh", "-c", "kill -9 $$", NULL };
	struct child *c;

	(void)state;
	assert_int_equal(child__start(cmd, NULL, NULL, &c), 0);
	assert_int_equal(child__release(c), 0);
	assert_int_equal(child__wait(c), 128 + 9);
	child__free(c);
}

static void test_not_run_before_release(void **state)
{
	char path[] = "/tmp/gtrace-test-child.XXXXXX";
	char *cmd[] = { "touch", path, NULL };
	struct child *c;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(child__start(cmd, NULL, NULL, &c), 0);
	usleep(100000);
	assert_false(child__poll(c));
	assert_int_not_equal(access(path, F_OK), 0);
	child__free(c);	/* never released: it must not run */
	assert_int_not_equal(access(path, F_OK), 0);
}

static int fail_setup(void *ctx)
{
	(void)ctx;
	return -1;
}

static void test_failed_setup_exits_127(void **state)
{
	char *cmd[] = { "true", NULL };
	struct child *c;

	(void)state;
	assert_int_equal(child__start(cmd, fail_setup, NULL, &c), 0);
	assert_int_equal(child__release(c), 0);
	assert_int_equal(child__wait(c), 127);
	child__free(c);
}

static void test_missing_command_exits_127(void **state)
{
	char *cmd[] = { "/nonexistent/gtrace-test", NULL };
	struct child *c;

	(void)state;
	assert_int_equal(child__start(cmd, NULL, NULL, &c), 0);
	assert_int_equal(child__release(c), 0);
	assert_int_equal(child__wait(c), 127);
	child__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_of_released_command),
		cmocka_unit_test(test_signal_status),
		cmocka_unit_test(test_not_run_before_release),
		cmocka_unit_test(test_failed_setup_exits_127),
		cmocka_unit_test(test_missing_command_exits_127),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
