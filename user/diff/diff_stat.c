// SPDX-License-Identifier: MIT
/* The statistics of `gtrace-bpf diff` (see diff_stat.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diff/diff_stat.h"
#include "stats/stats_acc.h"
#include "lib/hash.h"
#include "lib/cmp.h"

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

/* ---- the same bootstrap for many iterations ------------------------------
 *
 * Drawing n iterations per resample costs O(n): with 290,000 iterations (a
 * real GPU trace of tiny kernels) the 4 x 2000 resamples took 73 s. Above
 * FAST_MIN iterations each resample's median is drawn from its exact
 * distribution instead: a resample is n draws sorted[floor(n U_i)] of
 * uniform U_i, which is monotone in U_i, so its k-th smallest value is
 * sorted[floor(n U_(k))] with U_(k) the k-th smallest of n uniforms,
 * distributed Beta(k, n + 1 - k); the next one up is the smallest of the
 * other n - k uniforms above it. Same bootstrap distribution, O(1) a
 * resample after one sort. */
#define FAST_MIN 2048

static inline double rng_unit(uint64_t *state)
{
	/* (0, 1): 53 random bits, never 0 */
	return ((double)(rng_next(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal (Marsaglia's polar method). */
static double rng_normal(uint64_t *state)
{
	double u, v, q;

	do {
		u = 2 * rng_unit(state) - 1;
		v = 2 * rng_unit(state) - 1;
		q = u * u + v * v;
	} while (q >= 1 || q == 0);
	return u * sqrt(-2 * log(q) / q);
}

/* Gamma(a, 1) for a >= 1 (Marsaglia and Tsang's method). */
static double rng_gamma(uint64_t *state, double a)
{
	double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);

	for (;;) {
		double x = rng_normal(state), v = 1 + c * x, u;

		if (v <= 0)
			continue;
		v = v * v * v;
		u = rng_unit(state);
		if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
			return d * v;
	}
}

static inline uint64_t at_unit(const uint64_t *sorted, size_t n, double u)
{
	size_t i = (size_t)(u * (double)n);

	return sorted[i < n ? i : n - 1];
}

/* The median of a resample of sorted[0..n), n >= 2, as diff_stat__median
 * takes it (the mean of the two middle values when n is even). */
static double fast_median(const uint64_t *sorted, size_t n, uint64_t *state)
{
	size_t k = n % 2 ? (n + 1) / 2 : n / 2;	/* 1-based */
	double g1 = rng_gamma(state, (double)k), g2 = rng_gamma(state, (double)(n + 1 - k));
	double u = g1 / (g1 + g2), u2;

	if (n % 2)
		return (double)at_unit(sorted, n, u);
	u2 = u + (1 - u) * (1 - pow(rng_unit(state), 1.0 / (double)(n - k)));
	return ((double)at_unit(sorted, n, u) + (double)at_unit(sorted, n, u2)) / 2.0;
}

/* sorted copy of v[0..n) when n >= FAST_MIN (*out NULL below it). An LSD
 * radix sort of 16-bit digits, skipping the digits all values share: qsort
 * of 290,000 iteration times, four of them a diff, was a tenth of its time. */
static int sorted_copy(const uint64_t *v, size_t n, uint64_t **out)
{
	uint64_t *a, *b, *t, all_or = 0, all_and = ~0ull;
	uint32_t *count;

	*out = NULL;
	if (n < FAST_MIN)
		return 0;
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	count = malloc(65536 * sizeof(*count));
	if (!a || !b || !count) {
		free(a);
		free(b);
		free(count);
		return -ENOMEM;
	}
	memcpy(a, v, n * sizeof(*a));
	for (size_t i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	for (unsigned shift = 0; shift < 64; shift += 16) {
		uint32_t sum = 0;

		if (!(((all_or ^ all_and) >> shift) & 0xffff))
			continue;	/* every value has this digit */
		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(a[i] >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			uint32_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 0xffff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	free(b);
	free(count);
	*out = a;
	return 0;
}

static double draw_median(const uint64_t *v, const uint64_t *sorted, size_t n, uint64_t *scratch,
			  uint64_t *state)
{
	return sorted ? fast_median(sorted, n, state) : resampled_median(v, n, scratch, state);
}

int diff_stat__ratio(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint32_t resamples,
		     uint64_t seed, struct diff_ratio *r)
{
	uint64_t *scratch, *sa = NULL, *sb = NULL, state = seed;
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
	if (!ratios || sorted_copy(a, na, &sa) || sorted_copy(b, nb, &sb)) {
		free(sa);
		free(ratios);
		free(scratch);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < resamples; i++) {
		double mb = draw_median(a, sa, na, scratch, &state);
		double mo = draw_median(b, sb, nb, scratch, &state);

		/* a resample of zeros has no ratio: left out (counted in k) */
		if (mo > 0 && mb > 0)
			ratios[k++] = mb / mo;
	}
	free(sa);
	free(sb);
	free(scratch);
	if (k) {
		cmp__sort(ratios, k, sizeof(*ratios), cmp__double);
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
	/* Newton from above; libm is not linked (see stats_dvec.c) */
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
