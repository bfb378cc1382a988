/* SPDX-License-Identifier: MIT */
/*
 * A histogram of u64 values (durations, counts) in log-linear buckets: the
 * values below 64 each in a bucket of their own, then 32 buckets per power
 * of two (a bucket is at most 1/32 of its values wide), so that a median or
 * percentile of millions of values comes from a fixed 30 KiB instead of
 * every value.  Each bucket keeps the sum of its values too: a quantile is
 * the mean of the values in its bucket, exact when they are all equal.
 * The buckets are allocated with the first value.
 */
#ifndef GTRACE_LOGHIST_H
#define GTRACE_LOGHIST_H

#include <stdbool.h>
#include <stdint.h>

#define LOGHIST_SUB_BITS 5
#define LOGHIST_SUB (1u << LOGHIST_SUB_BITS)
#define LOGHIST_BUCKETS ((64 - LOGHIST_SUB_BITS) * LOGHIST_SUB + LOGHIST_SUB)

struct loghist {
	uint64_t n;		/* values added */
	uint64_t sum;		/* their sum (wraps only past 2^64) */
	uint64_t min, max;	/* valid when n > 0 */
	uint64_t *cnt;		/* LOGHIST_BUCKETS counts, then as many sums; NULL while n == 0 */
};

/* The bucket of v. */
static inline unsigned loghist__bucket(uint64_t v)
{
	unsigned msb;

	if (v < 2 * LOGHIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - LOGHIST_SUB_BITS + 1) * LOGHIST_SUB +
	       (unsigned)((v >> (msb - LOGHIST_SUB_BITS)) & (LOGHIST_SUB - 1));
}

/* Adds v.  Returns 0 or -ENOMEM (the first value allocates). */
int loghist__add(struct loghist *h, uint64_t v);
/* The median: for an even count the mean of the two middle values' bucket
 * means; 0 when empty. */
uint64_t loghist__median(const struct loghist *h);
/* The value of rank ceil(p n / 100) (0 < p <= 100), as its bucket's mean;
 * 0 when empty. */
uint64_t loghist__percentile(const struct loghist *h, unsigned p);
/* Frees the buckets: h is empty again. */
void loghist__free(struct loghist *h);

#endif
