// SPDX-License-Identifier: MIT
/*
 * Unit tests of the .gtrace header's options (user/format/trace_file.c):
 * gt_file_info__option and __has_option (one key's value, one token),
 * __option_u64 (a decimal option) and __gpu_sms (the GPUs' SM counts of the
 * GPU-metrics probe's keys).  They need no file: the writer and reader are
 * test_trace_file.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "format/trace_file.h"

/* What readers ask of the header's options: one key's value, one token. */
static void test_header_options(void **state)
{
	struct gt_file_info info = {
		.options = "mode=command trace=cuda, scenario=trace  launch_exit=0 flag "
			   "empty= cupti=1 cupti=merged",
	};
	const char *v;
	size_t len = 99;

	(void)state;
	v = gt_file_info__option(&info, "mode", &len);
	assert_non_null(v);
	assert_int_equal(len, 7);
	assert_memory_equal(v, "command", 7);
	/* past a double space; a value is cut at the next space */
	v = gt_file_info__option(&info, "launch_exit", &len);
	assert_int_equal(len, 1);
	assert_memory_equal(v, "0", 1);
	/* a bare key and an empty value are present, with nothing in them */
	assert_non_null(gt_file_info__option(&info, "flag", &len));
	assert_int_equal(len, 0);
	assert_non_null(gt_file_info__option(&info, "empty", &len));
	assert_int_equal(len, 0);
	/* the first of a repeated key */
	v = gt_file_info__option(&info, "cupti", &len);
	assert_int_equal(len, 1);
	assert_memory_equal(v, "1", 1);
	/* whole keys only: neither a prefix nor a suffix of one */
	assert_null(gt_file_info__option(&info, "mod", &len));
	assert_null(gt_file_info__option(&info, "ode", &len));
	assert_null(gt_file_info__option(&info, "trace=cuda,", &len));
	assert_null(gt_file_info__option(&info, "nv_majors", NULL));

	assert_true(gt_file_info__has_option(&info, "cupti", "merged"));
	assert_true(gt_file_info__has_option(&info, "cupti", "1"));
	assert_true(gt_file_info__has_option(&info, "empty", ""));
	assert_false(gt_file_info__has_option(&info, "cupti", "merge"));
	assert_false(gt_file_info__has_option(&info, "mode", "comman"));
	assert_false(gt_file_info__has_option(&info, "scenario", "trace "));
	info.options = "cupti=mergedx xcupti=merged";
	assert_false(gt_file_info__has_option(&info, "cupti", "merged"));

	info.options = NULL;
	assert_null(gt_file_info__option(&info, "mode", &len));
	assert_false(gt_file_info__has_option(&info, "cupti", "merged"));
	assert_null(gt_file_info__option(NULL, "mode", &len));
	assert_false(gt_file_info__has_option(NULL, "cupti", "merged"));
}

/* A decimal option: its value; 0 for anything that is not one. */
static void test_option_u64(void **state)
{
	struct gt_file_info info = {
		.options = "a=42 b=18446744073709551615 c=18446744073709551616 d=12x e= f=-1 g=0 h",
	};

	(void)state;
	assert_int_equal(gt_file_info__option_u64(&info, "a"), 42);
	assert_true(gt_file_info__option_u64(&info, "b") == UINT64_MAX);
	assert_int_equal(gt_file_info__option_u64(&info, "c"), 0);	/* over UINT64_MAX */
	assert_int_equal(gt_file_info__option_u64(&info, "d"), 0);
	assert_int_equal(gt_file_info__option_u64(&info, "e"), 0);
	assert_int_equal(gt_file_info__option_u64(&info, "f"), 0);
	assert_int_equal(gt_file_info__option_u64(&info, "g"), 0);
	assert_int_equal(gt_file_info__option_u64(&info, "h"), 0);
	assert_int_equal(gt_file_info__option_u64(&info, "x"), 0);
	assert_int_equal(gt_file_info__option_u64(NULL, "a"), 0);
}

/* gt_file_info__gpu_sms of options: its figures, and the distinct counts
 * (want[0 .. ndistinct)). */
static void expect_sms(const char *options, uint32_t gpus, uint32_t known, uint32_t min, uint32_t ndistinct,
		       const uint32_t *want)
{
	struct gt_file_info info = { .options = options };
	struct gt_gpu_sms g;

	gt_file_info__gpu_sms(&info, &g);
	assert_int_equal(g.gpus, gpus);
	assert_int_equal(g.known, known);
	assert_true(g.min == min);
	assert_int_equal(g.ndistinct, ndistinct);
	for (uint32_t i = 0; i < ndistinct; i++)
		assert_int_equal(g.distinct[i], want[i]);
}

/* The GPUs' SM counts of the GPU-metrics probe's keys. */
static void test_gpu_sms(void **state)
{
	static const uint32_t two[] = { 132, 114 }, one[] = { 132 }, max[] = { UINT32_MAX };
	struct gt_gpu_sms g;

	(void)state;
	expect_sms("mode=command gpu_metrics=10 gpu_metrics_devs=3 gpu_metrics_dev0=0xfff03ff "
		   "gpu_metrics_dev0_sms=132 gpu_metrics_dev1=0x3fc gpu_metrics_dev1_mig=1 "
		   "gpu_metrics_dev2=0x3ff gpu_metrics_dev2_sms=114", 3, 2, 114, 2, two);
	/* the same count twice is one distinct count */
	expect_sms("gpu_metrics_dev0=0x1 gpu_metrics_dev0_sms=132 gpu_metrics_dev3=0x1 gpu_metrics_dev3_sms=132",
		   2, 2, 132, 1, one);
	/* counts that are not positive 32-bit numbers are not known; keys that
	 * only look alike are not GPUs */
	expect_sms("gpu_metrics_dev0=0x1 gpu_metrics_dev0_sms=0 gpu_metrics_dev1=0x1 "
		   "gpu_metrics_dev1_sms=4294967296 gpu_metrics_dev2=0x1 gpu_metrics_dev2_sms=1x "
		   "gpu_metrics_dev_sms=7 gpu_metrics_dev3_smsx=7 gpu_metrics_devs=3 gpu_metrics_dev4x=1 "
		   "xgpu_metrics_dev5_sms=7", 3, 0, 0, 0, NULL);
	/* a count without its GPU's mask still counts as a GPU */
	expect_sms("gpu_metrics_dev0_sms=4294967295", 1, 1, UINT32_MAX, 1, max);
	/* no probe (an older trace, no NVML), no options, no info */
	expect_sms("mode=command trace=cuda", 0, 0, 0, 0, NULL);
	expect_sms(NULL, 0, 0, 0, 0, NULL);
	gt_file_info__gpu_sms(NULL, &g);
	assert_int_equal(g.gpus + g.known + g.min + g.ndistinct, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_options),
		cmocka_unit_test(test_option_u64),
		cmocka_unit_test(test_gpu_sms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
