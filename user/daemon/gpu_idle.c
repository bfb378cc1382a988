// SPDX-License-Identifier: MIT
/*
 * The GPU idle detector (gpu_idle.h): batches of one process' activities and
 * driver API records, settled at the agent's flush marks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cmp.h"
#include "lib/vec.h"
#include "daemon/gpu_idle.h"

/* A kernel, copy or set as the GPU ran it. */
struct act {
	uint64_t start, end;
};

/* A driver API record: a submission, until its GPU record comes. */
struct sub {
	uint64_t ts;		/* the call's start */
	uint32_t corr;		/* CUPTI correlation id */
};

struct gpu_idle {
	uint64_t threshold;		/* a gap must be longer than this */
	uint64_t busy_until;		/* latest end of an activity settled, 0 = none yet */
	uint64_t reported_end;		/* end of the last gap reported */
	struct act *acts;		/* activities since the last mark */
	size_t nacts, acts_cap;
	uint32_t *corrs;		/* their correlation ids (sorted at the mark) */
	size_t ncorrs, corrs_cap;
	uint32_t *prev;			/* ... those of the batch before, sorted */
	size_t nprev, prev_cap;
	struct sub *apis;		/* driver API records since the last mark */
	size_t napis, apis_cap;
	struct sub *pending;		/* submissions whose GPU record has not come */
	size_t npending, pending_cap;
	struct gpu_idle_stats st;
};

struct gpu_idle *gpu_idle__new(uint64_t threshold_ns)
{
	struct gpu_idle *g = calloc(1, sizeof(*g));

	if (g)
		g->threshold = threshold_ns;
	return g;
}

void gpu_idle__free(struct gpu_idle *g)
{
	if (!g)
		return;
	free(g->acts);
	free(g->corrs);
	free(g->prev);
	free(g->apis);
	free(g->pending);
	free(g);
}

static int u32_cmp(const void *a, const void *b)
{
	return cmp__u64(*(const uint32_t *)a, *(const uint32_t *)b);
}

static int act_cmp(const void *a, const void *b)
{
	const struct act *x = a, *y = b;

	CMP_BY(x->start, y->start);
	return cmp__u64(x->end, y->end);
}

static bool has_corr(const uint32_t *v, size_t n, uint32_t corr)
{
	return n && bsearch(&corr, v, n, sizeof(*v), u32_cmp);
}

static int settle(struct gpu_idle *g, uint64_t w, bool open_ok, struct gpu_idle_gap *out, size_t max);

int gpu_idle__feed(struct gpu_idle *g, const struct gt_hdr *h)
{
	switch (h->type) {
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET: {
		const struct gt_gpu_kernel *k = (const void *)h;
		const struct gt_gpu_copy *c = (const void *)h;
		uint64_t dur = h->type == GT_REC_GPU_KERNEL ? k->dur : c->dur;
		uint32_t corr = h->type == GT_REC_GPU_KERNEL ? k->correlation : c->correlation;

		/* no mark for long (an agent that does not spool live): what
		 * is held is settled without one, so that it stays bounded */
		if (g->nacts >= GPU_IDLE_BATCH_MAX) {
			g->st.unmarked++;
			if (settle(g, 0, false, NULL, 0))
				return -ENOMEM;
		}
		if (vec__reserve(&g->acts, &g->acts_cap, g->nacts, 1, 256) ||
		    vec__reserve(&g->corrs, &g->corrs_cap, g->ncorrs, 1, 256))
			return -ENOMEM;
		g->acts[g->nacts++] = (struct act){ h->ts, h->ts + dur };
		g->corrs[g->ncorrs++] = corr;
		g->st.activities++;
		return 0;
	}
	case GT_REC_GPU_API: {
		const struct gt_gpu_api *a = (const void *)h;

		if (g->napis >= GPU_IDLE_BATCH_MAX)
			return 0;	/* settled with the activities above, at the latest */
		if (vec__reserve(&g->apis, &g->apis_cap, g->napis, 1, 256))
			return -ENOMEM;
		g->apis[g->napis++] = (struct sub){ h->ts, a->correlation };
		return 0;
	}
	default:
		return 0;
	}
}

/* Reports [start, end] when it is longer than the threshold and is not the
 * gap reported last. Returns the gaps now in out. */
static size_t report(struct gpu_idle *g, uint64_t start, uint64_t end, bool open,
		     struct gpu_idle_gap *out, size_t max, size_t n)
{
	if (!max || end <= start || end - start <= g->threshold || start < g->reported_end)
		return n;
	g->reported_end = end;
	g->st.gaps++;
	if (n < max)
		out[n++] = (struct gpu_idle_gap){ start, end, open };
	return n;
}

/* The submissions after this batch: those of earlier batches whose GPU
 * record did not come in it, and this batch's whose record came neither in
 * it nor in the one before (an API record may come a flush after its work). */
static int update_pending(struct gpu_idle *g, uint64_t w)
{
	size_t i, n = 0;

	for (i = 0; i < g->npending; i++) {
		struct sub *p = &g->pending[i];

		if (has_corr(g->corrs, g->ncorrs, p->corr))
			continue;
		if (w && w > p->ts && w - p->ts > GPU_IDLE_PENDING_MAX_NS) {
			g->st.expired++;
			continue;
		}
		g->pending[n++] = *p;
	}
	g->npending = n;
	for (i = 0; i < g->napis; i++) {
		const struct sub *a = &g->apis[i];

		if (has_corr(g->corrs, g->ncorrs, a->corr) || has_corr(g->prev, g->nprev, a->corr))
			continue;
		/* the earliest decide: later ones beyond the bound go uncounted
		 * (driver calls without GPU work under GTRACE_CUPTI_API=all) */
		if (g->npending >= GPU_IDLE_PENDING_CAP) {
			g->st.overflow++;
			continue;
		}
		if (vec__reserve(&g->pending, &g->pending_cap, g->npending, 1, 256))
			return -ENOMEM;
		g->pending[g->npending++] = *a;
	}
	g->napis = 0;
	return 0;
}

/* Settles the batch at w (0: no mark, no open gap); see gpu_idle.h. */
static int settle(struct gpu_idle *g, uint64_t w, bool open_ok, struct gpu_idle_gap *out, size_t max)
{
	uint64_t busy_from = UINT64_MAX;	/* the earliest submission still pending */
	uint32_t *tmp;
	size_t i, n = 0, tcap;

	if (g->ncorrs > 1)
		cmp__sort(g->corrs, g->ncorrs, sizeof(*g->corrs), u32_cmp);
	if (update_pending(g, w))
		return -ENOMEM;
	for (i = 0; i < g->npending; i++)
		if (g->pending[i].ts < busy_from)
			busy_from = g->pending[i].ts;
	if (g->nacts > 1)
		cmp__sort(g->acts, g->nacts, sizeof(*g->acts), act_cmp);
	for (i = 0; i < g->nacts; i++) {
		const struct act *a = &g->acts[i];

		if (g->busy_until)
			n = report(g, g->busy_until, a->start < busy_from ? a->start : busy_from, false,
				   out, max, n);
		if (a->end > g->busy_until)
			g->busy_until = a->end;
	}
	/* nothing ran since busy_until: idle up to the first submission, or
	 * still at w */
	if (open_ok && g->busy_until)
		n = report(g, g->busy_until, busy_from < w ? busy_from : w, busy_from >= w, out, max, n);
	/* this batch's correlations are the next one's "before" */
	tmp = g->prev;
	tcap = g->prev_cap;
	g->prev = g->corrs;
	g->prev_cap = g->corrs_cap;
	g->nprev = g->ncorrs;
	g->corrs = tmp;
	g->corrs_cap = tcap;
	g->ncorrs = 0;
	g->nacts = 0;
	return (int)n;
}

int gpu_idle__mark(struct gpu_idle *g, uint64_t w, bool alive, struct gpu_idle_gap *out, size_t max)
{
	g->st.marks++;
	return settle(g, w, alive, out, max);
}

void gpu_idle__stats(const struct gpu_idle *g, struct gpu_idle_stats *st)
{
	*st = g->st;
	st->pending = g->npending;
}
