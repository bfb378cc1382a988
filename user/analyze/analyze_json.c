// SPDX-License-Identifier: MIT
/*
 * One JSON document of an analyze result, for programs: the figures of the
 * table and Markdown (analyze_write.c), times in ns.
 *
 * JSON: {"file", "merged", "records", "damage", "notes": [...], "scopes":
 * [{"kind", "pid", "number", "name", "start_ns", "end_ns", "wall_ns",
 * "sampled", "answers": {"busy", "bound", "parallelism"}, "gpu": {...},
 * "cpu": {...}, "work": {...}, "parallelism": {...}, "findings": [{"id",
 * "severity", "cost_ns", "cost_upper", "count", "summary", "fix",
 * "examples": [{"ts", "dur", "pid", "tid", "what"}]}]}]}; a figure that is
 * not known is null.  user/analyze/README.md defines the figures (the GPU
 * metrics' work members: tensor_pct, dram_pct, sm_pct over metric_samples
 * samples of metric_basis "busy" or "all", metric_idle_samples left out,
 * metric_hz).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"
#include "analyze/analyze_int.h"
#include "format/api.h"
#include "lib/obuf.h"

static const char *const question_key[AZ_Q__COUNT] = { "busy", "bound", "parallelism" };

static const char *kind_name(enum az_scope_kind k)
{
	return k == AZ_SCOPE_RANGE ? "range" : k == AZ_SCOPE_WINDOW ? "window" :
	       k == AZ_SCOPE_STEADY ? "steady" : "process";
}

/* ---- JSON ------------------------------------------------------------------ */

static void j_key(struct obuf *o, bool *first, const char *key)
{
	if (!*first)
		OBUF_LIT(o, ",");
	*first = false;
	obuf__json_str(o, key);
	OBUF_LIT(o, ":");
}

static void j_u64(struct obuf *o, bool *first, const char *key, uint64_t v)
{
	j_key(o, first, key);
	obuf__u64(o, v);
}

static void j_str(struct obuf *o, bool *first, const char *key, const char *v)
{
	j_key(o, first, key);
	if (v)
		obuf__json_str(o, v);
	else
		OBUF_LIT(o, "null");
}

static void j_bool(struct obuf *o, bool *first, const char *key, bool v)
{
	j_key(o, first, key);
	if (v)
		OBUF_LIT(o, "true");
	else
		OBUF_LIT(o, "false");
}

/* A value known only when ok: else null. */
static void j_opt(struct obuf *o, bool *first, const char *key, bool ok, uint64_t v)
{
	j_key(o, first, key);
	if (ok)
		obuf__u64(o, v);
	else
		OBUF_LIT(o, "null");
}

/* A percentage in millionths (-1: null), as an exact decimal. */
static void j_micro(struct obuf *o, bool *first, const char *key, int64_t micro)
{
	char buf[40];

	j_key(o, first, key);
	if (micro < 0) {
		OBUF_LIT(o, "null");
		return;
	}
	snprintf(buf, sizeof(buf), "%lld.%06lld", (long long)(micro / 1000000),
		 (long long)(micro % 1000000));
	obuf__mem(o, buf, strlen(buf));
}

/* A steady scope's phases: where its iterations come from, how many, the
 * start-up and what its calls spent their time on. */
static void json_phases(struct obuf *o, bool *f, const struct az_phases *ph)
{
	bool f2 = true, f3 = true;

	j_key(o, f, "phases");
	OBUF_LIT(o, "{");
	j_str(o, &f2, "source", ph->source);
	j_str(o, &f2, "what", ph->what);
	j_u64(o, &f2, "iterations_found", ph->found);
	j_u64(o, &f2, "iterations", ph->count);
	j_u64(o, &f2, "startup_iterations", ph->startup);
	j_u64(o, &f2, "tail_iterations", ph->tail);
	j_bool(o, &f2, "steady", ph->steady);
	j_u64(o, &f2, "median_iteration_ns", ph->median_ns);
	/* > 1: counted in groups, the median an estimate (a group's over its size) */
	j_u64(o, &f2, "iterations_grouped", ph->group ? ph->group : 1);
	j_u64(o, &f2, "steady_start_ns", ph->start_ts);
	j_u64(o, &f2, "steady_end_ns", ph->end_ts);
	j_bool(o, &f2, "ends_at_wait", ph->waited);
	j_u64(o, &f2, "process_start_ns", ph->proc_start_ts);
	j_u64(o, &f2, "startup_ns", ph->start_ts > ph->proc_start_ts ? ph->start_ts - ph->proc_start_ts : 0);
	j_key(o, &f2, "startup_calls");
	OBUF_LIT(o, "{");
	for (int k = 0; k < AZ_SU__COUNT; k++) {
		bool f4 = true;

		j_key(o, &f3, az_startup__name((enum az_startup)k));
		OBUF_LIT(o, "{");
		j_u64(o, &f4, "calls", ph->startup_calls[k]);
		j_u64(o, &f4, "ns", ph->startup_calls_ns[k]);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "}}");
}

static void json_scope(struct obuf *o, const struct az_scope *s)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_cpu *c = &s->cpu;
	const struct az_work *w = &s->work;
	const struct az_parallel *p = &s->par;
	bool f = true, f2, f3;

	OBUF_LIT(o, "{");
	j_str(o, &f, "kind", kind_name(s->kind));
	j_u64(o, &f, "pid", s->pid);
	j_u64(o, &f, "number", s->number);
	j_str(o, &f, "name", s->name);
	j_u64(o, &f, "start_ns", s->start_ts);
	j_u64(o, &f, "end_ns", s->end_ts);
	j_u64(o, &f, "wall_ns", s->end_ts - s->start_ts);
	j_bool(o, &f, "sampled", s->sampled);
	if (s->kind == AZ_SCOPE_STEADY)
		json_phases(o, &f, &s->phases);
	j_key(o, &f, "answers");
	f2 = true;
	OBUF_LIT(o, "{");
	for (int q = 0; q < AZ_Q__COUNT; q++)
		j_str(o, &f2, question_key[q], s->answer[q]);
	OBUF_LIT(o, "}");

	j_key(o, &f, "gpu");
	f2 = true;
	OBUF_LIT(o, "{");
	j_str(o, &f2, "source", az__source_name(g->source));
	j_u64(o, &f2, "devices", g->devices);
	j_u64(o, &f2, "busy_ns", g->busy_ns);
	j_u64(o, &f2, "wall_ns", g->wall_ns);
	j_u64(o, &f2, "active_ns", g->active_ns);
	for (int pass = 0; pass < 2; pass++) {
		j_key(o, &f2, pass ? "idle_intervals" : "idle_ns");
		f3 = true;
		OBUF_LIT(o, "{");
		for (int k = 0; k < AZ_IDLE__COUNT; k++)
			j_u64(o, &f3, az_idle__name(k), pass ? g->idle_gaps[k] : g->idle_ns[k]);
		OBUF_LIT(o, "}");
	}
	j_u64(o, &f2, "submit_in_cuda_ns", g->submit_in_cuda_ns);
	j_u64(o, &f2, "concurrent_ns", g->concurrent_ns);
	j_u64(o, &f2, "work", g->work);
	j_u64(o, &f2, "late", g->late);
	j_u64(o, &f2, "unlinked", g->unlinked);
	j_u64(o, &f2, "waits", g->waits);
	j_micro(o, &f2, "util_pct", g->util_micro);
	j_u64(o, &f2, "util_samples", g->util_samples);
	OBUF_LIT(o, "}");

	j_key(o, &f, "cpu");
	f2 = true;
	OBUF_LIT(o, "{");
	j_u64(o, &f2, "threads", c->threads);
	j_u64(o, &f2, "span_ns", c->span_ns);
	j_u64(o, &f2, "calls_ns", c->calls_ns);
	j_u64(o, &f2, "sync_ns", c->sync_ns);
	j_opt(o, &f2, "sync_blocked_ns", c->sched, c->sync_blocked_ns);
	j_u64(o, &f2, "sync_cut_ns", c->sync_cut_ns);
	j_opt(o, &f2, "off_ns", c->sched, c->off_ns);
	j_u64(o, &f2, "outside_ns", c->outside_ns);
	j_bool(o, &f2, "sched", c->sched);
	j_u64(o, &f2, "calls", c->calls);
	j_u64(o, &f2, "incomplete", c->incomplete);
	j_u64(o, &f2, "cut", c->cut);
	OBUF_LIT(o, "}");

	j_key(o, &f, "work");
	f2 = true;
	OBUF_LIT(o, "{");
	j_u64(o, &f2, "kernels", w->kernels);
	j_u64(o, &f2, "kernel_ns", w->kernel_ns);
	j_opt(o, &f2, "kernel_median_ns", w->kernels, w->kernel_median_ns);
	j_key(o, &f2, "classes");
	f3 = true;
	OBUF_LIT(o, "{");
	for (int k = 0; k < AZ_KC__COUNT; k++) {
		bool f4 = true;

		j_key(o, &f3, az_kclass__name(k));
		OBUF_LIT(o, "{");
		j_u64(o, &f4, "ns", w->class_ns[k]);
		j_u64(o, &f4, "count", w->class_count[k]);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "}");
	j_key(o, &f2, "copies");
	f3 = true;
	OBUF_LIT(o, "{");
	for (int k = 0; k < AZ_MEM_KINDS; k++) {
		bool f4 = true;

		if (!w->copy_count[k])
			continue;
		j_key(o, &f3, az__mem_name(k));
		OBUF_LIT(o, "{");
		j_u64(o, &f4, "ns", w->copy_ns[k]);
		j_u64(o, &f4, "bytes", w->copy_bytes[k]);
		j_u64(o, &f4, "count", w->copy_count[k]);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "}");
	j_u64(o, &f2, "launches", w->launches);
	j_opt(o, &f2, "launch_median_ns", w->launch_median_ns, w->launch_median_ns);
	j_opt(o, &f2, "launch_gap_median_ns", w->launch_gap_median_ns, w->launch_gap_median_ns);
	j_key(o, &f2, "top_kernels");
	OBUF_LIT(o, "[");
	for (uint32_t i = 0; i < w->nkernels; i++) {
		bool f4 = true;

		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{");
		j_str(o, &f4, "name", w->top[i].name);
		j_str(o, &f4, "class", az_kclass__name(w->top[i].kclass));
		j_u64(o, &f4, "count", w->top[i].count);
		j_u64(o, &f4, "total_ns", w->top[i].total_ns);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]");
	j_micro(o, &f2, "tensor_pct", w->tensor_micro);
	j_micro(o, &f2, "dram_pct", w->dram_micro);
	j_micro(o, &f2, "sm_pct", w->sm_micro);
	j_u64(o, &f2, "metric_samples", w->metric_samples);
	j_u64(o, &f2, "metric_idle_samples", w->metric_idle);
	j_str(o, &f2, "metric_basis", !w->metric_samples && !w->metric_idle ? NULL :
				      w->metric_all ? "all" : "busy");
	j_opt(o, &f2, "metric_hz", w->metric_hz, w->metric_hz);
	j_str(o, &f2, "bound", az_bound__name(w->bound));
	OBUF_LIT(o, "}");

	j_key(o, &f, "parallelism");
	f2 = true;
	OBUF_LIT(o, "{");
	j_u64(o, &f2, "streams", p->streams);
	j_u64(o, &f2, "legacy_launches", p->legacy_launches);
	j_u64(o, &f2, "sm_count", p->sm_count);
	j_bool(o, &f2, "sm_assumed", p->sm_assumed);
	j_u64(o, &f2, "small_kernels", p->small_kernels);
	j_u64(o, &f2, "small_ns", p->small_ns);
	j_u64(o, &f2, "waits", p->waits);
	j_opt(o, &f2, "launches_per_wait", p->launches_per_wait, p->launches_per_wait);
	j_u64(o, &f2, "blocking_copies", p->blocking_copies);
	j_u64(o, &f2, "host_gaps", p->host_gaps);
	j_u64(o, &f2, "host_gap_ns", p->host_gap_ns);
	OBUF_LIT(o, "}");

	if (s->comm.calls) {
		const struct az_comm *cm = &s->comm;

		j_key(o, &f, "communication");
		f2 = true;
		OBUF_LIT(o, "{");
		j_u64(o, &f2, "nccl_calls", cm->calls);
		j_u64(o, &f2, "collectives", cm->collectives);
		j_u64(o, &f2, "host_ns", cm->host_ns);
		j_u64(o, &f2, "bytes", cm->bytes);
		j_opt(o, &f2, "rank", cm->rank >= 0, (uint64_t)cm->rank);
		j_opt(o, &f2, "world_size", cm->world > 0, (uint64_t)cm->world);
		j_u64(o, &f2, "matched", cm->matched);
		j_u64(o, &f2, "matched_gpu", cm->matched_gpu);
		j_u64(o, &f2, "waited_ns", cm->waited_ns);
		j_u64(o, &f2, "last", cm->last);
		j_u64(o, &f2, "caused_ns", cm->caused_ns);
		j_opt(o, &f2, "waited_for_pid", cm->waited_for_pid != 0, cm->waited_for_pid);
		j_opt(o, &f2, "waited_for_rank", cm->waited_for_rank >= 0, (uint64_t)cm->waited_for_rank);
		j_u64(o, &f2, "waited_for_ns", cm->waited_for_ns);
		OBUF_LIT(o, "}");
	}

	j_key(o, &f, "findings");
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct az_finding *fd = &s->findings[i];

		f2 = true;
		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{");
		j_str(o, &f2, "id", fd->id);
		j_str(o, &f2, "severity", az_severity__name(fd->severity));
		j_u64(o, &f2, "cost_ns", fd->cost_ns);
		j_bool(o, &f2, "cost_upper", fd->cost_upper);
		j_u64(o, &f2, "count", fd->count);
		j_str(o, &f2, "summary", fd->summary);
		j_str(o, &f2, "fix", fd->fix);
		j_key(o, &f2, "examples");
		OBUF_LIT(o, "[");
		for (uint32_t e = 0; e < fd->nexamples; e++) {
			const struct az_example *x = &fd->examples[e];

			f3 = true;
			if (e)
				OBUF_LIT(o, ",");
			OBUF_LIT(o, "{");
			j_u64(o, &f3, "ts", x->ts);
			j_u64(o, &f3, "dur", x->dur);
			j_u64(o, &f3, "pid", x->pid);
			j_u64(o, &f3, "tid", x->tid);
			j_str(o, &f3, "what", x->what);
			OBUF_LIT(o, "}");
		}
		OBUF_LIT(o, "]}");
	}
	OBUF_LIT(o, "]}");
}

int az__write_json(const struct analyze_result *r, FILE *out)
{
	struct obuf o;
	bool f = true;
	int err = obuf__init(&o, out);

	if (err)
		return err;
	OBUF_LIT(&o, "{");
	j_str(&o, &f, "file", r->path);
	j_bool(&o, &f, "merged", r->merged);
	j_u64(&o, &f, "records", r->records);
	j_u64(&o, &f, "trace_start_ns", r->trace_start_ts);
	j_str(&o, &f, "damage", r->damage);
	j_key(&o, &f, "notes");
	OBUF_LIT(&o, "[");
	for (int i = 0; r->notes[i]; i++) {
		if (i)
			OBUF_LIT(&o, ",");
		obuf__json_str(&o, r->notes[i]);
	}
	OBUF_LIT(&o, "]");
	j_key(&o, &f, "scopes");
	OBUF_LIT(&o, "[");
	for (size_t i = 0; i < r->nscopes; i++) {
		if (i)
			OBUF_LIT(&o, ",");
		json_scope(&o, &r->scopes[i]);
	}
	OBUF_LIT(&o, "]}\n");
	err = obuf__flush(&o);
	obuf__free(&o);
	return err;
}
