// SPDX-License-Identifier: MIT
/*
 * The temporary-file-then-rename installer (user/lib/installer.c) that export
 * and merge write their outputs through: what ends up under the target's
 * name, what is refused, and that nothing else is left in the directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/installer.h"

static char dir[64];

static const char *path_in(const char *name)
{
	static char buf[4][160];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gt-installer-XXXXXX");
	umask(022);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* The names in dir, sorted, space-separated: what a user's ls -a shows. */
static const char *listing(void)
{
	static char buf[512];
	struct dirent **ents;
	int n, i;

	buf[0] = 0;
	n = scandir(dir, &ents, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
			if (buf[0])
				strcat(buf, " ");
			strcat(buf, ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	return buf;
}

static const char *contents(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void put(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

/* Creates an installer for dir/name and writes s into its temporary file. */
static struct installer *written(const char *name, const char *tag, mode_t mode, const char *s)
{
	struct installer *in = NULL;

	assert_int_equal(installer__create(path_in(name), tag, mode, &in), 0);
	assert_non_null(in);
	assert_int_equal(write(installer__fd(in), s, strlen(s)), (ssize_t)strlen(s));
	return in;
}

static void test_installs_new_file_with_mode_less_umask(void **state)
{
	struct installer *in = written("out.json", "", 0644, "new");
	struct stat st;

	(void)state;
	/* nothing under the final name until the commit */
	assert_string_equal(listing(), strrchr(installer__path(in), '/') + 1);
	assert_int_equal(installer__commit(in, false), 0);
	installer__free(in);
	assert_string_equal(listing(), "out.json");
	assert_string_equal(contents(path_in("out.json")), "new");
	assert_int_equal(stat(path_in("out.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644 & ~022);
	unlink(path_in("out.json"));
}

static void test_mode_0600_stays_private(void **state)
{
	struct installer *in = written("t.gtrace", ".merge", 0600, "trace");
	struct stat st;

	(void)state;
	assert_int_equal(installer__commit(in, false), 0);
	installer__free(in);
	assert_int_equal(stat(path_in("t.gtrace"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(path_in("t.gtrace"));
}

static void test_temp_name_is_hidden_next_to_target_with_tag(void **state)
{
	struct installer *in = written("t.gtrace", ".merge", 0600, "");
	const char *p = installer__path(in);
	size_t n = strlen(path_in(".t.gtrace.merge."));

	(void)state;
	assert_memory_equal(p, path_in(".t.gtrace.merge."), n);
	assert_int_equal(strlen(p), n + 6);	/* mkstemp's six characters */
	installer__free(in);
	assert_string_equal(listing(), "");
}

static void test_refuses_existing_target_without_force(void **state)
{
	struct installer *in;

	(void)state;
	put(path_in("out.csv"), "old");
	in = written("out.csv", "", 0644, "new");
	assert_int_equal(installer__commit(in, false), -EEXIST);
	assert_string_equal(contents(path_in("out.csv")), "old");
	/* the refused file goes with the installer */
	installer__free(in);
	assert_string_equal(listing(), "out.csv");
	unlink(path_in("out.csv"));
}

static void test_refuses_a_dangling_link_without_force(void **state)
{
	struct installer *in;
	struct stat st;

	(void)state;
	/* made while the file is written: create refuses one already there */
	in = written("out.csv", "", 0644, "new");
	assert_int_equal(symlink("nowhere", path_in("out.csv")), 0);
	assert_int_equal(installer__commit(in, false), -EEXIST);
	installer__free(in);
	assert_int_equal(lstat(path_in("out.csv"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(listing(), "out.csv");
	unlink(path_in("out.csv"));
}

static void test_replaces_existing_target_with_force(void **state)
{
	struct installer *in;

	(void)state;
	put(path_in("out.csv"), "old");
	in = written("out.csv", "", 0644, "new");
	assert_int_equal(installer__commit(in, true), 0);
	installer__free(in);
	assert_string_equal(contents(path_in("out.csv")), "new");
	assert_string_equal(listing(), "out.csv");
	unlink(path_in("out.csv"));
}

static void test_abandoned_install_leaves_nothing(void **state)
{
	struct installer *in = written("out.pftrace", "", 0644, "half");

	(void)state;
	installer__free(in);
	assert_string_equal(listing(), "");
	installer__free(NULL);
}

static void test_missing_directory_is_an_error(void **state)
{
	struct installer *in = (struct installer *)1;

	(void)state;
	assert_int_equal(installer__create(path_in("no/such/out.json"), "", 0644, &in), -ENOENT);
	assert_null(in);
	assert_string_equal(listing(), "");
}

static void test_failed_rename_keeps_temp_until_free(void **state)
{
	struct installer *in = written("sub", "", 0644, "x");

	(void)state;
	/* a directory in the target's place: the commit is refused, the
	 * caller can report it, and the installer still removes its file */
	assert_int_equal(mkdir(path_in("sub"), 0755), 0);
	assert_int_equal(installer__commit(in, true), -EPERM);
	assert_int_equal(access(installer__path(in), F_OK), 0);
	installer__free(in);
	assert_string_equal(listing(), "sub");
	rmdir(path_in("sub"));
}

/* What --force must not replace, refused before any work is done. */
static void test_refuses_what_is_not_our_regular_file(void **state)
{
	struct installer *in = NULL;
	struct stat st;

	(void)state;
	assert_int_equal(mkfifo(path_in("fifo"), 0644), 0);
	assert_int_equal(installer__create(path_in("fifo"), "", 0600, &in), -EPERM);
	assert_null(in);
	assert_string_equal(installer__refusal(path_in("fifo")), "it is not a regular file");
	assert_int_equal(lstat(path_in("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* a link to a file of ours: neither followed nor replaced */
	put(path_in("mine"), "mine");
	assert_int_equal(symlink("mine", path_in("link")), 0);
	assert_int_equal(installer__create(path_in("link"), "", 0600, &in), -EPERM);
	assert_string_equal(installer__refusal(path_in("link")), "it is a symbolic link");
	assert_string_equal(contents(path_in("mine")), "mine");
	assert_null(installer__refusal(path_in("mine")));
	assert_null(installer__refusal(path_in("absent")));
	assert_string_equal(listing(), "fifo link mine");

	/* a file someone else owns (as root, which the writers run as) */
	if (geteuid() == 0) {
		assert_int_equal(chown(path_in("mine"), 65534, 65534), 0);
		assert_string_equal(installer__refusal(path_in("mine")), "it is owned by another user");
		assert_int_equal(installer__create(path_in("mine"), "", 0600, &in), -EPERM);
	}
	unlink(path_in("fifo"));
	unlink(path_in("link"));
	unlink(path_in("mine"));
}

/* A FIFO planted while the file was written: refused at the rename. */
static void test_refuses_a_target_planted_before_the_commit(void **state)
{
	struct installer *in = written("out.json", "", 0600, "new");
	struct stat st;

	(void)state;
	assert_int_equal(mkfifo(path_in("out.json"), 0644), 0);
	assert_int_equal(installer__commit(in, true), -EPERM);
	installer__free(in);
	assert_int_equal(lstat(path_in("out.json"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_string_equal(listing(), "out.json");
	unlink(path_in("out.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_installs_new_file_with_mode_less_umask),
		cmocka_unit_test(test_mode_0600_stays_private),
		cmocka_unit_test(test_temp_name_is_hidden_next_to_target_with_tag),
		cmocka_unit_test(test_refuses_existing_target_without_force),
		cmocka_unit_test(test_refuses_a_dangling_link_without_force),
		cmocka_unit_test(test_replaces_existing_target_with_force),
		cmocka_unit_test(test_abandoned_install_leaves_nothing),
		cmocka_unit_test(test_missing_directory_is_an_error),
		cmocka_unit_test(test_failed_rename_keeps_temp_until_free),
		cmocka_unit_test(test_refuses_what_is_not_our_regular_file),
		cmocka_unit_test(test_refuses_a_target_planted_before_the_commit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
