/* SPDX-License-Identifier: MIT */
/*
 * Internal to gen_trace (tools/gen_trace.c says what it writes): the state
 * its files share.  gen_trace.c sets up the processes, makes the threads'
 * calls and runs the command line; gen_trace_rec.c draws the random
 * numbers and writes the records and the tail; gen_trace_capture.c is -c;
 * gen_trace_gpu.c is -g, -u and -i.
 */
#ifndef GTRACE_GEN_TRACE_INT_H
#define GTRACE_GEN_TRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/api.h"
#include "format/trace_file.h"
#include "bpf/gtrace_api.h"

#define PROG "gen_trace"
#define MAX_THREADS 64
#define MAX_PROCS 64
#define MAX_KERNELS 2048
#define MAX_NAME 4000	/* -N: longest kernel name (a record's string holds 4095 bytes) */
#define PID_BASE 4000
#define PID_STEP 100
#define STATS_EVERY (1u << 20)
#define CAP_PERIOD 2000000ull	/* -c: ns from a window's (a process' range's) start to the next */
#define CAP_WINDOW 400000ull	/* -c light: ns a window lasts */

#define STEP_CALLS 50	/* -g: calls of a thread per NVTX "step" range */
#define METRIC_NS 10000000ull	/* -g: from one GPU metric sample to the next */

#define API(x) GT_API_##x

struct kernel {
	char *name;		/* mangled (or -H's hostile text), malloc'd */
	uint64_t func;		/* CUfunction handle in its process */
	uint16_t api;		/* launch api this kernel is launched with */
	uint32_t grid[3][3], block[3][3];	/* up to 3 shapes */
	int nshapes;
	uint32_t shmem;
};

/* A thread of a process: idle until next_ts, or inside a call until exit_ts. */
struct thr {
	uint32_t pid, tid;
	int proc;
	uint64_t ts;		/* time of its next record */
	bool in_call;		/* an entry was written, its exit is due at ts */
	uint16_t api;		/* api of the open call */
	int32_t ret;		/* what the open call returns */
	uint64_t out;		/* out value of the open call (alloc) */
	bool has_out;
	uint64_t stream;	/* its stream */
	uint64_t event;		/* its event */
	uint64_t live_alloc;	/* pointer allocated and not yet freed, 0 if none */
	bool skipped;		/* its open call is not recorded (-c: outside a range or window) */
	bool no_exit;		/* -E: its open call is a launch recorded without its exit */
	uint64_t entry_ts;	/* entry of its open call */
	uint64_t gpu_free;	/* -g: when its stream's previous GPU work ends */
	uint64_t step_ts;	/* -g: start of its NVTX step range */
	uint32_t calls;		/* -g: calls made, for the steps */
};

enum cap_mode { CAP_NONE, CAP_RANGE, CAP_LIGHT };

struct gen {
	struct trace_writer *w;
	uint64_t rng;
	uint64_t nrec;		/* records appended */
	int nprocs, nthreads, nkernels;
	struct kernel k[MAX_PROCS][MAX_KERNELS];
	struct thr t[MAX_PROCS * MAX_THREADS];
	enum cap_mode cap;	/* -c */
	bool cap_started;	/* the schedule below runs (after the set-up) */
	uint64_t cap_t0;	/* its start: the first window, process 0's first range */
	uint64_t cap_gap;	/* -c range: from one process' range open to the next's */
	uint64_t next_window;	/* -c light: number of the next window, from 0 */
	bool window_open;
	uint32_t nranges;	/* -c range: ranges opened so far */
	struct {
		uint64_t k;	/* number of its next range, from 0 */
		bool open;
		uint32_t index;	/* of the open one */
	} pr[MAX_PROCS];
	struct thr *cur;	/* the thread whose call is being written, NULL none */
	bool gpu;		/* -g */
	uint32_t correlation;	/* -g: the last CUPTI correlation id given */
	uint64_t gpu_records, nvtx_id;	/* -g */
	uint64_t unlink;	/* -u: every this many GPU records unlinked, 0 none */
	struct gt_hdr **tail;	/* -u's unlinked ones and -i's steps, written last by time */
	size_t ntail, tail_cap;
	uint64_t unlinked;	/* -u: GPU records in the tail */
	uint64_t next_metric;	/* -g: time of the next GPU metric samples */
	uint64_t step_ns;	/* -i: an NVTX step range this long, 0 none */
	bool entry_launches;	/* -E: launches without their exits */
	int more_apis;		/* -A: more kinds of calls at a process' start */
	bool all_metrics;	/* -M: every GPU metric in a sample */
	int launch_pct;		/* -L: percent of the calls that are launches, -1 the default mix */
	bool hostile;		/* -H: names, command lines and NVTX text a hostile program would give */
	int name_len;		/* -N: every kernel name this many bytes, 0 as they come */
	const char *prog;	/* -P: -S's program (python3 when NULL) */
	int idle_threads;	/* -I: -S's threads that make no CUDA call (off-CPU each step) */
	_Alignas(8) unsigned char buf[8192];
};

/* gen_trace_rec.c */
uint64_t gen__rnd(struct gen *g);
uint64_t gen__rnd_range(struct gen *g, uint64_t lo, uint64_t hi);
uint64_t gen__rnd_skew(struct gen *g, uint64_t lo, uint64_t hi);
int gen__append(struct gen *g, struct gt_hdr *h);
int gen__put(struct gen *g, void *rec);
void *gen__rec_init(struct gen *g, uint16_t type, size_t size, uint64_t ts, uint32_t pid,
	       uint32_t tid, uint16_t api);
int gen__w_call(struct gen *g, uint64_t ts, uint32_t pid, uint32_t tid, uint16_t api,
	   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
int gen__w_ret(struct gen *g, uint64_t ts, uint32_t pid, uint32_t tid, uint16_t api,
	  int32_t ret, bool has_out, uint64_t out);
int gen__w_str(struct gen *g, uint16_t type, uint64_t ts, uint32_t pid, uint32_t tid,
	  uint16_t api, uint64_t key, uint16_t kind, const char *s);
int gen__w_proc(struct gen *g, uint16_t type, uint64_t ts, uint32_t pid, const char *comm);
int gen__w_call_ret(struct gen *g, uint64_t *ts, uint32_t pid, uint16_t api, uint64_t a0,
	       uint64_t a1, uint64_t a2, bool has_out, uint64_t out);
int gen__tail_put(struct gen *g, const struct gt_hdr *r);
int gen__w_tail(struct gen *g);
int gen__w_end(struct gen *g, uint64_t ts, uint64_t gpu, uint64_t unlinked);

/* gen_trace_capture.c */
int gen__w_capture(struct gen *g, uint64_t ts, uint32_t pid, uint32_t kind, uint32_t index,
	      uint32_t flags);
int gen__cap_due(struct gen *g, uint64_t ts);
bool gen__captured(const struct gen *g, uint32_t pid, uint16_t api, uint64_t ts);

/* gen_trace_gpu.c */
int gen__w_gpu(struct gen *g, struct thr *t, const struct kernel *k, const struct gt_launch *l,
	  uint16_t api, uint64_t bytes);
int gen__w_after(struct gen *g, struct thr *t, uint64_t exit_ts);
int gen__w_metrics(struct gen *g);
int gen__w_steps(struct gen *g, uint64_t t0, uint64_t end);

/* gen_trace_shape.c: -S SHAPE:P, STEPS steps, the first WARM slow; prints
 * what analyze must find.  -EINVAL for a bad SHAPE:P. */
int gen__shape(struct gen *g, const char *arg, long steps, long warm);

/* gen_trace.c: -H's text (NVTX names among them) */
const char *gen__hostile_nvtx(int i);

#endif
