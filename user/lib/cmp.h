/* SPDX-License-Identifier: MIT */
/*
 * Three-way comparison for sort keys of several fields, so that a qsort
 * comparator reads as its key: CMP_BY(x->pid, y->pid); CMP_BY(x->ts, y->ts);
 * return cmp__u64(i, j). Unsigned and signed values both fit: they are
 * compared as what they are, widened without changing their order.
 */
#ifndef GTRACE_CMP_H
#define GTRACE_CMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline int cmp__u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* A qsort comparator of doubles, ascending (no NaN expected). */
static inline int cmp__double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Returns from the comparator when a and b differ: -1 or 1 as a < b or a > b. */
#define CMP_BY(a, b)                                                    \
	do {                                                            \
		__typeof__(a) cmp_a_ = (a);                             \
		__typeof__(b) cmp_b_ = (b);                             \
		if (cmp_a_ != cmp_b_)                                   \
			return cmp_a_ < cmp_b_ ? -1 : 1;                \
	} while (0)

/*
 * qsort that takes an empty array as sorted: qsort's base must not be NULL
 * even for no elements, and an empty vector's is. Every sort goes through it.
 */
static inline void cmp__sort(void *base, size_t n, size_t size,
			     int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
