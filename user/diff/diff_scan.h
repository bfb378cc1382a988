/* SPDX-License-Identifier: MIT */
/*
 * Internal to diff's reading of one trace (diff_trace.c: the two passes;
 * diff_cands.c: the candidates for the iteration found by the first).
 */
#ifndef GTRACE_DIFF_SCAN_H
#define GTRACE_DIFF_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include "analyze/steady.h"
#include "diff/diff_int.h"
#include "format/trace_file.h"
#include "lib/hmap.h"

#define GRAPH_NAME "[CUDA graph launch]"

struct iv {
	uint64_t start, end;
};

/* The ranges of one NVTX series in one process. */
struct scan_nvtx {
	uint32_t pid;
	uint32_t series;	/* its name's id in nvtx_names */
	struct iv *v;
	size_t n, cap;
};

/* The launches of one CUDA graph (exec handle) in one process. */
struct scan_graph {
	uint32_t pid;
	uint64_t exec;
	uint64_t *ts;
	size_t n, cap;
};

enum seq_state { SEQ_FILL, SEQ_MATCH, SEQ_FAILED };

struct scan_proc {
	uint32_t pid;
	uint64_t calls;		/* CUDA calls */
	uint64_t gpu;		/* GPU records */
	uint64_t first_ts;	/* the first call's entry */
	uint64_t last_ts;	/* the latest end of a call (its entry when it has none) */
	uint64_t gpu_first;	/* the GPU's active span: its first work's start */
	uint64_t gpu_last;	/* ... and its last work's end */
	enum seq_state seq_state;
	uint32_t *ids;		/* SEQ_FILL: the launches so far, name ids */
	uint64_t *ts;		/* ... and entry times */
	size_t nseq;
	struct diff_seq seq;	/* SEQ_MATCH: the matcher */
	size_t ids_cap, ts_cap;	/* room in ids, ts */
	char *name;		/* its command line or comm, NULL when unknown */
};

/* A candidate with its iterations. */
struct scan_series {
	struct diff_cand c;	/* copied into cands once all are known */
	uint64_t *start, *end;	/* owned */
	uint32_t period;	/* kernels */
	uint64_t off;		/* kernels: launches off the sequence */
	char *name;		/* owned: NVTX series name, graph exec in hex, sync: its call */
	uint32_t found;		/* iterations found, before the phases kept the steady ones */
	uint32_t startup, tail;	/* ... left out before and after the steady state */
	bool steady;		/* a steady state was found */
};

struct diff_scan {
	const char *path;
	struct trace_reader *r;
	struct capture_spans *cap;
	struct hmap procs;		/* pid -> struct scan_proc */
	struct hmap nvtx;		/* (series, pid) -> struct scan_nvtx */
	struct hmap graphs;		/* (exec, pid) -> struct scan_graph */
	struct diff_names seq_names;	/* launch names -> ids */
	struct diff_names nvtx_names;	/* series names -> ids */
	struct scan_proc *last;
	struct steady_scan *steady;	/* iterations between recurring synchronizations */
	struct scan_series *series;	/* the candidates */
	size_t nseries, series_cap;
	struct diff_cand *cands;	/* their struct diff_cand, in the same order */
	uint64_t records;
	char *damage;
	struct trace_damage dmg;	/* what the scan's reader met */
	uint32_t main_pid, nprocs;
	uint32_t want_pid;	/* -p: the process compared, 0: the busiest */
	size_t ncands;		/* of cands: want_pid's alone with -p */
};

/* After the first pass: the candidates of every kind (NVTX series, capture
 * ranges, CUDA graphs, kernel sequences) into s->series. Returns 0 or a
 * negative errno. */
int diff_cands__find(struct diff_scan *s);

#endif
