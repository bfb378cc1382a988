/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays kept as three fields of their owner (a pointer, a count, a
 * capacity) and one way to make room in them: the capacity doubles from a
 * first size until the request fits, so that n appends cost O(n) copies, and
 * a request that does not fit in memory, in an object's size or in the
 * capacity's own type fails with the array untouched, so that the owner's
 * cleanup path still sees a consistent array.
 */
#ifndef GTRACE_VEC_H
#define GTRACE_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Makes room for n more elements of elem bytes after the first len of *v
 * (*cap allocated): *cap becomes min, or *cap, doubled until len + n fit, and
 * at most max (the largest value the owner's capacity field holds).
 * Returns 0, or -ENOMEM with *v and *cap unchanged.
 */
static inline int vec__grow(void **v, size_t *cap, size_t len, size_t n, size_t elem, size_t min,
			    size_t max)
{
	size_t need, ncap;
	void *p;

	if (len > max || n > max - len)
		return -ENOMEM;
	need = len + n;
	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : (min ? min : 1);
	if (ncap > max)
		ncap = max;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	/* no object is larger than PTRDIFF_MAX bytes */
	if (elem && ncap > PTRDIFF_MAX / elem)
		return -ENOMEM;
	p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

/*
 * vec__grow() for a typed array: v points to the array's pointer, cap to its
 * capacity field (any unsigned type), the element size is the array's own.
 * v and cap are evaluated more than once.
 */
#define vec__reserve(v, cap, len, n, min)                                                        \
	__extension__({                                                                          \
		_Static_assert((__typeof__(*(cap)))-1 > 0, "vec capacity must be unsigned");     \
		void *vec_p_ = *(v);                                                             \
		size_t vec_cap_ = *(cap);                                                        \
		int vec_err_ = vec__grow(&vec_p_, &vec_cap_, (len), (n), sizeof(**(v)), (min),  \
					 (size_t)(__typeof__(*(cap)))-1);                        \
		if (!vec_err_) {                                                                 \
			*(v) = vec_p_;                                                           \
			*(cap) = (__typeof__(*(cap)))vec_cap_;                                   \
		}                                                                                \
		vec_err_;                                                                        \
	})

/*
 * Gives back what doubling left unused once an array is complete: *cap
 * becomes len (len > 0). When the allocator cannot shrink in place and has
 * no memory to move, the array stays as it was, which is still correct.
 */
#define vec__shrink(v, cap, len)                                                                 \
	__extension__({                                                                          \
		size_t vec_len_ = (len);                                                         \
		if (vec_len_ && vec_len_ < *(cap)) {                                             \
			void *vec_p_ = realloc(*(v), vec_len_ * sizeof(**(v)));                  \
			if (vec_p_) {                                                            \
				*(v) = vec_p_;                                                   \
				*(cap) = (__typeof__(*(cap)))vec_len_;                           \
			}                                                                        \
		}                                                                                \
		(void)0;                                                                         \
	})

#endif
