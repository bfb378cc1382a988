/* SPDX-License-Identifier: MIT */
/*
 * The linking core of `gtrace-bpf merge` (merge.h): which eBPF call caused
 * each GPU kernel, copy and set, over compact arrays the file merge builds.
 * Pure: no files, no logging; unit tested on its own.
 */
#ifndef GTRACE_MERGE_LINK_H
#define GTRACE_MERGE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

/* Linking tolerances (merge_link_opts, 0 = these). */
#define MERGE_TOLERANCE_NS	2000ull		/* CUPTI API start vs eBPF [entry, exit], both ways */
#define MERGE_NO_EXIT_WINDOW_NS	1000000ull	/* calls without exit: entry at most this before */
#define MERGE_NO_EXIT_LATEST_NS	1000000000ull	/* ... or this, for the thread's latest call by
						 * then: it is still in it (preempted inside) */

#define MERGE_NO_CALL		UINT32_MAX	/* merge_gpu.call of an unlinked record */

/* What an eBPF call can have caused on the GPU. */
enum merge_call_kind {
	MERGE_CALL_NONE = 0,	/* no GPU work: not indexed */
	MERGE_CALL_LAUNCH,	/* cuLaunchKernel*, cuLaunchCooperativeKernel*: one kernel */
	MERGE_CALL_GRAPH,	/* cuGraphLaunch*: any number of kernels, copies, sets */
	MERGE_CALL_COPY,	/* cuMemcpy* (also 2D/3D): copies */
	MERGE_CALL_SET,		/* cuMemset*: sets */
};

/* One eBPF call that may have caused GPU work. */
struct merge_call {
	uint64_t entry;		/* entry ts (CLOCK_MONOTONIC ns) */
	uint64_t exit;		/* exit ts, when has_exit */
	uint32_t pid, tid;	/* process, calling thread */
	uint8_t kind;		/* enum merge_call_kind */
	uint8_t has_exit;	/* an exit was recorded (not with --no-launch-exit) */
	uint8_t failed;		/* the exit returned an error: no GPU work expected */
	uint8_t captured;	/* output: it made a CUDA graph's node (stream capture): its
				 * GPU work comes with the graph's launches */
	uint32_t nlinked;	/* output: GPU records linked to it */
	uint64_t shape;		/* launch: merge__shape of its dims; copy: bytes; 0 = unknown */
	uint64_t stream;	/* launch: the stream handle */
	uint32_t stack;		/* its stack (GT_REC_STACK id), 0 = none */
	uint32_t _pad;		/* explicit padding */
};

/* A CUDA graph's kernel node made or cloned (GT_REC_GPU_GRAPH_NODE). */
struct merge_node {
	uint64_t node;		/* CUPTI's node id */
	uint64_t original;	/* cloned: the node it is a clone of; 0 = made */
	uint64_t ts;		/* made: inside the call that made it, on tid */
	uint32_t pid, tid;
	uint32_t call;		/* output (made nodes): the call that made it, MERGE_NO_CALL */
	uint32_t _pad;		/* explicit padding */
};

/* One GT_REC_GPU_API record: joins GPU records (by correlation) to a thread
 * and CPU interval. */
struct merge_api {
	uint64_t start;		/* CPU start of the driver call per CUPTI */
	uint64_t dur;		/* its CPU duration */
	uint64_t loc;		/* where the record is; the linker does not look at it */
	uint32_t pid, tid;	/* process, system thread id */
	uint32_t correlation;	/* CUPTI correlation id */
	uint32_t _pad;		/* explicit padding */
};

/* One GPU kernel, copy or set. */
struct merge_gpu {
	uint64_t ts;		/* start on the GPU */
	uint64_t loc;		/* where the record is; the linker does not look at it */
	uint32_t pid;		/* process */
	uint32_t correlation;	/* CUPTI correlation id */
	uint32_t call;		/* output: index of the linked call, MERGE_NO_CALL */
	uint16_t type;		/* GT_REC_GPU_KERNEL, _MEMCPY or _MEMSET */
	uint16_t flags;		/* output: GT_GPU_* */
	uint32_t stream;	/* CUPTI stream id */
	uint64_t shape;		/* kernel: merge__shape of its dims; copy: bytes; 0 = unknown */
};

struct merge_link_opts {
	uint64_t tolerance_ns;		/* 0 = MERGE_TOLERANCE_NS */
	uint64_t no_exit_window_ns;	/* 0 = MERGE_NO_EXIT_WINDOW_NS */
	bool partial_calls;		/* calls recorded in capture ranges or light-mode windows
					 * only: a thread's latest recorded call is not the one it
					 * is in later (no MERGE_NO_EXIT_LATEST_NS) */
};

struct merge_link_stats {
	uint64_t gpu_records;		/* kernels, copies and sets given */
	uint64_t linked;		/* linked to an eBPF call */
	uint64_t unmatched_gpu;		/* not linked (no_api included) */
	uint64_t unmatched_calls;	/* calls of agent processes with no GPU record (see merge/link.c) */
	uint64_t causality;		/* linked, but started on the GPU before the call's entry */
	uint64_t no_api;		/* no GT_REC_GPU_API of their (pid, correlation) in a
					 * process that has API records (lost) */
	uint64_t by_order;		/* of the linked, linked by launch order (no API record) */
	uint64_t duplicates;		/* extra GPU records on a single-kernel launch */
	uint64_t processes;		/* distinct pids among the API and GPU records */
	uint64_t captured_calls;	/* launches that made a CUDA graph's node (not counted in
					 * unmatched_calls: their work is the graph's) */
	uint64_t graph_kernels;		/* kernels a CUDA graph ran (the writer counts them) */
	uint64_t graph_traced;		/* ... traced back to the launch whose capture made the node */
	uint64_t clock_fixed;		/* processes whose GPU records were moved (merge__clock_fit) */
	uint64_t clock_busy;		/* ... of them, from the few kernels that started at once on
					 * a GPU busy most of the time (merge_clock_fit's low) */
	uint64_t clock_scattered;	/* ... of those, from quick starts scattered by a GPU shared
					 * in time slices (merge_clock_fit's scattered) */
	int64_t clock_max_shift_ns;	/* ... the largest move, of clock_pid's */
	double clock_rate;		/* ... clock_pid's drift, ns a ns (floor change) */
	uint32_t clock_pid;		/* ... the process moved the most */
};

/* The GPU clock's drift against the host's in one process, fitted on its
 * linked single-kernel launches (merge/gpu_clock.c): the delay from a
 * launch's entry to its kernel's start has a floor (the launch latency)
 * that only the drift moves. */
struct merge_clock_fit {
	uint32_t pid;
	bool fixed;		/* a clear drift: merge__clock_apply moves the records */
	uint64_t pairs;		/* launches with their one kernel */
	uint64_t segments;	/* stretches with a floor */
	int64_t t0;		/* the first launch's entry */
	int64_t span_ns;	/* to the last */
	double slope;		/* the floor's change, ns a ns */
	double floor0;		/* its value at t0, ns */
	double resid_ns;	/* the floors' median distance from the line */
	bool scattered;		/* the floors' low quantile's line (a time-sliced GPU:
				 * see gpu_clock.c), taken only where it falls below 0 */
	bool low;		/* the floors taken as each stretch's second-least delay
				 * (a GPU busy most of the time) */
	double drift_ns;	/* slope * span */
	int64_t max_shift_ns;	/* merge__clock_apply: the largest move */
};

/* Fits gpu[idx[0..n)) (one process' records, linked) to calls. -ENOMEM or 0. */
int merge__clock_fit(const struct merge_call *calls, const struct merge_gpu *gpu, const uint32_t *idx, size_t n,
		     struct merge_clock_fit *out);
/* A fixed fit: each record's ts moved back onto the host's clock, flagged
 * GT_GPU_CLOCK_FIXED. */
void merge__clock_apply(struct merge_gpu *gpu, const uint32_t *idx, size_t n, struct merge_clock_fit *f);

/* Launch dims as one number to compare a kernel with its launch; never 0. */
static inline uint64_t merge__shape(const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 3; i++)
		h = (h ^ grid[i]) * 1099511628211ull, h = (h ^ block[i]) * 1099511628211ull;
	return h ? h : 1;
}

/* merge__shape when every dim is known (a CUDA dim is never 0), else 0. */
static inline uint64_t merge__shape_known(const uint32_t grid[3], const uint32_t block[3])
{
	for (int i = 0; i < 3; i++)
		if (!grid[i] || !block[i])
			return 0;
	return merge__shape(grid, block);
}

/*
 * CUDA graphs: each made node of nodes[] to the launch call on its (pid,
 * tid) whose [entry, exit] holds its ts (within tolerance_ns; a call without
 * exit holds it up to no_exit_window_ns after its entry), which is marked
 * captured.  Call before merge__link, which then counts captured calls in
 * captured_calls, not as launches without GPU work.  Sorts nodes[] by (pid,
 * node) for merge__node_call.  Returns 0 or -ENOMEM.
 */
int merge__link_nodes(struct merge_call *calls, size_t ncalls, struct merge_node *nodes, size_t nnodes,
		      const struct merge_link_opts *o);

/* The call whose capture made pid's node, following clones back to the
 * node made (at most a few steps); MERGE_NO_CALL when not known.  nodes[]
 * as merge__link_nodes left it. */
uint32_t merge__node_call(const struct merge_node *nodes, size_t nnodes, uint32_t pid, uint64_t node);

/* The kind of call a libcuda api is (enum gt_api). */
enum merge_call_kind merge__call_kind(unsigned api);

/*
 * Links every GPU record to the eBPF call that caused it:
 *  1. its GT_REC_GPU_API by (pid, correlation); none: no_api and unmatched
 *     in a process with API records, step 3 in a process without any;
 *  2. on the API record's (pid, tid), among calls of a compatible kind
 *     (kernel <- launch or graph, copy <- copy or graph, set <- set or
 *     graph), the call whose [entry, exit] holds the API start within
 *     tolerance_ns either way, the nearest when several do (ties: the latest
 *     entry); a call without exit holds it when its entry is at most
 *     no_exit_window_ns before (or tolerance_ns after) the start, or
 *     MERGE_NO_EXIT_LATEST_NS before when it is the thread's latest call
 *     entered by then (the thread is still inside it: kept off the CPU
 *     between the probe and CUPTI's callback) and the trace has every call
 *     (not partial_calls).
 *  3. records of processes without API records (GTRACE_CUPTI_API=none), by
 *     order: a process' GPU records in correlation order (CUPTI numbers the
 *     driver calls as they are entered) against its calls not linked in
 *     step 2 in entry order; each correlation takes the first call still
 *     free, of a compatible kind, entered no later than the GPU start (+
 *     tolerance), whose shape fits (kernel: the launch's dims; copy: no more
 *     bytes than the call's) and whose stream maps to the record's CUPTI
 *     stream as earlier links taught (preferred, not required), and that
 *     is not older than a linked call of its thread; a call falls out of
 *     the search once a call entered ORDER_RACE_NS after it is linked.
 * Fills gpu[].call and gpu[].flags (LINKED, API_MATCHED, BY_ORDER, CAUSALITY) and
 * calls[].nlinked.  Sorts apis[] in place (by pid, correlation); calls[] and
 * gpu[] keep their order.  Returns 0 or -ENOMEM.
 */
int merge__link(struct merge_call *calls, size_t ncalls, struct merge_api *apis, size_t napis,
		struct merge_gpu *gpu, size_t ngpu, const struct merge_link_opts *opts,
		struct merge_link_stats *st);

#endif
