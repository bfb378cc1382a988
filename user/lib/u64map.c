// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include "lib/hash.h"
#include "lib/u64map.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	return hash__mix64(key) & (cap - 1);
}

uint64_t *u64map__get(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static int grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256, i, j;
	uint64_t *nk = calloc(ncap, sizeof(*nk)), *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		for (j = slot_of(m->keys[i], ncap); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int u64map__set(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = u64map__get(m, key);
	size_t i;
	int err;

	if (v) {
		*v = val;
		return 0;
	}
	/* keep the load under 1/2 so probes stay short */
	if ((m->len + 1) * 2 > m->cap) {
		err = grow(m);
		if (err)
			return err;
	}
	for (i = slot_of(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
	return 0;
}

void u64map__free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}
