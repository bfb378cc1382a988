/* SPDX-License-Identifier: MIT */
/*
 * Internal to `gtrace-bpf dump`: what its files share. dump.c reads the
 * trace, writes the JSON lines and counts what --summary shows;
 * dump_summary.c prints the summary's table and sections from the counts.
 */
#ifndef GTRACE_DUMP_INT_H
#define GTRACE_DUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "export/dump.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/obuf.h"


/* Per-api totals of --summary. */
struct api_sum {
	uint64_t calls;		/* calls emitted, incomplete ones included */
	uint64_t failed;	/* calls that returned non-zero */
	uint64_t incomplete;	/* calls whose exit was not recorded */
	uint64_t entry_only;	/* launches recorded at entry only (no exit by design) */
	uint64_t dur;		/* sum of dur of calls with an exit, ns */
};

/* The calls of one device, for --summary (decode/devices.c says how a
 * call's device is known); index 0 of struct dump's array is for the calls
 * whose device the trace did not show. */
struct dev_sum {
	uint64_t launches;	/* launch calls */
	uint64_t copies;	/* copy calls */
	uint64_t copy_bytes;	/* their bytes */
	uint64_t peer;		/* of which peer copies (kind PtoP) issued on this device */
	uint64_t peer_bytes;	/* their bytes */
	uint64_t sets, syncs, allocs;	/* memset, sync and alloc/free calls */
};

/* Per NCCL api totals of --summary. */
struct nccl_sum {
	uint64_t calls, failed, incomplete;
	uint64_t dur;		/* of the calls with an exit that did not fail, ns */
	uint64_t bytes;		/* what the data calls named (count x element size) */
};

/* One process' CUPTI agent counters (GT_REC_CUPTI_STATS), for --summary. */
struct cupti_sum {
	uint32_t pid;
	struct gt_cupti_stats st;	/* the latest record of the pid */
};

/* GPU records of a merged trace, for --summary. */
struct gpu_sum {
	uint64_t n[3];		/* kernels, copies, sets */
	uint64_t dur[3];	/* their total duration on the GPU, ns */
	uint64_t linked;	/* of all three, linked to their call */
	uint64_t causality;	/* linked, started before their call */
	uint64_t nvtx;		/* NVTX ranges and marks */
	uint64_t nvtx_dur;	/* their total duration, ns */
	uint64_t api;		/* GT_REC_GPU_API records (merger input) */
	bool merged;		/* a GT_REC_MERGE_STATS was seen: merge holds the last */
	struct gt_merge_stats merge;
	struct cupti_sum *cupti;	/* per process, in order of first record */
	size_t ncupti, capcupti;
};

/* The libcuda loads of --summary (GT_REC_LIBLOAD): every one counted, the
 * first LOADS_KEPT listed. */
#define LOADS_KEPT 32

struct load_kept {
	/* the record's fixed part (a struct with a flexible array cannot be
	 * a member), then its path (BPF reports at most 256 bytes) */
	_Alignas(8) unsigned char rec[sizeof(struct gt_libload)];
	char path[256];
};

struct load_sum {
	uint64_t n[GT_LL__COUNT + 1];	/* by outcome, the last unknown ones */
	uint64_t held_ns_sum, held_ns_max;	/* the holds' stop to continuation */
	struct load_kept kept[LOADS_KEPT];
	size_t nkept;
	uint64_t all;			/* loads in all */
	uint64_t gaps;			/* of them, those that left a gap */
};

struct dump {
	const struct dump_opts *o;
	struct gt_decoder *d;	/* names of GPU kernels */
	struct obuf ob;
	struct gpu_sum gpu;
	struct api_sum sums[GT_API__COUNT];
	uint64_t proc_events;	/* exec/fork/exit/seen records (summary) */
	uint64_t ioctls;	/* ioctl records (summary) */
	uint64_t ioctls_failed;	/* of which returned an error */
	uint64_t ioctl_dur;	/* their total duration, ns */
	uint64_t offcpu;	/* off-CPU intervals (summary) */
	uint64_t offcpu_dur;	/* their total duration, ns */
	struct capture_spans *cap;	/* capture ranges and windows (summary) */
	uint64_t capture_records;	/* GT_REC_RANGE and GT_REC_CAPTURE records (summary) */
	uint64_t triggers[GT_TRIG_LAST + 2];	/* GT_REC_TRIGGER by kind, the last unknown ones (summary) */
	uint64_t overhead[GT_OVH__COUNT + 1];	/* GT_REC_OVERHEAD by reason, the last unknown ones (summary) */
	uint64_t gpu_metrics[GT_GPUM_MAX + 1];	/* GT_REC_GPU_METRIC by metric, the last unknown ones (summary) */
	struct dev_sum *devs;	/* [0] device unknown, [1 + N] device N (summary) */
	struct nccl_sum nccl[GT_NCCL_API__COUNT];	/* by enum gt_nccl_api (summary) */
	size_t ndevs, capdevs;
	struct load_sum *loads;	/* libcuda loads (summary), NULL until the first */
	uint64_t stacks;	/* GT_REC_STACK records (summary) */
};

/* --summary (dump_summary.c): the per-api table, the counters and the
 * sections of what dp counted, to the output of dp->o. */
void dump__print_summary(struct dump *dp, struct trace_reader *r, const struct gt_decoder *d);

#endif
