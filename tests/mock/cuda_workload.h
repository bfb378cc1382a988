/* SPDX-License-Identifier: MIT */
/*
 * What the files of cuda_workload share: cuda_workload.c (the sequence, the
 * result check, the output), cuda_workload_api.c (the libcuda calls,
 * counted), cuda_workload_launch.c (the launches, the launch threads,
 * --fork), cuda_workload_opts.c (the command line), cuda_workload_ptx.c (the
 * kernels), cuda_workload_nccl.c (--nccl).
 * Built together: cc tests/mock/cuda_workload*.c.
 */
#ifndef GTRACE_CUDA_WORKLOAD_H
#define GTRACE_CUDA_WORKLOAD_H

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_compat.h"
#include "nccl_compat.h"
#include "../../bpf/gtrace_api.h"

#define PROG "cuda_workload"
#define MOCK_DEVICE_NAME "gtrace mock device"
#define N_ELEMS (1 << 20)
#define MAX_THREADS 64
#define MAX_DEV 8

struct opts {
	long launches;		/* per launch thread */
	long copies;		/* cuMemcpyHtoD_v2 calls */
	long syncs;		/* cuStreamSynchronize calls */
	long threads;		/* launch threads, each with its own stream */
	long flood_s;		/* > 0: launch for this long instead of `launches` times */
	long rate;		/* > 0: with flood_s, launches per second per thread */
	bool wait_signal;
	bool fail;
	long ranges;		/* > 0: launches in this many cuProfilerStart/Stop ranges;
				 * 0: no profiler calls at all; -1 (default): one empty range */
	long gap_ms;		/* sleep between the parts of --ranges */
	long hold_ms;		/* sleep inside each range, before its launches */
	long idle_ms;		/* --gpu-idle: sleep halfway through the launches */
	long forks;		/* child processes making a few calls each (--fork) */
	const char *launch_log;	/* CLOCK_MONOTONIC ns before and after each launch, a pair a line */
	long work_us;		/* busy this long (on-CPU) before each launch (not with rate) */
	bool until_term;	/* --until-term: SIGTERM ends --flood early, as if its time were up */
	/* planted patterns (see the top), 0 none: in the order of their O_ ids */
	long sync_every;
	long dtoh_every;
	long pageable_every;
	long legacy_every;
	long grid;		/* > 0: every launch's grid is grid x 1 x 1 */
	long steps;		/* > 0: steps of one launch group each instead of launches */
	long step_us;		/* spin per step */
	long step_jitter;	/* +- percent of step_us, a fixed sequence */
	bool nvtx_steps;	/* each step an NVTX range (the mock's gt_mock_nvtx_range) */
	long step_groups;	/* launch groups per step (default 1) */
	bool step_graph;	/* each group one cuGraphLaunch instead of its launches */
	bool nvtx_lib;		/* each step a short NVTX range a library would open */
	long slow_steps;	/* the first N steps spin 10 times longer (a warm-up) */
	long devices;		/* devices 0..devices-1 get launches (--devices) */
	long peer;		/* --peer: rounds of the three peer copies */
	long nccl;		/* --nccl: rounds of collectives, 0 none */
	const char *nccl_id;	/* --nccl-id: where rank 0 leaves the unique id */
	long late_rank, late_ms;/* --nccl-late RANK:MS, late_rank -1 none */
	long open_ms;		/* --nccl-open-ms: sleep after loading libnccl */
	bool sync_each;		/* with flood_s: cuStreamSynchronize after every launch */
	long steady;		/* with flood_s: cuCtxSynchronize calls per second */
	const char *copy_lib;	/* --copy-lib DIR: dlopen a copy of GT_LIBCUDA made there at the start */
	bool lookup_each;	/* --lookup-each: cuKernelGetFunction before each fill launch */
	long pause_at;		/* --pause-at: after this launch "paused PID", wait for SIGUSR1 */
	bool open_signal;	/* --open-signal: print "waiting PID", wait for SIGUSR1 before
				 * loading libcuda */
};

/* Prints PROG: message and exits 1. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ------------------------------------------------------------------ */
/* libcuda entry points, counted (cuda_workload_api.c)                  */

#define WL_APIS(X) \
	X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) \
	X(cuCtxSetCurrent) X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLibraryLoadData) \
	X(cuLibraryGetKernel) X(cuKernelGetFunction) X(cuStreamCreate) X(cuMemAlloc_v2) \
	X(cuMemAllocHost_v2) X(cuMemcpyHtoD_v2) X(cuLaunchKernel) X(cuLaunchKernel_ptsz) \
	X(cuLaunchKernelEx) X(cuMemsetD32_v2) X(cuMemcpyDtoHAsync_v2) X(cuStreamSynchronize) \
	X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuCtxSynchronize) \
	X(cuProfilerStart) X(cuProfilerStop) X(cuMemFree_v2) X(cuMemFreeHost) \
	X(cuEventDestroy_v2) X(cuStreamDestroy_v2) X(cuModuleUnload) X(cuLibraryUnload) \
	X(cuDevicePrimaryCtxRelease_v2) X(cuMemcpyDtoH_v2) X(cuMemcpyHtoDAsync_v2) \
	X(cuDeviceGetCount) X(cuMemcpyPeer) X(cuMemcpyDtoD_v2) X(cuMemcpy)

enum wl_api {
#define WL_ENUM(n) WL_##n,
	WL_APIS(WL_ENUM)
#undef WL_ENUM
	WL__COUNT
};

#define WL_PTR(n) extern __typeof__(&n) p_##n;
WL_APIS(WL_PTR)
#undef WL_PTR
/* the libcuda mock's NVTX ranges for the CUPTI agent (--nvtx-steps), NULL elsewhere */
extern void (*p_nvtx_range)(const char *name, unsigned long long start, unsigned long long end);
/* --step-graph's, outside the counted calls */
extern CUresult (*p_cuGraphLaunch)(CUgraphExec g, CUstream s);

extern volatile sig_atomic_t flood_stop;	/* SIGTERM with --until-term */
extern bool after_ready;	/* set once, before any launch thread starts */

/* Counts a call to a that returned r; returns r. */
CUresult wl_count(enum wl_api a, CUresult r);
/* Prints api's error r and exits 1. */
void cuda_fail(const char *api, CUresult r);

/* CU(): the call, counted.  CK(): the same, exiting on an error. */
#define CU(n, ...) wl_count(WL_##n, p_##n(__VA_ARGS__))
#define CK(n, ...) do { \
		CUresult r_ = CU(n, __VA_ARGS__); \
		if (r_ != CUDA_SUCCESS) \
			cuda_fail(#n, r_); \
	} while (0)

/* Loads libcuda (GT_LIBCUDA, default libcuda.so.1) and its entry points;
 * with copy_dir, a copy of that file made in copy_dir as libcuda.so.1 (a
 * file nobody knew of before). The dlopen's times go to the JSON line
 * (json_load). */
void load_libcuda(const char *copy_dir);
/* The load's figures for the JSON line: ,"lib":...,"dlopen_ns":... */
void json_load(void);

enum count_kind { C_CALLS, C_AFTER_READY, C_FAILED };

/* One {"api": count} object: of the probed apis, or of the others. */
void json_counts(const char *key, enum count_kind kind, bool probed);
/* Parses the command line into o (exit 2 with one line on a bad one). */
void parse_opts(int argc, char **argv, struct opts *o);

/* the kernels' PTX (cuModuleLoadData, cuLibraryLoadData) */
extern const char module_ptx[];
extern const char library_ptx[];

/* ------------------------------------------------------------------ */
/* launches (cuda_workload_launch.c)                                    */

#define FILL_EX_VALUE 1.5f
#define FILL_VALUE 2.5f

enum { OP_VECADD, OP_SCALE, OP_FILL_EX, OP_FILL, OP__COUNT };
extern const char *const op_names[OP__COUNT];
extern const char *const op_apis[OP__COUNT];

/* per device (index 0 .. ndev - 1) */
extern CUcontext ctxs[MAX_DEV];
extern CUfunction f_vecadd[MAX_DEV], f_scale[MAX_DEV], f_fill[MAX_DEV];
extern CUkernel k_fill;
/* Prints "WORD PID" and waits for SIGUSR1 (blocked in set). */
void say_and_wait(const char *word, const sigset_t *set);
extern sigset_t usr1_set;	/* SIGUSR1, blocked from the start when a signal is awaited */
/* each device's buffers a, b, c (N_ELEMS floats) */
extern CUdeviceptr d_a[MAX_DEV], d_b[MAX_DEV], d_c[MAX_DEV];
extern int ndev;
extern int n_elems;
extern float *h_pinned;		/* the cuMemAllocHost_v2 buffer */
extern char *h_pageable;	/* --pageable-every's malloc'd buffer */
extern struct opts *planted;	/* the planted patterns' options */

#define PLANT_BYTES 65536

struct worker {
	pthread_t thread;
	CUstream stream;		/* its stream of device 0 (streams[0]) */
	CUstream streams[MAX_DEV];	/* one per device */
	int cur;			/* the device its thread has current */
	long launches;			/* to make, when not flooding */
	long flood_s;			/* > 0: launch for this long */
	long rate;			/* > 0: paced to this many launches per second */
	long work_us;			/* busy before each launch */
	bool set_ctx;			/* a new thread: make the context current first */
	int index;			/* which launch thread, for its name */
	long ranges;			/* > 0: launches in profiler ranges (--ranges) */
	long gap_ms;			/* sleep between their parts */
	long hold_ms;			/* sleep inside each range */
	long idle_ms;			/* sleep after half the launches */
	long steps;			/* > 0: launches in steps (--steps) */
	long step_us, step_jitter;	/* each step's spin */
	bool nvtx_steps;		/* each step an NVTX range */
	long step_groups;		/* launch groups per step */
	bool step_graph;		/* each group one graph launch */
	bool nvtx_lib;			/* a library's short range in each step */
	long slow_steps;		/* the first ones spin 10 times longer */
	uint64_t *step_ns;		/* steps: each one's time, start to end */
	uint64_t *period_ns;		/* steps - 1: from one's start to the next's */
	bool sync_each;			/* cuStreamSynchronize after each flood launch */
	long steady;			/* cuCtxSynchronize calls per second while flooding */
	unsigned long in_range[64];	/* launches made inside each range */
	unsigned long done[OP__COUNT];	/* launches made, per operation */
	unsigned long on_dev[MAX_DEV];	/* launches made, per device */
};

/* --launch-log: log_len launches, the first log_cap kept (before, after) */
extern uint64_t *log_ts;		/* log_cap pairs: before, after */
extern size_t log_len, log_cap;

/* A launch thread: its launches, as w says (the main thread's with one). */
void *worker_main(void *arg);
/* --sync-each and --steady: the syncs with their sequence numbers. */
void sync_numbered(CUstream s);
void ctx_sync_numbered(void);
/* --fork: forks n children, a few calls each on s; how many did not exit 0. */
long run_forks(long n, CUstream s);

/* --nccl */
void nccl_load(void);
/* The integer value of environment variable name, -1 when unset; exits on
 * one that is not a number from 0 to max. */
long env_long(const char *name, long max);
void nccl_phase(const struct opts *o, long rank, long world, CUstream s, long *out_rank,
		unsigned long long *out_comm);
/* The NCCL calls made, per api, as a JSON object on stdout. */
void nccl_print_calls(void);

#endif
