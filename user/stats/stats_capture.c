// SPDX-License-Identifier: MIT
/*
 * Capture control in `gtrace-bpf stats` (stats.c runs the reports): the
 * capture_sum report of a trace's capture ranges and light-mode windows,
 * --range N, which limits every report to one of them, and the labels of
 * light mode, whose hot calls were recorded only part of the time.
 *
 * --range N names capture range N, the number its records carry (ranges
 * count from 1 in the order they opened in the recording, across processes,
 * refused ones included: decode/capture_spans.h), or window N in a trace
 * that has windows and no range; wN names window N in any trace.  A range
 * limits the reports to the records of its process from its open to its
 * close, a window to those of every process inside it (stats_acc.h says
 * which record is inside).
 *
 * Sampled.  In light mode hot calls (gt_api__hot: launches, async copies
 * and sets, event records, stream waits, queries) were recorded only while
 * the hot probes were live: inside windows, or in ranges once their probes
 * had attached.  Where that is less than the whole of what the reports
 * cover (the trace, or the range of --range), every figure that hot calls
 * make is sampled: the table says so in a note under those reports, CSV and
 * JSON in a "sampled" column, and the JSON document in "sampled" and
 * "sampled_note".  Nothing is scaled up: the figures are of what was
 * recorded.  Cold calls, ioctls, off-CPU intervals and the GPU side are
 * complete; gpu_launch_latency has the kernels of recorded launches only.
 *
 * Overhead.  A daemon snapshot may hold the daemon's overhead records
 * (GT_REC_OVERHEAD): capture_sum gets a note of what they say, with or
 * without rows, labelled estimated (they are the daemon's estimates from
 * probe hits and a calibrated cost per hit, not measured slowdowns): the
 * median and max estimate, the budget, the full-capture duty cycle at the
 * first and last record and how often it was lowered and raised, how often
 * the budget was exceeded at the lowest one; the JSON document the same in
 * "overhead".  --range limits them to its time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_int.h"
#include "format/api.h"
#include "format/records.h"

/* ---- --range ------------------------------------------------------------ */

int stats_capture__parse_range(const char *s, struct stats_range_arg *a)
{
	unsigned long long v = 0;
	const char *p = s;

	if (!s)
		return -EINVAL;
	a->window = *p == 'w';
	p += a->window;
	/* digits only: strtoull would take signs and blanks */
	if (*p < '1' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	a->number = (uint32_t)v;
	return 0;
}

/* The lowest and highest number of the spans of kind; false when none. */
static bool numbers(const struct capture_spans *c, enum capspan_kind kind, uint32_t *lo,
		    uint32_t *hi)
{
	bool any = false;

	for (size_t i = 0; i < capture_spans__count(c); i++) {
		const struct capspan *s = capture_spans__at(c, i);

		if (s->kind != kind)
			continue;
		if (!any || s->number < *lo)
			*lo = s->number;
		if (!any || s->number > *hi)
			*hi = s->number;
		any = true;
	}
	return any;
}

int stats_capture__select(struct stats_run *run, const struct stats_range_arg *a,
			  const char *path, FILE *err)
{
	uint32_t rlo = 0, rhi = 0, wlo = 0, whi = 0;
	bool ranges = numbers(run->cap, CAPSPAN_RANGE, &rlo, &rhi);
	bool windows = numbers(run->cap, CAPSPAN_WINDOW, &wlo, &whi);
	bool window = a->window || (!ranges && windows);
	const struct capspan *s;

	if (!ranges && !windows) {
		fprintf(err, "gtrace-bpf: %s has no capture ranges or light-mode windows for --range "
			"(a trace recorded with -c cudaProfilerApi, -c nvtx or --mode light has)\n",
			path);
		return 2;
	}
	s = capture_spans__find(run->cap, window ? CAPSPAN_WINDOW : CAPSPAN_RANGE, a->number);
	if (!s) {
		if (window && !windows)
			fprintf(err, "gtrace-bpf: %s has no light-mode windows (its capture ranges: "
				"%u to %u)\n", path, rlo, rhi);
		else if (window)
			fprintf(err, "gtrace-bpf: %s has no light-mode window %u (its windows: %u to "
				"%u)\n", path, a->number, wlo, whi);
		else
			fprintf(err, "gtrace-bpf: %s has no capture range %u (its ranges: %u to %u)\n",
				path, a->number, rlo, rhi);
		return 2;
	}
	run->scope = s;
	run->s->scope = (struct stats_scope){
		.on = true, .pid = s->kind == CAPSPAN_RANGE ? s->pid : 0,
		.start = s->start_ts, .end = s->end_ts,
	};
	return 0;
}

/* ---- what the reports say of it ----------------------------------------- */

/* ns since the recording started (0 for what came before it). */
static uint64_t rel(const struct stats_run *run, uint64_t ts)
{
	uint64_t start = capture_spans__start_ts(run->cap);

	return ts > start ? ts - start : 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* The sampled note, when hot calls were recorded for less than the scope. */
static void sampled_note(struct stats_run *run)
{
	run->sampled = capture_spans__sampled(run->cap, run->scope, run->sampled_note,
					      sizeof(run->sampled_note));
	/* in a scope in which every probe was live nothing is sampled */
	run->shed = run->sampled && capture_spans__shed_note(run->cap, run->scope, run->shed_note,
							     sizeof(run->shed_note));
	run->lookups = capture_spans__lookups_note(run->cap, run->scope, run->lookups_note,
						   sizeof(run->lookups_note));
}

/* capture_sum's notes: what the columns mean, the totals, the anomalies. */
static void sum_notes(struct stats_run *run)
{
	const struct capture_spans *c = run->cap;
	struct capture_totals t;
	char a[32], b[32], an[512];
	size_t n = 0, k = 0;

	capture_spans__totals(c, &t);
	run->capture_note_v[k++] = "Start and End: time since the recording started. Hot From: how "
		"long after its start a range's hot calls (launches, async copies and sets, event "
		"records, stream waits, queries) began to be recorded, when it opened before the "
		"hot probes were live.";
	if (t.ranges) {
		n = (size_t)snprintf(run->capture_notes[0], sizeof(run->capture_notes[0]),
				     "%u capture range%s", t.ranges, t.ranges == 1 ? "" : "s");
		if (t.refused)
			n += (size_t)snprintf(run->capture_notes[0] + n,
					      sizeof(run->capture_notes[0]) - n,
					      " (%u refused: nothing of %s was recorded)", t.refused,
					      t.refused == 1 ? "it" : "them");
		snprintf(run->capture_notes[0] + n, sizeof(run->capture_notes[0]) - n,
			 " cover %s of the recording's %s (%.1f %%); a range is of one process.",
			 gt_ns__text(t.range_ns, a, sizeof(a)), gt_ns__text(t.trace_ns, b, sizeof(b)),
			 share(t.range_ns, t.trace_ns));
		run->capture_note_v[k++] = run->capture_notes[0];
	}
	if (t.windows) {
		snprintf(run->capture_notes[1], sizeof(run->capture_notes[1]),
			 "%u light-mode window%s cover %s of the recording's %s (%.1f %%); a window "
			 "is of every process.", t.windows, t.windows == 1 ? "" : "s",
			 gt_ns__text(t.window_ns, a, sizeof(a)), gt_ns__text(t.trace_ns, b, sizeof(b)),
			 share(t.window_ns, t.trace_ns));
		run->capture_note_v[k++] = run->capture_notes[1];
	}
	if (capture_spans__anomalies(c)) {
		snprintf(run->capture_notes[2], sizeof(run->capture_notes[2]), "Anomalies: %s.",
			 capture_spans__anomalies_text(c, an, sizeof(an)));
		run->capture_note_v[k++] = run->capture_notes[2];
	}
	if (run->overhead_note[0])
		run->capture_note_v[k++] = run->overhead_note;
	run->capture_note_v[k] = NULL;
	run->empty_note_v[0] = run->overhead_note[0] ? run->overhead_note : NULL;
	run->empty_note_v[1] = NULL;
}

/* ---- the daemon's overhead records -------------------------------------- */

/* ppm as a percentage for people, three significant digits: "4.25 %". */
static const char *pct_text(double ppm, char *buf, size_t len)
{
	snprintf(buf, len, "%.3g %%", ppm / 1e4);
	return buf;
}

static const char *times(uint64_t n)
{
	return n == 1 ? "time" : "times";
}

/* The median of the estimates (exact: dvec__summarize; reorders them). */
static double est_median(struct ovh_acc *a)
{
	struct dvec_summary sm;
	uint64_t total = 0;

	for (size_t i = 0; i < a->est.n; i++)
		total += a->est.v[i];
	dvec__summarize(&a->est, total, &sm);
	return sm.median;
}

/* The note of capture_sum on the overhead records, and the JSON document's
 * "overhead": labelled estimated, as the figures are the daemon's estimates
 * (probe hits times a calibrated cost per hit), not measured slowdowns. */
static void overhead_describe(struct stats_run *run, double *median)
{
	struct ovh_acc *a = &run->s->ovh;
	const unsigned unknown = GT_OVH__COUNT;
	char m[24], x[24], b[24], d0[24], d1[24];
	size_t n, len = sizeof(run->overhead_note);
	char *p = run->overhead_note;

	*median = a->est.n ? est_median(a) : 0;
	if (a->est.n)
		n = (size_t)snprintf(p, len, "Overhead, estimated by the daemon (probe hits times their "
				     "calibrated cost, of the thread that paid most): median %s, max %s "
				     "over %zu estimate%s", pct_text(*median, m, sizeof(m)),
				     pct_text((double)a->est_max, x, sizeof(x)), a->est.n,
				     a->est.n == 1 ? "" : "s");
	else
		n = (size_t)snprintf(p, len, "Overhead, estimated by the daemon: no estimate over an "
				     "interval in its %llu record%s", (unsigned long long)a->records,
				     a->records == 1 ? "" : "s");
	if (n < len && a->budget_ppm)
		n += (size_t)snprintf(p + n, len - n, "; budget %s",
				      pct_text(a->budget_ppm, b, sizeof(b)));
	else if (n < len)
		n += (size_t)snprintf(p + n, len - n, "; no budget");
	if (n < len)
		n += (size_t)snprintf(p + n, len - n, "; full-capture duty cycle %s at the first record, "
				      "%s at the last, lowered %llu %s and raised %llu %s",
				      pct_text(a->duty_first, d0, sizeof(d0)),
				      pct_text(a->duty_last, d1, sizeof(d1)),
				      (unsigned long long)a->reasons[GT_OVH_DUTY_DOWN],
				      times(a->reasons[GT_OVH_DUTY_DOWN]),
				      (unsigned long long)a->reasons[GT_OVH_DUTY_UP],
				      times(a->reasons[GT_OVH_DUTY_UP]));
	if (n < len && a->reasons[GT_OVH_OVER])
		n += (size_t)snprintf(p + n, len - n, "; over budget at the lowest duty cycle %llu %s",
				      (unsigned long long)a->reasons[GT_OVH_OVER],
				      times(a->reasons[GT_OVH_OVER]));
	if (n < len && (a->reasons[GT_OVH_SHED] || a->reasons[GT_OVH_RESTORE]))
		n += (size_t)snprintf(p + n, len - n, "; always-on calls shed to the windows %llu %s, "
				      "given back %llu %s", (unsigned long long)a->reasons[GT_OVH_SHED],
				      times(a->reasons[GT_OVH_SHED]),
				      (unsigned long long)a->reasons[GT_OVH_RESTORE],
				      times(a->reasons[GT_OVH_RESTORE]));
	if (n < len && a->reasons[unknown])
		n += (size_t)snprintf(p + n, len - n, "; %llu record%s of a reason this build does not "
				      "know", (unsigned long long)a->reasons[unknown],
				      a->reasons[unknown] == 1 ? "" : "s");
	if (n < len)
		snprintf(p + n, len - n, ".");
}

/* JSON: a percentage from ppm, or null. */
static size_t json_pct(char *p, size_t len, const char *key, bool has, double ppm)
{
	if (!has)
		return (size_t)snprintf(p, len, ",\"%s\":null", key);
	return (size_t)snprintf(p, len, ",\"%s\":%.10g", key, ppm / 1e4);
}

static void overhead_json(struct stats_run *run, double median, size_t n)
{
	const struct ovh_acc *a = &run->s->ovh;
	size_t len = sizeof(run->head_json);
	char *p = run->head_json;

	if (n >= len)
		return;
	n += (size_t)snprintf(p + n, len - n, "%s\"overhead\":{\"estimated\":true,\"records\":%llu,"
			      "\"estimates\":%zu", n ? "," : "", (unsigned long long)a->records,
			      a->est.n);
	if (n < len)
		n += json_pct(p + n, len - n, "estimate_median_pct", a->est.n, median);
	if (n < len)
		n += json_pct(p + n, len - n, "estimate_max_pct", a->est.n, (double)a->est_max);
	if (n < len)
		n += json_pct(p + n, len - n, "budget_pct", a->budget_ppm, a->budget_ppm);
	if (n < len)
		n += json_pct(p + n, len - n, "duty_first_pct", true, a->duty_first);
	if (n < len)
		n += json_pct(p + n, len - n, "duty_last_pct", true, a->duty_last);
	if (n < len)
		snprintf(p + n, len - n, ",\"calibrated\":%llu,\"duty_down\":%llu,\"duty_up\":%llu,"
			 "\"over_budget\":%llu,\"shed\":%llu,\"restore\":%llu}",
			 (unsigned long long)a->reasons[GT_OVH_CALIBRATED],
			 (unsigned long long)a->reasons[GT_OVH_DUTY_DOWN],
			 (unsigned long long)a->reasons[GT_OVH_DUTY_UP],
			 (unsigned long long)a->reasons[GT_OVH_OVER],
			 (unsigned long long)a->reasons[GT_OVH_SHED],
			 (unsigned long long)a->reasons[GT_OVH_RESTORE]);
}

/* The table's lines and the JSON members that say what the reports cover.
 * The JSON strings are ours (names, numbers, units): nothing to escape.
 * Returns the length of the JSON members. */
static size_t heads(struct stats_run *run)
{
	const struct capture_spans *c = run->cap;
	const struct capspan *s = run->scope;
	const struct gt_capture_mode *m = capture_spans__mode(c);
	char a[32], b[32], d[32], what[64];
	size_t n = 0;

	if (!capture_spans__any(c)) {
		if (run->lookups)
			n = (size_t)snprintf(run->head_json, sizeof(run->head_json),
					     "\"lookups_note\":\"%s\"", run->lookups_note);
		return n < sizeof(run->head_json) ? n : sizeof(run->head_json) - 1;
	}
	n = (size_t)snprintf(run->head_json, sizeof(run->head_json),
			     "\"capture\":{\"mode\":\"%s\",\"capture_range\":\"%s\"}",
			     capture_spans__light(c) ? "light" : "full",
			     m->range ? gt_capture_source__name(m->range) : "none");
	if (s) {
		if (s->kind == CAPSPAN_RANGE)
			snprintf(what, sizeof(what), "Capture range %u (%s), pid %u", s->number,
				 capspan__source_name(s), s->pid);
		else
			snprintf(what, sizeof(what), "Light-mode window %u, every process", s->number);
		if (s->end == CAPSPAN_REFUSED)
			snprintf(run->head_text, sizeof(run->head_text),
				 " %s: refused at +%s (beyond --capture-range-end's count): nothing of "
				 "it was recorded.\n", what, gt_ns__text(rel(run, s->start_ts), a, sizeof(a)));
		else
			snprintf(run->head_text, sizeof(run->head_text),
				 " %s: +%s to +%s of the recording (%s), %s. Every report below is of "
				 "its records only.\n", what, gt_ns__text(rel(run, s->start_ts), a, sizeof(a)),
				 gt_ns__text(rel(run, s->end_ts), b, sizeof(b)),
				 gt_ns__text(capspan__ns(s), d, sizeof(d)), capspan__state_name(s));
		n += (size_t)snprintf(run->head_json + n, sizeof(run->head_json) - n,
				      ",\"range\":{\"kind\":\"%s\",\"number\":%u,\"source\":\"%s\","
				      "\"pid\":%u,\"start\":%llu,\"end\":%llu,\"state\":\"%s\"}",
				      s->kind == CAPSPAN_RANGE ? "range" : "window", s->number,
				      capspan__source_name(s), s->pid,
				      (unsigned long long)s->start_ts, (unsigned long long)s->end_ts,
				      capspan__state_name(s));
	}
	n += (size_t)snprintf(run->head_json + n, sizeof(run->head_json) - n, ",\"sampled\":%s",
			      run->sampled ? "true" : "false");
	if (run->sampled)
		n += (size_t)snprintf(run->head_json + n, sizeof(run->head_json) - n,
				      ",\"sampled_note\":\"%s\"", run->sampled_note);
	if (run->shed && n < sizeof(run->head_json))
		n += (size_t)snprintf(run->head_json + n, sizeof(run->head_json) - n,
				      ",\"shed_note\":\"%s\"", run->shed_note);
	if (run->lookups && n < sizeof(run->head_json))
		n += (size_t)snprintf(run->head_json + n, sizeof(run->head_json) - n,
				      ",\"lookups_note\":\"%s\"", run->lookups_note);
	return n < sizeof(run->head_json) ? n : sizeof(run->head_json) - 1;
}

void stats_capture__describe(struct stats_run *run)
{
	double median = 0;
	size_t n;

	sampled_note(run);
	if (run->s->ovh.records)
		overhead_describe(run, &median);
	sum_notes(run);
	n = heads(run);
	if (run->s->ovh.records)
		overhead_json(run, median, n);
}

static uint64_t scope_a(const struct stats_run *run)
{
	return run->scope ? run->scope->start_ts : capture_spans__start_ts(run->cap);
}

static uint64_t scope_b(const struct stats_run *run)
{
	return run->scope ? run->scope->end_ts : capture_spans__end_ts(run->cap);
}

/* The rows a sampled figure is in: every row of a report of hot calls, or
 * (cuda_api_sum, cuda_sync_sum: api in column name_col) those of hot apis. */
void stats_capture__mark(const struct stats_run *run, struct stats_report *r, int name_col)
{
	int col = r->ncols - 1;

	for (size_t i = 0; run->sampled && i < r->nrows; i++) {
		struct stats_cell *c = r->cells + i * r->ncols;
		bool hot = true;

		if (name_col >= 0) {
			int api = c[name_col].none ? -1 : gt_api__by_name(c[name_col].s);

			hot = api > 0 && (gt_api__hot((unsigned)api) ||
					  capture_spans__shed_in(run->cap, (unsigned)api, scope_a(run),
								 scope_b(run)));
		}
		c[col] = (struct stats_cell){ .u = hot };
	}
}

/* ---- report: capture_sum ------------------------------------------------ */

const struct stats_col stats_capture_cols[10] = {
	{ "Number", "number", SK_ID },
	{ "Kind", "kind", SK_STR },
	{ "Source", "source", SK_STR },
	{ "PID", "pid", SK_ID },
	{ "TID", "tid", SK_ID },
	{ "Start", "start", SK_TIME },
	{ "End", "end", SK_TIME },
	{ "Duration", "duration", SK_TIME },
	{ "Hot From", "hot_from", SK_TIME },
	{ "State", "state", SK_STR },
};

const char *const *stats_capture__notes(const struct stats_run *run)
{
	return run->capture_note_v;
}

const char *const *stats_capture__empty_notes(const struct stats_run *run)
{
	return run->empty_note_v[0] ? run->empty_note_v : NULL;
}

int stats_capture__sum(struct stats_run *run, struct stats_report *r)
{
	for (size_t i = 0; i < capture_spans__count(run->cap); i++) {
		const struct capspan *s = capture_spans__at(run->cap, i);
		bool range = s->kind == CAPSPAN_RANGE;
		struct stats_cell *c;

		if (run->scope && s != run->scope)
			continue;
		c = stats_report__row(r);
		if (!c)
			return -ENOMEM;
		c[0] = (struct stats_cell){ .u = s->number };
		c[1] = (struct stats_cell){ .s = range ? "range" : "window" };
		c[2] = (struct stats_cell){ .s = capspan__source_name(s) };
		if (range) {
			c[3] = (struct stats_cell){ .u = s->pid };
			c[4] = (struct stats_cell){ .u = s->tid };
		}
		c[5] = (struct stats_cell){ .u = rel(run, s->start_ts) };
		c[6] = (struct stats_cell){ .u = rel(run, s->end_ts) };
		c[7] = (struct stats_cell){ .u = capspan__ns(s) };
		if (range && s->live_ts > s->start_ts)
			c[8] = (struct stats_cell){ .u = s->live_ts - s->start_ts };
		c[9] = (struct stats_cell){ .s = capspan__state_name(s) };
	}
	return 0;
}
