/* SPDX-License-Identifier: MIT */
/*
 * Open-addressed hash map from (u64, u32) keys to non-NULL pointers, for the
 * decoder's per-thread, per-handle and per-process state.  Exact keys (a
 * handle and a pid together, no folding), deletion by backward shift so that
 * threads coming and going leave no tombstones, no allocation per lookup.
 * Internal to the decoder: static inline, one copy per user.
 */
#ifndef GTRACE_HMAP_H
#define GTRACE_HMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "lib/hash.h"

#define HMAP_MIN_CAP 64	/* slots of a map's first table */

struct hslot {
	uint64_t k1;		/* handle, tid or pid */
	uint32_t k2;		/* pid where the key has one, else 0 */
	uint32_t used;		/* slot holds an entry */
	void *v;		/* the value, never NULL */
};

struct hmap {
	struct hslot *s;	/* cap slots */
	uint32_t cap;		/* power of two, or 0 before the first insert */
	uint32_t n;		/* entries */
};

static inline uint32_t hmap_hash(uint64_t k1, uint32_t k2)
{
	/* mixed: handles are aligned pointers, tids dense */
	return (uint32_t)hash__pair(k1, k2);
}

static inline int64_t hmap_find(const struct hmap *m, uint64_t k1, uint32_t k2)
{
	uint32_t mask, i;

	if (!m->n)
		return -1;
	mask = m->cap - 1;
	for (i = hmap_hash(k1, k2) & mask; m->s[i].used; i = (i + 1) & mask)
		if (m->s[i].k1 == k1 && m->s[i].k2 == k2)
			return i;
	return -1;
}

static inline void *hmap_get(const struct hmap *m, uint64_t k1, uint32_t k2)
{
	int64_t i = hmap_find(m, k1, k2);

	return i < 0 ? NULL : m->s[i].v;
}

static inline void hmap_place(struct hslot *s, uint32_t cap, uint64_t k1, uint32_t k2, void *v)
{
	uint32_t mask = cap - 1, i;

	for (i = hmap_hash(k1, k2) & mask; s[i].used; i = (i + 1) & mask)
		;
	s[i] = (struct hslot){ .k1 = k1, .k2 = k2, .used = 1, .v = v };
}

static inline int hmap_grow(struct hmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : HMAP_MIN_CAP;
	struct hslot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->s[i].used)
			hmap_place(s, cap, m->s[i].k1, m->s[i].k2, m->s[i].v);
	free(m->s);
	m->s = s;
	m->cap = cap;
	return 0;
}

/* Inserts or replaces; *old gets the replaced value (NULL if new). */
static inline int hmap_put(struct hmap *m, uint64_t k1, uint32_t k2, void *v, void **old)
{
	int64_t i = hmap_find(m, k1, k2);
	int err;

	if (i >= 0) {
		*old = m->s[i].v;
		m->s[i].v = v;
		return 0;
	}
	*old = NULL;
	/* grow at 3/4 load: probe lengths stay short */
	if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->cap * 3) {
		err = hmap_grow(m);
		if (err)
			return err;
	}
	hmap_place(m->s, m->cap, k1, k2, v);
	m->n++;
	return 0;
}

/* The value of (k1, k2); when there is none, a new one of size bytes,
 * zeroed and put there (*created set, when created is not NULL).  NULL when
 * out of memory. */
static inline void *hmap_get_or_new(struct hmap *m, uint64_t k1, uint32_t k2, size_t size,
				    bool *created)
{
	void *v = hmap_get(m, k1, k2), *old;

	if (created)
		*created = !v;
	if (v)
		return v;
	v = calloc(1, size);
	if (v && hmap_put(m, k1, k2, v, &old)) {
		free(v);
		v = NULL;
	}
	return v;
}

/* Frees every value (after free_inner on it, when given: what the value
 * owns) and the table: m is empty again. */
static inline void hmap_free_all(struct hmap *m, void (*free_inner)(void *))
{
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->s[i].used)
			continue;
		if (free_inner)
			free_inner(m->s[i].v);
		free(m->s[i].v);
	}
	free(m->s);
	*m = (struct hmap){ 0 };
}

/* Removes slot i, shifting later entries of the run back (no tombstones, so
 * lookups stay short however many threads come and go). */
static inline void hmap_del_at(struct hmap *m, uint32_t i)
{
	uint32_t mask = m->cap - 1, j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->s[j].used)
			break;
		uint32_t home = hmap_hash(m->s[j].k1, m->s[j].k2) & mask;
		/* move j into the hole when its home is not in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	m->s[i].used = 0;
	m->s[i].v = NULL;
	m->n--;
}

static inline void *hmap_del(struct hmap *m, uint64_t k1, uint32_t k2)
{
	int64_t i = hmap_find(m, k1, k2);
	void *v;

	if (i < 0)
		return NULL;
	v = m->s[i].v;
	hmap_del_at(m, (uint32_t)i);
	return v;
}

#endif
