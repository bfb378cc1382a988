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

/* 1 when path is a shared object (ET_DYN) whose dynamic symbols export the
 * function name (defined, global or weak, default visibility), 0 when it is
 * ELF but not that, a negative errno when it cannot be read as ELF
 * (-ENOEXEC: not ELF).  Links are not followed. */
int elf_syms__exports(const char *path, const char *name);

/* The unrelocated address of the symbol name (data or code, .symtab or
 * .dynsym) the file at path defines, and of the page its offset 0 is
 * loaded at (its first loadable segment's): where a process that maps the
 * file at offset 0 from START has it, START - base + value. 0; -ENOENT when
 * not defined there; -errno when the file cannot be read as ELF. */
int elf_syms__data(const char *path, const char *name, uint64_t *value, uint64_t *base);
/* How the kernel takes a uprobe hit on an x86-64 instruction: emulated in
 * the trap (push of a register, a relative jump or call, a conditional
 * jump, a one-byte nop), or by single-stepping a copy out of line, a second
 * trap on every hit. The cost of a hit differs by several times between
 * them, so the cost of a hit is measured for each (record/probe_cost.c). */
enum uprobe_insn {
	UPROBE_INSN_STEP = 0,	/* single-stepped (or unknown) */
	UPROBE_INSN_PUSH,	/* push %reg, with or without REX.B */
	UPROBE_INSN_BRANCH,	/* jmp/call rel, jcc, nop 0x90 */
	UPROBE_INSN__COUNT,
};
/* The class of the instruction starting at code[0] (len bytes readable). */
enum uprobe_insn uprobe_insn__class(const unsigned char *code, size_t len);
/* The classes of the instructions at file offsets offs[0..n-1] of path (0
 * offsets skipped: cls left as it is). Returns 0 or -errno. */
int elf_syms__insn_classes(const char *path, const uint64_t *offs, size_t n, uint8_t *cls);

#endif
