// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`, capture control (perfetto.c writes the calls,
 * perfetto_gpu.c the GPU side): the capture ranges and light-mode windows
 * of decode/capture_spans.h, written once the whole trace is read (a span
 * is known when its close comes, and a range's hot start-up only at the
 * end of the trace).
 *
 *  - per process that has ranges, a track "Capture ranges" under its
 *    process track: one slice per range, "range 2 (cudaProfilerApi)"; one
 *    that opened before the hot probes were live says from when its hot
 *    calls were recorded, "range 2 (cudaProfilerApi, hot calls from
 *    +1.5 ms)", or "…, no hot calls" when they never were; a refused range
 *    is an instant, "range 3 (cudaProfilerApi, refused)";
 *  - one root track "Light-mode windows" when the trace has windows or
 *    hot-probe records: a slice per window, "window 4", and the hot probes'
 *    changes as instants, "hot probes live (range 2)", "hot probes off".
 * Their events have the category "capture", and the arguments dump would
 * need to say the same: number, source, state, flags, live_ts, and the
 * probes' attach and detach times.
 *
 * The daemon's flight-recorder triggers are written as they are read: an
 * instant each on one root track "Triggers", "trigger: sync 2.5 s
 * (cuStreamSynchronize)", with the category "trigger" and dump's fields
 * (pid, tid, kind, api, code, wait_ns, suppressed) as arguments.
 *
 * So are its overhead records, on root tracks as the windows and triggers,
 * each described at its first event: counter tracks (percentages, values
 * from the record's ts on) "overhead estimate (%)" (the thread that paid
 * most, a record over an interval only), "overhead budget (%)" (when there
 * is a budget), "full-capture duty cycle (%)" (light mode's, 100 in
 * full mode) and "GPU-metrics sampler CPU (%)" (with --gpu-metrics: the
 * CPU time of the recorder's sampler threads, measured, beside the
 * estimate and not part of it); and each change the record is of (a calibration, the duty
 * cycle lowered or raised, over budget at the lowest one; not the periodic
 * estimate) an instant on the track "Overhead changes", "overhead: duty
 * cycle down to 10 % (estimated 7.9 %, budget 5 %)", with the category
 * "overhead" and dump's fields as arguments.
 *
 * Last, the findings of export --findings (export.h): a track per (pid,
 * rule) under the process, "Findings: RULE", a slice per example.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture_spans.h"
#include "export/export.h"
#include "export/perfetto_int.h"

#define CATEGORY "capture"

/* The category and arguments of a range, window or hot-probe change. */
static void span_args(struct pf *x, const struct capspan *s, const struct capture_hot *h)
{
	struct span_arg a[SPAN_ARGS_MAX];
	unsigned n = fields__span_args(s, h, a);
	char flags[48];

	pftrace__event_category(x->w, CATEGORY, strlen(CATEGORY));
	for (unsigned i = 0; i < n; i++) {
		uint32_t name = pftrace__cstring(x->w, a[i].name);

		if (a[i].kind == SA_U64)
			pftrace__ann_uint(x->w, name, a[i].u);
		else
			pftrace__ann_str(x->w, name, pftrace__cstring(x->w, a[i].kind == SA_STR ? a[i].s :
				gt_capture_flags__text((uint32_t)a[i].u, "|", flags, sizeof(flags))));
	}
}

/* A span as a slice (a refused range: an instant) on track t. */
static void span_write(struct pf *x, struct pf_track *t, const struct capspan *s, bool end)
{
	char name[96];
	struct pf_seq *q;

	if (end) {
		q = pftrace__track_seq(x->w, t, s->end_ts);
		pftrace__event_open(x->w, t, q, PF_SLICE_END, s->end_ts, 0);
		pftrace__event_close(x->w);
		return;
	}
	fields__span_name(s, name, sizeof(name));
	q = pftrace__track_seq(x->w, t, s->start_ts);
	pftrace__event_open(x->w, t, q, s->end == CAPSPAN_REFUSED ? PF_INSTANT : PF_SLICE_BEGIN,
			    s->start_ts, pftrace__cstring(x->w, name));
	span_args(x, s, NULL);
	pftrace__event_close(x->w);
}

static void hot_write(struct pf *x, struct pf_track *t, const struct capture_hot *h)
{
	struct pf_seq *q = pftrace__track_seq(x->w, t, h->ts);
	char name[64];

	fields__hot_name(h, name, sizeof(name));
	pftrace__event_open(x->w, t, q, PF_INSTANT, h->ts, pftrace__cstring(x->w, name));
	span_args(x, NULL, h);
	pftrace__event_close(x->w);
}

/* The ranges of pid, in order of start, on a track of their own.  They do
 * not overlap: a process has one open at a time. */
static void ranges_write(struct pf *x, const struct capture_spans *c, uint32_t pid)
{
	uint64_t parent = pf__proc_uuid(x, pid);
	struct pf_track t;

	if (!parent)
		return;
	pftrace__track_init(x->w, &t);
	pftrace__track(x->w, &t, parent, "Capture ranges");
	for (size_t i = 0; i < capture_spans__count(c); i++) {
		const struct capspan *s = capture_spans__at(c, i);

		if (s->kind != CAPSPAN_RANGE || s->pid != pid)
			continue;
		span_write(x, &t, s, false);
		if (s->end != CAPSPAN_REFUSED)
			span_write(x, &t, s, true);
	}
	pftrace__track_free(&t);
}

/* The windows and the hot probes' changes in time order: at one ts a
 * window's end first, then the changes, then the next window's begin. */
static void windows_write(struct pf *x, const struct capture_spans *c)
{
	size_t nh = capture_spans__hot_count(c), h = 0;
	const struct capspan *open = NULL;
	struct pf_track t;

	pftrace__track_init(x->w, &t);
	pftrace__track(x->w, &t, 0, "Light-mode windows");
	for (size_t i = 0; i <= capture_spans__count(c); i++) {
		const struct capspan *s = capture_spans__at(c, i);

		if (s && s->kind != CAPSPAN_WINDOW)
			continue;
		for (;;) {
			const struct capture_hot *hot = capture_spans__hot_at(c, h);
			uint64_t next = s ? s->start_ts : UINT64_MAX;

			if (open && open->end_ts <= next &&
			    (!hot || open->end_ts <= hot->ts)) {
				span_write(x, &t, open, true);
				open = NULL;
			} else if (hot && hot->ts <= next) {
				hot_write(x, &t, hot);
				h++;
			} else {
				break;
			}
		}
		if (!s)
			break;
		span_write(x, &t, s, false);
		open = s;
	}
	while (h < nh)
		hot_write(x, &t, capture_spans__hot_at(c, h++));
	pftrace__track_free(&t);
}

void pf__capture_write(struct pf *x, uint64_t end_ts)
{
	struct capture_spans *c = x->cap;
	struct u64map done = { 0 };
	bool windows = capture_spans__hot_count(c) > 0;

	capture_spans__finish(c, end_ts);
	for (size_t i = 0; i < capture_spans__count(c) && !pf_err(x); i++) {
		const struct capspan *s = capture_spans__at(c, i);

		if (s->kind == CAPSPAN_WINDOW) {
			windows = true;
			continue;
		}
		if (u64map__get(&done, (uint64_t)s->pid + 1))
			continue;
		if (u64map__set(&done, (uint64_t)s->pid + 1, 1)) {
			pf__fail(x, -ENOMEM, "keep a capture range");
			break;
		}
		ranges_write(x, c, s->pid);
	}
	u64map__free(&done);
	if (windows && !pf_err(x))
		windows_write(x, c);
}

void pf__on_trigger(struct pf *x, const struct gt_hdr *rec)
{
	struct cf_val v[CF_MAX];
	unsigned n = fields__trigger(rec, v);
	char name[128];
	struct pf_seq *q;

	if (!n)
		return;
	if (!x->triggers_live) {
		pftrace__track_init(x->w, &x->triggers);
		pftrace__track(x->w, &x->triggers, 0, "Triggers");
		x->triggers_live = true;
	}
	fields__trigger_name((const struct gt_trigger *)rec, name, sizeof(name));
	q = pftrace__track_seq(x->w, &x->triggers, rec->ts);
	pftrace__event_open(x->w, &x->triggers, q, PF_INSTANT, rec->ts, pftrace__cstring(x->w, name));
	pf__field_args(x, v, n, 1ull << CF_TS);
	pftrace__event_close(x->w);
}

/* Overhead track which, described at its first use. */
static struct pf_track *ovh_track(struct pf *x, enum pf_ovh_track which)
{
	static const char *const names[PF_OVH__COUNT] = {
		[PF_OVH_ESTIMATE] = "overhead estimate (%)",
		[PF_OVH_BUDGET] = "overhead budget (%)",
		[PF_OVH_DUTY] = "full-capture duty cycle (%)",
		[PF_OVH_SAMPLER] = "GPU-metrics sampler CPU (%)",
		[PF_OVH_CHANGES] = "Overhead changes",
	};
	struct pf_track *t = &x->ovh[which];

	if (!x->ovh_live[which]) {
		pftrace__track_init(x->w, t);
		if (which == PF_OVH_CHANGES)
			pftrace__track(x->w, t, 0, names[which]);
		else
			pftrace__counter_track(x->w, t, 0, names[which], PF_UNIT_UNSPECIFIED);
		x->ovh_live[which] = true;
	}
	return t;
}

void pf__on_overhead(struct pf *x, const struct gt_hdr *rec)
{
	const struct gt_overhead *o = (const void *)rec;
	struct cf_val v[CF_MAX];
	unsigned n = fields__overhead(rec, v);
	struct pf_track *t;
	char name[128];

	if (!n)
		return;
	/* the counters in a fixed order, whichever the first record has */
	if (!x->ovh_live[PF_OVH_ESTIMATE]) {
		ovh_track(x, PF_OVH_ESTIMATE);
		if (o->budget_ppm)
			ovh_track(x, PF_OVH_BUDGET);
		ovh_track(x, PF_OVH_DUTY);
	}
	/* an estimate is over an interval; a record without one has none */
	if (o->interval_ns)
		pftrace__counter(x->w, ovh_track(x, PF_OVH_ESTIMATE), rec->ts, o->estimate_ppm / 1e4);
	if (o->budget_ppm)
		pftrace__counter(x->w, ovh_track(x, PF_OVH_BUDGET), rec->ts, o->budget_ppm / 1e4);
	pftrace__counter(x->w, ovh_track(x, PF_OVH_DUTY), rec->ts, o->duty_ppm / 1e4);
	/* the recorder's own threads, measured: beside the estimate, not in it */
	if (o->interval_ns && o->sampler_ppm)
		pftrace__counter(x->w, ovh_track(x, PF_OVH_SAMPLER), rec->ts, o->sampler_ppm / 1e4);
	if (o->reason == GT_OVH_ESTIMATE)
		return;
	t = ovh_track(x, PF_OVH_CHANGES);
	fields__overhead_name(o, name, sizeof(name));
	pftrace__event_open(x->w, t, pftrace__track_seq(x->w, t, rec->ts), PF_INSTANT, rec->ts,
			    pftrace__cstring(x->w, name));
	pf__field_args(x, v, n, 1ull << CF_TS);
	pftrace__event_close(x->w);
}

/* ---- findings (export --findings) ---------------------------------------- */

/* One example: a slice, or an instant when it has no length or would
 * overlap the slice before it on the lane (which ends at *end). */
static void finding_write(struct pf *x, struct pf_track *t, const struct export_finding *f,
			  uint64_t *end)
{
	bool slice = f->dur && f->ts >= *end;
	struct pf_seq *q = pftrace__track_seq(x->w, t, f->ts);
	char *name;

	/* what the example names (a kernel among them) whole */
	if (asprintf(&name, "%s: %s", f->rule, f->what ? f->what : "") < 0) {
		pf__fail(x, -ENOMEM, "allocate a finding's name");
		return;
	}
	pftrace__event_open(x->w, t, q, slice ? PF_SLICE_BEGIN : PF_INSTANT, f->ts,
			    pftrace__cstring(x->w, name));
	free(name);
	pftrace__event_category(x->w, "finding", 7);
	pftrace__ann_str(x->w, pftrace__cstring(x->w, "severity"),
			 pftrace__cstring(x->w, f->severity ? f->severity : ""));
	pftrace__ann_str(x->w, pftrace__cstring(x->w, "summary"),
			 pftrace__cstring(x->w, f->summary ? f->summary : ""));
	pftrace__ann_str(x->w, pftrace__cstring(x->w, "fix"), pftrace__cstring(x->w, f->fix ? f->fix : ""));
	pftrace__ann_uint(x->w, pftrace__cstring(x->w, "cost_ns"), f->cost_ns);
	pftrace__ann_uint(x->w, pftrace__cstring(x->w, "dur_ns"), f->dur);
	if (f->tid)
		pftrace__ann_uint(x->w, pftrace__cstring(x->w, "tid"), f->tid);
	pftrace__event_close(x->w);
	if (!slice)
		return;
	*end = f->ts + f->dur;
	q = pftrace__track_seq(x->w, t, *end);
	pftrace__event_open(x->w, t, q, PF_SLICE_END, *end, 0);
	pftrace__event_close(x->w);
}

void pf__findings_write(struct pf *x)
{
	size_t n, i = 0;
	const struct export_finding *v = export__findings(&n);

	while (i < n && !pf_err(x)) {
		uint64_t parent = pf__proc_uuid(x, v[i].pid), end = 0;
		struct pf_track t;
		char name[96];
		size_t j;

		if (!parent)
			return;
		snprintf(name, sizeof(name), "Findings: %s", v[i].rule);
		pftrace__track_init(x->w, &t);
		pftrace__track(x->w, &t, parent, name);
		for (j = i; j < n && v[j].pid == v[i].pid && !strcmp(v[j].rule, v[i].rule); j++)
			finding_write(x, &t, &v[j], &end);
		pftrace__track_free(&t);
		i = j;
	}
}
