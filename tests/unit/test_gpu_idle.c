// SPDX-License-Identifier: MIT
/*
 * Unit tests of the GPU idle detector (user/daemon/gpu_idle.c): closed and
 * open gaps against the threshold, each reported once; records out of time
 * order within and across flushes; submissions (API records whose GPU record
 * has not come) holding the GPU busy, then expiring; nothing before the
 * first activity or for a process that is gone; the bound without marks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/gpu_idle.h"

#define MS	1000000ull
#define S	1000000000ull
#define T0	(100 * S)
#define THR	(500 * MS)

static struct gpu_idle_gap gaps[8];

/* A kernel [start, start + dur) of correlation corr. */
static void kernel(struct gpu_idle *g, uint64_t start, uint64_t dur, uint32_t corr)
{
	struct gt_gpu_kernel k = { .hdr = { .ts = start, .type = GT_REC_GPU_KERNEL, .size = sizeof(k) },
				   .dur = dur, .correlation = corr };

	assert_int_equal(gpu_idle__feed(g, &k.hdr), 0);
}

static void copy(struct gpu_idle *g, uint16_t type, uint64_t start, uint64_t dur, uint32_t corr)
{
	struct gt_gpu_copy c = { .hdr = { .ts = start, .type = type, .size = sizeof(c) },
				 .dur = dur, .correlation = corr };

	assert_int_equal(gpu_idle__feed(g, &c.hdr), 0);
}

/* The driver API record of a call at ts. */
static void api(struct gpu_idle *g, uint64_t ts, uint32_t corr)
{
	struct gt_gpu_api a = { .hdr = { .ts = ts, .type = GT_REC_GPU_API, .size = sizeof(a) },
				.dur = 1000, .correlation = corr };

	assert_int_equal(gpu_idle__feed(g, &a.hdr), 0);
}

static int mark(struct gpu_idle *g, uint64_t w)
{
	return gpu_idle__mark(g, w, true, gaps, 8);
}

static int setup(void **state)
{
	*state = gpu_idle__new(THR);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	gpu_idle__free(*state);
	return 0;
}

static void expect_gap(int i, uint64_t start, uint64_t end, bool open)
{
	assert_int_equal(gaps[i].start, start);
	assert_int_equal(gaps[i].end, end);
	assert_int_equal(gaps[i].open, open);
}

/* Between two activities of one flush: longer than the threshold, once. */
static void test_closed_gap(void **state)
{
	struct gpu_idle *g = *state;
	struct gpu_idle_stats st;

	kernel(g, T0, 10 * MS, 1);
	copy(g, GT_REC_GPU_MEMCPY, T0 + 10 * MS + 400 * MS, 1 * MS, 2);	/* 400 ms: no */
	copy(g, GT_REC_GPU_MEMSET, T0 + 411 * MS + 1500 * MS, 1 * MS, 3);	/* 1.5 s: yes */
	assert_int_equal(mark(g, T0 + 2 * S), 1);
	expect_gap(0, T0 + 411 * MS, T0 + 1911 * MS, false);
	/* the gap exactly the threshold long is not longer than it */
	kernel(g, T0 + 1912 * MS + THR, 1 * MS, 4);
	assert_int_equal(mark(g, T0 + 2800 * MS), 0);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.activities, 4);
	assert_int_equal(st.marks, 2);
	assert_int_equal(st.gaps, 1);
}

/* Still idle at the marks: reported at the first mark past the threshold,
 * not again at the next ones nor when the gap closes; the next gap is new. */
static void test_open_gap_once(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0, 5 * MS, 1);
	assert_int_equal(mark(g, T0 + 100 * MS), 0);
	assert_int_equal(mark(g, T0 + 400 * MS), 0);
	assert_int_equal(mark(g, T0 + 900 * MS), 1);
	expect_gap(0, T0 + 5 * MS, T0 + 900 * MS, true);
	assert_int_equal(mark(g, T0 + 1400 * MS), 0);
	kernel(g, T0 + 1505 * MS, 5 * MS, 2);
	assert_int_equal(mark(g, T0 + 1600 * MS), 0);
	/* busy again, then a second gap of its own */
	kernel(g, T0 + 2300 * MS, 5 * MS, 3);
	assert_int_equal(mark(g, T0 + 2400 * MS), 1);
	expect_gap(0, T0 + 1510 * MS, T0 + 2300 * MS, false);
}

/* Before any activity there is nothing to be idle after. */
static void test_no_work_yet(void **state)
{
	struct gpu_idle *g = *state;

	for (int i = 1; i <= 20; i++)
		assert_int_equal(mark(g, T0 + i * S), 0);
	api(g, T0 + 21 * S, 9);	/* a submission is not work done */
	assert_int_equal(mark(g, T0 + 22 * S), 0);
	assert_int_equal(mark(g, T0 + 30 * S), 0);
}

/* A process that is gone has no open gap; a closed one is still found. */
static void test_not_alive(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0, 1 * MS, 1);
	assert_int_equal(gpu_idle__mark(g, T0 + 2 * S, false, gaps, 8), 0);
	kernel(g, T0 + 3 * S, 1 * MS, 2);
	assert_int_equal(gpu_idle__mark(g, T0 + 4 * S, false, gaps, 8), 1);
	expect_gap(0, T0 + 1 * MS, T0 + 3 * S, false);
}

/* CUPTI's buffers per thread: a flush's records in any order, and one that
 * comes a flush late, inside what looked like a gap, are one timeline. */
static void test_out_of_order(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0 + 800 * MS, 10 * MS, 3);
	kernel(g, T0, 300 * MS, 1);
	kernel(g, T0 + 300 * MS, 500 * MS, 2);	/* [300, 800): no gap at all */
	assert_int_equal(mark(g, T0 + 850 * MS), 0);
	/* the next flush holds an activity that started before the last end */
	kernel(g, T0 + 805 * MS, 20 * MS, 4);
	kernel(g, T0 + 1200 * MS, 10 * MS, 5);
	assert_int_equal(mark(g, T0 + 1300 * MS), 0);
}

/* A late record inside a gap already reported open does not make a second
 * gap of what is left of it. */
static void test_late_record_in_reported_gap(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0, 1 * MS, 1);
	assert_int_equal(mark(g, T0 + 700 * MS), 1);
	kernel(g, T0 + 100 * MS, 1 * MS, 2);	/* handed over late */
	kernel(g, T0 + 1500 * MS, 1 * MS, 3);	/* [101 ms, 1.5 s]: the same idle time */
	assert_int_equal(mark(g, T0 + 1600 * MS), 0);
}

/* A submission whose work has not come yet (a long kernel): busy from the
 * call on, so no open gap, and the gap it closes is measured to the call. */
static void test_submission_is_busy(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0, 1 * MS, 1);
	api(g, T0 + 100 * MS, 2);		/* its kernel runs [0.2 s, 5 s) */
	for (int i = 1; i <= 9; i++)
		assert_int_equal(mark(g, T0 + i * 500 * MS), 0);
	kernel(g, T0 + 200 * MS, 4800 * MS, 2);
	assert_int_equal(mark(g, T0 + 5100 * MS), 0);
	/* after it: idle again, reported at the threshold */
	assert_int_equal(mark(g, T0 + 5600 * MS), 1);
	expect_gap(0, T0 + 5 * S, T0 + 5600 * MS, true);
}

/* A submission long after the last end closes the gap before its work comes;
 * its work then does not report it again. */
static void test_submission_closes_gap(void **state)
{
	struct gpu_idle *g = *state;

	kernel(g, T0, 1 * MS, 1);
	api(g, T0 + 400 * MS, 2);
	assert_int_equal(mark(g, T0 + 450 * MS), 0);
	api(g, T0 + 1 * S, 3);	/* long after the last end, while 2 is pending */
	assert_int_equal(mark(g, T0 + 1100 * MS), 0);
	kernel(g, T0 + 401 * MS, 1 * MS, 2);
	assert_int_equal(mark(g, T0 + 1200 * MS), 1);
	/* [402 ms, 1 s]: the submission of 3 ends it */
	expect_gap(0, T0 + 402 * MS, T0 + 1 * S, false);
	kernel(g, T0 + 1300 * MS, 1 * MS, 3);
	assert_int_equal(mark(g, T0 + 1400 * MS), 0);
}

/* A busy GPU on another stream: a long kernel submitted before short ones
 * ends keeps the time between them busy. */
static void test_long_kernel_on_other_stream(void **state)
{
	struct gpu_idle *g = *state;

	api(g, T0, 1);				/* long kernel, [0, 3 s) */
	kernel(g, T0 + 1 * MS, 1 * MS, 2);
	api(g, T0 + 1 * MS, 2);
	kernel(g, T0 + 2 * S, 1 * MS, 3);
	api(g, T0 + 2 * S, 3);
	assert_int_equal(mark(g, T0 + 2100 * MS), 0);
	kernel(g, T0, 3 * S, 1);
	assert_int_equal(mark(g, T0 + 3100 * MS), 0);
	assert_int_equal(mark(g, T0 + 3600 * MS), 1);
	expect_gap(0, T0 + 3 * S, T0 + 3600 * MS, true);
}

/* An API record that comes a flush after its GPU work is no submission. */
static void test_api_after_its_work(void **state)
{
	struct gpu_idle *g = *state;
	struct gpu_idle_stats st;

	kernel(g, T0, 1 * MS, 1);
	assert_int_equal(mark(g, T0 + 100 * MS), 0);
	api(g, T0 - 1 * MS, 1);
	assert_int_equal(mark(g, T0 + 200 * MS), 0);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(mark(g, T0 + 600 * MS), 1);
}

/* A call whose GPU work never comes stops counting as busy after
 * GPU_IDLE_PENDING_MAX_NS. */
static void test_submission_expires(void **state)
{
	struct gpu_idle *g = *state;
	struct gpu_idle_stats st;

	kernel(g, T0, 1 * MS, 1);
	api(g, T0 + 10 * MS, 2);
	assert_int_equal(mark(g, T0 + 30 * S), 0);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.pending, 1);
	assert_int_equal(mark(g, T0 + 10 * MS + GPU_IDLE_PENDING_MAX_NS + 1), 1);
	expect_gap(0, T0 + 1 * MS, T0 + 10 * MS + GPU_IDLE_PENDING_MAX_NS + 1, true);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.expired, 1);
}

/* A graph: one call, several kernels of its correlation. */
static void test_graph(void **state)
{
	struct gpu_idle *g = *state;
	struct gpu_idle_stats st;

	api(g, T0, 7);
	kernel(g, T0 + 1 * MS, 1 * MS, 7);
	kernel(g, T0 + 2 * MS, 1 * MS, 7);
	kernel(g, T0 + 3 * MS, 1 * MS, 7);
	assert_int_equal(mark(g, T0 + 10 * MS), 0);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(mark(g, T0 + 600 * MS), 1);
	expect_gap(0, T0 + 4 * MS, T0 + 600 * MS, true);
}

/* Records that are no activity are ignored. */
static void test_other_records(void **state)
{
	struct gpu_idle *g = *state;
	struct gt_nvtx n = { .hdr = { .ts = T0, .type = GT_REC_NVTX, .size = sizeof(n) }, .dur = S };
	struct gpu_idle_stats st;

	assert_int_equal(gpu_idle__feed(g, &n.hdr), 0);
	assert_int_equal(mark(g, T0 + 5 * S), 0);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.activities, 0);
}

/* An agent that writes no marks: what is held stays bounded, and nothing
 * is reported without a mark. */
static void test_no_marks_bounded(void **state)
{
	struct gpu_idle *g = *state;
	struct gpu_idle_stats st;

	for (uint64_t i = 0; i < GPU_IDLE_BATCH_MAX + 10; i++)
		kernel(g, T0 + i * S, 1 * MS, (uint32_t)i);
	gpu_idle__stats(g, &st);
	assert_int_equal(st.unmarked, 1);
	assert_int_equal(st.gaps, 0);
	/* the ten after the bound: their gaps are found at the next mark */
	assert_int_equal(mark(g, T0 + (GPU_IDLE_BATCH_MAX + 9) * S + 2 * MS), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_closed_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_gap_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_work_yet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_alive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_record_in_reported_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submission_is_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submission_closes_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_kernel_on_other_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_after_its_work, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submission_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_graph, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_marks_bounded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
