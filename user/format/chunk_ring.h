/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder's memory: the latest complete chunks of a recording
 * (as a sink writer makes them, trace_writer__create_sink), bounded in bytes
 * and in time, the oldest dropped first and counted; and snapshots of them
 * written as ordinary .gtrace files while recording goes on.
 *
 * Threads: put, stats and snapshot may be called from any threads at once.
 * A snapshot holds the ring's lock only while it takes a reference on each
 * chunk it selects (a pointer copy and an atomic increment per chunk, plus
 * one allocation for the list of them); it compresses, filters and writes
 * with the lock released, so a put waits at most that long.  Chunks are
 * immutable once put, so what a snapshot writes is never torn.
 */
#ifndef GTRACE_CHUNK_RING_H
#define GTRACE_CHUNK_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/trace_file.h"

struct chunk_ring;

struct chunk_ring_opts {
	uint64_t max_bytes;	/* memory bound (see chunk_ring_stats.mem_bytes), required */
	uint64_t window_ns;	/* time bound: chunks whose last_ts is older than the newest
				 * last_ts put minus this are dropped, oldest first (from
				 * the front of the ring only); 0 = none */
};

/* What the ring holds and what it dropped, all counted at one instant. */
struct chunk_ring_stats {
	uint64_t chunks;		/* chunks held */
	uint64_t records;		/* records in them */
	uint64_t chunk_bytes;		/* their bytes as a file holds them (headers and frames) */
	uint64_t mem_bytes;		/* what counts against max_bytes: chunk_bytes plus, per
					 * chunk, its descriptor and its slot in the ring; malloc's
					 * own overhead is not counted */
	uint64_t oldest_ts;		/* first_ts of the oldest chunk held, 0 when empty */
	uint64_t newest_ts;		/* highest last_ts of any chunk put (the window ends
					 * there), 0 before the first */
	uint64_t dropped_chunks;	/* chunks dropped for any reason: */
	uint64_t dropped_records;	/*   the records in them */
	uint64_t dropped_bytes;		/*   their bytes as a file would have held them */
	uint64_t dropped_window;	/* of dropped_chunks: aged out of the window */
	uint64_t dropped_oversized;	/* of dropped_chunks: larger than max_bytes alone, never held */
};

/* Options of a snapshot: which chunks, which records, how to write them. */
struct chunk_ring_snap_opts {
	uint64_t since_ts;	/* chunks whose [first_ts, last_ts] meets [since_ts, until_ts]: */
	uint64_t until_ts;	/*   0 = no bound on that side; whole chunks (see last_ns) */
	uint64_t last_ns;	/* also: only chunks that end within last_ns of the newest
				 * last_ts put (--last 30s), taken under the lock; 0 = none */
	uint32_t pid;		/* only the records of this process (and those of no process
				 * that every reader needs), recompressed; 0 = all, verbatim */
	const void *preamble;	/* records written before the chunks, back to back as in a
				 * chunk (8-byte aligned): what the oldest chunk held needs
				 * but an older, dropped one had, like the names learned
				 * before it; filtered by pid like the rest */
	size_t preamble_len;	/* its bytes */
	bool force;		/* replace an existing regular file of ours */
	size_t chunk_bytes;	/* chunk size of the recompressed chunks, 0 = default */
	int zstd_level;		/* their zstd level, 0 = default */
};

/* What a snapshot wrote. */
struct chunk_ring_snap_stats {
	uint64_t chunks;	/* data chunks in the file */
	uint64_t records;	/* records in them */
	uint64_t bytes;		/* size of the file */
	uint64_t selected;	/* chunks of the ring that met the time selection */
	uint64_t first_ts;	/* lowest first_ts and highest last_ts of those, 0 when none */
	uint64_t last_ts;
	uint64_t lock_ns;	/* ns the snapshot held the ring's lock */
};

/* Returns 0, -EINVAL (no max_bytes) or -ENOMEM. */
int chunk_ring__new(const struct chunk_ring_opts *o, struct chunk_ring **out);

/*
 * Copies chunk[0..len) in, a complete data chunk (first_ts, last_ts and nrec
 * as its header says), then drops the oldest chunks until both bounds hold.
 * A chunk that alone needs more than max_bytes is dropped at once.  Returns
 * 0 when the chunk was taken or dropped (counted either way), -EBADMSG when
 * it is not one whole valid data chunk, -EINVAL when the arguments disagree
 * with its header, -ENOMEM.
 */
int chunk_ring__put(struct chunk_ring *ring, const void *chunk, size_t len, uint64_t first_ts,
		    uint64_t last_ts, uint32_t nrec);
/* chunk_ring__put as a trace_writer_sink_fn: ctx is the ring. */
int chunk_ring__sink(void *ctx, const void *chunk, size_t len, uint64_t first_ts,
		     uint64_t last_ts, uint32_t nrec);

void chunk_ring__stats(struct chunk_ring *ring, struct chunk_ring_stats *st);
/* The lowest first_ts of the chunks held, 0 when none: a chunk may hold
 * records older than those of the chunks before it (written late, as the
 * CUPTI agent's are), so this is the time before which the ring holds no
 * record, which oldest_ts (the first chunk's) is not. Looks at every chunk,
 * under the lock. */
uint64_t chunk_ring__min_first_ts(struct chunk_ring *ring);

/*
 * Writes path, a complete .gtrace file: a header from info (say snapshot=1
 * in its options), the preamble's records (compressed anew), the selected
 * chunks in the ring's order, verbatim (or, for a pid, their records of
 * that process recompressed), then a trailer whose
 * records and chunks count what the file holds and whose end_ts and
 * counters are trailer's (NULL: now, zero).
 *
 * The file is written under a temporary name in path's directory and renamed
 * into place once complete and on disk (lib/installer.h): a failed snapshot
 * leaves nothing under path.  path must not exist (-EEXIST) unless force;
 * with force it may only be a regular file of our user (-EPERM for a link, a
 * FIFO, a device, a directory).  Other errors: -ENOENT (no such directory),
 * -ENOMEM, I/O errors.  st, filled in on success, may be NULL.
 */
int chunk_ring__snapshot(struct chunk_ring *ring, const char *path,
			 const struct gt_file_info *info, const struct chunk_ring_snap_opts *o,
			 const struct gt_trailer *trailer, struct chunk_ring_snap_stats *st);

/*
 * A snapshot in two steps, for a writer on another thread than the one that
 * asks: chunk_ring__snap_take selects the chunks (o's since_ts, until_ts and
 * last_ns, under the lock: the only part that makes a put wait) and keeps a
 * reference on each, so that what the ring drops meanwhile stays readable;
 * chunk_ring__snap_write then writes them to path as chunk_ring__snapshot
 * does (o's pid, preamble, force and chunk settings; the selection fields
 * are not looked at again), from any thread, the ring's lock untouched; it
 * may be called after the ring is freed.  chunk_ring__snap_free lets go of
 * the references.  take returns 0, -EINVAL or -ENOMEM; write returns what
 * chunk_ring__snapshot does, and a failed write leaves nothing under path
 * nor under its temporary name.
 */
struct chunk_ring_snap;

int chunk_ring__snap_take(struct chunk_ring *ring, const struct chunk_ring_snap_opts *o,
			  struct chunk_ring_snap **out);
/* What the take selected: selected, first_ts, last_ts and lock_ns. */
const struct chunk_ring_snap_stats *chunk_ring__snap_selection(const struct chunk_ring_snap *s);
int chunk_ring__snap_write(const struct chunk_ring_snap *s, const char *path,
			   const struct gt_file_info *info, const struct chunk_ring_snap_opts *o,
			   const struct gt_trailer *trailer, struct chunk_ring_snap_stats *st);
void chunk_ring__snap_free(struct chunk_ring_snap *s);

/* Frees the ring and its chunks (those a taken snapshot still references
 * live on until it is freed); no put or take may be running. */
void chunk_ring__free(struct chunk_ring *ring);

#endif
