/* SPDX-License-Identifier: MIT */
/*
 * Kernel names shared by the decoder's (pid, handle) entries: interned so
 * that each distinct name is stored and demangled once, however many
 * handles, contexts or launches use it.  Internal to the decoder; the api
 * table is in format/api.h, demangling in lib/demangle.h.
 */
#ifndef GTRACE_KNAME_H
#define GTRACE_KNAME_H

#include <stdint.h>
#include <stddef.h>

/* One distinct kernel name, shared by every (pid, handle) that has it so
 * that it is demangled once. */
struct kname {
	struct kname *next;	/* intern bucket chain */
	uint64_t h;		/* hash of mangled */
	uint32_t refs;		/* map entries pointing here */
	uint32_t len;		/* strlen(mangled) */
	char *demangled;	/* lazily, on the first launch; may be mangled itself */
	char mangled[];		/* as the driver has it */
};

struct kname_table {
	struct kname **b;	/* cap buckets */
	uint32_t cap, n;	/* buckets (power of two), names */
	struct kname *last;	/* the name the last get returned: a loop of one
				 * kernel asks for the same name again and again,
				 * and comparing it costs less than hashing it */
};

/* Returns the name with one more reference (a new one at refs 1), NULL when
 * out of memory. */
struct kname *kname_table__get(struct kname_table *t, const char *s, size_t n);
/* Drops a reference; the last one frees the name. NULL is ignored. */
void kname_table__put(struct kname_table *t, struct kname *k);
/* Frees every name, referenced or not, and the table's buckets. */
void kname_table__free(struct kname_table *t);
/* The demangled form, computed on first use; the mangled name itself when
 * it is not an Itanium name or does not demangle. */
const char *kname__demangled(struct kname *k);

#endif
