/* SPDX-License-Identifier: MIT */
/*
 * `gtrace-bpf analyze`: the three questions asked of every trace, answered
 * per process (and per capture range of it):
 *   1. busy or waiting: how much of the process' wall time its GPU work
 *      kept the GPU busy, what the idle time went to, and where its threads'
 *      time went on the CPU;
 *   2. what bounds it: compute, memory, communication, transfers, launch
 *      overhead or the host;
 *   3. parallelism: streams, overlap, grids against the device's SMs, and
 *      the serial dependencies (syncs in loops, blocking copies, the legacy
 *      default stream, host gaps);
 * with findings: rules of stable ids, each with a severity, the time it
 * costs, counts, up to five examples to look at and a suggested fix.
 *
 * One computation, several renderings: the core (struct analyze) takes the
 * decoder's calls and the other records in time order and fills a struct
 * analyze_result; the writers (table, JSON, Markdown), the findings track
 * of `export --findings`, `report` and `diff` all take their numbers from
 * that result.  The core keeps per process and range fixed-size
 * accumulators, per kernel name and stream a few counters, and the GPU work
 * that has not started yet on the trace's own clock ("in flight"): its
 * memory does not grow with the length of the trace.
 *
 * Definitions (docs/man page, user/analyze/README.md):
 *   wall time     a process' first record to its last (its exit) in the scope
 *   GPU busy      the union of its kernels, copies and sets on each device
 *                 (CUPTI records of a merged trace), summed over devices; else
 *                 from GPU metric samples (GT_REC_GPU_METRIC); else estimated
 *                 from the time the host waited in synchronizing calls (a
 *                 lower bound, labelled as an estimate)
 *   GPU idle      wall time minus busy, per device, split by what the next
 *                 piece of GPU work was waiting for (enum az_idle)
 *   CPU side      the threads that made CUDA calls, from their first call to
 *                 their last: in calls, in waits (spinning on-CPU or blocked
 *                 off-CPU, from the scheduler records), off-CPU and on-CPU
 *                 outside CUDA
 * Every figure that is estimated, sampled (light mode) or rests on an
 * assumption (an SM count not in the trace) says so in the result.
 */
#ifndef GTRACE_ANALYZE_H
#define GTRACE_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/gtrace_events.h"
#include "decode/decode.h"
#include "format/trace_file.h"

#define AZ_MAX_EXAMPLES 5	/* examples per finding */
#define AZ_TOP_KERNELS 5	/* kernels named in the answer of question 2 */

/* ---- the rules ------------------------------------------------------------ */

/* The findings' rules.  Ids (az_rule__id) are stable: nsys's names where it
 * has the rule, ours otherwise.  New rules are appended. */
enum az_rule {
#define AZ_RULE(name, id, what, fix) AZ_RULE_##name,
#include "analyze/rule_table.h"
#undef AZ_RULE
	AZ_RULE__COUNT,
};

enum az_severity {
	AZ_SEV_LOW = 1,		/* costs under 5 % of the scope's wall time */
	AZ_SEV_MEDIUM = 2,	/* 5 % to 20 % */
	AZ_SEV_HIGH = 3,	/* 20 % or more */
};

/* "gpu_time_util", ...; NULL out of range. */
const char *az_rule__id(enum az_rule r);
/* enum az_rule of an id, -1 when none. */
int az_rule__by_id(const char *id);
/* "low", "medium", "high". */
const char *az_severity__name(enum az_severity s);

/* A place to look at on the timeline. */
struct az_example {
	uint64_t ts;		/* CLOCK_MONOTONIC ns, the trace's clock */
	uint64_t dur;		/* ns; 0 for an instant */
	uint32_t pid, tid;	/* the thread it happened on (tid 0: the GPU's, none) */
	const char *what;	/* kernel or api name, "gap", ...: owned by the result; a call with
				 * a stack (--stacks): "cuStreamSynchronize from train_step+0x1c
				 * (app)", its call site */
	uint32_t stack;		/* the call's stack (gt_decoder__stack), 0 none */
};

struct az_finding {
	enum az_rule rule;
	const char *id;		/* az_rule__id(rule) */
	enum az_severity severity;
	uint64_t cost_ns;	/* the time it is estimated to cost the scope */
	bool cost_upper;	/* cost_ns is an upper bound ("up to") */
	uint64_t count;		/* occurrences (calls, gaps, kernels: the summary says which) */
	const char *summary;	/* one line with the figures (owned by the result) */
	const char *fix;	/* one suggested fix (static text) */
	uint32_t nexamples;
	struct az_example examples[AZ_MAX_EXAMPLES];	/* by cost, highest first */
};

/* ---- question 1: busy or waiting --------------------------------------- */

/* Where the GPU busy figure comes from. */
enum az_busy_source {
	AZ_BUSY_NONE = 0,	/* no GPU work seen at all */
	AZ_BUSY_GPU_RECORDS,	/* CUPTI kernel, copy and set records (merged trace): measured */
	AZ_BUSY_GPU_METRICS,	/* GPU metric samples (utilization): device-wide, sampled */
	AZ_BUSY_SYNC_ESTIMATE,	/* the host's waits in synchronizing calls: a lower bound */
};

/* What a GPU idle interval was waiting for.  An interval ends where the
 * next piece of work (kernel, copy, set) starts on that device; L is the
 * entry of the call that launched it, e the end of the work before. */
enum az_idle {
	AZ_IDLE_SUBMIT,		/* [e, L]: the launch came after the GPU had gone idle:
				 * waiting for the host to submit */
	AZ_IDLE_LAUNCH,		/* [max(e, L), start], at most 50 us: submitted, not yet
				 * started: launch overhead between back-to-back work */
	AZ_IDLE_SYNC,		/* [e, L] while the process was in a synchronizing call or a
				 * blocking copy that began before e: the host waited for the
				 * GPU to drain before it submitted more */
	AZ_IDLE_OTHER,		/* the rest: submitted work that waited longer than 50 us
				 * (a dependency), work with no launch call linked */
	AZ_IDLE_BEFORE,		/* from the wall time's start to the first GPU work */
	AZ_IDLE_AFTER,		/* from the last GPU work to the wall time's end */
	AZ_IDLE__COUNT,
};
/* "submit", "launch", "sync", "other", "before", "after". */
const char *az_idle__name(enum az_idle i);

struct az_gpu {
	enum az_busy_source source;
	uint32_t devices;		/* devices its GPU work ran on */
	uint64_t busy_ns;		/* GPU busy, summed over devices (source's figure) */
	uint64_t wall_ns;		/* the scope's wall time times devices (at least 1) */
	uint64_t active_ns;		/* first GPU work's start to last one's end, summed over
					 * devices (0 without GPU records) */
	uint64_t idle_ns[AZ_IDLE__COUNT];	/* GPU records only */
	uint64_t idle_gaps[AZ_IDLE__COUNT];	/* intervals of each kind */
	uint64_t submit_in_cuda_ns;	/* of AZ_IDLE_SUBMIT: while the launching thread was in
					 * other CUDA calls; the rest it was outside CUDA */
	uint64_t concurrent_ns;		/* time with two or more pieces of work running at once */
	uint64_t work;			/* kernels, copies and sets placed on the timeline */
	uint64_t late;			/* GPU records that came too late to be placed (their
					 * time is in busy_ns, not in the idle split) */
	uint64_t unlinked;		/* GPU records with no launch call linked */
	/* AZ_BUSY_SYNC_ESTIMATE */
	uint64_t waits;			/* synchronizing calls the estimate rests on */
	/* AZ_BUSY_GPU_METRICS: means over the samples in the wall time, in
	 * millionths of a percent (ppm of 100 %); -1 when not sampled */
	int64_t util_micro;		/* GPU utilization (a kernel running), % * 1e6 */
	uint64_t util_samples;
};

struct az_cpu {
	uint32_t threads;		/* threads that made CUDA calls */
	uint64_t span_ns;		/* their first call's entry to last call's exit, summed */
	uint64_t calls_ns;		/* in CUDA calls other than waits */
	uint64_t sync_ns;		/* in waiting calls (cuda_sync_sum's: synchronize, query,
					 * stream wait) */
	uint64_t sync_blocked_ns;	/* of sync_ns, off-CPU (scheduler records) */
	uint64_t sync_cut_ns;		/* of sync_ns, in waits the trace ended inside: on or
					 * off the CPU not known */
	uint64_t off_ns;		/* off-CPU outside CUDA calls (scheduler records) */
	uint64_t outside_ns;		/* span minus calls and waits: outside CUDA */
	bool sched;			/* scheduler records cover these threads: the on/off-CPU
					 * split is known */
	uint64_t calls;			/* top-level calls counted */
	uint64_t incomplete;		/* calls without an exit: their time is not known */
	uint64_t cut;			/* calls in flight at the trace's end: counted up to
					 * it (in calls, their time is at least that) */
};

/* ---- question 2: what bounds it ------------------------------------------ */

/* Kernel classes, from the (demangled) name; first match wins in this
 * order: NCCL, attention, GEMM, convolution, reduction, elementwise. */
enum az_kclass {
	AZ_KC_GEMM,		/* gemm, matmul, cublas, cutlass, xmma, nvjet, gemv */
	AZ_KC_CONV,		/* conv, cudnn, winograd, implicit_gemm conv kernels */
	AZ_KC_ATTENTION,	/* flash, attention, attn, fmha, mha, sdpa */
	AZ_KC_ELEMENTWISE,	/* elementwise, vectorized, fill, copy, add, mul, relu, ... */
	AZ_KC_REDUCTION,	/* reduce, softmax, norm, sum, argmax, topk, scan */
	AZ_KC_NCCL,		/* nccl */
	AZ_KC_OTHER,		/* a name that says none of these */
	AZ_KC__COUNT,
};
/* "gemm", "conv", "attention", "elementwise", "reduction", "nccl", "other". */
const char *az_kclass__name(enum az_kclass c);
/* The class of a kernel name. */
enum az_kclass az_kclass__of(const char *name);

/* The verdict of question 2. */
enum az_bound {
	AZ_BOUND_UNKNOWN = 0,	/* no GPU work, or too little to say */
	AZ_BOUND_COMPUTE,	/* GEMM, convolution, attention kernels */
	AZ_BOUND_MEMORY,	/* elementwise and reduction kernels (memory-bound classes) */
	AZ_BOUND_COMMUNICATION,	/* NCCL kernels */
	AZ_BOUND_TRANSFERS,	/* copies and sets */
	AZ_BOUND_KERNELS,	/* kernels whose names do not say their class */
	AZ_BOUND_LAUNCH,	/* launch overhead: kernels shorter than their launches */
	AZ_BOUND_HOST,		/* the host: the GPU waited for submissions or syncs */
};
/* "unknown", "compute", "memory", "communication", "transfers", "kernels",
 * "launch", "host". */
const char *az_bound__name(enum az_bound b);

#define AZ_MEM_KINDS (GT_COPY__COUNT + 1)	/* copy kinds (enum gt_copy_kind), then sets */

struct az_kernel {
	const char *name;		/* demangled (owned by the result) */
	enum az_kclass kclass;
	uint64_t count;
	uint64_t total_ns;		/* GPU time */
};

struct az_work {
	uint64_t kernels;		/* GPU kernel records */
	uint64_t kernel_ns;		/* their GPU time */
	uint64_t kernel_median_ns;	/* median GPU duration (log buckets of 1/32: within 3 %;
					 * exact when the middle bucket holds one value) */
	uint64_t class_ns[AZ_KC__COUNT];	/* GPU time by class */
	uint64_t class_count[AZ_KC__COUNT];
	uint64_t copy_ns[AZ_MEM_KINDS];	/* GPU time of copies by direction, sets last */
	uint64_t copy_bytes[AZ_MEM_KINDS];
	uint64_t copy_count[AZ_MEM_KINDS];
	uint64_t launches;		/* launch calls (graph launches included) */
	uint64_t launch_median_ns;	/* median launch call duration on the CPU; 0 when
					 * launches were recorded at entry only */
	uint64_t launch_gap_median_ns;	/* median time between a thread's launch entries
					 * with no other call between them */
	uint32_t nkernels;		/* entries of top */
	struct az_kernel top[AZ_TOP_KERNELS];	/* by GPU time, highest first */
	/* GPU metrics (device-wide, sampled): means in % * 1e6 over the
	 * samples in which the GPU was busy (its utilization above 0 at that
	 * time; every sample when the scope has no utilization: metric_all);
	 * -1 when not sampled or with fewer than 3 such samples */
	int64_t tensor_micro, dram_micro, sm_micro;
	uint64_t metric_samples;	/* the samples the means are (or would be) over */
	uint64_t metric_idle;		/* samples left out: the GPU idle (utilization 0) */
	bool metric_all;		/* no utilization to tell busy from idle: every sample */
	uint32_t metric_hz;		/* the sampling rate (the trace header's), 0 unknown */
	enum az_bound bound;
};

/* ---- question 3: parallelism and serial dependencies ---------------------- */

struct az_parallel {
	uint32_t streams;		/* distinct streams of its GPU work (CUPTI ids), else of
					 * its launch calls (handles) */
	uint64_t legacy_launches;	/* launches on the legacy default stream */
	uint32_t sm_count;		/* the SM count grids were judged against */
	bool sm_assumed;		/* not known: AZ_SM_ASSUMED was used */
	uint64_t small_kernels;		/* kernels with grids of fewer blocks than sm_count */
	uint64_t small_ns;		/* their GPU time (launches when no GPU records: 0) */
	uint64_t waits;			/* synchronize calls (stream, event, context) */
	uint64_t launches_per_wait;	/* median launches between two waits of a thread */
	uint64_t blocking_copies;	/* blocking host<->device copies among the launches */
	uint64_t host_gaps;		/* GPU idle intervals of 1 ms or more while the host was
					 * outside CUDA (without GPU records: thread gaps of
					 * 1 ms or more between launches with no CUDA call) */
	uint64_t host_gap_ns;
};

/* ---- communication (NCCL) ------------------------------------------------- */

/* A process' NCCL calls, and its collectives matched with the other ranks'
 * of their communicator (the same uid and number: every rank's call of one
 * collective).  A rank arrives at a collective at its call's entry (the
 * host's time: where a rank is late because of its host, its enqueue is
 * late); the last rank to arrive is the collective's straggler, and every
 * other rank waited from its arrival to the straggler's. */
struct az_comm {
	uint64_t calls;			/* NCCL calls */
	uint64_t collectives;		/* of which collectives */
	uint64_t host_ns;		/* time in NCCL calls on the host (calls with an exit) */
	uint64_t bytes;			/* what its data calls named */
	uint64_t matched;		/* collectives seen on every rank of their communicator */
	uint64_t matched_gpu;		/* of them, those judged by their kernels' GPU starts
					 * (every rank's known), the others by the calls' entries */
	uint64_t waited_ns;		/* summed over them: the last rank's arrival minus its own
					 * (arrival: the GPU start, else the call's entry) */
	uint64_t last;			/* of them, the ones it came to last */
	uint64_t caused_ns;		/* the others' waits in those */
	uint32_t waited_for_pid;	/* the process it waited for longest, 0 none */
	int32_t waited_for_rank;	/* its rank, -1 unknown */
	uint64_t waited_for_ns;		/* how long it waited for that one */
	int32_t rank, world;		/* its rank in its job (environment, else first init), -1 */
};

/* The device size assumed when the trace does not say and --sms is not
 * given: fewer blocks than this is too few for any current data-center GPU. */
#define AZ_SM_ASSUMED 40

/* ---- scopes and the result ------------------------------------------------ */

enum az_scope_kind {
	AZ_SCOPE_PROCESS = 1,	/* a whole process (in the --range span when given) */
	AZ_SCOPE_RANGE,		/* one capture range of a process */
	AZ_SCOPE_WINDOW,	/* one light-mode window, for --range wN */
	AZ_SCOPE_STEADY,	/* a process' steady state (analyze_opts.steady) */
};

/* What a process' start-up spent its CUDA calls' time on (before its
 * steady state). */
enum az_startup {
	AZ_SU_MODULE,		/* module and library loads (first-call compilation, lazy loading) */
	AZ_SU_ALLOC,		/* allocations and frees */
	AZ_SU_SYNC,		/* synchronizations and blocking copies */
	AZ_SU_INIT,		/* initialization and contexts */
	AZ_SU_OTHER,		/* the rest: launches, copies, ... */
	AZ_SU__COUNT,
};
/* "module_loads", "allocations", "synchronizations", "init", "other" */
const char *az_startup__name(enum az_startup k);

/* The phases of a process (analyze/steady.h): where its steady state comes
 * from, and its start-up and tail. */
struct az_phases {
	const char *source;	/* "nvtx", "sync", "collective", "graph", "kernel", or "gpu_span"
				 * (no iterations: the GPU's active span), "calls_span" (neither:
				 * its first CUDA call to its last) */
	const char *what;	/* the NVTX series, the call or kernel that ends each iteration;
				 * NULL for the spans (owned by the result) */
	uint32_t found;		/* iterations found (0 for the spans) */
	uint32_t count;		/* of those, in the steady state */
	uint32_t startup, tail;	/* ... before it and after it */
	bool steady;		/* the iteration times settle (else every one found is in it) */
	uint64_t median_ns;	/* median iteration time in it (0 for the spans); with group > 1
				 * the median group's time over group: an estimate */
	uint32_t group;		/* iterations counted in groups of this many (a run that repeats
				 * more than STEADY_MAX_SEGS times: analyze/steady.h), else 1;
				 * the counts above are groups x group */
	uint64_t start_ts, end_ts;	/* the steady state's span (its iterations') */
	bool waited;		/* no GPU records: end_ts is the exit of the synchronization
				 * that waited for the work its last launches queued */
	uint64_t proc_start_ts;	/* the process' first record */
	uint64_t startup_calls_ns[AZ_SU__COUNT];	/* its calls' time before start_ts, by kind */
	uint64_t startup_calls[AZ_SU__COUNT];		/* ... and how many */
};

/* The three answers, one sentence each. */
enum az_question { AZ_Q_BUSY, AZ_Q_BOUND, AZ_Q_PARALLEL, AZ_Q__COUNT };

struct az_scope {
	enum az_scope_kind kind;
	uint32_t pid;
	uint32_t number;		/* range or window number, 0 for a process */
	const char *name;		/* process name (command line or comm), NULL unknown */
	uint64_t start_ts, end_ts;	/* the wall time, CLOCK_MONOTONIC ns */
	bool sampled;			/* light mode: hot calls only partly recorded */
	const char *answer[AZ_Q__COUNT];	/* one sentence each (owned by the result) */
	struct az_gpu gpu;
	struct az_cpu cpu;
	struct az_work work;
	struct az_parallel par;
	struct az_comm comm;
	size_t nfindings;
	struct az_finding *findings;	/* by cost, highest first */
	struct az_phases phases;	/* AZ_SCOPE_STEADY: where it comes from */
};

struct analyze_result {
	const char *path;		/* the trace (as given) */
	uint64_t trace_start_ts;	/* the header's start_ts */
	const char *damage;		/* why the trace ended early, NULL when whole */
	struct trace_damage dmg;	/* what the readers met (trace_damage__report's rule) */
	bool merged;			/* cupti=merged: GPU records on the timeline */
	size_t nscopes;
	struct az_scope *scopes;	/* per process by pid, each followed by its ranges */
	uint64_t records;		/* records read (analyze__file; the core: its non-call ones) */
	const char *notes[10];		/* what the figures rest on, NULL-terminated */
	void *priv;			/* owned storage */
};

/* ---- the core ------------------------------------------------------------- */

struct analyze_opts {
	uint32_t pid;			/* only this process (0: every one) */
	uint32_t rules;			/* --rules: the findings of these rules only (bit
					 * 1 << enum az_rule), 0: every rule */
	uint32_t sm_count;		/* the GPU's SMs (0: from the trace, else assumed) */
	bool no_ranges;			/* no per-range scopes */
	/* limit everything to this span (--range), like stats' scope: records
	 * of pid (0: every process) from start to end */
	bool span;
	uint32_t span_pid;
	uint64_t span_start, span_end;
	enum az_scope_kind span_kind;	/* AZ_SCOPE_RANGE or _WINDOW */
	uint32_t span_number;
	/* analyze__file: a scope of each process' steady state before its
	 * whole run (a first pass finds it: analyze/steady.h); not with a
	 * span */
	bool steady;
	/* analyze__file: a second consumer of the same pass (diff's figures
	 * of the iterations), so that the trace is read once for both: every
	 * call and other record the decoder emits, in the order analyze gets
	 * them, is handed to tap_call / tap_other (ctx tap_ctx) after analyze
	 * has taken it; a non-zero return ends the pass as an error.
	 * *tap_decoder is set to the pass' decoder before the first record;
	 * *tap_fed is set once every record was fed and the decoder finished
	 * (false: the pass failed, the line on err says why). */
	gt_call_cb tap_call;
	gt_rec_cb tap_other;
	void *tap_ctx;
	struct gt_decoder **tap_decoder;
	bool *tap_fed;
};

struct analyze;
struct capture_spans;

/* A core for the trace of info; spans (finished, may be NULL) gives the
 * capture ranges the per-range scopes follow.  NULL when out of memory. */
struct analyze *analyze__new(const struct analyze_opts *o, const struct gt_file_info *info,
			     const struct capture_spans *spans);
void analyze__free(struct analyze *a);
/* The decoder's callbacks (ctx = the core); set all three on the decoder
 * the records are fed through (gt_decoder__new(analyze__call,
 * analyze__other, a) and gt_decoder__set_entry_cb(d, analyze__entry)), and
 * analyze__set_decoder() before the first record.  Records must come in
 * time order as analyze_read (analyze__file) delivers them: a merged trace's
 * tail of GPU API, NVTX and unlinked GPU records interleaved by time.  Each
 * returns 0 or -ENOMEM. */
int analyze__entry(void *ctx, const struct gt_hdr *rec, uint64_t *cookie);
int analyze__call(void *ctx, const struct gt_callrec *c);
/* The decoder's NCCL callback (gt_decoder__set_nccl_cb; ctx = the core). */
int analyze__nccl(void *ctx, const struct gt_ncclrec *n);
int analyze__other(void *ctx, const struct gt_hdr *rec);
void analyze__set_decoder(struct analyze *a, struct gt_decoder *d);
/* The trace's end (the trailer's end, else its last record), set before
 * gt_decoder__finish: the calls still open then (at_end) count up to it.
 * Without it they count up to the newest time read. */
void analyze__set_end(struct analyze *a, uint64_t end_ts);
/* Ends the pass at end_ts (the trace's end) and builds the result, which
 * the caller owns.  Returns 0 or -ENOMEM. */
int analyze__finish(struct analyze *a, uint64_t end_ts, struct analyze_result **out);
void analyze_result__free(struct analyze_result *r);

/* ---- running it over a file ----------------------------------------------- */

/* Reads path in time order through a decoder and the core.  Returns 0 with
 * *out set; or the exit status after one line on err: 2 for a --range the
 * trace does not have, 1 for a file that cannot be read, is not a trace or
 * holds no CUDA calls (a trace with no process to analyze). */
int analyze__file(const char *path, const struct analyze_opts *o, const char *range,
		  struct analyze_result **out, FILE *err);

enum analyze_format { ANALYZE_TABLE, ANALYZE_JSON, ANALYZE_MD };

/* Renders r.  Returns 0 or a negative errno (write error, ENOMEM). */
int analyze__write(const struct analyze_result *r, enum analyze_format f, FILE *out);

struct analyze_run_opts {
	const char *path;		/* the trace */
	struct analyze_opts core;	/* -p, --sms */
	const char *range;		/* --range "N" or "wN", NULL: none */
	enum analyze_format format;
	const char *output;		/* NULL or "-": out; else the file (0600, via a temporary) */
	bool force;			/* replace an output that exists */
	FILE *out, *err;
};

/* `gtrace-bpf analyze`: the exit status (0; 1 or 2 after one line on err). */
int analyze__run(const struct analyze_run_opts *o);

#endif
