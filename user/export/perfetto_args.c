// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`, the events of a thread's track: a call's, an NCCL
 * call's or a kernel-side record's (ioctl, off-CPU interval) slice begin or
 * instant, with its category (the "cat" of the JSON export), its name, its
 * arguments as debug annotations (those dump shows, docs/FORMAT.md) and the
 * flows to its GPU records.  perfetto.c makes the items, perfetto_order.c
 * decides when they are written.
 */
#include <string.h>
#include "export/perfetto_int.h"

static void launch_args(struct pf *x, const struct item *it)
{
	const struct gt_callrec *c = &it->c;

	ANN_STR(x, A_API, x->api_name[c->api]);
	if (c->graph) {
		ANN_PTR(x, A_GRAPH, c->handle);
	} else {
		pftrace__ann_uints(x->w, x->ann[A_GRID], c->grid, 3);
		pftrace__ann_uints(x->w, x->ann[A_BLOCK], c->block, 3);
		ANN_UINT(x, A_SHMEM, c->shmem);
		ANN_PTR(x, A_FUNC, c->handle);
		ANN_STR(x, A_MANGLED, it->mangled);
		if (c->launch_flags & GT_LAUNCH_COOPERATIVE)
			ANN_BOOL(x, A_COOP, true);
	}
	ANN_PTR(x, A_STREAM, c->stream);
}

static void sync_args(struct pf *x, const struct gt_callrec *c, const struct gt_api_info *ai)
{
	if (ai->cls == GT_CLS_STREAM_WAIT) {
		ANN_PTR(x, A_STREAM, c->handle);
		ANN_PTR(x, A_EVENT, c->handle2);
	} else if (ai->cls == GT_CLS_EVENT_RECORD) {
		ANN_PTR(x, A_EVENT, c->handle);
		ANN_PTR(x, A_STREAM, c->handle2);
	} else if (c->has_stream) {
		ANN_PTR(x, A_STREAM, c->stream);
	} else if (ai->a >= 0) {
		/* the one handle of a sync or query: a context or an event */
		ANN_PTR(x, c->api == GT_API_cuCtxSynchronize_v2 ? A_CTX : A_EVENT, c->handle);
	}
}

static void module_args(struct pf *x, const struct item *it, const struct gt_api_info *ai)
{
	const struct gt_callrec *c = &it->c;
	bool lookup = ai->cls == GT_CLS_GET_FUNC || ai->cls == GT_CLS_KERNEL_FUNC;

	/* loads and lookups return the handle; unloads and name queries take it */
	if (lookup || ai->cls == GT_CLS_MODULE_LOAD) {
		if (c->out_valid)
			ANN_PTR(x, A_HANDLE, c->out);
		if (lookup)
			ANN_PTR(x, A_PARENT, c->handle);
	} else {
		ANN_PTR(x, A_HANDLE, c->handle);
	}
	ANN_STR(x, ai->cls == GT_CLS_MODULE_LOAD ? A_PATH : A_NAME, it->str);
}

/* The arguments dump shows (docs/FORMAT.md), as debug annotations. */
static void call_args(struct pf *x, const struct item *it)
{
	const struct gt_callrec *c = &it->c;
	const struct gt_api_info *ai = gt_api__info(c->api);

	switch (c->type) {
	case GT_T_LAUNCH:
		launch_args(x, it);
		break;
	case GT_T_MEMCPY:
	case GT_T_MEMSET:
	case GT_T_ALLOC:
		ANN_UINT(x, A_BYTES, c->bytes);
		if (c->type == GT_T_MEMCPY) {
			ANN_STR(x, A_KIND, it->str);
			ANN_PTR(x, A_SRC, c->src);
			if (c->src_device >= 0)
				ANN_UINT(x, A_SRC_DEVICE, (uint64_t)c->src_device);
			if (c->dst_device >= 0)
				ANN_UINT(x, A_DST_DEVICE, (uint64_t)c->dst_device);
		}
		if (c->type != GT_T_ALLOC)
			ANN_PTR(x, A_DST, c->ptr);
		else if (c->out_valid)
			ANN_PTR(x, A_PTR, c->ptr);
		if (c->has_stream)
			ANN_PTR(x, A_STREAM, c->stream);
		break;
	case GT_T_FREE:
		ANN_PTR(x, A_PTR, c->handle);
		if (c->has_stream)
			ANN_PTR(x, A_STREAM, c->stream);
		break;
	case GT_T_SYNC:
		sync_args(x, c, ai);
		break;
	case GT_T_MODULE:
		module_args(x, it, ai);
		break;
	case GT_T_CONTEXT:
	case GT_T_STREAM:
	case GT_T_EVENT:
		/* creators: the new handle when they returned one; others: the argument */
		if (ai->out >= 0 ? c->out_valid : ai->a >= 0)
			ANN_PTR(x, A_HANDLE, c->handle);
		break;
	default:
		break;
	}
	/* absent where the trace did not show it, as in dump */
	if (c->device >= 0)
		ANN_UINT(x, A_DEVICE, (uint64_t)c->device);
	if (c->has_exit) {
		ANN_INT(x, A_RET, c->ret);
		ANN_BOOL(x, A_FAILED, c->ret != 0);
	} else if (!c->entry_only) {
		/* as dump: a launch recorded at entry only lacks nothing */
		ANN_BOOL(x, A_INCOMPLETE, true);
	}
}

/* An ioctl's or off-CPU interval's arguments (the fields dump shows). */
static void kernel_args(struct pf *x, const struct item *it)
{
	if (it->kind == IK_OFFCPU) {
		ANN_STR(x, A_STATE, it->rm);
		return;
	}
	ANN_STR(x, A_DEVICE, it->dev);
	ANN_UINT(x, A_CMD, it->cmd);
	if (it->rm)
		ANN_STR(x, A_RM, it->rm);
	if (it->fd >= 0)
		ANN_INT(x, A_FD, it->fd);
	ANN_INT(x, A_RET, it->c.ret);
	ANN_BOOL(x, A_FAILED, it->c.ret < 0);
}

/* The category of a call or kernel-side record: the "cat" of the JSON
 * export (json.c), so that both filter the same. */
static void event_category(struct pf *x, const struct item *it)
{
	const char *cat = it->kind == IK_IOCTL ? "ioctl" :
			  it->kind == IK_OFFCPU ? "sched" : gt_call_type__name(it->c.type);

	if (cat)
		pftrace__event_category(x->w, cat, strlen(cat));
}

/* A call's stack (--stacks) on its slice, interned (each stack's frames
 * once per sequence), outermost frame first: a Python frame as its
 * function, file and line; a native one as its function (or file+offset)
 * and file. */
void pf__event_stack(struct pf *x, uint32_t stack)
{
	enum { MAX = GT_USTACK_MAX + 1 + GT_PYSTACK_MAX };
	struct pftrace_frame f[MAX];
	char names[MAX][96];
	size_t n, k = 0;
	uint64_t iid;

	if (!stack || !x->d)
		return;
	iid = pftrace__callstack_iid(x->w, stack);
	if (iid) {
		pftrace__event_callstack_iid(x->w, iid);
		return;
	}
	n = gt_decoder__stack(x->d, stack, NULL);
	if (n > MAX)
		n = MAX;
	for (size_t i = n; i-- > 0;) {
		struct gt_frame g;

		if (!gt_decoder__frame(x->d, stack, i, &g))
			continue;
		f[k] = (struct pftrace_frame){ .function = g.symbol, .source = g.module, .python = g.python };
		if (g.python) {
			f[k].line = g.offset > UINT32_MAX ? 0 : (uint32_t)g.offset;
		} else if (!g.symbol) {
			snprintf(names[k], sizeof(names[k]), "0x%llx", (unsigned long long)g.offset);
			f[k].function = names[k];
		}
		k++;
	}
	pftrace__event_callstack_iid(x->w, pftrace__callstack(x->w, stack, f, k));
}

void pf__write_call(struct pf *x, struct thr *t, struct pf_seq *s, const struct item *it)
{
	pftrace__event_open(x->w, &t->tr, s, item_slice(it) ? PF_SLICE_BEGIN : PF_INSTANT,
			    it->c.ts, it->name);
	if (it->kind == IK_NCCL) {
		pf__nccl_args(x, it->nccl);
	} else {
		event_category(x, it);
		if (it->kind == IK_CALL)
			call_args(x, it);
		else
			kernel_args(x, it);
		if (it->kind == IK_CALL)
			pf__event_stack(x, it->c.stack);
	}
	for (uint32_t i = 0; i < it->nflow; i++)
		pftrace__event_flow(x->w, it->flow_base << FLOW_SHIFT | i);
	pftrace__event_close(x->w);
}
