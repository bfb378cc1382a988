/* SPDX-License-Identifier: MIT */
/*
 * The statistics of `gtrace-bpf diff`, pure and small enough to test alone
 * (the medians of names come from lib/loghist.h):
 *   - moments (count, mean, sum of squared deviations, Welford's update) of
 *     durations per call and of times per iteration;
 *   - the percentile bootstrap interval of a ratio of medians;
 *   - the classification of a row as added, removed, faster, slower or
 *     unchanged.
 */
#ifndef GTRACE_DIFF_STAT_H
#define GTRACE_DIFF_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "diff/diff.h"

/* ---- moments ------------------------------------------------------------ */

struct diff_moments {
	uint64_t n;		/* values */
	double mean;		/* their mean */
	double m2;		/* sum of squared deviations from the mean */
};

static inline void diff_moments__add(struct diff_moments *m, double x)
{
	double d = x - m->mean;

	m->n++;
	m->mean += d / (double)m->n;
	m->m2 += d * (x - m->mean);
}

/* m as the moments of n values, the ones added and n - m->n zeros (the
 * iterations in which a name did not appear); n >= m->n. */
void diff_moments__pad(struct diff_moments *m, uint64_t n);
/* Sample variance (n - 1), 0 for fewer than two values. */
double diff_moments__var(const struct diff_moments *m);

/* ---- bootstrap ---------------------------------------------------------- */

/* The median of v[0..n) (exact; the mean of the two middle values for an
 * even n), v reordered; 0 when n is 0. */
double diff_stat__median(uint64_t *v, size_t n);

/* r->point = median(a) / median(b), and a percentile bootstrap interval:
 * resamples times, a and b each resampled with replacement (their own
 * sizes), the ratio of the medians; lo and hi are the ratios at ranks
 * ceil(0.025 R) and ceil(0.975 R) (1-based) of the sorted R ratios.  The
 * generator is splitmix64 from seed.  r->valid is false when a side is
 * empty or a median is 0 (no ratio); r->interval when each side has two
 * values or more.  Returns 0 or -ENOMEM. */
int diff_stat__ratio(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint32_t resamples,
		     uint64_t seed, struct diff_ratio *r);

/* ---- classification ----------------------------------------------------- */

/* One run's side of a row as the classification sees it. */
struct diff_obs {
	uint64_t count;		/* occurrences (0: absent from that run) */
	double mean;		/* the compared value per unit (iteration, or the run) */
	double var;		/* its variance across units (sample), 0 if unknown */
	uint64_t units;		/* units the mean is over (iterations, or calls in a
				 * whole-run diff: see diff__compute) */
};

/* The class of a row: added (only in o), removed (only in b), else from the
 * difference d = o.mean - b.mean against the noise
 * DIFF_Z * sqrt(b.var / b.units + o.var / o.units): unchanged when
 * |d| <= noise or |d| <= DIFF_MIN_REL * b.mean, else slower (d > 0) or
 * faster.  *noise gets the larger of the two allowances. */
enum diff_class diff_stat__classify(const struct diff_obs *b, const struct diff_obs *o,
				    double *noise);

#endif
