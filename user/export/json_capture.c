// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf export -f json` (json.c): capture control's lanes, the
 * daemon's records (triggers, overhead, GPU metric samples) and the
 * findings of export --findings.
 *
 * Capture control (decode/capture_spans.h), written after the other events
 * since a span is only known at its close: per process with capture ranges
 * a lane "Capture ranges" (a synthetic tid) with a complete event per range
 * and an instant per refused one; light-mode windows and the hot probes'
 * changes on the lane "Light-mode windows" of a process of their own,
 * "gtrace-bpf recorder" (RECORDER_PID); names and arguments as in the
 * Perfetto export; the metadata's "capture" holds the totals and anomalies.
 *
 * The daemon's flight-recorder triggers are instants of global scope
 * (ph i, s g), category "trigger", named as in the Perfetto export
 * ("trigger: sync 2.5 s (cuStreamSynchronize)"), args dump's fields.
 *
 * Its overhead records are counter events (ph C, category "overhead") of
 * the recorder's process, one series "value" each, percentages named as
 * the Perfetto export's counter tracks: "overhead estimate (%)" (records
 * over an interval), "overhead budget (%)" (when there is one), "full-capture
 * duty cycle (%)", "GPU-metrics sampler CPU (%)" (with --gpu-metrics: the
 * recorder's own threads, measured); a change (not the periodic estimate) is also an instant
 * of that process (ph i, s p), named as in Perfetto ("overhead: duty cycle
 * down to 10 % (estimated 7.9 %, budget 5 %)"), args dump's fields.
 * (Perfetto's JSON importer names a counter track by event and series:
 * "overhead estimate (%) value".)
 *
 * The findings of export --findings (export.h) come last: per (pid, rule)
 * a lane "Findings: RULE" of the process (a synthetic tid), a complete event
 * per example, category "finding".
 */
#include <stdio.h>
#include <string.h>
#include "export/fields.h"
#include "decode/capture_spans.h"
#include "export/export.h"
#include "lib/u64map.h"
#include "export/json_int.h"

/* The process of the recorder's own lanes (light-mode windows, hot-probe
 * changes) and counters (the daemon's overhead): above PID_MAX_LIMIT, as
 * the lanes' tids, so no pid meets it. */
#define RECORDER_PID LANE_BASE

int jx__put_trigger(struct jx *j, const struct gt_hdr *rec)
{
	struct cf_val v[CF_MAX];
	unsigned n = fields__trigger(rec, v);
	char name[128];

	if (!n)
		return 0;
	fields__trigger_name((const struct gt_trigger *)rec, name, sizeof(name));
	jx__put_named(j, name);
	return jx__put_instant_rest(j, rec, "trigger", "g", v, n);
}

static void recorder_named(struct jx *j)
{
	if (j->recorder_named)
		return;
	jx__put_meta_name(j, "process_name", RECORDER_PID, RECORDER_PID, "gtrace-bpf recorder");
	j->recorder_named = true;
}

/* A counter event of the recorder's: name's one series, "value", ppm as a
 * percentage from ts on. */
static void put_counter(struct jx *j, const char *name, uint64_t ts, uint32_t ppm)
{
	struct cf_val f = { .id = CF_ESTIMATE_PCT, .kind = CF_K_PPM, .u = ppm };
	struct obuf *o = &j->ob;
	char *p;

	jx__put_named(j, name);
	OBUF_LIT(o, ",\"cat\":\"overhead\",\"ph\":\"C\",\"ts\":");
	put_us(o, ts);
	jx__put_pid_tid(o, RECORDER_PID, RECORDER_PID);
	OBUF_LIT(o, ",\"args\":{\"value\":");
	p = obuf__room(o, 32);
	o->len += (size_t)(fields__scalar(p, &f, true) - p);
	OBUF_LIT(o, "}}");
}

int jx__put_overhead(struct jx *j, const struct gt_hdr *rec)
{
	const struct gt_overhead *ov = (const void *)rec;
	struct obuf *o = &j->ob;
	struct cf_val v[CF_MAX];
	unsigned n = fields__overhead(rec, v);
	char name[128];

	if (!n)
		return 0;
	recorder_named(j);
	if (ov->interval_ns)
		put_counter(j, "overhead estimate (%)", rec->ts, ov->estimate_ppm);
	if (ov->budget_ppm)
		put_counter(j, "overhead budget (%)", rec->ts, ov->budget_ppm);
	put_counter(j, "full-capture duty cycle (%)", rec->ts, ov->duty_ppm);
	if (ov->interval_ns && ov->sampler_ppm)
		put_counter(j, "GPU-metrics sampler CPU (%)", rec->ts, ov->sampler_ppm);
	if (ov->reason == GT_OVH_ESTIMATE)
		return o->err;
	fields__overhead_name(ov, name, sizeof(name));
	jx__put_named(j, name);
	return jx__put_instant_at(j, rec->ts, RECORDER_PID, RECORDER_PID, "overhead", "p", v, n,
				  (1ull << CF_TS) | (1ull << CF_TYPE));
}

int jx__put_gpu_metric(struct jx *j, const struct gt_hdr *rec)
{
	const struct gt_gpu_metric *m = (const void *)rec;
	struct cf_val v[CF_MAX];
	struct obuf *o = &j->ob;
	unsigned n = fields__gpu_metric(rec, v);
	const char *metric = "", *unit = "";
	char name[80], *p;

	if (!n)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (v[i].id == CF_METRIC)
			metric = v[i].s;
		else if (v[i].id == CF_UNIT)
			unit = v[i].s;
	}
	if (m->metric == GT_GPUM_PROC_MEM && rec->pid) {
		snprintf(name, sizeof(name), "GPU %u memory (B)", m->device);
	} else {
		recorder_named(j);
		snprintf(name, sizeof(name), "GPU %u %s (%s)", m->device, metric, unit);
	}
	jx__put_named(j, name);
	OBUF_LIT(o, ",\"cat\":\"gpu_metric\",\"ph\":\"C\",\"ts\":");
	put_us(o, rec->ts);
	if (m->metric == GT_GPUM_PROC_MEM && rec->pid)
		jx__put_pid_tid(o, rec->pid, rec->pid);
	else
		jx__put_pid_tid(o, RECORDER_PID, RECORDER_PID);
	OBUF_LIT(o, ",\"args\":{\"value\":");
	for (unsigned i = 0; i < n; i++) {
		if (v[i].id != CF_VALUE)
			continue;
		p = obuf__room(o, 32);
		o->len += (size_t)(fields__scalar(p, &v[i], true) - p);
	}
	OBUF_LIT(o, "}}");
	return o->err;
}

/* ---- capture ranges and windows ------------------------------------------ */

/* One range or window, or a hot-probe change (s NULL): a complete event, or
 * an instant for a refused range and a change, named as in Perfetto. */
static void put_capture(struct jx *j, uint32_t pid, uint32_t tid, const struct capspan *s,
			const struct capture_hot *h)
{
	struct obuf *o = &j->ob;
	struct cf_val f = { .id = CF_FLAGS, .kind = CF_K_FLAGS };
	struct span_arg args[SPAN_ARGS_MAX];
	char name[96], *p;
	unsigned n;

	if (s)
		fields__span_name(s, name, sizeof(name));
	else
		fields__hot_name(h, name, sizeof(name));
	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	obuf__json_str(o, name);
	OBUF_LIT(o, ",\"cat\":\"capture\"");
	if (s && s->end != CAPSPAN_REFUSED) {
		OBUF_LIT(o, ",\"ph\":\"X\",\"ts\":");
		put_us(o, s->start_ts);
		OBUF_LIT(o, ",\"dur\":");
		put_us(o, capspan__ns(s));
	} else {
		OBUF_LIT(o, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		put_us(o, s ? s->start_ts : h->ts);
	}
	jx__put_pid_tid(o, pid, tid);
	OBUF_LIT(o, ",\"args\":{");
	n = fields__span_args(s, h, args);
	for (unsigned i = 0; i < n; i++) {
		OBUF_LIT(o, "\"");
		obuf__mem(o, args[i].name, strlen(args[i].name));
		OBUF_LIT(o, "\":");
		if (args[i].kind == SA_STR) {
			obuf__json_str(o, args[i].s);
		} else if (args[i].kind == SA_FLAGS) {
			f.u = args[i].u;
			p = obuf__room(o, 48);
			o->len += (size_t)(fields__scalar(p, &f, true) - p);
		} else {
			obuf__u64(o, args[i].u);
		}
		if (i + 1 < n)
			OBUF_LIT(o, ",");
	}
	OBUF_LIT(o, "}}");
}

int jx__put_captures(struct jx *j, uint64_t end_ts)
{
	struct capture_spans *c = j->cap;
	struct u64map lanes = { 0 };
	bool recorder = capture_spans__hot_count(c) > 0;
	int rc = 0;

	capture_spans__finish(c, end_ts);
	for (size_t i = 0; i < capture_spans__count(c) && !rc; i++) {
		const struct capspan *s = capture_spans__at(c, i);
		uint64_t *lane;

		if (s->kind == CAPSPAN_WINDOW) {
			recorder = true;
			continue;
		}
		lane = u64map__get(&lanes, (uint64_t)s->pid + 1);
		if (!lane) {
			uint32_t tid = LANE_BASE + j->next_lane++;

			rc = jx__proc_seen(j, s->pid);
			if (rc || (rc = u64map__set(&lanes, (uint64_t)s->pid + 1, tid)))
				break;
			jx__put_meta_sort(j, "thread_sort_index", s->pid, tid, tid);
			jx__put_meta_name(j, "thread_name", s->pid, tid, "Capture ranges");
			lane = u64map__get(&lanes, (uint64_t)s->pid + 1);
		}
		put_capture(j, s->pid, (uint32_t)*lane, s, NULL);
	}
	u64map__free(&lanes);
	if (rc || !recorder)
		return rc;
	recorder_named(j);
	jx__put_meta_name(j, "thread_name", RECORDER_PID, RECORDER_PID, "Light-mode windows");
	for (size_t i = 0; i < capture_spans__count(c); i++)
		if (capture_spans__at(c, i)->kind == CAPSPAN_WINDOW)
			put_capture(j, RECORDER_PID, RECORDER_PID, capture_spans__at(c, i), NULL);
	for (size_t i = 0; i < capture_spans__hot_count(c); i++)
		put_capture(j, RECORDER_PID, RECORDER_PID, NULL, capture_spans__hot_at(c, i));
	return j->ob.err;
}

void jx__put_capture_meta(struct jx *j)
{
	const struct capture_spans *c = j->cap;
	const struct gt_capture_mode *m = capture_spans__mode(c);
	struct obuf *o = &j->ob;
	struct capture_totals t;

	if (!capture_spans__any(c))
		return;
	capture_spans__totals(c, &t);
	KEY_STR(o, ",\"capture\":{\"mode\":", capture_spans__light(c) ? "light" : "full");
	KEY_STR(o, ",\"capture_range\":", m->range ? gt_capture_source__name(m->range) : "none");
	KEY_U64(o, ",\"ranges\":", t.ranges);
	KEY_U64(o, ",\"refused\":", t.refused);
	KEY_U64(o, ",\"windows\":", t.windows);
	KEY_U64(o, ",\"range_ns\":", t.range_ns);
	KEY_U64(o, ",\"window_ns\":", t.window_ns);
	KEY_U64(o, ",\"hot_ns\":", t.hot_ns);
	KEY_U64(o, ",\"trace_ns\":", t.trace_ns);
	OBUF_LIT(o, ",\"anomalies\":{");
	for (int i = 0; i < CAPTURE_AN__COUNT; i++) {
		if (i)
			OBUF_LIT(o, ",");
		obuf__json_str(o, capture_anomaly__key(i));
		OBUF_LIT(o, ":");
		obuf__u64(o, capture_spans__anomaly(c, i));
	}
	OBUF_LIT(o, "}}");
}

/* ---- findings (export --findings) ---------------------------------------- */

int jx__put_findings(struct jx *j)
{
	struct obuf *o = &j->ob;
	size_t n, i = 0;
	const struct export_finding *v = export__findings(&n);

	while (i < n) {
		uint32_t tid = LANE_BASE + j->next_lane++;
		uint64_t end = 0;
		char name[96];
		size_t k;
		int rc = jx__proc_seen(j, v[i].pid);

		if (rc)
			return rc;
		snprintf(name, sizeof(name), "Findings: %s", v[i].rule);
		jx__put_meta_sort(j, "thread_sort_index", v[i].pid, tid, tid);
		jx__put_meta_name(j, "thread_name", v[i].pid, tid, name);
		for (k = i; k < n && v[k].pid == v[i].pid && !strcmp(v[k].rule, v[i].rule); k++) {
			const struct export_finding *f = &v[k];
			bool slice = f->dur && f->ts >= end;

			char *full;

			/* what the example names (a kernel among them) whole */
			if (asprintf(&full, "%s: %s", f->rule, f->what ? f->what : "") < 0)
				return -ENOMEM;
			ev_open(j);
			OBUF_LIT(o, "{\"name\":");
			obuf__json_str(o, full);
			free(full);
			OBUF_LIT(o, ",\"cat\":\"finding\",\"ph\":");
			if (slice) {
				OBUF_LIT(o, "\"X\",\"ts\":");
				put_us(o, f->ts);
				OBUF_LIT(o, ",\"dur\":");
				put_us(o, f->dur);
				end = f->ts + f->dur;
			} else {
				OBUF_LIT(o, "\"i\",\"s\":\"t\",\"ts\":");
				put_us(o, f->ts);
			}
			jx__put_pid_tid(o, f->pid, tid);
			KEY_STR(o, ",\"args\":{\"severity\":", f->severity);
			KEY_STR(o, ",\"summary\":", f->summary);
			KEY_STR(o, ",\"fix\":", f->fix);
			KEY_U64(o, ",\"cost_ns\":", f->cost_ns);
			KEY_U64(o, ",\"dur_ns\":", f->dur);
			KEY_U64(o, ",\"tid\":", f->tid);
			OBUF_LIT(o, "}}");
		}
		i = k;
	}
	return o->err;
}
