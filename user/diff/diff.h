/* SPDX-License-Identifier: MIT */
/*
 * `gtrace-bpf diff BASELINE OPTIMIZED`: two traces of one program turned
 * into a speedup with a confidence interval, and what moved per kernel and
 * per API.  One computation, three renderings (table, JSON, Markdown), so
 * that diff and report --compare give the same numbers.
 *
 * The flow: diff__traces() reads each trace twice (diff_trace.c: a scan for
 * iteration candidates, then the figures of the chosen iterations and
 * analyze over their span, in one pass), chooses
 * the iterations both traces have (diff_iter.c), and hands the two sides to
 * the pure core diff__compute(), which fills a struct diff_result;
 * diff_result__write() renders it (diff_render.c, diff_json.c).  docs/man and
 * user/diff/README.md say what every figure means; in short:
 *
 * Iterations come from, in this order unless --iter chooses: NVTX ranges
 * whose names repeat ("step 1", "step 2": digits do not count) and that are
 * iterations (analyze/steady.h: not a library's own ranges), capture ranges,
 * launches of one CUDA graph, the calls between recurring synchronizations,
 * a repeating sequence of kernel launches; each kept to its steady state
 * (start-up and tail left out).  Both sides' iterations must correspond
 * (diff.c: correspond()) for a speedup with an interval; when they do not,
 * the whole runs are compared with no interval and a warning says why.  The speedup is the baseline's median iteration time over the
 * optimized one's, with a percentile bootstrap 95 % interval over the
 * iterations (DIFF_RESAMPLES resamples per interval, a generator seeded with
 * DIFF_SEED: the same inputs give the same interval); the same for GPU busy
 * time per iteration.  Without iterations: the whole run, no interval.
 *
 * Per kernel and per API, rows are classified by their time per iteration:
 * added, removed, or, present in both, unchanged when the change is inside
 * the noise of the iterations (DIFF_Z standard errors of the difference of
 * the two means per iteration, or less than DIFF_MIN_REL of the baseline's),
 * else faster or slower; sorted by contribution to the difference.
 *
 * What moved in analyze's terms: analyze (analyze/analyze.h) run over the
 * process compared, limited to the span of its iterations, each figure
 * divided by the number of iterations: GPU busy and idle by cause, the CPU
 * side, copies, launches, the verdict of what bounds it, and the findings
 * that appeared, went or changed.
 */
#ifndef GTRACE_DIFF_H
#define GTRACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"

#define DIFF_RESAMPLES 2000	/* bootstrap resamples per interval */
#define DIFF_SEED 1		/* the bootstrap generator's seed (splitmix64) */
#define DIFF_Z 1.96		/* the 95 % quantile of the normal distribution */
#define DIFF_MIN_REL 0.01	/* changes below 1 % of the baseline's time are unchanged */
#define DIFF_MIN_ITERS 5	/* iterations a series needs to be chosen without --iter */

enum diff_format { DIFF_TABLE, DIFF_JSON, DIFF_MD };

/* Where the iterations of a trace come from. */
enum diff_iter_source {
	DIFF_ITER_NONE = 0,	/* no iterations: the whole run */
	DIFF_ITER_NVTX,		/* NVTX ranges of one repeating name, each an iteration */
	DIFF_ITER_CAPTURE,	/* capture ranges (cudaProfilerApi, --nvtx-capture) */
	DIFF_ITER_GRAPH,	/* launches of one CUDA graph: from one to the next */
	DIFF_ITER_KERNELS,	/* a repeating kernel sequence: from one start to the next */
	DIFF_ITER_SYNC,		/* the calls between synchronizations (or collectives) that
				 * recur with the same calls between them (analyze/steady.h) */
};

/* The iterations of one side. */
struct diff_iters {
	enum diff_iter_source source;
	const char *name;	/* NVTX: the series name ("step N"); graph: "0x..." its
				 * exec handle; else NULL */
	uint32_t count;		/* iterations compared: the steady state's (1 for the whole run) */
	uint32_t found;		/* iterations found, start-up and tail included */
	uint32_t startup;	/* of those, before the steady state */
	uint32_t tail;		/* ... and after it */
	bool steady;		/* a steady state was found (else every iteration found is compared) */
	uint64_t steady_start;	/* the compared iterations' span */
	uint64_t steady_end;
	uint32_t period;	/* kernels: launches per iteration; else 0 */
	uint64_t off_sequence;	/* kernels: launches that did not follow the sequence */
	uint64_t median_ns;	/* median iteration time (the whole run's time without) */
	uint64_t gpu_median_ns;	/* median GPU busy time per iteration (the whole run's) */
	uint64_t unattributed;	/* records of the process outside every iteration */
	uint64_t late;		/* records that came after their iteration was closed (a GPU
				 * record the merger did not link: at the end of the file):
				 * in the means, not in the spread of their row */
	uint64_t gpu_unordered;	/* GPU intervals that came more than DIFF_GPU_REORDER
				 * intervals out of order: their overlap with the busy
				 * time before them is approximate */
};

/* One trace as diffed. */
struct diff_side_info {
	const char *path;
	uint32_t pid;		/* the process compared */
	const char *cmdline;	/* its command line or comm, "" when unknown */
	uint32_t processes;	/* processes with CUDA calls in the trace */
	uint64_t records;	/* records read, both passes counted once */
	uint64_t calls;		/* CUDA calls of the process */
	uint64_t gpu_records;	/* kernels, copies, sets of the process (0: none) */
	bool sampled;		/* light mode: hot calls only inside windows */
	const char *damage;	/* the reader stopped at a damaged part, NULL when whole */
	struct trace_damage dmg;/* what the reader met (trace_damage__report's rule) */
	struct diff_iters it;
};

/* A speedup: baseline / optimized. */
struct diff_ratio {
	bool valid;		/* both sides have a non-zero figure */
	bool interval;		/* lo and hi hold a bootstrap interval (iterations) */
	double point;		/* median baseline / median optimized */
	double lo, hi;		/* 95 % interval, when interval */
	double base_ns, opt_ns;	/* the two medians (whole-run times without iterations) */
};

enum diff_class { DIFF_ADDED, DIFF_REMOVED, DIFF_FASTER, DIFF_SLOWER, DIFF_UNCHANGED };

/* One run's figures of a kernel or API (over the iterations compared). */
struct diff_stat {
	uint64_t count;		/* calls, launches or GPU records */
	uint64_t timed;		/* of which with a duration */
	uint64_t total_ns;	/* their durations added */
	double median_ns;	/* median duration (estimated, see median_est); 0 when untimed */
	bool median_est;	/* from a log histogram (lib/loghist.h: within 3 %), not exact */
	double per_iter;	/* mean time (timed rows) or count (untimed) per iteration */
};

struct diff_row {
	const char *name;	/* demangled kernel, "[CUDA memcpy HtoD]", or API name */
	struct diff_stat base, opt;
	bool timed;		/* compared by time (ns); else by count per iteration */
	double delta;		/* opt.per_iter - base.per_iter: ns, or launches when !timed */
	double noise;		/* the change the classification allowed for (same unit) */
	enum diff_class cls;
};

struct diff_table {
	struct diff_row *rows;	/* by |delta| (timed rows first), largest first */
	size_t n;
	uint64_t by_class[5];	/* rows per enum diff_class */
};

/* What the traces do not share, each an enum diff_mismatch bit. */
enum diff_mismatch {
	DIFF_MM_PROGRAM = 1 << 0,	/* the processes compared run different programs */
	DIFF_MM_NO_COMMON = 1 << 1,	/* no kernel name in common */
	DIFF_MM_GPU_ONE = 1 << 2,	/* one trace has GPU records, the other not */
	DIFF_MM_ITERS = 1 << 3,		/* iterations of different kinds, or only in one */
	DIFF_MM_SAMPLED = 1 << 4,	/* a light-mode trace: hot calls sampled */
	DIFF_MM_DAMAGED = 1 << 5,	/* a trace is cut: the diff covers what was read */
	DIFF_MM_NO_MATCH = 1 << 6,	/* the iterations found do not correspond: no interval */
};

/* The figures of analyze a diff compares (enum order is the rows' order). */
enum diff_term {
	DIFF_T_WALL,		/* the wall time analyze covered */
	DIFF_T_GPU_BUSY,	/* GPU busy (measured, from metrics, or estimated: busy_source) */
	DIFF_T_IDLE_SUBMIT,	/* GPU idle waiting for the host to submit */
	DIFF_T_IDLE_LAUNCH,	/* GPU idle in launch overhead between back-to-back work */
	DIFF_T_IDLE_SYNC,	/* GPU idle while the host waited in a sync or blocking copy */
	DIFF_T_IDLE_OTHER,	/* GPU idle otherwise (dependencies, unlinked work) */
	DIFF_T_KERNELS,		/* GPU time of kernels */
	DIFF_T_COPIES,		/* GPU time of copies and sets */
	DIFF_T_CPU_CALLS,	/* threads' time in CUDA calls other than waits */
	DIFF_T_CPU_SYNC,	/* ... waiting in synchronizing calls */
	DIFF_T_CPU_SYNC_BLOCKED,/* ... of which blocked off-CPU (scheduler records) */
	DIFF_T_CPU_OUTSIDE,	/* ... outside CUDA */
	DIFF_T_CPU_OFF,		/* ... of which off-CPU (scheduler records) */
	DIFF_T_CPU_HOST,	/* ... of which on-CPU: host work (scheduler records) */
	DIFF_T_LAUNCHES,	/* launch calls (a count) */
	DIFF_T__COUNT,
};

struct diff_term_row {
	const char *key;	/* JSON member: "gpu_busy", ... */
	const char *label;	/* "GPU busy", ... */
	bool count;		/* a count, not ns */
	bool known;		/* both sides have the figure */
	double base, opt;	/* per iteration (whole run: the run's) */
};

/* A finding (analyze's rule) in either run. */
struct diff_finding {
	const char *id;		/* rule id, "launch_bound" */
	bool in_base, in_opt;
	const char *severity[2];/* baseline's, optimized's: "low", ...; NULL when absent */
	double cost[2];		/* the time it costs, ns per iteration (whole run: the run's) */
};

struct diff_analysis {
	bool valid;		/* analyze gave figures for both processes */
	char why[200];		/* when not: what analyze said */
	struct diff_term_row terms[DIFF_T__COUNT];
	const char *bound[2];		/* az_bound__name: "compute", ... */
	const char *busy_source[2];	/* "gpu_records", "gpu_metrics", "sync_estimate", "none" */
	struct diff_finding findings[AZ_RULE__COUNT];	/* by the larger cost, highest first */
	size_t nfindings;
};

struct diff_result {
	struct diff_side_info base, opt;
	bool swapped;		/* the arguments came as OPTIMIZED BASELINE (file names) */
	bool whole_run;		/* no iterations: whole-run figures, no interval */
	struct diff_ratio speedup;	/* end-to-end: iteration time */
	struct diff_ratio gpu_busy;	/* GPU busy time; !valid without GPU records */
	uint32_t resamples;	/* DIFF_RESAMPLES */
	uint64_t seed;		/* DIFF_SEED */
	bool kernels_gpu;	/* the kernel table is of GPU records (GPU time); else
				 * of launch calls (counts, CPU time when recorded) */
	struct diff_table kernels;
	struct diff_table apis;
	struct diff_table sites;	/* calls with a stack (--stacks) by call site */
	struct diff_analysis analysis;	/* what moved in analyze's terms */
	unsigned mismatch;	/* enum diff_mismatch bits */
	bool checked;		/* iterations were found on both sides and checked to correspond */
	bool corresponds;	/* ... and they do: the speedup has its interval */
	char why[200];		/* when they do not: why, one line */
	/* when they do not: the whole runs per unit of work both did, an
	 * estimate without interval (diff__per_unit) */
	struct diff_per_unit {
		bool valid;		/* a unit was found */
		const char *unit;	/* "kernel run" */
		uint64_t base_n, opt_n;	/* units in each run */
		uint32_t kinds;		/* distinct kernels */
		double point;		/* baseline time per unit / optimized's */
		char why[120];		/* when !valid: why none */
	} per_unit;
	char warning[512];	/* the mismatches in one line, "" when none */
	/* owned strings, freed with the result */
	char **strs;
	size_t nstrs, strs_cap;
};

/* What diff__traces needs besides the two paths. */
struct diff_params {
	const char *iter;	/* --iter: an NVTX range name, or capture, graph, kernels,
				 * none; NULL: chosen (see the top) */
	FILE *err;		/* one line when it fails; NULL: stderr */
	struct trace_damage *base_dmg;	/* not NULL: what the baseline's reader met of
					 * damage, filled also when the diff fails */
	uint32_t pid_base, pid_opt;	/* -p: the process compared on each side, 0: the busiest */
	bool by_rank;			/* --rank: the process of rank on each side */
	int32_t rank;
};

/* Which of a and b is the baseline: b when a's name ends in "_optimized.gtrace"
 * or b's in "_baseline.gtrace" (and not both the other way), else a.
 * Returns true when they swap. */
bool diff__order(const char *a, const char *b, const char **base, const char **opt);

/* Reads the two traces and computes the diff into *out (freed with
 * diff_result__free).  Returns 0; 1 after one line on err for a file that
 * cannot be read, is not a trace, is damaged before any record, or holds
 * no CUDA call; 2 after one line for an --iter the traces do not both have
 * or a bad --iter.  Paths are not reordered here (see diff__order). */
int diff__traces(const char *base, const char *opt, const struct diff_params *p,
		 struct diff_result **out);
/* 0 when iter is a valid --iter value, else -EINVAL. */
int diff__check_iter(const char *iter);

/* Renders r.  Returns 0 or a negative errno (write error). */
int diff_result__write(const struct diff_result *r, enum diff_format f, FILE *out);
void diff_result__free(struct diff_result *r);

/* "added", "removed", "faster", "slower", "unchanged" */
const char *diff_class__name(enum diff_class c);
/* "nvtx", "capture", "graph", "kernels", "none" */
const char *diff_iter_source__name(enum diff_iter_source s);

struct diff_opts {
	const char *a, *b;	/* the traces as given (diff__order decides) */
	const char *iter;	/* --iter, NULL: chosen */
	enum diff_format format;
	uint32_t pid_a, pid_b;	/* -p A[,B]: of a and of b, 0: the busiest */
	bool by_rank;		/* --rank R: the process of rank R in each (a job trace's ranks) */
	int32_t rank;
	const char *output;	/* -o: a file (through the installer), NULL or "-": out */
	bool force;		/* replace output */
	FILE *out;		/* the diff */
	FILE *err;		/* the warning line, or the one error line */
};

/* The command: returns the exit status (0, 1 or 2 as diff__traces; 1 after
 * a failed write).  A mismatch is one warning line on err, and status 0. */
int diff__run(const struct diff_opts *o);

#endif
