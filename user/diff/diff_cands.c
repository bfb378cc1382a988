// SPDX-License-Identifier: MIT
/*
 * diff: the candidates for the iteration in one trace, from what the first
 * pass found (diff_trace.c): per process, the ranges of each NVTX series,
 * the capture ranges, the launches of each CUDA graph, and the period of the
 * kernel launch sequence (diff_iter.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture_spans.h"
#include "diff/diff_scan.h"
#include "lib/vec.h"
#include "lib/cmp.h"

/* ---- candidates ---------------------------------------------------------- */

/* A new candidate of n iterations (arrays owned by it); NULL when out of memory. */
static struct scan_series *cand_new(struct diff_scan *s, enum diff_iter_source src, uint32_t pid,
				    size_t n)
{
	struct scan_series *x;

	if (vec__reserve(&s->series, &s->series_cap, s->nseries, 1, 16))
		return NULL;
	x = &s->series[s->nseries];
	*x = (struct scan_series){ .c = { .source = src, .pid = pid, .count = (uint32_t)n } };
	x->start = malloc((n ? n : 1) * sizeof(*x->start));
	x->end = malloc((n ? n : 1) * sizeof(*x->end));
	if (!x->start || !x->end) {
		free(x->start);
		free(x->end);
		return NULL;
	}
	s->nseries++;
	return x;
}

/* Keeps the steady state of x's iterations (analyze/steady.h's phases),
 * all of them when there is none; adds up what they cover. */
static int cand_cover(struct scan_series *x)
{
	struct steady_phases ph;
	int err = steady__phases(x->start, x->end, x->c.count, &ph);

	if (err)
		return err;
	x->found = x->c.count;
	if (ph.found) {
		uint32_t n = (uint32_t)(ph.last - ph.first + 1);

		x->steady = true;
		x->startup = (uint32_t)ph.first;
		x->tail = x->c.count - 1 - (uint32_t)ph.last;
		memmove(x->start, x->start + ph.first, n * sizeof(*x->start));
		memmove(x->end, x->end + ph.first, n * sizeof(*x->end));
		x->c.count = n;
	}
	x->c.coverage = 0;
	for (uint32_t i = 0; i < x->c.count; i++)
		x->c.coverage += x->end[i] - x->start[i];
	return 0;
}

static int iv_cmp(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Iterations from one start to the next: n starts make n - 1. */
static int cand_starts(struct diff_scan *s, enum diff_iter_source src, uint32_t pid,
		       const uint64_t *ts, size_t n, struct scan_series **out)
{
	struct scan_series *x;

	*out = NULL;
	if (n < 3)	/* two iterations at least */
		return 0;
	x = cand_new(s, src, pid, n - 1);
	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < n; i++) {
		x->start[i] = ts[i];
		x->end[i] = ts[i + 1];
	}
	*out = x;
	return cand_cover(x);
}

static int cand_ivs(struct diff_scan *s, enum diff_iter_source src, uint32_t pid, struct iv *v,
		    size_t n, struct scan_series **out)
{
	struct scan_series *x;

	*out = NULL;
	if (n < 2)
		return 0;
	cmp__sort(v, n, sizeof(*v), iv_cmp);
	x = cand_new(s, src, pid, n);
	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		x->start[i] = v[i].start;
		x->end[i] = v[i].end;
	}
	*out = x;
	return cand_cover(x);
}

static int nvtx_cands(struct diff_scan *s)
{
	struct scan_series *x;
	int err;

	for (uint32_t i = 0; i < s->nvtx.cap; i++) {
		struct scan_nvtx *n = s->nvtx.s[i].v;

		if (!s->nvtx.s[i].used)
			continue;
		err = cand_ivs(s, DIFF_ITER_NVTX, n->pid, n->v, n->n, &x);
		if (err)
			return err;
		if (x && !(x->c.name = x->name = strdup(s->nvtx_names.v[n->series]->name)))
			return -ENOMEM;
		/* a library's ranges, or a sliver of each step: no iterations
		 * unless --iter says so */
		if (x)
			x->c.weak = !steady__ranges_are_iterations(x->name, x->start, x->end, x->c.count);
	}
	return 0;
}

/* Capture ranges of each process, refused ones left out. */
static int capture_cands(struct diff_scan *s)
{
	size_t n = capture_spans__count(s->cap), cap = 0, k;
	struct iv *v = NULL;
	struct scan_series *x;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct capspan *a = capture_spans__at(s->cap, i);
		bool seen = false;

		if (a->kind != CAPSPAN_RANGE || a->end == CAPSPAN_REFUSED)
			continue;
		/* the first range of each process gathers that process' ranges */
		for (size_t j = 0; j < i && !seen; j++) {
			const struct capspan *b = capture_spans__at(s->cap, j);

			seen = b->kind == CAPSPAN_RANGE && b->end != CAPSPAN_REFUSED && b->pid == a->pid;
		}
		if (seen)
			continue;
		k = 0;
		for (size_t j = i; j < n; j++) {
			const struct capspan *b = capture_spans__at(s->cap, j);

			if (b->kind != CAPSPAN_RANGE || b->end == CAPSPAN_REFUSED || b->pid != a->pid)
				continue;
			if (vec__reserve(&v, &cap, k, 1, 16)) {
				err = -ENOMEM;
				break;
			}
			v[k++] = (struct iv){ b->start_ts, b->end_ts };
		}
		if (!err)
			err = cand_ivs(s, DIFF_ITER_CAPTURE, a->pid, v, k, &x);
	}
	free(v);
	return err;
}

static int graph_cands(struct diff_scan *s)
{
	struct scan_series *x;
	char hex[32];
	int err;

	for (uint32_t i = 0; i < s->graphs.cap; i++) {
		struct scan_graph *g = s->graphs.s[i].v;

		if (!s->graphs.s[i].used)
			continue;
		cmp__sort(g->ts, g->n, sizeof(*g->ts), u64_cmp);
		err = cand_starts(s, DIFF_ITER_GRAPH, g->pid, g->ts, g->n, &x);
		if (err)
			return err;
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)g->exec);
		if (x && !(x->name = strdup(hex)))
			return -ENOMEM;
	}
	return 0;
}

static int kernel_cands(struct diff_scan *s)
{
	struct scan_series *x;
	int err;

	for (uint32_t i = 0; i < s->procs.cap; i++) {
		struct scan_proc *p = s->procs.s[i].v;

		if (!s->procs.s[i].used || p->seq_state != SEQ_MATCH)
			continue;
		err = cand_starts(s, DIFF_ITER_KERNELS, p->pid, p->seq.starts, p->seq.n, &x);
		if (err)
			return err;
		if (x) {
			x->period = p->seq.p;
			x->off = p->seq.off;
		}
	}
	return 0;
}

/* Per process, its best series of the call stream when a synchronization
 * or a collective closes each iteration. */
static int sync_cands(struct diff_scan *s)
{
	struct scan_series *x;
	int err;

	for (uint32_t i = 0; i < s->procs.cap; i++) {
		const struct scan_proc *p = s->procs.s[i].v;
		const struct steady_series *b;

		if (!s->procs.s[i].used)
			continue;
		b = steady_scan__best(s->steady, p->pid, 1u << STEADY_SYNC | 1u << STEADY_COLL, NULL, NULL);
		/* grouped (a run of more than STEADY_MAX_SEGS): no single
		 * iterations to compare; the kernel sequence's, or none */
		if (!b || b->n < 2 || b->group > 1)
			continue;
		x = cand_new(s, DIFF_ITER_SYNC, p->pid, b->n);
		if (!x)
			return -ENOMEM;
		memcpy(x->start, b->start, b->n * sizeof(*x->start));
		memcpy(x->end, b->end, b->n * sizeof(*x->end));
		x->period = b->tokens;
		if (!(x->name = strdup(b->what)))
			return -ENOMEM;
		x->c.what = x->name;
		err = cand_cover(x);
		if (err)
			return err;
	}
	return 0;
}

int diff_cands__find(struct diff_scan *s)
{
	int err = nvtx_cands(s);

	if (!err)
		err = capture_cands(s);
	if (!err)
		err = graph_cands(s);
	if (!err)
		err = sync_cands(s);
	if (!err)
		err = kernel_cands(s);
	return err;
}
