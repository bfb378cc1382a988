/* SPDX-License-Identifier: MIT */
/*
 * The agents' spool files followed as they grow (every --cupti recording:
 * a file or a stage's sink alike): each complete record of an agent goes to the
 * owner (into the trace, or the stage's), what was read is given back
 * to the file system, and the agents' bounds hold because someone reads.
 *
 * Where reading starts: a spool file is read from its start; one that was
 * there before this recording (its program runs on from an earlier one, whose
 * recorder may have been killed) from where that recorder stopped reading --
 * it gave back exactly what it read, so the file's first non-zero bytes are
 * the first record it did not take (cupti/gtrace_cupti.h) -- and records from
 * before this recording's start are left out, counted.  Spool files of
 * programs that ended while no recorder read them are removed, said once.
 *
 * Bounds: at most SPOOL_POLL_BYTES read per poll (SPOOL_FILE_BYTES from one
 * file, in SPOOL_READ_BYTES reads), SPOOL_DRAIN_BYTES for a drain (a snapshot
 * holds the loop a few ms however far behind the reading is); what was read
 * is given back once SPOOL_PUNCH_MIN of it accumulated, so a spool holds on
 * disk what is not read yet plus less than that; a program that writes faster
 * than the recorder reads loses what is more than SPOOL_BACKLOG_MAX behind
 * (skipped to the agent's next flush mark, counted) -- its agent stops writing
 * beyond GT_CUPTI_SPOOL_MAX_DEFAULT unread on its own.  A spool whose process
 * is gone is removed once read to its end.
 */
#ifndef GTRACE_CUPTI_FOLLOW_H
#define GTRACE_CUPTI_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/gtrace_events.h"

#define SPOOL_READ_BYTES	(1u << 20)	/* one read */
#define SPOOL_FILE_BYTES	(4u << 20)	/* read from one spool file per poll */
#define SPOOL_POLL_BYTES	(16u << 20)	/* ... from all of them */
#define SPOOL_BACKLOG_MAX	(64u << 20)	/* unread bytes a spool may hold; beyond, skipped */
#define SPOOL_RESYNC_BYTES	(8u << 20)	/* ... to this much before its end */
#define SPOOL_DRAIN_BYTES	(4u << 20)	/* ... for a drain */
#define SPOOL_PUNCH_MIN		(256u << 10)	/* read bytes given back once this many */
#define SPOOL_SCAN_NS		1000000000ull	/* new files and exited processes looked for */
#define SPOOL_MAX_FILES		4096		/* spool files followed at once */
#define SPOOL_WAIT_NS		2000000000ull	/* at the end: agents get this long to hand over */
#define SPOOL_QUIET_NS		1000000000ull	/* ... or until no spool grew for this long */

struct cupti_session;
struct cupti_follow;

struct cupti_follow_opts {
	struct cupti_session *session;	/* the spool directory and what it says */
	/* whether the recording wants pid's GPU side (-p, --cgroup); NULL:
	 * every process'. A spool of a process it does not want is left alone. */
	bool (*wants)(void *ctx, pid_t pid);
	/* the user pid runs (or ran) as: a spool file of another user's (not
	 * root's, not ours) is refused; false: not known */
	bool (*owner)(void *ctx, pid_t pid, uid_t *uid);
	/* each record of an agent's, in its spool's order; *slot is the
	 * owner's, one per spool file (NULL at first) */
	void (*take)(void *ctx, void **slot, const struct gt_hdr *h);
	/* each flush mark of an agent: everything that ended before ts is
	 * taken; alive: its process still runs */
	void (*mark)(void *ctx, void **slot, uint32_t pid, uint64_t ts, bool alive);
	/* reading skipped ahead (what was held does not join what comes), or
	 * the spool is left (slot == NULL afterwards: free what it held) */
	void (*restart)(void *ctx, void **slot, uint32_t pid, bool gone);
	void *ctx;
};

/* What happened, for the summary, status and the tests. */
struct cupti_follow_counts {
	uint64_t files;		/* spool files followed */
	uint64_t processes;	/* ... followed now */
	uint64_t removed;	/* removed once read to their end (process gone) */
	uint64_t left_out;	/* refused: not a regular file of root's, ours or its process' */
	uint64_t not_wanted;	/* of processes the recording does not trace: left alone */
	uint64_t orphans;	/* of programs that ended before this recording: removed */
	uint64_t orphan_bytes;	/* ... what they held on disk */
	uint64_t records;	/* the agents' records taken */
	uint64_t before;	/* records from before this recording's start: left out */
	uint64_t bad;		/* records skipped: not the agent's types, another pid's */
	uint64_t marks;		/* flush marks read */
	uint64_t resyncs;	/* times reading skipped ahead to the next flush mark */
	uint64_t skipped;	/* bytes skipped so */
	uint64_t cut;		/* spools that ended in a record cut short (process gone) */
	uint64_t disk_bytes;	/* what the followed spools hold on disk now */
	uint64_t punched;	/* bytes given back */
	uint64_t lost_disk;	/* GPU records the agents could not write: file system full */
	uint64_t lost_backlog;	/* ... their spool held too much unread */
	uint64_t dropped;	/* ... CUPTI dropped (no buffer) */
};

/* Starts following the session's directory (its spool files there now
 * too). Returns 0 or -ENOMEM after one error line. */
int cupti_follow__new(const struct cupti_follow_opts *o, struct cupti_follow **out);
/* Once per poll: new spool files, what the known ones grew by (bounded, see
 * above); drain: what is there up to SPOOL_DRAIN_BYTES. */
void cupti_follow__poll(struct cupti_follow *f, bool drain);
/* After cupti_session__stop: reads on until every agent handed over what it
 * held (its counters came, or its process is gone), none wrote for
 * SPOOL_QUIET_NS, or SPOOL_WAIT_NS passed; removes the spool files of gone
 * processes and says what the agents lost.  (GPU work of calls made after
 * the recording's end comes too: the merge leaves it out.) */
void cupti_follow__finish(struct cupti_follow *f);
void cupti_follow__counts(const struct cupti_follow *f, struct cupti_follow_counts *c);
/* True when pid's spool was followed (its agent joined). */
bool cupti_follow__joined(const struct cupti_follow *f, uint32_t pid);
/* "key value" lines for status; returns the bytes written into buf. */
size_t cupti_follow__status(const struct cupti_follow *f, char *buf, size_t len);
void cupti_follow__free(struct cupti_follow *f);

#endif
