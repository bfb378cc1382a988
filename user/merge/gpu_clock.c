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
 *
 * A GPU busy most of the time (another job shares it, a deep queue) starts
 * few kernels at once: fewer than one in a hundred in a stretch, or none in
 * most stretches.  The floors' median line then runs through busy delays
 * and misses the rest.  Where it is not clear, the floors are taken again
 * as each stretch's second-least delay (one odd link cannot set it), and
 * where their median line is not clear either, the line sought is their
 * lower envelope's (busy time only ever raises a floor): of the edges of the
 * floors' lower convex hull, the one with the most floors within
 * MAX_RESID_NS above it, fitted again on those alone; taken where those are
 * enough (MIN_SEGS) and lie across half the recording at least (so that
 * they set a slope), and not otherwise.
 *
 * A GPU time-sliced with another job starts a few kernels a stretch at once,
 * and "at once" itself varies by microseconds with the context switch each
 * met: no line holds the floors within MAX_RESID_NS, and the envelope's edge
 * tilts with whichever stretches happened to switch quickly.  The line is
 * then the floors' low quantile (the line through two of them with the
 * fewest weighted misses: SCATTER_Q of the floors below it, busy ones far
 * above it changing nothing), moved down onto the lowest floor near it, and
 * taken only where the records need it: where that line falls below zero,
 * quick starts before their launches.  Scattered floors set a slope less
 * exactly than clear ones, but a few microseconds' error beats losing the
 * kernels; with the line above zero the records are left as they are.
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
#define MAX_SCATTER_NS	8000.0		/* scattered floors: the farthest below the low
					 * quantile's line one is taken as its floor */
#define SCATTER_Q	0.1

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

/* Theil-Sen over the floors (ft, ff)[0, n) that keep[] holds (all when
 * NULL): slope, intercept and the kept floors' median distance from the
 * line into *out. sl: room for n * (n - 1) / 2 + n. False: fewer than two
 * times. */
static bool theil_sen(const double *ft, const double *ff, const bool *keep, size_t n, double *sl,
		      struct merge_clock_fit *out)
{
	size_t ns = 0, nk = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if ((!keep || (keep[i] && keep[j])) && ft[j] > ft[i])
				sl[ns++] = (ff[j] - ff[i]) / (ft[j] - ft[i]);
	if (!ns)
		return false;
	out->slope = median(sl, ns);
	for (size_t i = 0; i < n; i++)
		if (!keep || keep[i])
			sl[nk++] = ff[i] - out->slope * ft[i];
	out->floor0 = median(sl, nk);
	nk = 0;
	for (size_t i = 0; i < n; i++)
		if (!keep || keep[i])
			sl[nk++] = fabs(ff[i] - out->floor0 - out->slope * ft[i]);
	out->resid_ns = median(sl, nk);
	return true;
}

/* The lower envelope's line (see above) into *out, true where it is clear.
 * The floors come in time order. hull, keep: room for n each. */
static bool envelope(const double *ft, const double *ff, size_t n, size_t *hull, bool *keep, double *sl,
		     struct merge_clock_fit *out)
{
	size_t nh = 0, best = 0, ba = 0, nk = 0;
	double bm = 0, lo = 0, hi = 0;

	/* the lower hull, left to right (Andrew's monotone chain) */
	for (size_t i = 0; i < n; i++) {
		while (nh >= 2) {
			size_t a = hull[nh - 2], b = hull[nh - 1];
			double cross = (ft[b] - ft[a]) * (ff[i] - ff[a]) - (ff[b] - ff[a]) * (ft[i] - ft[a]);

			if (cross > 0)
				break;
			nh--;
		}
		hull[nh++] = i;
	}
	for (size_t e = 0; e + 1 < nh; e++) {
		size_t a = hull[e], b = hull[e + 1], in = 0;
		double m;

		if (ft[b] <= ft[a])
			continue;
		m = (ff[b] - ff[a]) / (ft[b] - ft[a]);
		for (size_t i = 0; i < n; i++)
			in += ff[i] - (ff[a] + m * (ft[i] - ft[a])) <= MAX_RESID_NS;
		if (in > best) {
			best = in;
			ba = a;
			bm = m;
		}
	}
	if (best < MIN_SEGS)
		return false;
	for (size_t i = 0; i < n; i++) {
		keep[i] = ff[i] - (ff[ba] + bm * (ft[i] - ft[ba])) <= MAX_RESID_NS;
		if (!keep[i])
			continue;
		if (!nk++)
			lo = ft[i];
		hi = ft[i];
	}
	if (hi - lo < (ft[n - 1] - ft[0]) / 2)
		return false;
	return theil_sen(ft, ff, keep, n, sl, out) && out->resid_ns <= MAX_RESID_NS;
}

/* The floors' SCATTER_Q quantile line (see above) into *out's slope and
 * floor0 (moved down onto the lowest floor within MAX_SCATTER_NS below it).
 * The line with the least check loss passes through two of the floors: each
 * pair is tried (n is at most SEG_MAX). False: fewer than two times. */
static bool quantile_line(const double *ft, const double *ff, size_t n, struct merge_clock_fit *out)
{
	double best = INFINITY, bm = 0, bc = 0, lo = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double m, c, loss = 0;

			if (ft[j] <= ft[i])
				continue;
			m = (ff[j] - ff[i]) / (ft[j] - ft[i]);
			c = ff[i] - m * ft[i];
			for (size_t k = 0; k < n && loss < best; k++) {
				double r = ff[k] - c - m * ft[k];

				loss += r >= 0 ? SCATTER_Q * r : (SCATTER_Q - 1) * r;
			}
			if (loss < best) {
				best = loss;
				bm = m;
				bc = c;
			}
		}
	if (best == INFINITY)
		return false;
	for (size_t k = 0; k < n; k++) {
		double r = ff[k] - bc - bm * ft[k];

		if (r < lo && r >= -MAX_SCATTER_NS)
			lo = r;
	}
	out->slope = bm;
	out->floor0 = bc + lo;
	return true;
}

/* The stretches' floors of p[0, np) (sorted by time), their number
 * returned: into (ft, ff) each stretch's 1st percentile, into (ft2, ff2)
 * its second-least delay (a GPU whose queue is seldom empty starts a few
 * kernels a stretch at once, fewer than one in a hundred); each at the time
 * of the launch that has it (not the stretch's middle: the drift within a
 * stretch would blur the line). seg: room for np. */
static size_t floors(const struct pair *p, size_t np, int64_t len, struct pair *seg, int64_t t0, double *ft,
		     double *ff, double *ft2, double *ff2)
{
	size_t nf = 0;

	for (size_t i = 0; i < np;) {
		int64_t end = p[i].t + len;
		size_t j = i, k = 0;

		while (j < np && p[j].t < end)
			seg[k++] = p[j++];
		if (k >= SEG_PAIRS) {
			cmp__sort(seg, k, sizeof(*seg), delay_cmp);
			ff[nf] = (double)seg[k / 100].d;
			ft[nf] = (double)(seg[k / 100].t - t0);
			ff2[nf] = (double)seg[1].d;
			ft2[nf++] = (double)(seg[1].t - t0);
		}
		i = j;
	}
	return nf;
}

int merge__clock_fit(const struct merge_call *calls, const struct merge_gpu *gpu, const uint32_t *idx, size_t n,
		     struct merge_clock_fit *out)
{
	struct pair *p = NULL;
	double *ft = NULL, *ff = NULL, *ft2 = NULL, *ff2 = NULL, *sl = NULL;
	struct pair *seg = NULL;
	size_t *hull = NULL;
	bool *keep = NULL, below;
	int64_t span, len;
	size_t np = 0, nf;
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
	ft2 = malloc((np / SEG_PAIRS + 1) * sizeof(*ft2));
	ff2 = malloc((np / SEG_PAIRS + 1) * sizeof(*ff2));
	seg = malloc(np * sizeof(*seg));
	if (!ft || !ff || !ft2 || !ff2 || !seg)
		goto out;
	out->t0 = p[0].t;
	out->span_ns = span;
	nf = floors(p, np, len, seg, out->t0, ft, ff, ft2, ff2);
	out->segments = nf;
	if (nf < MIN_SEGS) {
		err = 0;
		goto out;
	}
	sl = malloc((nf * (nf - 1) / 2 + nf) * sizeof(*sl));
	hull = malloc(nf * sizeof(*hull));
	keep = malloc(nf * sizeof(*keep));
	if (!sl || !hull || !keep)
		goto out;
	if (!theil_sen(ft, ff, NULL, nf, sl, out)) {
		err = 0;
		goto out;
	}
	if (out->resid_ns > MAX_RESID_NS) {
		/* each stretch's second-least delay, then their lower
		 * envelope */
		struct merge_clock_fit e = *out;

		if (theil_sen(ft2, ff2, NULL, nf, sl, &e) &&
		    (e.resid_ns <= MAX_RESID_NS || envelope(ft2, ff2, nf, hull, keep, sl, &e))) {
			*out = e;
			out->low = true;
		} else if (quantile_line(ft2, ff2, nf, out)) {
			out->low = out->scattered = true;
		}
	}
	out->drift_ns = out->slope * (double)span;
	/* quick starts before their launches somewhere along the line */
	below = out->floor0 + fmin(out->drift_ns, 0) < 0;
	out->fixed = out->scattered ? below
				    : out->resid_ns <= MAX_RESID_NS && (fabs(out->drift_ns) >= MIN_DRIFT_NS || below);
	err = 0;
out:
	free(p);
	free(ft);
	free(ff);
	free(ft2);
	free(ff2);
	free(seg);
	free(sl);
	free(hull);
	free(keep);
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
