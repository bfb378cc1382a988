/* SPDX-License-Identifier: MIT */
/* Symbol lookup in a shared object, done once per file so that attaching
 * hundreds of uprobes does not parse the ELF file hundreds of times. */
#ifndef GTRACE_ELF_SYMS_H
#define GTRACE_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

/* Offsets are where a uprobe on the function goes: the file offset of its
 * entry, or of the instruction after it when the entry is an endbr64 (which
 * the kernel would single-step on every hit; see probe_offset()). */

/* For each of the n names, sets offsets[i] to the probe offset of the
 * function, or 0 when the file does not define it. Returns the number
 * found, or a negative errno when the file cannot be read as ELF. */
int elf_syms__resolve(const char *path, const char *const *names, size_t n, uint64_t *offsets);

/* Calls fn for every function symbol defined in the file whose name starts
 * with prefix, with its probe offset. Returns the count or -errno. */
typedef int (*elf_syms_fn)(void *ctx, const char *name, uint64_t offset);
int elf_syms__each(const char *path, const char *prefix, elf_syms_fn fn, void *ctx);

#endif
