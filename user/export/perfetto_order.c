// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`, the order of a thread's track: when the calls
 * perfetto.c makes are written (their events: perfetto_args.c).
 *
 * Ordering.  The decoder hands calls over in completion order (a nested
 * call before its parent); a sequence's timestamps must not decrease and a
 * track's begin/end events must nest.  No call completed later can begin
 * before the oldest entry the decoder holds open on the thread (it pairs
 * entries with exits, we ask it: gt_decoder__open_entries): that entry's
 * time is the watermark W.  Completed calls wait in a small per-thread
 * buffer sorted by begin; those that begin before W are written in that
 * order, and a written slice's end waits on a stack until it is below W
 * too.  So a thread buffers what its outermost open call holds, not the
 * trace.  An entry whose exit was lost would hold W until its process ends:
 * past BUF_MAX buffered calls we give up waiting for the oldest open entry
 * (a mark in its cookie, CK_GIVEN_UP; the next one holds W), and if its
 * call comes after all it goes, begin and end together, on the track's late
 * sequence (pftrace__track_seq); trace_processor sorts sequences by time,
 * so the slice still encloses its children.
 */
#include <errno.h>
#include <string.h>
#include "export/perfetto_int.h"
#include "lib/vec.h"

#define BUF_MAX		512	/* calls a thread buffers before giving up its oldest open entry */

static void write_end(struct pf *x, struct thr *t, struct pf_seq *s, uint64_t ts)
{
	pftrace__event_open(x->w, &t->tr, s, PF_SLICE_END, ts, 0);
	pftrace__event_close(x->w);
}

void pf__ends_push(struct pf *x, uint64_t **ends, uint32_t *depth, uint32_t *cap, uint64_t end)
{
	if (vec__reserve(ends, cap, *depth, 1, 16)) {
		pf__fail(x, -ENOMEM, "allocate a slice stack");
		return;
	}
	(*ends)[(*depth)++] = end;
}

/* Writes one call on its thread's track: first the ends of the written
 * slices it is not inside, then its begin (or instant). */
static void write_item(struct pf *x, struct thr *t, struct item *it)
{
	struct pf_seq *s = pftrace__track_seq(x->w, &t->tr, it->c.ts);

	if (s != &t->tr.seq) {
		/* older than what the thread's sequence has: a call given up on */
		pf__write_call(x, t, s, it);
		if (item_slice(it))
			write_end(x, t, s, it->end);
		free(it->nccl);
		it->nccl = NULL;
		return;
	}
	while (t->depth) {
		uint64_t top = t->ends[t->depth - 1];

		if (it->end <= top)
			break;
		if (it->c.ts < top) {
			/* overlaps the slice it began in (exits paired wrongly
			 * upstream): keep the nesting, cut this one short */
			it->end = top;
			x->clamped++;
			break;
		}
		write_end(x, t, s, top);
		t->depth--;
	}
	pf__write_call(x, t, s, it);
	free(it->nccl);
	it->nccl = NULL;
	if (item_slice(it))
		pf__ends_push(x, &t->ends, &t->depth, &t->capends, it->end);
}

/* The oldest entry open on a thread that we still wait for. */
struct waited {
	uint64_t ts;		/* its entry time, UINT64_MAX when none */
	uint64_t *cookie;	/* its cookie, NULL when none */
};

static int first_waited(void *ctx, const struct gt_open_entry *e)
{
	struct waited *w = ctx;

	if (*e->cookie & CK_GIVEN_UP)
		return 0;
	w->ts = e->ts;
	w->cookie = e->cookie;
	return 1;
}

static struct waited oldest_waited(struct pf *x, const struct thr *t)
{
	struct waited w = { .ts = UINT64_MAX };

	gt_decoder__open_entries(x->d, t->pid, t->tid, first_waited, &w);
	return w;
}

static uint64_t watermark(struct pf *x, const struct thr *t)
{
	return oldest_waited(x, t).ts;
}

void pf__drain_below(struct pf *x, struct thr *t, uint64_t w)
{
	uint32_t i = 0;

	while (i < t->nbuf && t->buf[i].c.ts < w && !pf_err(x))
		write_item(x, t, &t->buf[i++]);
	if (i) {
		t->nbuf -= i;
		memmove(t->buf, t->buf + i, t->nbuf * sizeof(*t->buf));
	}
	while (t->depth && t->ends[t->depth - 1] < w && !pf_err(x))
		write_end(x, t, &t->tr.seq, t->ends[--t->depth]);
}

static int cut_entry(void *ctx, const struct gt_open_entry *e)
{
	uint64_t *n = ctx;

	*n += ck_nflow(*e->cookie);
	/* the call comes back without these; a GPU record linked to it later
	 * starts a new base, in the new part */
	*e->cookie &= CK_GIVEN_UP;
	return 0;
}

uint64_t pf__threads_cut_flows(struct pf *x)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < x->thrs.cap; i++) {
		struct thr *t = x->thrs.s[i].v;

		if (!x->thrs.s[i].used)
			continue;
		for (uint32_t k = 0; k < t->nbuf; k++) {
			n += t->buf[k].nflow;
			t->buf[k].nflow = 0;
		}
		gt_decoder__open_entries(x->d, t->pid, t->tid, cut_entry, &n);
	}
	return n;
}

void pf__threads_end_slices(struct pf *x)
{
	for (uint32_t i = 0; i < x->thrs.cap && !pf_err(x); i++) {
		struct thr *t = x->thrs.s[i].v;

		while (x->thrs.s[i].used && t->depth && !pf_err(x))
			write_end(x, t, &t->tr.seq, t->ends[--t->depth]);
	}
}

static void drain(struct pf *x, struct thr *t)
{
	pf__drain_below(x, t, watermark(x, t));
}

/* a goes before b: earlier begin; at equal begins the enclosing one. */
static bool item_before(const struct item *a, const struct item *b)
{
	if (a->c.ts != b->c.ts)
		return a->c.ts < b->c.ts;
	if (a->end != b->end)
		return a->end > b->end;
	return a->order > b->order;
}

static void buffer(struct pf *x, struct thr *t, const struct item *it)
{
	struct waited w;
	uint32_t i;

	if (vec__reserve(&t->buf, &t->capbuf, t->nbuf, 1, 8)) {
		pf__fail(x, -ENOMEM, "buffer a call");
		return;
	}
	/* calls come mostly in begin order, parents after their children */
	for (i = t->nbuf; i > 0 && item_before(it, &t->buf[i - 1]); i--)
		;
	memmove(t->buf + i + 1, t->buf + i, (t->nbuf - i) * sizeof(*t->buf));
	t->buf[i] = *it;
	t->nbuf++;
	/* An entry whose exit was lost holds W until its process ends: past
	 * BUF_MAX calls, stop waiting for the oldest one. */
	while (t->nbuf > BUF_MAX && (w = oldest_waited(x, t)).cookie) {
		*w.cookie |= CK_GIVEN_UP;
		x->abandoned++;
		drain(x, t);
	}
}

int pf__place(struct pf *x, struct thr *t, struct item *it)
{
	if (pf_err(x))
		return pf_err(x);
	if (!t->nbuf && it->c.ts < watermark(x, t))
		write_item(x, t, it);	/* the usual case: nothing waits, write it now */
	else
		buffer(x, t, it);
	drain(x, t);
	return pf_err(x);
}
