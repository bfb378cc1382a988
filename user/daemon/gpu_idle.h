/* SPDX-License-Identifier: MIT */
/*
 * The GPU idle detector of `gtrace-bpf daemon --trigger gpu-idle>TIME`: one
 * process' CUPTI records, fed as they come from its spool file, give the
 * gaps in which its GPU ran none of its kernels, copies or sets for longer
 * than the threshold.  Pure: no I/O and no clock; time is what the records
 * say (CLOCK_MONOTONIC ns, the agent's clock and BPF's).
 *
 * Records come late (the agent hands them over at its flushes) and out of
 * time order (CUPTI fills a buffer per thread), so nothing is decided as
 * they come.  At each of the agent's flush marks (GT_REC_CUPTI_MARK, at W:
 * what ended before W has been handed over) the activities received since
 * the last mark are taken in start order, after every earlier one:
 *   - busy_until: the latest end of any activity so far;
 *   - a submission: a driver API record (GT_REC_GPU_API: a launch, copy or
 *     set call) whose GPU record has not come: its work is queued or still
 *     running (a kernel's record comes when it ends), so the GPU counts as
 *     busy from the call's start up to W, for at most GPU_IDLE_PENDING_MAX_NS
 *     (a call that made no GPU work, a lost record);
 *   - a closed gap: an activity that starts more than the threshold after
 *     busy_until (cut short by a submission in between);
 *   - an open gap: at W, busy_until is more than the threshold ago, no
 *     submission since (or only after the threshold), and the process lives.
 * Each gap is reported once: a gap that starts before the end of the last
 * one reported is that one (an open gap that closed later, a late record in
 * it).  Before the first activity nothing is reported: a process that has not
 * used its GPU yet is not idle.  Without API records (GTRACE_CUPTI_API=none)
 * a kernel that runs longer than the threshold next to shorter ones on other
 * streams may look like idle time.
 */
#ifndef GTRACE_GPU_IDLE_H
#define GTRACE_GPU_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

#define GPU_IDLE_PENDING_MAX_NS	60000000000ull	/* a submission counts as busy this long at most */
#define GPU_IDLE_BATCH_MAX	(1u << 20)	/* activities held waiting for a mark, at most */
#define GPU_IDLE_PENDING_CAP	65536u		/* submissions held, at most */

struct gpu_idle;

/* A gap found. */
struct gpu_idle_gap {
	uint64_t start;		/* busy_until when it began: the end of the GPU's last activity */
	uint64_t end;		/* what it was measured up to: the next start or submission, or W */
	bool open;		/* still idle at the mark (end = W) */
};

/* What the detector saw, for status. */
struct gpu_idle_stats {
	uint64_t activities;	/* kernels, copies and sets fed */
	uint64_t marks;		/* flush marks */
	uint64_t gaps;		/* gaps reported */
	uint64_t pending;	/* submissions without their GPU record now */
	uint64_t expired;	/* submissions that never got one (GPU_IDLE_PENDING_MAX_NS) */
	uint64_t overflow;	/* submissions not held (GPU_IDLE_PENDING_CAP reached) */
	uint64_t unmarked;	/* batches settled without a mark (GPU_IDLE_BATCH_MAX reached) */
};

/* threshold_ns > 0. NULL when out of memory. */
struct gpu_idle *gpu_idle__new(uint64_t threshold_ns);
void gpu_idle__free(struct gpu_idle *g);

/* One record of the process: kernels, copies, sets and driver API records
 * are taken (size-checked by the caller), the rest ignored.  Returns 0 or
 * -ENOMEM. */
int gpu_idle__feed(struct gpu_idle *g, const struct gt_hdr *h);

/* The agent's flush mark at w: settles what was fed since the last one and
 * writes the gaps found (not reported before) to out, at most max (> 0) of
 * them (more are counted in gaps, not written);
 * alive: the process still runs (an open gap is only one of a live
 * process).  Returns how many, or -ENOMEM. */
int gpu_idle__mark(struct gpu_idle *g, uint64_t w, bool alive, struct gpu_idle_gap *out, size_t max);

void gpu_idle__stats(const struct gpu_idle *g, struct gpu_idle_stats *st);

#endif
