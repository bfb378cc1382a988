/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf stats FILE`: nsys-style summary reports. */
#ifndef GTRACE_STATS_H
#define GTRACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct capture_spans;
struct gt_callrec;
struct gt_decoder;
struct gt_ncclrec;
struct gt_hdr;
struct trace_reader;

enum stats_format { STATS_TABLE, STATS_CSV, STATS_JSON };

struct stats_opts {
	const char *path;		/* input trace */
	const char *reports;		/* comma-separated report names, NULL = all */
	enum stats_format format;
	const char *timeunit;		/* "ns", "us", "ms" or "s" (default ns) */
	const char *output;		/* NULL or "-": out; else the file (table, json), or
					 * for csv the base of one file per report,
					 * BASE_<report>.csv */
	bool force;			/* replace output files that exist */
	const char *range;		/* --range: "N" (capture range N; window N in a trace
					 * with windows and no range) or "wN" (window N);
					 * NULL: the whole trace */
	FILE *out;			/* the reports when output is NULL or "-" */
	FILE *err;			/* diagnostics (one line on failure) */
	FILE *said;			/* with output: where the paths written are said, NULL: nowhere */
};

/* Returns the exit status: 0; 2 after one line on o->err for an unknown
 * report or time unit, a bad range or one the trace does not have (also a
 * trace with no ranges nor windows), or csv of several reports without an
 * output base (a bad command line); 1 after one line for an unreadable or
 * damaged file, an output that exists (without force), or a failed write. */
int stats__run(const struct stats_opts *o);
/* 0 when every name of the comma-separated list is a report (NULL: all);
 * else -EINVAL with the first unknown name copied into bad. */
int stats__check_reports(const char *list, char *bad, size_t badlen);
/* 0 when range is "N" or "wN" with N from 1, else -EINVAL. */
int stats__check_range(const char *range);
/* The reports (stats/report_table.h), in default order. */
enum stats_report_id {
#define STATS_REPORT(id, name, title, what, cols, notes, hot) SR_##id,
#include "stats/report_table.h"
#undef STATS_REPORT
	SR__COUNT,
};
/* Names of the reports, NULL-terminated, in default order. */
extern const char *const stats_report_names[];

/*
 * The reports' computation as a library, for a reader that passes over a
 * trace for stats and for itself at once (report): it feeds the run the
 * raw records and its decoder's calls and other records, then has the
 * reports written or asks for the values they summarize.  stats__run is
 * this with a decoder of its own, so the numbers are the same.  Over the
 * whole trace (no --range).
 */
struct stats_run;

/* A run for the trace r has just opened.  NULL when out of memory. */
struct stats_run *stats_run__new(struct trace_reader *r);
/* The decoder feeding the run (its names demangle the GPU kernels' and
 * name the processes): before the first record. */
void stats_run__set_decoder(struct stats_run *run, struct gt_decoder *d);
/* Each raw record, before the decoder is fed it.  Returns 0 or -ENOMEM. */
int stats_run__record(struct stats_run *run, const struct gt_hdr *rec);
/* The decoder's callbacks, forwarded.  Return 0 or -ENOMEM. */
int stats_run__call(struct stats_run *run, const struct gt_callrec *c);
int stats_run__other(struct stats_run *run, const struct gt_hdr *rec);
/* The decoder's NCCL calls (gt_decoder__set_nccl_cb), forwarded. */
int stats_run__nccl(struct stats_run *run, const struct gt_ncclrec *n);
/* Once the decoder is finished: ends the capture spans at the trace's end
 * and works out what the reports say of capture control. */
void stats_run__finish(struct stats_run *run, struct trace_reader *r);
/* Writes the reports of the comma-separated list (NULL: all) in fmt, times
 * in ns, as `stats --format FMT` would for path (damage: NULL when the trace
 * is whole).  Returns 0, -EINVAL for an unknown report, or a negative errno
 * of the write. */
int stats_run__write(struct stats_run *run, FILE *out, enum stats_format fmt, const char *reports,
		     const char *path, const char *damage);

/* The values one group of a report sums up: its calls' durations (ns) or
 * its copies' sizes (bytes), in no order.  Returns 0 or non-zero to stop. */
typedef int (*stats_values_fn)(void *ctx, const char *group, uint32_t pid, const uint64_t *v,
			       size_t n);
/* cuda_sync_sum's groups: the durations of each (process, waiting api) with
 * an exit; group is the api's name.  Returns what fn returned, or 0. */
int stats_run__sync_values(struct stats_run *run, stats_values_fn fn, void *ctx);
/* cuda_mem_size_sum's (gpu false) or cuda_gpu_mem_size_sum's (gpu true)
 * groups: the bytes of each direction and of memset; pid 0.  Returns what
 * fn returned, or 0. */
int stats_run__size_values(struct stats_run *run, bool gpu, stats_values_fn fn, void *ctx);
/* The trace's capture ranges and windows as the reports have them, once
 * finished (decode/capture_spans.h). */
const struct capture_spans *stats_run__spans(const struct stats_run *run);
/* The GPU time of a merged trace's kernels by the whole stack of the launch
 * that made each (--stacks all), most first: fn(ctx, stack id, ns, kernels)
 * for each, then once with stack 0 for the kernels whose launch has no
 * stack (when there are some). Returns what fn returned, or 0. */
typedef int (*stats_stack_fn)(void *ctx, uint32_t stack, uint64_t ns, uint64_t kernels);
int stats_run__gpu_stacks(struct stats_run *run, stats_stack_fn fn, void *ctx);
void stats_run__free(struct stats_run *run);

#endif
