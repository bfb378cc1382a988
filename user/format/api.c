// SPDX-License-Identifier: MIT
/*
 * Name tables of the decoder: the rows of GT_API_TABLE, the names of call
 * types and copy kinds, and the interned kernel names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode.h"
#include "decode/kname.h"
#include "lib/demangle.h"

#define KNAME_TABLE_MIN_CAP 64	/* buckets of the first name table */

/* The table expanded once into data, so that lookups are array indexing. */
static const struct gt_api_info api_table[GT_API__COUNT] = {
#define GT_API_ROW(sym, cls, prog, ret, out, str, a, b, c, d, kind)		\
	[GT_API_##sym] = { #sym, GT_CLS_##cls, GT_P_##prog, GT_R_##ret,	\
			   out, str, a, b, c, d, kind },
	GT_API_TABLE(GT_API_ROW)
#undef GT_API_ROW
};

const struct gt_api_info *gt_api__info(unsigned api)
{
	if (api == GT_API_NONE || api >= GT_API__COUNT)
		return NULL;
	return &api_table[api];
}

const char *gt_api__name(unsigned api)
{
	const struct gt_api_info *i = gt_api__info(api);

	return i ? i->name : NULL;
}

int gt_api__by_name(const char *name)
{
	/* A linear scan: used when attaching and parsing filters, never per record. */
	if (!name)
		return -1;
	for (unsigned i = 1; i < GT_API__COUNT; i++)
		if (strcmp(api_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum gt_api_class gt_api__class(unsigned api)
{
	const struct gt_api_info *i = gt_api__info(api);

	return i ? i->cls : GT_CLS_NONE;
}

static const char *const call_type_names[GT_T__COUNT] = {
	[GT_T_LAUNCH] = "launch",	[GT_T_MEMCPY] = "memcpy",
	[GT_T_MEMSET] = "memset",	[GT_T_ALLOC] = "alloc",
	[GT_T_FREE] = "free",		[GT_T_SYNC] = "sync",
	[GT_T_MODULE] = "module",	[GT_T_CONTEXT] = "context",
	[GT_T_STREAM] = "stream",	[GT_T_EVENT] = "event",
	[GT_T_MARKER] = "marker",	[GT_T_INIT] = "init",
};

const char *gt_call_type__name(enum gt_call_type t)
{
	if ((unsigned)t >= GT_T__COUNT)
		return "unknown";
	return call_type_names[t];
}

static const char *const copy_kind_names[GT_COPY__COUNT] = {
	[GT_COPY_UNKNOWN] = "Unknown",	[GT_COPY_HTOD] = "HtoD",
	[GT_COPY_DTOH] = "DtoH",	[GT_COPY_DTOD] = "DtoD",
	[GT_COPY_HTOH] = "HtoH",	[GT_COPY_PTOP] = "PtoP",
	[GT_COPY_DEFAULT] = "Default",	[GT_COPY_HTOA] = "HtoA",
	[GT_COPY_ATOH] = "AtoH",	[GT_COPY_DTOA] = "DtoA",
	[GT_COPY_ATOD] = "AtoD",	[GT_COPY_ATOA] = "AtoA",
};

const char *gt_copy_kind__name(enum gt_copy_kind k)
{
	if ((unsigned)k >= GT_COPY__COUNT)
		return "Unknown";
	return copy_kind_names[k];
}

/* ---- interned kernel names ---------------------------------------------- */

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

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
	uint64_t h = str_hash(s, n);
	struct kname *k;

	if (in->cap) {
		for (k = in->b[h & (in->cap - 1)]; k; k = k->next)
			if (k->h == h && k->len == n && memcmp(k->mangled, s, n) == 0) {
				k->refs++;
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
	in->cap = in->n = 0;
}
