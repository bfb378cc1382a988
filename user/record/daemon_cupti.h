/* SPDX-License-Identifier: MIT */
/*
 * gtrace-bpf daemon --cupti: the spool files of the programs that joined
 * with the CUPTI agent are followed as they grow (record/cupti_follow.h: its
 * bounds), each complete record of the agent's put into the window like the
 * recorder's own, so that snapshots hold kernels (with their names), copies,
 * sets, CUPTI's API records and NVTX too; the merge of each snapshot links
 * them to their calls (the owner's record_hooks.on_snapshot).  The agent's
 * flush marks drive the gpu-idle trigger (record/gpu_idle.h).  The records
 * live as long as the window keeps them (--window, --memory).
 */
#ifndef GTRACE_DAEMON_CUPTI_H
#define GTRACE_DAEMON_CUPTI_H

#include <stdbool.h>
#include <stddef.h>

struct recorder;
struct daemon_cupti;
struct record_hooks;

/* Once the window exists and the run directory is ours (r->cupti): follows
 * the spool files in it. Returns 0 or -ENOMEM after one error line. */
int daemon_cupti__new(struct recorder *r);
/* Once per poll: new spool files, what the known ones grew by (bounded);
 * drain: before a snapshot, what is there up to SPOOL_DRAIN_BYTES. */
void daemon_cupti__poll(struct recorder *r, bool drain);
/* The snapshot raw, complete (written next to path by record/snap_writer,
 * on whose thread this runs): merged into path by the owner's hook
 * (record_hooks.on_snapshot, may be NULL) or put there as it is when the
 * merge fails or there is none. Returns 0 or a negative errno; raw is gone
 * afterwards. */
int daemon_cupti__finish_snapshot(const struct record_hooks *h, const char *raw, const char *path);
/* "key value" lines for status; returns the bytes written into buf. */
size_t daemon_cupti__status(const struct recorder *r, char *buf, size_t len);
/* The agents asked to hand over and pause, what they held read into the
 * window, the spool files of exited processes removed, the session ended
 * (the agents stay armed for the next recorder). Nothing when r->dcupti is
 * NULL. */
void daemon_cupti__free(struct recorder *r);

#endif
