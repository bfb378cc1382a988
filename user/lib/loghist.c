// SPDX-License-Identifier: MIT
/* Log-linear histograms (see loghist.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/loghist.h"

int loghist__add(struct loghist *h, uint64_t v)
{
	unsigned b = loghist__bucket(v);

	if (!h->cnt) {
		h->cnt = calloc(2 * LOGHIST_BUCKETS, sizeof(*h->cnt));
		if (!h->cnt)
			return -ENOMEM;
	}
	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
	h->cnt[b]++;
	h->cnt[LOGHIST_BUCKETS + b] += v;
	return 0;
}

/* The mean of the values in the bucket of the value of 0-based rank k. */
static uint64_t rank_value(const struct loghist *h, uint64_t k)
{
	uint64_t seen = 0;

	for (unsigned b = 0; b < LOGHIST_BUCKETS; b++) {
		uint64_t c = h->cnt[b];

		if (c && k < seen + c) {
			uint64_t mean = h->cnt[LOGHIST_BUCKETS + b] / c;

			/* a bucket's mean lies within the whole's range */
			return mean < h->min ? h->min : mean > h->max ? h->max : mean;
		}
		seen += c;
	}
	return h->max;
}

uint64_t loghist__median(const struct loghist *h)
{
	if (!h->n)
		return 0;
	if (h->n % 2)
		return rank_value(h, h->n / 2);
	return (rank_value(h, h->n / 2 - 1) + rank_value(h, h->n / 2)) / 2;
}

uint64_t loghist__percentile(const struct loghist *h, unsigned p)
{
	uint64_t rank;

	if (!h->n)
		return 0;
	rank = (p * h->n + 99) / 100;
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	return rank_value(h, rank - 1);
}

void loghist__free(struct loghist *h)
{
	free(h->cnt);
	*h = (struct loghist){ 0 };
}
