// SPDX-License-Identifier: MIT
/*
 * The GPU clock's drift against the host's, per process (merge/link.h:
 * merge__clock_fit, merge__clock_apply).
 *
 * CUPTI converts the GPU's timestamps to the host clock it was given (the
 * agent's CLOCK_MONOTONIC) from a calibration at its start.  The host
 * clock is steered (NTP slews CLOCK_MONOTONIC's rate by some ppm), the
 * GPU's timer is not: the GPU side drifts away from the calls, on the H200
 * 7 us a second on a CuPy job attached late, so that after a third of a
 * second its kernels began before their launches, beyond the linker's
 * 2 us, and linking by order broke from there on.
 *
 * The drift is seen on the kernels that start as soon as they are
 * launched: the least delay from a launch's entry to its kernel's start,
 * the launch latency, is the same all along, so that delay's floor over
 * time (a low percentile of each stretch) follows the drift.  A line is
 * fitted to the floors (Theil-Sen: the median of the pairwise slopes, then
 * the median intercept; a stretch where the GPU was busy throughout, its
 * floor high, is an outlier it ignores) and taken as the drift only where
 * it is clear: enough stretches, the floors within MAX_RESID_NS of the
 * line, and at least MIN_DRIFT_NS of it over the recording.  The GPU
 * records are then moved back onto the line's value at the start (and
 * later, when even the start's floor lay before the launches), and flagged.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "merge/link.h"
#include "lib/cmp.h"

#define SEG_MIN_NS	20000000ll	/* a stretch, at least (see merge__clock_fit) */
#define SEG_MAX		200
#define SEG_PAIRS	16		/* launches with a kernel a stretch needs */
#define MIN_SEGS	5
#define MAX_RESID_NS	500.0		/* median distance of the floors from the line */
#define MIN_DRIFT_NS	1000.0		/* drift over the recording worth taking out */

struct pair {
	int64_t t;	/* the launch's entry */
	int64_t d;	/* its kernel's start - the entry */
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	CMP_BY(x->t, y->t);
	CMP_BY(x->d, y->d);
	return 0;
}

static int delay_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	CMP_BY(x->d, y->d);
	CMP_BY(x->t, y->t);
	return 0;
}

static double median(double *v, size_t n)
{
	cmp__sort(v, n, sizeof(*v), cmp__double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int merge__clock_fit(const struct merge_call *calls, const struct merge_gpu *gpu, const uint32_t *idx, size_t n,
		     struct merge_clock_fit *out)
{
	struct pair *p = NULL;
	double *ft = NULL, *ff = NULL, *sl = NULL;
	struct pair *seg = NULL;
	int64_t span, len;
	size_t np = 0, nf = 0, ns = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	out->pid = gpu[idx[0]].pid;
	p = malloc(n * sizeof(*p));
	if (!p)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct merge_gpu *g = &gpu[idx[i]];
		const struct merge_call *c;

		if (g->type != GT_REC_GPU_KERNEL || g->call == MERGE_NO_CALL)
			continue;
		c = &calls[g->call];
		/* one kernel, one launch: a graph's kernels wait for each other */
		if (c->kind != MERGE_CALL_LAUNCH || c->nlinked != 1)
			continue;
		p[np++] = (struct pair){ .t = (int64_t)c->entry, .d = (int64_t)g->ts - (int64_t)c->entry };
	}
	out->pairs = np;
	if (np < SEG_PAIRS * MIN_SEGS) {
		err = 0;
		goto out;
	}
	cmp__sort(p, np, sizeof(*p), pair_cmp);
	span = p[np - 1].t - p[0].t;
	/* 20 ms, or longer: at most SEG_MAX stretches, 2 * SEG_PAIRS launches
	 * in one on average */
	len = span / SEG_MAX > SEG_MIN_NS ? span / SEG_MAX : SEG_MIN_NS;
	if ((double)span * 2 * SEG_PAIRS / (double)np > (double)len)
		len = (int64_t)((double)span * 2 * SEG_PAIRS / (double)np);
	ft = malloc((np / SEG_PAIRS + 1) * sizeof(*ft));
	ff = malloc((np / SEG_PAIRS + 1) * sizeof(*ff));
	seg = malloc(np * sizeof(*seg));
	if (!ft || !ff || !seg)
		goto out;
	out->t0 = p[0].t;
	out->span_ns = span;
	for (size_t i = 0; i < np;) {
		int64_t end = p[i].t + len;
		size_t j = i, k = 0;

		while (j < np && p[j].t < end)
			seg[k++] = p[j++];
		if (k >= SEG_PAIRS) {
			cmp__sort(seg, k, sizeof(*seg), delay_cmp);
			/* the stretch's floor, its 1st percentile, at the time of
			 * the launch that has it (not the stretch's middle: the
			 * drift within a stretch would blur the line) */
			ff[nf] = (double)seg[k / 100].d;
			ft[nf++] = (double)(seg[k / 100].t - out->t0);
		}
		i = j;
	}
	out->segments = nf;
	if (nf < MIN_SEGS) {
		err = 0;
		goto out;
	}
	sl = malloc((nf * (nf - 1) / 2 + nf) * sizeof(*sl));
	if (!sl)
		goto out;
	for (size_t i = 0; i < nf; i++)
		for (size_t j = i + 1; j < nf; j++)
			if (ft[j] > ft[i])
				sl[ns++] = (ff[j] - ff[i]) / (ft[j] - ft[i]);
	if (!ns) {
		err = 0;
		goto out;
	}
	out->slope = median(sl, ns);
	for (size_t i = 0; i < nf; i++)
		sl[i] = ff[i] - out->slope * ft[i];
	out->floor0 = median(sl, nf);
	for (size_t i = 0; i < nf; i++)
		sl[i] = fabs(ff[i] - out->floor0 - out->slope * ft[i]);
	out->resid_ns = median(sl, nf);
	out->drift_ns = out->slope * (double)span;
	out->fixed = out->resid_ns <= MAX_RESID_NS &&
		     (fabs(out->drift_ns) >= MIN_DRIFT_NS || out->floor0 + fmin(out->drift_ns, 0) < 0);
	err = 0;
out:
	free(p);
	free(ft);
	free(ff);
	free(seg);
	free(sl);
	return err;
}

/* What a record starting at GPU time ts moves by: the drift since the
 * start taken out, and the start's floor raised to 0 when it lay before
 * the launches. */
static int64_t shift_at(const struct merge_clock_fit *f, uint64_t ts)
{
	double t = (double)((int64_t)ts - f->t0);

	return (int64_t)llround(-f->slope * t + (f->floor0 < 0 ? -f->floor0 : 0));
}

void merge__clock_apply(struct merge_gpu *gpu, const uint32_t *idx, size_t n, struct merge_clock_fit *f)
{
	if (!f->fixed)
		return;
	for (size_t i = 0; i < n; i++) {
		struct merge_gpu *g = &gpu[idx[i]];
		int64_t s = shift_at(f, g->ts);

		if (llabs(s) > llabs(f->max_shift_ns))
			f->max_shift_ns = s;
		g->ts = (uint64_t)((int64_t)g->ts + s);
		g->flags |= GT_GPU_CLOCK_FIXED;
	}
}
