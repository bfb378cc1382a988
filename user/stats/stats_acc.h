/* SPDX-License-Identifier: MIT */
/*
 * What `gtrace-bpf stats` accumulates in its one pass over a trace: per api,
 * copy kind, (pid, sync api), process, kernel name and (kernel, shape).
 * Internal to stats: stats.c feeds it records and decoded calls, then turns
 * it into reports.  Durations and sizes are kept one by one (8 bytes each)
 * because the reports give exact medians.
 */
#ifndef GTRACE_STATS_ACC_H
#define GTRACE_STATS_ACC_H

#include <stdint.h>
#include <stddef.h>
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "lib/hmap.h"

#define MEM_KINDS (GT_COPY__COUNT + 1)	/* copy kinds (enum gt_copy_kind), then memset */

/* Every value of a group, in arrival order until summarized. */
struct dvec {
	uint64_t *v;		/* cap slots */
	size_t n, cap;		/* values, slots */
};

struct dvec_summary {
	double mean;		/* total / n */
	double median;		/* exact: mean of the two middle values for even n */
	double stddev;		/* sample standard deviation (n - 1), 0 for n <= 1 */
};

/* Durations (ns) of a group of calls, or sizes (bytes) of copies. */
struct dur_acc {
	uint64_t calls;		/* calls counted, incomplete ones included */
	uint64_t incomplete;	/* calls without an exit (durations only) */
	uint64_t total;		/* sum of the values */
	uint64_t min, max;	/* of the values; valid when dur.n > 0 */
	struct dvec dur;	/* every value */
};

/* One waiting api in one process. */
struct sync_acc {
	uint32_t pid;
	uint16_t api;		/* enum gt_api */
	struct dur_acc d;	/* its call durations */
};

/* The synchronizing calls of one call site (--stacks): the first frame of
 * their stacks past the CUDA libraries, whatever the process. */
struct site_acc {
	uint32_t stack;		/* a stack of one of them: names the site */
	uint64_t pids;		/* processes seen (counted when the pid changes) */
	uint32_t last_pid;
	struct dur_acc d;	/* their durations */
};

/* The GPU kernels launched from one stack (--stacks all, a merged trace). */
struct gstack_acc {
	uint32_t stack;
	uint64_t ns, kernels;
};

struct proc_acc {
	uint32_t pid;
	uint64_t records;	/* records with this pid (stats snapshots left out) */
	uint64_t calls;		/* decoded libcuda calls */
	uint64_t api_time;	/* sum of dur of calls with an exit, ns */
	uint64_t timed;		/* calls with an exit (0: api_time is unknown) */
	uint64_t launches;	/* launch calls, graph launches included */
	uint64_t sync_time;	/* sum of dur of its cuda_sync_sum calls, ns */
};

/* One (device, request, RM command or class) of the driver's ioctls. */
struct ioctl_acc {
	uint32_t rdev;		/* device number, kernel encoding */
	uint32_t cmd;		/* request */
	uint32_t param;		/* RM control command or class (flags say which), else 0 */
	uint16_t flags;		/* GT_IOCTL_RM_* of the records */
	uint64_t errors;	/* calls that returned < 0 */
	struct dur_acc d;	/* their durations */
};

/* One kernel name (the decoder's demangled name or placeholder) on one
 * device: the two are the key. */
struct kern_acc {
	char *name;		/* owned copy */
	int32_t device;		/* of its launches or GPU records, GT_DEVICE_UNKNOWN */
	uint64_t hash;		/* of name and device */
	uint64_t launches;
	uint64_t apis;		/* bit n: launched with enum gt_api n (all launch apis are < 64) */
	uint32_t nshapes;	/* distinct (grid, block) pairs */
	uint32_t last_shape;	/* index in shapes of its latest launch's pair, UINT32_MAX none */
};

/* One (kernel, grid, block) seen. */
struct shape_acc {
	uint32_t kern;		/* index in kern */
	uint32_t grid[3], block[3];
	uint64_t count;		/* launches with it */
};

/* Entries in insertion order, found by an open-addressed index of
 * (entry + 1), 0 = free. */
struct kern_table {
	struct kern_acc *v;
	uint32_t n, cap;	/* entries, slots of v */
	uint32_t *idx;		/* idx_cap slots, a power of two */
	uint32_t idx_cap;
};

struct shape_table {
	struct shape_acc *v;
	uint32_t n, cap;
	uint32_t *idx;
	uint32_t idx_cap;
};

#define KCACHE_SLOTS 64	/* recently launched kernel names, by string address */

/* A name string the decoder handed out and the kernel it named. */
struct kcache_slot {
	const char *name;	/* the decoder's pointer, only compared, never followed */
	uint32_t kern;		/* index in kern */
};

/* Bit of a device in a mask of the devices seen: 0 for unknown, device + 1,
 * the devices from 62 on sharing the last. */
static inline uint64_t stats_dev_bit(int32_t device)
{
	return 1ull << (device < 0 ? 0 : device < 62 ? device + 1 : 63);
}

/* True when a mask of stats_dev_bit()s has more than one. */
static inline bool stats_devs_many(uint64_t mask)
{
	return mask & (mask - 1);
}

struct stats_dev;
struct stats_nccl;

/* Names each with a group of durations: GPU kernels, NVTX ranges. */
struct named_durs {
	struct kern_table names;	/* name and hash of its entries used only */
	struct dur_acc *d;		/* by index in names */
	uint32_t cap;			/* entries of d */
	struct kcache_slot cache[KCACHE_SLOTS];	/* by address of a name string */
};

/* Launch-to-start latencies of one process' linked GPU kernels. */
struct lat_acc {
	uint32_t pid;
	uint64_t causality;	/* linked kernels that started before their call */
	struct dvec v;		/* GPU start - launch call entry, ns, of the others */
	uint64_t min, max;	/* of v, valid when v.n > 0 */
};

/* What `stats --range` limits the reports to: the records of pid (0: of
 * every process) from start to end, both included.  A call is in when its
 * entry is; a GPU record linked to its call when the call's entry is, an
 * unlinked one by its start. */
struct stats_scope {
	bool on;		/* false: the whole trace */
	uint32_t pid;		/* a range's process, 0 for a window */
	uint64_t start, end;	/* CLOCK_MONOTONIC ns */
};

/* The daemon's overhead records (GT_REC_OVERHEAD) in the scope's time:
 * its estimates of what recording cost, and what it changed to keep its
 * budget. */
struct ovh_acc {
	uint64_t records;		/* overhead records */
	uint64_t reasons[GT_OVH__COUNT + 1];	/* by enum gt_overhead_reason, the last unknown ones */
	struct dvec est;		/* estimate_ppm of the records over an interval */
	uint64_t est_max;		/* of est, valid when est.n > 0 */
	uint32_t budget_ppm;		/* the latest record's, 0 = none */
	uint32_t duty_first, duty_last;	/* duty_ppm of the first and the latest record */
};

struct gpum_acc;

struct stats_acc {
	struct stats_scope scope;		/* set by the caller before the pass */
	struct capture_spans *cap;		/* fed the capture records, when set */
	struct dur_acc api[GT_API__COUNT];	/* by enum gt_api */
	struct dur_acc mem[MEM_KINDS];		/* bytes by copy kind, memset last */
	struct hmap syncs;			/* (pid, api) -> struct sync_acc */
	struct hmap sites;			/* (site key, 0) -> struct site_acc */
	struct hmap launch_stacks;		/* (launch entry ts, tid) -> stack id: launches with a
						 * stack whose GPU record is still to come */
	struct hmap gsites;			/* (site key, 0) -> struct site_acc: GPU kernel time
						 * by the call site of its launch */
	struct dur_acc gsite_none;		/* ... of kernels whose launch has no stack */
	struct hmap site_cache;			/* (stack id, 0: sites / 1: gsites) -> its group there,
						 * or a marker for a stack without a site */
	struct hmap gstacks;			/* (stack id, 0) -> struct gstack_acc: GPU kernel time by
						 * the whole stack of its launch (the report's flame graph) */
	struct hmap procs;			/* (pid, 0) -> struct proc_acc */
	struct hmap ioctls;			/* (cmd << 32 | rdev, param) -> struct ioctl_acc */
	struct proc_acc *last_proc;		/* cache: records of a pid come in runs */
	struct kern_table kern;
	struct kcache_slot kcache[KCACHE_SLOTS];	/* saves hashing the name per launch */
	struct shape_table shapes;
	uint64_t launch_devs;			/* stats_dev_bit()s of the launches' devices */
	struct stats_dev *dev;			/* cuda_device_sum's accumulator (stats_dev.c) */
	struct stats_nccl *nccl;		/* nccl_sum's (stats_nccl.c) */
	struct stats_hosts *hosts;		/* host_sum's (stats_hosts.c), a job trace only */
	char **strs;				/* strings made for reports, freed with s */
	size_t nstrs, strs_cap;
	/* GPU side (merged traces) */
	struct gt_decoder *d;			/* demangles GPU kernel names; set by the caller */
	struct named_durs gkern;		/* GPU kernel durations by demangled name and device */
	uint64_t gkern_devs;			/* stats_dev_bit()s of their devices */
	struct named_durs nvtx;			/* NVTX range durations by message */
	struct dur_acc gmem_time[MEM_KINDS];	/* GPU copy and set durations by kind, memset last */
	struct dur_acc gmem_size[MEM_KINDS];	/* their bytes */
	struct hmap lat;			/* (pid, 0) -> struct lat_acc */
	uint64_t gpu_records;			/* kernels, copies and sets seen */
	struct ovh_acc ovh;			/* the daemon's overhead records */
	struct gpum_acc *gpum;			/* GPU metric samples (stats_gpum.c), NULL = none */
	bool gpum_work;				/* keep the GPU records for gpu_metrics_sum */
};

struct stats_acc *stats_acc__new(void);
void stats_acc__free(struct stats_acc *s);
/* Counts one raw record for its process.  Returns 0 or -ENOMEM. */
int stats_acc__record(struct stats_acc *s, const struct gt_hdr *rec);
/* The decoder's call callback (ctx = the stats_acc).  Returns 0 or -ENOMEM. */
int stats_acc__call(void *ctx, const struct gt_callrec *c);
/* The decoder's callback for other records (ctx = the stats_acc): takes the
 * GPU kernels, copies, sets and NVTX ranges of merged traces, the capture
 * records into s->cap, and the daemon's overhead records (in the scope by
 * their time alone: they are the recorder's).  s->d must be the decoder.
 * Returns 0 or -ENOMEM. */
int stats_acc__other(void *ctx, const struct gt_hdr *rec);

/* GPU metrics (stats_gpum.c): one sample into s->gpum, every one (the
 * report takes the scopes' by time: a sample is of the whole GPU); and,
 * when s->gpum_work, every GPU record (kernel, copy, set) of every process,
 * for the attribution to kernels.  Return 0 or -ENOMEM. */
int stats_gpum__add(struct stats_acc *s, const struct gt_gpu_metric *m);
int stats_gpum__gpu_work(struct stats_acc *s, const struct gt_hdr *rec);
void stats_gpum__free(struct stats_acc *s);
/* cuda_device_sum (stats_dev.c): a call in the scope, a GPU kernel record
 * of pid on CUPTI's device; 0 or -ENOMEM.  The accumulator is made on
 * first use (s->dev), freed with s. */
int stats_dev__call(struct stats_acc *s, const struct gt_callrec *c);
int stats_dev__gpu_kernel(struct stats_acc *s, uint32_t pid, uint32_t device, uint64_t dur);
void stats_dev__free(struct stats_dev *sd);
/* nccl_sum (stats_nccl.c): the decoder's NCCL callback (ctx = the
 * stats_acc); 0 or -ENOMEM.  The accumulator is made on first use. */
int stats_nccl__call(void *ctx, const struct gt_ncclrec *n);
void stats_nccl__free(struct stats_nccl *sn);
/* host_sum (stats_hosts.c): a job trace's host records, and what each
 * host's processes did (nothing until a host record was seen). */
int stats_hosts__rec(struct stats_acc *s, const struct gt_hdr *rec);
void stats_hosts__call(struct stats_acc *s, const struct gt_callrec *c);
void stats_hosts__gpu_kernel(struct stats_acc *s, uint32_t pid, uint64_t dur);
void stats_hosts__nccl(struct stats_acc *s, const struct gt_ncclrec *n);
void stats_hosts__free(struct stats_hosts *sh);
/* The kernel and shape tables (stats_kern.c): the kernel of name on device
 * in t, through cache (the last kernels by their name's address; a new one
 * is added; NULL when out of memory); a launch of k, index kern of its
 * table, with grid and block into t (0 or -ENOMEM). */
struct kern_acc *stats_kern__cached(struct kern_table *t, struct kcache_slot *cache,
				    const char *name, int32_t device);
int stats_kern__shape_add(struct shape_table *t, struct kern_acc *k, uint32_t kern,
			  const uint32_t grid[3], const uint32_t block[3]);
/* Adds one value (has_value false: a call without an exit) to a. */
int stats_acc__dur_add(struct dur_acc *a, bool has_value, uint64_t v);

/* The summaries of values (stats_dvec.c).  Mean, exact median and sample
 * deviation of v (reorders v). */
void dvec__summarize(struct dvec *v, uint64_t total, struct dvec_summary *out);
/* The p-th percentile of v (0 < p <= 100), nearest rank: the smallest value
 * with at least p % of the values at or below it; 0 for an empty v.
 * Reorders v. */
uint64_t dvec__percentile(struct dvec *v, unsigned p);

/* Report strings, owned by s; NULL when out of memory (or mask 0). */
const char *stats_acc__api_list(struct stats_acc *s, uint64_t mask);	/* "cuLaunchKernel, ..." */
const char *stats_acc__dim3(struct stats_acc *s, const uint32_t v[3]);	/* "64x1x1" */
const char *stats_acc__strdup(struct stats_acc *s, const char *str);	/* a copy kept with s */
/* "HtoD", ..., "memset" for a mem[] index. */
const char *stats_acc__mem_name(int kind);

#endif
