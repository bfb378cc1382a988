/* SPDX-License-Identifier: MIT */
/*
 * What the files of cuda_workload share: cuda_workload.c (the calls, the
 * launch threads, the output), cuda_workload_opts.c (the command line),
 * cuda_workload_ptx.c (the kernels), cuda_workload_nccl.c (--nccl).
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
	long devices;		/* devices 0..devices-1 get launches (--devices) */
	long peer;		/* --peer: rounds of the three peer copies */
	long nccl;		/* --nccl: rounds of collectives, 0 none */
	const char *nccl_id;	/* --nccl-id: where rank 0 leaves the unique id */
	long late_rank, late_ms;/* --nccl-late RANK:MS, late_rank -1 none */
	long open_ms;		/* --nccl-open-ms: sleep after loading libnccl */
	bool sync_each;		/* with flood_s: cuStreamSynchronize after every launch */
	long steady;		/* with flood_s: cuCtxSynchronize calls per second */
};

/* Prints PROG: message and exits 1. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Parses the command line into o (exit 2 with one line on a bad one). */
void parse_opts(int argc, char **argv, struct opts *o);

/* the kernels' PTX (cuModuleLoadData, cuLibraryLoadData) */
extern const char module_ptx[];
extern const char library_ptx[];

/* each device's buffers a, b, c (N_ELEMS floats) */
extern CUdeviceptr d_a[MAX_DEV], d_b[MAX_DEV], d_c[MAX_DEV];

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
