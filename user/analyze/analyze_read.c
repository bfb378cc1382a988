// SPDX-License-Identifier: MIT
/*
 * A trace in time order for `gtrace-bpf analyze` (analyze__file).
 *
 * The recorder's records come about in time order.  A merged trace
 * (cupti=merged, docs/FORMAT.md "Order of the merged file") has each linked
 * GPU record right after its call's entry, then a tail: the GPU API and NVTX
 * records and the unlinked GPU records by time, then the merger's and the
 * agent's stats.  The tail is read by a second reader and merged with the
 * rest by time (a linked GPU record at its launch call's entry, everything
 * else at its own time), so that the core sees the unlinked GPU work when it
 * ran, not after everything else.  The second reader starts at the chunk
 * where the tail begins, found from the chunk headers alone: the tail is
 * sorted by time from the recording's start, so going back from the last
 * chunk their first_ts falls until the chunk before the tail's first one,
 * which has a later one (the end of the rest).  From there it finds the
 * run of tail records that ends the file and starts at its first; the first
 * reader stops at that record's number, so that each record is read once
 * whatever the file holds (a tail record among the others, which a merger
 * does not write, is read as any other record, in file order).  A trace is
 * read once
 * (its tail twice at most a chunk over), and once more for --range, whose
 * span must be known first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "decode/capture_spans.h"
#include "decode/pass.h"
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

/* Where a record goes in time: a linked GPU record at its call's entry;
 * one that says nothing of when things happened (the counters, names, the
 * tools' stats: their ts is when they were written) where the records
 * before it went (last), so that it holds back neither reader. */
static uint64_t rec_key(const struct gt_hdr *h, uint64_t last)
{
	switch (h->type) {
	case GT_REC_STATS:
	case GT_REC_NAME:
	case GT_REC_MERGE_STATS:
	case GT_REC_CUPTI_STATS:
		return last;
	default:
		break;
	}
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

/* The first pass for --range: the capture spans. */
static int span_record(void *ctx, const struct gt_hdr *h)
{
	if (h->type == GT_REC_RANGE || h->type == GT_REC_CAPTURE)
		return capture_spans__feed(ctx, h);
	return 0;
}

static int prescan(struct trace_reader *r, struct capture_spans *spans)
{
	struct gt_pass p = { .ctx = spans, .record = span_record };

	return gt_pass__run(r, NULL, &p, NULL);
}

/* Puts rb on the first tail record of a merged trace, the first of the
 * run of tail records that ends the file: *head is it (NULL when the trace
 * has none), *index its number in the file, where the first reader stops.
 * The run is looked for from the chunk the headers point to (see the top)
 * on, then rb is put back on its first record.  Returns 0 or a negative
 * errno. */
/* The scan for the run of tail records that ends the file. */
struct tail_scan {
	uint64_t k;		/* the record's number in the file */
	uint64_t run;		/* the first of the run of tail records so far, UINT64_MAX = none */
};

static int tail_scan(void *ctx, const struct gt_hdr *h)
{
	struct tail_scan *t = ctx;

	if (!tail_record(h))
		t->run = UINT64_MAX;
	else if (t->run == UINT64_MAX)
		t->run = t->k;
	t->k++;
	return 0;
}

static int tail_start(struct trace_reader *rb, const struct gt_hdr **head, uint64_t *index)
{
	struct tail_scan scan = { .run = UINT64_MAX };
	struct trace_chunk_pos *c;
	uint64_t run, k;
	size_t n, i, from;
	int rc = trace_reader__chunks(rb, &c, &n);

	*head = NULL;
	*index = UINT64_MAX;
	if (rc)
		return rc;
	/* back from the last chunk while first_ts does not rise */
	for (i = n; i > 1 && c[i - 2].first_ts <= c[i - 1].first_ts; i--)
		;
	from = i ? i - 1 : 0;
	if (n)
		trace_reader__seek(rb, &c[from]);
	scan.k = n ? c[from].records : 0;
	rc = gt_pass__run(rb, NULL, &(struct gt_pass){ .ctx = &scan, .record = tail_scan }, NULL);
	run = scan.run;
	if (rc < 0 || run == UINT64_MAX) {
		free(c);
		return rc < 0 ? rc : 0;
	}
	/* back to the run's first record: the chunk that holds it */
	for (i = from; i + 1 < n && c[i + 1].records <= run; i++)
		;
	trace_reader__seek(rb, &c[i]);
	for (k = c[i].records; k <= run && (rc = trace_reader__next(rb, head)) > 0; k++)
		;
	free(c);
	if (rc <= 0) {
		*head = NULL;
		return rc < 0 ? rc : 0;
	}
	*index = run;
	return 0;
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

/* Feeds the records of ra (those before record a_end, where rb reads on
 * from hb: the tail of a merged trace) and of rb to d in time order. */
static int feed_merged(struct trace_reader *ra, uint64_t a_end, struct trace_reader *rb,
		       const struct gt_hdr *hb, struct gt_decoder *d, uint64_t *fed, const char **why)
{
	const struct gt_hdr *ha = NULL;
	uint64_t ka = 0, kb = 0;
	int rc;

	for (;;) {
		bool take_a;

		*why = "read";
		if (!ha && ra) {
			/* the end, or where rb's part begins */
			rc = trace_reader__records(ra) < a_end ? trace_reader__next(ra, &ha) : 0;
			if (rc < 0)
				return rc;
			if (!rc) {
				ra = NULL;
				ha = NULL;
			}
		}
		if (!hb && rb) {
			rc = trace_reader__next(rb, &hb);
			if (rc < 0)
				return rc;
			if (!rc)
				rb = NULL;
		}
		if (!ha && !hb)
			return 0;
		if (ha)
			ka = rec_key(ha, ka);
		if (hb)
			kb = rec_key(hb, kb);
		take_a = ha && (!hb || ka <= kb);
		*why = "decode";
		rc = gt_decoder__feed(d, take_a ? ha : hb);
		if (rc)
			return rc;
		(*fed)++;
		if (take_a)
			ha = NULL;
		else
			hb = NULL;
	}
}

/* The decoder's callbacks with a tap (analyze_opts.tap_call, tap_other):
 * analyze's, then the tap's. */
static int tap_call(void *ctx, const struct gt_callrec *c)
{
	struct analyze *a = ctx;
	int rc = analyze__call(a, c);

	return rc ? rc : a->o.tap_call(a->o.tap_ctx, c);
}

static int tap_other(void *ctx, const struct gt_hdr *rec)
{
	struct analyze *a = ctx;
	int rc = analyze__other(a, rec);

	return rc ? rc : a->o.tap_other(a->o.tap_ctx, rec);
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
	const struct gt_hdr *hb = NULL;
	const char *msg = NULL, *why = "read", *damage = NULL;
	struct trace_damage dmg, dmg_tail;
	uint64_t end, fed = 0, tail_at = UINT64_MAX;
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
	if (range) {
		spans = capture_spans__new(info);
		rc = spans ? prescan(r, spans) : -ENOMEM;
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, strerror(-rc));
			goto out;
		}
		capture_spans__finish(spans, trace_reader__trailer(r) ?
					     trace_reader__trailer(r)->end_ts : 0);
		trace_reader__rewind(r);
		ret = select_span(range, path, spans, &o, err);
		if (ret)
			goto out;
		ret = 1;
	}
	if (merged) {
		rc = trace_reader__open(path, &rb, &msg);
		if (!rc)
			rc = tail_start(rb, &hb, &tail_at);
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path,
				msg ? msg : strerror(-rc));
			goto out;
		}
	}
	a = analyze__new(&o, info, spans);
	if (a && o.steady && !range && !o.span) {
		rc = az_steady__find(a, r);
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, strerror(-rc));
			goto out;
		}
	}
	d = a ? gt_decoder__new(o.tap_call ? tap_call : analyze__call,
				o.tap_other ? tap_other : analyze__other, a) : NULL;
	if (!d) {
		fprintf(err, "gtrace-bpf: failed to analyze %s: %s\n", path, strerror(ENOMEM));
		goto out;
	}
	gt_decoder__set_entry_cb(d, analyze__entry);
	gt_decoder__set_nccl_cb(d, analyze__nccl);
	analyze__set_decoder(a, d);
	if (o.tap_decoder)
		*o.tap_decoder = d;
	rc = feed_merged(r, rb ? tail_at : UINT64_MAX, rb, hb, d, &fed, &why);
	end = gt_decoder__last_ts(d);
	if (trace_reader__trailer(r) && trace_reader__trailer(r)->end_ts > end)
		end = trace_reader__trailer(r)->end_ts;
	if (!rc) {
		why = "decode";
		analyze__set_end(a, end);
		rc = gt_decoder__finish(d);
	}
	if (!rc && o.tap_fed)
		*o.tap_fed = true;
	if (rc) {
		fprintf(err, "gtrace-bpf: %s %s: %s\n", !strcmp(why, "read") ? "cannot read" :
			"failed to analyze", path, strerror(-rc));
		goto out;
	}
	/* the damage of either reader (the tail's reads the same file further
	 * on), with every record read and every bad one */
	trace_reader__damage_info(r, &dmg);
	if (rb) {
		trace_reader__damage_info(rb, &dmg_tail);
		dmg_tail.bad += dmg.bad;
		if (!dmg.why[0])
			dmg = dmg_tail;
		else
			dmg.bad = dmg_tail.bad;
	}
	dmg.records = fed;
	if (dmg.why[0])
		damage = dmg.why;
	if (!gt_decoder__stats(d)->calls) {
		/* one line: of the damage when there is one; a program can
		 * run its whole life before its library's probes */
		if (trace_damage__report(&dmg, path, "it holds no CUDA calls: nothing to analyze", err))
			;
		else if (a->gaps)
			fprintf(err, "gtrace-bpf: %s holds no CUDA calls: nothing to analyze; %llu process%s "
				"ran a libcuda or libnccl before its probes were attached, its calls were not "
				"recorded (dump --summary lists them)\n", path, (unsigned long long)a->gaps,
				a->gaps == 1 ? "" : "es");
		else
			fprintf(err, "gtrace-bpf: %s holds no CUDA calls: nothing to analyze\n", path);
		goto out;
	}
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
	(*out)->records = fed;
	if (damage)
		(*out)->damage = az_store__keep((*out)->priv, damage);
	(*out)->dmg = dmg;
	ret = 0;
out:
	gt_decoder__free(d);
	analyze__free(a);
	capture_spans__free(spans);
	trace_reader__close(rb);
	trace_reader__close(r);
	return ret;
}
