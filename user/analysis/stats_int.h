/* SPDX-License-Identifier: MIT */
/*
 * Internal to `gtrace-bpf stats`: what its two files share.  stats.c has
 * the reports of the CPU side and runs them; stats_gpu.c has the reports of
 * the GPU side of merged traces (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum, gpu_launch_latency): their columns,
 * notes and builders.
 */
#ifndef GTRACE_STATS_INT_H
#define GTRACE_STATS_INT_H

#include <stdint.h>
#include <stdlib.h>
#include "lib/hmap.h"
#include "analysis/stats_acc.h"
#include "analysis/stats_report.h"

/* The eight columns every report of durations starts with (cells 0-7,
 * filled by time_cells()). */
#define TIME_COLS								\
	{ "Time (%)", "time_pct", SK_PCT },					\
	{ "Total Time", "total_time", SK_TIME },				\
	{ "Num Calls", "num_calls", SK_INT },					\
	{ "Avg", "avg", SK_TIMEF },						\
	{ "Med", "med", SK_TIMEF },						\
	{ "Min", "min", SK_TIME },						\
	{ "Max", "max", SK_TIME },						\
	{ "StdDev", "stddev", SK_TIMEF },

/* The values of a map, sorted with cmp (on pointers to values); NULL when
 * out of memory. The caller frees the array. */
static inline void **sorted_values(const struct hmap *m,
				   int (*cmp)(const void *, const void *), size_t *n)
{
	void **v = malloc((m->n ? m->n : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->s[i].used)
			v[(*n)++] = m->s[i].v;
	qsort(v, *n, sizeof(*v), cmp);
	return v;
}

/* Fills the time columns of a row laid out as api_cols from "Total Time"
 * on: c[0] Total, c[2] Avg, c[3] Med, c[4] Min, c[5] Max, c[6] StdDev (c[1]
 * is Num Calls, the caller's).  No completed call: Num Calls only. */
static inline double pct(uint64_t part, uint64_t whole);

/* Cells 0-7 (TIME_COLS) of a group of durations: its share of whole, total,
 * count, and mean, median, min, max, deviation of those with a value; only
 * the count when none has a value. */
static inline void time_cells(struct stats_cell *c, struct dur_acc *a, uint64_t whole)
{
	uint64_t n = a->dur.n;
	struct dvec_summary sm;

	c[2] = (struct stats_cell){ .u = a->calls };
	/* no call with an exit (launches recorded at entry only, calls cut by
	 * the end of the recording): their time is unknown, not 0 */
	if (!n)
		return;
	c[0] = (struct stats_cell){ .d = pct(a->total, whole) };
	c[1] = (struct stats_cell){ .u = a->total };
	dvec__summarize(&a->dur, a->total, &sm);
	c[3] = (struct stats_cell){ .d = sm.mean };
	c[4] = (struct stats_cell){ .d = sm.median };
	c[5] = (struct stats_cell){ .u = a->min };
	c[6] = (struct stats_cell){ .u = a->max };
	c[7] = (struct stats_cell){ .d = sm.stddev };
}

static inline double pct(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* stats_gpu.c: columns and notes of the GPU reports (the column counts let
 * stats.c's report table size them) and their builders. */
extern const struct stats_col stats_gpu_kern_cols[9];
extern const char *const stats_gpu_kern_notes[];
extern const struct stats_col stats_nvtx_cols[9];
extern const char *const stats_nvtx_notes[];
extern const struct stats_col stats_gpu_mem_time_cols[9];
extern const char *const stats_gpu_mem_time_notes[];
extern const char *const stats_gpu_mem_size_notes[];
extern const struct stats_col stats_latency_cols[8];
extern const char *const stats_latency_notes[];

/* One row per name, by total time, highest first. */
int stats_gpu__named_sum(struct named_durs *n, struct stats_report *r);
int stats_gpu__mem_time_sum(struct stats_acc *s, struct stats_report *r);
/* Rows as cuda_mem_size_sum's (mem_cols) of the sizes in a[]. */
int stats_gpu__size_rows(struct dur_acc *a, struct stats_report *r);
int stats_gpu__latency(struct stats_acc *s, struct stats_report *r);

#endif
