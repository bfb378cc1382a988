/* SPDX-License-Identifier: MIT */
/*
 * Internal to record/stacks/'s stacks (ustacks.h): what its files share.
 * ustacks.c takes the raw stacks (a process' mappings, the interned stacks,
 * the records written); ustacks_sym.c reads a file's build id, segments and
 * function symbols; ustacks_py.c puts the Python frames among the native
 * ones and writes the Python functions.
 */
#ifndef GTRACE_USTACKS_INT_H
#define GTRACE_USTACKS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "record/stacks/ustacks.h"

#define NAME_MAX_LEN	1024		/* a symbol's name is cut here (C++ names run long) */

struct seg {
	uint64_t off, vaddr, len;	/* a PT_LOAD: file bytes [off, off + len) at vaddr */
};

struct sym {
	uint64_t addr, size;
	char *name;
};

struct module {
	uint32_t id;
	bool emitted;			/* its GT_REC_MODULE written (at its first frame) */
	bool loaded;			/* segments read (or tried), at that time */
	bool syms_loaded;		/* symbols read (or tried), at its first frame's symbol */
	bool interp;			/* a Python interpreter BPF walks (pyconf) */
	uint32_t pid;			/* a process that maps it: its files are read through it */
	uint32_t dev;			/* the mapping's device ((major << 20) | minor) and inode: */
	uint64_t ino;			/* a file opened elsewhere must be this one */
	int fd;				/* the file, opened at its first frame (while a process
					 * that maps it lives), for its symbols later; -1 none */
	char *path;
	struct seg *segs;
	size_t nsegs;
	struct sym *syms;		/* by address */
	size_t nsyms;
};

#define FRAMES_MAX	(GT_USTACK_MAX + 1 + GT_PYSTACK_MAX)

struct stack_ent {
	uint32_t id;
	uint16_t n, flags;
	struct gt_stack_frame f[FRAMES_MAX];
};

/* A Python code object of a process, as BPF sent it (struct gt_pycode). */
struct pycode {
	uint32_t func;			/* its GT_REC_PYFUNC id */
	uint32_t version, firstlineno;
	uint32_t lines_len;
	uint8_t *lines;			/* co_linetable (cut short: later lines are 0, not known) */
};

/* A Python function of the trace (file, name, first line). */
struct pyfunc {
	uint32_t id;
	uint32_t firstlineno;
	char *text;			/* file NUL name NUL */
	size_t file_len, name_len;	/* with their NULs */
};

struct ustacks {
	ustacks_emit_fn emit;
	void *ctx;
	struct hmap procs;		/* (pid, 0) -> struct pmaps */
	struct hmap modules;		/* (inode, dev) -> struct module */
	struct hmap stacks;		/* (hash of the frames, 0) -> struct stack_ent */
	struct hmap symbols;		/* (offset, module) -> (void *)1: its GT_REC_SYMBOL written */
	struct hmap sites;		/* (hash of the call site's keys, tid) -> stack id as a
					 * pointer (--stacks all) */
	struct hmap codes;		/* (code address, pid) -> struct pycode */
	struct hmap funcs;		/* (hash of file, name and line, 0) -> struct pyfunc */
	struct pyconf *py;		/* the interpreters BPF walks, NULL: none */
	uint32_t next_module, next_stack, next_func;
	struct ustacks_counters c;
	uint64_t buf[(8192 + NAME_MAX_LEN) / 8];	/* a record being written */
};

/* ustacks_sym.c */
/* m's build id and segments, read at its first frame; a file that cannot
 * be read leaves its frames without names. */
void ustacks_sym__load(struct module *m, uint8_t *build_id, uint8_t *build_id_len);
/* The function holding file offset off of m: its name, *delta the distance
 * from its start; NULL when none is known. */
const char *ustacks_sym__symbol(struct module *m, uint64_t off, uint64_t *delta);
/* m's memory and its file's descriptor (a value of the modules' map). */
void ustacks_sym__free(void *v);

/* ustacks_py.c */
/* Puts the Python frames of raw among the native ones of s (mods[] their
 * modules). */
void ustacks_py__mix(struct ustacks *u, const struct gt_ustack *raw, struct stack_ent *s,
		     struct module **mods);

#endif
