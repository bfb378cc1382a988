/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of kernel naming. Names normally come from the naming
 * calls (cuModuleGetFunction, cuLibraryGetKernel, ...) recorded in the trace.
 * A kernel whose handle was created before tracing began has no such call:
 * for those the recorder reads the name from the driver structure the handle
 * points to (an undocumented layout: the 8 bytes at +8 hold a pointer to the
 * mangled name) and writes it as a GT_NAME_KERNEL_MEM record just before the
 * first launch that needs it. The layout is trusted only while every check
 * against a name learned from a naming call holds, and only strings that
 * look like symbol names are kept.
 */
#ifndef GTRACE_KERNEL_NAMES_H
#define GTRACE_KERNEL_NAMES_H

#include <stdint.h>
#include "bpf/gtrace_events.h"

struct kernel_names;

/* Where recovered name records go (the trace writer, in the recorder). */
typedef int (*kernel_names_emit_fn)(void *ctx, const struct gt_hdr *rec);
/* Reads len bytes of process pid at addr; returns bytes read or -errno.
 * process_vm_readv in the recorder, a fake in tests. */
typedef long (*kernel_names_read_fn)(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len);

struct kernel_names *kernel_names__new(kernel_names_emit_fn emit, kernel_names_read_fn read,
				       void *ctx);
/* Sees every record before it is written; may emit a name record first.
 * Raw name records from BPF (GT_NAME_F_RAW) are consumed here: the caller
 * does not write them, this writes the checked name instead. */
int kernel_names__on_record(struct kernel_names *kn, const struct gt_hdr *rec);
/* Called with every name a naming call gives a handle (rec: the record
 * that completed the call): a stage keeps them (record_ext.on_learned). */
typedef void (*kernel_names_learned_fn)(void *ctx, const struct gt_hdr *rec, uint64_t handle,
					const char *name);
void kernel_names__on_learn(struct kernel_names *kn, kernel_names_learned_fn fn);
/* Forgets a process' handles (it exited; its pid may be reused). */
void kernel_names__forget_pid(struct kernel_names *kn, uint32_t pid);
/* Adds this module's counters (names_mem*) into c. */
void kernel_names__counters(const struct kernel_names *kn, struct gt_counters *c);
/* How far the names read from the driver's structures can be trusted: the
 * names that held (matched a looked-up name, or were recovered as symbol
 * names), 0 once a check failed or a recovered string was not a name. */
uint64_t kernel_names__checked(const struct kernel_names *kn);
void kernel_names__free(struct kernel_names *kn);

/* process_vm_readv-based kernel_names_read_fn (ctx unused). */
long kernel_names__read_process(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len);

#endif
