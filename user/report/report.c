// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf report FILE [--compare BASELINE] [-o OUT]`: one HTML file
 * that shows a trace without any network: the answers and findings, a
 * zoomable timeline, GPU utilization, the top kernels, the synchronization
 * waits, the copies, the processes and, with a baseline, what changed.
 *
 * One pass over the trace feeds three consumers of one decoder: the
 * reports of `stats` (stats_run, whose JSON document the page holds whole,
 * so that every table says what `stats --format json` says), the timeline
 * (report_timeline.c: lanes, bins, the events kept exactly, utilization)
 * and the histograms of the values stats kept.  analyze reads the trace
 * again on its own (it needs the records in time order, which a merged
 * file is not): its JSON document goes in whole as well, so the answers
 * and findings are its own.  The page is the template
 * of user/report/page/ filled with one JSON document (report_page.c):
 *
 *   {"format": 1, "generator": "gtrace-bpf report", "file": PATH,
 *    "trace": {"host", "kernel", "cmdline", "options", "start_ts",
 *              "duration_ns", "records", "calls", "gpu_records",
 *              "truncated", "damage", "counters" (the recorder's, or
 *              null), "decoder" (calls, unmatched_exits, open_at_end,
 *              unknown_records, placeholder_names), "merge" (the
 *              merger's counters, or null), "warnings": [...]},
 *    "timeline": report_timeline.h's object,
 *    "captures": [{"kind": "range"|"window", "number", "source", "pid",
 *                  "start", "end", "state"}]   (ns since the origin),
 *    "flame": GPU kernel time by the launch's whole stack (write_flame),
 *    "hist": {"sync": [{"api", "pid", "counts": [[bucket, n], ...]}],
 *             "copy": [{"kind", "counts"}]}   (bucket b: [2^(b-1), 2^b)),
 *    "stats": stats' JSON document,
 *    "analyze": analyze's JSON document (gtrace-bpf analyze --format json),
 *               or null, "analyze_missing": then its line saying why,
 *    "diff": diff's JSON document (gtrace-bpf diff BASELINE FILE --format
 *            json) with --compare, or null, "diff_missing": then its line
 *            saying why (null without --compare)}
 *
 * Errors: an unreadable trace or baseline, an output that exists (without
 * --force), that may not be replaced or cannot be written: one line, status
 * 1, and no file.  A trace cut short: the report of what was read, with a
 * banner, and one warning line.  A trace with no calls: a report that says
 * so in each section.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "diff/diff.h"
#include "report/report.h"
#include "report/report_page.h"
#include "report/report_timeline.h"
#include "stats/stats.h"
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "format/trace_file.h"
#include "lib/installer.h"
#include "lib/obuf.h"
#include "lib/term_text.h"

#define HIST_MAX 65	/* buckets: 0, then [2^(b-1), 2^b) for b up to 64 */

struct report_run {
	const struct report_opts *o;
	struct trace_reader *r;
	struct gt_decoder *d;
	struct stats_run *stats;
	struct report_timeline *tl;
	struct gt_merge_stats merge;	/* the merger's record, when seen */
	bool merged;
	const char *damage;		/* why the trace is cut short, NULL when whole */
	char *data;			/* the page's JSON document */
	size_t ndata;
	char *analyze;			/* analyze's JSON document, NULL when it has none */
	size_t nanalyze;
	char *analyze_why;		/* then its one line, why */
	size_t nwhy;
	char *diff;			/* --compare: diff's JSON document, NULL when none */
	size_t ndiff;
	char *diff_why;			/* then its one line, why */
	size_t ndiff_why;
	char diff_warning[512];		/* the baseline does not compare well: why, "" when it does */
	struct trace_damage base_dmg;	/* --compare: what diff's reader of the baseline met */
};

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct report_run *rr = ctx;
	int rc = stats_run__call(rr->stats, c);

	return rc ? rc : report_timeline__call(rr->tl, c);
}

static int on_nccl(void *ctx, const struct gt_ncclrec *n)
{
	struct report_run *rr = ctx;
	int rc = stats_run__nccl(rr->stats, n);

	return rc ? rc : report_timeline__nccl(rr->tl, n);
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct report_run *rr = ctx;
	int rc = stats_run__other(rr->stats, rec);

	if (rec->type == GT_REC_MERGE_STATS && rec->size >= sizeof(rr->merge)) {
		memcpy(&rr->merge, rec, sizeof(rr->merge));
		rr->merged = true;
	}
	return rc ? rc : report_timeline__other(rr->tl, rec);
}

static int stats_record(void *ctx, const struct gt_hdr *h)
{
	return stats_run__record(ctx, h);
}

/* The one pass.  Returns 0 or 1 after one line on err. */
static int read_trace(struct report_run *rr, FILE *err)
{
	struct gt_pass p = { .ctx = rr->stats, .record = stats_record };
	const struct gt_trailer *t;
	enum gt_pass_fail fail;
	uint64_t end;
	int rc;

	rc = gt_pass__run(rr->r, rr->d, &p, &fail);
	if (rc && fail == GT_PASS_READ) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", rr->o->path, strerror(-rc));
		return 1;
	}
	if (!rc) {
		t = trace_reader__trailer(rr->r);
		end = gt_decoder__last_ts(rr->d);
		if (t && t->end_ts > end)
			end = t->end_ts;
		stats_run__finish(rr->stats, rr->r);
		rc = report_timeline__finish(rr->tl, end);
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to decode %s: %s\n", rr->o->path, strerror(-rc));
		return 1;
	}
	if (trace_reader__truncated(rr->r))
		rr->damage = trace_reader__damage(rr->r);
	return 0;
}

/* ---- the JSON document -------------------------------------------------- */

static void key(struct obuf *o, const char *k)
{
	obuf__json_str(o, k);
	OBUF_LIT(o, ":");
}

static void str_or_null(struct obuf *o, const char *s)
{
	if (s)
		obuf__json_str(o, s);
	else
		OBUF_LIT(o, "null");
}

static void member_u64(struct obuf *o, const char *k, uint64_t v)
{
	OBUF_LIT(o, ",");
	key(o, k);
	obuf__u64(o, v);
}

/* ,"k":"v" (null for NULL) */
static void member_str(struct obuf *o, const char *k, const char *v)
{
	OBUF_LIT(o, ",");
	key(o, k);
	str_or_null(o, v);
}

static void write_counters(struct obuf *o, const struct gt_counters *c)
{
	static const struct { const char *k; size_t off; } f[] = {
#define C(x) { #x, offsetof(struct gt_counters, x) }
		C(events), C(drop_ringbuf), C(drop_stash), C(str_fault), C(args_fault),
		C(names_mem), C(names_mem_rejected), C(attach_files), C(attach_probes),
		C(attach_failed), C(records_written), C(ranges_nested), C(ranges_refused),
		C(drop_state),
#undef C
	};

	OBUF_LIT(o, "{");
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (i)
			OBUF_LIT(o, ",");
		key(o, f[i].k);
		obuf__u64(o, *(const uint64_t *)((const char *)c + f[i].off));
	}
	OBUF_LIT(o, "}");
}

/* A warning line of the page, in the "warnings" array. */
static void warning(struct obuf *o, bool *first, const char *text)
{
	if (!*first)
		OBUF_LIT(o, ",");
	*first = false;
	obuf__json_str(o, text);
}

static void write_trace(struct report_run *rr, struct obuf *o)
{
	const struct gt_file_info *info = trace_reader__info(rr->r);
	const struct gt_decoder_stats *ds = gt_decoder__stats(rr->d);
	const struct gt_trailer *t = trace_reader__trailer(rr->r);
	uint64_t end = gt_decoder__last_ts(rr->d);
	char line[256];
	bool first = true;

	if (t && t->end_ts > end)
		end = t->end_ts;
	OBUF_LIT(o, "{");
	key(o, "host");
	str_or_null(o, info->host);
	member_str(o, "kernel", info->kernel);
	member_str(o, "cmdline", info->cmdline);
	member_str(o, "options", info->options);
	member_u64(o, "start_ts", info->start_ts);
	member_u64(o, "duration_ns", end > info->start_ts ? end - info->start_ts : 0);
	member_u64(o, "records", trace_reader__records(rr->r));
	member_u64(o, "calls", ds->calls);
	member_u64(o, "gpu_records", report_timeline__gpu_records(rr->tl));
	OBUF_LIT(o, ",");
	key(o, "truncated");
	if (rr->damage)
		OBUF_LIT(o, "true");
	else
		OBUF_LIT(o, "false");
	member_str(o, "damage", rr->damage);
	OBUF_LIT(o, ",");
	key(o, "counters");
	if (trace_reader__has_counters(rr->r))
		write_counters(o, trace_reader__counters(rr->r));
	else
		OBUF_LIT(o, "null");
	OBUF_LIT(o, ",");
	key(o, "decoder");
	OBUF_LIT(o, "{");
	key(o, "calls");
	obuf__u64(o, ds->calls);
	member_u64(o, "unmatched_exits", ds->unmatched_exits);
	member_u64(o, "open_at_end", ds->open_at_end);
	member_u64(o, "unknown_records", ds->unknown_records);
	member_u64(o, "placeholder_names", ds->placeholder_names);
	OBUF_LIT(o, "},");
	key(o, "merge");
	if (rr->merged) {
		OBUF_LIT(o, "{");
		key(o, "gpu_records");
		obuf__u64(o, rr->merge.gpu_records);
		member_u64(o, "linked", rr->merge.linked);
		member_u64(o, "unmatched_gpu", rr->merge.unmatched_gpu);
		member_u64(o, "unmatched_calls", rr->merge.unmatched_calls);
		member_u64(o, "causality", rr->merge.causality);
		member_u64(o, "no_api", rr->merge.no_api);
		OBUF_LIT(o, "}");
	} else {
		OBUF_LIT(o, "null");
	}
	/* what a reader should know before trusting the pictures */
	OBUF_LIT(o, ",");
	key(o, "warnings");
	OBUF_LIT(o, "[");
	if (trace_reader__has_counters(rr->r)) {
		const struct gt_counters *c = trace_reader__counters(rr->r);

		if (c->drop_ringbuf) {
			snprintf(line, sizeof(line), "The recorder lost %llu records (its ring buffer was "
				 "full): the timeline has gaps there.",
				 (unsigned long long)c->drop_ringbuf);
			warning(o, &first, line);
		}
		if (c->drop_state) {
			snprintf(line, sizeof(line), "The recorder lost %llu ioctls or off-CPU intervals "
				 "(the kernel did not store their start).",
				 (unsigned long long)c->drop_state);
			warning(o, &first, line);
		}
		if (c->attach_failed) {
			snprintf(line, sizeof(line), "%llu probes could not be attached: some calls were "
				 "not recorded.", (unsigned long long)c->attach_failed);
			warning(o, &first, line);
		}
	}
	if (ds->unknown_records) {
		snprintf(line, sizeof(line), "%llu records of kinds this build does not know (or "
			 "too short) were left out.", (unsigned long long)ds->unknown_records);
		warning(o, &first, line);
	}
	if (rr->merged && rr->merge.unmatched_gpu) {
		snprintf(line, sizeof(line), "%llu GPU records could not be linked to the call that "
			 "caused them: they have no arrow.", (unsigned long long)rr->merge.unmatched_gpu);
		warning(o, &first, line);
	}
	OBUF_LIT(o, "]}");
}

static void write_captures(const struct capture_spans *c, uint64_t origin, struct obuf *o)
{
	size_t n = capture_spans__count(c);

	OBUF_LIT(o, "[");
	for (size_t i = 0; i < n; i++) {
		const struct capspan *s = capture_spans__at(c, i);

		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{");
		key(o, "kind");
		obuf__json_str(o, s->kind == CAPSPAN_RANGE ? "range" : "window");
		member_u64(o, "number", s->number);
		member_str(o, "source", capspan__source_name(s));
		member_u64(o, "pid", s->pid);
		member_u64(o, "start", s->start_ts > origin ? s->start_ts - origin : 0);
		member_u64(o, "end", s->end_ts > origin ? s->end_ts - origin : 0);
		member_str(o, "state", capspan__state_name(s));
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]");
}

struct hist_ctx {
	struct obuf *o;
	bool first;
	bool sync;	/* "api" and "pid", else "kind" */
};

/* One group's values in log2 buckets: [[bucket, count], ...]. */
static int hist_group(void *ctx, const char *group, uint32_t pid, const uint64_t *v, size_t n)
{
	struct hist_ctx *h = ctx;
	uint64_t counts[HIST_MAX] = { 0 };
	bool first = true;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		counts[v[i] ? 64 - __builtin_clzll(v[i]) : 0]++;
	if (!h->first)
		OBUF_LIT(h->o, ",");
	h->first = false;
	OBUF_LIT(h->o, "{");
	key(h->o, h->sync ? "api" : "kind");
	obuf__json_str(h->o, group);
	if (h->sync)
		member_u64(h->o, "pid", pid);
	OBUF_LIT(h->o, ",");
	key(h->o, "counts");
	OBUF_LIT(h->o, "[");
	for (int b = 0; b < HIST_MAX; b++) {
		if (!counts[b])
			continue;
		if (!first)
			OBUF_LIT(h->o, ",");
		first = false;
		OBUF_LIT(h->o, "[");
		obuf__u64(h->o, (uint64_t)b);
		OBUF_LIT(h->o, ",");
		obuf__u64(h->o, counts[b]);
		OBUF_LIT(h->o, "]");
	}
	OBUF_LIT(h->o, "]}");
	return 0;
}

/* ---- the flame graph's stacks --------------------------------------------- */

#define FLAME_STACKS	200	/* stacks the page draws, the costliest */

struct flame_ctx {
	struct report_run *rr;
	struct obuf *o;
	unsigned n, more;
	uint64_t total, more_ns, none_ns, none_kernels;
};

static int flame_stack(void *ctx, uint32_t stack, uint64_t ns, uint64_t kernels)
{
	struct flame_ctx *c = ctx;
	size_t nf;
	char buf[1200];

	c->total += ns;
	if (!stack) {
		c->none_ns = ns;
		c->none_kernels = kernels;
		return 0;
	}
	if (c->n == FLAME_STACKS) {
		c->more++;
		c->more_ns += ns;
		return 0;
	}
	nf = gt_decoder__stack(c->rr->d, stack, NULL);
	if (c->n++)
		OBUF_LIT(c->o, ",\n");
	OBUF_LIT(c->o, "{\"ns\":");
	obuf__u64(c->o, ns);
	OBUF_LIT(c->o, ",\"kernels\":");
	obuf__u64(c->o, kernels);
	OBUF_LIT(c->o, ",\"frames\":[");
	/* outermost first: the root of the graph is where the program began */
	for (size_t i = nf, k = 0; i-- > 0;) {
		struct gt_frame f;

		if (!gt_decoder__frame(c->rr->d, stack, i, &f))
			continue;
		if (k++)
			OBUF_LIT(c->o, ",");
		obuf__json_str(c->o, gt_frame__str(&f, buf, sizeof(buf)));
	}
	OBUF_LIT(c->o, "]}");
	return c->o->err;
}

/* "flame": GPU kernel time by the stack of the launch that made each
 * (--cupti --stacks all): {"total", "stacks": [{"ns", "kernels", "frames"
 * (outermost first)}], "more", "more_ns" (stacks left out), "none_ns",
 * "none_kernels" (kernels whose launch has no stack)}. */
static int write_flame(struct report_run *rr, struct obuf *o)
{
	struct flame_ctx c = { .rr = rr, .o = o };
	int rc;

	OBUF_LIT(o, "{\"stacks\":[");
	rc = stats_run__gpu_stacks(rr->stats, flame_stack, &c);
	OBUF_LIT(o, "],\"total\":");
	obuf__u64(o, c.total);
	OBUF_LIT(o, ",\"more\":");
	obuf__u64(o, c.more);
	OBUF_LIT(o, ",\"more_ns\":");
	obuf__u64(o, c.more_ns);
	OBUF_LIT(o, ",\"none_ns\":");
	obuf__u64(o, c.none_ns);
	OBUF_LIT(o, ",\"none_kernels\":");
	obuf__u64(o, c.none_kernels);
	OBUF_LIT(o, "}");
	return rc ? rc : o->err;
}

static int write_hist(struct report_run *rr, struct obuf *o)
{
	struct hist_ctx h = { .o = o, .first = true, .sync = true };
	int rc;

	OBUF_LIT(o, "{");
	key(o, "sync");
	OBUF_LIT(o, "[");
	rc = stats_run__sync_values(rr->stats, hist_group, &h);
	OBUF_LIT(o, "],");
	key(o, "copy");
	OBUF_LIT(o, "[");
	h = (struct hist_ctx){ .o = o, .first = true };
	if (!rc)
		rc = stats_run__size_values(rr->stats, false, hist_group, &h);
	OBUF_LIT(o, "]}");
	return rc;
}

/* analyze's answers and findings of the trace, as its JSON document (its
 * own pass: it reads the trace in time order), or the line that says why
 * there are none.  Returns 0 or a negative errno. */
static int run_analyze(struct report_run *rr)
{
	/* the steady state of each process first, as analyze says it */
	struct analyze_opts ao = { .steady = true };
	struct analyze_result *res = NULL;
	FILE *why = open_memstream(&rr->analyze_why, &rr->nwhy), *f;
	int rc;

	if (!why)
		return -errno;
	rc = analyze__file(rr->o->path, &ao, NULL, &res, why);
	if (fclose(why))
		return -errno;
	if (rc)
		return 0;
	f = open_memstream(&rr->analyze, &rr->nanalyze);
	rc = f ? analyze__write(res, ANALYZE_JSON, f) : -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	analyze_result__free(res);
	return rc;
}

/* --compare: diff's comparison of the baseline with the trace (the trace
 * is the optimized side: the one the report is of), as its JSON document,
 * or the line that says why there is none.  Returns 0 or a negative errno. */
static int run_diff(struct report_run *rr)
{
	struct diff_result *res = NULL;
	FILE *why = open_memstream(&rr->diff_why, &rr->ndiff_why), *f;
	struct diff_params p = { .err = why, .base_dmg = &rr->base_dmg };
	int rc;

	if (!why)
		return -errno;
	rc = diff__traces(rr->o->compare, rr->o->path, &p, &res);
	if (fclose(why))
		return -errno;
	if (rc)
		return 0;
	snprintf(rr->diff_warning, sizeof(rr->diff_warning), "%s", res->warning);
	f = open_memstream(&rr->diff, &rr->ndiff);
	rc = f ? diff_result__write(res, DIFF_JSON, f) : -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	diff_result__free(res);
	return rc;
}

/* The one line another command wrote of why it failed, without the
 * program's name and the newline: where it starts, its length in *n. */
static const char *one_line(const char *why, size_t *n)
{
	if (!why)
		why = "";
	if (*n > 12 && !strncmp(why, "gtrace-bpf: ", 12)) {
		why += 12;
		*n -= 12;
	}
	while (*n && why[*n - 1] == '\n')
		(*n)--;
	return why;
}

/* ,"NAME":DOC,"MISSING":null with another command's document; without
 * one ,"NAME":null,"MISSING":WHY, its one line of why without the program's
 * name and the newline. */
static void embed(struct obuf *o, const char *name, const char *missing, const char *doc,
		  size_t ndoc, const char *why, size_t nwhy)
{
	OBUF_LIT(o, ",\n");
	key(o, name);
	if (doc && ndoc) {
		obuf__mem(o, doc, ndoc);
		OBUF_LIT(o, ",");
		key(o, missing);
		OBUF_LIT(o, "null");
		return;
	}
	OBUF_LIT(o, "null,");
	key(o, missing);
	why = one_line(why, &nwhy);
	obuf__json_strn(o, why, nwhy);
}

/* "gtrace-bpf: warning: [no comparison with COMPARE: ]TEXT" on err, TEXT
 * (n bytes: diff's words, program and NVTX names among them) escaped for
 * the terminal. */
static void warn_escaped(FILE *err, const char *compare, const char *text, size_t n)
{
	char *t = strndup(text, n), *e = t ? term_text__escape(t) : NULL;

	fprintf(err, "gtrace-bpf: warning: %s%s%s%.*s\n", *compare ? "no comparison with " : "",
		compare, *compare ? ": " : "", e ? (int)strlen(e) : (int)n, e ? e : text);
	free(e);
	free(t);
}

/* The baseline of --compare: readable, or the one line.  Returns 0 or 1. */
static int check_baseline(const char *path, FILE *err)
{
	struct trace_reader *r = NULL;
	const char *msg = NULL;
	int rc = trace_reader__open(path, &r, &msg);

	if (rc)
		fprintf(err, "gtrace-bpf: cannot read the baseline %s: %s\n", path,
			msg ? msg : strerror(-rc));
	trace_reader__close(r);
	return rc ? 1 : 0;
}

/* The page's JSON document into rr->data.  Returns 0 or a negative errno. */
static int build_data(struct report_run *rr)
{
	FILE *f = open_memstream(&rr->data, &rr->ndata);
	uint64_t origin = trace_reader__info(rr->r)->start_ts;
	struct obuf o;
	int rc;

	if (!f)
		return -errno;
	rc = obuf__init(&o, f);
	if (rc) {
		fclose(f);
		return rc;
	}
	OBUF_LIT(&o, "{\"format\":1,\"generator\":\"gtrace-bpf report\",\"file\":");
	obuf__json_str(&o, rr->o->path);
	OBUF_LIT(&o, ",\"trace\":");
	write_trace(rr, &o);
	OBUF_LIT(&o, ",\n\"timeline\":");
	report_timeline__write_json(rr->tl, &o);
	OBUF_LIT(&o, ",\n\"captures\":");
	write_captures(stats_run__spans(rr->stats), origin, &o);
	OBUF_LIT(&o, ",\n\"hist\":");
	rc = write_hist(rr, &o);
	OBUF_LIT(&o, ",\n\"flame\":");
	if (!rc)
		rc = write_flame(rr, &o);
	embed(&o, "analyze", "analyze_missing", rr->analyze, rr->nanalyze, rr->analyze_why,
	      rr->nwhy);
	if (rr->o->compare)
		embed(&o, "diff", "diff_missing", rr->diff, rr->ndiff, rr->diff_why, rr->ndiff_why);
	else
		OBUF_LIT(&o, ",\"diff\":null,\"diff_missing\":null");
	OBUF_LIT(&o, ",\n\"stats\":");
	if (!rc)
		rc = obuf__flush(&o);
	if (!rc)
		rc = stats_run__write(rr->stats, f, STATS_JSON, NULL, rr->o->path, rr->damage);
	OBUF_LIT(&o, "}\n");
	if (!rc)
		rc = obuf__flush(&o);
	if (!rc && o.err)
		rc = o.err;
	obuf__free(&o);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static int fill_page(void *ctx, FILE *f, const char **why)
{
	struct report_run *rr = ctx;
	char *title;
	int rc;

	/* the path whole, however long */
	if (asprintf(&title, "gtrace-bpf report: %s", rr->o->path) < 0)
		return -ENOMEM;
	rc = report_page__write(f, title, rr->data, rr->ndata);
	free(title);
	if (rc == -EINVAL)
		*why = "the page template built into this program is damaged";
	return rc;
}

int report__run(const struct report_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct report_run rr = { .o = o };
	const char *msg = NULL;
	char *out = NULL;
	int rc, ret = 1;

	out = o->output ? strdup(o->output) : installer__sibling_name(o->path, ".gtrace", ".html");
	if (!out) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		return 1;
	}
	/* refused before the work, not after it */
	if (installer__check(out, o->path, o->force, err))
		goto out;
	if (o->compare && installer__check(out, o->compare, true, err))
		goto out;
	if (o->compare && check_baseline(o->compare, err))
		goto out;
	rc = trace_reader__open(o->path, &rr.r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, msg ? msg : strerror(-rc));
		goto out;
	}
	rr.stats = stats_run__new(rr.r);
	rr.d = rr.stats ? gt_decoder__new(on_call, on_other, &rr) : NULL;
	rr.tl = rr.d ? report_timeline__new(trace_reader__info(rr.r)->start_ts, o->budget, rr.d)
		     : NULL;
	if (!rr.tl) {
		fprintf(err, "gtrace-bpf: failed to build the report: %s\n", strerror(ENOMEM));
		goto out;
	}
	stats_run__set_decoder(rr.stats, rr.d);
	gt_decoder__set_nccl_cb(rr.d, on_nccl);
	if (read_trace(&rr, err))
		goto out;
	rc = run_analyze(&rr);
	if (!rc && o->compare)
		rc = run_diff(&rr);
	if (!rc)
		rc = build_data(&rr);
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to build the report: %s\n", strerror(-rc));
		goto out;
	}
	if (installer__write(out, o->force, fill_page, &rr, "write the report of", o->path, err))
		goto out;
	if (o->said)
		fprintf(o->said, "wrote %s\n", out);
	/* a baseline of another program, with no common kernels...: diff's
	 * own warning, as diff says it */
	if (rr.diff_warning[0])
		warn_escaped(err, "", rr.diff_warning, strlen(rr.diff_warning));
	else if (o->compare && !rr.diff && rr.ndiff_why && !trace_damage__any(&rr.base_dmg)) {
		size_t n = rr.ndiff_why;
		const char *why = one_line(rr.diff_why, &n);

		warn_escaped(err, o->compare, why, n);
	}
	/* the report of what was read is written; a damaged input (the trace,
	 * the baseline) still exits 1 */
	ret = trace_reader__report_damage(rr.r, o->path, "the report covers the records read", err);
	if (o->compare)
		ret |= trace_damage__report(&rr.base_dmg, o->compare,
					    rr.diff ? "the comparison covers the records read"
						    : "no comparison with it", err);
out:
	free(rr.data);
	free(rr.analyze);
	free(rr.analyze_why);
	free(rr.diff);
	free(rr.diff_why);
	report_timeline__free(rr.tl);
	gt_decoder__free(rr.d);
	stats_run__free(rr.stats);
	trace_reader__close(rr.r);
	free(out);
	return ret;
}
