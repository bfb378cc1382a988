// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder (user/decode/decode.c): pairing of entries and
 * exits per thread, incomplete and unmatched calls, process ends, callback
 * errors. Argument decoding is in test_decode_args.c, the entry hook and
 * the open-entry query in test_decode_hooks.c, naming in test_names.c.
 */
#include "decode_records.h"

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ------------------------------------------------------------ pairing */

static void test_pair_simple(void **state)
{
	struct gt_decoder *d = *state;

	call_abcd(d, 1000, 7, API(cuMemcpyHtoD_v2), 0xd000, 0x1000, 64, 0);
	assert_int_equal(S.n, 0);
	ret(d, 1250, 7, API(cuMemcpyHtoD_v2), 0);
	assert_int_equal(S.n, 1);
	assert_true(S.c[0].has_exit);
	assert_int_equal(S.c[0].ts, 1000);
	assert_int_equal(S.c[0].dur, 250);
	assert_int_equal(S.c[0].pid, 100);
	assert_int_equal(S.c[0].tid, 7);
	assert_int_equal(S.c[0].cpu, 3);
	assert_int_equal(S.c[0].api, API(cuMemcpyHtoD_v2));
	assert_int_equal(S.c[0].ret, 0);
	assert_int_equal(gt_decoder__stats(d)->calls, 1);
}

static void test_pair_nested(void **state)
{
	struct gt_decoder *d = *state;

	/* cuModuleLoadData calling cuCtxSynchronize inside (as a wrapper might) */
	call0(d, 10, 1, API(cuModuleLoadData));
	call0(d, 20, 1, API(cuCtxSynchronize));
	ret(d, 30, 1, API(cuCtxSynchronize), 0);
	ret(d, 40, 1, API(cuModuleLoadData), 0);
	assert_int_equal(S.n, 2);
	assert_int_equal(S.c[0].api, API(cuCtxSynchronize));
	assert_int_equal(S.c[0].dur, 10);
	assert_int_equal(S.c[1].api, API(cuModuleLoadData));
	assert_int_equal(S.c[1].dur, 30);
	assert_int_equal(S.c[1].type, GT_T_MODULE);

	/* same api nested: the exit pairs with the innermost */
	call0(d, 100, 1, API(cuInit));
	call0(d, 110, 1, API(cuInit));
	ret(d, 115, 1, API(cuInit), 0);
	ret(d, 200, 1, API(cuInit), 0);
	assert_int_equal(S.n, 4);
	assert_int_equal(S.c[2].ts, 110);
	assert_int_equal(S.c[3].ts, 100);
	assert_int_equal(S.c[3].dur, 100);
}

static void test_interleaved_threads(void **state)
{
	struct gt_decoder *d = *state;

	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 11, 2, API(cuCtxSynchronize));
	call0(d, 12, 3, API(cuCtxSynchronize));
	ret(d, 50, 2, API(cuCtxSynchronize), 0);
	ret(d, 60, 1, API(cuCtxSynchronize), 0);
	ret(d, 70, 3, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 3);
	assert_int_equal(S.c[0].tid, 2);
	assert_int_equal(S.c[0].dur, 39);
	assert_int_equal(S.c[1].tid, 1);
	assert_int_equal(S.c[1].dur, 50);
	assert_int_equal(S.c[2].tid, 3);
	assert_int_equal(S.c[2].dur, 58);
	assert_int_equal(gt_decoder__stats(d)->open_at_end, 0);
}

static void test_unmatched_exit(void **state)
{
	struct gt_decoder *d = *state;

	ret(d, 10, 1, API(cuInit), 0);			/* nothing open at all */
	call0(d, 20, 1, API(cuCtxSynchronize));
	ret(d, 30, 1, API(cuInit), 0);			/* thread open, other api */
	ret(d, 31, 2, API(cuCtxSynchronize), 0);	/* other thread */
	ret_pid(d, 32, 101, 1, API(cuCtxSynchronize), 0, 0, 0); /* same tid, other pid */
	assert_int_equal(S.n, 0);
	assert_int_equal(gt_decoder__stats(d)->unmatched_exits, 4);
	ret(d, 40, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 1);
	assert_int_equal(S.c[0].dur, 20);
}

static void test_lost_exit_incomplete(void **state)
{
	struct gt_decoder *d = *state;

	/* the exit of B is lost: A's exit closes A and gives up on B */
	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 20, 1, API(cuInit));
	call0(d, 25, 1, API(cuProfilerStart));
	ret(d, 30, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 3);
	assert_int_equal(S.c[0].api, API(cuInit));
	assert_false(S.c[0].has_exit);
	assert_int_equal(S.c[1].api, API(cuProfilerStart));
	assert_false(S.c[1].has_exit);
	assert_int_equal(S.c[2].api, API(cuCtxSynchronize));
	assert_true(S.c[2].has_exit);
	assert_int_equal(gt_decoder__stats(d)->open_at_end, 2);
	/* the stack is empty again: a later exit is unmatched */
	ret(d, 40, 1, API(cuInit), 0);
	assert_int_equal(gt_decoder__stats(d)->unmatched_exits, 1);
}

static void test_finish_incomplete(void **state)
{
	struct gt_decoder *d = *state;

	call0(d, 10, 1, API(cuCtxSynchronize));
	call_abcd(d, 15, 1, API(cuStreamSynchronize), 0x55, 0, 0, 0x55);
	call0(d, 20, 2, API(cuInit));
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_false(S.c[i].has_exit);
		assert_int_equal(S.c[i].dur, 0);
	}
	/* thread 1 oldest first, then thread 2 */
	assert_int_equal(S.c[0].ts, 10);
	assert_int_equal(S.c[1].ts, 15);
	assert_int_equal(S.c[1].stream, 0x55);
	assert_int_equal(S.c[2].ts, 20);
	assert_int_equal(gt_decoder__stats(d)->open_at_end, 3);
	assert_int_equal(gt_decoder__stats(d)->calls, 3);
	/* nothing left for a second finish */
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 3);
	/* all in flight at the end: nothing completed after them */
	for (int i = 0; i < 3; i++)
		assert_true(S.c[i].at_end);
}

/* at_end: only calls the trace ended inside, not an entry whose exit was
 * lost while its thread went on, nor one flushed by its process' exit */
/* Thread 1: a call whose exit was lost, then one in flight; thread 2: one
 * in flight. */
static void lost_and_in_flight(struct gt_decoder *d)
{
	call0(d, 10, 1, API(cuCtxSynchronize));		/* its exit lost ... */
	call0(d, 20, 1, API(cuInit));
	ret(d, 25, 1, API(cuInit), 0);			/* ... the thread went on */
	call0(d, 30, 1, API(cuStreamSynchronize));	/* in flight at the end */
	call0(d, 40, 2, API(cuCtxSynchronize));		/* another thread, in flight */
}

static void test_finish_at_end(void **state)
{
	struct gt_decoder *d = *state;

	lost_and_in_flight(d);
	call0(d, 50, 3, API(cuInit));
	proc_rec(d, GT_REC_EXIT, 60, 100, 1, "python3");	/* flushes pid 100's calls ... */
	assert_int_equal(S.n, 5);
	for (int i = 1; i < 5; i++)
		assert_false(S.c[i].at_end);			/* ... not at the end */
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 5);
}

static void test_finish_lost_vs_in_flight(void **state)
{
	struct gt_decoder *d = *state;

	lost_and_in_flight(d);
	assert_int_equal(S.n, 1);
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 4);
	assert_int_equal(S.c[1].ts, 10);
	assert_false(S.c[1].at_end);
	assert_false(S.c[1].has_exit);
	assert_int_equal(S.c[2].ts, 30);
	assert_true(S.c[2].at_end);
	assert_int_equal(S.c[3].ts, 40);
	assert_true(S.c[3].at_end);
}

static void test_process_exit_flush(void **state)
{
	struct gt_decoder *d = *state;

	call0(d, 10, 11, API(cuCtxSynchronize));		/* pid 100 */
	call0(d, 11, 12, API(cuInit));				/* pid 100 */
	ret_pid(d, 5, 200, 21, API(cuInit), 0, 0, 0);		/* unmatched, pid 200 */
	{
		struct gt_call *c = (void *)rbuf;

		memset(c, 0, sizeof(*c));
		hdr(&c->hdr, GT_REC_CALL, sizeof(*c), 12, 200, 21, API(cuInit));
		feed_ok(d, c);
	}
	proc_rec(d, GT_REC_EXIT, 50, 100, 1, "python3");
	assert_int_equal(S.n, 2);
	assert_int_equal(S.c[0].pid, 100);
	assert_false(S.c[0].has_exit);
	assert_int_equal(S.c[1].pid, 100);
	assert_false(S.c[1].has_exit);
	/* the calls went out before the exit record */
	assert_int_equal(S.nother, 1);
	assert_int_equal(S.other[0], GT_REC_EXIT);
	/* pid 200 is untouched until it exits too */
	ret_pid(d, 60, 200, 21, API(cuInit), 0, 0, 0);
	assert_int_equal(S.n, 3);
	assert_true(S.c[2].has_exit);
	assert_int_equal(S.c[2].pid, 200);
}

static void test_exec_flushes_and_forgets(void **state)
{
	struct gt_decoder *d = *state;

	call_str(d, 10, 100, 1, API(cuModuleGetFunction), 0x10, "k");
	ret_out(d, 11, 1, API(cuModuleGetFunction), 0xf1);
	call0(d, 20, 2, API(cuCtxSynchronize));
	proc_rec(d, GT_REC_EXEC, 30, 100, 1, "newprog");
	assert_int_equal(S.n, 2);
	assert_false(S.c[1].has_exit);
	/* the old image's handles mean nothing after exec */
	launch(d, 40, 100, 1, API(cuLaunchKernel), 0xf1, 0, 0);
	ret(d, 41, 1, API(cuLaunchKernel), 0);
	assert_string_equal(S.c[2].kernel, "unknown_kernel_0xf1");
	assert_string_equal(gt_decoder__process_name(d, 100), "newprog");
}

static void test_stack_overflow(void **state)
{
	struct gt_decoder *d = *state;

	for (int i = 0; i < 40; i++)
		call0(d, 100 + i, 1, API(cuInit));
	/* 32 fit; the 8 oldest were given up as incomplete, oldest first */
	assert_int_equal(S.n, 8);
	for (int i = 0; i < 8; i++) {
		assert_false(S.c[i].has_exit);
		assert_int_equal(S.c[i].ts, 100 + i);
	}
	for (int i = 39; i >= 8; i--)
		ret(d, 1000, 1, API(cuInit), 0);
	assert_int_equal(S.n, 40);
	for (int i = 8; i < 40; i++) {
		assert_true(S.c[i].has_exit);
		assert_int_equal(S.c[i].ts, 100 + 47 - i);
	}
	ret(d, 1001, 1, API(cuInit), 0);
	assert_int_equal(gt_decoder__stats(d)->unmatched_exits, 1);
}

static void test_many_threads(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_decoder_stats st;

	/* threads come and go: the per-thread state is recycled */
	S.count_only = true;
	for (uint32_t round = 0; round < 4; round++) {
		for (uint32_t t = 1; t <= 3000; t++)
			call0(d, round * 10000 + t, t, API(cuCtxSynchronize));
		for (uint32_t t = 1; t <= 3000; t++)
			ret(d, round * 10000 + 5000 + t, t, API(cuCtxSynchronize), 0);
	}
	assert_int_equal(S.n, 12000);
	st = *gt_decoder__stats(d);
	assert_int_equal(st.calls, 12000);
	assert_int_equal(st.unmatched_exits, 0);
	assert_int_equal(st.open_at_end, 0);
}

static void test_callback_error(void **state)
{
	struct gt_decoder *d = *state;

	S.fail_at = 1;
	call0(d, 10, 1, API(cuInit));
	assert_int_equal(gt_decoder__feed(d, (const void *)rbuf), 0);	/* a 2nd entry */
	{
		struct gt_ret *r = (void *)rbuf;

		memset(r, 0, sizeof(*r));
		hdr(&r->hdr, GT_REC_RET, sizeof(*r), 20, 100, 1, API(cuInit));
		assert_int_equal(gt_decoder__feed(d, &r->hdr), -5);
	}
	assert_int_equal(S.n, 1);
	S.fail_at = 0;
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pair_simple),
		T(test_pair_nested),
		T(test_interleaved_threads),
		T(test_unmatched_exit),
		T(test_lost_exit_incomplete),
		T(test_finish_incomplete),
		T(test_finish_at_end),
		T(test_finish_lost_vs_in_flight),
		T(test_process_exit_flush),
		T(test_exec_flushes_and_forgets),
		T(test_stack_overflow),
		T(test_many_threads),
		T(test_callback_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
