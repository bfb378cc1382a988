// SPDX-License-Identifier: MIT
/*
 * CUPTI activity records -> gtrace records.  See convert.h.
 *
 * Every record is built directly in the caller's output buffer: the only
 * allocation is the NVTX pairing table, made once with the converter.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "gtrace_api.h"

/* Slots of the NVTX pairing table: a power of two, a quarter kept empty so
 * that linear probing stays short. */
#define NVTX_SLOTS 1024u
#define NVTX_MASK (NVTX_SLOTS - 1)
_Static_assert(GT_CUPTI_NVTX_OPEN_MAX <= NVTX_SLOTS * 3 / 4, "NVTX table too full");
_Static_assert((NVTX_SLOTS & NVTX_MASK) == 0, "NVTX_SLOTS is a power of two");

enum nvtx_state {
	NVTX_EMPTY = 0,
	NVTX_START,	/* a range start waiting for its end */
	NVTX_END,	/* an end that came before its start (another thread's
			 * buffer completed first): waits for the start */
};

/* One half of an NVTX range, kept until the other half arrives.  The name
 * is copied: CUPTI documents no lifetime for a marker's string. */
struct nvtx_open {
	__u32 id;		/* CUPTI marker id, shared by start and end */
	__u8 state;		/* enum nvtx_state */
	__u8 _pad;		/* explicit padding */
	__u16 len;		/* bytes in name including the NUL (starts only) */
	__u32 tid;		/* thread of the start (0 for process-wide ranges) */
	__u32 _pad2;		/* explicit padding */
	__u64 ts;		/* start, or the end for NVTX_END */
	char name[GT_STR_MAX];	/* the start's message */
};

struct gt_cupti_conv {
	__u32 pid;		/* process written into every header */
	__u32 nopen;		/* used slots of open[] */
	__u32 drain_pos;	/* next slot gt_cupti_conv__drain_open looks at */
	__u32 _pad;		/* explicit padding */
	__u64 records;		/* activity records converted */
	__u64 unknown;		/* activity records taken but not converted */
	struct nvtx_open *open;	/* NVTX_SLOTS slots, open addressing, linear probing */
};

/* ------------------------------------------------------------ helpers */

static void hdr_init(struct gt_hdr *h, __u16 type, __u32 pid, __u32 tid, __u64 ts)
{
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = 0;
	h->api = 0;
	h->cpu = 0;
}

/* Copies a NUL-terminated name (NULL reads as ""), cut at GT_STR_MAX - 1
 * bytes; returns the bytes stored including the NUL. */
static __u16 name_copy(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, GT_STR_MAX - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
	return (__u16)(n + 1);
}

/* Sets hdr.size of a record of base bytes plus len bytes of string and
 * zeroes the padding up to the next multiple of 8, so that a file's bytes
 * depend only on the data. */
static int rec_finish(void *out, size_t base, size_t len)
{
	size_t used = base + len, size = GT_REC_ALIGN(used);

	memset((char *)out + used, 0, size - used);
	((struct gt_hdr *)out)->size = (__u16)size;
	return (int)size;
}

static __u64 span(__u64 start, __u64 end)
{
	return end > start ? end - start : 0;
}

static __u32 nonneg(int32_t v)
{
	return v > 0 ? (__u32)v : 0;
}

unsigned gt_cupti_copy_kind(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return GT_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return GT_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return GT_COPY_HTOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return GT_COPY_ATOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return GT_COPY_ATOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return GT_COPY_ATOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return GT_COPY_DTOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return GT_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GT_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return GT_COPY_PTOP;
	default: return GT_COPY_UNKNOWN;
	}
}

/* ------------------------------------------------------------ GPU work */

static int conv_kernel(struct gt_cupti_conv *c, const CUpti_ActivityKernel10 *k, void *out)
{
	struct gt_gpu_kernel *r = out;

	hdr_init(&r->hdr, GT_REC_GPU_KERNEL, c->pid, 0, k->start);
	r->dur = span(k->start, k->end);
	r->launch_ts = 0;
	r->correlation = k->correlationId;
	r->device = k->deviceId;
	r->context = k->contextId;
	r->stream = k->streamId;
	r->grid[0] = nonneg(k->gridX);
	r->grid[1] = nonneg(k->gridY);
	r->grid[2] = nonneg(k->gridZ);
	r->block[0] = nonneg(k->blockX);
	r->block[1] = nonneg(k->blockY);
	r->block[2] = nonneg(k->blockZ);
	r->shmem = nonneg(k->dynamicSharedMemory) + nonneg(k->staticSharedMemory);
	r->flags = 0;
	r->len = name_copy(r->name, k->name);
	if (k->graphNodeId) {
		/* the graph part after the name's padding (gt_gpu_kernel__graph) */
		size_t at = (size_t)rec_finish(out, sizeof(*r), r->len);
		struct gt_gpu_graph *gr = (void *)((char *)out + at);

		*gr = (struct gt_gpu_graph){ .node = k->graphNodeId };
		r->flags = GT_GPU_GRAPH;
		r->hdr.size = (__u16)(at + sizeof(*gr));
		return (int)r->hdr.size;
	}
	return rec_finish(out, sizeof(*r), r->len);
}

size_t gt_cupti_conv__graph_node(__u32 pid, __u32 tid, __u64 ts, __u64 node, __u64 original,
				 __u32 graph, __u32 flags, void *out)
{
	struct gt_gpu_graph_node *r = out;

	memset(r, 0, sizeof(*r));
	hdr_init(&r->hdr, GT_REC_GPU_GRAPH_NODE, pid, tid, ts);
	r->hdr.size = sizeof(*r);
	r->node = node;
	r->original = original;
	r->graph = graph;
	r->flags = flags;
	return sizeof(*r);
}

static void copy_common(struct gt_gpu_copy *r, __u16 type, __u32 pid, __u64 start, __u64 end,
			__u64 bytes)
{
	hdr_init(&r->hdr, type, pid, 0, start);
	r->dur = span(start, end);
	r->launch_ts = 0;
	r->bytes = bytes;
	r->kind = 0;
	r->flags = 0;
	r->_pad = 0;
}

static int conv_memcpy(struct gt_cupti_conv *c, const CUpti_ActivityMemcpy6 *m, void *out)
{
	struct gt_gpu_copy *r = out;

	copy_common(r, GT_REC_GPU_MEMCPY, c->pid, m->start, m->end, m->bytes);
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->kind = (__u16)gt_cupti_copy_kind(m->copyKind);
	return rec_finish(out, sizeof(*r), 0);
}

/* Peer copies (MEMCPY2): device is the source device as the ABI says;
 * context and stream are those the copy was issued in, where CUPTI's stream
 * ids are scoped. */
static int conv_memcpy_peer(struct gt_cupti_conv *c, const CUpti_ActivityMemcpyPtoP4 *m, void *out)
{
	struct gt_gpu_copy *r = out;

	copy_common(r, GT_REC_GPU_MEMCPY, c->pid, m->start, m->end, m->bytes);
	r->correlation = m->correlationId;
	r->device = m->srcDeviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->kind = (__u16)gt_cupti_copy_kind(m->copyKind);
	return rec_finish(out, sizeof(*r), 0);
}

static int conv_memset(struct gt_cupti_conv *c, const CUpti_ActivityMemset4 *m, void *out)
{
	struct gt_gpu_copy *r = out;

	copy_common(r, GT_REC_GPU_MEMSET, c->pid, m->start, m->end, m->bytes);
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	return rec_finish(out, sizeof(*r), 0);
}

static int conv_api(struct gt_cupti_conv *c, const CUpti_ActivityAPI *a, void *out)
{
	struct gt_gpu_api *r = out;

	hdr_init(&r->hdr, GT_REC_GPU_API, c->pid, a->threadId, a->start);
	r->dur = span(a->start, a->end);
	r->correlation = a->correlationId;
	r->cbid = a->cbid;
	return rec_finish(out, sizeof(*r), 0);
}

/* ------------------------------------------------------------ NVTX */

static int emit_nvtx(struct gt_cupti_conv *c, void *out, __u32 id, __u32 tid, __u64 ts, __u64 dur,
		     const char *name, size_t len)
{
	struct gt_nvtx *r = out;

	hdr_init(&r->hdr, GT_REC_NVTX, c->pid, tid, ts);
	r->dur = dur;
	r->id = id;
	r->_pad = 0;
	if (len) {	/* a name already copied and cut: len includes its NUL */
		memcpy(r->name, name, len);
		r->len = (__u16)len;
	} else {
		r->len = name_copy(r->name, name);
	}
	return rec_finish(out, sizeof(*r), r->len);
}

static __u32 nvtx_home(__u32 id)
{
	return (id * 2654435761u) >> 22 & NVTX_MASK;	/* Fibonacci hashing, top 10 bits */
}

static struct nvtx_open *nvtx_find(struct gt_cupti_conv *c, __u32 id)
{
	for (__u32 i = nvtx_home(id);; i = (i + 1) & NVTX_MASK) {
		struct nvtx_open *e = &c->open[i];

		if (e->state == NVTX_EMPTY)
			return NULL;
		if (e->id == id)
			return e;
	}
}

/* A free slot for id, or NULL when GT_CUPTI_NVTX_OPEN_MAX are in use. */
static struct nvtx_open *nvtx_insert(struct gt_cupti_conv *c, __u32 id)
{
	__u32 i;

	if (c->nopen >= GT_CUPTI_NVTX_OPEN_MAX)
		return NULL;
	for (i = nvtx_home(id); c->open[i].state != NVTX_EMPTY; i = (i + 1) & NVTX_MASK)
		;
	c->nopen++;
	c->open[i].id = id;
	return &c->open[i];
}

static void nvtx_move(struct nvtx_open *dst, const struct nvtx_open *src)
{
	memcpy(dst, src, offsetof(struct nvtx_open, name));
	memcpy(dst->name, src->name, src->state == NVTX_START ? src->len : 0);
}

/* Frees a slot and shifts back the entries after it that probed past it,
 * so that lookups need no tombstones. */
static void nvtx_remove(struct gt_cupti_conv *c, struct nvtx_open *e)
{
	__u32 hole = (__u32)(e - c->open), j = hole;

	for (;;) {
		j = (j + 1) & NVTX_MASK;
		if (c->open[j].state == NVTX_EMPTY)
			break;
		__u32 home = nvtx_home(c->open[j].id);
		/* entry j may fill the hole when its home is not in (hole, j] */
		int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);

		if (!stays) {
			nvtx_move(&c->open[hole], &c->open[j]);
			hole = j;
		}
	}
	c->open[hole].state = NVTX_EMPTY;
	c->nopen--;
}

static __u32 marker_tid(const CUpti_ActivityMarker2 *m)
{
	if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		return m->objectId.pt.threadId;
	return 0;
}

/*
 * Start and end markers of a range are paired by id into one gt_nvtx; they
 * may come in either order (different threads' records can sit in buffers
 * that complete out of order).  Instantaneous markers are marks (dur 0).
 */
static int conv_marker(struct gt_cupti_conv *c, const CUpti_ActivityMarker2 *m, void *out)
{
	struct nvtx_open *e;
	__u32 flags = m->flags, tid = marker_tid(m);
	__u64 ts = m->timestamp;

	if (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		c->records++;
		return emit_nvtx(c, out, m->id, tid, ts, 0, m->name, 0);
	}
	if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		e = nvtx_find(c, m->id);
		if (e && e->state == NVTX_END) {
			int n = emit_nvtx(c, out, m->id, tid, ts, span(ts, e->ts), m->name, 0);

			nvtx_remove(c, e);
			c->records += 2;
			return n;
		}
		if (e) {	/* the id started twice: keep the newer, the older becomes a mark */
			int n = emit_nvtx(c, out, e->id, e->tid, e->ts, 0, e->name, e->len);

			c->records++;
			e->tid = tid;
			e->ts = ts;
			e->len = name_copy(e->name, m->name);
			return n;
		}
		e = nvtx_insert(c, m->id);
		if (!e) {	/* table full: a mark keeps at least its start and name */
			c->records++;
			return emit_nvtx(c, out, m->id, tid, ts, 0, m->name, 0);
		}
		e->state = NVTX_START;
		e->tid = tid;
		e->ts = ts;
		e->len = name_copy(e->name, m->name);
		return 0;
	}
	if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		e = nvtx_find(c, m->id);
		if (e && e->state == NVTX_START) {
			int n = emit_nvtx(c, out, e->id, e->tid, e->ts, span(e->ts, ts), e->name, e->len);

			nvtx_remove(c, e);
			c->records += 2;
			return n;
		}
		if (e) {	/* the id ended twice without a start: the older end is lost */
			c->unknown++;
			e->ts = ts;
			return 0;
		}
		e = nvtx_insert(c, m->id);
		if (!e) {
			c->unknown++;
			return 0;
		}
		e->state = NVTX_END;
		e->tid = tid;
		e->ts = ts;
		e->len = 0;
		return 0;
	}
	/* sync markers (nvtxDomainSyncUser*) and flags of later versions */
	c->unknown++;
	return 0;
}

/* ------------------------------------------------------------ API */

/* GPU work and API records whose start CUPTI could not collect (0: out of
 * device memory for timestamps, or still running at a forced flush) cannot
 * be placed on a timeline; counted as not converted instead. */
static bool no_time(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return ((const CUpti_ActivityKernel10 *)rec)->start == 0;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)rec)->start == 0;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return ((const CUpti_ActivityMemcpyPtoP4 *)rec)->start == 0;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)rec)->start == 0;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return ((const CUpti_ActivityAPI *)rec)->start == 0;
	default:
		return false;
	}
}

struct gt_cupti_conv *gt_cupti_conv__new(__u32 pid)
{
	struct gt_cupti_conv *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	/* calloc of this size maps fresh zero pages: only slots used get resident */
	c->open = calloc(NVTX_SLOTS, sizeof(*c->open));
	if (!c->open) {
		free(c);
		return NULL;
	}
	c->pid = pid;
	return c;
}

void gt_cupti_conv__free(struct gt_cupti_conv *c)
{
	if (!c)
		return;
	free(c->open);
	free(c);
}

int gt_cupti_conv__record(struct gt_cupti_conv *c, const CUpti_Activity *rec, void *out, size_t room)
{
	int n;

	if (!rec)
		return -EINVAL;
	if (room < GT_CUPTI_REC_MAX)
		return -ENOSPC;

	if (no_time(rec)) {
		c->unknown++;
		return 0;
	}
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:	/* same record; only another client would enable it */
		n = conv_kernel(c, (const CUpti_ActivityKernel10 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		n = conv_memcpy(c, (const CUpti_ActivityMemcpy6 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		n = conv_memcpy_peer(c, (const CUpti_ActivityMemcpyPtoP4 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		n = conv_memset(c, (const CUpti_ActivityMemset4 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		n = conv_api(c, (const CUpti_ActivityAPI *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		return conv_marker(c, (const CUpti_ActivityMarker2 *)rec, out);
	default:
		c->unknown++;
		return 0;
	}
	c->records++;
	return n;
}

int gt_cupti_conv__drain_open(struct gt_cupti_conv *c, void *out, size_t room)
{
	if (room < GT_CUPTI_REC_MAX)
		return -ENOSPC;
	/* no removal while draining: slots are cleared in place, in index order */
	for (; c->drain_pos < NVTX_SLOTS; c->drain_pos++) {
		struct nvtx_open *e = &c->open[c->drain_pos];
		__u8 state = e->state;

		if (state == NVTX_EMPTY)
			continue;
		e->state = NVTX_EMPTY;
		c->nopen--;
		if (state == NVTX_END) {
			c->unknown++;
			continue;
		}
		c->records++;
		c->drain_pos++;
		return emit_nvtx(c, out, e->id, e->tid, e->ts, 0, e->name, e->len);
	}
	c->drain_pos = 0;	/* the table is empty again */
	return 0;
}

__u64 gt_cupti_conv__records(const struct gt_cupti_conv *c)
{
	return c->records;
}

__u64 gt_cupti_conv__unknown(const struct gt_cupti_conv *c)
{
	return c->unknown;
}

size_t gt_cupti_conv__stats(const struct gt_cupti_conv *c, __u64 now,
			    const struct gt_cupti_conv_extra *x, void *out)
{
	struct gt_cupti_stats *r = out;

	hdr_init(&r->hdr, GT_REC_CUPTI_STATS, c->pid, 0, now);
	r->hdr.size = sizeof(*r);
	r->records = c->records;
	r->dropped = x->dropped;
	r->buffers = x->buffers;
	r->unknown = c->unknown;
	r->clock_offset_ns = x->clock_offset_ns;
	r->flags = x->flags;
	r->lost_disk = x->lost_disk;
	r->lost_backlog = x->lost_backlog;
	return sizeof(*r);
}

void gt_cupti_conv__reset_counts(struct gt_cupti_conv *c)
{
	c->records = 0;
	c->unknown = 0;
}

size_t gt_cupti_conv__mark(const struct gt_cupti_conv *c, __u64 ts, __u64 flush_ns, void *out)
{
	struct gt_cupti_mark *r = out;

	hdr_init(&r->hdr, GT_REC_CUPTI_MARK, c->pid, 0, ts);
	r->hdr.size = sizeof(*r);
	r->records = c->records;
	r->flush_ns = flush_ns;
	return sizeof(*r);
}

/* ------------------------------------------------------------ driver cbids */

#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name,

const CUpti_CallbackId gt_cupti_driver_cbids[] = {
	/* kernel launches (cuLaunchHostFunc runs no kernel: left out) */
	CBID(cuLaunch) CBID(cuLaunchGrid) CBID(cuLaunchGridAsync)
	CBID(cuLaunchKernel) CBID(cuLaunchKernel_ptsz)
	CBID(cuLaunchKernelEx) CBID(cuLaunchKernelEx_ptsz)
	CBID(cuLaunchCooperativeKernel) CBID(cuLaunchCooperativeKernel_ptsz)
	CBID(cuLaunchCooperativeKernelMultiDevice)
	CBID(cuGraphLaunch) CBID(cuGraphLaunch_ptsz)
	/* copies */
	CBID(cuMemcpy) CBID(cuMemcpy_v2) CBID(cuMemcpy_ptds)
	CBID(cuMemcpyAsync) CBID(cuMemcpyAsync_ptsz)
	CBID(cuMemcpyPeer) CBID(cuMemcpyPeer_ptds) CBID(cuMemcpyPeerAsync) CBID(cuMemcpyPeerAsync_ptsz)
	CBID(cuMemcpyHtoD) CBID(cuMemcpyHtoD_v2) CBID(cuMemcpyHtoD_v2_ptds)
	CBID(cuMemcpyHtoDAsync) CBID(cuMemcpyHtoDAsync_v2) CBID(cuMemcpyHtoDAsync_v2_ptsz)
	CBID(cuMemcpyDtoH) CBID(cuMemcpyDtoH_v2) CBID(cuMemcpyDtoH_v2_ptds)
	CBID(cuMemcpyDtoHAsync) CBID(cuMemcpyDtoHAsync_v2) CBID(cuMemcpyDtoHAsync_v2_ptsz)
	CBID(cuMemcpyDtoD) CBID(cuMemcpyDtoD_v2) CBID(cuMemcpyDtoD_v2_ptds)
	CBID(cuMemcpyDtoDAsync) CBID(cuMemcpyDtoDAsync_v2) CBID(cuMemcpyDtoDAsync_v2_ptsz)
	CBID(cuMemcpyDtoA) CBID(cuMemcpyDtoA_v2) CBID(cuMemcpyDtoA_v2_ptds)
	CBID(cuMemcpyAtoD) CBID(cuMemcpyAtoD_v2) CBID(cuMemcpyAtoD_v2_ptds)
	CBID(cuMemcpyHtoA) CBID(cuMemcpyHtoA_v2) CBID(cuMemcpyHtoA_v2_ptds)
	CBID(cuMemcpyHtoAAsync) CBID(cuMemcpyHtoAAsync_v2) CBID(cuMemcpyHtoAAsync_v2_ptsz)
	CBID(cuMemcpyAtoH) CBID(cuMemcpyAtoH_v2) CBID(cuMemcpyAtoH_v2_ptds)
	CBID(cuMemcpyAtoHAsync) CBID(cuMemcpyAtoHAsync_v2) CBID(cuMemcpyAtoHAsync_v2_ptsz)
	CBID(cuMemcpyAtoA) CBID(cuMemcpyAtoA_v2) CBID(cuMemcpyAtoA_v2_ptds)
	CBID(cuMemcpy2D) CBID(cuMemcpy2D_v2) CBID(cuMemcpy2D_v2_ptds)
	CBID(cuMemcpy2DUnaligned) CBID(cuMemcpy2DUnaligned_v2) CBID(cuMemcpy2DUnaligned_v2_ptds)
	CBID(cuMemcpy2DAsync) CBID(cuMemcpy2DAsync_v2) CBID(cuMemcpy2DAsync_v2_ptsz)
	CBID(cuMemcpy3D) CBID(cuMemcpy3D_v2) CBID(cuMemcpy3D_v2_ptds)
	CBID(cuMemcpy3DAsync) CBID(cuMemcpy3DAsync_v2) CBID(cuMemcpy3DAsync_v2_ptsz)
	CBID(cuMemcpy3DPeer) CBID(cuMemcpy3DPeer_ptds) CBID(cuMemcpy3DPeerAsync) CBID(cuMemcpy3DPeerAsync_ptsz)
#if CUPTI_API_VERSION >= 130000
	CBID(cuMemcpyBatchAsync) CBID(cuMemcpyBatchAsync_ptsz)
	CBID(cuMemcpyBatchAsync_v2) CBID(cuMemcpyBatchAsync_v2_ptsz)
	CBID(cuMemcpy3DBatchAsync) CBID(cuMemcpy3DBatchAsync_ptsz)
	CBID(cuMemcpy3DBatchAsync_v2) CBID(cuMemcpy3DBatchAsync_v2_ptsz)
#endif
	/* sets */
	CBID(cuMemsetD8) CBID(cuMemsetD8_v2) CBID(cuMemsetD8_v2_ptds)
	CBID(cuMemsetD16) CBID(cuMemsetD16_v2) CBID(cuMemsetD16_v2_ptds)
	CBID(cuMemsetD32) CBID(cuMemsetD32_v2) CBID(cuMemsetD32_v2_ptds)
	CBID(cuMemsetD8Async) CBID(cuMemsetD8Async_ptsz)
	CBID(cuMemsetD16Async) CBID(cuMemsetD16Async_ptsz)
	CBID(cuMemsetD32Async) CBID(cuMemsetD32Async_ptsz)
	CBID(cuMemsetD2D8) CBID(cuMemsetD2D8_v2) CBID(cuMemsetD2D8_v2_ptds)
	CBID(cuMemsetD2D16) CBID(cuMemsetD2D16_v2) CBID(cuMemsetD2D16_v2_ptds)
	CBID(cuMemsetD2D32) CBID(cuMemsetD2D32_v2) CBID(cuMemsetD2D32_v2_ptds)
	CBID(cuMemsetD2D8Async) CBID(cuMemsetD2D8Async_ptsz)
	CBID(cuMemsetD2D16Async) CBID(cuMemsetD2D16Async_ptsz)
	CBID(cuMemsetD2D32Async) CBID(cuMemsetD2D32Async_ptsz)
};

#undef CBID

const size_t gt_cupti_driver_cbids_len = sizeof(gt_cupti_driver_cbids) / sizeof(gt_cupti_driver_cbids[0]);
