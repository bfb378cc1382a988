// SPDX-License-Identifier: MIT
/*
 * The fields of the GPU side of a merged trace (kernels, copies, sets, NVTX
 * ranges) and the names the timelines give them, shared by dump and the
 * exports as fields.c's are.
 */
#include <stdio.h>
#include <string.h>
#include "export/fields.h"
#include "export/fields_int.h"
#include "format/api.h"
#include "format/records.h"


/* GPU side: where it ran, then what, then the call it came from. */
static void gpu_common(const struct gt_hdr *rec, struct cf_val v[CF_MAX], unsigned *n,
		       const char *type, uint64_t dur, uint32_t device, uint32_t context,
		       uint32_t stream_id, uint32_t correlation)
{
	vu(v, n, CF_TS, rec->ts);
	vu(v, n, CF_PID, rec->pid);
	vs(v, n, CF_TYPE, type);
	vu(v, n, CF_DUR, dur);
	vu(v, n, CF_DEVICE, device);
	vu(v, n, CF_CONTEXT, context);
	vu(v, n, CF_STREAM_ID, stream_id);
	vu(v, n, CF_CORRELATION, correlation);
}

/* A linked record names its call (launch_ts, the launching thread); an
 * unmatched one nothing. */
static void gpu_link(const struct gt_hdr *rec, struct cf_val v[CF_MAX], unsigned *n,
		     uint16_t flags, uint64_t launch_ts)
{
	if (flags & GT_GPU_LINKED) {
		vu(v, n, CF_LAUNCH_TS, launch_ts);
		vu(v, n, CF_LAUNCH_TID, rec->tid);
	}
	if (flags & GT_GPU_CAUSALITY)
		vb(v, n, CF_CAUSALITY, true);
	if (flags & GT_GPU_BY_ORDER)
		vb(v, n, CF_BY_ORDER, true);
	if (flags & GT_GPU_CLOCK_FIXED)
		vb(v, n, CF_CLOCK_FIXED, true);
}

/* A kernel a CUDA graph ran: its node and, when the merger found it, the
 * launch whose capture made the node (its entry, thread and stack). */
static void gpu_graph(const struct gt_gpu_kernel *k, struct cf_val v[CF_MAX], unsigned *n)
{
	const struct gt_gpu_graph *gr = gt_gpu_kernel__graph(k);

	if (!gr)
		return;
	vu(v, n, CF_GRAPH_NODE, gr->node);
	if (!(k->flags & GT_GPU_CAPTURED))
		return;
	vu(v, n, CF_CAPTURE_TS, gr->capture_ts);
	vu(v, n, CF_CAPTURE_TID, gr->capture_tid);
	if (gr->stack)
		vu(v, n, CF_STACK, gr->stack);
}

unsigned fields__gpu(struct gt_decoder *d, const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	unsigned n = 0;

	switch (rec->type) {
	case GT_REC_GPU_KERNEL: {
		const struct gt_gpu_kernel *k = (const void *)rec;
		const char *mangled, *name;

		if (rec->size < sizeof(*k))
			return 0;
		name = gt_decoder__gpu_kernel_name(d, k, &mangled);
		gpu_common(rec, v, &n, "gpu_kernel", k->dur, k->device, k->context, k->stream,
			   k->correlation);
		vs(v, &n, CF_KERNEL, name);
		if (mangled)
			vs(v, &n, CF_MANGLED, mangled);
		vd(v, &n, CF_GRID, k->grid);
		vd(v, &n, CF_BLOCK, k->block);
		vu(v, &n, CF_SHMEM, k->shmem);
		gpu_link(rec, v, &n, k->flags, k->launch_ts);
		gpu_graph(k, v, &n);
		return n;
	}
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET: {
		const struct gt_gpu_copy *c = (const void *)rec;
		bool copy = rec->type == GT_REC_GPU_MEMCPY;

		if (rec->size < sizeof(*c))
			return 0;
		gpu_common(rec, v, &n, copy ? "gpu_memcpy" : "gpu_memset", c->dur, c->device,
			   c->context, c->stream, c->correlation);
		vu(v, &n, CF_BYTES, c->bytes);
		if (copy)
			vs(v, &n, CF_KIND, gt_copy_kind__name((enum gt_copy_kind)c->kind));
		gpu_link(rec, v, &n, c->flags, c->launch_ts);
		return n;
	}
	case GT_REC_NVTX: {
		const struct gt_nvtx *nv = (const void *)rec;

		if (rec->size < sizeof(*nv))
			return 0;
		vu(v, &n, CF_TS, rec->ts);
		vu(v, &n, CF_PID, rec->pid);
		vu(v, &n, CF_TID, rec->tid);
		vs(v, &n, CF_TYPE, "nvtx");
		vu(v, &n, CF_DUR, nv->dur);
		vsn(v, &n, CF_NAME, nv->name, nv->len ? gt_rec_strlen(rec, nv->name, nv->len) : 0);
		return n;
	}
	case GT_REC_CUPTI_ATTACH: {
		const struct gt_cupti_attach *a = (const void *)rec;

		if (rec->size < sizeof(*a))
			return 0;
		vu(v, &n, CF_TS, rec->ts);
		vu(v, &n, CF_PID, rec->pid);
		vs(v, &n, CF_TYPE, "cupti_attach");
		vs(v, &n, CF_EVENT, gt_attach_result__name(a->result));
		if (a->result == GT_ATTACH_OK)
			vs(v, &n, CF_KIND, a->flags & GT_ATTACH_F_INTERP ? "interpreter" : "thread");
		vu(v, &n, CF_DUR, a->held_ns);
		if (a->len)
			vsn(v, &n, CF_REASON, a->why, gt_rec_strlen(rec, a->why, a->len));
		return n;
	}
	case GT_REC_GPU_GRAPH_NODE: {
		const struct gt_gpu_graph_node *gn = (const void *)rec;

		if (rec->size < sizeof(*gn))
			return 0;
		vu(v, &n, CF_TS, rec->ts);
		vu(v, &n, CF_PID, rec->pid);
		vu(v, &n, CF_TID, rec->tid);
		vs(v, &n, CF_TYPE, "gpu_graph_node");
		vu(v, &n, CF_GRAPH_NODE, gn->node);
		if (gn->flags & GT_GRAPH_NODE_CLONED)
			vu(v, &n, CF_CLONED_FROM, gn->original);
		if (gn->graph)
			vu(v, &n, CF_GRAPH, gn->graph);
		return n;
	}
	default:
		return 0;
	}
}

const char *fields__gpu_name(struct gt_decoder *d, const struct gt_hdr *rec,
			      char buf[CF_NAME_BUF], size_t *n)
{
	const struct gt_gpu_copy *c = (const void *)rec;
	const struct gt_nvtx *nv = (const void *)rec;
	const char *mangled, *s;
	char size[24];

	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
		s = gt_decoder__gpu_kernel_name(d, (const struct gt_gpu_kernel *)rec, &mangled);
		*n = strlen(s);
		return s;
	case GT_REC_GPU_MEMCPY:
		fields__bytes(size, sizeof(size), c->bytes);
		*n = (size_t)snprintf(buf, CF_NAME_BUF, "memcpy %s %s",
				      gt_copy_kind__name((enum gt_copy_kind)c->kind), size);
		return buf;
	case GT_REC_GPU_MEMSET:
		fields__bytes(size, sizeof(size), c->bytes);
		*n = (size_t)snprintf(buf, CF_NAME_BUF, "memset %s", size);
		return buf;
	case GT_REC_NVTX:
		*n = nv->len ? gt_rec_strlen(rec, nv->name, nv->len) : 0;
		return nv->name;
	default:
		*n = 0;
		return NULL;
	}
}
