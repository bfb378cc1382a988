// SPDX-License-Identifier: MIT
/*
 * The merger's second pass: copies every record of the trace and puts each
 * linked GPU record right after the entry record of its call, then the
 * tail (GPU_API, NVTX and unlinked GPU records by ts; of a trace recorded
 * with -c only those that meet a capture range of their process), the
 * GT_REC_MERGE_STATS and the agents' GT_REC_CUPTI_STATS.  merge.c runs the
 * merge.
 */
#include <errno.h>
#include <string.h>
#include "lib/clock.h"
#include "decode/capture_spans.h"
#include "decode/pass.h"
#include "lib/log.h"
#include "merge/merge_int.h"
#include "format/records.h"
#include "format/trace_file.h"

/* With -c the agent recorded the whole process, the recorder only its
 * ranges: a GPU-side record that is not linked to a recorded call stays
 * only when [a, b] meets a range of its process. */
static bool in_ranges(const struct merger *m, uint32_t pid, uint64_t a, uint64_t b)
{
	size_t i, n = capture_spans__count(m->spans);

	for (i = 0; i < n; i++) {
		const struct capspan *s = capture_spans__at(m->spans, i);

		if (s->kind == CAPSPAN_RANGE && s->end != CAPSPAN_REFUSED && s->pid == pid &&
		    a <= s->end_ts && b >= s->start_ts)
			return true;
	}
	return false;
}

/* Whether tail entry t is written (see in_ranges). */
static bool tail_wanted(struct merger *m, const struct tail_ent *t)
{
	const struct gt_hdr *h;
	uint64_t dur = 0;

	if (!m->ranged)
		return true;
	if (t->loc & LOC_GPU) {
		const struct merge_gpu *g = &m->gpu[t->loc & ~LOC_GPU];

		if (in_ranges(m, g->pid, g->ts, g->ts))
			return true;
		m->outside_gpu++;
		return false;
	}
	h = spool_rec(m, t->loc);
	/* NVTX ranges and API records by their whole interval */
	if (h->type == GT_REC_NVTX)
		dur = ((const struct gt_nvtx *)h)->dur;
	else if (h->type == GT_REC_GPU_API)
		dur = ((const struct gt_gpu_api *)h)->dur;
	if (in_ranges(m, h->pid, h->ts, h->ts + dur))
		return true;
	m->res.outside_ranges++;
	return false;
}

static int append(struct trace_writer *w, const struct gt_hdr *h, const char *out)
{
	int err = trace_writer__append(w, h);

	if (err)
		pr_err("cannot write %s: %s", out, strerror(-err));
	return err;
}

/* A GPU record with the merger's fields filled in. */
static int write_gpu(struct merger *m, struct trace_writer *w, const struct merge_gpu *g,
		     const char *out)
{
	const struct gt_hdr *src = spool_rec(m, g->loc);
	struct gt_gpu_kernel *k = (void *)m->buf.b;
	struct gt_gpu_copy *c = (void *)m->buf.b;
	uint64_t launch_ts = 0;
	uint32_t tid = 0;

	memcpy(m->buf.b, src, src->size);
	if (g->call != MERGE_NO_CALL) {
		tid = m->calls[g->call].tid;
		launch_ts = m->calls[g->call].entry;
	}
	k->hdr.tid = tid;
	/* moved when the process' GPU clock drifted (GT_GPU_CLOCK_FIXED) */
	k->hdr.ts = g->ts;
	if (src->type == GT_REC_GPU_KERNEL) {
		struct gt_gpu_graph *gr;

		k->launch_ts = launch_ts;
		k->flags = g->flags & ~GT_GPU_CAPTURED;
		gr = gt_gpu_kernel__graph(k);
		if (gr) {
			/* a graph ran it: the launch whose capture made its node */
			uint32_t call = merge__node_call(m->nodes, m->nnodes, k->hdr.pid, gr->node);

			m->res.link.graph_kernels++;
			gr->capture_ts = gr->capture_tid = gr->stack = 0;
			if (call != MERGE_NO_CALL) {
				gr->capture_ts = m->calls[call].entry;
				gr->capture_tid = m->calls[call].tid;
				gr->stack = m->calls[call].stack;
				k->flags |= GT_GPU_CAPTURED;
				m->res.link.graph_traced++;
			}
		}
	} else {
		c->launch_ts = launch_ts;
		c->flags = g->flags;
	}
	return append(w, &k->hdr, out);
}

/* The second pass over the trace: its records as they were (the agent's
 * inline records left to be placed as from a spool), each linked call entry
 * followed by its GPU records. */
struct second_pass {
	struct merger *m;
	struct trace_writer *w;
	const uint32_t *linked;
	size_t nlinked;
	const char *out;
	uint64_t n;			/* the trace's own records written */
	size_t cursor;			/* call entries passed */
	size_t lp;			/* linked GPU records written */
};

/* The first pass counted the records: the trace ends there (its tail may
 * have grown since). */
static bool second_stop(void *ctx)
{
	struct second_pass *sp = ctx;

	return sp->n >= sp->m->res.main_records;
}

static int second_record(void *ctx, const struct gt_hdr *h)
{
	struct second_pass *sp = ctx;
	struct merger *m = sp->m;
	int err;

	if (m->inline_gpu && mg__agent_rec(h))
		return 0;	/* placed below, as from a spool */
	sp->n++;
	err = append(sp->w, h, sp->out);
	if (err || mg__entry_kind(h) == MERGE_CALL_NONE)
		return err;
	/* the n-th call entry of this pass is calls[n] of the first */
	for (; sp->lp < sp->nlinked && m->gpu[sp->linked[sp->lp]].call == sp->cursor; sp->lp++) {
		err = write_gpu(m, sp->w, &m->gpu[sp->linked[sp->lp]], sp->out);
		if (err)
			return err;
	}
	sp->cursor++;
	return 0;
}

/* Second pass and the rest: writes the merged trace into w. */
int mg__write_merged(struct merger *m, struct trace_writer *w, uint32_t *linked,
		     size_t nlinked, const char *out)
{
	const struct merge_opts *o = m->o;
	struct trace_reader *r = NULL;
	struct second_pass sp = { .m = m, .w = w, .linked = linked, .nlinked = nlinked, .out = out };
	struct gt_pass p = { .ctx = &sp, .record = second_record, .stop = second_stop };
	enum gt_pass_fail fail;
	const char *msg = NULL;
	struct gt_merge_stats ms;
	size_t i;
	int err;

	err = trace_reader__open(o->trace, &r, &msg);
	if (err) {
		pr_err("cannot read %s: %s", o->trace, msg ? msg : strerror(-err));
		return err;
	}
	err = gt_pass__run(r, NULL, &p, &fail);
	if (err && fail == GT_PASS_DECODE)
		goto out;
	if (err < 0) {
		pr_err("cannot read %s: %s", o->trace, strerror(-err));
		goto out;
	}
	if (sp.n != m->res.main_records || sp.cursor != m->ncalls || sp.lp != nlinked) {
		err = -EIO;
		pr_err("%s changed while it was merged (%llu records read, then %llu)", o->trace,
		       (unsigned long long)m->res.main_records, (unsigned long long)sp.n);
		goto out;
	}
	for (i = 0; i < m->ntail; i++) {
		const struct tail_ent *t = &m->tail[i];

		if (!tail_wanted(m, t))
			continue;
		err = t->loc & LOC_GPU ? write_gpu(m, w, &m->gpu[t->loc & ~LOC_GPU], out) :
					 append(w, spool_rec(m, t->loc), out);
		if (err)
			goto out;
	}
	/* what is left out is no longer in the trace's figures */
	m->res.outside_ranges += m->outside_gpu;
	m->res.link.gpu_records -= m->outside_gpu;
	m->res.link.unmatched_gpu -= m->outside_gpu;
	memset(&ms, 0, sizeof(ms));
	ms.hdr.ts = clock__mono_ns();
	ms.hdr.type = GT_REC_MERGE_STATS;
	ms.hdr.size = sizeof(ms);
	ms.gpu_records = m->res.link.gpu_records;
	ms.linked = m->res.link.linked;
	ms.unmatched_gpu = m->res.link.unmatched_gpu;
	ms.unmatched_calls = m->res.link.unmatched_calls;
	ms.causality = m->res.link.causality;
	ms.no_api = m->res.link.no_api;
	err = append(w, &ms.hdr, out);
	for (i = 0; !err && i < m->nstats; i++)
		err = append(w, spool_rec(m, m->stats[i]), out);
	if (!err) {
		struct gt_trailer t;

		memset(&t, 0, sizeof(t));
		t.end_ts = m->end_ts;
		t.counters = m->counters;
		err = trace_writer__finish(w, &t);
		if (err)
			pr_err("cannot write %s: %s", out, strerror(-err));
	}
out:
	trace_reader__close(r);
	return err;
}
