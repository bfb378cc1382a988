// SPDX-License-Identifier: MIT
/*
 * Unit tests of symbol names (user/lib/demangle.c): demangling, what stays
 * as it is, and the check of names recovered from driver memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/demangle.h"

static void test_demangle(void **state)
{
	char buf[256], small[8];

	(void)state;
	assert_string_equal(gt_demangle("_Z6vecAddPfS_S_i", buf, sizeof(buf)),
			    "vecAdd(float*, float*, float*, int)");
	assert_string_equal(gt_demangle("_Z4axpyIfEvT_PKS0_PS0_", buf, sizeof(buf)),
			    "void axpy<float>(float, float const*, float*)");
	assert_string_equal(gt_demangle("_ZN2ns6kernelILi4EEEvPi", buf, sizeof(buf)),
			    "void ns::kernel<4>(int*)");
	assert_string_equal(gt_demangle("my_kernel", buf, sizeof(buf)), "my_kernel");
	/* plain names that spell a type encoding stay as they are */
	assert_string_equal(gt_demangle("i", buf, sizeof(buf)), "i");
	assert_string_equal(gt_demangle("_Z$$garbage!!", buf, sizeof(buf)), "_Z$$garbage!!");
	assert_string_equal(gt_demangle("", buf, sizeof(buf)), "");
	assert_string_equal(gt_demangle(NULL, buf, sizeof(buf)), "");
	/* cut to the buffer, always terminated */
	assert_ptr_equal(gt_demangle("_Z6vecAddPfS_S_i", small, sizeof(small)), small);
	assert_string_equal(small, "vecAdd(");
}

static void test_demangle_dup(void **state)
{
	char *dm;

	(void)state;
	dm = gt_demangle__dup("_Z5scalePdd");
	assert_string_equal(dm, "scale(double*, double)");
	free(dm);
	/* NULL tells the caller to keep the name as it is */
	assert_null(gt_demangle__dup("i"));
	assert_null(gt_demangle__dup("my_kernel"));
	assert_null(gt_demangle__dup("_Z$$garbage!!"));
	assert_null(gt_demangle__dup(NULL));
}

static void test_symbol_name_valid(void **state)
{
	char big[GT_SYMBOL_NAME_MAX + 8];

	(void)state;
	assert_true(gt_symbol_name_valid("_Z6vecAddPfS_S_i", 64));
	assert_true(gt_symbol_name_valid("my_kernel", 64));
	assert_true(gt_symbol_name_valid("_ZN5cutlass6KernelINS_4gemmEEEvNT_6ParamsE", 4096));
	assert_true(gt_symbol_name_valid("kernel.cold$1", 64));
	assert_false(gt_symbol_name_valid("", 64));
	assert_false(gt_symbol_name_valid(NULL, 64));
	assert_false(gt_symbol_name_valid("9lives", 64));
	assert_false(gt_symbol_name_valid("has space", 64));
	assert_false(gt_symbol_name_valid("vecAdd(float*)", 64));
	assert_false(gt_symbol_name_valid("tab\tname", 64));
	assert_false(gt_symbol_name_valid("\xc3\xa9t\xc3\xa9", 64));
	/* no NUL within maxlen: the read ran short */
	assert_false(gt_symbol_name_valid("abcdef", 3));
	assert_true(gt_symbol_name_valid("abcdef", 7));
	assert_false(gt_symbol_name_valid("abc", 0));
	memset(big, 'a', sizeof(big));
	big[GT_SYMBOL_NAME_MAX - 1] = '\0';	/* 4095 bytes: the longest allowed */
	assert_true(gt_symbol_name_valid(big, sizeof(big)));
	big[GT_SYMBOL_NAME_MAX - 1] = 'a';
	big[GT_SYMBOL_NAME_MAX] = '\0';		/* 4096 bytes: too long */
	assert_false(gt_symbol_name_valid(big, sizeof(big)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_demangle_dup),
		cmocka_unit_test(test_symbol_name_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
