// SPDX-License-Identifier: MIT
/*
 * Unit tests of the record size table (user/format/records.c): every type
 * this build writes needs its whole struct, a record cut short of it is
 * refused, one grown at its end accepted, an unknown type needs its header;
 * the names of the trigger kinds and of the overhead reasons.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "format/records.h"

static void test_known_types(void **state)
{
	static const uint16_t known[] = {
		GT_REC_CALL, GT_REC_LAUNCH, GT_REC_RET, GT_REC_CALL_STR, GT_REC_RET_STR,
		GT_REC_LIBOPEN, GT_REC_EXEC, GT_REC_FORK, GT_REC_EXIT, GT_REC_IOCTL,
		GT_REC_OFFCPU, GT_REC_NAME, GT_REC_STATS, GT_REC_PROC_INFO,
		GT_REC_GPU_KERNEL, GT_REC_GPU_MEMCPY, GT_REC_GPU_MEMSET, GT_REC_GPU_API,
		GT_REC_NVTX, GT_REC_CUPTI_STATS, GT_REC_MERGE_STATS, GT_REC_RANGE, GT_REC_CAPTURE,
		GT_REC_TRIGGER, GT_REC_OVERHEAD, GT_REC_CUPTI_MARK, GT_REC_GPU_METRIC,
		GT_REC_LIBLOAD,
	};

	(void)state;
	/* each carries more than a header, in whole 8-byte units as written */
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t n = gt_rec__min_size(known[i]);

		assert_true(n > sizeof(struct gt_hdr));
		assert_int_equal(n % 8, 0);
	}
	assert_int_equal(gt_rec__min_size(GT_REC_LAUNCH), sizeof(struct gt_launch));
	assert_int_equal(gt_rec__min_size(GT_REC_GPU_MEMSET), sizeof(struct gt_gpu_copy));
	assert_int_equal(gt_rec__min_size(GT_REC_FORK), sizeof(struct gt_proc_evt));
	assert_int_equal(gt_rec__min_size(GT_REC_RANGE), sizeof(struct gt_capture));
	assert_int_equal(gt_rec__min_size(GT_REC_CAPTURE), sizeof(struct gt_capture));
	assert_int_equal(gt_rec__min_size(GT_REC_TRIGGER), sizeof(struct gt_trigger));
	/* cut was appended: a record of 96 bytes, from before, is whole */
	assert_int_equal(gt_rec__min_size(GT_REC_OVERHEAD), 96);
	assert_int_equal(offsetof(struct gt_overhead, cut), 96);
	assert_int_equal(sizeof(struct gt_overhead), 104);
	assert_int_equal(gt_rec__min_size(GT_REC_GPU_METRIC), sizeof(struct gt_gpu_metric));
	assert_int_equal(sizeof(struct gt_gpu_metric), 40);
	assert_int_equal(gt_rec__min_size(GT_REC_LIBLOAD), sizeof(struct gt_libload));
	assert_int_equal(offsetof(struct gt_libload, path), 64);
	/* a type of a later version: only its header can be read */
	assert_int_equal(gt_rec__min_size(20), sizeof(struct gt_hdr));
	assert_int_equal(gt_rec__min_size(GT_REC_MAX), sizeof(struct gt_hdr));
	assert_int_equal(gt_rec__min_size(0), sizeof(struct gt_hdr));
}

static void test_size_ok(void **state)
{
	struct gt_hdr h = { .type = GT_REC_RET };

	(void)state;
	h.size = sizeof(struct gt_ret);
	assert_true(gt_rec__size_ok(&h));
	h.size = sizeof(struct gt_ret) + 8;	/* grown at its end */
	assert_true(gt_rec__size_ok(&h));
	h.size = sizeof(struct gt_ret) - 8;	/* cut short */
	assert_false(gt_rec__size_ok(&h));
	h.size = sizeof(struct gt_hdr);
	assert_false(gt_rec__size_ok(&h));
	h.type = 20;
	assert_true(gt_rec__size_ok(&h));
}

/* gt_overhead's cut, appended: read where the record holds it, else 0. */
static void test_overhead_cut(void **state)
{
	struct gt_overhead o = { .hdr = { .type = GT_REC_OVERHEAD, .size = sizeof(o) }, .cut = 7 };

	(void)state;
	assert_true(gt_rec__size_ok(&o.hdr));
	assert_int_equal(gt_overhead__cut(&o), 7);
	o.hdr.size = 96;	/* a build's before the field */
	assert_true(gt_rec__size_ok(&o.hdr));
	assert_int_equal(gt_overhead__cut(&o), 0);
	o.hdr.size = 88;	/* cut short */
	assert_false(gt_rec__size_ok(&o.hdr));
}

/* Every kind of struct gt_trigger has a name; another value is "unknown". */
static void test_trigger_kinds(void **state)
{
	(void)state;
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_SYNC), "sync");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_ERROR), "error");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_EXIT), "exit");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_PROFILER), "profiler");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_SIGNAL), "signal");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_GPU_IDLE), "gpu-idle");
	assert_string_equal(gt_trigger_kind__name(0), "unknown");
	assert_string_equal(gt_trigger_kind__name(GT_TRIG_LAST + 1), "unknown");
	assert_string_equal(gt_trigger_kind__name(UINT32_MAX), "unknown");
}

/* Every reason of struct gt_overhead has a name; another value is "unknown". */
static void test_overhead_reasons(void **state)
{
	(void)state;
	assert_string_equal(gt_overhead_reason__name(GT_OVH_ESTIMATE), "estimate");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_CALIBRATED), "calibrated");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_DUTY_DOWN), "duty_down");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_DUTY_UP), "duty_up");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_OVER), "over_budget");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_SHED), "shed");
	assert_string_equal(gt_overhead_reason__name(GT_OVH_RESTORE), "restore");
	assert_string_equal(gt_overhead_reason__name(GT_OVH__COUNT), "unknown");
	assert_string_equal(gt_overhead_reason__name(UINT32_MAX), "unknown");
}

/* Every GPU metric id in use has a name and a unit; an id not in use has
 * neither. */
static void test_gpu_metric_names(void **state)
{
	(void)state;
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_GPU_UTIL), "gpu_util");
	assert_string_equal(gt_gpu_metric__unit(GT_GPUM_GPU_UTIL), "%");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_MEM_USED), "mem_used");
	assert_string_equal(gt_gpu_metric__unit(GT_GPUM_MEM_USED), "B");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_POWER), "power");
	assert_string_equal(gt_gpu_metric__unit(GT_GPUM_POWER), "W");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_TENSOR_ACTIVE), "tensor_active");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_DRAM_BW), "dram_bw");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_NVLINK_RX), "nvlink_rx");
	assert_string_equal(gt_gpu_metric__unit(GT_GPUM_NVLINK_RX), "MiB/s");
	for (uint32_t id = 0; id < GT_GPUM_MAX; id++)
		if (gt_gpu_metric__name(id))
			assert_true(gt_gpu_metric__unit(id)[0] != 0);
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_PROC_MEM), "proc_mem_used");
	assert_string_equal(gt_gpu_metric__unit(GT_GPUM_PROC_MEM), "B");
	assert_string_equal(gt_gpu_metric__name(GT_GPUM_LOST), "gpu_lost");
	assert_null(gt_gpu_metric__name(10));
	assert_null(gt_gpu_metric__name(14));
	assert_null(gt_gpu_metric__name(GT_GPUM_MAX));
	assert_null(gt_gpu_metric__name(UINT32_MAX));
	assert_string_equal(gt_gpu_metric__unit(UINT32_MAX), "");
}

/* A libcuda load's outcomes by name, and the gap each leaves. */
static void test_libload(void **state)
{
	struct gt_libload l = { .hdr = { .type = GT_REC_LIBLOAD, .ts = 100 } };
	uint64_t from = 0, to = 0;

	(void)state;
	assert_string_equal(gt_libload_outcome__name(GT_LL_HELD), "held");
	assert_string_equal(gt_libload_outcome__name(GT_LL_JOB), "job");
	assert_string_equal(gt_libload_outcome__name(GT_LL_OFF), "off");
	assert_string_equal(gt_libload_outcome__name(0), "unknown");
	assert_string_equal(gt_libload_outcome__name(GT_LL__COUNT), "unknown");
	assert_string_equal(gt_libload_outcome__text(GT_LL_TTY), "not held: in the foreground of its terminal");
	assert_string_equal(gt_libload_outcome__text(99), "unknown outcome");
	/* held until the probes: none */
	l.outcome = GT_LL_HELD;
	l.end_ts = 150;
	l.cont_ts = 160;
	assert_false(gt_libload__gap(&l, 1000, &from, &to));
	/* continued at the bound before them: from the continuation */
	l.outcome = GT_LL_TIMEOUT;
	l.end_ts = 300;
	l.cont_ts = 200;
	assert_true(gt_libload__gap(&l, 1000, &from, &to));
	assert_int_equal(from, 200);
	assert_int_equal(to, 300);
	/* not held: from the open to the probes */
	l.outcome = GT_LL_JOB;
	l.cont_ts = 0;
	assert_true(gt_libload__gap(&l, 1000, &from, &to));
	assert_int_equal(from, 100);
	assert_int_equal(to, 300);
	/* never probed: to the end given */
	l.outcome = GT_LL_ATTACH_FAILED;
	l.end_ts = 0;
	assert_true(gt_libload__gap(&l, 1000, &from, &to));
	assert_int_equal(to, 1000);
	/* probes in place before the open: none */
	l.outcome = GT_LL_STALE;
	l.end_ts = 100;
	assert_false(gt_libload__gap(&l, 1000, &from, &to));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_types),
		cmocka_unit_test(test_size_ok),
		cmocka_unit_test(test_overhead_cut),
		cmocka_unit_test(test_trigger_kinds),
		cmocka_unit_test(test_overhead_reasons),
		cmocka_unit_test(test_gpu_metric_names),
		cmocka_unit_test(test_libload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
