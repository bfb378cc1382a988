/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity records -> gtrace records (bpf/gtrace_events.h).
 *
 * Pure code: no CUPTI call, no I/O, no allocation after
 * gt_cupti_conv__new(), so it runs in the agent's writer thread and in unit
 * tests without a GPU or libcupti.  Only the activity struct layouts come
 * from the toolkit's headers (CUPTI 13: CUpti_ActivityKernel10,
 * CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemset4,
 * CUpti_ActivityAPI, CUpti_ActivityMarker2).
 */
#ifndef GTRACE_CUPTI_CONVERT_H
#define GTRACE_CUPTI_CONVERT_H

#include <stddef.h>
#include <cupti.h>
#include "gtrace_events.h"

/* Largest record a conversion writes: a kernel a graph ran whose name fills
 * GT_STR_MAX. */
#define GT_CUPTI_REC_MAX \
	(GT_REC_ALIGN(sizeof(struct gt_gpu_kernel) + GT_STR_MAX) + sizeof(struct gt_gpu_graph))

/* NVTX ranges open at once (started, not yet ended) that can be paired. */
#define GT_CUPTI_NVTX_OPEN_MAX 768

struct gt_cupti_conv;

/* A converter for one process; pid goes into every record's header.
 * NULL with errno set when out of memory. */
struct gt_cupti_conv *gt_cupti_conv__new(__u32 pid);
void gt_cupti_conv__free(struct gt_cupti_conv *c);

/*
 * Converts one activity record into out, which must hold room bytes,
 * room >= GT_CUPTI_REC_MAX, and be 8-byte aligned.  Returns the bytes
 * written (a multiple of 8), 0 when the record was taken but gives no output
 * of its own (an NVTX range start waiting for its end, a kind not
 * converted: see gt_cupti_conv__unknown), or -ENOSPC (room too small,
 * nothing consumed) / -EINVAL (NULL record).
 */
int gt_cupti_conv__record(struct gt_cupti_conv *c, const CUpti_Activity *rec,
			  void *out, size_t room);

/*
 * At the end: writes one NVTX range that was started but never ended as a
 * mark (dur 0) at its start, so its name and start survive.  Returns the
 * bytes written, 0 when none is left (ends whose start never came are
 * counted as unknown then), or -ENOSPC as above.  Call until it returns 0.
 */
int gt_cupti_conv__drain_open(struct gt_cupti_conv *c, void *out, size_t room);

/* Activity records taken and converted (an NVTX start/end pair counts 2). */
__u64 gt_cupti_conv__records(const struct gt_cupti_conv *c);
/* Activity records taken but not converted: kinds this code does not know,
 * GPU work or API calls without a start time, NVTX sync markers, range ends
 * without a start. */
__u64 gt_cupti_conv__unknown(const struct gt_cupti_conv *c);

/* Starts the two counters above from 0 again (the agent counts per stretch of
 * recording: from the time it starts or resumes to the time it pauses). */
void gt_cupti_conv__reset_counts(struct gt_cupti_conv *c);

/* Counters the caller keeps, for gt_cupti_conv__stats. */
struct gt_cupti_conv_extra {
	__u64 dropped;		/* records CUPTI dropped + records in buffers not queued */
	__u64 buffers;		/* buffers completed */
	__u64 clock_offset_ns;	/* |cuptiGetTimestamp - CLOCK_MONOTONIC| at start */
	__u64 flags;		/* enum gt_cupti_stats_flags */
	__u64 lost_disk;	/* converted records not written: the file system was full */
	__u64 lost_backlog;	/* ... the spool held too much unread */
};

/* Writes the process' GT_REC_CUPTI_STATS (ts = now) into out, which holds
 * at least sizeof(struct gt_cupti_stats) bytes; returns its size. */
size_t gt_cupti_conv__stats(const struct gt_cupti_conv *c, __u64 now,
			    const struct gt_cupti_conv_extra *x, void *out);

/* Writes the GT_REC_CUPTI_MARK of a forced flush begun at ts that took
 * flush_ns (live spooling) into out, which holds at least
 * sizeof(struct gt_cupti_mark) bytes; returns its size. */
size_t gt_cupti_conv__mark(const struct gt_cupti_conv *c, __u64 ts, __u64 flush_ns, void *out);

/* Writes the GT_REC_GPU_GRAPH_NODE of a kernel node made (original 0) or
 * cloned from original, seen at ts on thread tid, into out, which holds at
 * least sizeof(struct gt_gpu_graph_node) bytes; returns its size. */
size_t gt_cupti_conv__graph_node(__u32 pid, __u32 tid, __u64 ts, __u64 node, __u64 original,
				 __u32 graph, __u32 flags, void *out);

/* enum gt_copy_kind of a CUpti_ActivityMemcpyKind (GT_COPY_UNKNOWN for
 * values this code does not know). */
unsigned gt_cupti_copy_kind(unsigned cupti_copy_kind);

/* The driver API callback ids whose activity records join GPU work to a
 * thread: every launch, graph launch, copy and set entry point. */
extern const CUpti_CallbackId gt_cupti_driver_cbids[];
extern const size_t gt_cupti_driver_cbids_len;

#endif /* GTRACE_CUPTI_CONVERT_H */
