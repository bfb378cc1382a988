/* SPDX-License-Identifier: MIT */
/*
 * The timeline of `gtrace-bpf report`: what the page draws, gathered in the
 * report's one pass over a trace and written as JSON (the page's "timeline"
 * member, docs in report.c).  Lanes: per thread its CUDA calls, its off-CPU
 * intervals and its NVTX ranges; per GPU stream its kernels, copies and
 * sets; per GPU and metric its samples (counter lanes, at most 8,192
 * points, each the mean of the samples up to the next); one of capture
 * ranges and windows; one of flight-recorder triggers.
 *
 * Millions of events do not fit a page that opens in seconds, so the
 * timeline is drawn from two things:
 *   - every event counted into its lane's bins (a fixed number across the
 *     trace, their width doubled while the trace grows), as busy time and a
 *     count: the page draws those where events are too small to see, or
 *     were left out;
 *   - at most `budget` events kept exactly: the longest ones.  While more
 *     than twice the budget are held, the shortest are dropped (a threshold
 *     on the duration rises, in steps of an eighth of a power of two), so
 *     memory is bounded by the budget, not by the trace.  The lanes say how
 *     many events they left out, and the page says so where it draws bins
 *     in their place.
 * GPU utilization per device is the union of its kernels' intervals (any
 * stream), per bin: computed exactly from every kernel (16 bytes each are
 * kept until the end).
 */
#ifndef GTRACE_REPORT_TIMELINE_H
#define GTRACE_REPORT_TIMELINE_H

#include <stdint.h>
#include <stddef.h>
#include "decode/decode.h"
#include "lib/obuf.h"

#define TL_BINS 8192			/* bins of each lane across the trace */
#define TL_BUDGET_DEFAULT 250000	/* events kept exactly */

struct report_timeline;

/* A timeline whose time 0 is origin (the recording's start, ns); budget:
 * events kept exactly (0: TL_BUDGET_DEFAULT).  NULL when out of memory. */
struct report_timeline *report_timeline__new(uint64_t origin, size_t budget,
					     struct gt_decoder *d);
/* The decoder's callbacks, forwarded: calls; GPU kernels, copies and sets,
 * NVTX ranges and marks, off-CPU intervals, triggers (the other records are
 * ignored).  Return 0 or -ENOMEM. */
int report_timeline__call(struct report_timeline *tl, const struct gt_callrec *c);
int report_timeline__other(struct report_timeline *tl, const struct gt_hdr *rec);
/* An NCCL call (the decoder's NCCL callback): on its thread's NCCL lane,
 * whose process' rank the page's rank x time view shows.  Returns 0 or
 * -ENOMEM. */
int report_timeline__nccl(struct report_timeline *tl, const struct gt_ncclrec *n);
/* Ends the timeline at end_ts (the trace's end): calls still open end
 * there.  Once, after the decoder is finished.  Returns 0 or -ENOMEM. */
int report_timeline__finish(struct report_timeline *tl, uint64_t end_ts);
/* What was seen: events of every lane, those kept exactly, GPU records. */
uint64_t report_timeline__events(const struct report_timeline *tl);
uint64_t report_timeline__kept(const struct report_timeline *tl);
uint64_t report_timeline__gpu_records(const struct report_timeline *tl);
/* The JSON object of the timeline (members "origin" ... "lanes", "util",
 * "triggers"), process and thread names from the decoder; capture spans are
 * the caller's.  The write errors are o's. */
void report_timeline__write_json(struct report_timeline *tl, struct obuf *o);
void report_timeline__free(struct report_timeline *tl);

#endif
