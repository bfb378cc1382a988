// SPDX-License-Identifier: MIT
/*
 * Unit tests of loading a library through CPython 3.14's remote debugging
 * interface (user/record/inject/py_remote.c), with Debian unstable's 3.14
 * (tools/python314.sh, fetched once): a Python program started without
 * anything of ours takes the tests' library (its constructor and the
 * function called say so in a file), in its main thread, and goes on; a
 * second load takes the copy there (one constructor); nothing of the
 * attempt is left in its /tmp; remote debugging switched off in it, a
 * program that is not Python 3.14 (3.11, a C program): -ENOTSUP with a
 * reason, nothing done; an interpreter that runs no Python code in the
 * wait (in one long sleep): called off, nothing done then or after it
 * wakes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "record/inject/py_remote.h"

static char dir[64];
static char py314[4096];

static const char *in_dir(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

struct target {
	pid_t pid;
	FILE *out;
};

/* Runs python with code (its stdout read here: the code prints "ready"
 * first); env NAME=VALUE set when given. */
static struct target start(const char *python, const char *code, const char *env)
{
	struct target t = { 0 };
	char line[64];
	int p[2];

	assert_int_equal(pipe(p), 0);
	t.pid = fork();
	assert_true(t.pid >= 0);
	if (!t.pid) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		setenv("INJECT_PROBE_OUT", in_dir("probe.out"), 1);
		if (env)
			putenv((char *)env);
		execl(python, python, "-c", code, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	t.out = fdopen(p[0], "r");
	assert_non_null(t.out);
	assert_non_null(fgets(line, sizeof(line), t.out));
	assert_string_equal(line, "ready\n");
	return t;
}

/* Waits for t: status 0 and its last line "ok". */
static void finish_ok(struct target *t)
{
	char line[64] = "", last[64] = "";
	int st;

	while (fgets(line, sizeof(line), t->out))
		snprintf(last, sizeof(last), "%s", line);
	assert_int_equal(waitpid(t->pid, &st, 0), t->pid);
	fclose(t->out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strcmp(last, "ok\n"))
		fail_msg("the target ended with status 0x%x and '%s'", st, last);
}

/* Lines of probe.out equal to what (with the pid for "loaded"). */
static int probe_lines(const char *what)
{
	char line[128];
	FILE *f = fopen(in_dir("probe.out"), "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += !strcmp(line, what);
	fclose(f);
	return n;
}

static int loaded_lines(pid_t pid)
{
	char want[64];

	snprintf(want, sizeof(want), "loaded %d\n", (int)pid);
	return probe_lines(want);
}

/* Entries of /tmp named .gtrace-attach-PID-*: an attempt on pid. */
static int attempts_left(pid_t pid)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	char prefix[64];
	int n = 0;

	assert_non_null(d);
	snprintf(prefix, sizeof(prefix), ".gtrace-attach-%d-", (int)pid);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* A loop of Python code for secs seconds, then "ok". */
#define LOOP(secs)                                                                                    \
	"import sys, time\n"                                                                          \
	"print('ready', flush=True)\n"                                                                \
	"end = time.monotonic() + " #secs "\n"                                                        \
	"while time.monotonic() < end:\n"                                                             \
	"    time.sleep(0.005)\n"                                                                     \
	"print('ok', flush=True)\n"

static void test_loads_twice(void **state)
{
	struct target t;
	uint64_t ret = 0;
	pid_t tid = 0;
	char why[256] = "";
	int err;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(py314, LOOP(3), NULL);
	err = py_remote__load(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_say", "it's \"quoted\"\n",
			      2000, &ret, &tid, why, sizeof(why));
	if (err)
		fail_msg("py_remote__load: %d: %s", err, why);
	assert_int_equal(ret, 42);
	assert_int_equal(tid, t.pid);	/* the main thread's state */
	assert_int_equal(loaded_lines(t.pid), 1);
	assert_int_equal(probe_lines("said it's \"quoted\"\n"), 1);
	/* again: the copy there, no second constructor */
	err = py_remote__load(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_say", "again", 2000, &ret,
			      &tid, why, sizeof(why));
	if (err)
		fail_msg("second py_remote__load: %d: %s", err, why);
	assert_int_equal(ret, 42);
	assert_int_equal(loaded_lines(t.pid), 1);
	assert_int_equal(probe_lines("said again\n"), 1);
	assert_int_equal(attempts_left(t.pid), 0);
	finish_ok(&t);
}

/* A load into pid refused with -ENOTSUP, why holding want (or want2):
 * nothing loaded. */
static void refused(pid_t pid, const char *want, const char *want2)
{
	uint64_t ret = 0;
	pid_t tid = 0;
	char why[256] = "";
	int err;

	err = py_remote__load(pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_say", "x", 1000, &ret, &tid, why,
			      sizeof(why));
	if (err != -ENOTSUP || (!strstr(why, want) && !(want2 && strstr(why, want2))))
		fail_msg("pid %d: %d, '%s'; expected -ENOTSUP and '%s'", (int)pid, err, why, want);
	assert_int_equal(loaded_lines(pid), 0);
}

static void test_switched_off(void **state)
{
	struct target t;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(py314, LOOP(1), "PYTHON_DISABLE_REMOTE_DEBUG=1");
	refused(t.pid, "remote debugging is switched off", NULL);
	finish_ok(&t);
}

static void test_not_314(void **state)
{
	struct target t;

	(void)state;
	unlink(in_dir("probe.out"));
	/* Debian 12's python3, 3.11: a runtime without the table */
	t = start("/usr/bin/python3", LOOP(1), NULL);
	refused(t.pid, "no debug offsets", "(remote scripts are sent to 3.14)");
	finish_ok(&t);
}

static void test_not_python(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	refused(pid, "no Python runtime mapped", NULL);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* One sleep of 1.5 s: no Python code runs in a 300 ms wait. The attempt is
 * called off; when the interpreter wakes it runs nothing of ours. */
static void test_called_off(void **state)
{
	struct target t;
	uint64_t ret = 0;
	pid_t tid = 0;
	char why[256] = "";
	int err;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(py314,
		  "import time\n"
		  "print('ready', flush=True)\n"
		  "time.sleep(1.5)\n"
		  "for i in range(100000):\n"
		  "    pass\n"
		  "time.sleep(0.5)\n"
		  "print('ok', flush=True)\n",
		  NULL);
	err = py_remote__load(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_say", "x", 300, &ret, &tid,
			      why, sizeof(why));
	assert_int_equal(err, -ETIMEDOUT);
	assert_non_null(strstr(why, "ran no Python code in 300 ms"));
	assert_int_equal(attempts_left(t.pid), 0);
	finish_ok(&t);
	assert_int_equal(loaded_lines(t.pid), 0);
}

static int group_setup(void **state)
{
	FILE *p;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_py_remote.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	p = popen(GT_ROOT "/tools/python314.sh", "r");
	if (!p || !fgets(py314, sizeof(py314), p)) {
		fprintf(stderr, "test_py_remote: tools/python314.sh gave no CPython 3.14\n");
		if (p)
			pclose(p);
		return -1;
	}
	py314[strcspn(py314, "\n")] = 0;
	return pclose(p) ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(in_dir("probe.out"));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_twice),
		cmocka_unit_test(test_switched_off),
		cmocka_unit_test(test_not_314),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_called_off),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
