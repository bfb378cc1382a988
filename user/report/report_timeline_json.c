// SPDX-License-Identifier: MIT
/*
 * The timeline of `gtrace-bpf report` (report_timeline.h) written as JSON:
 * the page's "timeline" member, its lanes, their events and bins, GPU
 * utilization, the triggers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_timeline_int.h"
#include "format/api.h"
#include "format/records.h"
#include "lib/hmap.h"

static const char *const lane_kind_names[] = { "calls", "offcpu", "nvtx", "gpu", "counter", "nccl" };

/* ---- JSON --------------------------------------------------------------- */

/* The comma before every element of a list but its first. */
static void sep(struct obuf *o, bool *first)
{
	if (!*first)
		OBUF_LIT(o, ",");
	*first = false;
}

static void json_key(struct obuf *o, bool *first, const char *key)
{
	sep(o, first);
	obuf__json_str(o, key);
	OBUF_LIT(o, ":");
}

static void json_u64(struct obuf *o, bool *first, const char *key, uint64_t v)
{
	json_key(o, first, key);
	obuf__u64(o, v);
}

/* A lane's bins, sparse: [bin, busy ns, count, ...] of those with any. */
static void write_bins(struct obuf *o, const struct lane *l)
{
	bool first = true;

	OBUF_LIT(o, "[");
	for (size_t b = 0; b < TL_BINS; b++) {
		if (!l->count[b] && !l->busy[b])
			continue;
		sep(o, &first);
		obuf__u64(o, b);
		OBUF_LIT(o, ",");
		obuf__u64(o, l->busy[b]);
		OBUF_LIT(o, ",");
		obuf__u64(o, l->count[b]);
	}
	OBUF_LIT(o, "]");
}

/* The positions among the kept events of lane li, ev[at ..), of the calls
 * without an exit. */
static void write_open(const struct report_timeline *tl, struct obuf *o, size_t li, size_t at)
{
	bool first = true;

	OBUF_LIT(o, "[");
	for (size_t i = at, k = 0; i < tl->nev && tl->ev[i].lane == li; i++, k++) {
		if (!(tl->ev[i].flags & EV_OPEN))
			continue;
		sep(o, &first);
		obuf__u64(o, k);
	}
	OBUF_LIT(o, "]");
}

/* The kept events of lane li, ev[*at ..), as a flat array of the lane
 * kind's fields: the start as the gap from the previous one's (from 0 for
 * the first), then the duration and the rest.  NVTX depths come from the
 * ranges kept. */
static void write_events(struct report_timeline *tl, struct obuf *o, size_t li, size_t *at)
{
	const struct lane *l = &tl->lanes[li];
	uint64_t prev = 0, stack[64];
	int depth = 0;
	size_t i, k = 0;

	OBUF_LIT(o, "[");
	for (i = *at; i < tl->nev && tl->ev[i].lane == li; i++, k++) {
		const struct ev *e = &tl->ev[i];
		uint64_t t = rel(tl, e->ts);

		if (k)
			OBUF_LIT(o, ",");
		obuf__u64(o, t - prev);
		prev = t;
		OBUF_LIT(o, ",");
		obuf__u64(o, e->dur);
		if (l->kind != LK_OFFCPU) {
			OBUF_LIT(o, ",");
			obuf__u64(o, e->name);
		}
		switch (l->kind) {
		case LK_CALLS:
		case LK_OFFCPU:
			OBUF_LIT(o, ",");
			obuf__u64(o, e->aux);
			break;
		case LK_NVTX:
			while (depth > 0 && stack[depth - 1] <= e->ts)
				depth--;
			OBUF_LIT(o, ",");
			obuf__u64(o, (uint64_t)depth);
			if (e->dur && depth < (int)(sizeof(stack) / sizeof(stack[0])))
				stack[depth++] = e->ts + e->dur;
			break;
		case LK_GPU:
			OBUF_LIT(o, ",");
			if (e->link_lane == UINT32_MAX) {
				OBUF_LIT(o, "-1,0");
			} else {
				obuf__u64(o, e->link_lane);
				OBUF_LIT(o, ",");
				obuf__i64(o, (int64_t)(e->ts - e->link_ts));
			}
			OBUF_LIT(o, ",");
			obuf__u64(o, e->aux);
			OBUF_LIT(o, ",");
			obuf__u64(o, e->flags & EV_CAUSALITY ? 1 : 0);
			break;
		}
	}
	OBUF_LIT(o, "]");
	*at = i;
}

/* A counter lane's points: [time since the previous (from the origin), value, ...]
 * in the metric's unit; a point is the mean of the samples from its time to
 * the next point's. */
static void write_points(struct report_timeline *tl, struct obuf *o, const struct lane *l)
{
	uint64_t prev = 0;
	char num[40];

	OBUF_LIT(o, "[");
	for (size_t i = 0; i < l->nsmp; i++) {
		uint64_t t = rel(tl, l->smp[i].ts);

		if (i)
			OBUF_LIT(o, ",");
		obuf__u64(o, t > prev ? t - prev : 0);
		prev = t > prev ? t : prev;
		snprintf(num, sizeof(num), ",%.6g", l->smp[i].v);
		obuf__mem(o, num, strlen(num));
	}
	OBUF_LIT(o, "]");
}

/* The fields of one event of each lane kind, as the page reads them. */
static const char *const lane_fields[] = {
	[LK_CALLS] = "[\"gap\",\"dur\",\"name\",\"aux\"]",
	[LK_OFFCPU] = "[\"gap\",\"dur\",\"state\"]",
	[LK_NVTX] = "[\"gap\",\"dur\",\"name\",\"depth\"]",
	[LK_GPU] = "[\"gap\",\"dur\",\"name\",\"launch_lane\",\"launch_gap\",\"bytes\",\"causality\"]",
	[LK_COUNTER] = "[\"gap\",\"value\"]",
	[LK_NCCL] = "[\"gap\",\"dur\",\"name\"]",
};

static void write_util(struct report_timeline *tl, struct obuf *o)
{
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < tl->ndev; i++) {
		const struct gpu_dev *dv = &tl->dev[i];
		uint64_t *busy = calloc(TL_BINS, sizeof(*busy));
		uint64_t s = 0, e = 0;
		bool any = false, first = true;

		if (!busy) {
			o->err = o->err ? o->err : -ENOMEM;
			break;
		}
		/* the union of the kernels' intervals, in order of start */
		for (size_t j = 0; j <= dv->n; j++) {
			if (j < dv->n && any && dv->iv[j].s <= e) {
				if (dv->iv[j].e > e)
					e = dv->iv[j].e;
				continue;
			}
			if (any) {
				uint64_t a = rel(tl, s), b = rel(tl, e);

				while (a < b && a / tl->bin_ns < TL_BINS) {
					uint64_t bin = a / tl->bin_ns, edge = (bin + 1) * tl->bin_ns;
					uint64_t part = (b < edge ? b : edge) - a;

					busy[bin] += part;
					a += part;
				}
			}
			if (j < dv->n) {
				s = dv->iv[j].s;
				e = dv->iv[j].e;
				any = true;
			}
		}
		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{\"device\":");
		obuf__u64(o, dv->device);
		OBUF_LIT(o, ",\"kernels\":");
		obuf__u64(o, dv->n);
		OBUF_LIT(o, ",\"busy\":[");
		for (size_t b = 0; b < TL_BINS; b++) {
			if (!busy[b])
				continue;
			sep(o, &first);
			obuf__u64(o, b);
			OBUF_LIT(o, ",");
			obuf__u64(o, busy[b]);
		}
		OBUF_LIT(o, "]}");
		free(busy);
	}
	OBUF_LIT(o, "]");
}

/* One entry of "processes" (tid 0) or "threads", the first time its id is
 * seen: {"pid": P, "name": N} or {"tid": T, "pid": P, "name": N}. */
static void write_name(struct obuf *o, struct hmap *seen, bool *first, uint32_t pid, uint32_t tid,
		       const char *name)
{
	uint32_t id = tid ? tid : pid, k2 = tid ? 2 : 1;
	void *old;

	if (hmap_get(seen, id, k2))
		return;
	if (hmap_put(seen, id, k2, (void *)1, &old)) {
		o->err = o->err ? o->err : -ENOMEM;
		return;
	}
	sep(o, first);
	OBUF_LIT(o, "{");
	if (tid) {
		OBUF_LIT(o, "\"tid\":");
		obuf__u64(o, tid);
		OBUF_LIT(o, ",");
	}
	OBUF_LIT(o, "\"pid\":");
	obuf__u64(o, pid);
	OBUF_LIT(o, ",\"name\":");
	if (name)
		obuf__json_str(o, name);
	else
		OBUF_LIT(o, "null");
	OBUF_LIT(o, "}");
}

/* The processes and threads of the lanes, named as the decoder knows them
 * at the end. */
static void write_names(struct report_timeline *tl, struct obuf *o)
{
	struct hmap seen = { 0 };
	bool first = true;

	OBUF_LIT(o, ",\"processes\":[");
	for (size_t i = 0; i < tl->nlanes; i++)
		if (tl->lanes[i].kind != LK_COUNTER)
			write_name(o, &seen, &first, tl->lanes[i].pid, 0,
				   gt_decoder__process_name(tl->d, tl->lanes[i].pid));
	OBUF_LIT(o, "],\"threads\":[");
	first = true;
	for (size_t i = 0; i < tl->nlanes; i++)
		if (tl->lanes[i].tid)
			write_name(o, &seen, &first, tl->lanes[i].pid, tl->lanes[i].tid,
				   gt_decoder__thread_name(tl->d, tl->lanes[i].tid));
	OBUF_LIT(o, "]");
	free(seen.s);
}

void report_timeline__write_json(struct report_timeline *tl, struct obuf *o)
{
	bool first = true;
	size_t at = 0;

	OBUF_LIT(o, "{");
	json_u64(o, &first, "origin", tl->origin);
	json_u64(o, &first, "end", rel(tl, tl->end));
	json_u64(o, &first, "bin_ns", tl->bin_ns);
	json_u64(o, &first, "bins", TL_BINS);
	json_u64(o, &first, "budget", tl->budget);
	json_u64(o, &first, "events", tl->events);
	json_u64(o, &first, "kept", tl->nev);
	/* the shortest duration kept, 0 when all were */
	json_u64(o, &first, "min_kept_ns", tl->thr ? bucket_floor(tl->thr) : 0);
	json_u64(o, &first, "gpu_records", tl->gpu_records);
	json_u64(o, &first, "triggers_left_out", tl->triggers_left_out);
	json_key(o, &first, "fields");
	OBUF_LIT(o, "{");
	for (int k = LK_CALLS; k <= LK_NCCL; k++) {
		if (k)
			OBUF_LIT(o, ",");
		obuf__json_str(o, lane_kind_names[k]);
		OBUF_LIT(o, ":");
		obuf__mem(o, lane_fields[k], strlen(lane_fields[k]));
	}
	OBUF_LIT(o, "}");
	json_key(o, &first, "strings");
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < tl->nstrs; i++) {
		if (i)
			OBUF_LIT(o, ",");
		obuf__json_str(o, tl->strs[i]);
	}
	OBUF_LIT(o, "]");
	/* the call type of each api name, for the colours */
	json_key(o, &first, "call_types");
	OBUF_LIT(o, "{");
	first = true;
	for (unsigned a = 1; a < GT_API__COUNT; a++) {
		const char *nm = gt_api__name(a);
		void *v = nm ? hmap_get(&tl->ptr_idx, (uintptr_t)nm, 0) : NULL;

		if (!v || tl->api_type[a] < 0)
			continue;
		sep(o, &first);
		OBUF_LIT(o, "\"");
		obuf__u64(o, (uintptr_t)v - 1);
		OBUF_LIT(o, "\":");
		obuf__json_str(o, gt_call_type__name((enum gt_call_type)tl->api_type[a]));
	}
	OBUF_LIT(o, "}");
	first = false;
	write_names(tl, o);
	json_key(o, &first, "lanes");
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < tl->nlanes; i++) {
		const struct lane *l = &tl->lanes[i];
		bool f = true;

		if (i)
			OBUF_LIT(o, ",\n");
		OBUF_LIT(o, "{");
		json_key(o, &f, "kind");
		obuf__json_str(o, lane_kind_names[l->kind]);
		json_u64(o, &f, "pid", l->pid);
		if (l->kind == LK_COUNTER) {
			json_u64(o, &f, "device", l->device);
			json_key(o, &f, "metric");
			obuf__json_str(o, gt_gpu_metric__name(l->stream));
			json_key(o, &f, "unit");
			obuf__json_str(o, gt_gpu_metric__unit(l->stream));
			json_u64(o, &f, "samples", l->events);
			json_key(o, &f, "points");
			write_points(tl, o, l);
			OBUF_LIT(o, "}");
			continue;
		}
		if (l->kind == LK_GPU) {
			json_u64(o, &f, "device", l->device);
			json_u64(o, &f, "context", l->context);
			json_u64(o, &f, "stream", l->stream);
		} else {
			json_u64(o, &f, "tid", l->tid);
		}
		if (l->kind == LK_NCCL) {
			struct gt_rank_info ri;

			/* the process' rank in its job (-1: none known); host: a job trace's */
			json_key(o, &f, "rank");
			obuf__i64(o, gt_decoder__process_rank(tl->d, l->pid, &ri) ? ri.rank : -1);
			json_u64(o, &f, "host", l->pid >> GT_HOST_SHIFT);
		}
		json_u64(o, &f, "events", l->events);
		json_u64(o, &f, "omitted", l->omitted);
		json_key(o, &f, "open");
		write_open(tl, o, i, at);
		json_key(o, &f, "ev");
		write_events(tl, o, i, &at);
		json_key(o, &f, "bins");
		write_bins(o, l);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]");
	json_key(o, &first, "util");
	write_util(tl, o);
	json_key(o, &first, "triggers");
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < tl->ntrig; i++) {
		const struct trig *t = &tl->trig[i];
		const char *api = t->api ? gt_api__name(t->api) : NULL;
		bool f = true;

		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{");
		json_u64(o, &f, "t", rel(tl, t->ts));
		json_u64(o, &f, "pid", t->pid);
		json_u64(o, &f, "tid", t->tid);
		json_u64(o, &f, "kind", t->kind);
		json_key(o, &f, "code");
		obuf__i64(o, t->code);
		json_u64(o, &f, "wait_ns", t->wait_ns);
		json_key(o, &f, "api");
		if (api)
			obuf__json_str(o, api);
		else
			OBUF_LIT(o, "null");
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]}");
}
