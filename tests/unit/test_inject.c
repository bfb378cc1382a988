// SPDX-License-Identifier: MIT
/*
 * Unit tests of loading a library into a running process
 * (user/record/inject): a program started without anything of ours
 * (tests/mock/inject_target.c, which checks its own floating-point results
 * across the system calls it is stopped at) takes a library whose
 * constructor says so in a file (five loads: one constructor, the same
 * handle), and goes on
 * unharmed: status 0, every round's sum the same, no descriptor left
 * behind; a file that is no library fails with dlopen's reason and harms
 * nothing; a static program, one already traced and a setuid one are
 * refused with one line and nothing done; a thread waiting inside the
 * CUDA driver (a libcuda.so.1 of the tests') is never the one borrowed:
 * another is, or, when it is the only one, the load is refused and the
 * program runs on; Yama's ptrace_scope 3 refuses with one line and nothing
 * done (read from a file of the test's: setting the kernel's to 3 cannot be
 * undone until a reboot).
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "record/inject/inject.h"
#include "record/probes/elf_syms.h"

struct target {
	pid_t pid;
	FILE *out;		/* its stdout */
};

static char dir[64];

static const char *in_dir(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static const char *slow_ms;	/* INJECT_PROBE_SLEEP_MS of the next start */

/* Starts prog for secs seconds (INJECT_PROBE_OUT=probe_out) and reads its
 * "ready PID" line. */
static struct target start(const char *prog, const char *secs)
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
		if (slow_ms)
			setenv("INJECT_PROBE_SLEEP_MS", slow_ms, 1);
		/* test_fault kills it: no core file */
		setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		execl(prog, prog, secs, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	t.out = fdopen(p[0], "r");
	assert_non_null(t.out);
	assert_non_null(fgets(line, sizeof(line), t.out));
	assert_int_equal(atoi(line + 6), t.pid);
	return t;
}

/* Waits for t: its exit status 0 and "ok ROUNDS" with ROUNDS > 0. */
static void finish_ok(struct target *t)
{
	char line[64] = "";
	int st;

	assert_int_equal(waitpid(t->pid, &st, 0), t->pid);
	if (!fgets(line, sizeof(line), t->out))
		line[0] = 0;
	fclose(t->out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strncmp(line, "ok ", 3) || atol(line + 3) <= 0)
		fail_msg("the target ended with status 0x%x and '%s'", st, line);
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int probe_lines(pid_t pid)
{
	char line[64], want[64];
	FILE *f = fopen(in_dir("probe.out"), "r");
	int n = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "loaded %d\n", (int)pid);
	while (fgets(line, sizeof(line), f))
		n += !strcmp(line, want);
	fclose(f);
	return n;
}

static void test_loads(void **state)
{
	struct target t;
	uint64_t h = 0;
	char why[256] = "";
	int fds, err;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(GT_INJECT_WL, "3");
	fds = count_fds(t.pid);
	err = inject__dlopen(t.pid, GT_INJECT_LIB, 2000, &h, why, sizeof(why));
	if (err)
		fail_msg("inject__dlopen: %d: %s", err, why);
	assert_true(h != 0);
	assert_int_equal(probe_lines(t.pid), 1);
	/* the memfd closed again: its mapping holds the library */
	assert_int_equal(count_fds(t.pid), fds);
	finish_ok(&t);
}

/* A function of the library called with a string: its return value; a
 * name the library does not have: said, nothing called. */
static void test_call(void **state)
{
	char line[128], why[256] = "";
	struct target t;
	uint64_t h = 0, ret = 0;
	bool said = false;
	FILE *f;
	int err;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(GT_INJECT_WL, "3");
	err = inject__load(t.pid, GT_INJECT_LIB, "inject_probe_say", "hello, process", 2000, &h, &ret, why,
			   sizeof(why));
	if (err)
		fail_msg("inject__load: %d: %s", err, why);
	assert_int_equal(ret, 42);
	f = fopen(in_dir("probe.out"), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		said |= !strcmp(line, "said hello, process\n");
	fclose(f);
	assert_true(said);
	err = inject__load(t.pid, GT_INJECT_LIB, "no_such_function", NULL, 2000, &h, &ret, why, sizeof(why));
	assert_int_equal(err, -ENOENT);
	assert_non_null(strstr(why, "has no function no_such_function"));
	finish_ok(&t);
}

/* Five loads of the same library: the first maps it, the others find it
 * loaded (dlopen's own count), one constructor, no descriptor left. */
static void test_five_times(void **state)
{
	struct target t;
	uint64_t h, first = 0;
	char why[256];
	int fds;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(GT_INJECT_WL, "3");
	fds = count_fds(t.pid);
	for (int i = 0; i < 5; i++) {
		int err = inject__dlopen(t.pid, GT_INJECT_LIB, 2000, &h, why, sizeof(why));

		if (err)
			fail_msg("load %d: %d: %s", i + 1, err, why);
		if (!i)
			first = h;
		assert_true(h == first);
	}
	assert_int_equal(probe_lines(t.pid), 1);
	assert_int_equal(count_fds(t.pid), fds);
	finish_ok(&t);
}

/* A library loaded again and again, the process' descriptors changing
 * between (so that a memfd's path would differ): by its soname the copy
 * loaded first is found and used (one constructor, the same handle); a load
 * by the memfd's path alone maps a second copy. */
static void test_load_once(void **state)
{
	struct target t;
	uint64_t h1 = 0, h2 = 0, h3 = 0, ret = 0;
	char why[256];
	int err;

	(void)state;
	unlink(in_dir("probe.out"));
	t = start(GT_INJECT_WL, "3");
	err = inject__load_once(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_hold", NULL, 2000, &h1,
				&ret, why, sizeof(why));
	if (err)
		fail_msg("first load: %d: %s", err, why);
	assert_true((int)ret >= 0);
	/* found by its soname (no memfd): the held descriptor takes the
	 * number the first load's memfd had */
	err = inject__load_once(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_hold", NULL, 2000, &h2,
				&ret, why, sizeof(why));
	if (err)
		fail_msg("second load: %d: %s", err, why);
	assert_true(h2 == h1);
	err = inject__load_once(t.pid, GT_INJECT_LIB, "libinject_probe.so", "inject_probe_say", "again", 2000,
				&h2, &ret, why, sizeof(why));
	if (err)
		fail_msg("third load: %d: %s", err, why);
	assert_true(h2 == h1);
	assert_int_equal(ret, 42);
	assert_int_equal(probe_lines(t.pid), 1);
	/* what it spares: a load by the memfd's path alone maps a second copy */
	err = inject__load(t.pid, GT_INJECT_LIB, NULL, NULL, 2000, &h3, NULL, why, sizeof(why));
	if (err)
		fail_msg("plain load: %d: %s", err, why);
	assert_true(h3 != h1);
	assert_int_equal(probe_lines(t.pid), 2);
	/* a soname with a path in it is no soname */
	err = inject__load_once(t.pid, GT_INJECT_LIB, "/x/libinject_probe.so", NULL, NULL, 2000, &h3, NULL, why,
				sizeof(why));
	assert_int_equal(err, -EINVAL);
	finish_ok(&t);
}

/* A dlopen slower than the wait (its constructor sleeps 600 ms, the wait is
 * 100 ms): said, and the thread let go inside it; the trampoline it returns to
 * resumes the program, which ends as it would have. */
static void test_slower_than_wait(void **state)
{
	struct target t;
	uint64_t h = 1;
	char why[256] = "";
	int err;

	(void)state;
	unlink(in_dir("probe.out"));
	slow_ms = "600";
	t = start(GT_INJECT_WL, "2");
	slow_ms = NULL;
	err = inject__dlopen(t.pid, GT_INJECT_LIB, 100, &h, why, sizeof(why));
	assert_int_equal(err, -ETIMEDOUT);
	assert_int_equal(h, 0);
	assert_non_null(strstr(why, "did not return within 100 ms"));
	finish_ok(&t);
	/* the constructor did finish, later */
	assert_int_equal(probe_lines(t.pid), 1);
}

/* The loaded library's function faults (a read of address 0x5c): the
 * process dies of it as it would have, and the error says where: the
 * signal, the file and offset of the instruction, the address read, the
 * thread. */
static void test_fault(void **state)
{
	struct target t;
	uint64_t h = 0, ret = 0;
	char why[512] = "", want[64];
	int err;

	(void)state;
	t = start(GT_INJECT_WL, "3");
	err = inject__load(t.pid, GT_INJECT_LIB, "inject_probe_crash", NULL, 2000, &h, &ret, why, sizeof(why));
	assert_int_equal(err, -EOWNERDEAD);
	snprintf(want, sizeof(want), "pid %d died while inject_probe_crash ran in it (thread ", (int)t.pid);
	if (!strstr(why, want) || !strstr(why, "): SIGSEGV at memfd:gtrace-agent+0x") ||
	    !strstr(why, ", address 0x5c; killed by SIGSEGV (11)"))
		fail_msg("the error does not say where it faulted: %s", why);
	{
		/* the offset is in the library's file: within the few bytes
		 * of inject_probe_crash */
		static const char *const name[] = { "inject_probe_crash" };
		uint64_t fn = 0, off = 0;

		assert_int_equal(elf_syms__resolve(GT_INJECT_LIB, name, 1, &fn), 1);
		assert_int_equal(sscanf(strstr(why, "gtrace-agent+0x") + 15, "%" SCNx64, &off), 1);
		if (off < (fn & ~15ull) || off >= fn + 32)
			fail_msg("the fault at +0x%" PRIx64 " is not in inject_probe_crash (+0x%" PRIx64 ")", off, fn);
	}
	/* reaped by the injector, which saw it die: gone */
	assert_int_equal(waitpid(t.pid, NULL, WNOHANG), -1);
	assert_int_equal(kill(t.pid, 0), -1);
	fclose(t.out);
}

static void test_not_a_library(void **state)
{
	const char *bad = in_dir("notalib.so");
	FILE *f = fopen(bad, "w");
	struct target t;
	uint64_t h = 1;
	char why[256] = "";
	int fds, err;

	(void)state;
	assert_non_null(f);
	for (int i = 0; i < 8; i++)
		fputs("not an ELF file, long enough to have its header read\n", f);
	fclose(f);
	t = start(GT_INJECT_WL, "2");
	fds = count_fds(t.pid);
	err = inject__dlopen(t.pid, bad, 2000, &h, why, sizeof(why));
	assert_int_equal(err, -ENOEXEC);
	assert_int_equal(h, 0);
	/* dlopen's own reason, in one line */
	assert_non_null(strstr(why, "dlopen of"));
	if (!strstr(why, "ELF"))
		fail_msg("why: %s", why);
	assert_null(strchr(why, '\n'));
	assert_int_equal(count_fds(t.pid), fds);
	finish_ok(&t);
	unlink(bad);
}

static void test_static_refused(void **state)
{
	struct target t;
	uint64_t h = 1;
	char why[256] = "";

	(void)state;
	t = start(GT_INJECT_WL_STATIC, "1");
	assert_int_equal(inject__check(t.pid, why, sizeof(why)), -ENOEXEC);
	assert_non_null(strstr(why, "static program"));
	assert_int_equal(inject__dlopen(t.pid, GT_INJECT_LIB, 1000, &h, why, sizeof(why)), -ENOEXEC);
	assert_int_equal(h, 0);
	assert_int_equal(probe_lines(t.pid), 0);
	finish_ok(&t);
}

/* ptrace_scope 3: refused before anything is done, one line naming the
 * setting; 1 (root may attach) and a kernel without Yama: not refused. */
static void test_yama_refused(void **state)
{
	char file[] = "/tmp/gtrace-yama.XXXXXX", why[256] = "";
	struct target t;
	uint64_t h = 1;
	int fd;

	(void)state;
	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "3\n", 2), 2);
	close(fd);
	t = start(GT_INJECT_WL, "1");
	inject__set_yama_path(file);
	assert_int_equal(inject__check(t.pid, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "ptrace_scope is 3"));
	assert_null(strchr(why, '\n'));
	assert_int_equal(inject__dlopen(t.pid, GT_INJECT_LIB, 1000, &h, why, sizeof(why)), -EPERM);
	assert_int_equal(h, 0);
	assert_int_equal(probe_lines(t.pid), 0);
	fd = open(file, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1\n", 2), 2);
	close(fd);
	assert_int_equal(inject__check(t.pid, why, sizeof(why)), 0);
	inject__set_yama_path("/nonexistent/ptrace_scope");
	assert_int_equal(inject__check(t.pid, why, sizeof(why)), 0);
	inject__set_yama_path(NULL);
	unlink(file);
	finish_ok(&t);
}

static void test_traced_refused(void **state)
{
	struct target t;
	uint64_t h = 1;
	char why[256] = "";

	(void)state;
	t = start(GT_INJECT_WL, "1");
	assert_int_equal(ptrace(PTRACE_SEIZE, t.pid, 0, 0), 0);
	assert_int_equal(inject__dlopen(t.pid, GT_INJECT_LIB, 1000, &h, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "already traced by pid"));
	assert_int_equal(h, 0);
	assert_int_equal(probe_lines(t.pid), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, t.pid, 0, 0), 0);
	{
		int st;

		assert_int_equal(waitpid(t.pid, &st, __WALL), t.pid);
	}
	assert_int_equal(ptrace(PTRACE_DETACH, t.pid, 0, 0), 0);
	finish_ok(&t);
}

static void test_setuid_refused(void **state)
{
	const char *copy = in_dir("inject_target_suid");
	char cmd[512], why[256] = "";
	struct target t;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cp %s %s", GT_INJECT_WL, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(copy, 04755), 0);
	t = start(copy, "1");
	assert_int_equal(inject__check(t.pid, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "setuid"));
	finish_ok(&t);
	unlink(copy);
}

/* Debian's python3 (a real interpreter, its own threads' locks): a script
 * that checks its own sums around 1 ms sleeps. */
static void test_python(void **state)
{
	const char *script = in_dir("target.py");
	FILE *f = fopen(script, "w");
	struct target t;
	uint64_t h = 0;
	char why[256] = "";
	int err;

	(void)state;
	assert_non_null(f);
	fputs("#!/usr/bin/python3\n"
	      "import os, sys, time\n"
	      "want = sum(1.0 / (i * i) for i in range(1, 1000))\n"
	      "print('ready', os.getpid(), flush=True)\n"
	      "end, n = time.monotonic() + float(sys.argv[1]), 0\n"
	      "while time.monotonic() < end:\n"
	      "    time.sleep(0.001)\n"
	      "    if sum(1.0 / (i * i) for i in range(1, 1000)) != want:\n"
	      "        print('bad', n)\n"
	      "        sys.exit(1)\n"
	      "    n += 1\n"
	      "print('ok', n)\n", f);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	unlink(in_dir("probe.out"));
	t = start(script, "2");
	err = inject__dlopen(t.pid, GT_INJECT_LIB, 2000, &h, why, sizeof(why));
	if (err)
		fail_msg("inject__dlopen into python3: %d: %s", err, why);
	assert_int_equal(probe_lines(t.pid), 1);
	finish_ok(&t);
	unlink(script);
}

static void test_no_process(void **state)
{
	char why[256] = "";
	uint64_t h;

	(void)state;
	assert_int_equal(inject__check(0, why, sizeof(why)), -EINVAL);
	assert_int_equal(inject__dlopen(getpid(), GT_INJECT_LIB, 100, &h, why, sizeof(why)), -EINVAL);
	assert_int_equal(inject__check(0x3fffffff, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no such process"));
}

/* tests/mock/inject_drv_target: its main thread waits inside the "driver"
 * for a byte on its stdin (*in); with "both" a second thread sleeps beside
 * it. *other: the second thread's id (0: none). */
static struct target start_drv(const char *mode, int *in, pid_t *other)
{
	struct target t = { 0 };
	int o[2], i[2], pid = 0, main_tid = 0, oth = -1;
	char line[96];

	assert_int_equal(pipe(o), 0);
	assert_int_equal(pipe(i), 0);
	t.pid = fork();
	assert_true(t.pid >= 0);
	if (!t.pid) {
		dup2(o[1], 1);
		dup2(i[0], 0);
		close(o[0]), close(o[1]), close(i[0]), close(i[1]);
		setenv("INJECT_PROBE_OUT", in_dir("probe.out"), 1);
		execl(GT_INJECT_DRV_WL, GT_INJECT_DRV_WL, GT_INJECT_DRV, mode, (char *)NULL);
		_exit(127);
	}
	close(o[1]);
	close(i[0]);
	*in = i[1];
	t.out = fdopen(o[0], "r");
	assert_non_null(t.out);
	assert_non_null(fgets(line, sizeof(line), t.out));
	assert_int_equal(sscanf(line, "ready %d %d %d", &pid, &main_tid, &oth), 3);
	assert_int_equal(pid, t.pid);
	*other = oth;
	/* "ready" comes just before the driver's read: wait until the main
	 * thread is in it (its system call, read, is 0) */
	{
		char path[64], buf[32] = "";
		int i;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)t.pid, main_tid);
		for (i = 0; i < 10000; i++) {
			FILE *f = fopen(path, "r");

			buf[0] = 0;
			if (f) {
				if (!fgets(buf, sizeof(buf), f))
					buf[0] = 0;
				fclose(f);
			}
			if (!strncmp(buf, "0 ", 2))
				break;
			usleep(1000);
		}
		if (i == 10000)
			fail_msg("the target's main thread never waited in the driver's read: '%s'", buf);
	}
	return t;
}

/* Lets the program's "driver" call return: "ok" and status 0. */
static void finish_drv(struct target *t, int in)
{
	char line[64] = "";
	int st;

	assert_int_equal(write(in, "x", 1), 1);
	close(in);
	assert_int_equal(waitpid(t->pid, &st, 0), t->pid);
	if (!fgets(line, sizeof(line), t->out))
		line[0] = 0;
	fclose(t->out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strcmp(line, "ok\n"))
		fail_msg("the target ended with status 0x%x and '%s'", st, line);
}

/* The driver's target in mode ("both": its main thread waits inside the
 * fake driver, another sleeps; "one": the main thread alone), loaded with
 * a wait of wait_ms: the call ran once, in the other thread where there is
 * one, else in the main thread; the target goes on. What the load
 * borrowed, in *last. */
static void drv_load(const char *mode, unsigned wait_ms, struct inject_last *last)
{
	char why[256] = "";
	struct target t;
	uint64_t h = 0, ret = 0;
	pid_t other;
	int in, err;

	unlink(in_dir("probe.out"));
	t = start_drv(mode, &in, &other);
	assert_true(strcmp(mode, "both") ? other == 0 : other > 0);
	err = inject__load(t.pid, GT_INJECT_LIB, "inject_probe_tid", NULL, wait_ms, &h, &ret, why, sizeof(why));
	if (err)
		fail_msg("inject__load: %d: %s", err, why);
	assert_int_equal((pid_t)ret, other ? other : t.pid);
	inject__last(last);
	assert_int_equal(last->tid, (pid_t)ret);
	assert_int_equal(probe_lines(t.pid), 1);
	finish_drv(&t, in);
}

/* The main thread waits inside the driver, another thread in a sleep: the
 * other one runs the call, the main thread is passed over (at least once)
 * and both go on. */
static void test_driver_thread_passed_over(void **state)
{
	struct inject_last last;

	(void)state;
	drv_load("both", 3000, &last);
	assert_false(last.inside);
	assert_true(last.passed_over >= 1);
}

/* Its only thread waits inside the driver: passed over while another
 * might come (half of the 300 ms wait), then taken in that wait all the
 * same, said; the call ran there once, and it goes on. */
static void test_driver_only_thread_taken(void **state)
{
	struct inject_last last;

	(void)state;
	drv_load("one", 300, &last);
	assert_true(last.inside);
	assert_true(last.passed_over >= 1);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_inject.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(in_dir("probe.out"));
	unlink(in_dir("notalib.so"));
	unlink(in_dir("target.py"));
	unlink(in_dir("inject_target_suid"));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads),
		cmocka_unit_test(test_five_times),
		cmocka_unit_test(test_load_once),
		cmocka_unit_test(test_call),
		cmocka_unit_test(test_slower_than_wait),
		cmocka_unit_test(test_fault),
		cmocka_unit_test(test_not_a_library),
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_static_refused),
		cmocka_unit_test(test_yama_refused),
		cmocka_unit_test(test_traced_refused),
		cmocka_unit_test(test_setuid_refused),
		cmocka_unit_test(test_no_process),
		cmocka_unit_test(test_driver_thread_passed_over),
		cmocka_unit_test(test_driver_only_thread_taken),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
