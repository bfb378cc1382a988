/* SPDX-License-Identifier: MIT */
/*
 * A merged trace for the tests of dump, the exports and stats: the eBPF
 * calls of one process with the records the CUPTI agent and the merger add,
 * in the order the merger writes them (docs/FORMAT.md): each linked GPU
 * record right after the entry of its call, then the unlinked GPU records,
 * the GPU API records and NVTX ranges sorted by time, then the merger's and
 * the agent's stats.  Static inline so that each test takes what it uses.
 *
 * pid 100 "app", threads 101 "main" and 102; device 0, context 1:
 *   1000  cuModuleGetFunction names 0x4000 _Z6vecAddPfS_S_i (exit 1100)
 *   3000  cuLaunchKernel 0x4000 (exit 3010)      kernel 3500 +1000 stream 7, corr 11
 *   4000  cuMemcpyHtoDAsync_v2 4 MiB (exit 4020) memcpy 4600 +300 stream 7, corr 12
 *   5000  cuMemsetD8Async 1 MiB (exit 5005)      memset 5100 +50 stream 8, corr 13
 *   6000  cuLaunchKernel 0x4000 (exit 6010)      kernel 5990 +20 stream 7, corr 14,
 *                                                 causality (before its call)
 *   7000  cuLaunchKernel 0x4000 on tid 102, no exit: kernel 7200 +100 stream 9, corr 15
 *   8000  cuGraphLaunch (exit 8010)              kernels 8100 +100 _Z4stepv (corr 16)
 *                                                 and 8300 +200 relu_kernel (corr 17), stream 7
 *   9000  exit of pid 100
 * then unlinked kernel 2000 +100 relu_kernel stream 7 (corr 99); NVTX on tid
 * 101: "step" 2900 +6000, "fwd" 3000 +1000, mark "mark" 4000, "fwd" 7000
 * +500; an API record (corr 11); merge stats; the agent's stats.
 *
 * mt_file_entry_only() writes it as a default recording does: every
 * cuLaunchKernel recorded at entry only (GT_LAUNCH_NO_EXIT, no exit), the
 * other calls as above; the same 7 linked GPU records.
 */
#ifndef GTRACE_TEST_MERGED_TRACE_H
#define GTRACE_TEST_MERGED_TRACE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "format/trace_file.h"

#define MT_PID 100

static _Alignas(8) unsigned char mt_buf[8192];
static bool mt_entry_only;	/* launches recorded at entry only (mt_file_entry_only) */

static inline void *mt_hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid,
			   unsigned api)
{
	struct gt_hdr *h = (void *)mt_buf;

	memset(mt_buf, 0, size);
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = (uint16_t)size;
	h->api = (uint16_t)api;
	h->cpu = 2;
	return h;
}

static inline void mt_put(struct trace_writer *w)
{
	assert_int_equal(trace_writer__append(w, (const void *)mt_buf), 0);
}

static inline void mt_call(struct trace_writer *w, uint64_t ts, uint32_t tid, unsigned api,
			   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct gt_call *c = mt_hdr(GT_REC_CALL, sizeof(*c), ts, MT_PID, tid, api);

	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = a3;
	mt_put(w);
}

static inline void mt_ret(struct trace_writer *w, uint64_t ts, uint32_t tid, unsigned api,
			  uint64_t out, uint32_t flags)
{
	struct gt_ret *r = mt_hdr(GT_REC_RET, sizeof(*r), ts, MT_PID, tid, api);

	r->out = out;
	r->flags = flags;
	mt_put(w);
}

static inline void mt_launch(struct trace_writer *w, uint64_t ts, uint32_t tid)
{
	struct gt_launch *l = mt_hdr(GT_REC_LAUNCH, sizeof(*l), ts, MT_PID, tid,
				     GT_API_cuLaunchKernel);

	l->func = 0x4000;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	if (mt_entry_only)
		l->flags = GT_LAUNCH_NO_EXIT;
	mt_put(w);
}

/* The exit of a launch, unless launches are recorded at entry only. */
static inline void mt_launch_ret(struct trace_writer *w, uint64_t ts, uint32_t tid)
{
	if (!mt_entry_only)
		mt_ret(w, ts, tid, GT_API_cuLaunchKernel, 0, 0);
}

static inline void mt_name(struct trace_writer *w, uint64_t ts, uint16_t kind, uint64_t key,
			   const char *s)
{
	size_t n = strlen(s) + 1;
	struct gt_name *nm = mt_hdr(GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), ts, MT_PID, 0, 0);

	nm->key = key;
	nm->kind = kind;
	nm->len = (uint16_t)n;
	memcpy(nm->str, s, n);
	mt_put(w);
}

/* A GPU kernel on device 0, context 1; linked when launch_ts (tid = the
 * launching thread), else tid 0. */
static inline void mt_kernel(struct trace_writer *w, uint64_t ts, uint64_t dur, uint32_t tid,
			     uint64_t launch_ts, uint16_t flags, uint32_t stream, uint32_t corr,
			     const char *name)
{
	size_t n = strlen(name) + 1;
	struct gt_gpu_kernel *k = mt_hdr(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + n), ts,
					 MT_PID, tid, 0);

	k->dur = dur;
	k->launch_ts = launch_ts;
	k->correlation = corr;
	k->device = 0;
	k->context = 1;
	k->stream = stream;
	k->grid[0] = 64; k->grid[1] = 1; k->grid[2] = 1;
	k->block[0] = 256; k->block[1] = 1; k->block[2] = 1;
	k->shmem = 48;
	k->flags = flags;
	k->len = (uint16_t)n;
	memcpy(k->name, name, n);
	mt_put(w);
}

static inline void mt_copy(struct trace_writer *w, uint16_t type, uint64_t ts, uint64_t dur,
			   uint32_t tid, uint64_t launch_ts, uint16_t flags, uint32_t stream,
			   uint64_t bytes, uint16_t kind, uint32_t corr)
{
	struct gt_gpu_copy *c = mt_hdr(type, sizeof(*c), ts, MT_PID, tid, 0);

	c->dur = dur;
	c->launch_ts = launch_ts;
	c->bytes = bytes;
	c->correlation = corr;
	c->device = 0;
	c->context = 1;
	c->stream = stream;
	c->kind = kind;
	c->flags = flags;
	mt_put(w);
}

static inline void mt_nvtx(struct trace_writer *w, uint64_t ts, uint64_t dur, uint32_t tid,
			   uint32_t id, const char *name)
{
	size_t n = strlen(name) + 1;
	struct gt_nvtx *nv = mt_hdr(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*nv) + n), ts, MT_PID, tid, 0);

	nv->dur = dur;
	nv->id = id;
	nv->len = (uint16_t)n;
	memcpy(nv->name, name, n);
	mt_put(w);
}

#define MT_LINKED (GT_GPU_LINKED | GT_GPU_API_MATCHED)

/* The trace of the header comment, into an open writer (finished by the caller). */
static inline void mt_write(struct trace_writer *w)
{
	struct gt_proc_evt *pe;
	struct gt_gpu_api *api;
	struct gt_merge_stats *ms;
	struct gt_cupti_stats *cs;
	struct gt_call_str *c;
	const char *fn = "_Z6vecAddPfS_S_i";
	size_t n = strlen(fn) + 1;

	mt_name(w, 100, GT_NAME_PROCESS, MT_PID, "app");
	mt_name(w, 100, GT_NAME_THREAD, 101, "main");
	c = mt_hdr(GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), 1000, MT_PID, 101,
		   GT_API_cuModuleGetFunction);
	c->args[1] = 0x3000;
	c->len = (uint16_t)n;
	memcpy(c->str, fn, n);
	mt_put(w);
	mt_ret(w, 1100, 101, GT_API_cuModuleGetFunction, 0x4000, GT_RET_OUT);

	mt_launch(w, 3000, 101);
	mt_kernel(w, 3500, 1000, 101, 3000, MT_LINKED, 7, 11, fn);
	mt_launch_ret(w, 3010, 101);

	mt_call(w, 4000, 101, GT_API_cuMemcpyHtoDAsync_v2, 0x10000, 0x2000, 4194304, 7);
	mt_copy(w, GT_REC_GPU_MEMCPY, 4600, 300, 101, 4000, MT_LINKED, 7, 4194304, GT_COPY_HTOD, 12);
	mt_ret(w, 4020, 101, GT_API_cuMemcpyHtoDAsync_v2, 0, 0);

	mt_call(w, 5000, 101, GT_API_cuMemsetD8Async, 0x10000, 0, 1048576, 8);
	mt_copy(w, GT_REC_GPU_MEMSET, 5100, 50, 101, 5000, MT_LINKED, 8, 1048576, 0, 13);
	mt_ret(w, 5005, 101, GT_API_cuMemsetD8Async, 0, 0);

	mt_launch(w, 6000, 101);
	mt_kernel(w, 5990, 20, 101, 6000, MT_LINKED | GT_GPU_CAUSALITY, 7, 14, fn);
	mt_launch_ret(w, 6010, 101);

	mt_launch(w, 7000, 102);
	mt_kernel(w, 7200, 100, 102, 7000, MT_LINKED, 9, 15, fn);

	mt_call(w, 8000, 101, GT_API_cuGraphLaunch, 77, 7, 0, 0);
	mt_kernel(w, 8100, 100, 101, 8000, MT_LINKED, 7, 16, "_Z4stepv");
	mt_kernel(w, 8300, 200, 101, 8000, MT_LINKED, 7, 17, "relu_kernel");
	mt_ret(w, 8010, 101, GT_API_cuGraphLaunch, 0, 0);

	pe = mt_hdr(GT_REC_EXIT, sizeof(*pe), 9000, MT_PID, MT_PID, 0);
	pe->ppid = 1;
	memcpy(pe->comm, "app", 3);
	mt_put(w);

	/* after the rest, by time */
	mt_kernel(w, 2000, 100, 0, 0, 0, 7, 99, "relu_kernel");
	mt_nvtx(w, 2900, 6000, 101, 1, "step");
	mt_nvtx(w, 3000, 1000, 101, 2, "fwd");
	api = mt_hdr(GT_REC_GPU_API, sizeof(*api), 3001, MT_PID, 101, 0);
	api->dur = 8;
	api->correlation = 11;
	api->cbid = 307;
	mt_put(w);
	mt_nvtx(w, 4000, 0, 101, 3, "mark");
	mt_nvtx(w, 7000, 500, 101, 4, "fwd");

	ms = mt_hdr(GT_REC_MERGE_STATS, sizeof(*ms), 10000, 0, 0, 0);
	ms->gpu_records = 8;
	ms->linked = 7;
	ms->unmatched_gpu = 1;
	ms->unmatched_calls = 0;
	ms->causality = 1;
	ms->no_api = 6;
	mt_put(w);
	cs = mt_hdr(GT_REC_CUPTI_STATS, sizeof(*cs), 10001, MT_PID, 0, 0);
	cs->records = 12;
	cs->dropped = 2;
	cs->buffers = 3;
	cs->unknown = 1;
	cs->clock_offset_ns = 120;
	mt_put(w);
}

/* Creates path and writes the whole trace into it. */
static inline void mt_file(const char *path)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 1,
		.host = "testhost", .kernel = "6.18", .cmdline = "gtrace-bpf merge",
		.options = "",
	};
	struct trace_writer_opts o = { .force = true };
	struct trace_writer *w;

	assert_int_equal(trace_writer__create(path, &info, &o, &w), 0);
	mt_write(w);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
}

/* The same trace with its launches recorded at entry only. */
static inline void mt_file_entry_only(const char *path)
{
	mt_entry_only = true;
	mt_file(path);
	mt_entry_only = false;
}

#endif
