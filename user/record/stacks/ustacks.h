/* SPDX-License-Identifier: MIT */
/*
 * The native stacks of calls (--stacks): BPF's raw return addresses
 * (struct gt_ustack) turned into frames of files, interned once per trace
 * and written as GT_REC_MODULE, GT_REC_SYMBOL and GT_REC_STACK records, then
 * a GT_REC_STACK_REF in the raw record's place. Addresses are resolved
 * through /proc/PID/maps while the process lives, the functions through the
 * file's ELF symbol tables (libelf), opened through /proc/PID/root so that a
 * container's files are the ones read.
 */
#ifndef GTRACE_USTACKS_H
#define GTRACE_USTACKS_H

#include <stdint.h>
#include "format/records.h"

struct ustacks;

/* Where records go (the trace): 0 or a negative errno, which is returned. */
typedef int (*ustacks_emit_fn)(void *ctx, const struct gt_hdr *rec);

struct ustacks_counters {
	uint64_t stacks;	/* raw stacks taken */
	uint64_t interned;	/* distinct stacks written */
	uint64_t cut;		/* stacks deeper than GT_USTACK_MAX frames */
	uint64_t fault;		/* the unwinder got no frame past the probed function */
	uint64_t unmapped;	/* frames in no file (JIT, anonymous memory, a process gone) */
	uint64_t no_symbol;	/* frames of a file with no symbol covering them */
	uint64_t same;		/* hot calls from a known call site (--stacks all): no walk */
	uint64_t same_unknown;	/* ... whose site's stack was not known here */
};

/* NULL when out of memory. */
struct ustacks *ustacks__new(ustacks_emit_fn emit, void *ctx);
/* A raw stack from BPF: its records, then the call's GT_REC_STACK_REF.
 * Returns 0 or what emit returned (a raw record too short is counted by the
 * caller as a bad record: -EINVAL). */
int ustacks__on_raw(struct ustacks *u, const struct gt_ustack *raw);
/* A hot call from a call site whose stack came before (--stacks all): the
 * call's GT_REC_STACK_REF with that stack's id (none when the site is not
 * known: counted). Returns 0 or what emit returned. */
int ustacks__on_same(struct ustacks *u, const struct gt_ustack_same *same);
/* The process exec'd or exited: its mappings are no longer those read. */
void ustacks__forget(struct ustacks *u, uint32_t pid);
const struct ustacks_counters *ustacks__counters(const struct ustacks *u);
void ustacks__free(struct ustacks *u);

#endif
