// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder (user/decode/decode.c): pairing of entries and exits,
 * argument decoding of every api class from synthetic records laid out by
 * the table's indices, records it does not know.  Naming is in test_names.c.
 */
#include "decode_records.h"

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

/* ------------------------------------------------------------ classes */

static void test_memcpy(void **state)
{
	struct gt_decoder *d = *state;
	const struct gt_callrec *c;

	call_abcd(d, 10, 1, API(cuMemcpyHtoDAsync_v2), 0xd0000, 0x70000, 4096, 0x5e);
	ret(d, 20, 1, API(cuMemcpyHtoDAsync_v2), 0);
	c = &S.c[0];
	assert_int_equal(c->type, GT_T_MEMCPY);
	assert_int_equal(c->bytes, 4096);
	assert_int_equal(c->kind, GT_COPY_HTOD);
	assert_int_equal(c->ptr, 0xd0000);
	assert_int_equal(c->src, 0x70000);
	assert_true(c->has_stream);
	assert_int_equal(c->stream, 0x5e);

	call_abcd(d, 30, 1, API(cuMemcpyDtoH_v2), 0x70000, 0xd0000, 8, 0);
	ret(d, 40, 1, API(cuMemcpyDtoH_v2), 0);
	c = &S.c[1];
	assert_int_equal(c->kind, GT_COPY_DTOH);
	assert_int_equal(c->bytes, 8);
	assert_false(c->has_stream);

	/* peer: (dst, dstCtx, src, srcCtx, bytes, stream) */
	{
		uint64_t a[6] = { 0xd1, 0xc1, 0xd2, 0xc2, 1 << 20, 0x77 };

		call6(d, 50, 1, API(cuMemcpyPeerAsync), a);
		ret(d, 60, 1, API(cuMemcpyPeerAsync), 0);
	}
	c = &S.c[2];
	assert_int_equal(c->kind, GT_COPY_PTOP);
	assert_int_equal(c->ptr, 0xd1);
	assert_int_equal(c->src, 0xd2);
	assert_int_equal(c->bytes, 1 << 20);
	assert_int_equal(c->stream, 0x77);

	call_abcd(d, 70, 1, API(cuMemcpy), 0xa, 0xb, 3, 0);
	ret(d, 80, 1, API(cuMemcpy), 0);
	assert_int_equal(S.c[3].kind, GT_COPY_DEFAULT);
	assert_string_equal(gt_copy_kind__name(S.c[3].kind), "Default");
}

static void test_memcpy2d_kinds(void **state)
{
	struct gt_decoder *d = *state;
	static const struct { uint64_t src, dst; enum gt_copy_kind k; } cases[] = {
		{ 1, 2, GT_COPY_HTOD }, { 2, 1, GT_COPY_DTOH }, { 2, 2, GT_COPY_DTOD },
		{ 1, 1, GT_COPY_HTOH }, { 1, 3, GT_COPY_HTOA }, { 3, 1, GT_COPY_ATOH },
		{ 2, 3, GT_COPY_DTOA }, { 3, 2, GT_COPY_ATOD }, { 3, 3, GT_COPY_ATOA },
		{ 4, 2, GT_COPY_DEFAULT }, { 1, 4, GT_COPY_DEFAULT }, { 0, 2, GT_COPY_UNKNOWN },
		{ 9, 1, GT_COPY_UNKNOWN },
	};
	int n = sizeof(cases) / sizeof(cases[0]);

	for (int i = 0; i < n; i++) {
		uint64_t a[6] = { cases[i].src, cases[i].dst, 1000 + i, 0x5, 0x51, 0xd1 };

		call6(d, 10 * i, 1, API(cuMemcpy2DAsync_v2), a);
		ret(d, 10 * i + 5, 1, API(cuMemcpy2DAsync_v2), 0);
		assert_int_equal(S.c[i].kind, cases[i].k);
		assert_int_equal(S.c[i].bytes, 1000 + i);
		assert_true(S.c[i].has_stream);
		assert_int_equal(S.c[i].stream, 0x5);
		assert_int_equal(S.c[i].src, 0x51);
		assert_int_equal(S.c[i].ptr, 0xd1);
	}
	{
		uint64_t a[6] = { 2, 2, 12345, 0, 0x61, 0xd2 };

		call6(d, 500, 1, API(cuMemcpy3D_v2), a);
		ret(d, 600, 1, API(cuMemcpy3D_v2), 0);
	}
	assert_int_equal(S.c[n].kind, GT_COPY_DTOD);
	assert_int_equal(S.c[n].bytes, 12345);
	assert_false(S.c[n].has_stream);
	assert_int_equal(S.c[n].type, GT_T_MEMCPY);
}

static void test_memset(void **state)
{
	struct gt_decoder *d = *state;

	/* D2D32Async(dst, pitch, value, width, height, stream) */
	{
		uint64_t a[6] = { 0xd0, 512, 0xffffffff, 100, 30, 0x9 };

		call6(d, 10, 1, API(cuMemsetD2D32Async), a);
		ret(d, 20, 1, API(cuMemsetD2D32Async), 0);
	}
	assert_int_equal(S.c[0].type, GT_T_MEMSET);
	assert_int_equal(S.c[0].bytes, 100 * 30 * 4);
	assert_int_equal(S.c[0].ptr, 0xd0);
	assert_true(S.c[0].has_stream);
	assert_int_equal(S.c[0].stream, 0x9);

	/* D16(dst, value, count) */
	{
		uint64_t a[6] = { 0xd8, 7, 1000, 0, 0, 0 };

		call6(d, 30, 1, API(cuMemsetD16_v2), a);
		ret(d, 40, 1, API(cuMemsetD16_v2), 0);
	}
	assert_int_equal(S.c[1].bytes, 2000);
	assert_false(S.c[1].has_stream);

	call_abcd(d, 50, 1, API(cuMemsetD8Async), 0xd9, 33, 0, 0xa);
	ret(d, 60, 1, API(cuMemsetD8Async), 0);
	assert_int_equal(S.c[2].bytes, 33);
	assert_int_equal(S.c[2].stream, 0xa);
}

static void test_alloc_free(void **state)
{
	struct gt_decoder *d = *state;

	call_abcd(d, 10, 1, API(cuMemAlloc_v2), 1 << 20, 0, 0, 0);
	ret_out(d, 20, 1, API(cuMemAlloc_v2), 0x7f0000000000);
	assert_int_equal(S.c[0].type, GT_T_ALLOC);
	assert_int_equal(S.c[0].bytes, 1 << 20);
	assert_true(S.c[0].out_valid);
	assert_int_equal(S.c[0].ptr, 0x7f0000000000);
	assert_false(S.c[0].has_stream);

	/* AllocPitch(dptr, pitch, width, height, elem) */
	{
		uint64_t a[6] = { 0x1000, 0x1008, 1000, 20, 4, 0 };

		call6(d, 30, 1, API(cuMemAllocPitch_v2), a);
		ret_out(d, 40, 1, API(cuMemAllocPitch_v2), 0xabc000);
	}
	assert_int_equal(S.c[1].bytes, 20000);
	assert_int_equal(S.c[1].ptr, 0xabc000);

	/* a failed allocation returned no pointer */
	call_abcd(d, 50, 1, API(cuMemAllocAsync), 64, 0, 0, 0x33);
	ret_pid(d, 60, 100, 1, API(cuMemAllocAsync), 2, 0, 0);
	assert_int_equal(S.c[2].ret, 2);
	assert_false(S.c[2].out_valid);
	assert_int_equal(S.c[2].ptr, 0);
	assert_true(S.c[2].has_stream);
	assert_int_equal(S.c[2].stream, 0x33);

	call_abcd(d, 70, 1, API(cuMemFreeAsync), 0x7f0000000000, 0, 0, 0x33);
	ret(d, 80, 1, API(cuMemFreeAsync), 0);
	assert_int_equal(S.c[3].type, GT_T_FREE);
	assert_int_equal(S.c[3].handle, 0x7f0000000000);
	assert_int_equal(S.c[3].ptr, 0x7f0000000000);
	assert_int_equal(S.c[3].stream, 0x33);
}

static void test_sync_classes(void **state)
{
	struct gt_decoder *d = *state;

	call_abcd(d, 10, 1, API(cuStreamSynchronize_ptsz), 0x51, 0, 0, 0x51);
	ret(d, 20, 1, API(cuStreamSynchronize_ptsz), 0);
	assert_int_equal(S.c[0].type, GT_T_SYNC);
	assert_true(S.c[0].has_stream);
	assert_int_equal(S.c[0].stream, 0x51);
	assert_int_equal(S.c[0].handle, 0x51);

	call_abcd(d, 30, 1, API(cuEventSynchronize), 0xe1, 0, 0, 0);
	ret(d, 40, 1, API(cuEventSynchronize), 0);
	assert_false(S.c[1].has_stream);
	assert_int_equal(S.c[1].handle, 0xe1);

	call_abcd(d, 50, 1, API(cuStreamWaitEvent), 0x52, 0xe2, 0, 0x52);
	ret(d, 60, 1, API(cuStreamWaitEvent), 0);
	assert_int_equal(S.c[2].handle, 0x52);
	assert_int_equal(S.c[2].handle2, 0xe2);
	assert_int_equal(S.c[2].stream, 0x52);

	call_abcd(d, 70, 1, API(cuEventRecord), 0xe3, 0x53, 0, 0x53);
	ret(d, 80, 1, API(cuEventRecord), 0);
	assert_int_equal(S.c[3].handle, 0xe3);
	assert_int_equal(S.c[3].handle2, 0x53);
	assert_int_equal(S.c[3].stream, 0x53);

	call_abcd(d, 90, 1, API(cuCtxSynchronize_v2), 0xc1, 0, 0, 0);
	ret(d, 95, 1, API(cuCtxSynchronize_v2), 0);
	assert_int_equal(S.c[4].handle, 0xc1);

	/* a query that says "not ready" (CUDA_ERROR_NOT_READY = 600) */
	call_abcd(d, 100, 1, API(cuStreamQuery), 0x54, 0, 0, 0x54);
	ret(d, 101, 1, API(cuStreamQuery), 600);
	assert_int_equal(S.c[5].type, GT_T_SYNC);
	assert_int_equal(S.c[5].ret, 600);
	assert_int_equal(S.c[5].stream, 0x54);
}

static void test_module_ctx_stream_event(void **state)
{
	struct gt_decoder *d = *state;

	call_str(d, 10, 100, 1, API(cuModuleLoad), 0, "/opt/k.cubin");
	ret_out(d, 20, 1, API(cuModuleLoad), 0x3000);
	assert_int_equal(S.c[0].type, GT_T_MODULE);
	assert_true(S.c[0].out_valid);
	assert_int_equal(S.c[0].out, 0x3000);
	assert_int_equal(S.c[0].handle, 0x3000);
	assert_string_equal(S.c[0].str, "/opt/k.cubin");

	call_str(d, 30, 100, 1, API(cuModuleGetFunction), 0x3000, "_Z3foov");
	ret_out(d, 40, 1, API(cuModuleGetFunction), 0x4000);
	assert_int_equal(S.c[1].handle, 0x3000);
	assert_int_equal(S.c[1].out, 0x4000);
	assert_string_equal(S.c[1].str, "_Z3foov");

	call_abcd(d, 50, 1, API(cuModuleUnload), 0x3000, 0, 0, 0);
	ret(d, 60, 1, API(cuModuleUnload), 0);
	assert_int_equal(S.c[2].handle, 0x3000);
	assert_false(S.c[2].out_valid);

	/* cuCtxCreate_v2(pctx, flags, dev): a is the device, the handle comes out */
	call_abcd(d, 70, 1, API(cuCtxCreate_v2), 0, 0, 0, 0);
	ret_out(d, 80, 1, API(cuCtxCreate_v2), 0xc0);
	assert_int_equal(S.c[3].type, GT_T_CONTEXT);
	assert_int_equal(S.c[3].handle, 0xc0);
	call_abcd(d, 90, 1, API(cuCtxCreate_v2), 0, 0, 0, 0);
	ret_pid(d, 95, 100, 1, API(cuCtxCreate_v2), 201, 0, 0);
	assert_false(S.c[4].out_valid);
	assert_int_equal(S.c[4].handle, 0);

	call0(d, 100, 1, API(cuStreamCreate));
	ret_out(d, 110, 1, API(cuStreamCreate), 0x5a);
	assert_int_equal(S.c[5].type, GT_T_STREAM);
	assert_int_equal(S.c[5].handle, 0x5a);
	call_abcd(d, 120, 1, API(cuStreamDestroy_v2), 0x5a, 0, 0, 0);
	ret(d, 130, 1, API(cuStreamDestroy_v2), 0);
	assert_int_equal(S.c[6].handle, 0x5a);

	call0(d, 140, 1, API(cuEventCreate));
	ret_out(d, 150, 1, API(cuEventCreate), 0xe5);
	assert_int_equal(S.c[7].type, GT_T_EVENT);
	assert_int_equal(S.c[7].handle, 0xe5);

	call0(d, 160, 1, API(cuProfilerStart));
	ret(d, 170, 1, API(cuProfilerStart), 0);
	assert_int_equal(S.c[8].type, GT_T_MARKER);
	call0(d, 180, 1, API(cuInit));
	ret(d, 190, 1, API(cuInit), 100);
	assert_int_equal(S.c[9].type, GT_T_INIT);
	assert_int_equal(S.c[9].ret, 100);
}

static void test_launch_fields(void **state)
{
	struct gt_decoder *d = *state;

	launch(d, 10, 100, 1, API(cuLaunchKernel_ptsz), 0xf00, 0x5, 0);
	ret(d, 14, 1, API(cuLaunchKernel_ptsz), 0);
	assert_int_equal(S.c[0].type, GT_T_LAUNCH);
	assert_int_equal(S.c[0].handle, 0xf00);
	assert_int_equal(S.c[0].stream, 0x5);
	assert_true(S.c[0].has_stream);
	assert_int_equal(S.c[0].grid[0], 64);
	assert_int_equal(S.c[0].grid[1], 2);
	assert_int_equal(S.c[0].block[0], 256);
	assert_int_equal(S.c[0].shmem, 1024);
	assert_false(S.c[0].graph);
	assert_int_equal(S.c[0].launch_flags & GT_LAUNCH_COOPERATIVE, 0);

	/* cooperative by api, even when BPF did not flag it */
	launch(d, 20, 100, 1, API(cuLaunchCooperativeKernel), 0xf00, 0, 0);
	ret(d, 24, 1, API(cuLaunchCooperativeKernel), 0);
	assert_true(S.c[1].launch_flags & GT_LAUNCH_COOPERATIVE);

	launch(d, 30, 100, 1, API(cuLaunchKernelEx), 0xf00, 0, GT_LAUNCH_EX | GT_LAUNCH_COOPERATIVE);
	ret(d, 34, 1, API(cuLaunchKernelEx), 0);
	assert_int_equal(S.c[2].launch_flags, GT_LAUNCH_EX | GT_LAUNCH_COOPERATIVE);

	/* graph: no kernel name */
	call_abcd(d, 40, 1, API(cuGraphLaunch), 0x6e, 0, 0, 0x5);
	ret(d, 44, 1, API(cuGraphLaunch), 0);
	assert_int_equal(S.c[3].type, GT_T_LAUNCH);
	assert_true(S.c[3].graph);
	assert_int_equal(S.c[3].handle, 0x6e);
	assert_int_equal(S.c[3].stream, 0x5);
	assert_null(S.c[3].kernel);
	assert_int_equal(gt_decoder__stats(d)->placeholder_names, 3);
}

static void test_unknown_records(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_hdr *h = (void *)rbuf;

	memset(rbuf, 0, 64);
	hdr(h, 50, 32, 1, 100, 1, 0);			/* a type from the future */
	feed_ok(d, h);
	assert_int_equal(S.nother, 1);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 1);

	hdr(h, GT_REC_CALL, sizeof(struct gt_call), 1, 100, 1, GT_API__COUNT);
	feed_ok(d, h);					/* api out of range */
	hdr(h, GT_REC_RET, sizeof(struct gt_ret), 1, 100, 1, 0);
	feed_ok(d, h);					/* api 0 */
	hdr(h, GT_REC_CALL, 32, 1, 100, 1, API(cuInit));
	feed_ok(d, h);					/* too short */
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 4);
	assert_int_equal(S.nother, 1);
	assert_int_equal(S.n, 0);

	/* stats and libopen pass through uncounted */
	memset(rbuf, 0, sizeof(struct gt_stats));
	hdr(h, GT_REC_STATS, sizeof(struct gt_stats), 1, 0, 0, 0);
	feed_ok(d, h);
	hdr(h, GT_REC_LIBOPEN, sizeof(struct gt_path) + 8, 1, 100, 1, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 3);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 4);
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 0);
}

/* A name the recorder cut at the record's limit says so, in the call's
 * string and in the kernel name of the launches that use it. */
static void test_cut_name(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_call_str *c = (void *)rbuf;

	memset(rbuf, 0, sizeof(rbuf));
	hdr(&c->hdr, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + 8), 10, 100, 1, API(cuModuleGetFunction));
	c->args[gt_api__info(API(cuModuleGetFunction))->a] = 0x3000;
	c->len = 8;
	c->truncated = 1;
	memcpy(c->str, "_Z3fooi", 8);
	feed_ok(d, c);
	ret_out(d, 20, 1, API(cuModuleGetFunction), 0x4000);
	assert_string_equal(S.c[0].str, "_Z3fooi" GT_STR_CUT_MARK);
	launch(d, 30, 100, 1, API(cuLaunchKernel), 0x4000, 0, GT_LAUNCH_NO_EXIT);
	assert_int_equal(S.n, 2);
	assert_string_equal(S.c[1].mangled, "_Z3fooi" GT_STR_CUT_MARK);
	assert_non_null(strstr(S.c[1].kernel, GT_STR_CUT_MARK));

	/* not cut: no mark */
	call_str(d, 40, 100, 1, API(cuModuleGetFunction), 0x3000, "_Z3barv");
	ret_out(d, 50, 1, API(cuModuleGetFunction), 0x4001);
	assert_string_equal(S.c[2].str, "_Z3barv");
}

static void test_bad_string_len(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_call_str *c = (void *)rbuf;

	/* len claims more than the record holds, and no NUL inside */
	memset(rbuf, 'x', sizeof(rbuf));
	hdr(&c->hdr, GT_REC_CALL_STR, sizeof(*c) + 8, 10, 100, 1, API(cuModuleLoad));
	memset(c->args, 0, sizeof(c->args));
	c->len = 4000;
	feed_ok(d, c);
	ret_out(d, 20, 1, API(cuModuleLoad), 0x3000);
	assert_string_equal(S.c[0].str, "xxxxxxxx");
}

/* The records of the CUPTI agent and the merger go to on_other, uncounted,
 * when they are long enough for their type; kernel names demangle once. */
static void test_gpu_records(void **state)
{
	/* size: the fixed part of the record (a multiple of 8) */
	static const struct { uint16_t type; size_t size; } recs[] = {
		{ GT_REC_GPU_KERNEL, sizeof(struct gt_gpu_kernel) },
		{ GT_REC_GPU_MEMCPY, sizeof(struct gt_gpu_copy) },
		{ GT_REC_GPU_MEMSET, sizeof(struct gt_gpu_copy) },
		{ GT_REC_GPU_API, sizeof(struct gt_gpu_api) },
		{ GT_REC_NVTX, sizeof(struct gt_nvtx) },
		{ GT_REC_CUPTI_STATS, sizeof(struct gt_cupti_stats) },
		{ GT_REC_MERGE_STATS, sizeof(struct gt_merge_stats) },
	};
	struct gt_decoder *d = *state;
	struct gt_gpu_kernel *k = (void *)rbuf;
	const char *a, *b, *mangled;

	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		memset(rbuf, 0, 256);
		hdr((void *)rbuf, recs[i].type, recs[i].size, 10 + i, 100, 0, 0);
		feed_ok(d, rbuf);
		assert_int_equal(S.other[i], recs[i].type);
		/* shorter than its struct: refused and counted */
		hdr((void *)rbuf, recs[i].type, recs[i].size - 8, 10 + i, 100, 0, 0);
		feed_ok(d, rbuf);
	}
	assert_int_equal(S.nother, 7);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 7);

	/* demangled once: the same string for the same name */
	a = gt_decoder__demangle(d, "_Z6vecAddPfS_S_i");
	b = gt_decoder__demangle(d, "_Z6vecAddPfS_S_i");
	assert_string_equal(a, "vecAdd(float*, float*, float*, int)");
	assert_ptr_equal(a, b);
	assert_string_equal(gt_decoder__demangle(d, "relu"), "relu");
	assert_null(gt_decoder__demangle(d, NULL));

	/* a record's name: the same string again; none, or one cut by the
	 * record's end */
	memset(rbuf, 0, 256);
	hdr(&k->hdr, GT_REC_GPU_KERNEL, sizeof(*k) + 24, 1, 100, 0, 0);
	k->len = 17;
	memcpy(k->name, "_Z6vecAddPfS_S_i", 17);
	assert_ptr_equal(gt_decoder__gpu_kernel_name(d, k, &mangled), a);
	assert_string_equal(mangled, "_Z6vecAddPfS_S_i");
	k->len = 0;
	assert_string_equal(gt_decoder__gpu_kernel_name(d, k, &mangled), "unknown_kernel");
	assert_null(mangled);
	memset(k->name, 'x', 24);
	k->len = 4000;
	assert_string_equal(gt_decoder__gpu_kernel_name(d, k, &mangled),
			    "xxxxxxxxxxxxxxxxxxxxxxxx");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ------------------------------------------------------------ entry hook */

static uint64_t nentries;

static int number_entry(void *ctx, const struct gt_hdr *rec, uint64_t *cookie)
{
	(void)ctx;
	assert_true(gt_decoder__takes_entry(rec));
	*cookie = ++nentries * 100 + rec->tid;
	return 0;
}

/* Each call comes back with what the hook set for its own entry, whether
 * it completed, was left open by a nested exit or never waits for one. */
static void test_entry_hook(void **state)
{
	struct gt_decoder *d = *state;

	nentries = 0;
	gt_decoder__set_entry_cb(d, number_entry);
	call0(d, 10, 1, API(cuCtxSynchronize));			/* entry 1 */
	call0(d, 11, 2, API(cuCtxSynchronize));			/* entry 2, other thread */
	call0(d, 12, 1, API(cuStreamSynchronize));		/* entry 3, exit lost */
	ret(d, 20, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 2);
	assert_int_equal(S.c[0].cookie, 301);	/* the nested one first, incomplete */
	assert_false(S.c[0].has_exit);
	assert_int_equal(S.c[1].cookie, 101);
	assert_true(S.c[1].has_exit);
	assert_int_equal(S.c[1].dur, 10);
	/* a launch recorded without its exit: emitted at once, hooked first */
	launch(d, 30, 100, 1, API(cuLaunchKernel), 0xf1, 0, GT_LAUNCH_NO_EXIT);
	assert_int_equal(S.n, 3);
	assert_int_equal(S.c[2].cookie, 401);
	assert_true(S.c[2].entry_only);
	/* an exit without its entry and an api this build does not know: no hook */
	ret(d, 40, 3, API(cuCtxSynchronize), 0);
	call0(d, 41, 3, GT_API__COUNT + 5);
	assert_int_equal(nentries, 4);
	ret(d, 50, 2, API(cuCtxSynchronize), 1);
	assert_int_equal(S.c[3].cookie, 202);
	assert_int_equal(S.c[3].ret, 1);
	/* without a hook, calls carry none */
	gt_decoder__set_entry_cb(d, NULL);
	call0(d, 60, 1, API(cuCtxSynchronize));
	ret(d, 70, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.c[4].cookie, 0);
}

/* ------------------------------------------------------------ open entries */

/* The entry times a thread has open, as "10 11 12", and their cookies. */
struct open_list {
	char ts[512];
	uint64_t cookie[40];
	int n;
	uint64_t set_ts, set_to;	/* give the entry of set_ts cookie set_to */
	int stop_at;			/* return 7 at this entry (1-based) */
};

static int list_open(void *ctx, const struct gt_open_entry *e)
{
	struct open_list *o = ctx;
	size_t len = strlen(o->ts);

	assert_true(o->n < 40);
	if (e->ts == o->set_ts)
		*e->cookie = o->set_to;
	snprintf(o->ts + len, sizeof(o->ts) - len, "%s%llu", len ? " " : "",
		 (unsigned long long)e->ts);
	o->cookie[o->n++] = *e->cookie;
	return o->n == o->stop_at ? 7 : 0;
}

static const char *open_ts(struct gt_decoder *d, uint32_t pid, uint32_t tid)
{
	static struct open_list o;

	memset(&o, 0, sizeof(o));
	assert_int_equal(gt_decoder__open_entries(d, pid, tid, list_open, &o), 0);
	return o.ts;
}

/* What is open on a thread, oldest first, per (pid, tid); a cookie changed
 * through the query comes back with the call. */
static void test_open_entries(void **state)
{
	struct gt_decoder *d = *state;
	struct open_list o;

	gt_decoder__set_entry_cb(d, number_entry);
	nentries = 0;
	assert_string_equal(open_ts(d, 100, 1), "");
	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 11, 1, API(cuStreamSynchronize));
	call0(d, 12, 2, API(cuCtxSynchronize));
	/* emitted at once, never open */
	launch(d, 13, 100, 1, API(cuLaunchKernel), 0xf1, 0, GT_LAUNCH_NO_EXIT);
	assert_string_equal(open_ts(d, 100, 1), "10 11");
	assert_string_equal(open_ts(d, 100, 2), "12");
	assert_string_equal(open_ts(d, 101, 1), "");	/* same tid, other pid */

	memset(&o, 0, sizeof(o));
	o.set_ts = 11;
	o.set_to = 77;
	assert_int_equal(gt_decoder__open_entries(d, 100, 1, list_open, &o), 0);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.cookie[0], 101);	/* the hook's */
	assert_int_equal(o.cookie[1], 77);

	memset(&o, 0, sizeof(o));
	o.stop_at = 1;
	assert_int_equal(gt_decoder__open_entries(d, 100, 1, list_open, &o), 7);
	assert_int_equal(o.n, 1);

	ret(d, 20, 1, API(cuStreamSynchronize), 0);
	assert_int_equal(S.c[S.n - 1].cookie, 77);
	assert_string_equal(open_ts(d, 100, 1), "10");
	ret(d, 30, 1, API(cuCtxSynchronize), 0);
	assert_string_equal(open_ts(d, 100, 1), "");
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_string_equal(open_ts(d, 100, 2), "");
}

/* What each call saw open on its thread while it was emitted. */
static char open_at_call[MAX_CALLS][512];

static int call_seeing_open(void *ctx, const struct gt_callrec *c)
{
	struct seen *s = ctx;

	assert_true(s->n < MAX_CALLS);
	snprintf(open_at_call[s->n], sizeof(open_at_call[0]), "%s", open_ts(s->d, c->pid, c->tid));
	return on_call(ctx, c);
}

static int setup_seeing_open(void **state)
{
	memset(&S, 0, sizeof(S));
	S.d = gt_decoder__new(call_seeing_open, on_other, &S);
	assert_non_null(S.d);
	*state = S.d;
	return 0;
}

/* When one record makes several calls (an exit with lost exits nested in
 * it, a process end, the end of the trace, a stack too deep), each call
 * leaves what is open as it is emitted, not before: what is open is what
 * is still to come. */
static void test_open_while_emitting(void **state)
{
	struct gt_decoder *d = *state;

	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 20, 1, API(cuStreamSynchronize));
	call0(d, 30, 1, API(cuEventSynchronize));
	call0(d, 40, 1, API(cuStreamQuery));
	ret(d, 50, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 4);
	assert_int_equal(S.c[0].ts, 20);
	assert_string_equal(open_at_call[0], "10 30 40");
	assert_string_equal(open_at_call[1], "10 40");
	assert_string_equal(open_at_call[2], "10");
	assert_int_equal(S.c[3].ts, 10);
	assert_true(S.c[3].has_exit);
	assert_string_equal(open_at_call[3], "");

	/* a match below the top, with one below it still open */
	call0(d, 60, 1, API(cuCtxSynchronize));
	call0(d, 70, 1, API(cuStreamSynchronize));
	call0(d, 80, 1, API(cuEventSynchronize));
	ret(d, 90, 1, API(cuStreamSynchronize), 0);
	assert_int_equal(S.n, 6);
	assert_int_equal(S.c[4].ts, 80);
	assert_string_equal(open_at_call[4], "60 70");
	assert_int_equal(S.c[5].ts, 70);
	assert_string_equal(open_at_call[5], "60");
	assert_string_equal(open_ts(d, 100, 1), "60");

	/* the process ends: its calls go oldest first */
	call0(d, 100, 1, API(cuStreamSynchronize));
	call0(d, 110, 2, API(cuCtxSynchronize));
	proc_rec(d, GT_REC_EXIT, 120, 100, 1, "python3");
	assert_int_equal(S.n, 9);
	assert_int_equal(S.c[6].ts, 60);
	assert_string_equal(open_at_call[6], "100");
	assert_string_equal(open_at_call[7], "");
	assert_int_equal(S.c[8].tid, 2);
	assert_string_equal(open_at_call[8], "");

	/* the end of the trace */
	call0(d, 200, 3, API(cuCtxSynchronize));
	call0(d, 210, 3, API(cuStreamSynchronize));
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 11);
	assert_string_equal(open_at_call[9], "210");
	assert_string_equal(open_at_call[10], "");
}

/* Past STACK_MAX the oldest is given up while the entry that pushed it
 * out is already open; the strings of the entries moved stay their own. */
static void test_open_when_too_deep(void **state)
{
	struct gt_decoder *d = *state;
	char want[512] = "", path[32];
	size_t len;

	for (int i = 0; i < 33; i++) {
		snprintf(path, sizeof(path), "/m%d", i);
		call_str(d, 100 + i, 100, 1, API(cuModuleLoad), 0, path);
	}
	assert_int_equal(S.n, 1);
	assert_int_equal(S.c[0].ts, 100);
	assert_string_equal(S.c[0].str, "/m0");
	for (int i = 1; i < 33; i++) {
		len = strlen(want);
		snprintf(want + len, sizeof(want) - len, "%s%d", len ? " " : "", 100 + i);
	}
	assert_string_equal(open_at_call[0], want);
	assert_string_equal(open_ts(d, 100, 1), want);
	/* 34th entry: reuses the buffer of /m1, which must still be its own until it goes */
	call_str(d, 133, 100, 1, API(cuModuleLoad), 0, "/a-longer-path-than-any-before");
	assert_int_equal(S.n, 2);
	assert_string_equal(S.c[1].str, "/m1");
	for (int i = 33; i >= 2; i--) {
		ret_out(d, 1000, 1, API(cuModuleLoad), 0x10);
		snprintf(path, sizeof(path), "/m%d", i);
		assert_string_equal(S.c[S.n - 1].str,
				    i == 33 ? "/a-longer-path-than-any-before" : path);
	}
	assert_string_equal(open_ts(d, 100, 1), "");
}

static void test_takes_entry(void **state)
{
	_Alignas(8) unsigned char b[sizeof(struct gt_call_str)] = {0};
	struct gt_hdr *h = (void *)b;

	(void)state;
	h->api = API(cuCtxSynchronize);
	h->type = GT_REC_CALL;
	h->size = sizeof(struct gt_call);
	assert_true(gt_decoder__takes_entry(h));
	h->size = sizeof(struct gt_call) - 8;	/* cut short */
	assert_false(gt_decoder__takes_entry(h));
	h->type = GT_REC_CALL_STR;
	h->size = sizeof(struct gt_call_str);
	assert_true(gt_decoder__takes_entry(h));
	h->type = GT_REC_RET;			/* exits are not entries */
	h->size = sizeof(struct gt_ret);
	assert_false(gt_decoder__takes_entry(h));
	h->type = GT_REC_CALL;
	h->size = sizeof(struct gt_call);
	h->api = GT_API__COUNT;
	assert_false(gt_decoder__takes_entry(h));
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
		T(test_process_exit_flush),
		T(test_exec_flushes_and_forgets),
		T(test_stack_overflow),
		T(test_many_threads),
		T(test_callback_error),
		T(test_memcpy),
		T(test_memcpy2d_kinds),
		T(test_memset),
		T(test_alloc_free),
		T(test_sync_classes),
		T(test_module_ctx_stream_event),
		T(test_launch_fields),
		T(test_unknown_records),
		T(test_bad_string_len),
		T(test_cut_name),
		T(test_gpu_records),
		T(test_entry_hook),
		T(test_open_entries),
		cmocka_unit_test_setup_teardown(test_open_while_emitting, setup_seeing_open, teardown),
		cmocka_unit_test_setup_teardown(test_open_when_too_deep, setup_seeing_open, teardown),
		cmocka_unit_test(test_takes_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
