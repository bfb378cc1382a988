// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder's devices (user/decode/devices.c): the device of
 * each call from the context calls of its thread, of its stream or event,
 * and of the allocations a copy's pointers lie in; unknown (and counted)
 * where the trace did not show it.
 */
#include "decode_records.h"

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

#define CTX0 0xc000
#define CTX1 0xc100
#define UNK GT_DEVICE_UNKNOWN

static uint64_t ts_now = 1000;

/* One call that returns ret on thread tid of pid 100: entry, exit. */
static void call_ret(struct gt_decoder *d, uint32_t tid, unsigned api, const uint64_t a[6],
		     int32_t rv, uint64_t out, bool has_out)
{
	call6(d, ts_now, tid, api, a);
	ret_pid(d, ts_now + 5, 100, tid, api, rv, out, has_out ? GT_RET_OUT : 0);
	ts_now += 10;
}

static void retain(struct gt_decoder *d, uint32_t tid, uint64_t ctx, int dev)
{
	uint64_t a[6] = { 0x5000, (uint64_t)dev };

	call_ret(d, tid, API(cuDevicePrimaryCtxRetain), a, 0, ctx, true);
}

static void ctx_op(struct gt_decoder *d, uint32_t tid, unsigned api, uint64_t ctx)
{
	uint64_t a[6] = { ctx };

	call_ret(d, tid, api, a, 0, 0, false);
}

/* A launch on stream s (entry and exit): returns the device it got. */
static int32_t launch_on(struct gt_decoder *d, uint32_t tid, uint64_t s)
{
	launch(d, ts_now, 100, tid, API(cuLaunchKernel), 0xf00, s, 0);
	ret(d, ts_now + 2, tid, API(cuLaunchKernel), 0);
	ts_now += 10;
	return S.c[S.n - 1].device;
}

static uint64_t unknown_count(struct gt_decoder *d)
{
	return gt_decoder__stats(d)->device_unknown;
}

static void test_current_context(void **state)
{
	struct gt_decoder *d = *state;

	/* before any context call the device is unknown, and counted */
	assert_int_equal(launch_on(d, 1, 0), UNK);
	assert_int_equal(unknown_count(d), 1);

	retain(d, 1, CTX0, 0);
	assert_int_equal(S.c[S.n - 1].device, 0);
	retain(d, 1, CTX1, 1);
	assert_int_equal(S.c[S.n - 1].device, 1);
	/* retaining makes nothing current */
	assert_int_equal(launch_on(d, 1, 0), UNK);

	ctx_op(d, 1, API(cuCtxSetCurrent), CTX0);
	assert_int_equal(S.c[S.n - 1].device, 0);
	assert_int_equal(launch_on(d, 1, 0), 0);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX1);
	assert_int_equal(launch_on(d, 1, 0), 1);
	assert_int_equal(launch_on(d, 1, 2 /* CU_STREAM_PER_THREAD */), 1);

	/* the current context is per thread */
	assert_int_equal(launch_on(d, 2, 0), UNK);
	ctx_op(d, 2, API(cuCtxSetCurrent), CTX0);
	assert_int_equal(launch_on(d, 2, 0), 0);
	assert_int_equal(launch_on(d, 1, 0), 1);

	/* a failed switch changes nothing */
	{
		uint64_t a[6] = { CTX0 };

		call_ret(d, 1, API(cuCtxSetCurrent), a, 201, 0, false);
	}
	assert_int_equal(launch_on(d, 1, 0), 1);

	/* NULL unbinds */
	ctx_op(d, 1, API(cuCtxSetCurrent), 0);
	assert_int_equal(launch_on(d, 1, 0), UNK);
	assert_int_equal(unknown_count(d), 4);

	/* calls that run on no device are not counted */
	ctx_op(d, 3, API(cuModuleUnload), 0x77);
	assert_int_equal(S.c[S.n - 1].device, UNK);
	assert_int_equal(unknown_count(d), 4);
}

static void test_push_pop_create_destroy(void **state)
{
	struct gt_decoder *d = *state;
	uint64_t a[6] = { 0x5000, 0, 1 /* cuCtxCreate_v2(pctx, flags, dev) */ };

	retain(d, 1, CTX0, 0);
	retain(d, 1, CTX1, 1);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX0);
	ctx_op(d, 1, API(cuCtxPushCurrent_v2), CTX1);
	assert_int_equal(launch_on(d, 1, 0), 1);
	call_ret(d, 1, API(cuCtxPopCurrent_v2), a, 0, CTX1, true);
	assert_int_equal(S.c[S.n - 1].device, 1);
	assert_int_equal(launch_on(d, 1, 0), 0);
	/* below what the trace showed: unknown */
	call_ret(d, 1, API(cuCtxPopCurrent_v2), a, 0, CTX0, true);
	assert_int_equal(launch_on(d, 1, 0), UNK);

	/* a created context is current on its thread; destroyed, popped */
	call_ret(d, 4, API(cuCtxCreate_v2), a, 0, 0xc200, true);
	assert_int_equal(S.c[S.n - 1].device, 1);
	assert_int_equal(launch_on(d, 4, 0), 1);
	ctx_op(d, 4, API(cuCtxDestroy_v2), 0xc200);
	assert_int_equal(S.c[S.n - 1].device, 1);
	assert_int_equal(launch_on(d, 4, 0), UNK);

	/* a context the trace never saw retained: known handle, unknown device,
	 * until a retain names it */
	ctx_op(d, 5, API(cuCtxSetCurrent), 0xc300);
	assert_int_equal(launch_on(d, 5, 0), UNK);
	retain(d, 6, 0xc300, 3);
	assert_int_equal(launch_on(d, 5, 0), 3);
}

static void test_streams_and_events(void **state)
{
	struct gt_decoder *d = *state;
	uint64_t a[6] = { 0x5000 };

	retain(d, 1, CTX0, 0);
	retain(d, 1, CTX1, 1);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX1);
	call_ret(d, 1, API(cuStreamCreate), a, 0, 0x5100, true);
	assert_int_equal(S.c[S.n - 1].device, 1);
	call_ret(d, 1, API(cuEventCreate), a, 0, 0xe100, true);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX0);

	/* a wait on a stream or event runs on its context's device */
	call_abcd(d, ts_now, 1, API(cuStreamSynchronize), 0x5100, 0, 0, 0x5100);
	ret(d, ts_now + 1, 1, API(cuStreamSynchronize), 0);
	ts_now += 10;
	assert_int_equal(S.c[S.n - 1].device, 1);
	ctx_op(d, 1, API(cuEventSynchronize), 0xe100);
	assert_int_equal(S.c[S.n - 1].device, 1);
	/* the default stream is the current context's */
	call_abcd(d, ts_now, 1, API(cuStreamSynchronize), 0, 0, 0, 0);
	ret(d, ts_now + 1, 1, API(cuStreamSynchronize), 0);
	ts_now += 10;
	assert_int_equal(S.c[S.n - 1].device, 0);
	/* an event the trace did not see made: unknown, not the current one */
	ctx_op(d, 1, API(cuEventSynchronize), 0xe999);
	assert_int_equal(S.c[S.n - 1].device, UNK);
	assert_int_equal(unknown_count(d), 1);
	/* a thread that showed no context, on a stream that did */
	assert_int_equal(launch_on(d, 9, 0x5100), 1);
	/* a destroyed stream is forgotten */
	ctx_op(d, 1, API(cuStreamDestroy_v2), 0x5100);
	assert_int_equal(S.c[S.n - 1].device, 1);
	assert_int_equal(launch_on(d, 9, 0x5100), UNK);
}

static void test_process_lifetime(void **state)
{
	struct gt_decoder *d = *state;

	retain(d, 1, CTX1, 1);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX1);
	assert_int_equal(launch_on(d, 1, 0), 1);
	proc_rec(d, GT_REC_EXIT, ts_now++, 100, 1, "wl");
	/* the pid again, a new process: nothing carried over */
	proc_rec(d, GT_REC_EXEC, ts_now++, 100, 1, "wl");
	assert_int_equal(launch_on(d, 1, 0), UNK);
}

/* alloc(tid, bytes) -> ptr */
static void alloc(struct gt_decoder *d, uint32_t tid, unsigned api, uint64_t bytes, uint64_t ptr)
{
	uint64_t a[6] = { 0x5000, bytes };

	call_ret(d, tid, api, a, 0, ptr, true);
}

static const struct gt_callrec *copy(struct gt_decoder *d, uint32_t tid, unsigned api,
				     uint64_t dst, uint64_t src, uint64_t bytes)
{
	call_abcd(d, ts_now, tid, api, dst, src, bytes, 0);
	ret(d, ts_now + 1, tid, api, 0);
	ts_now += 10;
	return &S.c[S.n - 1];
}

static void test_copy_sides(void **state)
{
	struct gt_decoder *d = *state;
	const struct gt_callrec *c;

	retain(d, 1, CTX0, 0);
	retain(d, 1, CTX1, 1);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX0);
	alloc(d, 1, API(cuMemAlloc_v2), 4096, 0x10000000);
	alloc(d, 1, API(cuMemAllocHost_v2), 4096, 0x30000000);
	ctx_op(d, 1, API(cuCtxSetCurrent), CTX1);
	alloc(d, 1, API(cuMemAlloc_v2), 8192, 0x20000000);

	/* peer copies name their contexts: (dst, dstCtx, src, srcCtx, bytes) */
	{
		uint64_t a[6] = { 0x20000000, CTX1, 0x10000000, CTX0, 4096 };

		call_ret(d, 1, API(cuMemcpyPeer), a, 0, 0, false);
	}
	c = &S.c[S.n - 1];
	assert_int_equal(c->kind, GT_COPY_PTOP);
	assert_int_equal(c->src_device, 0);
	assert_int_equal(c->dst_device, 1);
	assert_int_equal(c->device, 1);
	assert_int_equal(c->bytes, 4096);

	/* a DtoD or unified copy between devices is a peer copy */
	c = copy(d, 1, API(cuMemcpyDtoD_v2), 0x20000100, 0x10000800, 256);
	assert_int_equal(c->kind, GT_COPY_PTOP);
	assert_int_equal(c->src_device, 0);
	assert_int_equal(c->dst_device, 1);
	c = copy(d, 1, API(cuMemcpy), 0x10000000, 0x20001000, 256);
	assert_int_equal(c->kind, GT_COPY_PTOP);
	assert_int_equal(c->src_device, 1);
	assert_int_equal(c->dst_device, 0);
	/* within one device it stays what it was */
	c = copy(d, 1, API(cuMemcpy), 0x20000000, 0x20001000, 256);
	assert_int_equal(c->kind, GT_COPY_DEFAULT);
	assert_int_equal(c->src_device, 1);
	assert_int_equal(c->dst_device, 1);
	/* pinned host memory is no device's; the end of a range is outside it */
	c = copy(d, 1, API(cuMemcpy), 0x10002000, 0x30000000, 16);
	assert_int_equal(c->kind, GT_COPY_DEFAULT);
	assert_int_equal(c->src_device, UNK);
	assert_int_equal(c->dst_device, UNK);
	c = copy(d, 1, API(cuMemcpyHtoD_v2), 0x10000010, 0x30000000, 16);
	assert_int_equal(c->kind, GT_COPY_HTOD);
	assert_int_equal(c->dst_device, 0);
	assert_int_equal(c->src_device, UNK);
	assert_int_equal(c->device, 1);

	/* freed: no longer the device's */
	{
		uint64_t a[6] = { 0x10000000 };

		call_ret(d, 1, API(cuMemFree_v2), a, 0, 0, false);
	}
	c = copy(d, 1, API(cuMemcpyDtoD_v2), 0x20000100, 0x10000800, 256);
	assert_int_equal(c->kind, GT_COPY_DTOD);
	assert_int_equal(c->src_device, UNK);
	assert_int_equal(c->dst_device, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_current_context),
		T(test_push_pop_create_destroy),
		T(test_streams_and_events),
		T(test_process_lifetime),
		T(test_copy_sides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
