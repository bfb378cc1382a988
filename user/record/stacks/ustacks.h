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
struct pyconf;

/* Where records go (the trace): 0 or a negative errno, which is returned. */
typedef int (*ustacks_emit_fn)(void *ctx, const struct gt_hdr *rec);

struct ustacks_counters {
	uint64_t stacks;	/* raw stacks taken */
	uint64_t interned;	/* distinct stacks written */
	uint64_t cut;		/* stacks deeper than GT_USTACK_MAX frames */
	uint64_t fault;		/* the unwinder got no frame past the probed function */
	uint64_t at_exit;	/* taken at the exit of a failed call whose entry took none */
	uint64_t unmapped;	/* frames in no file (JIT, anonymous memory, a process gone) */
	uint64_t no_symbol;	/* frames of a file with no symbol covering them */
	uint64_t same;		/* hot calls from a known call site (--stacks all): no walk */
	uint64_t same_unknown;	/* ... whose site's stack was not known here */
	uint64_t py_stacks;	/* stacks with Python frames */
	uint64_t py_codes;	/* Python code objects BPF sent */
	uint64_t py_unknown;	/* Python frames whose code object never came (no line) */
	uint64_t py_no_line;	/* Python frames whose line the line table did not give */
	uint64_t py_cut;	/* Python stacks deeper than GT_PYSTACK_MAX frames */
	uint64_t py_main;	/* ... of a thread without Python: the main thread's frames */
	uint64_t py_fault;	/* Python walks that stopped at a frame they could not read */
	uint64_t py_late;	/* stacks of a Python process taken before its interpreter
				 * was named to BPF: native only */
};

/* NULL when out of memory. */
struct ustacks *ustacks__new(ustacks_emit_fn emit, void *ctx);
/* The interpreters whose Python frames BPF sends (NULL: none); a file
 * mapped by a process is offered to it when first met. */
void ustacks__set_python(struct ustacks *u, struct pyconf *py);
/* A Python code object BPF sent before the stacks that hold it: its
 * function is written (GT_REC_PYFUNC) when new. 0, -EINVAL (too short) or
 * what emit returned. */
int ustacks__on_pycode(struct ustacks *u, const struct gt_pycode *raw);
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
