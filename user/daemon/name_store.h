/* SPDX-License-Identifier: MIT */
/*
 * The daemon's names for its snapshots (name_store.c). A name record (a
 * process' command line, a thread's name, a kernel handle's name, the
 * first-seen info of a process) is written once, when it is learned; the
 * window's chunk that held it may be gone by the time a snapshot is asked
 * for, so the daemon keeps the name records and puts them at the head of
 * every snapshot.
 *
 * Kept while they can still be needed, and no longer: the names of a
 * process die with its exit (of a pid that is reused, only the old
 * process' names: each record belongs to the process that had the pid when
 * it was written), the kernel names of a program with its exec (its
 * handles mean nothing to the new program), a name with the newer one of
 * the same thing (a renamed thread, a handle named again); a dead name is
 * let go once the window no longer holds any chunk that could hold a
 * record of it, i.e. once every chunk held starts after the death. Names of
 * no process (pid 0) never die. A name that repeats the one kept for the
 * same thing is not kept twice.
 *
 * The stack table of --stacks (GT_REC_STACK, _MODULE, _SYMBOL, _PYFUNC:
 * each written once, then named by id from any process' calls) is kept the
 * same way, as names of no process: they never die.
 *
 * Bounded in bytes: a name that finds no room once the dead are let go is
 * lost, counted (snapshots show a placeholder for it; a stack lost so is
 * a call's stack id without its frames).
 */
#ifndef GTRACE_NAME_STORE_H
#define GTRACE_NAME_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

#define NAME_STORE_LIMIT	(16u << 20)	/* default bound on the records kept, bytes */

struct name_store;

/* The lowest first_ts of the window's chunks (CLOCK_MONOTONIC ns), 0 while
 * it holds none: names that died before it are let go. */
typedef uint64_t (*name_store_oldest_fn)(void *ctx);
/* Whether process pid still exists (name_store__sweep). */
typedef bool (*name_store_alive_fn)(void *ctx, uint32_t pid);

struct name_store_stats {
	uint64_t bytes;		/* bytes of the records kept (a snapshot's head) */
	uint64_t records;	/* records kept, dead ones not yet let go included */
	uint64_t live;		/* of them, names still in use (not dead) */
	uint64_t limit;		/* the bound on bytes */
	uint64_t forgotten;	/* records let go: dead before the window's oldest chunk */
	uint64_t repeated;	/* records not kept: the same as the one kept for the same thing */
	uint64_t lost;		/* records that found no room (or no memory): lost to snapshots */
	uint64_t lost_bytes;	/* their bytes */
	uint64_t gone;		/* processes whose exit record never came (lost with the ring
				 * buffer's drops), found gone by name_store__sweep */
};

/* limit 0 = NAME_STORE_LIMIT. Returns 0, -EINVAL or -ENOMEM. */
int name_store__new(size_t limit, name_store_oldest_fn oldest, void *ctx, struct name_store **out);
/*
 * A record written to the window: name records (GT_REC_NAME,
 * GT_REC_PROC_INFO) and the stack table's kept, exits and execs (GT_REC_EXIT, GT_REC_EXEC) noted;
 * others ignored. Returns 0, or -ENOSPC / -ENOMEM when a name was lost
 * (counted).
 */
int name_store__note(struct name_store *s, const struct gt_hdr *h);
/* Lets go of the names that died before the window's oldest chunk. Cheap
 * when there is nothing to let go (the loop calls it at every poll). */
void name_store__prune(struct name_store *s);
/* The processes with names in use that no longer exist (alive says): their
 * exit was lost; their names die at ts. */
void name_store__sweep(struct name_store *s, name_store_alive_fn alive, void *ctx, uint64_t ts);
/* The records kept, back to back as in a chunk, oldest first; valid until
 * the next call that changes the store. */
const void *name_store__data(const struct name_store *s, size_t *len);
void name_store__stats(const struct name_store *s, struct name_store_stats *st);
void name_store__free(struct name_store *s);

#endif
