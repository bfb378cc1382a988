/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of process and thread names: which processes are
 * traced (made CUDA calls), the command line BPF read at each exec (kept
 * until the process' first CUDA record), and what /proc says about a
 * process first seen now (command line, comm, parent, cgroup), written as
 * name and process-info records just before its first record.
 */
#ifndef GTRACE_PROC_NAMES_H
#define GTRACE_PROC_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

struct proc_names;

/* Where the records go (the trace writer, in the recorder). */
typedef int (*proc_names_emit_fn)(void *ctx, const struct gt_hdr *rec);

/* filter: BPF records only the processes in its pids map, so every process
 * is relevant (else only those traced). */
struct proc_names *proc_names__new(bool filter, proc_names_emit_fn emit, void *ctx);
/* Reads a small /proc file; NULs (cmdline separators) become spaces. */
void proc_names__read_proc(const char *path, char *buf, size_t len);
/* pid's environment as it was started (/proc/PID/environ, its first
 * PROC_ENV_MAX bytes: NAME=VALUE strings, each ending in a NUL), in a buffer
 * of the caller's to free, NUL-terminated after *n bytes; NULL when it
 * cannot be read (*n 0). */
#define PROC_ENV_MAX (256 << 10)
char *proc_names__environ(uint32_t pid, size_t *n);
/* True when pid's records are kept: filtered by BPF, or traced and not
 * exited. */
bool proc_names__relevant(const struct proc_names *pn, uint32_t pid);
/* True when pid made CUDA calls (proc_names__add_process), exited or not. */
bool proc_names__traced(const struct proc_names *pn, uint32_t pid);
/* Marks pid traced. Returns true when it was not yet, or had exited (a new
 * process with the pid of an old one: its names are written anew). */
bool proc_names__add_process(struct proc_names *pn, uint32_t pid);
/* A traced process exited: still traced (a snapshot of it is asked for
 * after its end), no longer relevant, and the next process given its pid is
 * new. Returns true when pid was traced and running. */
bool proc_names__exited(struct proc_names *pn, uint32_t pid);
/* For a process first traced at h: its process-info record (parent, comm,
 * cgroup), its name (command line from its exec, else /proc) and, when its
 * environment names its rank in a job, a GT_REC_PROC_RANK record. */
void proc_names__write_process(struct proc_names *pn, const struct gt_hdr *h);
/* An exec of h->pid: a process traced since before it (its first record
 * came from the program it replaced, whose environment may not have named
 * the rank) gets the rank of its new environment, when that differs. */
void proc_names__on_exec_rank(struct proc_names *pn, const struct gt_hdr *h);
/* The environment BPF read at an exec (a pid filter's: `-- CMD`, `-p`):
 * the rank it names, written for a process the recording follows (one gone
 * before /proc could be read too); the same rank is written once. */
void proc_names__on_exec_environ(struct proc_names *pn, const struct gt_environ *e);
/* Parses RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE from the
 * NUL-separated environment env[0..n) into r (-1 each that is unset or not
 * a number); true when any is set.  The header is the caller's. */
bool proc_names__parse_rank(const char *env, size_t n, struct gt_proc_rank *r);
/* First record of thread h->tid: writes its name (comm) before it. */
/* A thread's comm from BPF (at its exit or a rename, GT_NAME_F_RAW):
 * written, without the flag, for a thread that had records and whose name
 * it changes; a thread that is gone from /proc is named so. */
int proc_names__on_thread_name(struct proc_names *pn, const struct gt_name *nm);
void proc_names__note_thread(struct proc_names *pn, const struct gt_hdr *h);
/* A GT_NAME_PROCESS record of BPF (the command line at an exec): kept, and
 * written now when the process is relevant. Returns 0 or the emit error. */
int proc_names__on_exec_cmdline(struct proc_names *pn, const struct gt_name *nm);
/* Drops the command line kept for pid (it exited). */
void proc_names__forget_cmdline(struct proc_names *pn, uint32_t pid);
void proc_names__free(struct proc_names *pn);

#endif
