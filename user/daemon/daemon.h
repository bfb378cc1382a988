/* SPDX-License-Identifier: MIT */
/*
 * gtrace-bpf daemon: the recorder of --all writing into a rolling window in
 * memory instead of a file, driven through record/ext.h; a control socket
 * for snapshots and status, triggers, the overhead budget, the CUPTI agents'
 * spools read live, the Prometheus endpoint.
 */
#ifndef GTRACE_DAEMON_H
#define GTRACE_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "record/record.h"

/* --trigger: a condition that writes a snapshot by itself. */
struct daemon_trigger {
	uint32_t kind;			/* enum gt_trigger_kind */
	int32_t code;			/* error=CODE: only this CUresult, -1 = any */
	uint64_t threshold_ns;		/* sync>TIME, gpu-idle>TIME: longer than this */
};

#define DAEMON_TRIGGERS_MAX 16

struct daemon_opts {
	struct record_opts rec;		/* what is recorded (--all and the shared options) */
	uint64_t window_ns;		/* --window: how much of the recording the window keeps */
	uint64_t memory;		/* --memory: the window's bound in compressed bytes */
	const char *dir;		/* --dir: where snapshots go */
	const char *log;		/* --log: stderr goes there, reopened at SIGHUP */
	struct daemon_trigger triggers[DAEMON_TRIGGERS_MAX];	/* --trigger */
	size_t ntriggers;
	uint64_t post_ns;		/* --post: a triggered snapshot waits this long after it */
	double budget;			/* --budget: keep the estimated overhead under this
					 * fraction (light mode), 0 = estimate only */
	const char *metrics;		/* --metrics ADDR, NULL = none */
	bool metrics_remote;		/* --metrics-remote */
	uint64_t attach_cupti_ns;	/* --attach-cupti: a trigger with a process loads the CUPTI
					 * agent into it for this long (its snapshot after), 0 = no */
};

/* The defaults of a daemon (--all, light mode, 60 s window ...) into o. */
void daemon_opts__init(struct daemon_opts *o);
/* Runs until SIGTERM or SIGINT. Returns the process exit status (0, or 1
 * after one error line). */
int daemon__run(struct daemon_opts *o);

#endif
