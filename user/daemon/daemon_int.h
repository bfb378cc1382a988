/* SPDX-License-Identifier: MIT */
/*
 * Internal to the daemon stage: its state, shared by daemon.c (the window,
 * snapshots, the control socket), status.c (what status says), trigger.c
 * and daemon_cupti.c. The recorder it drives is opaque (record/ext.h).
 */
#ifndef GTRACE_DAEMON_INT_H
#define GTRACE_DAEMON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "daemon/daemon.h"
#include "format/trace_file.h"
#include "lib/u64map.h"
#include "record/ext.h"

#define SNAP_JOBS_MAX	4	/* snapshots queued or being written at once */

/* The triggers (trigger.c). */
struct trigger_ctl {
	struct u64map sync_entry;	/* (tid, api) -> entry ts of a sync call in flight */
	uint32_t pending_kind;		/* a trigger waiting for --post, 0 = none */
	uint64_t due;			/* when its snapshot is taken */
	uint64_t last_snap;		/* when the last triggered snapshot was taken */
	uint64_t fired, suppressed;	/* triggers seen; of them, rate-limited */
	uint32_t since_last;		/* suppressed since the last trigger record */
	uint32_t attach_pid;		/* --attach-cupti: the pending trigger's attached process */
};

struct daemon {
	const struct daemon_opts *o;
	struct recorder *r;		/* the recording it drives (from ext->open on) */
	struct record_ext ext;		/* its hooks into it */
	struct control *ctl;		/* the control socket */
	struct chunk_ring *ring;	/* the window the trace writer's chunks go to */
	struct gt_file_info info;	/* the header, for snapshots */
	uint64_t start;			/* when the window started */
	uint64_t snapshots;		/* snapshots written */
	uint64_t snapshots_failed;	/* snapshots not written (a full disk, a name taken) */
	uint64_t procs_exited;		/* of the processes seen, the exits seen */
	struct snap_writer *snapw;	/* the thread that writes them */
	unsigned snaps_inflight;	/* asked for, not yet collected from snapw */
	bool stall_in_snap;		/* this pass of the loop took or waited on one */
	uint64_t drained;		/* when the loop last drained the ring buffer, 0 = not yet */
	uint64_t stall_max_ns;		/* the loop's longest time between two drains of
					 * the ring buffer (not counting its waits) */
	uint64_t stall_snap_max_ns;	/* ... in passes with a snapshot asked or written */
	struct name_store *names_kept;	/* the name records snapshots start with (name_store.h) */
	uint64_t names_lost_said;	/* of its lost records, those a warning has counted */
	uint64_t names_warned_at;	/* when the last warning of lost names was given */
	uint64_t names_swept_at;	/* when the exits it waits for were last checked */
	struct trigger_ctl trig;	/* --trigger */
	struct budget *bud;		/* the overhead budget (budget/budget.c), NULL = none */
	struct daemon_cupti *dcupti;	/* --cupti: the agents' spool files read live */
	struct daemon_attach *att;	/* the agent loaded into running processes (attach.c),
					 * NULL until the first attach */
	struct gt_metrics *metrics;	/* --metrics: the aggregator, NULL = none */
	struct metrics_http *http;	/* ... and its endpoint */
};

/* Takes the window (its last last_ns, or pid's records; 0 = all) for the
 * snapshot writer, which writes it to out, or to system_WHAT_{date}_vN.gtrace
 * in --dir, and logs the outcome. Returns 0 when queued, or a negative errno
 * (-EBUSY: too many being written). */
int daemon__snapshot(struct daemon *d, const char *what, uint64_t last_ns, uint32_t pid, const char *out);

/* status (status.c): the "key value" lines after "ok" into buf. */
size_t daemon__status(struct daemon *d, char *buf, size_t len);
/* The metrics endpoint's figures, once per poll (status.c). */
void daemon__metrics_poll(struct daemon *d);
size_t daemon__reply(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The CUPTI agent into a running process for dur_ns (attach.c): started on
 * a thread of its own (0; client, not 0, gets the reply then), or not (a
 * negative errno and why). */
int attach__request(struct daemon *d, pid_t pid, uint64_t dur_ns, uint64_t client, char *why, size_t len);
/* From the loop: an attach's outcome taken, the agents due detached. */
void attach__poll(struct daemon *d);
/* Whether pid is being attached, is attached, or a detach is settling. */
bool attach__busy(const struct daemon *d, pid_t pid);
size_t attach__status(const struct daemon *d, char *buf, size_t len);
/* At the end: every attached agent asked to detach. */
void attach__free(struct daemon *d);

/* Triggers (trigger.c): installed at the start, fed every record from BPF,
 * polled from the loop (fires SIGUSR1's, takes due snapshots). */
void trigger__start(struct daemon *d);
void trigger__on_record(struct daemon *d, const struct gt_hdr *h);
void trigger__poll(struct daemon *d);
void trigger__free(struct daemon *d);
/* gpu-idle>TIME: its threshold, 0 when not asked for. */
uint64_t trigger__gpu_idle_threshold(const struct daemon *d);
/* A gap of idle_ns up to ts in pid's GPU records (daemon_cupti.c): fires
 * gpu-idle. */
void trigger__on_gpu_idle(struct daemon *d, uint32_t pid, uint64_t ts, uint64_t idle_ns);

#endif
