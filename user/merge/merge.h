/* SPDX-License-Identifier: MIT */
/*
 * `gtrace-bpf merge`: puts the GPU-side records of the CUPTI agent (spool
 * files) into a trace, each kernel, copy and set linked to the eBPF call that
 * caused it.  Two layers: a pure linking core over compact arrays
 * (merge/link.h, unit tested on its own), and the file merge that feeds it
 * from a trace and spool files and writes the merged trace (layout:
 * docs/FORMAT.md, "Merging GPU records").
 */
#ifndef GTRACE_MERGE_H
#define GTRACE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

/* The CUPTI agent's side of the contract (spool file names, magic, the stop
 * file, the environment): constants only, no CUDA headers needed. */
#include "cupti/gtrace_cupti.h"

/* The linking core: calls, API and GPU records, merge__link(). */
#include "merge/link.h"

struct merge_opts {
	const char *trace;		/* the eBPF trace */
	const char *const *spools;	/* spool files, or directories (their *.spool); none
					 * for a trace that holds them itself (cupti=inline) */
	size_t nspools;
	const char *output;		/* merged trace; may be the input trace (with force) */
	bool force;			/* replace an existing output */
	/* keep only the spool records of these processes (NULL: all) */
	bool (*want_pid)(void *ctx, uint32_t pid);
	void *want_ctx;
	struct merge_link_opts link;	/* tolerances */
};

struct merge_result {
	struct merge_link_stats link;	/* what the linker did */
	uint64_t main_records;		/* records copied from the trace */
	uint64_t spool_files;		/* spool files read */
	uint64_t spool_records;		/* records taken from them */
	uint64_t spool_cut;		/* spool files whose last record was cut short */
	uint64_t spool_bad;		/* spool records skipped: damaged or too short for their type */
	uint64_t spool_other_pids;	/* records left out by want_pid */
	uint64_t spool_refused;		/* spool files left out: not a regular file, or
					 * owned by neither root nor our euid */
	uint64_t inline_records;	/* the agent's records the trace held itself (cupti=inline:
					 * a daemon's snapshot), taken as from a spool file */
	bool trace_damaged;		/* the trace ended early; what was readable was merged */
	uint64_t outside_ranges;	/* GPU-side records left out: the trace was recorded with -c
					 * and they met none of their process' capture ranges */
	uint64_t outside_recording;	/* GPU and API records left out: their call came before the
					 * first or after the last record of their process (it ran on
					 * from before the recording, or past its end) */
};

/*
 * Merges: every record of the trace in its order (of a trace whose options
 * say cupti=inline, every record but the agent's, which are taken as from
 * one more spool file: the flight recorder's snapshots), each linked GPU record
 * right after the entry record of its call, then the GPU_API, NVTX and
 * unlinked GPU records by ts (of a trace recorded with -c, only those that
 * meet a capture range of their process: the rest are counted in
 * outside_ranges), one GT_REC_MERGE_STATS and the agents'
 * GT_REC_CUPTI_STATS (never the agent's GT_REC_CUPTI_MARK: those are for
 * a reader of live spool files).  Writes a temporary file in the output's directory
 * and renames it into place when complete.  Prints the summary line
 * (info level) and one warning line per damaged input.  Returns 0, or a
 * negative errno after one error line (then no output is left behind):
 * -ENODATA when no spool is given and the trace holds no agent records of
 * its own.  res may be NULL.
 */
int merge__run(const struct merge_opts *o, struct merge_result *res);

/* The default output name: TRACE with ".gtrace" replaced by "_merged.gtrace"
 * (appended when it has none).  malloc'd, NULL on ENOMEM. */
char *merge__default_output(const char *trace);

#endif
