// SPDX-License-Identifier: MIT
/* The statistics of `gtrace-bpf diff` (see diff_stat.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/diff_stat.h"
#include "analysis/stats_acc.h"
#include "lib/hash.h"

/* ---- moments ------------------------------------------------------------ */

void diff_moments__pad(struct diff_moments *m, uint64_t n)
{
	uint64_t z;
	double d;

	if (n <= m->n)
		return;
	z = n - m->n;
	/* Chan's combination with a group of z zeros (mean 0, m2 0) */
	d = -m->mean;
	m->m2 += d * d * (double)m->n * (double)z / (double)n;
	m->mean = m->mean * (double)m->n / (double)n;
	m->n = n;
}

double diff_moments__var(const struct diff_moments *m)
{
	return m->n > 1 ? m->m2 / (double)(m->n - 1) : 0.0;
}

/* ---- bootstrap ---------------------------------------------------------- */

double diff_stat__median(uint64_t *v, size_t n)
{
	struct dvec d = { .v = v, .n = n, .cap = n };
	struct dvec_summary sm;
	uint64_t total = 0;

	/* the mean is computed too, from the total: any value serves, it is not used */
	for (size_t i = 0; i < n; i++)
		total += v[i];
	dvec__summarize(&d, total, &sm);
	return sm.median;
}

/* splitmix64: a full-period 64-bit generator, one add and a mix per draw. */
static inline uint64_t rng_next(uint64_t *state)
{
	*state += HASH_GOLDEN;
	return hash__mix64(*state);
}

/* A uniform index below n (n < 2^32): the high half of a 32 x 32 product,
 * whose bias (n / 2^32) is far below what the interval resolves. */
static inline size_t rng_below(uint64_t *state, size_t n)
{
	return (size_t)(((rng_next(state) >> 32) * (uint64_t)n) >> 32);
}

static double resampled_median(const uint64_t *v, size_t n, uint64_t *scratch, uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = v[rng_below(state, n)];
	return diff_stat__median(scratch, n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int diff_stat__ratio(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint32_t resamples,
		     uint64_t seed, struct diff_ratio *r)
{
	uint64_t *scratch, state = seed;
	double *ratios;
	size_t lo, hi, k = 0;

	*r = (struct diff_ratio){ 0 };
	if (!na || !nb)
		return 0;
	scratch = malloc((na > nb ? na : nb) * sizeof(*scratch));
	if (!scratch)
		return -ENOMEM;
	memcpy(scratch, a, na * sizeof(*a));
	r->base_ns = diff_stat__median(scratch, na);
	memcpy(scratch, b, nb * sizeof(*b));
	r->opt_ns = diff_stat__median(scratch, nb);
	r->valid = r->base_ns > 0 && r->opt_ns > 0;
	if (!r->valid) {
		free(scratch);
		return 0;
	}
	r->point = r->lo = r->hi = r->base_ns / r->opt_ns;
	if (na < 2 || nb < 2 || !resamples) {
		free(scratch);
		return 0;
	}
	ratios = malloc(resamples * sizeof(*ratios));
	if (!ratios) {
		free(scratch);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < resamples; i++) {
		double mb = resampled_median(a, na, scratch, &state);
		double mo = resampled_median(b, nb, scratch, &state);

		/* a resample of zeros has no ratio: left out (counted in k) */
		if (mo > 0 && mb > 0)
			ratios[k++] = mb / mo;
	}
	free(scratch);
	if (k) {
		qsort(ratios, k, sizeof(*ratios), cmp_double);
		/* ranks ceil(0.025 k) and ceil(0.975 k), 1-based */
		lo = (k * 25 + 999) / 1000;
		hi = (k * 975 + 999) / 1000;
		r->lo = ratios[(lo ? lo : 1) - 1];
		r->hi = ratios[(hi ? hi : 1) - 1];
		r->interval = true;
	}
	free(ratios);
	return 0;
}

/* ---- classification ----------------------------------------------------- */

static double sqrt_nonneg(double x)
{
	/* Newton from above; libm is not linked (see stats_acc.c) */
	double g = x > 1 ? x : 1;

	if (!(x > 0))
		return 0;
	for (int i = 0; i < 200; i++) {
		double n = 0.5 * (g + x / g);

		if (n >= g)
			break;
		g = n;
	}
	return g;
}

enum diff_class diff_stat__classify(const struct diff_obs *b, const struct diff_obs *o,
				    double *noise)
{
	double d, se, z, rel;

	*noise = 0;
	if (!b->count && !o->count)
		return DIFF_UNCHANGED;
	if (!b->count)
		return DIFF_ADDED;
	if (!o->count)
		return DIFF_REMOVED;
	d = o->mean - b->mean;
	se = (b->units ? b->var / (double)b->units : 0) + (o->units ? o->var / (double)o->units : 0);
	z = DIFF_Z * sqrt_nonneg(se);
	rel = DIFF_MIN_REL * (b->mean > 0 ? b->mean : -b->mean);
	*noise = z > rel ? z : rel;
	if (d <= *noise && -d <= *noise)
		return DIFF_UNCHANGED;
	return d > 0 ? DIFF_SLOWER : DIFF_FASTER;
}
