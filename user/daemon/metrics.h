/* SPDX-License-Identifier: MIT */
/*
 * Prometheus metrics of the calls a recording sees (docs/METRICS.md): counters
 * per process of launches, calls and API time per libcuda symbol, sync wait
 * time, failed calls by code and bytes copied by direction; the recorder's
 * drops and its own figures; a bounded top-N of kernels by launches.  Fed
 * record by record through a decoder of its own, rendered on demand in the
 * text exposition format 0.0.4.
 *
 * Every label set is bounded so that a fleet's Prometheus is not flooded by
 * one odd program: processes (max_procs, exited ones evicted first), apis (the
 * API table), codes per process (FAIL_SLOTS, then code="other"), kernels
 * (named only in the top-N family; tracked names capped).
 */
#ifndef GTRACE_ANALYSIS_METRICS_H
#define GTRACE_ANALYSIS_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"
#include "lib/obuf.h"

#define GT_METRICS_MAX_PROCS 256	/* default processes with series of their own */
#define GT_METRICS_TOP_KERNELS 10	/* default rows of gtrace_top_kernel_launches */
#define GT_METRICS_KERNELS_CAP 4096	/* default distinct kernel names counted */

struct gt_metrics_opts {
	unsigned max_procs;	/* processes kept, 0 = GT_METRICS_MAX_PROCS */
	unsigned top_kernels;	/* top-N rows, 0 = GT_METRICS_TOP_KERNELS */
	unsigned kernels_cap;	/* distinct kernel names counted, 0 = GT_METRICS_KERNELS_CAP;
				 * launches of names past it count as untracked */
	bool sampled;		/* light mode: launches and the other hot calls are counted
				 * inside the windows only; their series say sampled="true" */
};

/* The recorder's own figures, which only the daemon knows: it fills one and
 * passes it with gt_metrics__set_self() before a scrape (or whenever it
 * polls).  Rendered only once set. */
struct gt_metrics_self {
	double overhead_ratio;	/* estimated probe time / traced programs' time; < 0: unknown */
	double duty_cycle;	/* fraction of time every probe was live (light mode), 1 for full */
	uint64_t records;	/* records read from the ring buffer so far */
	uint64_t ring_bytes;	/* size of the ring buffer */
	uint64_t ring_used_bytes;/* bytes waiting in it at the last poll */
	uint64_t written_bytes;	/* trace bytes written so far, 0 when not writing a trace */
	uint64_t cpu_ns;	/* the recorder's own CPU time, user + system */
	double budget_ratio;	/* --budget as a fraction, 0 = none */
	bool has_shed;		/* the budget can shed calls (light mode with a budget) */
	unsigned shed_apis;	/* always-on calls the budget moved into the windows now */
	uint64_t sheds, restores; /* its moves so far, each way */
	bool has_sampler;	/* --gpu-metrics sampling */
	uint64_t sampler_cpu_ns;/* the sampler threads' CPU time (measured) */
	bool has_names;		/* the daemon keeps names for its snapshots */
	uint64_t names_lost;	/* name records it had no room for (snapshots show placeholders) */
};

struct gt_metrics;

/* NULL when out of memory. */
struct gt_metrics *gt_metrics__new(const struct gt_metrics_opts *o);
void gt_metrics__free(struct gt_metrics *m);
/* Feeds one record of a trace or of the ring buffer (calls go through the
 * decoder; exits, names and counter snapshots are read here).  Returns 0 or
 * a negative errno (-ENOMEM). */
int gt_metrics__feed(struct gt_metrics *m, const struct gt_hdr *rec);
/* Emits the calls still open (a trace read to its end): they count as calls
 * without time. */
int gt_metrics__finish(struct gt_metrics *m);
/* Sets the recorder's counters (from BPF globals, a trailer): replaces what
 * GT_REC_STATS records said. */
void gt_metrics__set_counters(struct gt_metrics *m, const struct gt_counters *c);
void gt_metrics__set_self(struct gt_metrics *m, const struct gt_metrics_self *s);
/* Writes every family in the text exposition format 0.0.4, in a stable
 * order (families as in docs/METRICS.md, series by pid, api, code,
 * direction, rank).  Returns 0 or the buffer's error. */
int gt_metrics__render(const struct gt_metrics *m, struct obuf *out);
/* Same, with the signature of metrics_http's render callback. */
int gt_metrics__render_cb(void *ctx, struct obuf *out);

/* Writes s as a label value between quotes: backslash, double quote and
 * line feed escaped as the format says, bytes that are not UTF-8 (which
 * would make Prometheus reject the whole scrape) as U+FFFD, cut at max
 * bytes with "..." appended. */
void gt_metrics__label_value(struct obuf *out, const char *s, size_t max);

#endif
