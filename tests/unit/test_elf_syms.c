// SPDX-License-Identifier: MIT
/* Where the recorder puts its uprobes (user/record/elf_syms.c): on a function's
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
#include "record/elf_syms.h"

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
	assert_memory_equal(at_probe, code + shift, sizeof(at_probe));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mock_entries_skip_endbr64),
		cmocka_unit_test(test_libc_entries_placed),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
