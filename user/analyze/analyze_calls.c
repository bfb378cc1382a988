// SPDX-License-Identifier: MIT
/*
 * The calls of `gtrace-bpf analyze` as a scope counts them (analyze.c routes
 * each call to its scopes): a top-level call's time, in waiting calls or in
 * the others, and the host gaps between launches; launches (their cost, the
 * intervals between them, streams, small grids); synchronize calls; blocking
 * copies and sets, counted among launches once a launch follows; pageable
 * copies, told apart by the process' allocations (pinned or device memory),
 * which are kept here too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "lib/vec.h"

/* ---- allocations (pinned or device memory, for pageable copies) ------------ */

static size_t alloc_find(const struct az_proc *p, uint64_t ptr)
{
	size_t lo = 0, hi = p->nallocs;

	/* the last allocation starting at or below ptr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->allocs[mid].lo <= ptr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;	/* allocs[lo - 1] is the candidate when lo > 0 */
}

/* 1 pinned host memory, 2 device memory, 0 not known */
static int alloc_kind(const struct az_proc *p, uint64_t ptr)
{
	size_t i = alloc_find(p, ptr);

	if (!i || ptr >= p->allocs[i - 1].hi)
		return 0;
	return p->allocs[i - 1].pinned ? 1 : 2;
}

static int alloc_add(struct analyze *a, struct az_proc *p, uint64_t ptr, uint64_t bytes,
		     bool pinned)
{
	size_t i;

	if (!ptr || !bytes)
		return 0;
	if (vec__reserve(&p->allocs, &p->acap, p->nallocs, 1, 16)) {
		a->err = -ENOMEM;
		return -ENOMEM;
	}
	i = alloc_find(p, ptr);
	/* the same address again: the earlier one was freed without our seeing it */
	if (i && p->allocs[i - 1].lo == ptr) {
		p->allocs[i - 1] = (struct az_alloc){ ptr, ptr + bytes, pinned };
		return 0;
	}
	memmove(p->allocs + i + 1, p->allocs + i, (p->nallocs - i) * sizeof(*p->allocs));
	p->allocs[i] = (struct az_alloc){ ptr, ptr + bytes, pinned };
	p->nallocs++;
	return 0;
}

static void alloc_del(struct az_proc *p, uint64_t ptr)
{
	size_t i = alloc_find(p, ptr);

	if (!i || p->allocs[i - 1].lo != ptr)
		return;
	memmove(p->allocs + i - 1, p->allocs + i, (p->nallocs - i) * sizeof(*p->allocs));
	p->nallocs--;
}

/* ---- calls ------------------------------------------------------------------ */

static struct az_tacc *tacc_get(struct analyze *a, struct az_acc *acc, uint32_t tid)
{
	struct az_tacc *t = acc->last_t;
	void *old;

	if (t && t->tid == tid)
		return t;
	t = hmap_get(&acc->threads, tid, 0);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hmap_put(&acc->threads, tid, 0, t, &old)) {
			free(t);
			a->err = -ENOMEM;
			return NULL;
		}
		t->tid = tid;
	}
	acc->last_t = t;
	return t;
}

static bool is_wait_class(enum gt_api_class cls)
{
	/* cuda_sync_sum's set, so that sync time agrees with stats */
	return cls == GT_CLS_SYNC || cls == GT_CLS_QUERY || cls == GT_CLS_STREAM_WAIT;
}

static bool legacy_stream(const struct gt_callrec *c)
{
	const char *n = gt_api__name(c->api);
	size_t len = n ? strlen(n) : 0;
	bool per_thread = len > 5 && (!strcmp(n + len - 5, "_ptsz") || !strcmp(n + len - 5, "_ptds"));

	/* 0 is the legacy stream, except to the per-thread variants; 1 is
	 * CU_STREAM_LEGACY, 2 CU_STREAM_PER_THREAD */
	return c->stream == 1 || (c->stream == 0 && !per_thread);
}

/* A launch's kernel name that lives as long as the decoder (the decoder's
 * own go with their process), for examples. */
static const char *launch_name(struct analyze *a, const struct gt_callrec *c)
{
	if (c->graph)
		return "[CUDA graph launch]";
	return c->mangled && a->d ? gt_decoder__demangle(a->d, c->mangled) : gt_api__name(c->api);
}

static int acc_launch(struct analyze *a, struct az_acc *acc, struct az_tacc *t,
		      const struct gt_callrec *c)
{
	void *old;

	acc->launches++;
	if (c->has_exit && !c->entry_only && loghist__add(&acc->launch_dur, c->dur))
		return -ENOMEM;
	if (t->last_launch && !t->other_since && c->ts > t->last_launch &&
	    loghist__add(&acc->launch_gap, c->ts - t->last_launch))
		return -ENOMEM;
	t->last_launch = c->ts;
	t->other_since = false;
	t->launches_since_wait++;
	if (legacy_stream(c)) {
		acc->legacy++;
		az_top__add(&acc->legacy_top, 1, c->ts, c->has_exit ? c->dur : 0, c->pid, c->tid,
			    launch_name(a, c));
	} else {
		acc->created_stream_launches++;
	}
	if (!hmap_get(&acc->lstreams, c->stream, 0) &&
	    hmap_put(&acc->lstreams, c->stream, 0, acc, &old))
		return -ENOMEM;
	if (!c->graph && grid_blocks(c->grid) < a->sm_count) {
		acc->small_launches++;
		az_top__add(&acc->small_launch_top, 1, c->ts, c->has_exit ? c->dur : 0, c->pid,
			    c->tid, launch_name(a, c));
	}
	/* the blocking copies and sets before this launch were among launches */
	acc->bc_inside += acc->bc_pending;
	acc->bc_inside_ns += acc->bc_pending_ns;
	az_top__merge(&acc->bc_top, &acc->bc_pending_top);
	acc->bc_pending = acc->bc_pending_ns = 0;
	acc->bc_pending_top.n = 0;
	acc->ms_inside += acc->ms_pending;
	acc->ms_inside_ns += acc->ms_pending_ns;
	az_top__merge(&acc->ms_top, &acc->ms_pending_top);
	acc->ms_pending = acc->ms_pending_ns = 0;
	acc->ms_pending_top.n = 0;
	return 0;
}

/* The host side of a copy: 1 pinned, 2 device, 0 pageable or unknown; -1
 * when the copy does not touch host memory. */
static int copy_host_side(const struct az_proc *p, const struct gt_callrec *c)
{
	int s = alloc_kind(p, c->src), d = alloc_kind(p, c->ptr);

	switch (c->kind) {
	case GT_COPY_HTOD:
	case GT_COPY_HTOA:
		return s;
	case GT_COPY_DTOH:
	case GT_COPY_ATOH:
		return d;
	case GT_COPY_DEFAULT:
		/* unified addressing: a host side is the one that is not device memory */
		if (s == 2 && d != 2)
			return d;
		if (d == 2 && s != 2)
			return s;
		return -1;
	default:
		return -1;
	}
}

/* A synchronize call with a stack: to its call site's sum (sync_site).
 * Returns 0 or -ENOMEM. */
static int site_add(struct analyze *a, struct az_acc *acc, const struct gt_callrec *c)
{
	struct gt_frame f;
	struct az_site *s;
	uint64_t key;

	if (!gt_decoder__call_site(a->d, c->stack, &f))
		return 0;
	key = gt_frame__key(&f);
	s = hmap_get_or_new(&acc->sites, key, 0, sizeof(*s), NULL);
	if (!s)
		return -ENOMEM;
	s->ns += c->dur;
	s->n++;
	if (c->dur > s->longest.value || !s->longest.ex.stack)
		s->longest = (struct az_top_ent){ c->dur, { c->ts, c->dur, c->pid, c->tid,
							    gt_api__name(c->api), c->stack } };
	acc->site_waits++;
	acc->site_wait_ns += c->dur;
	return 0;
}

int az_calls__acc(struct analyze *a, struct az_acc *acc, struct az_proc *p,
		  const struct gt_callrec *c, bool nested, uint64_t off_now)
{
	const struct gt_api_info *ai = gt_api__info(c->api);
	enum gt_api_class cls = ai ? ai->cls : GT_CLS_NONE;
	uint64_t end = c->has_exit ? c->ts + c->dur : c->ts;
	struct az_tacc *t = tacc_get(a, acc, c->tid);
	int host;

	if (!t)
		return -ENOMEM;
	acc_seen(acc, c->ts, end);
	if (!nested) {
		acc->calls++;
		if (!t->first && !t->last) {
			t->first = c->ts;
			t->off_first = c->cookie;
		}
		/* a host gap seen from the calls: the thread made none for a while
		 * between two of its launches */
		if (c->type == GT_T_LAUNCH && t->last_launch && c->ts > t->last &&
		    c->ts - t->last >= AZ_HOST_GAP_NS) {
			acc->thost_gaps++;
			acc->thost_gap_ns += c->ts - t->last;
			az_top__add(&acc->thost_top, c->ts - t->last, t->last, c->ts - t->last,
				    c->pid, c->tid, "host gap");
		}
		if (c->has_exit) {
			uint64_t off = off_now > c->cookie ? off_now - c->cookie : 0;

			acc->cut += c->at_end;
			t->timed = true;
			if (is_wait_class(cls)) {
				t->sync_ns += c->dur;
				/* in flight at the end: its off-CPU time is not
				 * known (the switch back in was never recorded) */
				if (c->at_end)
					t->sync_cut_ns += c->dur;
				else
					t->sync_off_ns += off;
			} else {
				t->calls_ns += c->dur;
				t->calls_off_ns += off;
			}
		} else if (!c->entry_only) {
			acc->incomplete++;
		}
		if (end >= t->last) {
			t->last = end;
			t->off_last = off_now;
		}
	}
	if (c->type != GT_T_LAUNCH)
		t->other_since = true;
	switch (cls) {
	case GT_CLS_LAUNCH:
	case GT_CLS_GRAPH:
		return acc_launch(a, acc, t, c);
	case GT_CLS_SYNC:
		acc->waits++;
		if (c->has_exit) {
			uint64_t from = c->ts > acc->est_end ? c->ts : acc->est_end;

			acc->wait_ns += c->dur;
			az_top__add_at(&acc->wait_top, c->dur, c->ts, c->dur, c->pid, c->tid,
				       gt_api__name(c->api), c->stack);
			if (c->stack && a->d && site_add(a, acc, c))
				return -ENOMEM;
			if (end > from)
				acc->est_ns += end - from;
			if (end > acc->est_end)
				acc->est_end = end;
		}
		if (t->launches_since_wait && loghist__add(&acc->per_wait, t->launches_since_wait))
			return -ENOMEM;
		t->launches_since_wait = 0;
		return 0;
	case GT_CLS_MEMCPY:
	case GT_CLS_MEMCPY2D:
	case GT_CLS_MEMCPY3D:
		if (c->has_exit && c->ret)
			return 0;
		host = copy_host_side(p, c);
		if (host < 0)
			return 0;
		if (ai->d == GT_NA) {
			acc->bc_pending++;
			acc->bc_pending_ns += c->has_exit ? c->dur : 0;
			az_top__add_at(&acc->bc_pending_top, c->has_exit ? c->dur : 0, c->ts,
				       c->has_exit ? c->dur : 0, c->pid, c->tid, gt_api__name(c->api),
				       c->stack);
		} else if (host == 0) {
			acc->pageable++;
			acc->pageable_ns += c->has_exit ? c->dur : 0;
			az_top__add_at(&acc->pageable_top, c->has_exit ? c->dur : 0, c->ts,
				       c->has_exit ? c->dur : 0, c->pid, c->tid, gt_api__name(c->api),
				       c->stack);
		}
		return 0;
	case GT_CLS_MEMSET:
		if (ai->d == GT_NA && !(c->has_exit && c->ret)) {
			acc->ms_pending++;
			acc->ms_pending_ns += c->has_exit ? c->dur : 0;
			az_top__add_at(&acc->ms_pending_top, c->has_exit ? c->dur : 0, c->ts,
				       c->has_exit ? c->dur : 0, c->pid, c->tid, gt_api__name(c->api),
				       c->stack);
		}
		return 0;
	default:
		return 0;
	}
}

/* Allocations and frees, per process (not per scope). */
int az_calls__track_memory(struct analyze *a, struct az_proc *p, const struct gt_callrec *c)
{
	bool pinned = c->api == GT_API_cuMemAllocHost_v2 || c->api == GT_API_cuMemHostAlloc;

	/* cuMemCreate gives a handle, not an address; managed memory is
	 * neither side */
	if (c->type == GT_T_ALLOC && c->has_exit && !c->ret && c->out_valid &&
	    c->api != GT_API_cuMemCreate && c->api != GT_API_cuMemAllocManaged)
		return alloc_add(a, p, c->ptr, c->bytes, pinned);
	if (c->type == GT_T_FREE)
		alloc_del(p, c->handle);
	return 0;
}
