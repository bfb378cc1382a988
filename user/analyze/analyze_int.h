/* SPDX-License-Identifier: MIT */
/*
 * Internal to analyze: the accumulators its files share.  analyze.c takes
 * the calls and records and routes them to scopes; analyze_calls.c counts a
 * call in a scope; analyze_gpu.c orders the GPU work by start (a heap with a
 * watermark) and sweeps each device's timeline; analyze_rules.c turns a
 * finished scope into answers and findings; analyze_write.c renders results
 * for people, analyze_json.c for programs; analyze_read.c reads a file in
 * time order.
 */
#ifndef GTRACE_ANALYZE_INT_H
#define GTRACE_ANALYZE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/analyze.h"
#include "decode/capture_spans.h"
#include "lib/hmap.h"
#include "lib/loghist.h"

/* Thresholds of the definitions (analyze.h) and rules (analyze_rules.c). */
#define AZ_LAUNCH_MAX_NS	50000ull	/* submitted work starting later than this waited
						 * on something else: "other", not launch overhead */
#define AZ_HOST_GAP_NS		1000000ull	/* a host gap: 1 ms or more outside CUDA */
#define AZ_LONG_GAP_NS		500000000ull	/* gpu_gaps: nsys's default, 500 ms */
/* GPU records are placed once no record can come before them any more:
 * when the newest time read is this far past their start.  A merged trace
 * puts each one right after its launch call (a few us of disorder across
 * CPUs); an unmerged daemon snapshot (cupti=inline) holds them as the agent
 * flushed them, up to about a second after they ran. */
#define AZ_SLACK_NS		20000000ull
#define AZ_SLACK_INLINE_NS	2500000000ull
#define AZ_WAITS_KEPT		65536		/* closed waits kept per process for the gaps */
#define AZ_METRIC_DEVS		64		/* GPUs whose metric samples are told apart (the
						 * recorder samples 64 at most) */
#define AZ_METRIC_MIN		3		/* samples the activity means need, else no figures */

/* The metrics of a GPU metric sample analyze uses (GT_REC_GPU_METRIC ids
 * GT_GPUM_GPU_UTIL, _SM_ACTIVE, _TENSOR_ACTIVE, _DRAM_BW). */
enum az_mid { AZ_M_UTIL, AZ_M_SM, AZ_M_TENSOR, AZ_M_DRAM, AZ_M__COUNT };

/* GPU metric samples kept after they were judged: a process's records may
 * be written after samples of its time (the recorder's metric queue and its
 * ring buffer are drained in turns). 1 GPU at 50 Hz: 20 s; 8 at 100 Hz: 1.3 s. */
#define AZ_MRECENT 1024

/* One GPU's sample being read: the records of one sampling round of one
 * GPU share its time and come one after the other (the sampler queues a
 * GPU's round at once, the recorder writes the queue in order: see
 * az_metric); the sample is judged when that GPU's next round begins, or
 * at the end. */
struct az_msample {
	uint32_t device;
	uint64_t ts;
	uint32_t have;			/* bits (1 << enum az_mid) of v[] read */
	int64_t v[AZ_M__COUNT];		/* micro-units */
};

/* Activity means' sums: of the samples that gave any of SM, tensor, DRAM. */
struct az_msum {
	uint64_t samples;
	uint64_t n[AZ_M__COUNT];	/* AZ_M_SM .. AZ_M_DRAM used */
	int64_t sum[AZ_M__COUNT];
};

/* The best few examples of a finding by value. */
struct az_top {
	uint32_t n;
	struct az_top_ent {
		uint64_t value;		/* what ranks it (ns) */
		struct az_example ex;	/* what: a static or decoder-owned string */
	} v[AZ_MAX_EXAMPLES];
};

/* Keeps (value, ex) when it is among the best AZ_MAX_EXAMPLES (ties: the
 * earlier one stays). */

static inline void az_top__add_at(struct az_top *t, uint64_t value, uint64_t ts, uint64_t dur,
				  uint32_t pid, uint32_t tid, const char *what, uint32_t stack)
{
	uint32_t i, low = 0;

	if (t->n < AZ_MAX_EXAMPLES) {
		i = t->n++;
	} else {
		for (i = 1; i < t->n; i++)
			if (t->v[i].value < t->v[low].value)
				low = i;
		if (value <= t->v[low].value)
			return;
		i = low;
	}
	t->v[i] = (struct az_top_ent){ value, { ts, dur, pid, tid, what, stack } };
}

/* az_top__add_at() of an example without a stack. */
static inline void az_top__add(struct az_top *t, uint64_t value, uint64_t ts, uint64_t dur,
			       uint32_t pid, uint32_t tid, const char *what)
{
	az_top__add_at(t, value, ts, dur, pid, tid, what, 0);
}

static inline void az_top__merge(struct az_top *dst, const struct az_top *src)
{
	for (uint32_t i = 0; i < src->n; i++)
		az_top__add_at(dst, src->v[i].value, src->v[i].ex.ts, src->v[i].ex.dur, src->v[i].ex.pid,
			       src->v[i].ex.tid, src->v[i].ex.what, src->v[i].ex.stack);
}

/* A call site's synchronize calls (sync_site). */
struct az_site {
	uint64_t ns, n;			/* the host's time waiting there, the calls */
	struct az_top_ent longest;	/* its longest wait (its stack names the site) */
};

/* A thread as the whole pass sees it. */
struct az_thread {
	uint32_t pid, tid;
	uint32_t depth;		/* entries taken whose calls have not come out */
	uint64_t off_cum;	/* ns off-CPU, summed over its GT_REC_OFFCPU records */
	uint64_t last_end;	/* exit of its latest call that has one */
	uint64_t wait_ts;	/* entry of its open waiting call, 0 none */
	uint16_t wait_api;	/* that call's api */
	uint8_t wait_kind;	/* enum az_wait_kind */
};

/* What kept the host from submitting. */
enum az_wait_kind { AZ_WAIT_SYNC = 1, AZ_WAIT_COPY = 2 };

/* A piece of GPU work's place in the heap: its start, its arrival order
 * (ties by start keep it), its slot in the work's slab. */
struct az_hkey {
	uint64_t start;
	uint64_t seq;
	uint32_t slot;
};

/* A closed wait of a process: a synchronizing call or a blocking copy. */
struct az_wait {
	uint64_t start, end;
	uint32_t tid;
	uint16_t api;
	uint8_t kind;		/* enum az_wait_kind */
};

/* A thread within a scope. */
struct az_tacc {
	uint32_t tid;
	uint64_t first, last;		/* its first call's entry, its latest call's end */
	uint64_t off_first, off_last;	/* the thread's off_cum at those two points */
	uint64_t calls_ns, sync_ns, sync_off_ns, calls_off_ns;
	uint64_t sync_cut_ns;		/* of sync_ns, in waits the trace ended inside */
	uint64_t last_launch;		/* entry of its latest launch, 0 none */
	bool other_since;		/* another call came after that launch */
	uint64_t launches_since_wait;
	bool timed;			/* has a call with an exit */
};

/* One device's timeline in a scope: a sweep over its work in start order. */
struct az_dev {
	uint32_t device;
	bool started;
	uint64_t first;		/* the first work's start */
	uint64_t t;		/* accounted up to here */
	uint64_t last_end;	/* the latest end so far (where the device went idle) */
	uint32_t n, cap;	/* ends of the running work: a min-heap */
	uint64_t *ends;
	uint64_t busy, conc;	/* ns with >= 1, >= 2 pieces of work running */
};

/* A kernel name in a scope (keyed by the decoder's string, which it hands
 * out once per distinct name). */
struct az_kname {
	const char *name;
	enum az_kclass kclass;
	uint64_t count, ns;
};

/* One scope's accumulators. */
struct az_acc {
	enum az_scope_kind kind;
	uint32_t pid, number;
	uint64_t start, end;		/* records seen (ranges: from the open record on) */
	bool have_start;
	bool closed;			/* a range whose close came: finished once its GPU work is */
	uint64_t close_ts;
	uint64_t pending;		/* its GPU work still in the heap */
	struct az_acc *next;		/* closed ranges waiting for their GPU work */
	struct hmap threads;		/* (tid, 0) -> struct az_tacc */
	struct az_tacc *last_t;
	/* calls */
	uint64_t calls, incomplete, cut;
	uint64_t launches, legacy, created_stream_launches;
	struct az_top legacy_top;
	struct loghist launch_dur, launch_gap, per_wait, kdur;
	struct hmap lstreams;		/* launch stream handles seen, (handle, 0) -> self */
	uint64_t small_launches;	/* launch grids under the SM count */
	struct az_top small_launch_top;
	uint64_t waits, wait_ns;	/* synchronize calls */
	struct az_top wait_top;
	/* synchronize calls with a stack (--stacks), by their call site */
	struct hmap sites;		/* (site key, 0) -> struct az_site */
	uint64_t site_waits, site_wait_ns;
	uint64_t est_ns, est_end;	/* union of wait intervals (the estimate) */
	uint64_t bc_pending, bc_pending_ns, bc_inside, bc_inside_ns;	/* blocking copies */
	struct az_top bc_pending_top, bc_top;
	uint64_t ms_pending, ms_pending_ns, ms_inside, ms_inside_ns;	/* synchronous sets */
	struct az_top ms_pending_top, ms_top;
	uint64_t pageable, pageable_ns;
	struct az_top pageable_top;
	uint64_t thost_gaps, thost_gap_ns;	/* host gaps from the calls alone */
	struct az_top thost_top;
	/* GPU */
	struct az_dev *devs;
	uint32_t ndevs, devcap;
	uint64_t gpu_first, gpu_last;	/* of its GPU work */
	uint64_t idle[AZ_IDLE__COUNT], gaps[AZ_IDLE__COUNT];
	uint64_t submit_in_cuda;
	uint64_t sync_idle_wait, sync_idle_copy;	/* AZ_IDLE_SYNC by what was waited in */
	uint64_t sync_gaps_wait;
	struct az_top gap_top, submit_top, sync_top, long_top, host_top;
	uint64_t nidle;			/* idle intervals between GPU work */
	uint64_t long_gaps, long_gap_ns, host_gaps, host_gap_ns;
	uint64_t work, late, unlinked;
	uint64_t kernels, kernel_ns;
	uint64_t class_ns[AZ_KC__COUNT], class_count[AZ_KC__COUNT];
	uint64_t copy_ns[AZ_MEM_KINDS], copy_bytes[AZ_MEM_KINDS], copy_count[AZ_MEM_KINDS];
	struct hmap knames;		/* (name address, 0) -> struct az_kname */
	struct hmap gstreams;		/* (device << 32 | stream, 0) -> self */
	uint64_t small_kernels, small_ns;
	struct az_top small_top;
	uint64_t copy_top_ns;		/* copies: for single_stream */
	struct az_top copy_top;
	/* NCCL (analyze_nccl.c), in the process' whole scope */
	struct az_comm comm;
	struct hmap waited_for;		/* (pid, 0) -> struct az_waited: whom it waited for */
	struct az_top nccl_wait_top;	/* its longest waits in collectives */
	struct az_top nccl_last_top;	/* the collectives it came to last, by the others' waits */
	/* GPU metrics (GT_REC_GPU_METRIC), by sample (one GPU's round) in the
	 * scope: the utilization of every sample (the busy fraction counts the
	 * idle ones); the activity of the samples in which the GPU was busy
	 * (its utilization above 0), and of those without a utilization (used
	 * only when the scope has none at all) */
	uint64_t m_util_n;
	int64_t m_util;
	struct az_msum m_busy, m_nogate;
	uint64_t m_idle;		/* samples with activity left out: utilization 0 */
};

/* A process. */
struct az_proc {
	uint32_t pid;
	struct az_acc *whole;		/* the process (in the span, with --range) */
	struct az_acc *steady;		/* its steady state, NULL without one */
	struct az_phases *phases;	/* where that comes from (the first pass'), NULL none */
	struct az_acc *range;		/* its capture range open now, NULL none */
	bool seen;			/* a record of it in the scope */
	uint64_t exit_ts;		/* its GT_REC_EXIT, 0 while none came */
	struct az_wait *waits;		/* closed waits by end, waits[head..n) live */
	size_t head, n, cap;
	uint64_t waits_dropped;
	uint32_t open_waits;		/* its threads' waits open now */
	struct az_alloc {
		uint64_t lo, hi;	/* [lo, hi) */
		bool pinned;		/* page-locked host memory, else device memory */
	} *allocs;			/* by lo */
	size_t nallocs, acap;
};

/* A piece of GPU work waiting in the heap for its place on the timeline. */
struct az_item {
	uint64_t start, end;
	uint64_t launch;		/* entry of its call (0: not linked) */
	uint64_t host_end;		/* end of the launching thread's call before that one */
	uint64_t bytes;
	const char *name;		/* kernels: the decoder's demangled name */
	struct az_acc *acc[3];		/* the scopes it counts in (the others than the first
					 * may be NULL) */
	uint32_t pid, tid, device, stream;
	uint32_t blocks;		/* kernels: blocks in the grid (saturated) */
	uint16_t kind;			/* GT_REC_GPU_KERNEL, _MEMCPY or _MEMSET */
	uint16_t copy_kind;		/* copies: enum gt_copy_kind */
};

/* A finished scope's strings, kept with the result. */
struct az_store {
	char **strs;
	size_t n, cap;
};

struct analyze {
	struct analyze_opts o;
	struct az_phases *phases;	/* per process (phase_pids[i]), from the first pass */
	uint32_t *phase_pids;
	size_t nphases;
	uint32_t sm_count;		/* the SM count grids are judged against */
	bool sm_assumed;		/* neither --sms nor the trace said: AZ_SM_ASSUMED */
	struct gt_gpu_sms sms;		/* what the trace says (no --sms) */
	bool merged;			/* cupti=merged */
	bool gpu_trace;			/* cupti=merged or inline: GPU records may come */
	uint64_t slack;
	uint64_t trace_start;
	struct gt_decoder *d;
	struct capture_spans *spans;	/* fed as read, for the sampled flags */
	const struct capture_spans *given;	/* the caller's (unused for routing) */
	struct hmap procs;		/* (pid, 0) -> struct az_proc */
	struct az_proc *last_proc;
	struct hmap threads;		/* (tid, pid) -> struct az_thread */
	struct az_thread *last_thread;
	struct az_hkey *heap;		/* min-heap by (start, seq) of the work waiting */
	size_t nheap, hcap;
	struct az_hkey *run;		/* the work waiting that came in start order: a FIFO */
	size_t rhead, rlen, rcap;	/* its first key, keys, a ring of rcap */
	struct az_item *items;		/* the work's slab: a slot is in the heap or free */
	size_t icap;
	uint32_t *free_slots;		/* free slots of items */
	size_t nfree, fcap;
	uint64_t seq;
	uint64_t pos;			/* the newest time read */
	struct az_acc *closing;		/* closed ranges waiting for their GPU work */
	struct az_scope *scopes;	/* finished scopes */
	size_t nscopes, scap;
	struct az_store store;
	uint64_t records;
	bool sched;			/* the trace has scheduler (off-CPU) records */
	struct hmap colls;		/* (uid, seq) -> struct az_coll: collectives not yet seen
					 * on every rank (analyze_nccl.c) */
	uint64_t colls_big;		/* collectives of communicators too large to match */
	struct hmap nccl_gpu;		/* (hash(NCCL call's entry, tid), pid) -> uint64_t: the
					 * earliest GPU start of the kernels launched inside
					 * the open call (analyze_nccl.c) */
	struct az_msample msamp[AZ_METRIC_DEVS];	/* per GPU, the sample being read */
	uint32_t nmsamp;
	/* the last AZ_MRECENT samples judged, for a process first seen after
	 * them whose time they fall in (az_metric__seen) */
	struct az_msample mrecent[AZ_MRECENT];
	uint32_t nrecent;		/* samples judged in all; mrecent[n % AZ_MRECENT] */
	uint64_t msamp_over;		/* metric records of GPUs beyond AZ_METRIC_DEVS: left out */
	uint32_t gpum_hz;		/* the header's gpu_metrics=HZ, 0 unknown */
	uint64_t end_set;		/* analyze__set_end's, 0 = not set */
	uint64_t cut;			/* calls in flight at the end, counted up to it */
	struct {			/* the one of them that began first */
		uint64_t ts;
		uint32_t pid, tid;
		uint16_t api;
	} cut0;
	uint64_t gaps;			/* libcuda loads that left a gap (GT_REC_LIBLOAD) */
	struct {			/* the first of them (its record's fields) */
		uint64_t ts, cont_ts, end_ts;
		uint32_t pid;
		uint16_t outcome;
	} gap0;
	char gap0_path[256];		/* its file, as the process named it */
	int err;			/* the first allocation failure */
};

/* Widens acc's wall time to hold [t0, t1]. */
/* The first pass of analyze_opts.steady (analyze_steady.c): each process'
 * phases over the trace r (rewound after).  Fills a's phases.  Returns 0
 * or a negative errno. */
int az_steady__find(struct analyze *a, struct trace_reader *r);

static inline void acc_seen(struct az_acc *acc, uint64_t t0, uint64_t t1)
{
	if (!acc->have_start || t0 < acc->start) {
		if (acc->kind == AZ_SCOPE_PROCESS || !acc->have_start)
			acc->start = t0;
		acc->have_start = true;
	}
	if (t1 > acc->end)
		acc->end = t1;
}

/* The blocks in a grid (saturated). */
static inline uint32_t grid_blocks(const uint32_t g[3])
{
	uint64_t b = (uint64_t)g[0] * g[1] * g[2];

	return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

/* analyze_calls.c */
/* Counts call c of p in the scope acc: nested when it was made inside
 * another call of its thread, off_now the thread's off-CPU total at its
 * exit.  Returns 0 or -ENOMEM. */
int az_calls__acc(struct analyze *a, struct az_acc *acc, struct az_proc *p,
		  const struct gt_callrec *c, bool nested, uint64_t off_now);
/* Allocations and frees, per process (not per scope): for a copy's host
 * side.  Returns 0 or -ENOMEM. */
int az_calls__track_memory(struct analyze *a, struct az_proc *p, const struct gt_callrec *c);

/* analyze_gpu.c */
/* Queues one GPU record's work; places what the watermark allows. */
int az_gpu__push(struct analyze *a, const struct az_item *it);
/* Places the queued work that started before limit (UINT64_MAX: all). */
int az_gpu__drain(struct analyze *a, uint64_t limit);
/* Ends a scope's device timelines at end (its wall time's end). */
int az_gpu__finish_acc(struct analyze *a, struct az_acc *acc, uint64_t end);
void az_gpu__free_acc(struct az_acc *acc);
/* True when the process was in a wait at t: *kind gets its kind. */
bool az_proc__waiting_at(struct analyze *a, struct az_proc *p, uint64_t t, uint8_t *kind);

/* analyze_nccl.c */
/* The unmatched collectives left at the end (a rank not in the trace). */
uint64_t az_nccl__unmatched(const struct analyze *a);
/* A linked GPU kernel that started at start, launched at launch_ts by tid:
 * its start kept for the NCCL call the launch is inside, if any.  Returns 0
 * or -ENOMEM. */
int az_nccl__gpu(struct analyze *a, uint32_t pid, uint32_t tid, uint64_t launch_ts,
		 uint64_t start);
void az_nccl__free(struct analyze *a);
void az_nccl__free_acc(struct az_acc *acc);
/* analyze.c, for analyze_nccl.c: the process of pid (made on first use),
 * NULL when out of memory; whether its records at ts count. */
struct az_proc *az__proc(struct analyze *a, uint32_t pid);
bool az__wanted(const struct analyze *a, uint32_t pid, uint64_t ts);

/* analyze_rules.c */
/* Fills s (pid, kind, times and the figures set by analyze.c) from acc:
 * the figures, answers and findings.  Returns 0 or -ENOMEM. */
int az_rules__scope(struct analyze *a, struct az_acc *acc, struct az_scope *s);
/* A copy of str kept with the result; NULL when out of memory. */
const char *az_store__keep(struct az_store *st, const char *str);
const char *az_store__printf(struct az_store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void az_store__free(struct az_store *st);

/* One GPU metric record (GT_REC_GPU_METRIC): a metric of a device, the
 * id the format's enum gt_gpu_metric_id, the value in micro-units. */
void az_metric(struct analyze *a, uint64_t ts, uint32_t device, uint32_t metric, int64_t micro);
/* Judges the samples still being read (at the end of the pass). */
void az_metric__flush(struct analyze *a);
/* Process p was seen for the first time (its first record read): the
 * samples judged before that within its time are its too. */
void az_metric__seen(struct analyze *a, struct az_proc *p);

/* analyze_notes.c: r's notes (NULL-terminated) from the finished scopes;
 * end: the trace's end.  Returns 0 or -ENOMEM. */
int az__add_notes(struct analyze *a, struct analyze_result *r, uint64_t end);

/* analyze_write.c: names the table and the JSON share. */
const char *az__source_name(enum az_busy_source s);
const char *az__mem_name(int k);	/* a copy kind, GT_COPY__COUNT: memset */
/* analyze_json.c: r as one JSON document.  Returns 0 or -errno. */
int az__write_json(const struct analyze_result *r, FILE *out);

#endif
