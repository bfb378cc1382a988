// SPDX-License-Identifier: MIT
/*
 * The timeline of `gtrace-bpf report` (report_timeline.h), gathered: lanes,
 * their bins, the events kept exactly under the budget, the GPU kernels;
 * report_timeline_json.c writes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_timeline_int.h"
#include "format/api.h"
#include "format/records.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"
#include "lib/cmp.h"

/* ---- names -------------------------------------------------------------- */

/* The index of the name s[0..n), added when new; UINT32_MAX when out of
 * memory.  Keyed on a hash and the length; a collision moves to the next
 * hash value. */
static uint32_t str_intern(struct report_timeline *tl, const char *s, size_t n)
{
	uint64_t h = hash__bytes(s, n);
	void *v, *old;
	char *copy;

	for (;;) {
		v = hmap_get(&tl->str_idx, h, (uint32_t)n);
		if (!v)
			break;
		if (!memcmp(tl->strs[(uintptr_t)v - 1], s, n) && !tl->strs[(uintptr_t)v - 1][n])
			return (uint32_t)((uintptr_t)v - 1);
		h++;
	}
	if (vec__reserve(&tl->strs, &tl->strs_cap, tl->nstrs, 1, 64))
		return UINT32_MAX;
	copy = strndup(s, n);
	if (!copy)
		return UINT32_MAX;
	if (hmap_put(&tl->str_idx, h, (uint32_t)n, (void *)(uintptr_t)(tl->nstrs + 1), &old)) {
		free(copy);
		return UINT32_MAX;
	}
	tl->strs[tl->nstrs] = copy;
	return (uint32_t)tl->nstrs++;
}

/* The index of a string whose address stays the same for the same text (the
 * decoder's names, the api table's): looked up by address first. */
static uint32_t str_stable(struct report_timeline *tl, const char *s)
{
	void *v = hmap_get(&tl->ptr_idx, (uintptr_t)s, 0), *old;
	uint32_t i;

	if (v)
		return (uint32_t)((uintptr_t)v - 1);
	i = str_intern(tl, s, strlen(s));
	if (i != UINT32_MAX && hmap_put(&tl->ptr_idx, (uintptr_t)s, 0, (void *)(uintptr_t)(i + 1), &old))
		return UINT32_MAX;
	return i;
}

/* ---- lanes and bins ----------------------------------------------------- */

static uint32_t lane_get(struct report_timeline *tl, enum lane_kind kind, uint32_t pid,
			 uint32_t tid, uint32_t device, uint32_t context, uint32_t stream)
{
	/* threads by tid; streams by a hash of their ids, top bit set;
	 * counters by device and metric */
	uint64_t k1 = kind == LK_GPU ?
		      (1ull << 63) | (hash__pair((uint64_t)device << 32 | stream, context) >> 1) :
		      kind == LK_COUNTER ? (uint64_t)kind << 32 | stream : (uint64_t)kind << 32 | tid;
	uint32_t k2 = kind == LK_COUNTER ? device : pid;
	void *v = hmap_get(&tl->lane_idx, k1, k2), *old;
	struct lane *l;

	if (v)
		return (uint32_t)((uintptr_t)v - 1);
	if (vec__reserve(&tl->lanes, &tl->lanes_cap, tl->nlanes, 1, 16))
		return UINT32_MAX;
	l = &tl->lanes[tl->nlanes];
	*l = (struct lane){ .kind = (uint8_t)kind, .pid = pid, .tid = tid, .device = device,
			    .context = context, .stream = stream };
	l->busy = calloc(TL_BINS, sizeof(*l->busy));
	l->count = calloc(TL_BINS, sizeof(*l->count));
	if (!l->busy || !l->count ||
	    hmap_put(&tl->lane_idx, k1, k2, (void *)(uintptr_t)(tl->nlanes + 1), &old)) {
		free(l->busy);
		free(l->count);
		return UINT32_MAX;
	}
	return (uint32_t)tl->nlanes++;
}

/* Doubles the bins' width until time t (relative) falls inside them. */
static void bins_fit(struct report_timeline *tl, uint64_t t)
{
	while (t / tl->bin_ns >= TL_BINS) {
		for (size_t i = 0; i < tl->nlanes; i++) {
			struct lane *l = &tl->lanes[i];

			for (size_t b = 0; b < TL_BINS / 2; b++) {
				l->busy[b] = l->busy[2 * b] + l->busy[2 * b + 1];
				l->count[b] = l->count[2 * b] + l->count[2 * b + 1];
			}
			memset(l->busy + TL_BINS / 2, 0, TL_BINS / 2 * sizeof(*l->busy));
			memset(l->count + TL_BINS / 2, 0, TL_BINS / 2 * sizeof(*l->count));
		}
		tl->bin_ns *= 2;
	}
}

/* Counts an event into its lane's bins: its start's bin, and its time in
 * each bin it covers (count false: the time only). */
static void bins_add(struct report_timeline *tl, struct lane *l, uint64_t ts, uint64_t dur,
		     bool count)
{
	uint64_t a = rel(tl, ts), b = a + dur;

	bins_fit(tl, b);
	if (count)
		l->count[a / tl->bin_ns]++;
	while (a < b) {
		uint64_t bin = a / tl->bin_ns;
		/* the last bin takes the rest: its edge may be past 2^64 (a
		 * damaged time near it wrapped the edge round, and this loop with
		 * it, for ever: found by fuzz_report) */
		uint64_t part = bin == b / tl->bin_ns ? b - a : (bin + 1) * tl->bin_ns - a;

		l->busy[bin] += part;
		a += part;
	}
}

/* ---- kept events -------------------------------------------------------- */

static unsigned bucket(uint64_t dur)
{
	unsigned e;

	if (dur < 8)
		return (unsigned)dur;
	e = 63u - (unsigned)__builtin_clzll(dur);
	return 8 + (e - 3) * 8 + (unsigned)((dur >> (e - 3)) & 7);
}

/* Raises the threshold until at most budget events are kept, and drops
 * those below it. */
static void ev_shrink(struct report_timeline *tl)
{
	uint64_t above = 0;
	unsigned b = HIST_BUCKETS;
	size_t j = 0;

	while (b > tl->thr && above + tl->hist[b - 1] <= tl->budget)
		above += tl->hist[--b];
	/* the open calls' bucket always stays */
	if (b > OPEN_BUCKET)
		b = OPEN_BUCKET;
	if (b <= tl->thr)
		return;
	for (size_t i = 0; i < tl->nev; i++) {
		unsigned k = tl->ev[i].flags & EV_OPEN ? OPEN_BUCKET : bucket(tl->ev[i].dur);

		if (k >= b)
			tl->ev[j++] = tl->ev[i];
		else
			tl->lanes[tl->ev[i].lane].omitted++;
	}
	tl->nev = j;
	for (unsigned k = 0; k < b; k++)
		tl->hist[k] = 0;
	tl->thr = b;
}

/* Counts the event e and keeps it when it is long enough.  Returns 0 or
 * -ENOMEM. */
static int ev_add(struct report_timeline *tl, const struct ev *e)
{
	struct lane *l = &tl->lanes[e->lane];
	unsigned k = e->flags & EV_OPEN ? OPEN_BUCKET : bucket(e->dur);

	tl->events++;
	l->events++;
	/* an open call's time is added once the end is known */
	bins_add(tl, l, e->ts, e->flags & EV_OPEN ? 0 : e->dur, true);
	if (!(e->flags & EV_OPEN) && e->ts + e->dur > tl->end)
		tl->end = e->ts + e->dur;
	if (k < tl->thr) {
		l->omitted++;
		return 0;
	}
	if (vec__reserve(&tl->ev, &tl->ev_cap, tl->nev, 1, 4096))
		return -ENOMEM;
	tl->ev[tl->nev++] = *e;
	tl->hist[k]++;
	if (tl->nev > 2 * tl->budget)
		ev_shrink(tl);
	return 0;
}

/* ---- the decoder's records ---------------------------------------------- */

struct report_timeline *report_timeline__new(uint64_t origin, size_t budget, struct gt_decoder *d)
{
	struct report_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->d = d;
	tl->origin = origin;
	tl->end = origin;
	tl->bin_ns = 1024;
	tl->budget = budget ? budget : TL_BUDGET_DEFAULT;
	memset(tl->api_type, -1, sizeof(tl->api_type));
	return tl;
}

/* A call's event on its thread's lane of kind, named api (a stable
 * string): its length, or open to the end when its exit never came (one
 * recorded at entry only is a point).  False when out of memory. */
static bool call_ev(struct report_timeline *tl, struct ev *e, enum lane_kind kind, uint32_t pid, uint32_t tid,
		    const char *api, bool has_exit, uint64_t dur, bool entry_only)
{
	e->link_lane = UINT32_MAX;
	e->lane = lane_get(tl, kind, pid, tid, 0, 0, 0);
	e->name = str_stable(tl, api);
	if (has_exit)
		e->dur = dur;
	else if (!entry_only)
		e->flags = EV_OPEN;
	return e->lane != UINT32_MAX && e->name != UINT32_MAX;
}

int report_timeline__call(struct report_timeline *tl, const struct gt_callrec *c)
{
	const char *api = gt_api__name(c->api);
	struct ev e = { .ts = c->ts };

	if (!api)
		return 0;
	tl->api_type[c->api] = (int8_t)c->type;
	if (!call_ev(tl, &e, LK_CALLS, c->pid, c->tid, api, c->has_exit, c->dur, c->entry_only))
		return -ENOMEM;
	if (c->type == GT_T_LAUNCH && c->kernel) {
		uint32_t k = str_stable(tl, c->kernel);

		if (k == UINT32_MAX)
			return -ENOMEM;
		e.aux = (uint64_t)k + 1;
	} else if (c->type == GT_T_MEMCPY || c->type == GT_T_MEMSET) {
		e.aux = c->bytes;
	}
	return ev_add(tl, &e);
}

int report_timeline__nccl(struct report_timeline *tl, const struct gt_ncclrec *n)
{
	const char *api = gt_nccl__name(n->api);
	struct ev e = { .ts = n->ts };

	if (!api)
		return 0;
	if (!call_ev(tl, &e, LK_NCCL, n->pid, n->tid, api, n->has_exit, n->dur, false))
		return -ENOMEM;
	return ev_add(tl, &e);
}

static struct gpu_dev *dev_get(struct report_timeline *tl, uint32_t device)
{
	for (size_t i = 0; i < tl->ndev; i++)
		if (tl->dev[i].device == device)
			return &tl->dev[i];
	if (tl->ndev == MAX_DEVICES)
		return NULL;
	tl->dev[tl->ndev] = (struct gpu_dev){ .device = device };
	return &tl->dev[tl->ndev++];
}

/* A GPU kernel, copy or set (the two share their first fields). */
static int gpu_add(struct report_timeline *tl, const struct gt_hdr *rec, uint64_t dur,
		   uint16_t flags, uint64_t launch_ts, uint32_t device, uint32_t context,
		   uint32_t stream, const char *name, uint64_t bytes)
{
	struct ev e = { .ts = rec->ts, .dur = dur, .aux = bytes, .link_lane = UINT32_MAX };

	tl->gpu_records++;
	e.lane = lane_get(tl, LK_GPU, rec->pid, 0, device, context, stream);
	e.name = str_stable(tl, name);
	if (e.lane == UINT32_MAX || e.name == UINT32_MAX)
		return -ENOMEM;
	if ((flags & GT_GPU_LINKED) && rec->tid) {
		e.link_lane = lane_get(tl, LK_CALLS, rec->pid, rec->tid, 0, 0, 0);
		e.link_ts = launch_ts;
		if (e.link_lane == UINT32_MAX)
			return -ENOMEM;
	}
	if (flags & GT_GPU_CAUSALITY)
		e.flags |= EV_CAUSALITY;
	return ev_add(tl, &e);
}

static const char *const copy_names[] = {
	"memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP",
	"memcpy (unknown direction)",
};

static int gpu_record(struct report_timeline *tl, const struct gt_hdr *rec)
{
	if (rec->type == GT_REC_GPU_KERNEL) {
		const struct gt_gpu_kernel *k = (const void *)rec;
		const char *mangled, *name = gt_decoder__gpu_kernel_name(tl->d, k, &mangled);
		struct gpu_dev *dv = dev_get(tl, k->device);

		if (dv && k->dur) {
			if (vec__reserve(&dv->iv, &dv->cap, dv->n, 1, 1024))
				return -ENOMEM;
			dv->iv[dv->n++] = (struct ival){ rec->ts, rec->ts + k->dur };
		}
		return gpu_add(tl, rec, k->dur, k->flags, k->launch_ts, k->device, k->context,
			       k->stream, name, 0);
	} else {
		const struct gt_gpu_copy *c = (const void *)rec;
		const char *name = "memset";

		if (rec->type == GT_REC_GPU_MEMCPY) {
			const char *kind = gt_copy_kind__name((enum gt_copy_kind)c->kind);

			name = copy_names[sizeof(copy_names) / sizeof(copy_names[0]) - 1];
			for (size_t i = 0; kind && i + 1 < sizeof(copy_names) / sizeof(copy_names[0]); i++)
				if (!strcmp(copy_names[i] + 7, kind))
					name = copy_names[i];
		}
		return gpu_add(tl, rec, c->dur, c->flags, c->launch_ts, c->device, c->context,
			       c->stream, name, c->bytes);
	}
}

/* A GPU metric sample onto its device's counter lane. */
static int counter_add(struct report_timeline *tl, const struct gt_gpu_metric *m)
{
	uint32_t li;
	struct lane *l;

	/* a process' memory is that process', not a lane of its GPU */
	if (!gt_gpu_metric__name(m->metric) || m->metric == GT_GPUM_PROC_MEM)
		return 0;
	li = lane_get(tl, LK_COUNTER, 0, 0, m->device, 0, m->metric);
	if (li == UINT32_MAX)
		return -ENOMEM;
	l = &tl->lanes[li];
	l->events++;
	if (l->nsmp == MAX_SAMPLES) {
		/* the means of pairs: half the points, the same curve */
		for (size_t i = 0; i < MAX_SAMPLES / 2; i++) {
			const struct sample *a = &l->smp[2 * i], *b = &l->smp[2 * i + 1];

			l->smp[i] = (struct sample){ a->ts, (a->v * (double)a->n + b->v * (double)b->n) /
						     (double)(a->n + b->n), a->n + b->n };
		}
		l->nsmp = MAX_SAMPLES / 2;
	}
	if (vec__reserve(&l->smp, &l->smp_cap, l->nsmp, 1, 64))
		return -ENOMEM;
	l->smp[l->nsmp++] = (struct sample){ m->hdr.ts, (double)m->value_micro / 1e6, 1 };
	if (m->hdr.ts > tl->end)
		tl->end = m->hdr.ts;
	return 0;
}

int report_timeline__other(struct report_timeline *tl, const struct gt_hdr *rec)
{
	struct ev e = { .ts = rec->ts, .link_lane = UINT32_MAX };

	if (!gt_rec__size_ok(rec))
		return 0;
	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		return gpu_record(tl, rec);
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = (const void *)rec;

		e.lane = lane_get(tl, LK_OFFCPU, rec->pid, rec->tid, 0, 0, 0);
		e.name = str_stable(tl, "off-CPU");
		e.dur = o->dur;
		e.aux = o->state;
		break;
	}
	case GT_REC_NVTX: {
		const struct gt_nvtx *nv = (const void *)rec;
		size_t n = nv->len ? gt_rec_strlen(rec, nv->name, nv->len) : 0;

		e.lane = lane_get(tl, LK_NVTX, rec->pid, rec->tid, 0, 0, 0);
		e.name = str_intern(tl, nv->name, n);
		e.dur = nv->dur;
		break;
	}
	case GT_REC_GPU_METRIC:
		return counter_add(tl, (const struct gt_gpu_metric *)rec);
	case GT_REC_TRIGGER: {
		const struct gt_trigger *t = (const void *)rec;

		if (tl->ntrig == MAX_TRIGGERS) {
			tl->triggers_left_out++;
			return 0;
		}
		if (vec__reserve(&tl->trig, &tl->trig_cap, tl->ntrig, 1, 16))
			return -ENOMEM;
		tl->trig[tl->ntrig++] = (struct trig){ .ts = rec->ts, .wait_ns = t->wait_ns,
						       .pid = rec->pid, .tid = rec->tid,
						       .kind = t->kind, .code = t->code,
						       .api = rec->api };
		return 0;
	}
	default:
		return 0;
	}
	if (e.lane == UINT32_MAX || e.name == UINT32_MAX)
		return -ENOMEM;
	return ev_add(tl, &e);
}

/* ---- the end ------------------------------------------------------------ */

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	/* at one start the longer first: an enclosing NVTX range above */
	return a->dur > b->dur ? -1 : a->dur < b->dur;
}

static int cmp_ival(const void *pa, const void *pb)
{
	const struct ival *a = pa, *b = pb;

	return a->s < b->s ? -1 : a->s > b->s;
}

/* Calls without an exit last to the end of the trace: their start bins
 * are filled here and their full bins per lane in one pass over the bins,
 * since they all end at the same time (walking each one's bins would take
 * events x bins: a damaged trace with many open calls stalled the report). */
static int open_events_add(struct report_timeline *tl)
{
	uint64_t b = rel(tl, tl->end), lb = b / tl->bin_ns;
	uint32_t **from = calloc(tl->nlanes ? tl->nlanes : 1, sizeof(*from));
	int err = 0;

	if (!from)
		return -ENOMEM;
	for (size_t i = 0; i < tl->nev; i++) {
		struct ev *e = &tl->ev[i];
		uint64_t a, fa, edge;

		if (!(e->flags & EV_OPEN))
			continue;
		e->dur = tl->end > e->ts ? tl->end - e->ts : 0;
		a = rel(tl, e->ts);
		if (a >= b)
			continue;
		fa = a / tl->bin_ns;
		edge = (fa + 1) * tl->bin_ns;
		tl->lanes[e->lane].busy[fa] += (b < edge ? b : edge) - a;
		if (b <= edge)
			continue;
		/* bins fa + 1 .. lb - 1 whole, lb in part (lb < TL_BINS: bins_fit) */
		if (!from[e->lane] && !(from[e->lane] = calloc(TL_BINS + 1, sizeof(**from)))) {
			err = -ENOMEM;
			break;
		}
		from[e->lane][fa + 1]++;
	}
	for (size_t j = 0; j < tl->nlanes; j++) {
		uint64_t run = 0;

		if (!from[j])
			continue;
		for (uint64_t k = 0; k <= lb && k < TL_BINS; k++) {
			run += from[j][k];
			if (run)
				tl->lanes[j].busy[k] += run * (k < lb ? tl->bin_ns : b - lb * tl->bin_ns);
		}
		free(from[j]);
	}
	free(from);
	return err;
}

int report_timeline__finish(struct report_timeline *tl, uint64_t end_ts)
{
	if (end_ts > tl->end)
		tl->end = end_ts;
	for (size_t i = 0; i < tl->ndev; i++)
		for (size_t j = 0; j < tl->dev[i].n; j++)
			if (tl->dev[i].iv[j].e > tl->end)
				tl->end = tl->dev[i].iv[j].e;
	bins_fit(tl, rel(tl, tl->end));
	if (open_events_add(tl))
		return -ENOMEM;
	if (tl->nev > tl->budget)
		ev_shrink(tl);
	cmp__sort(tl->ev, tl->nev, sizeof(*tl->ev), cmp_ev);
	for (size_t i = 0; i < tl->ndev; i++)
		cmp__sort(tl->dev[i].iv, tl->dev[i].n, sizeof(*tl->dev[i].iv), cmp_ival);
	return 0;
}

uint64_t report_timeline__events(const struct report_timeline *tl)
{
	return tl->events;
}

uint64_t report_timeline__kept(const struct report_timeline *tl)
{
	return tl->nev;
}

uint64_t report_timeline__gpu_records(const struct report_timeline *tl)
{
	return tl->gpu_records;
}

void report_timeline__free(struct report_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nlanes; i++) {
		free(tl->lanes[i].busy);
		free(tl->lanes[i].count);
		free(tl->lanes[i].smp);
	}
	free(tl->lanes);
	free(tl->lane_idx.s);
	free(tl->ev);
	for (size_t i = 0; i < tl->nstrs; i++)
		free(tl->strs[i]);
	free(tl->strs);
	free(tl->str_idx.s);
	free(tl->ptr_idx.s);
	for (size_t i = 0; i < tl->ndev; i++)
		free(tl->dev[i].iv);
	free(tl->trig);
	free(tl);
}
