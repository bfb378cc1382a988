// SPDX-License-Identifier: MIT
/*
 * record/stacks/ustacks_sym.c's files: a file mapped by a process is read
 * through that process' root; when the process is gone (its first stack
 * read by a recorder running behind it), through the path in the
 * recorder's own root, but only when that path is the file mapped (same
 * device and inode): another file at the path names nothing.
 */
#include <dlfcn.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "record/stacks/ustacks_int.h"

/* a function of this file, named by its symbol table */
__attribute__((noinline, used)) int sym_probe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* A pid no process has: a child's, waited for. */
static uint32_t gone_pid(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (!p)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return (uint32_t)p;
}

/* This test's own file as the module a process mapped: pid, the path
 * /proc/self/exe names, its device and inode (ino_delta added). */
static struct module *self_module(uint32_t pid, uint64_t ino_delta)
{
	struct module *m = calloc(1, sizeof(*m));
	char path[4096];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_non_null(m);
	assert_true(n > 0);
	path[n] = 0;
	assert_int_equal(stat(path, &st), 0);
	m->pid = pid;
	m->path = strdup(path);
	m->dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	m->ino = st.st_ino + ino_delta;
	return m;
}

/* sym_probe_target's file offset in m (its segments read). */
static uint64_t target_offset(const struct module *m)
{
	Dl_info di;
	uint64_t vaddr;

	assert_true(dladdr((void *)sym_probe_target, &di));
	vaddr = (uint64_t)((uintptr_t)sym_probe_target - (uintptr_t)di.dli_fbase);
	for (size_t i = 0; i < m->nsegs; i++)
		if (vaddr >= m->segs[i].vaddr && vaddr < m->segs[i].vaddr + m->segs[i].len)
			return vaddr - m->segs[i].vaddr + m->segs[i].off;
	fail_msg("sym_probe_target in none of %zu segments", m->nsegs);
	return 0;
}

static void check_named(struct module *m)
{
	uint8_t id[20], idlen = 0;
	uint64_t delta = 99;
	const char *name;

	ustacks_sym__load(m, id, &idlen);
	assert_true(m->fd >= 0);
	assert_true(m->nsegs > 0);
	assert_true(idlen > 0);		/* Debian's gcc writes a build id */
	name = ustacks_sym__symbol(m, target_offset(m) + 4, &delta);
	assert_non_null(name);
	assert_string_equal(name, "sym_probe_target");
	assert_int_equal(delta, 4);
	m->emitted = true;		/* the descriptor is closed with it */
	ustacks_sym__free(m);
	free(m);
}

/* the mapping process alive: its root */
static void test_live_process(void **state)
{
	(void)state;
	check_named(self_module((uint32_t)getpid(), 0));
}

/* the process gone: the recorder's own path, the same file */
static void test_process_gone(void **state)
{
	(void)state;
	check_named(self_module(gone_pid(), 0));
}

/* the process gone, the path now another file (another inode): not read,
 * no segments, no name */
static void test_process_gone_other_file(void **state)
{
	struct module *m = self_module(gone_pid(), 1);
	uint8_t id[20], idlen = 7;
	uint64_t delta = 0;

	(void)state;
	ustacks_sym__load(m, id, &idlen);
	assert_int_equal(m->fd, -1);
	assert_int_equal(m->nsegs, 0);
	assert_int_equal(idlen, 0);
	assert_null(ustacks_sym__symbol(m, 0x1000, &delta));
	ustacks_sym__free(m);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_process),
		cmocka_unit_test(test_process_gone),
		cmocka_unit_test(test_process_gone_other_file),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
