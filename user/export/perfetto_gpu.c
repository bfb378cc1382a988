// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`, the GPU side (perfetto.c writes the calls,
 * threads and processes): GPU stream and NVTX tracks of merged traces, and
 * the flows that join each linked GPU record to its call.
 *
 * GPU side (merged traces).  Kernels, copies and sets go on one track per
 * (process, device, context, stream), "GPU 0 stream 7", a child of the
 * process' group track of that device, "GPU 0" (itself a child of the
 * process track), so that a process' streams are grouped per device; NVTX ranges on one "NVTX" track per thread, also under the
 * process (ranges need not nest with the calls).  These are "span" tracks:
 * their records come in begin order (a stream runs its work in launch order,
 * the merger puts linked records after their call's entry and the rest
 * sorted by time), so a slice is begun at once and its end kept on a stack
 * until a later begin passes it; a record older than what its track wrote
 * goes, begin and end together, on the track's late sequence.  Span tracks
 * live to the end: unlinked records come after the processes' exits.
 *
 * Flows.  A linked GPU record comes after its call's entry and before its
 * exit, so the call is among the entries the decoder holds open on the
 * thread: the entry gets a flow base (one per call) and the record the id
 * base << FLOW_SHIFT | n, its n-th GPU record, both kept in the entry's
 * cookie (CK_*); when the decoder emits the call, it comes back with the
 * cookie and the call's slice (or instant, for a call that never
 * completed) carries every id of its base.  The decoder emits every entry
 * it holds exactly once, so each id ends up on exactly two events.  A
 * launch recorded at entry only is emitted at its entry, before its GPU
 * records: perfetto.c holds it back until the next record that is no GPU
 * work, and its GPU records take their ids from it.  A linked record whose
 * call is neither open nor held gets no flow, never a dangling one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/perfetto_int.h"

/* ---- GPU and NVTX -------------------------------------------------------- */

uint64_t pf__proc_uuid(struct pf *x, uint32_t pid)
{
	struct proc *p;
	uint64_t *u;

	if (!hmap_get(&x->procs, pid, 0)) {
		u = u64map__get(&x->ended, (uint64_t)pid + 1);
		if (u)
			return *u;
	}
	/* the live one, described before its first child track */
	p = pf__proc_get(x, pid);
	return p ? p->tr.uuid : 0;
}

/* The group track "GPU N" of a process' streams on device N, under the
 * process track parent, described on first use; 0 when out of memory. */
static uint64_t device_track(struct pf *x, uint64_t parent, uint32_t device)
{
	struct pf_track *t = hmap_get(&x->gdevs, parent, device);
	char name[32];
	void *old;

	if (t)
		return t->uuid;
	t = calloc(1, sizeof(*t));
	if (!t || hmap_put(&x->gdevs, parent, device, t, &old)) {
		free(t);
		pf__fail(x, -ENOMEM, "allocate a track");
		return 0;
	}
	pftrace__track_init(x->w, t);
	snprintf(name, sizeof(name), "GPU %u", device);
	pftrace__track(x->w, t, parent, name);
	return t->uuid;
}

/* The span track of a GPU stream (nvtx false, k1 = context << 32 | stream)
 * or of a thread's NVTX ranges (k1 = tid), described on first use. */
static struct span *span_get(struct pf *x, bool nvtx, uint64_t k1, uint32_t pid, uint32_t device)
{
	struct hmap *m = nvtx ? &x->nvtx : &x->gpu;
	struct span *sp = hmap_get(m, k1, pid);
	uint64_t parent;
	char *name;
	void *old;
	int n;

	if (sp)
		return sp;
	parent = pf__proc_uuid(x, pid);
	if (parent && !nvtx)
		parent = device_track(x, parent, device);
	if (!parent)
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp || hmap_put(m, k1, pid, sp, &old)) {
		free(sp);
		pf__fail(x, -ENOMEM, "allocate a track");
		return NULL;
	}
	if (nvtx) {
		const char *tn = gt_decoder__thread_name(x->d, (uint32_t)k1);

		/* the thread's name whole, however long */
		if (tn)
			n = asprintf(&name, "NVTX %s %u", tn, (uint32_t)k1);
		else
			n = asprintf(&name, "NVTX tid %u", (uint32_t)k1);
	} else {
		n = asprintf(&name, "GPU %u stream %u", device, (uint32_t)k1);
	}
	if (n < 0) {
		pf__fail(x, -ENOMEM, "allocate a track");
		return NULL;
	}
	pftrace__track_init(x->w, &sp->tr);
	pftrace__track(x->w, &sp->tr, parent, name);
	free(name);
	return sp;
}

void pf__span_free(struct span *sp)
{
	pftrace__track_free(&sp->tr);
	free(sp->ends);
	free(sp);
}

void pf__field_args(struct pf *x, const struct cf_val *v, unsigned n, uint64_t skip)
{
	for (unsigned i = 0; i < n; i++) {
		const struct cf_val *f = &v[i];
		uint32_t name;

		if (f->id == CF_TYPE) {
			/* the category, as the JSON export's "cat" */
			pftrace__event_category(x->w, f->s, f->len);
			continue;
		}
		if (cf_skips(skip, f->id))
			continue;
		if (!x->cf_ann[f->id])
			x->cf_ann[f->id] = pftrace__cstring(x->w, cf_names[f->id]);
		name = x->cf_ann[f->id];
		switch (f->kind) {
		case CF_K_U64: pftrace__ann_uint(x->w, name, f->u); break;
		case CF_K_I64: pftrace__ann_int(x->w, name, f->i); break;
		case CF_K_BOOL: pftrace__ann_bool(x->w, name, f->b); break;
		case CF_K_DIM3: pftrace__ann_uints(x->w, name, f->dim, 3); break;
		case CF_K_PPM: pftrace__ann_double(x->w, name, f->u / 1e4); break;
		case CF_K_MICRO: pftrace__ann_double(x->w, name, f->i / 1e6); break;
		case CF_K_STR:
			/* the NVTX message is the slice's name already */
			if (f->id != CF_NAME)
				pftrace__ann_str(x->w, name, pftrace__string(x->w, f->s, f->len));
			break;
		}
	}
}

static void span_end(struct pf *x, struct span *sp, struct pf_seq *s, uint64_t ts)
{
	pftrace__event_open(x->w, &sp->tr, s, PF_SLICE_END, ts, 0);
	pftrace__event_close(x->w);
}

/* One slice (an instant when dur is 0) on a span track, see the top. */
static void span_put(struct pf *x, struct span *sp, uint64_t ts, uint64_t dur, uint32_t name,
		     const struct cf_val *v, unsigned n, uint64_t flow, uint32_t stack)
{
	struct pf_seq *s = pftrace__track_seq(x->w, &sp->tr, ts);
	uint64_t end = ts + dur;
	bool late = s != &sp->tr.seq;

	if (!late) {
		while (sp->depth && sp->ends[sp->depth - 1] <= ts)
			span_end(x, sp, s, sp->ends[--sp->depth]);
		if (sp->depth && end > sp->ends[sp->depth - 1]) {
			/* overlaps the slice it began in: keep the nesting */
			end = sp->ends[sp->depth - 1];
			x->clamped++;
		}
	}
	pftrace__event_open(x->w, &sp->tr, s, dur ? PF_SLICE_BEGIN : PF_INSTANT, ts, name);
	/* the slice itself shows these */
	pf__field_args(x, v, n, (1ull << CF_TS) | (1ull << CF_PID) | (1ull << CF_TID) |
		       (1ull << CF_DUR) | (1ull << CF_KERNEL));
	if (flow)
		pftrace__event_flow(x->w, flow);
	pf__event_stack(x, stack);
	pftrace__event_close(x->w);
	if (!dur)
		return;
	if (late) {
		span_end(x, sp, s, end);
		return;
	}
	pf__ends_push(x, &sp->ends, &sp->depth, &sp->capends, end);
}

/* The cookie of the newest open entry that began at ts. */
struct entry_at {
	uint64_t ts;		/* the launch's entry time */
	uint64_t *cookie;	/* NULL when no open entry began then */
};

static int find_entry(void *ctx, const struct gt_open_entry *e)
{
	struct entry_at *f = ctx;

	if (e->ts == f->ts)
		f->cookie = e->cookie;	/* oldest first: the last match is the newest */
	return 0;
}

/* The flow id of a GPU record of the held entry-only launch (perfetto.c):
 * the next of its base. */
static uint64_t held_flow(struct pf *x)
{
	struct item *it = &x->held;

	if (it->nflow >= FLOW_PER_CALL)
		return 0;
	if (!it->nflow) {
		if (x->flow_bases >= CK_BASE_MAX)
			return 0;
		it->flow_base = ++x->flow_bases;
	}
	return it->flow_base << FLOW_SHIFT | it->nflow++;
}

/* The flow id of a linked GPU record: the next of its call's base, if the
 * call is open on its thread or is the held entry-only launch; 0 when it
 * is neither (no arrow rather than a dangling one). */
static uint64_t gpu_flow(struct pf *x, uint32_t pid, uint32_t tid, uint64_t launch_ts)
{
	struct entry_at f = { .ts = launch_ts };
	uint32_t n;
	uint64_t ck;

	gt_decoder__open_entries(x->d, pid, tid, find_entry, &f);
	if (!f.cookie && x->holding && x->held.c.pid == pid && x->held.c.tid == tid &&
	    x->held.c.ts == launch_ts)
		return held_flow(x);
	if (!f.cookie)
		return 0;
	ck = *f.cookie;
	n = ck_nflow(ck);
	/* An entry we stopped waiting for (perfetto_order.c) keeps the arrows it
	 * has but starts none, as the exporter has always drawn them:
	 * starting some would change its output, a change of its own. */
	if (n >= FLOW_PER_CALL || ((ck & CK_GIVEN_UP) && !n))
		return 0;
	if (!n) {
		if (x->flow_bases >= CK_BASE_MAX)
			return 0;
		ck |= ++x->flow_bases << CK_BASE_SHIFT;
	}
	*f.cookie = ck + CK_NFLOW_ONE;
	return ck_flow_base(ck) << FLOW_SHIFT | n;
}

/* A kernel, copy or set on its stream's track, or an NVTX range (a mark:
 * an instant) on its thread's NVTX track. */
int pf__on_gpu(struct pf *x, const struct gt_hdr *rec)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *cp = (const void *)rec;
	struct cf_val v[CF_MAX];
	char buf[CF_NAME_BUF];
	const char *name;
	uint64_t dur, flow = 0;
	uint32_t stack = 0;
	struct span *sp;
	size_t len;
	unsigned n = fields__gpu(x->d, rec, v);

	if (!n)
		return pf_err(x);
	if (rec->type == GT_REC_NVTX) {
		dur = ((const struct gt_nvtx *)rec)->dur;
		sp = span_get(x, true, rec->tid, rec->pid, 0);
	} else if (rec->type == GT_REC_GPU_KERNEL) {
		dur = k->dur;
		sp = span_get(x, false, (uint64_t)k->context << 32 | k->stream, rec->pid, k->device);
		if (k->flags & GT_GPU_LINKED)
			flow = gpu_flow(x, rec->pid, rec->tid, k->launch_ts);
		/* a CUDA graph's kernel: the stack of the launch that captured it */
		if (k->flags & GT_GPU_CAPTURED) {
			const struct gt_gpu_graph *gr = gt_gpu_kernel__graph(k);

			stack = gr ? gr->stack : 0;
		}
	} else {
		dur = cp->dur;
		sp = span_get(x, false, (uint64_t)cp->context << 32 | cp->stream, rec->pid,
			      cp->device);
		if (cp->flags & GT_GPU_LINKED)
			flow = gpu_flow(x, rec->pid, rec->tid, cp->launch_ts);
	}
	if (!sp)
		return pf_err(x);
	name = fields__gpu_name(x->d, rec, buf, &len);
	span_put(x, sp, rec->ts, dur, pftrace__string(x->w, name, len), v, n, flow, stack);
	return pf_err(x);
}

/* Writes the ends every span track still holds. */
void pf__spans_finish(struct pf *x, struct hmap *m)
{
	for (uint32_t i = 0; i < m->cap && !pf_err(x); i++) {
		struct span *sp = m->s[i].v;

		while (m->s[i].used && sp->depth && !pf_err(x))
			span_end(x, sp, &sp->tr.seq, sp->ends[--sp->depth]);
	}
}
