/* SPDX-License-Identifier: MIT */
/*
 * The daemon's snapshot writer: one thread that writes, in the order asked,
 * the snapshots the recording loop took (chunk_ring__snap_take: references,
 * under the ring's lock for a moment), so that compressing and writing a
 * window of any size, to a disk of any speed, never holds the loop. The
 * loop collects the finished jobs (a path, or an error) to answer its
 * clients and to log. A job's finish step (the daemon --cupti merge) runs
 * on the writer's thread too.
 */
#ifndef GTRACE_SNAP_WRITER_H
#define GTRACE_SNAP_WRITER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "format/chunk_ring.h"
#include "format/trace_file.h"

/* One snapshot to write. The asker fills the first part and gives the job
 * (what it points to included) to snap_writer__submit; the writer fills the
 * rest. Free with snap_job__free. */
struct snap_job {
	uint64_t client;		/* control client waiting for the reply, 0 = none (a trigger) */
	char what[32];			/* a default name says it: system_WHAT_{date}_vN.gtrace */
	const char *dir;		/* ... in this directory (must outlive the writer) */
	char *out;			/* malloc'd -o path, NULL = a default name */
	struct chunk_ring_snap *snap;	/* the chunks, referenced */
	struct chunk_ring_snap_opts o;	/* pid, force, chunk settings; preamble (malloc'd, owned) */
	struct gt_file_info info;	/* the header; options malloc'd (owned), the other
					 * strings must outlive the writer */
	struct gt_trailer trailer;	/* the counters when it was asked */
	uint64_t asked_ns;		/* CLOCK_MONOTONIC ns when it was asked */
	uint64_t loop_ns;		/* what asking for it held the recording loop, ns */
	/* NULL: the chunks are written at the path. Otherwise they go to a
	 * temporary name next to it first (".NAME.unmerged"), and finish,
	 * called on the writer's thread, makes the file at path from it (the
	 * daemon --cupti merge) and removes raw: 0 or -errno. */
	int (*finish)(void *ctx, const char *raw, const char *path);
	void *finish_ctx;		/* must outlive the writer */
	/* filled by the writer: */
	int err;			/* 0, or -errno: not written, nothing left of it;
					 * -ECANCELED: stopped before its turn */
	char path[PATH_MAX];		/* where it went (or was to go, "" when no name
					 * could be made) */
	struct chunk_ring_snap_stats st;/* what it wrote (on success) */
	uint64_t done_ns;		/* when it was done */
	struct snap_job *next;		/* the writer's queues */
};

struct snap_writer;

/* Starts the thread (with every signal blocked: they are the loop's; at
 * nice 10, below the loop).
 * max_jobs bounds the jobs queued or being written. 0 or -errno. */
int snap_writer__new(unsigned max_jobs, struct snap_writer **out);
/* Queues j: 0 (the writer owns it until snap_writer__done gives it back),
 * or -EBUSY when max_jobs are queued already (j stays the caller's). */
int snap_writer__submit(struct snap_writer *w, struct snap_job *j);
/* A finished job, the oldest first (the caller frees it), NULL when none. */
struct snap_job *snap_writer__done(struct snap_writer *w);
/* Jobs queued or being written. */
unsigned snap_writer__busy(struct snap_writer *w);
/* Cancels what has not started (-ECANCELED, given back by
 * snap_writer__done), waits for the job being written and ends the thread. */
void snap_writer__stop(struct snap_writer *w);
/* Stops the writer, frees it and the jobs not collected. */
void snap_writer__free(struct snap_writer *w);
void snap_job__free(struct snap_job *j);

#endif
