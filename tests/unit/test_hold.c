// SPDX-License-Identifier: MIT
/*
 * Unit tests of the hold's pieces that need no BPF (user/record/probes/hold.c):
 * the kernel's device encoding of the files map's keys, the start-time
 * check that keeps a reused pid from being continued (against a real
 * child's /proc/PID/stat), and the continuation of a stopped child: the
 * right start continues it, a wrong one leaves it stopped.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/kdev.h"
#include "record/probes/hold.h"
#include "record/procs/procfs.h"

static void test_kdev(void **state)
{
	(void)state;
	/* major << 20 | minor, as the kernel's s_dev */
	assert_int_equal(kdev__of(makedev(8, 1)), (8u << 20) | 1);
	assert_int_equal(kdev__of(makedev(0, 44)), 44);
	assert_int_equal(kdev__of(makedev(259, 70000)), (259u << 20) | 70000);
}

static void test_same_start(void **state)
{
	/* the fields after the command name, starttime (the 22nd of the line) 4242 */
	const char *f = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21";

	(void)state;
	assert_true(hold__same_start(f, 4242ull * 10000000ull, 100));
	assert_true(hold__same_start(f, 4242ull * 10000000ull + 9999999ull, 100));
	assert_false(hold__same_start(f, 4243ull * 10000000ull, 100));
	assert_false(hold__same_start(NULL, 0, 100));
	assert_false(hold__same_start(" S 1 2", 0, 100));
	assert_false(hold__same_start(f, 4242ull * 10000000ull, 0));
}

/* The start of pid in CLOCK_BOOTTIME ns as /proc says it (ticks). */
static uint64_t start_of(pid_t pid)
{
	char buf[1024];
	const char *f = procfs__stat_fields(pid, buf, sizeof(buf));
	unsigned long long ticks;

	assert_non_null(f);
	assert_int_equal(sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
				   "%*d %*d %llu", &ticks), 1);
	return ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* waitpid for the child's next stop or continuation. */
static int next_state(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, WUNTRACED | WCONTINUED), pid);
	return WIFSTOPPED(st) ? 'T' : WIFCONTINUED(st) ? 'C' : 'X';
}

static void test_continue(void **state)
{
	pid_t pid = fork();
	uint64_t start;
	int st;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(7);
	}
	assert_int_equal(next_state(pid), 'T');
	start = start_of(pid);
	/* another process' start: not continued */
	assert_int_equal(hold__continue_pid(pid, start + 1000000000ull), -ESRCH);
	assert_int_equal(kill(pid, 0), 0);
	assert_int_equal(waitpid(pid, &st, WNOHANG | WCONTINUED), 0);
	/* its own: continued, and it runs to its end: its own exit status
	 * says it ran on (the report of the continuation may come first, or be
	 * overtaken by the exit of a child that exits at once: both happen) */
	assert_int_equal(hold__continue_pid(pid, start), 0);
	do
		assert_int_equal(waitpid(pid, &st, WCONTINUED), pid);
	while (WIFCONTINUED(st));
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	/* gone */
	assert_int_equal(hold__continue_pid(pid, start), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kdev),
		cmocka_unit_test(test_same_start),
		cmocka_unit_test(test_continue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
