// SPDX-License-Identifier: MIT
/* --cgroup PATH (user/record/procs/cgroup_target.c): the cgroup2 mount found in
 * mountinfo text, membership read from /proc/PID/cgroup text (a cgroup
 * holds those below it, not a sibling whose name it prefixes), the header's
 * escaping, and the resolving of this machine's own cgroup2 root. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "record/procs/cgroup_target.h"

static FILE *text(const char *s)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");

	assert_non_null(f);
	return f;
}

static void test_mount_from(void **state)
{
	char mnt[64];
	FILE *f;

	(void)state;
	/* hybrid: v1 hierarchies first, optional fields of any number */
	f = text("30 24 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
		 "31 30 0:27 / /sys/fs/cgroup/memory rw shared:10 - cgroup cgroup rw,memory\n"
		 "41 30 0:38 / /sys/fs/cgroup/uni\\040fied rw shared:11 master:3 - cgroup2 cgroup2 rw\n"
		 "42 30 0:39 / /mnt/second rw - cgroup2 cgroup2 rw\n");
	assert_int_equal(cgroup_target__mount_from(f, mnt, sizeof(mnt)), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/uni fied");
	fclose(f);
	/* a type named like it in the source field is not it */
	f = text("30 24 0:26 / /x rw - tmpfs cgroup2 rw\n31 30 0:27 / /y rw - cgroup cgroup rw\n");
	assert_int_equal(cgroup_target__mount_from(f, mnt, sizeof(mnt)), -ENOENT);
	fclose(f);
	/* a mount point longer than the buffer is passed over */
	f = text("41 30 0:38 / /a/very/long/mount/point/that/does/not/fit/in/sixty/four/bytes/at/all rw - cgroup2 c rw\n");
	assert_int_equal(cgroup_target__mount_from(f, mnt, sizeof(mnt)), -ENOENT);
	fclose(f);
}

static bool holds(const char *rel, const char *proc)
{
	struct cgroup_target t = { 0 };
	FILE *f = text(proc);
	bool in;

	snprintf(t.rel, sizeof(t.rel), "%s", rel);
	in = cgroup_target__holds(&t, f);
	fclose(f);
	return in;
}

static void test_holds(void **state)
{
	const char *v1 = "4:memory:/job\n1:cpu:/\n";

	(void)state;
	assert_true(holds("/job", "0::/job\n"));
	assert_true(holds("/job", "0::/job/step.scope\n"));
	assert_false(holds("/job", "0::/jobs\n"));
	assert_false(holds("/job", "0::/\n"));
	assert_false(holds("/job/a", "0::/job\n"));
	assert_true(holds("/", "0::/anything\n"));
	/* only the v2 line counts: a v1 hierarchy's path of the same name does not */
	assert_false(holds("/job", v1));
	assert_true(holds("/job", "4:memory:/other\n0::/job\n"));
}

static void test_escape(void **state)
{
	char buf[64], small[6];

	(void)state;
	assert_string_equal(cgroup_target__escape("/sys/fs/cgroup/a.slice/b-1.scope", buf, sizeof(buf)),
			    "/sys/fs/cgroup/a.slice/b-1.scope");
	assert_string_equal(cgroup_target__escape("/a b=c%d\n", buf, sizeof(buf)), "/a%20b%3Dc%25d%0A");
	assert_string_equal(cgroup_target__escape("/q\"\\", buf, sizeof(buf)), "/q%22%5C");
	/* truncated whole: no half escape at the end */
	assert_string_equal(cgroup_target__escape("/ab cd", small, sizeof(small)), "/ab");
}

/* This machine's cgroup2 root: found, depth 0, "/"; a path that is not
 * there: -ENOENT with the path in the line; a plain directory: -EINVAL. */
static void test_resolve(void **state)
{
	struct cgroup_target t;
	char err[PATH_MAX + 160], mnt[PATH_MAX];
	struct stat st;
	FILE *f;

	(void)state;
	f = fopen("/proc/self/mountinfo", "r");
	assert_non_null(f);
	if (cgroup_target__mount_from(f, mnt, sizeof(mnt))) {
		fclose(f);
		fail_msg("no cgroup2 file system is mounted on this machine: the resolving is not checked");
	}
	fclose(f);
	assert_int_equal(cgroup_target__resolve(mnt, &t, err, sizeof(err)), 0);
	assert_string_equal(t.rel, "/");
	assert_int_equal(t.level, 0);
	assert_int_equal(stat(mnt, &st), 0);
	assert_true(t.id == (uint64_t)st.st_ino);
	assert_int_equal(cgroup_target__resolve("/nonexistent-cgroup-dir", &t, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent-cgroup-dir"));
	assert_int_equal(cgroup_target__resolve("/proc", &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a cgroup"));
	assert_int_equal(cgroup_target__resolve("", &t, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_from),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
