/* SPDX-License-Identifier: MIT */
/*
 * `gtrace-bpf merge --hosts A.gtrace B.gtrace ... -o job.gtrace`: the traces
 * of one job's hosts (each host's recorder or daemon snapshot, merged with
 * its GPU records or not) made one trace on one clock.  Each trace's
 * CLOCK_MONOTONIC is mapped onto the first's (merge/align.h: its
 * CLOCK_REALTIME pairs, then the ends of the NCCL collectives it shares with
 * the others); its records keep their order, their times moved, their
 * processes and threads numbered pid | host << GT_HOST_SHIFT (host 0's as
 * they were); one GT_REC_HOST per host says how it was aligned and how well.
 * Streams: memory holds the collectives and one chunk per input, not the
 * traces.
 */
#ifndef GTRACE_MERGE_HOSTS_H
#define GTRACE_MERGE_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "merge/align.h"

#define HOSTS_MAX	511	/* hosts in a job trace, at most: pid | host << 22 stays a positive
				 * 32-bit number (Perfetto's and JSON's pids are int32) */

struct hosts_opts {
	const char *const *traces;	/* the hosts' traces, the reference first */
	size_t n;
	const char *output;
	bool force;
};

struct hosts_result {
	size_t hosts;
	struct align_stats align;
	uint64_t records;		/* records written */
};

/* Writes the job trace and prints what the alignment found (info level).
 * Returns 0, or a negative errno after one error line (nothing left behind). */
int merge__hosts(const struct hosts_opts *o, struct hosts_result *res);

#endif
