// SPDX-License-Identifier: MIT
/*
 * Which device each call ran on, learned from the context calls a trace
 * holds: the driver's current context is per thread, so the decoder keeps
 * each thread's context stack (cuCtxSetCurrent, cuCtxPushCurrent_v2,
 * cuCtxPopCurrent_v2, cuCtxCreate_*, cuCtxDestroy_v2) and the device of
 * each context (cuDevicePrimaryCtxRetain, cuCtxCreate_*), per process.
 * Streams and events belong to the context current when they were created;
 * a call on one of them runs on that context's device, whichever context
 * its thread has current.  Device allocations belong to theirs too, so the
 * two sides of a copy are told from the pointers (a copy between devices
 * is a peer copy).
 *
 * Nothing is guessed: a thread whose context the trace never showed (the
 * recording attached while it ran) has no device, its calls say so and
 * gt_decoder_stats.device_unknown counts those that run on a device.
 * State changes only at the exit of a call that succeeded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode_int.h"
#include "lib/vec.h"

#define CTX_DEPTH 16	/* contexts a thread's stack keeps; deeper pushes drop the oldest */

/* A thread's context stack as the trace showed it; below stack[0] lies
 * what the trace did not show. */
struct dev_thread {
	uint32_t depth;			/* known entries, stack[depth - 1] current */
	uint64_t stack[CTX_DEPTH];	/* context handles, 0: none bound */
};

/* A memory allocation of the process: its range and where it lives. */
struct dev_alloc {
	uint64_t base, end;		/* [base, end) */
	uint64_t ctx;			/* the context it was made in, 0 unknown */
	bool device;			/* device memory (not pinned host, not managed) */
};

struct dev_proc {
	struct hmap ctxs;		/* (context, 0) -> (void *)(device + 1) */
	struct hmap owners;		/* (stream or event, 0) -> (void *)context it was made in */
	struct hmap threads;		/* (tid, 0) -> struct dev_thread */
	struct dev_alloc *allocs;	/* sorted by base, not overlapping */
	size_t nallocs, capallocs;
};

/* ---- per-process state -------------------------------------------------- */

static struct dev_proc *dev_proc_get(struct gt_decoder *d, uint32_t pid, bool create)
{
	struct proc *p = dec__proc(d, pid, create);

	if (p && !p->dev && create)
		p->dev = calloc(1, sizeof(*p->dev));
	return p ? p->dev : NULL;
}

void dec__devices_free(struct dev_proc *dp)
{
	if (!dp)
		return;
	for (uint32_t i = 0; i < dp->threads.cap; i++)
		if (dp->threads.s[i].used)
			free(dp->threads.s[i].v);
	free(dp->ctxs.s);
	free(dp->owners.s);
	free(dp->threads.s);
	free(dp->allocs);
	free(dp);
}

void dec__devices_forget(struct gt_decoder *d, uint32_t pid)
{
	struct proc *p = hmap_get(&d->procs, pid, 0);

	if (!p)
		return;
	dec__devices_free(p->dev);
	p->dev = NULL;
}

/* ---- contexts and threads ----------------------------------------------- */

static int32_t ctx_device(const struct dev_proc *dp, uint64_t ctx)
{
	void *v = dp && ctx ? hmap_get(&dp->ctxs, ctx, 0) : NULL;

	return v ? (int32_t)((uintptr_t)v - 1) : GT_DEVICE_UNKNOWN;
}

/* The thread's current context, 0 when unknown or none. */
static uint64_t current_ctx(const struct dev_proc *dp, uint32_t tid)
{
	const struct dev_thread *t = dp ? hmap_get(&dp->threads, tid, 0) : NULL;

	return t && t->depth ? t->stack[t->depth - 1] : 0;
}

static struct dev_thread *thread_get(struct dev_proc *dp, uint32_t tid)
{
	struct dev_thread *t = hmap_get(&dp->threads, tid, 0);
	void *old;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || hmap_put(&dp->threads, tid, 0, t, &old)) {
		free(t);
		return NULL;
	}
	return t;
}

static void ctx_push(struct dev_thread *t, uint64_t ctx)
{
	if (t->depth == CTX_DEPTH) {
		memmove(&t->stack[0], &t->stack[1], (CTX_DEPTH - 1) * sizeof(t->stack[0]));
		t->depth--;
	}
	t->stack[t->depth++] = ctx;
}

static int ctx_learn(struct dev_proc *dp, uint64_t ctx, int32_t device)
{
	void *old;

	if (!ctx || device < 0)
		return 0;
	return hmap_put(&dp->ctxs, ctx, 0, (void *)(uintptr_t)((uint32_t)device + 1ull), &old);
}

/* A context call: its device, and what it changed once it succeeded. */
static int ctx_call(struct dev_proc *dp, struct gt_callrec *c, const struct gt_api_info *ai,
		    uint64_t argv)
{
	bool ok = c->has_exit && c->ret == 0;
	struct dev_thread *t;
	uint64_t ctx;

	switch (c->api) {
	case GT_API_cuDevicePrimaryCtxRetain:
	case GT_API_cuCtxCreate_v2:
	case GT_API_cuCtxCreate_v3:
	case GT_API_cuCtxCreate_v4:
		/* the device is an argument; the context comes back */
		c->device = (int32_t)(uint32_t)argv;
		if (!ok || !c->out_valid || !dp)
			return 0;
		if (ctx_learn(dp, c->out, c->device))
			return -ENOMEM;
		if (c->api == GT_API_cuDevicePrimaryCtxRetain)
			return 0;
		/* a created context is pushed onto the creating thread's stack */
		t = thread_get(dp, c->tid);
		if (!t)
			return -ENOMEM;
		ctx_push(t, c->out);
		return 0;
	case GT_API_cuDevicePrimaryCtxRelease:
	case GT_API_cuDevicePrimaryCtxRelease_v2:
	case GT_API_cuDevicePrimaryCtxReset_v2:
		c->device = (int32_t)(uint32_t)argv;
		return 0;
	case GT_API_cuCtxSetCurrent:
	case GT_API_cuCtxPushCurrent_v2:
		ctx = argv;
		c->device = ctx_device(dp, ctx);
		if (!ok || !dp)
			return 0;
		t = thread_get(dp, c->tid);
		if (!t)
			return -ENOMEM;
		if (c->api == GT_API_cuCtxPushCurrent_v2)
			ctx_push(t, ctx);
		else if (ctx && t->depth)
			t->stack[t->depth - 1] = ctx;
		else if (ctx)
			ctx_push(t, ctx);
		else if (t->depth)
			t->depth--;	/* NULL pops the top (the docs' "unbinds") */
		return 0;
	case GT_API_cuCtxPopCurrent_v2:
		c->device = ctx_device(dp, c->out_valid ? c->out : current_ctx(dp, c->tid));
		t = ok && dp ? hmap_get(&dp->threads, c->tid, 0) : NULL;
		if (t && t->depth)
			t->depth--;
		return 0;
	case GT_API_cuCtxDestroy_v2:
		ctx = argv;
		c->device = ctx_device(dp, ctx);
		if (!ok || !dp)
			return 0;
		/* current on the calling thread: popped from its stack */
		t = hmap_get(&dp->threads, c->tid, 0);
		if (t && t->depth && t->stack[t->depth - 1] == ctx)
			t->depth--;
		hmap_del(&dp->ctxs, ctx, 0);
		return 0;
	default:
		(void)ai;
		c->device = ctx_device(dp, current_ctx(dp, c->tid));
		return 0;
	}
}

/* ---- streams, events, allocations --------------------------------------- */

/* The context a stream or event was made in, 0 when unknown; the default
 * streams (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are the current
 * context's. */
static uint64_t owner_ctx(const struct dev_proc *dp, uint64_t h)
{
	return dp && h ? (uint64_t)(uintptr_t)hmap_get(&dp->owners, h, 0) : 0;
}

static bool default_stream(uint64_t s)
{
	return s <= 2;
}

/* Index of the first allocation whose end is above p. */
static size_t alloc_find(const struct dev_proc *dp, uint64_t p)
{
	size_t lo = 0, hi = dp->nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dp->allocs[mid].end <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct dev_alloc *alloc_of(const struct dev_proc *dp, uint64_t p)
{
	size_t i;

	if (!dp || !p)
		return NULL;
	i = alloc_find(dp, p);
	return i < dp->nallocs && dp->allocs[i].base <= p ? &dp->allocs[i] : NULL;
}

/* The device of the memory at p: device memory of an allocation seen. */
static int32_t ptr_device(const struct dev_proc *dp, uint64_t p)
{
	const struct dev_alloc *a = alloc_of(dp, p);

	return a && a->device ? ctx_device(dp, a->ctx) : GT_DEVICE_UNKNOWN;
}

static int alloc_add(struct dev_proc *dp, uint64_t base, uint64_t bytes, uint64_t ctx, bool device)
{
	uint64_t end = base + bytes;
	size_t i, j;

	if (!base || !bytes || end < base)
		return 0;
	/* what it overlaps was freed without the trace showing it */
	i = alloc_find(dp, base);
	for (j = i; j < dp->nallocs && dp->allocs[j].base < end; j++)
		;
	if (j > i) {
		memmove(&dp->allocs[i], &dp->allocs[j], (dp->nallocs - j) * sizeof(dp->allocs[0]));
		dp->nallocs -= j - i;
	}
	if (vec__reserve(&dp->allocs, &dp->capallocs, dp->nallocs, 1, 16))
		return -ENOMEM;
	memmove(&dp->allocs[i + 1], &dp->allocs[i], (dp->nallocs - i) * sizeof(dp->allocs[0]));
	dp->allocs[i] = (struct dev_alloc){ .base = base, .end = end, .ctx = ctx, .device = device };
	dp->nallocs++;
	return 0;
}

static void alloc_del(struct dev_proc *dp, uint64_t base)
{
	size_t i = alloc_find(dp, base);

	if (i < dp->nallocs && dp->allocs[i].base == base) {
		memmove(&dp->allocs[i], &dp->allocs[i + 1], (dp->nallocs - i - 1) * sizeof(dp->allocs[0]));
		dp->nallocs--;
	}
}

/* The two sides of a copy: peer copies name their contexts, the others
 * their pointers; a copy between two devices is a peer copy. */
static void copy_sides(const struct dev_proc *dp, struct gt_callrec *c, const struct open_call *e)
{
	if (c->kind == GT_COPY_PTOP) {
		/* (dst, dstCtx, src, srcCtx, bytes[, stream]) */
		c->dst_device = ctx_device(dp, e->nargs > 1 ? e->args[1] : 0);
		c->src_device = ctx_device(dp, e->nargs > 3 ? e->args[3] : 0);
		return;
	}
	switch (c->kind) {
	case GT_COPY_DTOD:
	case GT_COPY_DEFAULT:
		c->src_device = ptr_device(dp, c->src);
		c->dst_device = ptr_device(dp, c->ptr);
		if (c->src_device >= 0 && c->dst_device >= 0 && c->src_device != c->dst_device)
			c->kind = GT_COPY_PTOP;
		break;
	case GT_COPY_HTOD:
	case GT_COPY_ATOD:
		c->dst_device = ptr_device(dp, c->ptr);
		break;
	case GT_COPY_DTOH:
	case GT_COPY_DTOA:
		c->src_device = ptr_device(dp, c->src);
		break;
	default:
		break;
	}
}

/* The context a call runs in: the stream's or event's it works on, else
 * the thread's current one (which the default streams belong to).  A call
 * on a stream or event of unknown origin that may be made from another
 * context (a wait, a query) gets none. */
static uint64_t call_ctx(const struct dev_proc *dp, const struct gt_callrec *c,
			 const struct gt_api_info *ai)
{
	uint64_t cur = current_ctx(dp, c->tid), h, o;
	bool stream = true;	/* h is a stream: the default ones are the current context's */
	bool any_ctx = false;	/* the call may be made with another context current */

	switch (ai->cls) {
	case GT_CLS_SYNC:
	case GT_CLS_QUERY:
		if (c->api == GT_API_cuCtxSynchronize_v2 && c->handle)
			return c->handle;
		if (c->api == GT_API_cuCtxSynchronize || c->api == GT_API_cuCtxSynchronize_v2)
			return cur;
		h = c->handle;		/* a stream (has_stream) or an event */
		stream = c->has_stream;
		any_ctx = true;
		break;
	case GT_CLS_STREAM_WAIT:
		h = c->handle;		/* the stream that waits */
		break;
	case GT_CLS_EVENT_RECORD:
		h = c->handle2;		/* the stream it is recorded on */
		break;
	case GT_CLS_STREAM:
	case GT_CLS_EVENT:
		if (ai->out >= 0)	/* created now, in the current context */
			return cur;
		h = c->handle;
		stream = ai->cls == GT_CLS_STREAM;
		any_ctx = true;
		break;
	default:
		if (!c->has_stream)
			return cur;
		h = c->stream;
		break;
	}
	if (stream && default_stream(h))
		return cur;
	o = owner_ctx(dp, h);
	return o ? o : any_ctx ? 0 : cur;
}

/* What a call that succeeded changed: streams and events made or
 * destroyed, memory allocated or freed. */
static int call_effects(struct dev_proc *dp, const struct gt_callrec *c,
			const struct gt_api_info *ai, uint64_t ctx)
{
	void *old;

	switch (ai->cls) {
	case GT_CLS_STREAM:
	case GT_CLS_EVENT:
		if (ai->out < 0) {
			hmap_del(&dp->owners, c->handle, 0);
			return 0;
		}
		if (!c->out_valid || !c->handle)
			return 0;
		if (!ctx) {
			hmap_del(&dp->owners, c->handle, 0);
			return 0;
		}
		return hmap_put(&dp->owners, c->handle, 0, (void *)(uintptr_t)ctx, &old);
	case GT_CLS_ALLOC:
		/* pinned host memory is no device's; a cuMemCreate handle no pointer */
		if (!c->out_valid || c->api == GT_API_cuMemCreate)
			return 0;
		return alloc_add(dp, c->ptr, c->bytes, ctx,
				 c->api != GT_API_cuMemAllocHost_v2 && c->api != GT_API_cuMemHostAlloc &&
				 c->api != GT_API_cuMemAllocManaged);
	case GT_CLS_FREE:
		if (c->api != GT_API_cuMemRelease)
			alloc_del(dp, c->handle);
		return 0;
	default:
		return 0;
	}
}

int dec__device_call(struct gt_decoder *d, struct gt_callrec *c, const struct gt_api_info *ai,
		     const struct open_call *e)
{
	bool ok = c->has_exit && c->ret == 0;
	struct dev_proc *dp;
	uint64_t ctx;

	c->device = c->src_device = c->dst_device = GT_DEVICE_UNKNOWN;
	if (ai->cls == GT_CLS_INIT)
		return 0;
	/* what can change the state makes it; the rest only reads */
	dp = dev_proc_get(d, c->pid, ok || ai->cls == GT_CLS_CTX);
	if (ai->cls == GT_CLS_CTX) {
		if (!dp)
			return -ENOMEM;
		return ctx_call(dp, c, ai, ai->a >= 0 && ai->a < e->nargs ? e->args[ai->a] : 0);
	}
	ctx = call_ctx(dp, c, ai);
	c->device = ctx_device(dp, ctx);
	if (c->type == GT_T_MEMCPY)
		copy_sides(dp, c, e);
	if (c->device < 0 && gt_callrec__on_device(c))
		d->stats.device_unknown++;
	return ok && dp ? call_effects(dp, c, ai, ctx) : 0;
}

int32_t dec__thread_device(struct gt_decoder *d, uint32_t pid, uint32_t tid)
{
	const struct dev_proc *dp = dev_proc_get(d, pid, false);

	return ctx_device(dp, current_ctx(dp, tid));
}
