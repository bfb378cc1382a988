/* SPDX-License-Identifier: MIT */
/*
 * The size each record type has at least (docs/FORMAT.md: a record may grow
 * at its end, never shrink).  A reader checks a record against it before it
 * casts the header to the type's struct, so that a damaged or foreign
 * record is never read past its end.
 */
#ifndef GTRACE_FORMAT_RECORDS_H
#define GTRACE_FORMAT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

/* sizeof the struct of a record type (enum gt_rec_type); the header's size
 * for a type this build does not know, which then carries nothing else. */
size_t gt_rec__min_size(uint16_t type);

/* True when rec is large enough for the struct of its type. */
/* An overhead record's cut, 0 in a record written before the field was
 * appended (shorter than the struct). */
static inline uint32_t gt_overhead__cut(const struct gt_overhead *o)
{
	return o->hdr.size >= offsetof(struct gt_overhead, cut) + sizeof(o->cut) ? o->cut : 0;
}

static inline bool gt_rec__size_ok(const struct gt_hdr *rec)
{
	return rec->size >= gt_rec__min_size(rec->type);
}

/* The graph part at the end of a kernel record a CUDA graph ran
 * (GT_GPU_GRAPH), NULL for another kernel or a record too short to hold it
 * after its name.  k passed gt_rec__size_ok. */
static inline struct gt_gpu_graph *gt_gpu_kernel__graph(const struct gt_gpu_kernel *k)
{
	size_t tail = sizeof(struct gt_gpu_graph);

	if (!(k->flags & GT_GPU_GRAPH) || k->hdr.size < tail ||
	    GT_REC_ALIGN(sizeof(*k) + (size_t)k->len) > (size_t)k->hdr.size - tail)
		return NULL;
	return (struct gt_gpu_graph *)((char *)k + k->hdr.size - tail);
}

/* "sync", "error", "exit", "profiler", "signal", "gpu-idle" for enum gt_trigger_kind
 * (struct gt_trigger, GT_REC_TRIGGER); "unknown" for another value. */
const char *gt_trigger_kind__name(uint32_t kind);
/* The highest enum gt_trigger_kind this build knows. */
#define GT_TRIG_LAST GT_TRIG_GPU_IDLE

/* "estimate", "calibrated", "duty_down", "duty_up", "over_budget" for enum
 * gt_overhead_reason (struct gt_overhead, GT_REC_OVERHEAD); "unknown" for
 * another value. */
const char *gt_overhead_reason__name(uint32_t reason);
/* gt_cupti_attach.result in words: attached, refused, conflict, failed, busy. */
const char *gt_attach_result__name(uint32_t result);

/* The name of a GPU metric (enum gt_gpu_metric_id: "gpu_util", "sm_active",
 * ...), NULL for an id this build does not know; its unit ("%", "B", "MHz",
 * "W", "C", "mask", "MiB/s"), "" for an unknown id. */
const char *gt_gpu_metric__name(uint32_t id);
const char *gt_gpu_metric__unit(uint32_t id);

/* The id of a struct gt_libload's outcome ("held", "timeout",
 * "attach_failed", "job", "tty", "ptrace", "relay", "stale", "full",
 * "signal", "off"), "unknown" for another value; and what it
 * means in words ("not held: a job of a job-control shell"). */
const char *gt_libload_outcome__name(uint32_t outcome);
const char *gt_libload_outcome__text(uint32_t outcome);

/* The interval of a libcuda load in which the process ran the library
 * without its probes, its calls possibly missing: true with [*from, *to]
 * (to = end, the recording's end, when the probes never came); false when
 * there is none (held until they were in place). */
bool gt_libload__gap(const struct gt_libload *l, uint64_t end, uint64_t *from, uint64_t *to);

/* Fills a GT_REC_NAME record at n, which has room bytes for the string
 * after it: ts, pid and tid of at, kind, key, and s cut to room - 1 bytes;
 * what the record's size covers is zeroed first. Returns its header. */
struct gt_hdr *gt_name__fill(struct gt_name *n, size_t room, const struct gt_hdr *at,
			     uint16_t kind, uint64_t key, const char *s);

#endif
