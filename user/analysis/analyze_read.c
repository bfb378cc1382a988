// SPDX-License-Identifier: MIT
/*
 * A trace in time order for `gtrace-bpf analyze` (analyze__file).
 *
 * The recorder's records come about in time order.  A merged trace
 * (cupti=merged, docs/FORMAT.md "Order of the merged file") has each linked
 * GPU record right after its call's entry, then a tail: the GPU API and NVTX
 * records and the unlinked GPU records by time, then the merger's and the
 * agent's stats.  The tail is read by a second reader, started where a first
 * pass found it, and merged with the rest by time (a linked GPU record at its
 * launch call's entry, everything else at its own time), so that the core
 * sees the unlinked GPU work when it ran, not after everything else.  The
 * first pass also gives the capture spans --range needs; a trace that is
 * neither merged nor asked for a range is read once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/analyze_int.h"
#include "decode/capture_spans.h"
#include "format/records.h"

/* True for the first record of a merged trace's tail. */
static bool tail_record(const struct gt_hdr *h)
{
	switch (h->type) {
	case GT_REC_GPU_KERNEL:
		return gt_rec__size_ok(h) && !(((const struct gt_gpu_kernel *)h)->flags & GT_GPU_LINKED);
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		return gt_rec__size_ok(h) && !(((const struct gt_gpu_copy *)h)->flags & GT_GPU_LINKED);
	case GT_REC_GPU_API:
	case GT_REC_NVTX:
	case GT_REC_CUPTI_STATS:
	case GT_REC_MERGE_STATS:
		return true;
	default:
		return false;
	}
}

/* Where a record goes in time: a linked GPU record at its call's entry. */
static uint64_t rec_key(const struct gt_hdr *h)
{
	if (!gt_rec__size_ok(h))
		return h->ts;
	if (h->type == GT_REC_GPU_KERNEL) {
		const struct gt_gpu_kernel *k = (const void *)h;

		return (k->flags & GT_GPU_LINKED) ? k->launch_ts : h->ts;
	}
	if (h->type == GT_REC_GPU_MEMCPY || h->type == GT_REC_GPU_MEMSET) {
		const struct gt_gpu_copy *c = (const void *)h;

		return (c->flags & GT_GPU_LINKED) ? c->launch_ts : h->ts;
	}
	return h->ts;
}

/* The first pass: the spans, and the index of the first tail record of a
 * merged trace (UINT64_MAX: none). */
static int prescan(struct trace_reader *r, struct capture_spans *spans, bool merged,
		   uint64_t *tail)
{
	const struct gt_hdr *h;
	uint64_t i = 0;
	int rc;

	*tail = UINT64_MAX;
	while ((rc = trace_reader__next(r, &h)) > 0) {
		if (h->type == GT_REC_RANGE || h->type == GT_REC_CAPTURE) {
			int err = capture_spans__feed(spans, h);

			if (err)
				return err;
		}
		if (merged && *tail == UINT64_MAX && tail_record(h))
			*tail = i;
		i++;
	}
	return rc;
}

/* --range: "N" capture range N (window N in a trace of windows and no
 * ranges), "wN" window N, as stats takes it.  Returns 0, or 2 after one
 * line on err. */
static int select_span(const char *range, const char *path, const struct capture_spans *spans,
		       struct analyze_opts *o, FILE *err)
{
	bool window = range[0] == 'w';
	unsigned long n = strtoul(range + window, NULL, 10);
	const struct capspan *sp;
	struct capture_totals t;

	capture_spans__totals(spans, &t);
	if (!t.ranges && !t.windows) {
		fprintf(err, "gtrace-bpf: %s has no capture ranges or light-mode windows: --range "
			"needs a trace recorded with -c or in light mode\n", path);
		return 2;
	}
	if (!window && !t.ranges)
		window = true;
	sp = capture_spans__find(spans, window ? CAPSPAN_WINDOW : CAPSPAN_RANGE, (uint32_t)n);
	if (!sp || sp->end == CAPSPAN_REFUSED) {
		fprintf(err, "gtrace-bpf: %s has no %s %lu%s\n", path,
			window ? "light-mode window" : "capture range", n,
			sp ? " (it was refused: nothing of it was recorded)" : "");
		return 2;
	}
	o->span = true;
	o->span_pid = sp->kind == CAPSPAN_RANGE ? sp->pid : 0;
	o->span_start = sp->start_ts;
	o->span_end = sp->end_ts;
	o->span_kind = sp->kind == CAPSPAN_RANGE ? AZ_SCOPE_RANGE : AZ_SCOPE_WINDOW;
	o->span_number = sp->number;
	o->no_ranges = true;
	return 0;
}

/* Feeds the records of a (those before a_end) and of b (from its place on)
 * to d in time order. */
static int feed_merged(struct trace_reader *ra, uint64_t a_end, struct trace_reader *rb,
		       struct gt_decoder *d, const char **why)
{
	const struct gt_hdr *ha = NULL, *hb = NULL;
	uint64_t na = 0;
	int rc;

	*why = "read";
	if (na < a_end && (rc = trace_reader__next(ra, &ha)) < 0)
		return rc;
	if (rb && (rc = trace_reader__next(rb, &hb)) < 0)
		return rc;
	for (;;) {
		bool take_a;

		if (na >= a_end)
			ha = NULL;
		if (!ha && !hb)
			return 0;
		take_a = ha && (!hb || rec_key(ha) <= rec_key(hb));
		*why = "decode";
		rc = gt_decoder__feed(d, take_a ? ha : hb);
		if (rc)
			return rc;
		*why = "read";
		if (take_a) {
			na++;
			ha = NULL;
			if (na < a_end && (rc = trace_reader__next(ra, &ha)) < 0)
				return rc;
		} else {
			hb = NULL;
			if ((rc = trace_reader__next(rb, &hb)) < 0)
				return rc;
		}
	}
}

int analyze__file(const char *path, const struct analyze_opts *opts, const char *range,
		  struct analyze_result **out, FILE *err)
{
	struct trace_reader *r = NULL, *rb = NULL;
	struct capture_spans *spans = NULL;
	struct gt_decoder *d = NULL;
	struct analyze *a = NULL;
	struct analyze_opts o = *opts;
	const struct gt_file_info *info;
	const char *msg = NULL, *why = "read", *damage = NULL;
	uint64_t tail = UINT64_MAX, end;
	bool merged;
	int rc, ret = 1;

	*out = NULL;
	rc = trace_reader__open(path, &r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, msg ? msg : strerror(-rc));
		return 1;
	}
	info = trace_reader__info(r);
	merged = gt_file_info__has_option(info, "cupti", "merged");
	if (merged || range) {
		spans = capture_spans__new(info);
		rc = spans ? prescan(r, spans, merged, &tail) : -ENOMEM;
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, strerror(-rc));
			goto out;
		}
		capture_spans__finish(spans, trace_reader__trailer(r) ?
					     trace_reader__trailer(r)->end_ts : 0);
		trace_reader__rewind(r);
		if (range) {
			ret = select_span(range, path, spans, &o, err);
			if (ret)
				goto out;
			ret = 1;
		}
	}
	if (tail != UINT64_MAX) {
		const struct gt_hdr *h;

		rc = trace_reader__open(path, &rb, &msg);
		for (uint64_t i = 0; !rc && i < tail; i++)
			rc = trace_reader__next(rb, &h) > 0 ? 0 : -EIO;
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path,
				msg ? msg : strerror(-rc));
			goto out;
		}
	}
	a = analyze__new(&o, info, spans);
	d = a ? gt_decoder__new(analyze__call, analyze__other, a) : NULL;
	if (!d) {
		fprintf(err, "gtrace-bpf: failed to analyze %s: %s\n", path, strerror(ENOMEM));
		goto out;
	}
	gt_decoder__set_entry_cb(d, analyze__entry);
	analyze__set_decoder(a, d);
	rc = feed_merged(r, tail, rb, d, &why);
	if (!rc) {
		why = "decode";
		rc = gt_decoder__finish(d);
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: %s %s: %s\n", !strcmp(why, "read") ? "cannot read" :
			"failed to analyze", path, strerror(-rc));
		goto out;
	}
	if (!gt_decoder__stats(d)->calls) {
		fprintf(err, "gtrace-bpf: %s holds no CUDA calls: nothing to analyze\n", path);
		goto out;
	}
	if (trace_reader__truncated(r))
		damage = trace_reader__damage(r);
	else if (rb && trace_reader__truncated(rb))
		damage = trace_reader__damage(rb);
	end = gt_decoder__last_ts(d);
	if (trace_reader__trailer(r) && trace_reader__trailer(r)->end_ts > end)
		end = trace_reader__trailer(r)->end_ts;
	rc = analyze__finish(a, end, out);
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to analyze %s: %s\n", path, strerror(-rc));
		goto out;
	}
	if (!(*out)->nscopes) {
		if (o.pid)
			fprintf(err, "gtrace-bpf: %s has no CUDA calls of process %u%s\n", path, o.pid,
				range ? " in that range" : "");
		else
			fprintf(err, "gtrace-bpf: %s has no CUDA calls in that range\n", path);
		analyze_result__free(*out);
		*out = NULL;
		goto out;
	}
	(*out)->path = az_store__keep((*out)->priv, path);
	if (damage)
		(*out)->damage = az_store__keep((*out)->priv, damage);
	ret = 0;
out:
	gt_decoder__free(d);
	analyze__free(a);
	capture_spans__free(spans);
	trace_reader__close(rb);
	trace_reader__close(r);
	return ret;
}
