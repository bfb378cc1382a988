// SPDX-License-Identifier: MIT
/*
 * `stats -r gpu_metrics_sum`: the GPU metric samples of a trace recorded
 * with --gpu-metrics (GT_REC_GPU_METRIC): Samples, Mean, P50, P95, Max,
 * exact in the metric's unit (Mean rounded to a millionth; percentiles
 * nearest-rank: the smallest value with at least p % of the samples at or
 * below it), per GPU and metric in each of these scopes, in this order:
 *
 *   run      every sample (without --range)
 *   range N, window N   the samples taken inside a capture range's or a
 *            light-mode window's time, one scope each (with --range, that
 *            one only); they are of the whole GPU, every process on it:
 *            attributed by time
 *   kernel   per kernel (demangled name), the samples of a merged trace
 *            whose interval's GPU work was at least SOLE_SHARE_PCT %
 *            that kernel's: attributed by sole occupancy (below); only a
 *            kernel with at least SOLE_MIN such samples of a metric
 *   process  per process, its memory on each GPU (proc_mem_used) as NVML
 *            lists it
 *
 * Rows by scope, then by its number, kernel name or pid, then GPU, then
 * metric id; the last column says how the samples were attributed.
 *
 * Sole occupancy.  A sample's interval is, for a GPM metric, the time since
 * the previous sample of that metric on that GPU (NVML's figure is over
 * exactly that pair of GPM samples); for NVML's basic figures, which NVML
 * averages over up to a second, the longer of that and the second before
 * the sample.  It is attributed to kernel K when K's records on that GPU
 * (clipped to the interval, summed, concurrent ones each counted) are at
 * least SOLE_SHARE_PCT % of the time of all its GPU records there
 * (kernels, copies, sets of every process, named or not); when no GPU
 * record that could not be placed on an NVML GPU overlaps it; and when no
 * process NVML listed on that GPU (proc_mem_used) around then is one
 * without GPU records in the trace (a process not seen by CUPTI could have
 * run anything).  The shares are kept for the first SHARE_NAMES kernel
 * names met in an interval; the time of any others counts in the whole
 * only, which can only keep a kernel from the attribution, never give it
 * one.  Placing work: a trace whose samples are of one GPU puts all its
 * GPU records on it; otherwise a process' records go to the NVML GPU it
 * was listed on when it used exactly one CUPTI device and was listed on
 * exactly one GPU (CUPTI's device ids are CUDA's ordinals, which
 * CUDA_VISIBLE_DEVICES renumbers: they are not NVML's indices); the rest
 * are counted in a note.
 * Constant or bit-mask metrics (mem_total, throttle_reasons) are not
 * attributed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_int.h"
#include "decode/decode.h"
#include "format/records.h"
#include "lib/vec.h"
#include "lib/cmp.h"

#define SOLE_MIN	3		/* samples a kernel row needs */
/* The share (%) of an interval's GPU time a kernel needs for its sample.
 * The samples are of the whole device: a short set or copy beside a long
 * kernel (cuBLAS sets its workspace for ~1 us before each 1.4 ms GEMM on
 * the H200) does not change them, yet a rule of "every record is K" gave
 * such a kernel no sample at all. */
#define SOLE_SHARE_PCT	95
#define SHARE_NAMES	8		/* kernel names an interval keeps the time of */
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define BASIC_SPAN_NS	1000000000ull	/* NVML's basic figures: averaged over up to this */
#define PROCS_SPAN_NS	1000000000ull	/* a process listing holds about this long */
#define NO_DEV		UINT32_MAX

struct gpum_sample {
	uint64_t ts;
	int64_t v;		/* value_micro */
};

/* The samples of one GPU's metric (of one process for proc_mem_used). */
struct gpum_series {
	uint32_t device, metric, pid;
	struct gpum_sample *s;	/* in time order once built */
	size_t n, cap;
};

/* A GPU record (kernel, copy or set) of a merged trace. */
struct gpum_work {
	uint64_t start, end;
	const char *name;	/* a kernel's demangled name (the decoder's string: one
				 * address per name), NULL for a copy or set */
	uint32_t pid;
	uint32_t cupti_dev;	/* CUPTI's device id */
	uint32_t dev;		/* the NVML GPU it was placed on, NO_DEV = none */
};

/* The samples attributed to one kernel on one GPU for one metric. */
struct gpum_kern {
	const char *name;
	uint32_t device, metric;
	int64_t *v;
	size_t n, cap;
};

struct gpum_acc {
	struct gpum_series *s;
	size_t n, cap;
	size_t last;		/* cache: samples of one round come in order */
	struct gpum_work *w;
	size_t nw, capw;
	uint64_t unplaced;	/* GPU records that could not be placed on an NVML GPU */
	uint32_t unplaced_pids;	/* ... of this many processes */
	char note[2][400];
	const char *note_v[5];
};

const struct stats_col stats_gpum_cols[11] = {
	{ "GPU", "gpu", SK_ID },
	{ "Scope", "scope", SK_STR },
	{ "Of", "of", SK_STR },
	{ "Metric", "metric", SK_STR },
	{ "Unit", "unit", SK_STR },
	{ "Samples", "samples", SK_INT },
	{ "Mean", "mean", SK_MICRO },
	{ "P50", "p50", SK_MICRO },
	{ "P95", "p95", SK_MICRO },
	{ "Max", "max", SK_MICRO },
	{ "Attribution", "attribution", SK_STR },
};

static const char note_scopes[] =
	"GPU metrics sampled through NVML by the recorder (--gpu-metrics), in each metric's unit; "
	"Mean rounded to a millionth, P50 and P95 nearest-rank. Scopes: run (every sample), range "
	"and window (the samples inside its time: of the whole GPU, every process on it), kernel "
	"(samples whose interval's GPU work was at least " STR(SOLE_SHARE_PCT) " % that kernel's: sole "
	"occupancy), process (its memory as NVML lists it)";
static const char note_sole[] =
	"sole occupancy: that kernel was at least " STR(SOLE_SHARE_PCT) " % of the GPU's work in the "
	"sample's interval (the time of the trace's GPU records there, clipped to it: kernels, "
	"copies and sets of every process; a short set or copy beside a long kernel does not change "
	"the device's figures), and no process NVML listed on the GPU lacks GPU records; the "
	"interval is the time since the previous sample for GPM metrics, at least the second before "
	"it for NVML's basic ones (NVML averages them); a kernel needs " STR(SOLE_MIN) " such "
	"samples of a metric for a row";
static const char attr_sole[] = "sole occupancy (>= " STR(SOLE_SHARE_PCT) " %)";

static struct gpum_acc *acc_of(struct stats_acc *st)
{
	if (!st->gpum)
		st->gpum = calloc(1, sizeof(*st->gpum));
	return st->gpum;
}

static struct gpum_series *series_of(struct gpum_acc *a, uint32_t device, uint32_t metric, uint32_t pid)
{
	struct gpum_series *s;

	if (a->last < a->n && a->s[a->last].device == device && a->s[a->last].metric == metric &&
	    a->s[a->last].pid == pid)
		return &a->s[a->last];
	for (size_t i = 0; i < a->n; i++) {
		if (a->s[i].device == device && a->s[i].metric == metric && a->s[i].pid == pid) {
			a->last = i;
			return &a->s[i];
		}
	}
	if (vec__reserve(&a->s, &a->cap, a->n, 1, 32))
		return NULL;
	s = &a->s[a->n];
	*s = (struct gpum_series){ .device = device, .metric = metric, .pid = pid };
	a->last = a->n++;
	return s;
}

int stats_gpum__add(struct stats_acc *st, const struct gt_gpu_metric *m)
{
	struct gpum_acc *a = acc_of(st);
	struct gpum_series *s;

	if (!a)
		return -ENOMEM;
	/* a process' memory is the process'; every other sample the GPU's */
	s = series_of(a, m->device, m->metric, m->metric == GT_GPUM_PROC_MEM ? m->hdr.pid : 0);
	if (!s || vec__reserve(&s->s, &s->cap, s->n, 1, 64))
		return -ENOMEM;
	s->s[s->n++] = (struct gpum_sample){ .ts = m->hdr.ts, .v = m->value_micro };
	return 0;
}

int stats_gpum__gpu_work(struct stats_acc *st, const struct gt_hdr *rec)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *c = (const void *)rec;
	struct gpum_acc *a;
	const char *mangled;
	struct gpum_work w = { .start = rec->ts, .pid = rec->pid, .dev = NO_DEV };

	if (!gt_rec__size_ok(rec))
		return 0;
	if (rec->type == GT_REC_GPU_KERNEL) {
		w.end = rec->ts + k->dur;
		w.cupti_dev = k->device;
		w.name = gt_decoder__gpu_kernel_name(st->d, k, &mangled);
	} else {
		w.end = rec->ts + c->dur;
		w.cupti_dev = c->device;
	}
	a = acc_of(st);
	if (!a || vec__reserve(&a->w, &a->capw, a->nw, 1, 256))
		return -ENOMEM;
	a->w[a->nw++] = w;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct gpum_sample *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_series(const void *a, const void *b)
{
	const struct gpum_series *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->metric > y->metric) - (x->metric < y->metric);
}

/* By NVML GPU, then start. */
static int cmp_work(const void *a, const void *b)
{
	const struct gpum_work *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_kern(const void *a, const void *b)
{
	const struct gpum_kern *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->metric > y->metric) - (x->metric < y->metric);
}

/* Nearest rank of p percent among n sorted values: index ceil(p n / 100) - 1. */
static size_t rank(size_t n, unsigned p)
{
	size_t k = (n * p + 99) / 100;

	return k ? k - 1 : 0;
}

int64_t stats_gpum__mean(const int64_t *v, size_t n)
{
	__int128 sum = 0, q;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	/* to the nearest, halves away from zero */
	q = (sum >= 0 ? sum + (__int128)(n / 2) : sum - (__int128)(n / 2)) / (__int128)n;
	return (int64_t)q;
}

/* ---- rows ------------------------------------------------------------- */

struct rows {
	struct stats_acc *st;
	struct stats_report *r;
	int64_t *v;			/* scratch: one row's values */
	size_t cap;
};

/* A row of the n values v (reordered): GPU, scope, of, metric, the figures,
 * attribution. */
static int put_row(struct rows *x, uint32_t device, const char *scope, const char *of, uint32_t metric,
		   int64_t *v, size_t n, const char *attribution)
{
	struct stats_cell *c = stats_report__row(x->r);
	const char *name = gt_gpu_metric__name(metric);
	char unknown[24];

	if (!c)
		return -ENOMEM;
	if (!name) {
		snprintf(unknown, sizeof(unknown), "metric_%u", metric);
		name = stats_acc__strdup(x->st, unknown);
		if (!name)
			return -ENOMEM;
	}
	c[0] = (struct stats_cell){ .u = device };
	c[1] = (struct stats_cell){ .s = scope };
	if (of)
		c[2] = (struct stats_cell){ .s = of };
	c[3] = (struct stats_cell){ .s = name };
	c[4] = (struct stats_cell){ .s = gt_gpu_metric__unit(metric) };
	c[5] = (struct stats_cell){ .u = n };
	c[6] = (struct stats_cell){ .u = (uint64_t)stats_gpum__mean(v, n) };
	cmp__sort(v, n, sizeof(*v), cmp_i64);
	c[7] = (struct stats_cell){ .u = (uint64_t)v[rank(n, 50)] };
	c[8] = (struct stats_cell){ .u = (uint64_t)v[rank(n, 95)] };
	c[9] = (struct stats_cell){ .u = (uint64_t)v[n - 1] };
	c[10] = (struct stats_cell){ .s = attribution };
	return 0;
}

/* A row per series (of the GPU, or of processes) with its samples in
 * [lo, hi]; none for a series with no sample there. */
static int scope_rows(struct rows *x, const struct gpum_acc *a, bool procs, uint64_t lo, uint64_t hi,
		      const char *scope, const char *of, const char *attribution)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct gpum_series *s = &a->s[i];
		const char *o = of;
		size_t n = 0;
		int err;

		if ((s->pid != 0) != procs)
			continue;
		if (vec__reserve(&x->v, &x->cap, 0, s->n ? s->n : 1, 64))
			return -ENOMEM;
		for (size_t k = 0; k < s->n; k++)
			if (s->s[k].ts >= lo && s->s[k].ts <= hi)
				x->v[n++] = s->s[k].v;
		if (!n)
			continue;
		if (procs) {
			char pid[16];

			snprintf(pid, sizeof(pid), "%u", s->pid);
			o = stats_acc__strdup(x->st, pid);
			if (!o)
				return -ENOMEM;
		}
		if ((err = put_row(x, s->device, scope, o, s->metric, x->v, n, attribution)))
			return err;
	}
	return 0;
}

/* ---- sole occupancy --------------------------------------------------- */

/* One NVML GPU's placed work, sorted by start, and the latest end up to
 * each (so that a walk back from a time can stop). */
struct dev_work {
	const struct gpum_work *w;
	uint64_t *maxend;
	size_t n;
};

/* Where a sample interval's work is, for the attribution. */
struct occupancy {
	struct dev_work *dev;		/* by NVML index, ndev of them */
	uint32_t ndev;
	struct dev_work unplaced;	/* work placed on no GPU: on any of them */
	struct { uint32_t dev; uint64_t lo, hi; } *unseen;	/* a process without GPU records
								 * listed on dev over [lo, hi] */
	size_t nunseen, capunseen;
};

/* The first of w[0..n) (sorted by pid, or by start) whose pid (or start)
 * is at least key. */
static size_t first_from(const struct gpum_work *w, size_t n, uint64_t key, bool by_pid)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if ((by_pid ? w[m].pid : w[m].start) < key)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The GPU time of an interval's work: of all of it, and of each of its
 * first SHARE_NAMES kernel names. */
struct share {
	uint64_t total;			/* ns, every record clipped to the interval */
	unsigned n;
	struct {
		const char *name;	/* the decoder's string: compared by address */
		uint64_t ns;
	} by[SHARE_NAMES];
};

/* Whether any of d's work overlaps (lo, hi]; its time there into *sh when
 * sh is not NULL. */
static bool work_in(const struct dev_work *d, uint64_t lo, uint64_t hi, struct share *sh)
{
	bool any = false;

	for (size_t k = first_from(d->w, d->n, hi, false); k-- > 0 && d->maxend[k] > lo;) {
		const struct gpum_work *w = &d->w[k];
		uint64_t ns;
		unsigned i;

		if (w->end <= lo)
			continue;
		if (!sh)
			return true;
		any = true;
		/* start < hi and end > lo: the clipped time is not negative */
		ns = (w->end < hi ? w->end : hi) - (w->start > lo ? w->start : lo);
		sh->total += ns;
		if (!w->name)
			continue;
		for (i = 0; i < sh->n && sh->by[i].name != w->name; i++)
			;
		if (i == sh->n) {
			if (sh->n == SHARE_NAMES)
				continue;
			sh->by[i].name = w->name;
			sh->by[i].ns = 0;
			sh->n++;
		}
		sh->by[i].ns += ns;
	}
	return any;
}

/* The kernel that was at least SOLE_SHARE_PCT % of the GPU time of GPU
 * dev's work in a sample's interval (lo, hi], NULL when none was. */
static const char *sole_kernel(const struct occupancy *o, uint32_t dev, uint64_t lo, uint64_t hi)
{
	struct share sh = { 0 };
	unsigned top = 0;

	if (dev >= o->ndev || !work_in(&o->dev[dev], lo, hi, &sh) || !sh.n)
		return NULL;
	for (unsigned i = 1; i < sh.n; i++)
		if (sh.by[i].ns > sh.by[top].ns)
			top = i;
	if (!sh.by[top].ns ||
	    (unsigned __int128)sh.by[top].ns * 100 < (unsigned __int128)sh.total * SOLE_SHARE_PCT)
		return NULL;
	if (work_in(&o->unplaced, lo, hi, NULL))
		return NULL;
	for (size_t i = 0; i < o->nunseen; i++)
		if (o->unseen[i].dev == dev && o->unseen[i].lo < hi && o->unseen[i].hi > lo)
			return NULL;
	return sh.by[top].name;
}

static int dev_work_init(struct dev_work *d, const struct gpum_work *w, size_t n)
{
	uint64_t m = 0;

	d->w = w;
	d->n = n;
	d->maxend = malloc((n ? n : 1) * sizeof(*d->maxend));
	if (!d->maxend)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (w[i].end > m)
			m = w[i].end;
		d->maxend[i] = m;
	}
	return 0;
}

/* The NVML GPUs process pid was listed on (a mask of the first 64; more
 * than 64 GPUs: *many), from its proc_mem_used samples above 0. */
static uint64_t listed_on(const struct gpum_acc *a, uint32_t pid)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct gpum_series *s = &a->s[i];
		bool used = false;

		if (s->pid != pid || s->device >= 64)
			continue;
		for (size_t k = 0; k < s->n && !used; k++)
			used = s->s[k].v > 0;
		if (used)
			mask |= 1ull << s->device;
	}
	return mask;
}

static int cmp_work_pid(const void *a, const void *b)
{
	const struct gpum_work *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Whether pid has GPU records (a->w sorted by pid). */
static bool has_work(const struct gpum_acc *a, uint32_t pid)
{
	size_t k = first_from(a->w, a->nw, pid, true);

	return k < a->nw && a->w[k].pid == pid;
}

/* Places every GPU record on an NVML GPU where that can be told (see the
 * top), sorts them by GPU and start, and finds the processes NVML listed
 * that have none. */
static int occupancy_build(struct gpum_acc *a, struct occupancy *o)
{
	uint32_t one = NO_DEV, ndev = 0;
	bool single = true;
	size_t i, j;

	for (i = 0; i < a->n; i++) {
		if (a->s[i].pid)
			continue;
		if (one == NO_DEV)
			one = a->s[i].device;
		else if (a->s[i].device != one)
			single = false;
		if (a->s[i].device + 1 > ndev)
			ndev = a->s[i].device + 1;
	}
	if (ndev > 4096)
		ndev = 4096;
	a->unplaced = 0;
	a->unplaced_pids = 0;
	/* per process: one CUPTI device, listed on one NVML GPU */
	cmp__sort(a->w, a->nw, sizeof(*a->w), cmp_work_pid);
	for (i = 0; i < a->nw; i = j) {
		uint32_t dev = NO_DEV;
		bool one_cupti = true;
		uint64_t mask;

		for (j = i; j < a->nw && a->w[j].pid == a->w[i].pid; j++)
			one_cupti &= a->w[j].cupti_dev == a->w[i].cupti_dev;
		if (single) {
			dev = one;
		} else {
			mask = listed_on(a, a->w[i].pid);
			if (one_cupti && mask && !(mask & (mask - 1)))
				dev = (uint32_t)__builtin_ctzll(mask);
		}
		for (size_t k = i; k < j; k++)
			a->w[k].dev = dev;
		if (dev == NO_DEV) {
			a->unplaced += j - i;
			a->unplaced_pids++;
		}
	}
	/* processes on a GPU without records: from their first listing with
	 * memory to a listing's span after their last */
	for (i = 0; i < a->n; i++) {
		const struct gpum_series *s = &a->s[i];
		uint64_t lo = 0, hi = 0;
		bool any = false;

		if (!s->pid || has_work(a, s->pid))
			continue;
		for (size_t k = 0; k < s->n; k++) {
			if (s->s[k].v <= 0)
				continue;
			if (!any)
				lo = s->s[k].ts > PROCS_SPAN_NS ? s->s[k].ts - PROCS_SPAN_NS : 0;
			hi = s->s[k].ts + PROCS_SPAN_NS;
			any = true;
		}
		if (!any)
			continue;
		if (vec__reserve(&o->unseen, &o->capunseen, o->nunseen, 1, 8))
			return -ENOMEM;
		o->unseen[o->nunseen].dev = s->device;
		o->unseen[o->nunseen].lo = lo;
		o->unseen[o->nunseen].hi = hi;
		o->nunseen++;
	}
	cmp__sort(a->w, a->nw, sizeof(*a->w), cmp_work);
	o->ndev = ndev;
	o->dev = calloc(ndev ? ndev : 1, sizeof(*o->dev));
	if (!o->dev)
		return -ENOMEM;
	for (i = 0; i < a->nw; i = j) {
		uint32_t dev = a->w[i].dev;
		int err = 0;

		for (j = i; j < a->nw && a->w[j].dev == dev; j++)
			;
		if (dev == NO_DEV)
			err = dev_work_init(&o->unplaced, a->w + i, j - i);
		else if (dev < ndev)
			err = dev_work_init(&o->dev[dev], a->w + i, j - i);
		if (err)
			return err;
	}
	for (uint32_t d = 0; d < ndev; d++)
		if (!o->dev[d].maxend && dev_work_init(&o->dev[d], NULL, 0))
			return -ENOMEM;
	if (!o->unplaced.maxend && dev_work_init(&o->unplaced, NULL, 0))
		return -ENOMEM;
	return 0;
}

static void occupancy_free(struct occupancy *o)
{
	for (uint32_t d = 0; d < o->ndev; d++)
		free(o->dev[d].maxend);
	free(o->dev);
	free(o->unplaced.maxend);
	free(o->unseen);
}

/* Whether a kernel row of metric id means anything: not a constant, not
 * a mask, not a process' or an event. */
static bool attributable(uint32_t metric)
{
	switch (metric) {
	case GT_GPUM_MEM_TOTAL:
	case GT_GPUM_THROTTLE:
	case GT_GPUM_PROC_MEM:
	case GT_GPUM_LOST:
		return false;
	default:
		return gt_gpu_metric__name(metric) != NULL;
	}
}

static struct gpum_kern *kern_of(struct gpum_kern **v, size_t *n, size_t *cap, const char *name,
				 uint32_t device, uint32_t metric)
{
	for (size_t i = *n; i-- > 0;)
		if ((*v)[i].name == name && (*v)[i].device == device && (*v)[i].metric == metric)
			return &(*v)[i];
	if (vec__reserve(v, cap, *n, 1, 16))
		return NULL;
	(*v)[*n] = (struct gpum_kern){ .name = name, .device = device, .metric = metric };
	return &(*v)[(*n)++];
}

/* The kernel rows: samples in [lo, hi] attributed by sole occupancy (a
 * kernel SOLE_SHARE_PCT % of the interval's GPU time or more). */
static int kernel_rows(struct rows *x, struct gpum_acc *a, uint64_t lo, uint64_t hi)
{
	struct occupancy o = { 0 };
	struct gpum_kern *k = NULL;
	size_t nk = 0, capk = 0;
	int err;

	if (!a->nw)
		return 0;
	err = occupancy_build(a, &o);
	for (size_t i = 0; !err && i < a->n; i++) {
		const struct gpum_series *s = &a->s[i];
		bool gpm = s->metric >= GT_GPUM_SM_ACTIVE;

		if (s->pid || !attributable(s->metric))
			continue;
		for (size_t j = 1; !err && j < s->n; j++) {
			uint64_t t = s->s[j].ts, from = s->s[j - 1].ts;
			const char *name;
			struct gpum_kern *kk;

			if (t < lo || t > hi)
				continue;
			if (!gpm && t - from < BASIC_SPAN_NS)
				from = t > BASIC_SPAN_NS ? t - BASIC_SPAN_NS : 0;
			name = sole_kernel(&o, s->device, from, t);
			if (!name)
				continue;
			kk = kern_of(&k, &nk, &capk, name, s->device, s->metric);
			if (!kk || vec__reserve(&kk->v, &kk->cap, kk->n, 1, 16))
				err = -ENOMEM;
			else
				kk->v[kk->n++] = s->s[j].v;
		}
	}
	if (!err && nk)
		cmp__sort(k, nk, sizeof(*k), cmp_kern);
	for (size_t i = 0; !err && i < nk; i++)
		if (k[i].n >= SOLE_MIN)
			err = put_row(x, k[i].device, "kernel", k[i].name, k[i].metric, k[i].v, k[i].n,
				      attr_sole);
	for (size_t i = 0; i < nk; i++)
		free(k[i].v);
	free(k);
	occupancy_free(&o);
	return err;
}

int stats_gpum__sum(struct stats_run *run, struct stats_report *r)
{
	struct stats_acc *st = run->s;
	struct gpum_acc *a = st->gpum;
	struct rows x = { .st = st, .r = r };
	uint64_t lo = 0, hi = UINT64_MAX;
	char num[16];
	int err = 0;

	if (!a || !a->n)
		return 0;
	cmp__sort(a->s, a->n, sizeof(*a->s), cmp_series);
	a->last = a->n;
	for (size_t i = 0; i < a->n; i++)
		cmp__sort(a->s[i].s, a->s[i].n, sizeof(*a->s[i].s), cmp_sample);
	if (run->scope) {
		const struct capspan *c = run->scope;

		lo = c->start_ts;
		hi = c->end_ts;
		snprintf(num, sizeof(num), "%u", c->number);
		err = scope_rows(&x, a, false, lo, hi, c->kind == CAPSPAN_RANGE ? "range" : "window",
				 stats_acc__strdup(st, num), "whole GPU, by time");
	} else {
		err = scope_rows(&x, a, false, 0, UINT64_MAX, "run", NULL, "whole GPU");
		for (size_t i = 0; !err && run->cap && i < capture_spans__count(run->cap); i++) {
			const struct capspan *c = capture_spans__at(run->cap, i);

			snprintf(num, sizeof(num), "%u", c->number);
			err = scope_rows(&x, a, false, c->start_ts, c->end_ts,
					 c->kind == CAPSPAN_RANGE ? "range" : "window", stats_acc__strdup(st, num),
					 "whole GPU, by time");
		}
	}
	if (!err)
		err = kernel_rows(&x, a, lo, hi);
	if (!err)
		err = scope_rows(&x, a, true, lo, hi, "process", NULL, "per process");
	free(x.v);
	return err;
}

const char *const *stats_gpum__notes(struct stats_run *run)
{
	struct gpum_acc *a = run->s->gpum;
	size_t n = 0;

	if (!a)
		return NULL;
	a->note_v[n++] = note_scopes;
	if (a->nw)
		a->note_v[n++] = note_sole;
	else if (run->s->gpu_records && !run->s->gpum_work)
		a->note_v[n++] = "no kernel rows: the trace's header does not say it was recorded with "
				 "--gpu-metrics (no gpu_metrics= option), so its GPU records were not kept to "
				 "attribute samples to kernels";
	else if (a->n)
		a->note_v[n++] = "no kernel rows: the trace has no GPU records (record with --cupti, or "
				 "merge the agent's spool files) to tell which kernel ran when";
	if (a->unplaced) {
		snprintf(a->note[0], sizeof(a->note[0]),
			 "%llu GPU records of %u process(es) could not be placed on an NVML GPU (several GPUs, "
			 "and the process used more than one CUDA device or was not listed by NVML on "
			 "exactly one): no sample they overlap is attributed to a kernel",
			 (unsigned long long)a->unplaced, a->unplaced_pids);
		a->note_v[n++] = a->note[0];
	}
	a->note_v[n] = NULL;
	return a->note_v;
}

void stats_gpum__free(struct stats_acc *st)
{
	struct gpum_acc *a = st->gpum;

	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->s[i].s);
	free(a->s);
	free(a->w);
	free(a);
	st->gpum = NULL;
}
