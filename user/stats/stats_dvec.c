// SPDX-License-Identifier: MIT
/*
 * The summaries of a vector of values for `gtrace-bpf stats` (stats_acc.h):
 * mean, exact median and sample deviation, and a percentile by nearest rank,
 * the middle found by selection (quickselect) rather than by sorting.
 */
#include <stddef.h>
#include <stdint.h>
#include "stats/stats_acc.h"
#include "lib/cmp.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Reorders v[0..n) so that v[k] is the k-th smallest, with nothing larger
 * before it and nothing smaller after (quickselect, median-of-three pivot,
 * Hoare partition: linear on average, also with many equal values).  Past a
 * budget of rounds it sorts what is left, so no input makes it quadratic. */
static void select_kth(uint64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;
	int budget = 16;

	for (size_t m = n; m; m >>= 1)
		budget += 2;
	while (hi > lo) {
		ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		uint64_t a = v[lo], b = v[mid], c = v[hi], pivot, t;

		if (budget-- == 0) {
			cmp__sort(v + lo, (size_t)(hi - lo + 1), sizeof(*v), cmp_u64);
			return;
		}
		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		/* now v[lo..j] <= pivot, v[i..hi] >= pivot, and v[j+1..i-1] == pivot */
		if ((ptrdiff_t)k <= j)
			hi = j;
		else if ((ptrdiff_t)k >= i)
			lo = i;
		else
			return;
	}
}

/* The C library's sqrt is in libm, which the build does not link: Newton's
 * iteration from a guess made by halving the exponent reaches full double
 * precision in a few steps, and is run once per report row. */
static double sqrt_pos(double x)
{
	union { double d; uint64_t u; } g = { .d = x };

	if (!(x > 0))
		return 0;
	g.u = (g.u >> 1) + (1023ull << 51);
	for (int i = 0; i < 8; i++)
		g.d = 0.5 * (g.d + x / g.d);
	return g.d;
}

void dvec__summarize(struct dvec *d, uint64_t total, struct dvec_summary *out)
{
	size_t n = d->n, k = n / 2;
	double mean, ss = 0;

	*out = (struct dvec_summary){ 0 };
	if (!n)
		return;
	mean = (double)total / (double)n;
	for (size_t i = 0; i < n; i++) {
		double x = (double)d->v[i] - mean;

		ss += x * x;
	}
	select_kth(d->v, n, k);
	if (n % 2) {
		out->median = (double)d->v[k];
	} else {
		/* the lower middle is the largest of the half before k */
		uint64_t lo = d->v[0];

		for (size_t i = 1; i < k; i++)
			if (d->v[i] > lo)
				lo = d->v[i];
		out->median = ((double)lo + (double)d->v[k]) / 2.0;
	}
	out->mean = mean;
	out->stddev = n > 1 ? sqrt_pos(ss / (double)(n - 1)) : 0.0;
}

uint64_t dvec__percentile(struct dvec *d, unsigned p)
{
	/* rank ceil(p n / 100), 1-based */
	size_t rank = (size_t)(((uint64_t)p * d->n + 99) / 100);

	if (!d->n)
		return 0;
	if (rank < 1)
		rank = 1;
	if (rank > d->n)
		rank = d->n;
	select_kth(d->v, d->n, rank - 1);
	return d->v[rank - 1];
}
