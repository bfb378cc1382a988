// SPDX-License-Identifier: MIT
/*
 * The fields of the records of capture control (ranges, windows, the hot
 * calls' spans), the flight recorder's triggers, the daemon's overhead
 * records and the GPU-metrics sampler, shared by dump and the exports as
 * fields.c's are.
 */
#include <stdio.h>
#include <string.h>
#include "export/fields.h"
#include "export/fields_int.h"
#include "decode/capture_spans.h"
#include "format/api.h"
#include "format/capture.h"
#include "format/records.h"

unsigned fields__capture(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	const struct gt_capture *cp = (const void *)rec;
	const char *kind, *source;
	unsigned n = 0;

	if ((rec->type != GT_REC_RANGE && rec->type != GT_REC_CAPTURE) || rec->size < sizeof(*cp))
		return 0;
	kind = gt_capture_kind__name(cp->kind);
	source = gt_capture_source__name(cp->source);
	no_cpu_fields(rec, v, &n, "capture");
	vs(v, &n, CF_KIND, kind ? kind : "unknown");
	vs(v, &n, CF_SOURCE, source ? source : "unknown");
	vu(v, &n, CF_INDEX, cp->index);
	v[n++] = (struct cf_val){ .id = CF_FLAGS, .kind = CF_K_FLAGS, .u = cp->flags };
	vu(v, &n, CF_LATENCY_NS, cp->latency_ns);
	return n;
}

char *fields__span_name(const struct capspan *s, char *buf, size_t len)
{
	const char *src = capspan__source_name(s);
	char t[32];

	if (s->kind == CAPSPAN_WINDOW)
		snprintf(buf, len, "window %u", s->number);
	else if (s->end == CAPSPAN_REFUSED)
		snprintf(buf, len, "range %u (%s, refused)", s->number, src);
	else if (s->live_ts > s->start_ts && s->live_ts >= s->end_ts)
		snprintf(buf, len, "range %u (%s, no hot calls)", s->number, src);
	else if (s->live_ts > s->start_ts)
		snprintf(buf, len, "range %u (%s, hot calls from +%s)", s->number, src,
			 gt_ns__text(s->live_ts - s->start_ts, t, sizeof(t)));
	else
		snprintf(buf, len, "range %u (%s)", s->number, src);
	return buf;
}

char *fields__hot_name(const struct capture_hot *h, char *buf, size_t len)
{
	if (h->range)
		snprintf(buf, len, "hot probes %s (range %u)", h->live ? "live" : "off", h->range);
	else
		snprintf(buf, len, "hot probes %s", h->live ? "live" : "off");
	return buf;
}

unsigned fields__span_args(const struct capspan *s, const struct capture_hot *h,
			   struct span_arg a[SPAN_ARGS_MAX])
{
	unsigned n = 0;

#define ARG_U(nm, v) (a[n++] = (struct span_arg){ .name = nm, .kind = SA_U64, .u = (v) })
#define ARG_S(nm, v) (a[n++] = (struct span_arg){ .name = nm, .kind = SA_STR, .s = (v) })
	if (!s) {
		ARG_U("latency_ns", h->latency_ns);
		if (h->range)
			ARG_U("range", h->range);
		return n;
	}
	ARG_U("number", s->number);
	ARG_S("source", capspan__source_name(s));
	ARG_S("state", capspan__state_name(s));
	if (s->flags)
		a[n++] = (struct span_arg){ .name = "flags", .kind = SA_FLAGS, .u = s->flags };
	if (s->kind == CAPSPAN_WINDOW) {
		ARG_U("attach_ns", s->attach_ns);
		ARG_U("detach_ns", s->detach_ns);
		return n;
	}
	ARG_U("tid", s->tid);
	if (s->live_ts > s->start_ts) {
		ARG_U("live_ts", s->live_ts);
		ARG_U("hot_missing_ns", s->live_ts - s->start_ts);
	}
	return n;
#undef ARG_U
#undef ARG_S
}

unsigned fields__trigger(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	const struct gt_trigger *t = (const void *)rec;
	const char *api;
	unsigned n = 0;

	if (rec->type != GT_REC_TRIGGER || rec->size < sizeof(*t))
		return 0;
	no_cpu_fields(rec, v, &n, "trigger");
	vs(v, &n, CF_KIND, gt_trigger_kind__name(t->kind));
	if (rec->api) {
		api = gt_api__name(rec->api);
		vs(v, &n, CF_API, api ? api : "unknown");
	}
	vi(v, &n, CF_CODE, t->code);
	vu(v, &n, CF_WAIT_NS, t->wait_ns);
	vu(v, &n, CF_SUPPRESSED, t->suppressed);
	return n;
}

char *fields__trigger_name(const struct gt_trigger *t, char *buf, size_t len)
{
	const char *api = t->hdr.api ? gt_api__name(t->hdr.api) : NULL;
	char call[80] = "", wait[32];

	if (t->hdr.api)
		snprintf(call, sizeof(call), " (%s)", api ? api : "unknown");
	switch (t->kind) {
	case GT_TRIG_SYNC:
		snprintf(buf, len, "trigger: sync %s%s", gt_ns__text(t->wait_ns, wait, sizeof(wait)),
			 call);
		break;
	case GT_TRIG_ERROR:
		snprintf(buf, len, "trigger: error %d%s", t->code, call);
		break;
	case GT_TRIG_EXIT:
		snprintf(buf, len, "trigger: exit status %d", t->code);
		break;
	case GT_TRIG_PROFILER:
		snprintf(buf, len, "trigger: profiler%s", call);
		break;
	case GT_TRIG_SIGNAL:
		snprintf(buf, len, "trigger: SIGUSR1");
		break;
	case GT_TRIG_GPU_IDLE:
		snprintf(buf, len, "trigger: gpu-idle %s", gt_ns__text(t->wait_ns, wait, sizeof(wait)));
		break;
	default:
		snprintf(buf, len, "trigger: %s%s", gt_trigger_kind__name(t->kind), call);
		break;
	}
	return buf;
}

unsigned fields__overhead(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	const struct gt_overhead *o = (const void *)rec;
	unsigned n = 0;

	if (rec->type != GT_REC_OVERHEAD || rec->size < sizeof(*o))
		return 0;
	no_cpu_fields(rec, v, &n, "overhead");
	vs(v, &n, CF_REASON, gt_overhead_reason__name(o->reason));
	vu(v, &n, CF_INTERVAL_NS, o->interval_ns);
	vu(v, &n, CF_HITS, o->hits);
	vu(v, &n, CF_PROBE_NS, o->probe_ns);
	vu(v, &n, CF_TOTAL_NS, o->total_ns);
	vu(v, &n, CF_BPF_NS, o->bpf_ns);
	vu(v, &n, CF_ESTIMATE_PPM, o->estimate_ppm);
	vp(v, &n, CF_ESTIMATE_PCT, o->estimate_ppm);
	vu(v, &n, CF_BUDGET_PPM, o->budget_ppm);
	vp(v, &n, CF_BUDGET_PCT, o->budget_ppm);
	vu(v, &n, CF_DUTY_PPM, o->duty_ppm);
	vp(v, &n, CF_DUTY_PCT, o->duty_ppm);
	vu(v, &n, CF_PERIOD_MS, o->period_ms);
	vu(v, &n, CF_HIT_NS, o->hit_ns);
	vu(v, &n, CF_RET_NS, o->ret_ns);
	vu(v, &n, CF_SAMPLER_PPM, o->sampler_ppm);
	vp(v, &n, CF_SAMPLER_PCT, o->sampler_ppm);
	if (o->reason == GT_OVH_SHED || o->reason == GT_OVH_RESTORE) {
		vs(v, &n, CF_API, gt_api__name(rec->api) ?: "unknown");
		vu(v, &n, CF_CUT, gt_overhead__cut(o));
	}
	return n;
}

char *fields__ppm_text(uint32_t ppm, char *buf, size_t len)
{
	snprintf(buf, len, "%.3g %%", ppm / 1e4);
	return buf;
}

char *fields__overhead_name(const struct gt_overhead *o, char *buf, size_t len)
{
	char est[24], bud[24], duty[24], why[80];

	fields__ppm_text(o->estimate_ppm, est, sizeof(est));
	fields__ppm_text(o->duty_ppm, duty, sizeof(duty));
	if (o->budget_ppm)
		snprintf(why, sizeof(why), "estimated %s, budget %s", est,
			 fields__ppm_text(o->budget_ppm, bud, sizeof(bud)));
	else
		snprintf(why, sizeof(why), "estimated %s, no budget", est);
	switch (o->reason) {
	case GT_OVH_ESTIMATE:
		snprintf(buf, len, "overhead: estimated %s", est);
		break;
	case GT_OVH_CALIBRATED:
		snprintf(buf, len, "overhead: probe hit calibrated (entry %u ns, return %u ns)",
			 o->hit_ns, o->ret_ns);
		break;
	case GT_OVH_DUTY_DOWN:
	case GT_OVH_DUTY_UP:
		snprintf(buf, len, "overhead: duty cycle %s to %s (%s)",
			 o->reason == GT_OVH_DUTY_DOWN ? "down" : "up", duty, why);
		break;
	case GT_OVH_OVER:
		snprintf(buf, len, "overhead: over budget at the lowest duty cycle (%s)", why);
		break;
	case GT_OVH_SHED:
		snprintf(buf, len, "overhead: %s shed: recorded only inside light windows (%s)",
			 gt_api__name(o->hdr.api) ?: "unknown api", why);
		break;
	case GT_OVH_RESTORE:
		snprintf(buf, len, "overhead: %s given back: recorded always-on again (%s)",
			 gt_api__name(o->hdr.api) ?: "unknown api", why);
		break;
	default:
		snprintf(buf, len, "overhead: %s", gt_overhead_reason__name(o->reason));
		break;
	}
	return buf;
}

unsigned fields__gpu_metric(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	static char unknown[24];
	const struct gt_gpu_metric *m = (const void *)rec;
	const char *name;
	unsigned n = 0;

	if (rec->type != GT_REC_GPU_METRIC || rec->size < sizeof(*m))
		return 0;
	name = gt_gpu_metric__name(m->metric);
	if (!name) {
		snprintf(unknown, sizeof(unknown), "metric_%u", m->metric);
		name = unknown;
	}
	no_cpu_fields(rec, v, &n, "gpu_metric");
	vu(v, &n, CF_DEVICE, m->device);
	vs(v, &n, CF_METRIC, name);
	v[n++] = (struct cf_val){ .id = CF_VALUE, .kind = CF_K_MICRO, .i = m->value_micro };
	vs(v, &n, CF_UNIT, gt_gpu_metric__unit(m->metric));
	return n;
}
