/* SPDX-License-Identifier: MIT */
/*
 * Internal to `gtrace-bpf stats`: what its files share.  stats.c runs the
 * reports; stats_cpu.c has the reports of the CPU side (cuda_api_sum,
 * cuda_launch_sum, cuda_mem_size_sum, cuda_sync_sum, process_sum,
 * ioctl_sum): their columns, notes and builders; stats_gpu.c has the reports of
 * the GPU side of merged traces (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum, gpu_launch_latency): their columns,
 * notes and builders; stats_capture.c capture_sum, --range and the labels
 * of light mode; stats_files.c the output files of -o.
 */
#ifndef GTRACE_STATS_INT_H
#define GTRACE_STATS_INT_H

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include "lib/hmap.h"
#include "stats/stats_acc.h"
#include "stats/stats_report.h"
#include "decode/capture_spans.h"
#include "format/nv_ioctl.h"

struct gt_decoder;

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

/* Fills the time columns of a row laid out as stats_api_cols from "Total Time"
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

/* stats_cpu.c: columns and notes of the CPU reports (the column counts let
 * stats.c's report table size them) and their builders. */
extern const struct stats_col stats_api_cols[10];
extern const char *const stats_api_notes[];
extern const struct stats_col stats_launch_cols[7];
extern const char *const stats_launch_notes[];
extern const struct stats_col stats_mem_cols[8];
extern const char *const stats_mem_notes[];
extern const struct stats_col stats_sync_cols[11];
extern const char *const stats_sync_notes[];
extern const struct stats_col stats_site_cols[11];
extern const char *const stats_site_notes[];
extern const struct stats_col stats_gsite_cols[10];
extern const char *const stats_gsite_notes[];
extern const struct stats_col stats_proc_cols[7];
extern const char *const stats_proc_notes[];
extern const struct stats_col stats_ioctl_cols[11];
extern const char *const stats_ioctl_notes[];

int stats_cpu__api_sum(struct stats_acc *s, struct stats_report *r);
/* by_device: a Device column before Name. */
int stats_cpu__launch_sum(struct stats_acc *s, struct stats_report *r, bool by_device);
int stats_cpu__sync_sum(struct stats_acc *s, struct stats_report *r);
int stats_cpu__site_sum(struct stats_acc *s, struct stats_report *r);
int stats_cpu__gpu_site_sum(struct stats_acc *s, struct stats_report *r);
/* cuda_sync_sum's order of sync_accs (on pointers to them): total time, highest
 * first, then pid and api name. */
int stats_cpu__cmp_sync(const void *pa, const void *pb);
int stats_cpu__proc_sum(struct stats_acc *s, struct stats_report *r, const struct gt_decoder *d);
int stats_cpu__ioctl_sum(struct stats_acc *s, struct stats_report *r, const struct nv_majors *m);

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

/* One row per name (and device, when by_device is not NULL: a Device
 * column before the last, its cells' strings kept by by_device), by total
 * time, highest first. */
int stats_gpu__named_sum(struct named_durs *n, struct stats_report *r, struct stats_acc *by_device);
int stats_gpu__mem_time_sum(struct stats_acc *s, struct stats_report *r);
/* Rows as cuda_mem_size_sum's (stats_mem_cols) of the sizes in a[]. */
int stats_gpu__size_rows(struct dur_acc *a, struct stats_report *r);
int stats_gpu__latency(struct stats_acc *s, struct stats_report *r);

/* ---- GPU metrics (stats_gpum.c) ----------------------------------------- */

struct stats_run;
extern const struct stats_col stats_gpum_cols[11];
/* gpu_metrics_sum: a row per GPU and metric in each scope (run, ranges and
 * windows, kernels by sole occupancy (>= 95 % of the GPU's work),
 * processes). */
int stats_gpum__sum(struct stats_run *run, struct stats_report *r);
/* Its notes, once it is built: what the scopes mean, the work that could
 * not be placed on a GPU. */
const char *const *stats_gpum__notes(struct stats_run *run);
/* The mean of v[0..n) rounded to the nearest integer (halves away from
 * zero), without overflow; 0 for none. */
int64_t stats_gpum__mean(const int64_t *v, size_t n);
/* stats_dev.c: cuda_device_sum, one row per process and device. */
extern const struct stats_col stats_dev_cols[12];
extern const char *const stats_dev_notes[];
int stats_dev__sum(struct stats_acc *s, struct stats_report *r);
/* stats_nccl.c: nccl_sum, one row per process, communicator and api. */
extern const struct stats_col stats_nccl_cols[15];
extern const char *const stats_nccl_notes[];
int stats_nccl__sum(struct stats_acc *s, struct stats_report *r);
/* stats_hosts.c: host_sum, one row per host of a job trace (merge --hosts). */
extern const struct stats_col stats_host_cols[13];
extern const char *const stats_host_notes[];
int stats_hosts__sum(struct stats_acc *s, struct stats_report *r);
/* The text of a Device cell: "3", "unknown"; NULL when out of memory. */
const char *stats_dev__name(struct stats_acc *s, int32_t device);

/* ---- a run, and capture control (stats_capture.c) ---------------------- */

/* --range's argument: "N" or "wN". */
struct stats_range_arg {
	bool window;		/* "wN": window N */
	uint32_t number;	/* N, 1 or more */
};

/* What every report of one run shares. */
struct stats_run {
	struct stats_acc *s;
	const struct gt_decoder *d;
	struct nv_majors majors;	/* the trace's NVIDIA device majors */
	struct capture_spans *cap;	/* the trace's capture ranges and windows */
	const struct capspan *scope;	/* --range's, NULL for the whole trace */
	bool sampled;			/* light mode, and hot calls were not recorded all
					 * through the scope: their figures are sampled */
	char sampled_note[320];		/* "sampled: launches and other hot calls only ..." */
	bool shed;			/* the overhead budget shed an api in the scope */
	char shed_note[384];		/* "shed by the overhead budget (...): ..." */
	bool lookups;			/* the kernel lookups were dropped in the scope */
	char lookups_note[256];		/* "kernel lookups (cuKernelGetFunction) recorded only ..." */
	char head_text[320];		/* the table's lines before the reports, "" none */
	char head_json[1280];		/* the JSON document's members before them, "" none */
	char capture_notes[3][640];	/* capture_sum's notes of this trace */
	char overhead_note[640];	/* what the daemon's overhead records say, "" none */
	const char *capture_note_v[6];	/* the notes of capture_sum, NULL-terminated */
	const char *empty_note_v[2];	/* its notes when it has no rows: the overhead's */
};

/* "N" or "wN" with N from 1: 0, or -EINVAL. */
int stats_capture__parse_range(const char *s, struct stats_range_arg *a);
/* Points run->scope and run->s->scope at the span a names (run->cap
 * finished).  Returns 0, or 2 after one line on err: a trace with no
 * ranges and no windows, or none of that number. */
int stats_capture__select(struct stats_run *run, const struct stats_range_arg *a,
			  const char *path, FILE *err);
/* Works out, once the trace is read, what the reports say of capture
 * control: whether they are sampled and the notes and heads. */
void stats_capture__describe(struct stats_run *run);
/* Fills the last column (Sampled) of r's rows: true for every row, or, for
 * name_col >= 0, for the rows whose api (in that column) is a hot one. */
void stats_capture__mark(const struct stats_run *run, struct stats_report *r, int name_col);
extern const struct stats_col stats_capture_cols[10];
const char *const *stats_capture__notes(const struct stats_run *run);
/* The notes capture_sum has without rows (a trace with overhead records and
 * neither ranges nor windows); NULL when none. */
const char *const *stats_capture__empty_notes(const struct stats_run *run);
/* capture_sum: one row per range and window (only --range's, with it). */
int stats_capture__sum(struct stats_run *run, struct stats_report *r);

/* ---- output files (stats_files.c) --------------------------------------- */

/* One output file, written under a temporary name and renamed into place
 * once every file of the run is complete: a failed run leaves none of them
 * half written, nor replaces an earlier one. */
struct out_file {
	char *path;		/* the name it gets */
	struct installer *in;	/* its temporary file */
	FILE *f;		/* open on the temporary file, NULL once closed */
};

/* Writes the reports sel[0..nsel) of run to out (stats.c).  Returns 0 or a
 * negative errno. */
int stats__write_reports(const struct stats_opts *o, FILE *out, const int *sel, int nsel,
			 struct stats_run *run, const char *damage);
/* The files of a run: o->output itself, or for csv one per report,
 * BASE_<report>.csv.  Returns 0 or -ENOMEM. */
int stats_files__names(const struct stats_opts *o, const int *sel, int nsel, struct out_file *of,
		       int *nof);
/* Refuses, before the work, a name that exists (unless force) or that is
 * the input trace.  Returns 0 or 1 after one line on err. */
int stats_files__check(const struct stats_opts *o, const struct out_file *of, int nof, FILE *err);
/* Writes the reports into the files and installs them.  Returns 0 or 1
 * after one line on err. */
int stats_files__write(const struct stats_opts *o, struct out_file *of, int nof, const int *sel,
		       int nsel, struct stats_run *run, const char *damage, FILE *err);
void stats_files__free(struct out_file *of, int nof);

#endif