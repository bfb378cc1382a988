// SPDX-License-Identifier: MIT
/*
 * analyze's first pass (analyze_opts.steady): each process' iterations and
 * its phases, before the pass that answers for them (analyze_read.c).
 *
 * Per process, the iterations are the first of: an NVTX series that can be
 * iterations (5 ranges or more; analyze/steady.h says which can), the one
 * covering the most time; the call stream's best series (steady_scan: a
 * recurring synchronization or collective, else a graph, else a kernel),
 * with 5 iterations or more; in a merged trace a series weighs the GPU time
 * its process launched inside it (GPU records by their launch's entry, in
 * buckets of AZ_GPU_BUCKETS over the recording), so that launches queued
 * ahead of a busy GPU do not look short.  Their phases give the steady
 * state.  Without
 * iterations the steady state is the GPU's active span (its first work's
 * start to its last's end), or without GPU records the process' first CUDA
 * call to the end of its last, and the scope says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "analyze/steady.h"
#include "decode/pass.h"
#include "format/records.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "lib/cmp.h"

#define AZ_STEADY_MIN 5		/* iterations a series needs */
#define AZ_GPU_BUCKETS 65536	/* GPU time buckets over the recording, per process */
#define AZ_GPU_BUCKET_MIN 10000	/* ns: the narrowest bucket */
#define AZ_GPU_BUCKET_CUT 10000000	/* ns: a bucket's width when the recording's end is not known */

/* One NVTX series of one process. */
struct pseries {
	uint32_t pid;
	char *name;
	uint64_t *start, *end;
	size_t n, cs, ce;
};

struct pproc {
	uint32_t pid;
	bool calls;
	uint64_t first, last;		/* its records */
	uint64_t call_first, call_last;	/* its CUDA calls */
	bool gpu;
	uint64_t gpu_first, gpu_last;
};

/* The synchronizations of one bucket: the first and the last entered. */
struct pwait {
	uint64_t first, first_exit;
	uint64_t last, last_exit;
};

struct pre {
	struct steady_scan *ss;
	struct gt_decoder *d;		/* the pass' (its last time: where calls cut end) */
	struct trace_reader *r;
	uint64_t t0, width;		/* GPU time buckets: from t0, width ns each */
	struct u64map gpu;		/* hash(pid, bucket) -> GPU ns launched in it */
	/* the synchronizations (with their exits) by the bucket of their entry:
	 * without GPU records, where the GPU work launched before is waited for */
	struct hmap waits;		/* (bucket, pid) -> struct pwait */
	struct hmap procs;		/* (pid, 0) -> struct pproc */
	struct hmap series;		/* (name hash, pid) -> struct pseries */
};

static struct pproc *pproc_of(struct pre *p, uint32_t pid)
{
	struct pproc *x = hmap_get_or_new(&p->procs, pid, 0, sizeof(*x), NULL);

	if (x)
		x->pid = pid;
	return x;
}

static void span_add(uint64_t *first, uint64_t *last, bool *have, uint64_t a, uint64_t b)
{
	if (!*have || a < *first)
		*first = a;
	if (!*have || b > *last)
		*last = b;
	*have = true;
}

static int pre_call(void *ctx, const struct gt_callrec *c)
{
	struct pre *p = ctx;
	struct pproc *x = pproc_of(p, c->pid);
	bool had = x ? x->calls : false;

	uint64_t end = c->has_exit ? c->ts + c->dur : c->ts;

	if (!x)
		return -ENOMEM;
	if (c->at_end) {	/* in flight at the end: up to it (analyze__set_end) */
		const struct gt_trailer *tr = trace_reader__trailer(p->r);

		end = gt_decoder__last_ts(p->d);
		if (tr && tr->end_ts > end)
			end = tr->end_ts;
		if (end < c->ts)
			end = c->ts;
	}
	span_add(&x->call_first, &x->call_last, &had, c->ts, end);
	x->calls = true;
	if (c->type == GT_T_SYNC && c->has_exit && c->dur) {
		bool fresh;
		struct pwait *w = hmap_get_or_new(&p->waits, c->ts > p->t0 ? (c->ts - p->t0) / p->width : 0,
						  c->pid, sizeof(*w), &fresh);

		if (!w)
			return -ENOMEM;
		if (fresh || c->ts < w->first) {
			w->first = c->ts;
			w->first_exit = c->ts + c->dur;
		}
		if (fresh || c->ts >= w->last) {
			w->last = c->ts;
			w->last_exit = c->ts + c->dur;
		}
	}
	return steady_scan__call(p->ss, c);
}

static int pre_nccl(void *ctx, const struct gt_ncclrec *n)
{
	return steady_scan__nccl(((struct pre *)ctx)->ss, n);
}

static int nvtx_add(struct pre *p, const struct gt_nvtx *nv)
{
	char raw[GT_STR_MAX], name[GT_STR_MAX];
	size_t n = nv->len ? gt_rec_strlen(&nv->hdr, nv->name, nv->len) : 0;
	struct pseries *s;
	bool created;

	memcpy(raw, nv->name, n);
	raw[n] = '\0';
	steady__series_name(raw, n, name, sizeof(name));
	s = hmap_get_or_new(&p->series, hash__bytes(name, strlen(name)), nv->hdr.pid, sizeof(*s), &created);
	if (!s)
		return -ENOMEM;
	if (created) {
		s->pid = nv->hdr.pid;
		if (!(s->name = strdup(name)))
			return -ENOMEM;
	}
	if (vec__reserve(&s->start, &s->cs, s->n, 1, 64) || vec__reserve(&s->end, &s->ce, s->n, 1, 64))
		return -ENOMEM;
	s->start[s->n] = nv->hdr.ts;
	s->end[s->n++] = nv->hdr.ts + nv->dur;
	return 0;
}

static int pre_other(void *ctx, const struct gt_hdr *rec)
{
	struct pre *p = ctx;
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *cp = (const void *)rec;
	struct pproc *x;
	bool had;

	if (!rec->pid || !gt_rec__size_ok(rec))
		return 0;
	switch (rec->type) {
	case GT_REC_NVTX:
		/* ranges only: a mark is no iteration */
		return ((const struct gt_nvtx *)rec)->dur ? nvtx_add(p, (const struct gt_nvtx *)rec) : 0;
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		x = pproc_of(p, rec->pid);
		if (!x)
			return -ENOMEM;
		had = x->gpu;
		span_add(&x->gpu_first, &x->gpu_last, &had, rec->ts,
			 rec->ts + (rec->type == GT_REC_GPU_KERNEL ? k->dur : cp->dur));
		x->gpu = true;
		{
			uint64_t at = rec->type == GT_REC_GPU_KERNEL ? ((k->flags & GT_GPU_LINKED) ? k->launch_ts : rec->ts)
				      : ((cp->flags & GT_GPU_LINKED) ? cp->launch_ts : rec->ts);
			uint64_t dur = rec->type == GT_REC_GPU_KERNEL ? k->dur : cp->dur;
			uint64_t key = u64map__key2(rec->pid, at > p->t0 ? (at - p->t0) / p->width : 0), *v;

			v = u64map__get(&p->gpu, key);
			if (v)
				*v += dur;
			else if (u64map__set(&p->gpu, key, dur))
				return -ENOMEM;
		}
		return 0;
	default:
		return 0;
	}
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int iv_order(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts a series' ranges by start (pairs through one array). */
static int series_sort(struct pseries *s)
{
	uint64_t *v = malloc(2 * s->n * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		v[2 * i] = s->start[i];
		v[2 * i + 1] = s->end[i];
	}
	cmp__sort(v, s->n, 2 * sizeof(*v), iv_order);
	for (size_t i = 0; i < s->n; i++) {
		s->start[i] = v[2 * i];
		s->end[i] = v[2 * i + 1];
	}
	free(v);
	return 0;
}

/* steady_weight_fn over the GPU buckets: the GPU time pid launched from
 * start to end, to the bucket. */
static uint64_t gpu_weight(void *ctx, uint32_t pid, uint64_t start, uint64_t end)
{
	const struct pre *p = ctx;
	uint64_t b0 = start > p->t0 ? (start - p->t0) / p->width : 0, b1 = end > p->t0 ? (end - p->t0) / p->width : 0;
	uint64_t sum = 0;

	for (uint64_t b = b0; b <= b1 && b - b0 <= AZ_GPU_BUCKETS; b++) {
		const uint64_t *v = u64map__get(&p->gpu, u64map__key2(pid, b));

		sum += v ? *v : 0;
	}
	return sum;
}

/* Without GPU records, launches run ahead of the GPU: a loop of queued
 * launches takes microseconds on the CPU and its work is waited for at the
 * synchronization entered right after it. The synchronization of process
 * pid entered first at or after end, within AZ_WAIT_SLACK of it (in the
 * bucket of end or the next; where its bucket holds others before end, the
 * last of them): *entry and its exit, or false. */
#define AZ_WAIT_SLACK 1000000ull	/* ns */

static bool wait_after(const struct pre *p, uint32_t pid, uint64_t end, uint64_t *entry, uint64_t *exit)
{
	uint64_t b0 = end > p->t0 ? (end - p->t0) / p->width : 0;

	for (uint64_t b = b0; b <= b0 + 1; b++) {
		const struct pwait *w = hmap_get(&p->waits, b, pid);

		if (!w || w->last < end)
			continue;
		*entry = w->first >= end ? w->first : w->last;
		*exit = w->first >= end ? w->first_exit : w->last_exit;
		return *entry - end <= AZ_WAIT_SLACK;
	}
	return false;
}

/* steady_weight_fn without GPU records: the time covered and what the
 * synchronization right after it waited. */
static uint64_t wait_weight(void *ctx, uint32_t pid, uint64_t start, uint64_t end)
{
	uint64_t entry, exit, w = end > start ? end - start : 0;

	if (wait_after(ctx, pid, end, &entry, &exit))
		w += exit - entry;
	return w;
}

/* The phases of process x into ph (strings in a's store). */
static int phases_of(struct analyze *a, struct pre *p, const struct pproc *x, struct az_phases *ph)
{
	const struct pseries *best = NULL;
	const struct steady_series *ss = NULL;
	const uint64_t *start = NULL, *end = NULL;
	struct steady_phases sp;
	uint32_t g = 1;
	size_t n = 0;
	int err;

	*ph = (struct az_phases){ .proc_start_ts = x->call_first };
	for (uint32_t i = 0; i < p->series.cap; i++) {
		struct pseries *s = p->series.s[i].v;
		uint64_t cov = 0, bcov = 0;

		if (!p->series.s[i].used || s->pid != x->pid || s->n < AZ_STEADY_MIN)
			continue;
		if ((err = series_sort(s)))
			return err;
		if (!steady__ranges_are_iterations(s->name, s->start, s->end, s->n))
			continue;
		for (size_t j = 0; j < s->n; j++)
			cov += s->end[j] - s->start[j];
		for (size_t j = 0; best && j < best->n; j++)
			bcov += best->end[j] - best->start[j];
		if (!best || cov > bcov)
			best = s;
	}
	if (best) {
		ph->source = "nvtx";
		ph->what = az_store__keep(&a->store, best->name);
		start = best->start;
		end = best->end;
		n = best->n;
	} else if ((ss = steady_scan__best(p->ss, x->pid, 0, x->gpu ? gpu_weight : wait_weight, p)) &&
		   ss->n >= AZ_STEADY_MIN) {
		ph->source = steady_kind__name(ss->kind);
		ph->what = az_store__keep(&a->store, ss->what);
		start = ss->start;
		end = ss->end;
		n = ss->n;
		g = ss->group ? ss->group : 1;
	}
	ph->group = g;
	if (n && (ph->source && !ph->what))
		return -ENOMEM;
	if (n) {
		err = steady__phases(start, end, n, &sp);
		if (err)
			return err;
		ph->found = (uint32_t)n * g;
		ph->steady = sp.found;
		if (sp.found) {
			ph->count = (uint32_t)(sp.last - sp.first + 1) * g;
			ph->startup = (uint32_t)sp.first * g;
			ph->tail = (uint32_t)(n - 1 - sp.last) * g;
			ph->median_ns = sp.median_ns / g;
			ph->start_ts = sp.start_ts;
			ph->end_ts = sp.end_ts;
			/* a tail of a few queued launches (within the slack)
			 * is part of the work the synchronization waits for */
			if (!x->gpu && ss && (ss->kind == STEADY_LAUNCH || ss->kind == STEADY_GRAPH) &&
			    end[n - 1] - sp.end_ts <= AZ_WAIT_SLACK) {
				uint64_t entry, exit;

				if (wait_after(p, x->pid, end[n - 1], &entry, &exit) && exit > sp.end_ts) {
					ph->end_ts = exit;
					ph->waited = true;
				}
			}
		} else {
			uint64_t *d = malloc(n * sizeof(*d));

			if (!d)
				return -ENOMEM;
			ph->count = (uint32_t)n * g;
			ph->start_ts = start[0];
			for (size_t i = 0; i < n; i++) {
				d[i] = end[i] - start[i];
				if (end[i] > ph->end_ts)
					ph->end_ts = end[i];
			}
			/* no steady state: the median of them all */
			cmp__sort(d, n, sizeof(*d), u64_order);
			ph->median_ns = (n % 2 ? d[n / 2] : d[n / 2 - 1] / 2 + d[n / 2] / 2) / g;
			free(d);
		}
		return 0;
	}
	if (x->gpu) {
		ph->source = "gpu_span";
		ph->start_ts = x->gpu_first;
		ph->end_ts = x->gpu_last;
	} else {
		ph->source = "calls_span";
		ph->start_ts = x->call_first;
		ph->end_ts = x->call_last;
	}
	return 0;
}

static void series_free(void *v)
{
	struct pseries *s = v;

	free(s->name);
	free(s->start);
	free(s->end);
}

int az_steady__find(struct analyze *a, struct trace_reader *r)
{
	struct pre p = { .ss = steady_scan__new(), .r = r };
	struct gt_decoder *d = p.ss ? gt_decoder__new(pre_call, pre_other, &p) : NULL;
	enum gt_pass_fail fail;
	size_t n = 0;
	int err = -ENOMEM;

	if (!d)
		goto out;
	p.d = d;
	{
		const struct gt_trailer *tr = trace_reader__trailer(r);

		p.t0 = trace_reader__info(r)->start_ts;
		p.width = tr && tr->end_ts > p.t0 ? (tr->end_ts - p.t0) / AZ_GPU_BUCKETS : AZ_GPU_BUCKET_CUT;
		if (p.width < AZ_GPU_BUCKET_MIN)
			p.width = AZ_GPU_BUCKET_MIN;
	}
	gt_decoder__set_nccl_cb(d, pre_nccl);
	err = gt_pass__run(r, d, NULL, &fail);
	trace_reader__rewind(r);
	if (err)
		goto out;
	err = steady_scan__finish(p.ss);
	if (err)
		goto out;
	err = -ENOMEM;
	for (uint32_t i = 0; i < p.procs.cap; i++)
		n += p.procs.s[i].used && ((struct pproc *)p.procs.s[i].v)->calls;
	a->phases = calloc(n ? n : 1, sizeof(*a->phases));
	a->phase_pids = calloc(n ? n : 1, sizeof(*a->phase_pids));
	if (!a->phases || !a->phase_pids)
		goto out;
	err = 0;
	for (uint32_t i = 0; i < p.procs.cap && !err; i++) {
		const struct pproc *x = p.procs.s[i].v;

		if (!p.procs.s[i].used || !x->calls)
			continue;
		a->phase_pids[a->nphases] = x->pid;
		err = phases_of(a, &p, x, &a->phases[a->nphases]);
		if (!err)
			a->nphases++;
	}
out:
	gt_decoder__free(d);
	steady_scan__free(p.ss);
	hmap_free_all(&p.procs, NULL);
	hmap_free_all(&p.series, series_free);
	u64map__free(&p.gpu);
	hmap_free_all(&p.waits, NULL);
	return err;
}
