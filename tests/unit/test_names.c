// SPDX-License-Identifier: MIT
/*
 * Unit tests of kernel and process naming in the decoder (user/decode/names.c):
 * each way a kernel gets its name, the placeholder, process and thread names.
 */
#include "decode_records.h"

/* ------------------------------------------------------------ naming */

static void test_name_get_func(void **state)
{
	struct gt_decoder *d = *state;

	call_str(d, 10, 100, 1, API(cuModuleGetFunction), 0x3000, "_Z6vecAddPfS_S_i");
	ret_out(d, 20, 1, API(cuModuleGetFunction), 0xf1);
	launch(d, 30, 100, 1, API(cuLaunchKernel), 0xf1, 0, 0);
	ret(d, 35, 1, API(cuLaunchKernel), 0);
	launch(d, 40, 100, 2, API(cuLaunchKernel), 0xf1, 0, 0);
	ret(d, 45, 2, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[1].kernel, "vecAdd(float*, float*, float*, int)");
	assert_string_equal(S.c[1].mangled, "_Z6vecAddPfS_S_i");
	assert_string_equal(S.c[2].kernel, "vecAdd(float*, float*, float*, int)");
	assert_int_equal(gt_decoder__stats(d)->placeholder_names, 0);

	/* same handle value in another process: not that name */
	launch(d, 50, 101, 9, API(cuLaunchKernel), 0xf1, 0, 0);
	ret_pid(d, 55, 101, 9, API(cuLaunchKernel), 0, 0, 0);
	assert_string_equal(S.c[3].kernel, "unknown_kernel_0xf1");
	assert_null(S.c[3].mangled);
	assert_int_equal(gt_decoder__stats(d)->placeholder_names, 1);

	/* a failed lookup teaches nothing */
	call_str(d, 60, 100, 1, API(cuLibraryGetKernel), 0x3100, "other");
	ret_pid(d, 70, 100, 1, API(cuLibraryGetKernel), 500, 0xf2, GT_RET_OUT);
	launch(d, 80, 100, 1, API(cuLaunchKernel), 0xf2, 0, 0);
	ret(d, 85, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[5].kernel, "unknown_kernel_0xf2");
}

static void test_name_kernel_func(void **state)
{
	struct gt_decoder *d = *state;

	call_str(d, 10, 100, 1, API(cuLibraryGetKernel), 0x3100, "_Z4axpyIfEvT_PKS0_PS0_");
	ret_out(d, 20, 1, API(cuLibraryGetKernel), 0xa1);
	call_abcd(d, 30, 1, API(cuKernelGetFunction), 0xa1, 0, 0, 0);
	ret_out(d, 40, 1, API(cuKernelGetFunction), 0xb1);
	assert_string_equal(S.c[1].str, "_Z4axpyIfEvT_PKS0_PS0_");
	assert_int_equal(S.c[1].handle, 0xa1);
	assert_int_equal(S.c[1].out, 0xb1);
	launch(d, 50, 100, 1, API(cuLaunchKernel), 0xb1, 0, 0);
	ret(d, 55, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[2].kernel, "void axpy<float>(float, float const*, float*)");
	/* the kernel handle itself launches under the same name */
	launch(d, 60, 100, 1, API(cuLaunchKernel), 0xa1, 0, 0);
	ret(d, 65, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[3].mangled, "_Z4axpyIfEvT_PKS0_PS0_");

	/* a kernel of unknown name: function stays unknown, no str */
	call_abcd(d, 70, 1, API(cuKernelGetFunction), 0xa9, 0, 0, 0);
	ret_out(d, 80, 1, API(cuKernelGetFunction), 0xb9);
	assert_null(S.c[4].str);
}

static void test_name_func_name(void **state)
{
	struct gt_decoder *d = *state;

	call_abcd(d, 10, 1, API(cuFuncGetName), 0xc1, 0, 0, 0);
	ret_str(d, 20, 1, API(cuFuncGetName), 0, "my_kernel");
	assert_int_equal(S.c[0].type, GT_T_MODULE);
	assert_int_equal(S.c[0].handle, 0xc1);
	assert_string_equal(S.c[0].str, "my_kernel");
	assert_false(S.c[0].out_valid);
	launch(d, 30, 100, 1, API(cuLaunchKernel), 0xc1, 0, 0);
	ret(d, 35, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[1].kernel, "my_kernel");
	assert_string_equal(S.c[1].mangled, "my_kernel");

	/* a failed cuKernelGetName teaches nothing */
	call_abcd(d, 40, 1, API(cuKernelGetName), 0xc2, 0, 0, 0);
	ret_str(d, 50, 1, API(cuKernelGetName), 1, "junk");
	launch(d, 60, 100, 1, API(cuLaunchKernel), 0xc2, 0, 0);
	ret(d, 65, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[3].kernel, "unknown_kernel_0xc2");
}

static void test_name_kernel_mem(void **state)
{
	struct gt_decoder *d = *state;

	name_rec(d, 5, 100, GT_NAME_KERNEL_MEM, 0xd1, "_Z5scalePdd");
	assert_int_equal(S.nother, 1);
	assert_int_equal(S.other[0], GT_REC_NAME);
	launch(d, 10, 100, 1, API(cuLaunchKernel), 0xd1, 0, 0);
	ret(d, 15, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[0].kernel, "scale(double*, double)");

	/* a naming call's answer is not overridden by a recovered one */
	call_abcd(d, 20, 1, API(cuFuncGetName), 0xd2, 0, 0, 0);
	ret_str(d, 30, 1, API(cuFuncGetName), 0, "right");
	name_rec(d, 35, 100, GT_NAME_KERNEL_MEM, 0xd2, "wrong");
	launch(d, 40, 100, 1, API(cuLaunchKernel), 0xd2, 0, 0);
	ret(d, 45, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[2].kernel, "right");

	/* names go with the process */
	proc_rec(d, GT_REC_EXIT, 50, 100, 1, "app");
	launch(d, 60, 100, 1, API(cuLaunchKernel), 0xd1, 0, 0);
	ret(d, 65, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[3].kernel, "unknown_kernel_0xd1");
}

static void test_process_names(void **state)
{
	struct gt_decoder *d = *state;

	assert_null(gt_decoder__process_name(d, 100));
	proc_rec(d, GT_REC_EXEC, 10, 100, 1, "python3");
	assert_string_equal(gt_decoder__process_name(d, 100), "python3");
	name_rec(d, 20, 100, GT_NAME_PROCESS, 100, "python3 train.py --epochs 3");
	assert_string_equal(gt_decoder__process_name(d, 100), "python3 train.py --epochs 3");
	/* a 16-byte comm without NUL */
	proc_rec(d, GT_REC_FORK, 30, 101, 100, "0123456789abcdef");
	assert_string_equal(gt_decoder__process_name(d, 101), "python3 train.py --epochs 3");
	proc_rec(d, GT_REC_EXEC, 40, 101, 100, "0123456789abcdef");
	assert_string_equal(gt_decoder__process_name(d, 101), "0123456789abcdef");
	/* a command line read before the exec is stale */
	name_rec(d, 35, 101, GT_NAME_PROCESS, 101, "stale");
	assert_string_equal(gt_decoder__process_name(d, 101), "0123456789abcdef");
	name_rec(d, 40, 101, GT_NAME_THREAD, 102, "worker-1");
	assert_string_equal(gt_decoder__thread_name(d, 102), "worker-1");
	assert_null(gt_decoder__thread_name(d, 103));
	/* still known while the exit is handed on */
	proc_rec(d, GT_REC_EXIT, 50, 100, 1, "python3");
	assert_string_equal(S.pname_at_exit, "python3 train.py --epochs 3");
	assert_int_equal(S.nother, 7);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_name_get_func),
		T(test_name_kernel_func),
		T(test_name_func_name),
		T(test_name_kernel_mem),
		T(test_process_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
