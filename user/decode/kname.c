// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/kname.h"
#include "lib/demangle.h"
#include "lib/hash.h"

#define KNAME_TABLE_MIN_CAP 64	/* buckets of the first name table */

static int interner_grow(struct kname_table *in)
{
	uint32_t cap = in->cap ? in->cap * 2 : KNAME_TABLE_MIN_CAP;
	struct kname **b = calloc(cap, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < in->cap; i++) {
		struct kname *k = in->b[i], *next;

		for (; k; k = next) {
			next = k->next;
			k->next = b[k->h & (cap - 1)];
			b[k->h & (cap - 1)] = k;
		}
	}
	free(in->b);
	in->b = b;
	in->cap = cap;
	return 0;
}

/* Returns the name with one more reference, NULL when out of memory. */
struct kname *kname_table__get(struct kname_table *in, const char *s, size_t n)
{
	struct kname *k = in->last;
	uint64_t h;

	if (k && k->len == n && memcmp(k->mangled, s, n) == 0) {
		k->refs++;
		return k;
	}
	h = hash__bytes(s, n);
	if (in->cap) {
		for (k = in->b[h & (in->cap - 1)]; k; k = k->next)
			if (k->h == h && k->len == n && memcmp(k->mangled, s, n) == 0) {
				k->refs++;
				in->last = k;
				return k;
			}
	}
	if (in->n >= in->cap && interner_grow(in))
		return NULL;
	k = malloc(sizeof(*k) + n + 1);
	if (!k)
		return NULL;
	memcpy(k->mangled, s, n);
	k->mangled[n] = '\0';
	k->h = h;
	k->len = (uint32_t)n;
	k->refs = 1;
	k->demangled = NULL;
	k->next = in->b[h & (in->cap - 1)];
	in->b[h & (in->cap - 1)] = k;
	in->n++;
	in->last = k;
	return k;
}

void kname_table__put(struct kname_table *in, struct kname *k)
{
	struct kname **pp;

	if (!k || --k->refs)
		return;
	for (pp = &in->b[k->h & (in->cap - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	in->n--;
	if (in->last == k)
		in->last = NULL;
	if (k->demangled != k->mangled)
		free(k->demangled);
	free(k);
}

const char *kname__demangled(struct kname *k)
{
	if (!k->demangled) {
		char *dm = gt_demangle__dup(k->mangled);

		k->demangled = dm ? dm : k->mangled;
	}
	return k->demangled;
}

void kname_table__free(struct kname_table *in)
{
	for (uint32_t i = 0; i < in->cap; i++) {
		struct kname *k = in->b[i], *next;

		for (; k; k = next) {
			next = k->next;
			if (k->demangled != k->mangled)
				free(k->demangled);
			free(k);
		}
	}
	free(in->b);
	in->b = NULL;
	in->last = NULL;
	in->cap = in->n = 0;
}
