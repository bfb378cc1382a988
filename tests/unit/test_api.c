// SPDX-License-Identifier: MIT
/*
 * Unit tests of the api table (user/format/api.c): lookups by number and by
 * name, out-of-range answers, the names of call types and copy kinds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "format/api.h"

#define API(sym) GT_API_##sym

static void test_tables(void **state)
{
	(void)state;
	assert_string_equal(gt_api__name(API(cuLaunchKernel_ptsz)), "cuLaunchKernel_ptsz");
	assert_null(gt_api__name(0));
	assert_null(gt_api__name(GT_API__COUNT));
	assert_null(gt_api__info(GT_API__COUNT + 7));
	assert_int_equal(gt_api__by_name("cuMemsetD2D32Async"), API(cuMemsetD2D32Async));
	assert_int_equal(gt_api__by_name("cuNoSuchThing"), -1);
	assert_int_equal(gt_api__by_name(NULL), -1);
	assert_int_equal(gt_api__class(API(cuMemcpy3D_v2)), GT_CLS_MEMCPY3D);
	assert_int_equal(gt_api__class(9999), GT_CLS_NONE);
	assert_int_equal(gt_api__info(API(cuMemAllocPitch_v2))->b, 3);
	assert_int_equal(gt_api__info(API(cuFuncGetName))->ret, GT_R_RET_STR);
	for (unsigned i = 1; i < GT_API__COUNT; i++)
		assert_int_equal(gt_api__by_name(gt_api__name(i)), i);

	assert_string_equal(gt_call_type__name(GT_T_LAUNCH), "launch");
	assert_string_equal(gt_call_type__name(GT_T_CONTEXT), "context");
	assert_string_equal(gt_call_type__name(GT_T_INIT), "init");
	assert_string_equal(gt_call_type__name(GT_T__COUNT), "unknown");
	for (int t = 0; t < GT_T__COUNT; t++)
		assert_non_null(gt_call_type__name(t));
	assert_string_equal(gt_copy_kind__name(GT_COPY_HTOD), "HtoD");
	assert_string_equal(gt_copy_kind__name(GT_COPY_PTOP), "PtoP");
	assert_string_equal(gt_copy_kind__name(GT_COPY_ATOA), "AtoA");
	assert_string_equal(gt_copy_kind__name(GT_COPY_UNKNOWN), "Unknown");
	assert_string_equal(gt_copy_kind__name(GT_COPY__COUNT), "Unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
