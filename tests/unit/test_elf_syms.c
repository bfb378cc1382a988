// SPDX-License-Identifier: MIT
/* Where the recorder puts its uprobes (user/record/probes/elf_syms.c): on a function's
 * first instruction, or past it when that is an endbr64, which the kernel
 * would single-step on every hit. Checked against the dynamic loader: the
 * code at the probe offset in the file must be the code the loaded
 * function runs at its address (+4 past an endbr64). The mock libcuda is
 * built for CET (every entry is an endbr64); the C library here is not. */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "record/probes/elf_syms.h"

#ifndef GT_MOCK_LIB
#define GT_MOCK_LIB ".output/mock/libcuda.so.1"
#endif

static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* n bytes of path at offset off */
static void file_bytes(const char *path, uint64_t off, unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* Resolves name in the loaded library handle and in its file; returns
 * how far past the entry the probe offset is (0 or 4), after checking the
 * file's bytes there against the loaded code. */
static int probe_shift(void *handle, const char *path, const char *name)
{
	const char *names[1] = { name };
	const unsigned char *code = dlsym(handle, name);
	unsigned char at_probe[16];
	uint64_t off = 0;
	int shift;

	assert_non_null(code);
	assert_int_equal(elf_syms__resolve(path, names, 1, &off), 1);
	assert_true(off > 0);
	shift = memcmp(code, endbr64, sizeof(endbr64)) ? 0 : 4;
	file_bytes(path, off, at_probe, sizeof(at_probe));
	/* a recorder running meanwhile (another test's) has its uprobes in
	 * the file: the kernel's int3 at each in every mapping of it, the file
	 * unchanged; every other byte must be the file's */
	{
		size_t same = 0;

		for (size_t i = 0; i < sizeof(at_probe); i++) {
			if (code[shift + i] != 0xcc || at_probe[i] == 0xcc)
				assert_int_equal(code[shift + i], at_probe[i]);
			same += code[shift + i] == at_probe[i];
		}
		assert_true(same >= sizeof(at_probe) - 4);
	}
	assert_memory_not_equal(at_probe, endbr64, sizeof(endbr64));
	return shift;
}

static void test_mock_entries_skip_endbr64(void **state)
{
	static const char *const fns[] = { "cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyHtoD_v2",
					   "cuStreamSynchronize" };
	const char *path = getenv("GT_MOCK_LIB") ? getenv("GT_MOCK_LIB") : GT_MOCK_LIB;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	(void)state;
	if (!h)
		fail_msg("cannot load the mock libcuda %s: %s (built by make mock)", path, dlerror());
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		assert_int_equal(probe_shift(h, path, fns[i]), 4);
	dlclose(h);
}

static void test_libc_entries_placed(void **state)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	const unsigned char *code;
	Dl_info info;

	(void)state;
	assert_non_null(h);
	code = dlsym(h, "free");
	assert_non_null(code);
	assert_true(dladdr(code, &info) && info.dli_fname);
	/* the library's own build decides; both kinds must be placed right */
	assert_int_equal(probe_shift(h, info.dli_fname, "free"), memcmp(code, endbr64, 4) ? 0 : 4);
	assert_int_equal(probe_shift(h, info.dli_fname, "malloc"), memcmp(dlsym(h, "malloc"), endbr64, 4) ? 0 : 4);
	dlclose(h);
}

static int count_fn(void *ctx, const char *name, uint64_t off)
{
	(void)name;
	(void)off;
	(*(int *)ctx)++;
	return 0;
}

static void test_bad_files(void **state)
{
	const char *names[1] = { "cuLaunchKernel" };
	uint64_t off = 1;
	int n = 0;

	(void)state;
	assert_int_equal(elf_syms__resolve("/nonexistent/libcuda.so.1", names, 1, &off), -2);
	assert_true(elf_syms__each("/etc/hostname", "cu", count_fn, &n) < 0);
	assert_int_equal(n, 0);
}

/* The instruction classes the budget calibrates: push (plain and REX.B),
 * relative jumps and calls, conditional jumps and a one-byte nop are
 * emulated by the kernel; anything else is single-stepped. */
static void test_insn_classes(void **state)
{
	static const struct { unsigned char b[4]; size_t len; enum uprobe_insn want; } cases[] = {
		{ { 0x55 }, 1, UPROBE_INSN_PUSH },		/* push %rbp */
		{ { 0x53 }, 1, UPROBE_INSN_PUSH },		/* push %rbx */
		{ { 0x41, 0x57 }, 2, UPROBE_INSN_PUSH },	/* push %r15 */
		{ { 0x41 }, 1, UPROBE_INSN_STEP },		/* a REX prefix cut off */
		{ { 0x48, 0x89, 0xf8 }, 3, UPROBE_INSN_STEP },	/* mov %rdi,%rax */
		{ { 0x48, 0x83, 0xec, 0x08 }, 4, UPROBE_INSN_STEP }, /* sub $8,%rsp */
		{ { 0xe9, 0, 0, 0 }, 4, UPROBE_INSN_BRANCH },	/* jmp rel32 */
		{ { 0xeb, 0x05 }, 2, UPROBE_INSN_BRANCH },	/* jmp rel8 */
		{ { 0xe8, 0, 0, 0 }, 4, UPROBE_INSN_BRANCH },	/* call rel32 */
		{ { 0x74, 0x02 }, 2, UPROBE_INSN_BRANCH },	/* je rel8 */
		{ { 0x0f, 0x84, 0, 0 }, 4, UPROBE_INSN_BRANCH },	/* je rel32 */
		{ { 0x0f, 0x1f, 0x44, 0 }, 4, UPROBE_INSN_STEP },	/* a long nop: stepped */
		{ { 0x90 }, 1, UPROBE_INSN_BRANCH },		/* nop */
		{ { 0xc3 }, 1, UPROBE_INSN_STEP },		/* ret */
		{ { 0 }, 0, UPROBE_INSN_STEP },			/* nothing readable */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(uprobe_insn__class(cases[i].b, cases[i].len), cases[i].want);
}

/* The classes read from a file at the probe offsets: the mock's entries
 * (past endbr64) agree with the bytes there; offset 0 is left alone. */
static void test_insn_classes_of_file(void **state)
{
	const char *path = getenv("GT_MOCK_LIB") ? getenv("GT_MOCK_LIB") : GT_MOCK_LIB;
	const char *names[2] = { "cuLaunchKernel", "cuInit" };
	uint64_t offs[3] = { 0 };
	uint8_t cls[3] = { 0xee, 0xee, 0xee };
	unsigned char code[4];
	int fd, i;

	(void)state;
	assert_int_equal(elf_syms__resolve(path, names, 2, offs), 2);
	assert_int_equal(elf_syms__insn_classes(path, offs, 3, cls), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pread(fd, code, 4, (off_t)offs[i]), 4);
		assert_int_equal(cls[i], uprobe_insn__class(code, 4));
	}
	close(fd);
	assert_int_equal(cls[2], 0xee);
	assert_int_equal(elf_syms__insn_classes("/nonexistent", offs, 2, cls), -2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mock_entries_skip_endbr64),
		cmocka_unit_test(test_libc_entries_placed),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_insn_classes),
		cmocka_unit_test(test_insn_classes_of_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
