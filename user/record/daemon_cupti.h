/* SPDX-License-Identifier: MIT */
/*
 * gtrace-bpf daemon --cupti: the spool files of the programs that joined
 * with the CUPTI agent (the run directory, record/cupti_session.h, asks their
 * agents for live spooling) are read as they grow, each complete record of
 * the agent's put into the window like the recorder's own, so that snapshots
 * hold kernels (with their names), copies, sets, CUPTI's API records and NVTX
 * too; the merge of each snapshot links them to their calls (the owner's
 * record_hooks.on_snapshot).  The agent's flush marks drive the gpu-idle
 * trigger (record/gpu_idle.h).
 *
 * Bounds: at most SPOOL_POLL_BYTES read per poll (SPOOL_FILE_BYTES from one
 * file, in SPOOL_READ_BYTES reads), SPOOL_DRAIN_BYTES before a snapshot
 * (on the recording loop, like a poll: a snapshot holds the loop a few ms
 * however far behind the reading is, and what is not read then is read by
 * the next polls, in the window for the next snapshot);
 * what was read is given back to the file system (holes punched: the file
 * keeps its size, not its blocks), so a spool holds on disk what is not read
 * yet plus less than SPOOL_PUNCH_MIN + a page; a program that writes faster
 * than the daemon reads loses what is more than SPOOL_BACKLOG_MAX behind
 * (skipped, counted), so that is the most a spool holds; a spool whose
 * process is gone, or whose agent stopped, is removed once read to its end.
 * The records themselves live as long as the window keeps them (--window,
 * --memory).
 */
#ifndef GTRACE_DAEMON_CUPTI_H
#define GTRACE_DAEMON_CUPTI_H

#include <stdbool.h>
#include <stddef.h>

#define SPOOL_READ_BYTES	(1u << 20)	/* one read */
#define SPOOL_FILE_BYTES	(4u << 20)	/* read from one spool file per poll */
#define SPOOL_POLL_BYTES	(16u << 20)	/* ... from all of them */
#define SPOOL_BACKLOG_MAX	(64u << 20)	/* unread bytes a spool may hold; beyond, skipped */
#define SPOOL_RESYNC_BYTES	(8u << 20)	/* ... to this much before its end */
#define SPOOL_DRAIN_BYTES	(4u << 20)	/* ... before a snapshot */
#define SPOOL_PUNCH_MIN		(256u << 10)	/* read bytes given back once this many */
#define SPOOL_SCAN_NS		1000000000ull	/* new files and exited processes looked for */
#define SPOOL_MAX_FILES		4096		/* spool files followed at once */

struct recorder;
struct daemon_cupti;
struct record_hooks;

/* Once the window exists and the run directory is ours (r->cupti): takes
 * over the spool files in it. Returns 0 or -ENOMEM after one error line. */
int daemon_cupti__new(struct recorder *r);
/* Once per poll: new spool files, what the known ones grew by (bounded, see
 * above); drain: before a snapshot, what is there up to SPOOL_DRAIN_BYTES. */
void daemon_cupti__poll(struct recorder *r, bool drain);
/* The snapshot raw, complete (written next to path by record/snap_writer,
 * on whose thread this runs): merged into path by the owner's hook
 * (record_hooks.on_snapshot, may be NULL) or put there as it is when the
 * merge fails or there is none. Returns 0 or a negative errno; raw is gone
 * afterwards. */
int daemon_cupti__finish_snapshot(const struct record_hooks *h, const char *raw, const char *path);
/* "key value" lines for status; returns the bytes written into buf. */
size_t daemon_cupti__status(const struct recorder *r, char *buf, size_t len);
/* Stops following, removes the spool files and the run directory (its agents
 * stop). Nothing when r->dcupti is NULL. */
void daemon_cupti__free(struct recorder *r);

#endif
