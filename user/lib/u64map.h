/* SPDX-License-Identifier: MIT */
/* Open-addressing hash map from non-zero u64 keys to u64 values, for the
 * recorder's per-handle and per-thread bookkeeping (no allocation per lookup). */
#ifndef GTRACE_U64MAP_H
#define GTRACE_U64MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "lib/hash.h"

struct u64map {
	uint64_t *keys;		/* 0 = empty slot */
	uint64_t *vals;		/* value of the key in the same slot */
	size_t cap;		/* slots, a power of two */
	size_t len;		/* used slots */
};

/* Returns a pointer to the value of key, NULL if absent. key must be non-zero. */
uint64_t *u64map__get(const struct u64map *m, uint64_t key);
/* Sets key to val. Returns 0 or -ENOMEM. */
int u64map__set(struct u64map *m, uint64_t key, uint64_t val);
void u64map__free(struct u64map *m);

/* Key from a process id and a 64-bit handle: handles are per process, and
 * the handles of one process never share a key (hash__pair() is a bijection
 * of the handle for a fixed pid; only the one whose key would be 0 shares 1). */
static inline uint64_t u64map__key2(uint32_t pid, uint64_t handle)
{
	uint64_t k = hash__pair(handle, pid);

	return k ? k : 1;
}

#endif
