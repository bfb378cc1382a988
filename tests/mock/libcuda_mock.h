/* SPDX-License-Identifier: MIT */
/*
 * Internal to the mock libcuda.so.1: what its files share.  libcuda_mock.c
 * (timing, contexts, initialization, errors, devices, streams, events,
 * profiler markers), libcuda_mock_inject.c (the GPU work the CUPTI agent
 * sees), libcuda_mock_mem.c (the memory registry, allocation),
 * libcuda_mock_copy.c (copies and sets), libcuda_mock_graph.c (stream
 * capture, graphs), libcuda_mock_module.c (modules,
 * libraries, kernels, launches).  Built together into one shared object:
 * cc -shared tests/mock/libcuda_mock*.c.
 *
 * What is declared here is hidden: the library exports the calls of
 * MOCK_API (and gt_mock_nvtx_range) alone, as when it was one file.
 */
#ifndef GTRACE_LIBCUDA_MOCK_H
#define GTRACE_LIBCUDA_MOCK_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_compat.h"
#include "../../cupti/testing/mock_api.h"

#include "mock_export.h"

#define MAGIC_CTX	0x67746d6f636b0001ull
#define MAGIC_STREAM	0x67746d6f636b0002ull
#define MAGIC_EVENT	0x67746d6f636b0003ull
#define MAGIC_MODULE	0x67746d6f636b0004ull
#define MAGIC_LIBRARY	0x67746d6f636b0005ull
#define MAGIC_FUNC	0x67746d6f636b0006ull
#define MAGIC_KERNEL	0x67746d6f636b0007ull
#define MAGIC_DEAD	0x67746d6f636bdeadull

#define MOCK_DEVICE_NAME "gtrace mock device"
#define MOCK_NDEV 2
#define MOCK_DRIVER_VERSION 13000
#define MOCK_ALIGN 256

struct mock_ctx {
	uint64_t magic;
	CUdevice dev;
	int primary;		/* the device's primary context */
	int refs;		/* primary: retain count */
	unsigned id;		/* CUPTI's context id: 1 + device for primary contexts */
};

#define U(p) ((uintptr_t)(p))

#pragma GCC visibility push(hidden)

/* libcuda_mock.c */
unsigned long env_ulong(const char *name, unsigned long def);
uint64_t mono_ns(void);
extern pthread_mutex_t lock;	/* of the memory registry and the primary contexts' counts */
/* The thread's current context: the top of its context stack. */
extern __thread CUcontext current_ctx;
bool ctx_valid(CUcontext c);
bool stream_valid(CUstream s);
CUresult async_check(CUstream s);
bool have_ctx(void);
void current_ids(unsigned *device, unsigned *context);
bool is_init(void);

/* libcuda_mock_inject.c */
extern unsigned (*gpu_work_fn)(const struct mock_gpu_work *);
extern pthread_once_t inject_once;
void inject(void);
void gpu_work(struct mock_gpu_work *w, uint64_t api_start);
unsigned stream_id(const void *s);

/* libcuda_mock_graph.c */
extern void (*graph_node_fn)(unsigned long long, unsigned long long, unsigned);
/* A launch on a capturing stream: a kernel node of its graph (true), no GPU
 * work; false when s does not capture. */
bool graph_capture_launch(CUstream s, const char *name, const unsigned grid[3], const unsigned block[3]);

/* libcuda_mock_mem.c */
int region_lookup_dev(uintptr_t p, size_t n, int *dev);
bool dev_range_ok(uintptr_t p, size_t n);
bool host_range_ok(uintptr_t p, size_t n);

#pragma GCC visibility pop

#endif
