/* SPDX-License-Identifier: MIT */
/*
 * gtrace-bpf daemon --cupti: the spool files of the programs that joined
 * with the CUPTI agent are followed as they grow (record/cupti_follow.h: its
 * bounds), each complete record of the agent's put into the window like the
 * recorder's own, so that snapshots hold kernels (with their names), copies,
 * sets, CUPTI's API records and NVTX too; the merge of each snapshot links
 * them to their calls (merge/, on the snapshot writer's thread).  The agent's
 * flush marks drive the gpu-idle trigger (daemon/gpu_idle.h).  The records
 * live as long as the window keeps them (--window, --memory).
 */
#ifndef GTRACE_DAEMON_CUPTI_H
#define GTRACE_DAEMON_CUPTI_H

#include <stdbool.h>
#include <stddef.h>

struct daemon;
struct daemon_cupti;

/* Once the window exists and the run directory is ours (recorder__cupti):
 * follows the spool files in it. Returns 0 or -ENOMEM after one error line. */
int daemon_cupti__new(struct daemon *d);
/* Once per poll: new spool files, what the known ones grew by (bounded);
 * drain: before a snapshot, what is there up to SPOOL_DRAIN_BYTES. */
void daemon_cupti__poll(struct daemon *d, bool drain);
/* The snapshot raw, complete (written next to path by daemon/snap_writer,
 * on whose thread this runs; snap_job.finish, ctx unused): merged into path,
 * or put there as it is when the merge fails. Returns 0 or a negative
 * errno; raw is gone afterwards. */
int daemon_cupti__finish_snapshot(void *ctx, const char *raw, const char *path);
/* "key value" lines for status; returns the bytes written into buf. */
size_t daemon_cupti__status(const struct daemon *d, char *buf, size_t len);
/* The agents asked to hand over and pause, what they held read into the
 * window, the spool files of exited processes removed, the session ended
 * (the agents stay armed for the next recorder). Nothing when d->dcupti is
 * NULL. */
void daemon_cupti__free(struct daemon *d);

#endif
