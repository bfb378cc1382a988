// SPDX-License-Identifier: MIT
/*
 * The kernel and shape tables of `gtrace-bpf stats` (stats_acc.h): kernel
 * names per device and (kernel, grid, block) shapes, in vectors indexed by
 * open addressing (an index at most half full, doubled as they grow); a
 * kernel is looked up first in a small cache by its name's address, a shape
 * first as its kernel's last one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "lib/hash.h"
#include "lib/vec.h"

#define NO_SHAPE UINT32_MAX


/* The name's hash, and its length for the copy. */
static uint64_t name_hash(const char *s, size_t *len)
{
	*len = strlen(s);
	return hash__bytes(s, *len);
}

/* Doubles an index of (entry + 1) slots; hash_of gives an entry's hash. */
static int idx_grow(uint32_t **idx, uint32_t *cap, uint32_t n,
		    uint64_t (*hash_of)(const void *tab, uint32_t i), const void *tab)
{
	uint32_t ncap = *cap ? *cap * 2 : 256, *ni = calloc(ncap, sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)hash_of(tab, i) & (ncap - 1);

		while (ni[j])
			j = (j + 1) & (ncap - 1);
		ni[j] = i + 1;
	}
	free(*idx);
	*idx = ni;
	*cap = ncap;
	return 0;
}

static uint64_t kern_hash_of(const void *tab, uint32_t i)
{
	return ((const struct kern_table *)tab)->v[i].hash;
}

static uint64_t shape_hash(uint32_t kern, const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t h = hash__mix64(kern + ((uint64_t)grid[0] << 32));

	h = hash__mix64(h ^ grid[1] ^ ((uint64_t)grid[2] << 32));
	h = hash__mix64(h ^ block[0] ^ ((uint64_t)block[1] << 32));
	return hash__mix64(h ^ block[2]);
}

static uint64_t shape_hash_of(const void *tab, uint32_t i)
{
	const struct shape_acc *a = &((const struct shape_table *)tab)->v[i];

	return shape_hash(a->kern, a->grid, a->block);
}

static struct kern_acc *kern_get(struct kern_table *t, const char *name, int32_t device)
{
	size_t len;
	uint64_t h = name_hash(name, &len) ^ hash__mix64((uint64_t)(uint32_t)device + 1);
	uint32_t mask = t->idx_cap - 1, j;
	struct kern_acc *k;

	if (t->idx_cap) {
		for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask) {
			k = &t->v[t->idx[j] - 1];
			if (k->hash == h && k->device == device && !strcmp(k->name, name))
				return k;
		}
	}
	/* new: keep the index at most half full */
	if ((t->n + 1) * 2 > t->idx_cap &&
	    idx_grow(&t->idx, &t->idx_cap, t->n, kern_hash_of, t))
		return NULL;
	if (vec__reserve(&t->v, &t->cap, t->n, 1, 64))
		return NULL;
	k = &t->v[t->n];
	*k = (struct kern_acc){ .hash = h, .device = device, .last_shape = NO_SHAPE };
	k->name = malloc(len + 1);
	if (!k->name)
		return NULL;
	memcpy(k->name, name, len + 1);
	mask = t->idx_cap - 1;
	for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask)
		;
	t->idx[j] = ++t->n;
	return k;
}

int stats_kern__shape_add(struct shape_table *t, struct kern_acc *k, uint32_t kern,
			  const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t h;
	uint32_t mask, j;
	struct shape_acc *a;

	/* a kernel is mostly launched again with the shape of its last launch */
	if (k->last_shape != NO_SHAPE) {
		a = &t->v[k->last_shape];
		if (!memcmp(a->grid, grid, sizeof(a->grid)) &&
		    !memcmp(a->block, block, sizeof(a->block))) {
			a->count++;
			return 0;
		}
	}
	h = shape_hash(kern, grid, block);
	mask = t->idx_cap - 1;
	if (t->idx_cap) {
		for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask) {
			a = &t->v[t->idx[j] - 1];
			if (a->kern == kern && !memcmp(a->grid, grid, sizeof(a->grid)) &&
			    !memcmp(a->block, block, sizeof(a->block))) {
				a->count++;
				k->last_shape = t->idx[j] - 1;
				return 0;
			}
		}
	}
	if ((t->n + 1) * 2 > t->idx_cap &&
	    idx_grow(&t->idx, &t->idx_cap, t->n, shape_hash_of, t))
		return -ENOMEM;
	if (vec__reserve(&t->v, &t->cap, t->n, 1, 64))
		return -ENOMEM;
	a = &t->v[t->n];
	*a = (struct shape_acc){ .kern = kern, .count = 1 };
	memcpy(a->grid, grid, sizeof(a->grid));
	memcpy(a->block, block, sizeof(a->block));
	mask = t->idx_cap - 1;
	for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask)
		;
	t->idx[j] = t->n + 1;
	k->last_shape = t->n++;
	k->nshapes++;
	return 0;
}

/* The kernel of a launch's name.  The decoder hands out the same string
 * for every launch of a kernel, so a cache by address skips hashing it; a
 * hit is confirmed with strcmp because an address can be reused for another
 * name (a process' names are freed when it exits, the placeholder buffer is
 * rewritten per launch). */
struct kern_acc *stats_kern__cached(struct kern_table *t, struct kcache_slot *cache,
				    const char *name, int32_t device)
{
	struct kcache_slot *slot = &cache[((uintptr_t)name >> 3) % KCACHE_SLOTS];
	struct kern_acc *k;

	if (slot->name == name && t->v[slot->kern].device == device &&
	    !strcmp(t->v[slot->kern].name, name))
		return &t->v[slot->kern];
	k = kern_get(t, name, device);
	if (k) {
		slot->name = name;
		slot->kern = (uint32_t)(k - t->v);
	}
	return k;
}
