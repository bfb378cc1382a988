// SPDX-License-Identifier: MIT
/*
 * Unit tests of the merger (user/merge.c): the linking core on arrays built
 * here, with exact expected links and counters, and the file merge on traces
 * and spool files written here (placement of each GPU record, damaged and
 * refused inputs).  No root, no GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode.h"
#include "log.h"
#include "merge.h"
#include "merge_link.h"
#include "trace_file.h"

#define US 1000ull
#define MS 1000000ull
#define PID 4242
#define TID 4243
#define T0 (1000ull * MS)	/* a base time far from 0 */

/* ------------------------------------------------------------ linking core */

static struct merge_call call_x(uint64_t entry, uint64_t exit, uint32_t tid, uint8_t kind)
{
	return (struct merge_call){ .entry = entry, .exit = exit, .has_exit = 1, .pid = PID,
				    .tid = tid, .kind = kind };
}

static struct merge_call call_noexit(uint64_t entry, uint32_t tid, uint8_t kind)
{
	return (struct merge_call){ .entry = entry, .pid = PID, .tid = tid, .kind = kind };
}

static struct merge_api api(uint32_t corr, uint32_t tid, uint64_t start, uint64_t dur)
{
	return (struct merge_api){ .start = start, .dur = dur, .pid = PID, .tid = tid,
				   .correlation = corr };
}

static struct merge_gpu gpu_rec(uint16_t type, uint32_t corr, uint64_t ts)
{
	return (struct merge_gpu){ .ts = ts, .pid = PID, .correlation = corr, .type = type,
				   .call = 12345 };
}

#define LINKED_FLAGS (GT_GPU_LINKED | GT_GPU_API_MATCHED)

static void link_ok(struct merge_call *c, size_t nc, struct merge_api *a, size_t na,
		    struct merge_gpu *g, size_t ng, struct merge_link_stats *st)
{
	assert_int_equal(merge__link(c, nc, a, na, g, ng, NULL, st), 0);
}

static void expect_stats(const struct merge_link_stats *st, uint64_t gpu, uint64_t linked,
			 uint64_t unmatched, uint64_t unmatched_calls, uint64_t causality,
			 uint64_t no_api, uint64_t dups)
{
	assert_int_equal(st->gpu_records, gpu);
	assert_int_equal(st->linked, linked);
	assert_int_equal(st->unmatched_gpu, unmatched);
	assert_int_equal(st->unmatched_calls, unmatched_calls);
	assert_int_equal(st->causality, causality);
	assert_int_equal(st->no_api, no_api);
	assert_int_equal(st->duplicates, dups);
}

/* Three launches 10 us apart, each 4 us long; CUPTI's API interval inside
 * each, the kernel on the GPU 5 us after the entry. */
static void three_launches(struct merge_call c[3], struct merge_api a[3], struct merge_gpu g[3])
{
	for (int i = 0; i < 3; i++) {
		uint64_t e = T0 + i * 10 * US;

		c[i] = call_x(e, e + 4 * US, TID, MERGE_CALL_LAUNCH);
		a[i] = api(100 + i, TID, e + 300, 3 * US);
		g[i] = gpu_rec(GT_REC_GPU_KERNEL, 100 + i, e + 5 * US);
	}
}

static void t_in_order(void **state)
{
	struct merge_call c[3];
	struct merge_api a[3];
	struct merge_gpu g[3];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	link_ok(c, 3, a, 3, g, 3, &st);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(g[i].call, i);
		assert_int_equal(g[i].flags, LINKED_FLAGS);
		assert_int_equal(c[i].nlinked, 1);
	}
	expect_stats(&st, 3, 3, 0, 0, 0, 0, 0);
	assert_int_equal(st.processes, 1);
}

static void t_reordered(void **state)
{
	struct merge_call c[3];
	struct merge_api a[3], ra[3];
	struct merge_gpu g[3], rg[3];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	/* GPU records and API records in other orders than the calls */
	rg[0] = g[2]; rg[1] = g[0]; rg[2] = g[1];
	ra[0] = a[1]; ra[1] = a[2]; ra[2] = a[0];
	link_ok(c, 3, ra, 3, rg, 3, &st);
	assert_int_equal(rg[0].call, 2);
	assert_int_equal(rg[1].call, 0);
	assert_int_equal(rg[2].call, 1);
	expect_stats(&st, 3, 3, 0, 0, 0, 0, 0);
}

static void t_missing_api(void **state)
{
	struct merge_call c[3];
	struct merge_api a[3];
	struct merge_gpu g[3];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	/* the API record of the second launch is missing */
	a[1] = a[2];
	link_ok(c, 3, a, 2, g, 3, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, MERGE_NO_CALL);
	assert_int_equal(g[1].flags, 0);
	assert_int_equal(g[2].call, 2);
	assert_int_equal(c[1].nlinked, 0);
	/* and the launch without its kernel counts as one without GPU work */
	expect_stats(&st, 3, 2, 1, 1, 0, 1, 0);
}

static void t_duplicate(void **state)
{
	struct merge_call c[3];
	struct merge_api a[3];
	struct merge_gpu g[4];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	g[3] = g[1];	/* the same kernel twice */
	link_ok(c, 3, a, 3, g, 4, &st);
	assert_int_equal(g[1].call, 1);
	assert_int_equal(g[3].call, 1);
	assert_int_equal(g[3].flags, LINKED_FLAGS);
	assert_int_equal(c[1].nlinked, 2);
	expect_stats(&st, 4, 4, 0, 0, 0, 0, 1);
}

static void t_outside(void **state)
{
	struct merge_call c[3];
	struct merge_api a[4];
	struct merge_gpu g[4];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	/* between the second launch's exit (+14 us) and the third's entry (+20 us) */
	a[3] = api(200, TID, T0 + 17 * US, 1 * US);
	g[3] = gpu_rec(GT_REC_GPU_KERNEL, 200, T0 + 18 * US);
	link_ok(c, 3, a, 4, g, 4, &st);
	assert_int_equal(g[3].call, MERGE_NO_CALL);
	assert_int_equal(g[3].flags, GT_GPU_API_MATCHED);
	/* on another thread than every call */
	a[3] = api(200, TID + 1, T0 + 300, 1 * US);
	link_ok(c, 3, a, 4, g, 4, &st);
	assert_int_equal(g[3].call, MERGE_NO_CALL);
	expect_stats(&st, 4, 3, 1, 0, 0, 0, 0);
}

static void t_skew(void **state)
{
	struct merge_call c[2] = {
		call_x(T0, T0 + 4 * US, TID, MERGE_CALL_LAUNCH),
		call_x(T0 + 100 * US, T0 + 104 * US, TID, MERGE_CALL_LAUNCH),
	};
	struct merge_api a[2];
	struct merge_gpu g[2] = {
		gpu_rec(GT_REC_GPU_KERNEL, 1, T0 + 50 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 2, T0 + 150 * US),
	};
	struct merge_link_stats st;

	(void)state;
	/* within the tolerance (2 us): 1.5 us before the entry, 1.5 us after the exit */
	a[0] = api(1, TID, T0 - 1500, 1 * US);
	a[1] = api(2, TID, T0 + 104 * US + 1500, 1 * US);
	link_ok(c, 2, a, 2, g, 2, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 1);
	expect_stats(&st, 2, 2, 0, 0, 0, 0, 0);
	/* beyond it: 5 us before the entry, 5 us after the exit */
	a[0] = api(1, TID, T0 - 5 * US, 1 * US);
	a[1] = api(2, TID, T0 + 109 * US, 1 * US);
	link_ok(c, 2, a, 2, g, 2, &st);
	assert_int_equal(g[0].call, MERGE_NO_CALL);
	assert_int_equal(g[1].call, MERGE_NO_CALL);
	expect_stats(&st, 2, 0, 2, 2, 0, 0, 0);
	/* a tolerance of 10 us takes both */
	struct merge_link_opts o = { .tolerance_ns = 10 * US };

	assert_int_equal(merge__link(c, 2, a, 2, g, 2, &o, &st), 0);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 1);
}

/* Two launches back to back: a start in the gap is within the tolerance of
 * both; the one it is inside wins. */
static void t_back_to_back(void **state)
{
	struct merge_call c[2] = {
		call_x(T0, T0 + 4 * US, TID, MERGE_CALL_LAUNCH),
		call_x(T0 + 5 * US, T0 + 9 * US, TID, MERGE_CALL_LAUNCH),
	};
	struct merge_api a[2] = { api(1, TID, T0 + 3800, 100), api(2, TID, T0 + 5200, 100) };
	struct merge_gpu g[2] = {
		gpu_rec(GT_REC_GPU_KERNEL, 1, T0 + 20 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 2, T0 + 30 * US),
	};
	struct merge_link_stats st;

	(void)state;
	link_ok(c, 2, a, 2, g, 2, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 1);
	expect_stats(&st, 2, 2, 0, 0, 0, 0, 0);
}

/* --no-launch-exit: launches have entries only; the latest entry at or
 * before the API start, within 1 ms, is the call. */
static void t_no_exit(void **state)
{
	struct merge_call c[4];
	struct merge_api a[4];
	struct merge_gpu g[4];
	struct merge_link_stats st;

	(void)state;
	for (int i = 0; i < 3; i++) {
		uint64_t e = T0 + i * 6 * US;

		c[i] = call_noexit(e, TID, MERGE_CALL_LAUNCH);
		a[i] = api(10 + i, TID, e + 400, 3 * US);
		g[i] = gpu_rec(GT_REC_GPU_KERNEL, 10 + i, e + 8 * US);
	}
	/* a copy with its exit on the same thread, later */
	c[3] = call_x(T0 + 50 * US, T0 + 60 * US, TID, MERGE_CALL_COPY);
	a[3] = api(13, TID, T0 + 51 * US, 8 * US);
	g[3] = gpu_rec(GT_REC_GPU_MEMCPY, 13, T0 + 52 * US);
	link_ok(c, 4, a, 4, g, 4, &st);
	for (int i = 0; i < 4; i++)
		assert_int_equal(g[i].call, i);
	expect_stats(&st, 4, 4, 0, 0, 0, 0, 0);
	/* 2 ms after the last launch's entry: too far */
	a[2].start = T0 + 12 * US + 2 * MS;
	a[3].start = T0 + 12 * US + 3 * MS;	/* keep the copy out of the way */
	c[3].entry = a[3].start - 1 * US;
	c[3].exit = a[3].start + 8 * US;
	g[3].ts = a[3].start + 1 * US;
	link_ok(c, 4, a, 4, g, 4, &st);
	assert_int_equal(g[2].call, MERGE_NO_CALL);
	assert_int_equal(g[3].call, 3);
	expect_stats(&st, 4, 3, 1, 1, 0, 0, 0);
}

static void t_causality(void **state)
{
	struct merge_call c[3];
	struct merge_api a[3];
	struct merge_gpu g[3];
	struct merge_link_stats st;

	(void)state;
	three_launches(c, a, g);
	g[1].ts = c[1].entry - 1;	/* the GPU started before the launch was entered */
	link_ok(c, 3, a, 3, g, 3, &st);
	assert_int_equal(g[1].call, 1);
	assert_int_equal(g[1].flags, LINKED_FLAGS | GT_GPU_CAUSALITY);
	assert_int_equal(g[0].flags, LINKED_FLAGS);
	expect_stats(&st, 3, 3, 0, 0, 1, 0, 0);
}

static void t_graph(void **state)
{
	struct merge_call c[2] = {
		call_x(T0, T0 + 8 * US, TID, MERGE_CALL_GRAPH),
		call_x(T0 + 20 * US, T0 + 24 * US, TID, MERGE_CALL_LAUNCH),
	};
	struct merge_api a[2] = { api(7, TID, T0 + 1 * US, 6 * US), api(8, TID, T0 + 21 * US, 2 * US) };
	struct merge_gpu g[6] = {
		gpu_rec(GT_REC_GPU_KERNEL, 7, T0 + 30 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 7, T0 + 31 * US),
		gpu_rec(GT_REC_GPU_MEMCPY, 7, T0 + 32 * US),
		gpu_rec(GT_REC_GPU_MEMSET, 7, T0 + 33 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 7, T0 + 34 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 8, T0 + 35 * US),
	};
	struct merge_link_stats st;

	(void)state;
	link_ok(c, 2, a, 2, g, 6, &st);
	for (int i = 0; i < 5; i++)
		assert_int_equal(g[i].call, 0);
	assert_int_equal(g[5].call, 1);
	assert_int_equal(c[0].nlinked, 5);
	expect_stats(&st, 6, 6, 0, 0, 0, 0, 0);
}

/* A kernel is never linked to a copy, nor a copy to a launch. */
static void t_kinds(void **state)
{
	struct merge_call c[2] = {
		call_x(T0, T0 + 20 * US, TID, MERGE_CALL_COPY),
		call_x(T0 + 30 * US, T0 + 34 * US, TID, MERGE_CALL_SET),
	};
	struct merge_api a[3] = {
		api(1, TID, T0 + 1 * US, 1 * US), api(2, TID, T0 + 31 * US, 1 * US),
		api(3, TID, T0 + 2 * US, 1 * US),
	};
	struct merge_gpu g[3] = {
		gpu_rec(GT_REC_GPU_MEMCPY, 1, T0 + 5 * US),
		gpu_rec(GT_REC_GPU_MEMSET, 2, T0 + 35 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 3, T0 + 6 * US),
	};
	struct merge_link_stats st;

	(void)state;
	link_ok(c, 2, a, 3, g, 3, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 1);
	assert_int_equal(g[2].call, MERGE_NO_CALL);
	expect_stats(&st, 3, 2, 1, 0, 0, 0, 0);
	assert_int_equal(merge__call_kind(GT_API_cuLaunchKernel), MERGE_CALL_LAUNCH);
	assert_int_equal(merge__call_kind(GT_API_cuLaunchKernelEx_ptsz), MERGE_CALL_LAUNCH);
	assert_int_equal(merge__call_kind(GT_API_cuLaunchCooperativeKernel), MERGE_CALL_LAUNCH);
	assert_int_equal(merge__call_kind(GT_API_cuGraphLaunch), MERGE_CALL_GRAPH);
	assert_int_equal(merge__call_kind(GT_API_cuMemcpyHtoDAsync_v2), MERGE_CALL_COPY);
	assert_int_equal(merge__call_kind(GT_API_cuMemcpy3D_v2), MERGE_CALL_COPY);
	assert_int_equal(merge__call_kind(GT_API_cuMemsetD32Async), MERGE_CALL_SET);
	assert_int_equal(merge__call_kind(GT_API_cuStreamSynchronize), MERGE_CALL_NONE);
	assert_int_equal(merge__call_kind(0), MERGE_CALL_NONE);
}

/* Launches without GPU work count only in processes the agent watched,
 * up to its last API record, and not when they failed. */
static void t_unmatched_calls(void **state)
{
	struct merge_call c[5] = {
		call_x(T0, T0 + 4 * US, TID, MERGE_CALL_LAUNCH),		/* linked */
		call_x(T0 + 10 * US, T0 + 14 * US, TID, MERGE_CALL_LAUNCH),	/* no kernel: counted */
		call_x(T0 + 20 * US, T0 + 24 * US, TID, MERGE_CALL_LAUNCH),	/* failed */
		call_x(T0 + 1 * MS, T0 + 1 * MS + 4 * US, TID, MERGE_CALL_LAUNCH), /* after the agent */
		call_x(T0, T0 + 4 * US, 77, MERGE_CALL_LAUNCH),			/* other process */
	};
	/* the agent's last API record ends at T0 + 101 us */
	struct merge_api a[2] = { api(1, TID, T0 + 1 * US, 2 * US), api(2, TID, T0 + 100 * US, 1 * US) };
	struct merge_gpu g[1] = { gpu_rec(GT_REC_GPU_KERNEL, 1, T0 + 5 * US) };
	struct merge_link_stats st;

	(void)state;
	c[2].failed = 1;
	c[4].pid = 77;
	link_ok(c, 5, a, 2, g, 1, &st);
	assert_int_equal(g[0].call, 0);
	expect_stats(&st, 1, 1, 0, 1, 0, 0, 0);
	assert_int_equal(st.processes, 1);
}

/* ------------------------------------------------------------ files */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[16][160];
	static int which;

	which = (which + 1) % 16;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tmpdir, name);
	return buf[which];
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static int file_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gtrace-test-merge.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	gt_log_level = GT_LOG_ERROR;	/* the summary and warnings are not under test here */
	return 0;
}

static int file_teardown(void **state)
{
	(void)state;
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static _Alignas(8) unsigned char rb[4096];

static struct gt_hdr *mk(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid,
			 uint16_t api_id)
{
	struct gt_hdr *h = (void *)rb;

	memset(rb, 0, size);
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->api = api_id;
	return h;
}

static const struct gt_hdr *launch_rec(uint64_t ts, uint32_t tid)
{
	struct gt_launch *l = (void *)mk(GT_REC_LAUNCH, sizeof(struct gt_launch), ts, PID, tid,
					  GT_API_cuLaunchKernel);

	l->func = 0x7000;
	l->grid[0] = l->block[0] = 1;
	return &l->hdr;
}

static const struct gt_hdr *call_rec(uint64_t ts, uint32_t tid, unsigned api_id)
{
	return mk(GT_REC_CALL, sizeof(struct gt_call), ts, PID, tid, api_id);
}

static const struct gt_hdr *ret_rec(uint64_t ts, uint32_t tid, unsigned api_id, int32_t ret)
{
	struct gt_ret *r = (void *)mk(GT_REC_RET, sizeof(struct gt_ret), ts, PID, tid, api_id);

	r->ret = ret;
	return &r->hdr;
}

static const struct gt_hdr *exec_rec(uint64_t ts)
{
	return mk(GT_REC_EXEC, sizeof(struct gt_proc_evt), ts, PID, PID, 0);
}

static struct gt_counters main_counters = { .events = 77, .drop_ringbuf = 3 };

/* Starts a trace; the caller appends records and ends it with trace_end. */
static struct trace_writer *trace_begin(const char *path, const char *options)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = T0 - MS, .host = "h",
		.kernel = "k", .cmdline = "gtrace-bpf -- app", .options = options,
	};
	struct trace_writer *w;

	assert_int_equal(trace_writer__create(path, &info, NULL, &w), 0);
	return w;
}

static void trace_add(struct trace_writer *w, const struct gt_hdr *h)
{
	assert_int_equal(trace_writer__append(w, h), 0);
}

static void trace_end(struct trace_writer *w)
{
	struct gt_trailer t = { .end_ts = T0 + 10 * MS, .counters = main_counters };

	assert_int_equal(trace_writer__finish(w, &t), 0);
	trace_writer__free(w);
}

/* The eBPF side of the file tests: exec; launch L1 [T0, T0+4us];
 * cuMemcpyHtoD C1 [T0+10us, T0+30us]; launch L2 [T0+40us, T0+44us];
 * launch L3 [T0+50us, T0+54us] that gets no kernel. */
static void write_main(const char *path)
{
	struct trace_writer *w = trace_begin(path, "mode=command trace=cuda cupti=1 launch_exit=1");

	trace_add(w, exec_rec(T0 - 100 * US));
	trace_add(w, launch_rec(T0, TID));
	trace_add(w, ret_rec(T0 + 4 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_add(w, call_rec(T0 + 10 * US, TID, GT_API_cuMemcpyHtoD_v2));
	trace_add(w, ret_rec(T0 + 30 * US, TID, GT_API_cuMemcpyHtoD_v2, 0));
	trace_add(w, launch_rec(T0 + 40 * US, TID));
	trace_add(w, ret_rec(T0 + 44 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_add(w, launch_rec(T0 + 50 * US, TID));
	trace_add(w, ret_rec(T0 + 54 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_end(w);
}

struct spool_buf {
	unsigned char b[16384];
	size_t n;
};

static void sp_add(struct spool_buf *s, const struct gt_hdr *h)
{
	assert_true(s->n + h->size <= sizeof(s->b));
	memcpy(s->b + s->n, h, h->size);
	s->n += h->size;
}

static void sp_init(struct spool_buf *s)
{
	memcpy(s->b, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN);
	s->n = GT_CUPTI_MAGIC_LEN;
}

static void sp_api(struct spool_buf *s, uint32_t corr, uint64_t start, uint64_t dur)
{
	struct gt_gpu_api *a = (void *)mk(GT_REC_GPU_API, sizeof(*a), start, PID, TID, 0);

	a->dur = dur;
	a->correlation = corr;
	a->cbid = 307;
	sp_add(s, &a->hdr);
}

static void sp_kernel(struct spool_buf *s, uint32_t corr, uint64_t ts, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gt_gpu_kernel *k = (void *)mk(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + len), ts,
					      PID, 0, 0);

	k->dur = 2 * US;
	k->correlation = corr;
	k->device = 0;
	k->stream = 7;
	k->grid[0] = 1;
	k->block[0] = 32;
	k->len = len;
	memcpy(k->name, name, len);
	sp_add(s, &k->hdr);
}

static void sp_copy(struct spool_buf *s, uint16_t type, uint32_t corr, uint64_t ts)
{
	struct gt_gpu_copy *c = (void *)mk(type, sizeof(*c), ts, PID, 0, 0);

	c->dur = 3 * US;
	c->bytes = 4096;
	c->correlation = corr;
	c->kind = type == GT_REC_GPU_MEMCPY ? GT_COPY_HTOD : 0;
	sp_add(s, &c->hdr);
}

static void sp_nvtx(struct spool_buf *s, uint64_t ts, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gt_nvtx *n = (void *)mk(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*n) + len), ts, PID, TID, 0);

	n->dur = 100 * US;
	n->len = len;
	memcpy(n->name, name, len);
	sp_add(s, &n->hdr);
}

static void sp_stats(struct spool_buf *s, uint64_t ts)
{
	struct gt_cupti_stats *st = (void *)mk(GT_REC_CUPTI_STATS, sizeof(*st), ts, PID, 0, 0);

	st->records = 9;
	st->dropped = 1;
	sp_add(s, &st->hdr);
}

static void sp_write(const struct spool_buf *s, const char *path, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(s->b, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The GPU side of the file tests: L1 -> K1, C1 -> M1, L2 -> K2a and K2b (a
 * duplicate), a kernel without API record, an API outside every call, an
 * NVTX range, the agent's counters. Written in an order unlike time's. */
static void fill_spool(struct spool_buf *s)
{
	sp_init(s);
	sp_nvtx(s, T0 - 50 * US, "step");
	sp_kernel(s, 3, T0 + 46 * US, "_Z2k2v");	/* K2a */
	sp_api(s, 1, T0 + 500, 3 * US);
	sp_api(s, 3, T0 + 40 * US + 500, 3 * US);
	sp_kernel(s, 1, T0 + 5 * US, "_Z2k1v");		/* K1 */
	sp_copy(s, GT_REC_GPU_MEMCPY, 2, T0 + 12 * US);	/* M1 */
	sp_api(s, 2, T0 + 11 * US, 18 * US);
	sp_kernel(s, 3, T0 + 48 * US, "_Z2k2v");	/* K2b */
	sp_kernel(s, 9, T0 + 60 * US, "_Z2k9v");	/* no API record */
	sp_api(s, 5, T0 + 70 * US, 1 * US);		/* after every call */
	sp_kernel(s, 5, T0 + 71 * US, "_Z2k5v");
	sp_stats(s, T0 + 100 * US);
}

struct outrec {
	uint16_t type, api;
	uint32_t tid;
	uint64_t ts;
	uint64_t launch_ts;
	uint16_t flags;
	uint32_t corr;
};

static int read_out(const char *path, struct outrec *o, int max, struct gt_trailer *trailer,
		    char *options, size_t optlen)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	int n = 0, rc;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	snprintf(options, optlen, "%s", trace_reader__info(r)->options);
	while ((rc = trace_reader__next(r, &h)) > 0) {
		assert_true(n < max);
		o[n] = (struct outrec){ .type = h->type, .api = h->api, .tid = h->tid, .ts = h->ts };
		if (h->type == GT_REC_GPU_KERNEL) {
			const struct gt_gpu_kernel *k = (const void *)h;

			o[n].launch_ts = k->launch_ts;
			o[n].flags = k->flags;
			o[n].corr = k->correlation;
		} else if (h->type == GT_REC_GPU_MEMCPY || h->type == GT_REC_GPU_MEMSET) {
			const struct gt_gpu_copy *c = (const void *)h;

			o[n].launch_ts = c->launch_ts;
			o[n].flags = c->flags;
			o[n].corr = c->correlation;
		} else if (h->type == GT_REC_GPU_API) {
			o[n].corr = ((const struct gt_gpu_api *)h)->correlation;
		} else if (h->type == GT_REC_MERGE_STATS) {
			const struct gt_merge_stats *m = (const void *)h;

			/* the counters, where the test can see them */
			o[n].launch_ts = m->gpu_records << 40 | m->linked << 32 | m->unmatched_gpu << 24 |
					 m->unmatched_calls << 16 | m->causality << 8 | m->no_api;
		}
		n++;
	}
	assert_int_equal(rc, 0);
	assert_false(trace_reader__truncated(r));
	assert_non_null(trace_reader__trailer(r));
	*trailer = *trace_reader__trailer(r);
	trace_reader__close(r);
	return n;
}

#define MS_PACK(gpu, linked, unm, unc, caus, noapi) \
	((uint64_t)(gpu) << 40 | (uint64_t)(linked) << 32 | (uint64_t)(unm) << 24 | \
	 (uint64_t)(unc) << 16 | (uint64_t)(caus) << 8 | (noapi))

static void expect_rec(const struct outrec *o, uint16_t type, uint64_t ts)
{
	if (o->type != type || o->ts != ts)
		fail_msg("record type %u ts %llu, expected type %u ts %llu", o->type,
			 (unsigned long long)o->ts, type, (unsigned long long)ts);
}

static void t_file_placement(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("run_merged.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	struct stat st;
	int n, i = 0;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.main_records, 9);
	assert_int_equal(res.spool_files, 1);
	assert_int_equal(res.spool_records, 12);
	assert_int_equal(res.spool_cut, 0);
	/* 6 GPU records: K1, M1, K2a, K2b linked; k9 (no API) and k5 (outside) not */
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	assert_int_equal(res.link.processes, 1);

	n = read_out(out, o, 64, &t, options, sizeof(options));
	assert_int_equal(n, 9 + 6 + 4 + 1 + 1 + 1);
	expect_rec(&o[i++], GT_REC_EXEC, T0 - 100 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 5 * US);		/* K1 right after L1's entry */
	assert_int_equal(o[i].tid, TID);
	assert_int_equal(o[i].launch_ts, T0);
	assert_int_equal(o[i++].flags, LINKED_FLAGS);
	expect_rec(&o[i++], GT_REC_RET, T0 + 4 * US);
	expect_rec(&o[i++], GT_REC_CALL, T0 + 10 * US);
	expect_rec(&o[i], GT_REC_GPU_MEMCPY, T0 + 12 * US);		/* M1 after C1's entry */
	assert_int_equal(o[i].launch_ts, T0 + 10 * US);
	assert_int_equal(o[i].tid, TID);
	assert_int_equal(o[i++].flags, LINKED_FLAGS);
	expect_rec(&o[i++], GT_REC_RET, T0 + 30 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0 + 40 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 46 * US);		/* K2a, K2b by GPU time */
	assert_int_equal(o[i++].launch_ts, T0 + 40 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 48 * US);
	assert_int_equal(o[i++].launch_ts, T0 + 40 * US);
	expect_rec(&o[i++], GT_REC_RET, T0 + 44 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0 + 50 * US);		/* L3: nothing after it */
	expect_rec(&o[i++], GT_REC_RET, T0 + 54 * US);
	/* then by time: NVTX, the APIs, the unlinked kernels */
	expect_rec(&o[i++], GT_REC_NVTX, T0 - 50 * US);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 500);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 11 * US);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 40 * US + 500);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 60 * US);		/* no API: flags 0 */
	assert_int_equal(o[i].tid, 0);
	assert_int_equal(o[i].launch_ts, 0);
	assert_int_equal(o[i++].flags, 0);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 70 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 71 * US);		/* API but no call */
	assert_int_equal(o[i].tid, 0);
	assert_int_equal(o[i].launch_ts, 0);
	assert_int_equal(o[i++].flags, GT_GPU_API_MATCHED);
	assert_int_equal(o[i].type, GT_REC_MERGE_STATS);
	assert_int_equal(o[i++].launch_ts, MS_PACK(6, 4, 2, 1, 0, 1));
	expect_rec(&o[i++], GT_REC_CUPTI_STATS, T0 + 100 * US);
	assert_int_equal(i, n);

	/* the trailer keeps the trace's counters; the header says merged */
	assert_int_equal(t.end_ts, T0 + 10 * MS);
	assert_int_equal(t.counters.events, 77);
	assert_int_equal(t.counters.drop_ringbuf, 3);
	assert_int_equal(t.records, n);
	assert_string_equal(options, "mode=command trace=cuda launch_exit=1 cupti=merged");
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* A process killed while writing: its last record is cut; the rest merges. */
static void t_file_cut_spool(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("cut.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	int n;

	(void)state;
	write_main(main_path);
	sp_init(&s);
	sp_api(&s, 1, T0 + 500, 3 * US);
	sp_kernel(&s, 1, T0 + 5 * US, "_Z2k1v");
	sp_api(&s, 3, T0 + 40 * US + 500, 3 * US);
	sp_kernel(&s, 3, T0 + 46 * US, "_Z2k2v");
	sp_write(&s, sp, s.n - 20);	/* K2 cut 20 bytes short */
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_cut, 1);
	assert_int_equal(res.spool_records, 3);
	expect_stats(&res.link, 1, 1, 0, 2, 0, 0, 0);
	n = read_out(out, o, 64, &t, options, sizeof(options));
	assert_int_equal(n, 9 + 1 + 2 + 1);
	expect_rec(&o[2], GT_REC_GPU_KERNEL, T0 + 5 * US);
	/* only the magic made it: no records, counted as cut */
	sp_write(&s, sp, 5);
	mo.force = true;
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_cut, 1);
	assert_int_equal(res.spool_records, 0);
	assert_int_equal(res.link.gpu_records, 0);
}

static bool only(const char *dir, const char *a, const char *b)
{
	char cmd[256];

	/* everything in dir is a or b: no temporary file was left behind */
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s | grep -v -x -e '%s' -e '%s' | wc -l)\" = 0",
		 dir, a, b);
	return system(cmd) == 0;
}

static void t_file_refused(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("out.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct spool_buf s;
	struct stat st;
	FILE *f;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	/* a bad magic: refused, nothing written */
	memcpy(s.b, "GTCUPTI9", 8);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, NULL), -EBADMSG);
	assert_int_not_equal(stat(out, &st), 0);
	assert_true(only(tmpdir, "run.gtrace", "gtrace-cupti.4242.spool"));
	/* a missing spool, a missing trace */
	spools[0] = tmp_path("nope.spool");
	assert_int_equal(merge__run(&mo, NULL), -ENOENT);
	spools[0] = sp;
	mo.trace = tmp_path("nope.gtrace");
	assert_int_equal(merge__run(&mo, NULL), -ENOENT);
	mo.trace = main_path;
	/* the output exists: refused without force, its bytes untouched */
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	f = fopen(out, "w");
	assert_non_null(f);
	fputs("keep", f);
	fclose(f);
	assert_int_equal(merge__run(&mo, NULL), -EEXIST);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_size, 4);
	mo.force = true;
	assert_int_equal(merge__run(&mo, NULL), 0);
	assert_int_equal(stat(out, &st), 0);
	assert_true(st.st_size > 4);
	/* a merged trace is not merged again */
	mo.trace = out;
	mo.output = tmp_path("again.gtrace");
	assert_int_equal(merge__run(&mo, NULL), -EINVAL);
	assert_int_not_equal(stat(mo.output, &st), 0);
}

/* The output may be the input (the recorder merges in place). */
static void t_file_in_place(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *spools[] = { tmpdir };	/* a directory: its *.spool */
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = main_path, .force = true };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	FILE *f;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	f = fopen(tmp_path("notes.txt"), "w");	/* not a spool: ignored */
	assert_non_null(f);
	fclose(f);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_files, 1);
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	assert_int_equal(read_out(main_path, o, 64, &t, options, sizeof(options)), 22);
	/* no temporary file left beside it */
	unlink(tmp_path("notes.txt"));
	assert_true(only(tmpdir, "run.gtrace", "gtrace-cupti.4242.spool"));
}

static bool pid_is_4242(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == PID;
}

/* --all: only the recorded processes' records are merged. */
static void t_file_want_pid(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *sp2 = tmp_path("gtrace-cupti.99.spool");
	const char *spools[] = { sp, sp2 };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 2,
				 .output = tmp_path("w.gtrace"), .want_pid = pid_is_4242 };
	struct merge_result res;
	struct spool_buf s;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	/* the same records under pid 99 */
	for (size_t off = GT_CUPTI_MAGIC_LEN; off < s.n;) {
		struct gt_hdr *h = (void *)(s.b + off);

		h->pid = 99;
		off += h->size;
	}
	sp_write(&s, sp2, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_other_pids, 12);
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	/* without the filter, pid 99's records do not link to pid 4242's calls */
	mo.want_pid = NULL;
	mo.force = true;
	assert_int_equal(merge__run(&mo, &res), 0);
	expect_stats(&res.link, 12, 4, 8, 1, 0, 2, 1);
	assert_int_equal(res.link.processes, 2);
}

/* A trace cut inside its last chunk: what was readable is merged. */
static void t_file_damaged_trace(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = tmp_path("d.gtrace") };
	struct trace_writer_opts wo = { .chunk_bytes = 200 };
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = T0, .host = "h",
		.kernel = "k", .cmdline = "c", .options = "mode=all",
	};
	struct merge_result res;
	struct trace_writer *w;
	struct spool_buf s;
	uint64_t first;

	(void)state;
	/* L1 and its exit in the first chunk, L2 and its exit in the second */
	assert_int_equal(trace_writer__create(main_path, &info, &wo, &w), 0);
	trace_add(w, launch_rec(T0, TID));
	trace_add(w, ret_rec(T0 + 4 * US, TID, GT_API_cuLaunchKernel, 0));
	assert_int_equal(trace_writer__flush(w), 0);
	first = trace_writer__bytes(w);
	trace_add(w, launch_rec(T0 + 40 * US, TID));
	trace_add(w, ret_rec(T0 + 44 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_end(w);
	/* cut inside the second chunk's header */
	assert_int_equal(truncate(main_path, first + 20), 0);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_true(res.trace_damaged);
	assert_int_equal(res.main_records, 2);
	/* K1 linked; K2a/K2b's launch is gone, M1's copy never was */
	expect_stats(&res.link, 6, 1, 5, 0, 0, 1, 0);
}

static void t_default_output(void **state)
{
	char *s;

	(void)state;
	s = merge__default_output("run.gtrace");
	assert_string_equal(s, "run_merged.gtrace");
	free(s);
	s = merge__default_output("/a/b.c/run");
	assert_string_equal(s, "/a/b.c/run_merged.gtrace");
	free(s);
	s = merge__default_output("dir/.gtrace");
	assert_string_equal(s, "dir/.gtrace_merged.gtrace");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_in_order),
		cmocka_unit_test(t_reordered),
		cmocka_unit_test(t_missing_api),
		cmocka_unit_test(t_duplicate),
		cmocka_unit_test(t_outside),
		cmocka_unit_test(t_skew),
		cmocka_unit_test(t_back_to_back),
		cmocka_unit_test(t_no_exit),
		cmocka_unit_test(t_causality),
		cmocka_unit_test(t_graph),
		cmocka_unit_test(t_kinds),
		cmocka_unit_test(t_unmatched_calls),
		cmocka_unit_test_setup_teardown(t_file_placement, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_cut_spool, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_refused, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_in_place, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_want_pid, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_damaged_trace, file_setup, file_teardown),
		cmocka_unit_test(t_default_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
