// SPDX-License-Identifier: MIT
/*
 * Unit tests of the merger's linking core (user/merge/merge.c, merge__link) on
 * arrays built here, with exact expected links and counters.  The file
 * merge is tested in test_merge.c, the GPU clock's fit in test_merge_clock.c.
 * No root, no GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "lib/log.h"
#include "merge/merge.h"
#include "merge/link.h"
#include "format/trace_file.h"
#include "merge_fixtures.h"

/* ------------------------------------------------------------ linking core */

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
	/* CUPTI's callback 3.6 ms after the last launch's entry, no call of
	 * the thread entered between: the thread was kept off the CPU inside
	 * that launch, which is still the one */
	a[2].start = T0 + 12 * US + 3600 * US;
	a[3].start = T0 + 12 * US + 4 * MS;
	c[3].entry = a[3].start - 1 * US;
	c[3].exit = a[3].start + 8 * US;
	g[3].ts = a[3].start + 1 * US;
	g[2].ts = a[2].start + 5 * US;
	link_ok(c, 4, a, 4, g, 4, &st);
	for (int i = 0; i < 4; i++)
		assert_int_equal(g[i].call, i);
	expect_stats(&st, 4, 4, 0, 0, 0, 0, 0);
	/* ... unless calls are recorded in capture ranges only: the latest
	 * one recorded need not be the one the thread is in */
	{
		struct merge_link_opts o = { .partial_calls = true };

		assert_int_equal(merge__link(c, 4, a, 4, g, 4, &o, &st), 0);
		assert_int_equal(g[2].call, MERGE_NO_CALL);
		expect_stats(&st, 4, 3, 1, 1, 0, 0, 0);
	}
	/* an earlier launch's window stays MERGE_NO_EXIT_WINDOW_NS: 2 ms
	 * after the first launch, the thread had entered two calls since */
	a[0].start = T0 + 2 * MS;
	link_ok(c, 4, a, 4, g, 4, &st);
	assert_int_not_equal(g[0].call, 0);
	/* more than MERGE_NO_EXIT_LATEST_NS after the latest: too far */
	a[0].start = T0 + 400;
	a[2].start = T0 + 12 * US + MERGE_NO_EXIT_LATEST_NS + 1 * MS;
	a[3].start = a[2].start + 1 * MS;
	c[3].entry = a[3].start - 1 * US;
	c[3].exit = a[3].start + 8 * US;
	g[3].ts = a[3].start + 1 * US;
	g[2].ts = a[2].start + 5 * US;
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

/* ------------------------------------------------------------ CUDA graphs */

/* Two launches captured into a graph (no GPU work of their own), the graph
 * instantiated (clones) and cloned again, then launched: each kernel of the
 * launch goes back to the captured launch that made its node; the captured
 * launches are not launches without GPU work. */
static void t_graph_nodes(void **state)
{
	struct merge_call c[4] = {
		call_x(T0, T0 + 4 * US, TID, MERGE_CALL_LAUNCH),			/* captured: node 1 */
		call_x(T0 + 10 * US, T0 + 14 * US, TID, MERGE_CALL_LAUNCH),		/* captured: node 2 */
		call_x(T0 + 20 * US, T0 + 24 * US, TID, MERGE_CALL_LAUNCH),		/* not captured, no kernel */
		call_x(T0 + 100 * US, T0 + 104 * US, TID, MERGE_CALL_GRAPH),	/* the graph's launch */
	};
	struct merge_node n[6] = {
		{ .node = 12, .original = 2, .ts = T0 + 50 * US, .pid = PID, .tid = TID },	/* clone */
		{ .node = 1, .ts = T0 + 2 * US, .pid = PID, .tid = TID },			/* made in c[0] */
		{ .node = 2, .ts = T0 + 12 * US, .pid = PID, .tid = TID },			/* made in c[1] */
		{ .node = 11, .original = 1, .ts = T0 + 50 * US, .pid = PID, .tid = TID },	/* clone */
		{ .node = 21, .original = 11, .ts = T0 + 60 * US, .pid = PID, .tid = TID },	/* clone of a clone */
		{ .node = 3, .ts = T0 + 500 * US, .pid = PID, .tid = TID },			/* in no call */
	};
	struct merge_api a[1] = { api(7, TID, T0 + 101 * US, 2 * US) };
	struct merge_gpu g[2] = { gpu_rec(GT_REC_GPU_KERNEL, 7, T0 + 110 * US),
				  gpu_rec(GT_REC_GPU_KERNEL, 7, T0 + 120 * US) };
	struct merge_link_stats st;

	(void)state;
	assert_int_equal(merge__link_nodes(c, 4, n, 6, NULL), 0);
	assert_true(c[0].captured && c[1].captured && !c[2].captured && !c[3].captured);
	link_ok(c, 4, a, 1, g, 2, &st);
	assert_int_equal(g[0].call, 3);
	assert_int_equal(g[1].call, 3);
	/* c[2] alone made no GPU work; c[0] and c[1] made the graph's */
	expect_stats(&st, 2, 2, 0, 1, 0, 0, 0);
	assert_int_equal(st.captured_calls, 2);
	assert_int_equal(merge__node_call(n, 6, PID, 11), 0);
	assert_int_equal(merge__node_call(n, 6, PID, 12), 1);
	assert_int_equal(merge__node_call(n, 6, PID, 21), 0);
	assert_int_equal(merge__node_call(n, 6, PID, 1), 0);
	assert_int_equal(merge__node_call(n, 6, PID, 3), MERGE_NO_CALL);
	assert_int_equal(merge__node_call(n, 6, PID, 99), MERGE_NO_CALL);
	assert_int_equal(merge__node_call(n, 6, PID + 1, 11), MERGE_NO_CALL);
	assert_int_equal(merge__node_call(NULL, 0, PID, 11), MERGE_NO_CALL);
}

/* A clone whose chain never reaches a made node (a loop of clones, damaged
 * input) ends after a bounded walk. */
static void t_graph_node_loop(void **state)
{
	struct merge_node n[2] = {
		{ .node = 5, .original = 6, .pid = PID, .tid = TID },
		{ .node = 6, .original = 5, .pid = PID, .tid = TID },
	};

	(void)state;
	assert_int_equal(merge__link_nodes(NULL, 0, n, 2, NULL), 0);
	assert_int_equal(merge__node_call(n, 2, PID, 5), MERGE_NO_CALL);
}

/* ------------------------------------------------------------ by order */

#define ORDER_FLAGS (GT_GPU_LINKED | GT_GPU_BY_ORDER)

/* A launch entered at e on tid, stream handle s, grid x (block 256). */
static struct merge_call launch_at(uint64_t e, uint32_t tid, uint64_t s, uint32_t x)
{
	const uint32_t grid[3] = { x, 1, 1 }, block[3] = { 256, 1, 1 };
	struct merge_call c = call_noexit(e, tid, MERGE_CALL_LAUNCH);

	c.stream = s;
	c.shape = merge__shape(grid, block);
	return c;
}

/* Its kernel: correlation corr, CUPTI stream id sid, start ts. */
static struct merge_gpu kernel_of(uint32_t corr, uint32_t sid, uint64_t ts, uint32_t x)
{
	const uint32_t grid[3] = { x, 1, 1 }, block[3] = { 256, 1, 1 };
	struct merge_gpu g = gpu_rec(GT_REC_GPU_KERNEL, corr, ts);

	g.stream = sid;
	g.shape = merge__shape(grid, block);
	return g;
}

/* No API records at all (the agent's default): calls in entry order meet
 * the GPU records in correlation order, whatever order they come in. */
static void t_order_basic(void **state)
{
	struct merge_call c[4];
	struct merge_gpu g[4];
	struct merge_link_stats st;

	(void)state;
	for (int i = 0; i < 4; i++) {
		c[i] = launch_at(T0 + i * 10 * US, TID, 0x70, 1 + i % 2);
		g[3 - i] = kernel_of(100 + 7 * i, 13, T0 + i * 10 * US + 5 * US, 1 + i % 2);
	}
	link_ok(c, 4, NULL, 0, g, 4, &st);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(g[3 - i].call, i);
		assert_int_equal(g[3 - i].flags, ORDER_FLAGS);
		assert_int_equal(c[i].nlinked, 1);
	}
	expect_stats(&st, 4, 4, 0, 0, 0, 0, 0);
	assert_int_equal(st.by_order, 4);
}

/* A launch whose kernel is missing (failed without an exit, or its record
 * lost) is skipped: the next kernel's dims do not fit it. */
static void t_order_gap(void **state)
{
	struct merge_call c[4];
	struct merge_gpu g[3];
	struct merge_link_stats st;

	(void)state;
	for (int i = 0; i < 4; i++)
		c[i] = launch_at(T0 + i * 10 * US, TID, 0x70, 10 + i);
	g[0] = kernel_of(1, 13, T0 + 5 * US, 10);
	g[1] = kernel_of(3, 13, T0 + 25 * US, 12);	/* launch 1 made none */
	g[2] = kernel_of(4, 13, T0 + 35 * US, 13);
	link_ok(c, 4, NULL, 0, g, 3, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 2);
	assert_int_equal(g[2].call, 3);
	assert_int_equal(c[1].nlinked, 0);
	/* launch 1 lies before the process' last linked call: without GPU work */
	expect_stats(&st, 3, 3, 0, 1, 0, 0, 0);
}

/* Two threads launch the same kernel on their own streams, entries 100 ns
 * apart, and the driver numbered them the other way round: once the first
 * (distinct) launches taught which stream handle is which CUPTI stream, the
 * stream decides. */
static void t_order_streams(void **state)
{
	struct merge_call c[4] = {
		launch_at(T0, 1001, 0xa0, 1),			/* thread 1, stream A */
		launch_at(T0 + 1 * US, 1002, 0xb0, 2),		/* thread 2, stream B */
		launch_at(T0 + 10 * US, 1001, 0xa0, 9),		/* the same kernel ... */
		launch_at(T0 + 10 * US + 100, 1002, 0xb0, 9),	/* ... on both */
	};
	struct merge_gpu g[4] = {
		kernel_of(1, 21, T0 + 5 * US, 1),
		kernel_of(2, 22, T0 + 6 * US, 2),
		kernel_of(3, 22, T0 + 15 * US, 9),		/* thread 2's, numbered first */
		kernel_of(4, 21, T0 + 16 * US, 9),
	};
	struct merge_link_stats st;

	(void)state;
	link_ok(c, 4, NULL, 0, g, 4, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 1);
	assert_int_equal(g[2].call, 3);
	assert_int_equal(g[3].call, 2);
	expect_stats(&st, 4, 4, 0, 0, 0, 0, 0);
}

/* A graph launch takes every record of its correlation; a copy fits a call
 * of at least its bytes; a kernel that started before every free call was
 * entered has no call; a process with API records is not linked by order. */
static void t_order_kinds(void **state)
{
	struct merge_call c[4] = {
		call_noexit(T0, TID, MERGE_CALL_GRAPH),
		call_noexit(T0 + 10 * US, TID, MERGE_CALL_COPY),
		call_noexit(T0 + 20 * US, TID, MERGE_CALL_COPY),
		call_x(T0, T0 + 4 * US, TID, MERGE_CALL_LAUNCH),
	};
	struct merge_gpu g[6] = {
		gpu_rec(GT_REC_GPU_KERNEL, 5, T0 + 2 * US),
		gpu_rec(GT_REC_GPU_MEMSET, 5, T0 + 3 * US),
		gpu_rec(GT_REC_GPU_KERNEL, 5, T0 + 4 * US),
		gpu_rec(GT_REC_GPU_MEMCPY, 6, T0 + 30 * US),	/* 4 MiB: not the 1 MiB copy */
		gpu_rec(GT_REC_GPU_KERNEL, 7, T0 - 1 * MS),	/* before every call */
		gpu_rec(GT_REC_GPU_KERNEL, 9, T0 + 5 * US),	/* pid 77: has API records */
	};
	struct merge_api a[1] = { api(8, TID, T0 + 300, 3 * US) };
	struct merge_link_stats st;

	(void)state;
	c[1].shape = 1 << 20;
	c[2].shape = 4 << 20;
	g[3].shape = 4 << 20;
	c[3].pid = a[0].pid = g[5].pid = 77;
	link_ok(c, 4, a, 1, g, 6, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 0);
	assert_int_equal(g[2].call, 0);
	assert_int_equal(c[0].nlinked, 3);
	assert_int_equal(g[3].call, 2);
	assert_int_equal(g[4].call, MERGE_NO_CALL);
	assert_int_equal(g[5].call, MERGE_NO_CALL);
	assert_int_equal(g[5].flags, 0);
	/* the 1 MiB copy lies before the last linked call: without GPU work;
	 * pid 77's launch has no GPU record and its process API records */
	expect_stats(&st, 6, 4, 2, 2, 0, 1, 0);
	assert_int_equal(st.by_order, 4);
}

/* A thread enters its calls one after the other: once a later call of it
 * is linked, an earlier free one made no GPU work, however close in time
 * (launch 1 has the dims of launch 3 and is 2 us before it). */
static void t_order_thread(void **state)
{
	struct merge_call c[4] = {
		launch_at(T0, TID, 0x70, 5),
		launch_at(T0 + 1 * US, TID, 0x70, 5),	/* no kernel */
		launch_at(T0 + 2 * US, TID, 0x70, 6),
		launch_at(T0 + 3 * US, TID, 0x70, 5),
	};
	struct merge_gpu g[3] = {
		kernel_of(1, 13, T0 + 10 * US, 5),
		kernel_of(3, 13, T0 + 20 * US, 6),
		kernel_of(4, 13, T0 + 30 * US, 5),
	};
	struct merge_link_stats st;

	(void)state;
	link_ok(c, 4, NULL, 0, g, 3, &st);
	assert_int_equal(g[0].call, 0);
	assert_int_equal(g[1].call, 2);
	assert_int_equal(g[2].call, 3);
	assert_int_equal(c[1].nlinked, 0);
	expect_stats(&st, 3, 3, 0, 1, 0, 0, 0);
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
		cmocka_unit_test(t_order_basic),
		cmocka_unit_test(t_order_gap),
		cmocka_unit_test(t_order_thread),
		cmocka_unit_test(t_order_streams),
		cmocka_unit_test(t_order_kinds),
		cmocka_unit_test(t_graph_nodes),
		cmocka_unit_test(t_graph_node_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
