// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder's argument decoding (user/decode/decode.c): every
 * api class from synthetic records laid out by the table's indices, records
 * it does not know, damaged string lengths, cut names, GPU records.
 */
#include "decode_records.h"

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

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
	hdr(h, 62, 32, 1, 100, 1, 0);			/* a type from the future */
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
	/* so do capture ranges and windows, whole; one cut short is counted */
	memset(rbuf, 0, sizeof(struct gt_capture));
	hdr(h, GT_REC_RANGE, sizeof(struct gt_capture), 7, 100, 1, 0);
	feed_ok(d, h);
	hdr(h, GT_REC_CAPTURE, sizeof(struct gt_capture), 5, 0, 0, 0);
	feed_ok(d, h);
	hdr(h, GT_REC_CAPTURE, sizeof(struct gt_capture) - 8, 9, 0, 0, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 5);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 5);
	/* and the daemon's overhead records, whole; one cut short is counted
	 * as malformed and passed on to no one */
	memset(rbuf, 0, sizeof(struct gt_overhead));
	hdr(h, GT_REC_OVERHEAD, sizeof(struct gt_overhead), 6, 100, 101, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 6);
	assert_int_equal(S.other[5], GT_REC_OVERHEAD);
	hdr(h, GT_REC_OVERHEAD, offsetof(struct gt_overhead, cut) - 8, 9, 100, 101, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 6);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 6);
	/* and the sampler's GPU metric records, the same way */
	memset(rbuf, 0, sizeof(struct gt_gpu_metric));
	hdr(h, GT_REC_GPU_METRIC, sizeof(struct gt_gpu_metric), 6, 0, 0, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 7);
	assert_int_equal(S.other[6], GT_REC_GPU_METRIC);
	hdr(h, GT_REC_GPU_METRIC, sizeof(struct gt_gpu_metric) - 8, 9, 0, 0, 0);
	feed_ok(d, h);
	assert_int_equal(S.nother, 7);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 7);
	/* the latest ts of the records fed (not of the ones cut short) */
	assert_int_equal(gt_decoder__last_ts(d), 7);
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

	/* cut inside a character (the recorder cuts bytes): the part of it
	 * goes, the mark stays; a whole one at the end is kept */
	static const struct {
		const char *in, *want;
	} cuts[] = {
		{ "caf\xc3", "caf" }, { "x\xe2\x82", "x" }, { "y\xf0\x9f\x9a", "y" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" }, { "z\xe2\x82\xac", "z\xe2\x82\xac" },
	};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t n = strlen(cuts[i].in) + 1;
		char want[64];

		memset(rbuf, 0, sizeof(rbuf));
		hdr(&c->hdr, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), 60 + 20 * i, 100, 1,
		    API(cuModuleGetFunction));
		c->args[gt_api__info(API(cuModuleGetFunction))->a] = 0x3000;
		c->len = (uint16_t)n;
		c->truncated = 1;
		memcpy(c->str, cuts[i].in, n);
		feed_ok(d, c);
		ret_out(d, 70 + 20 * i, 1, API(cuModuleGetFunction), 0x4002 + i);
		snprintf(want, sizeof(want), "%s" GT_STR_CUT_MARK, cuts[i].want);
		assert_string_equal(S.c[S.n - 1].str, want);
	}
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
		/* an older agent's counters end before flags */
		{ GT_REC_CUPTI_STATS, offsetof(struct gt_cupti_stats, flags) },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
