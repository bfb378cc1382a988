// SPDX-License-Identifier: MIT
/*
 * Unit tests of the CUPTI agent's record conversion (cupti/convert.c) on
 * synthetic CUPTI 13 activity records.  Needs cupti.h for the struct
 * layouts, not libcupti nor a GPU.  The driver callbacks the agent
 * subscribes to and its buffer pool and queue (cupti/ring.h) are tested in
 * test_cupti_ring.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert.h"
#include "user/format/records.h"	/* gt_gpu_kernel__graph, inline */
#include "bpf/gtrace_api.h"
#include "cupti_fixtures.h"

/* ------------------------------------------------------------ kernels */

static CUpti_ActivityKernel10 kernel_rec(const char *name)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000000;
	k.end = 1002500;
	k.deviceId = 1;
	k.contextId = 7;
	k.streamId = 13;
	k.gridX = 128;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = 99;
	k.registersPerThread = 32;
	k.name = name;
	return k;
}

static void test_kernel_fields(void **state)
{
	struct gt_cupti_conv *c = *state;
	const char *name = "_Z6vecAddPfS_S_i";
	CUpti_ActivityKernel10 k = kernel_rec(name);
	struct gt_gpu_kernel *r = OUT;
	int n = conv(c, &k);
	size_t len = strlen(name) + 1;

	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + len));
	check_hdr(&r->hdr, GT_REC_GPU_KERNEL, 1000000, 0, n);
	assert_int_equal(r->dur, 2500);
	assert_int_equal(r->launch_ts, 0);
	assert_int_equal(r->correlation, 99);
	assert_int_equal(r->device, 1);
	assert_int_equal(r->context, 7);
	assert_int_equal(r->stream, 13);
	assert_int_equal(r->grid[0], 128);
	assert_int_equal(r->grid[1], 2);
	assert_int_equal(r->grid[2], 1);
	assert_int_equal(r->block[0], 256);
	assert_int_equal(r->block[1], 1);
	assert_int_equal(r->block[2], 1);
	assert_int_equal(r->shmem, 1024 + 4096);
	assert_int_equal(r->flags, 0);
	assert_int_equal(r->len, len);
	assert_string_equal(r->name, name);
	check_padding(r, sizeof(*r) + len);
	assert_int_equal(gt_cupti_conv__records(c), 1);
	assert_int_equal(gt_cupti_conv__unknown(c), 0);
}

/* A kernel a CUDA graph ran: the graph part after the name's padding, with
 * its node; what the merger fills left 0. */
static void test_kernel_graph(void **state)
{
	struct gt_cupti_conv *c = *state;
	const char *name = "_Z4attnv";
	CUpti_ActivityKernel10 k = kernel_rec(name);
	struct gt_gpu_kernel *r = OUT;
	size_t len = strlen(name) + 1;
	const struct gt_gpu_graph *gr;
	int n;

	k.graphNodeId = 0x123456789ull;
	k.graphId = 3;
	n = conv(c, &k);
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + len) + sizeof(struct gt_gpu_graph));
	assert_int_equal(r->hdr.size, n);
	assert_int_equal(r->flags, GT_GPU_GRAPH);
	assert_string_equal(r->name, name);
	gr = gt_gpu_kernel__graph(r);
	assert_non_null(gr);
	assert_ptr_equal(gr, (const char *)r + n - sizeof(*gr));
	assert_int_equal(gr->node, 0x123456789ull);
	assert_int_equal(gr->capture_ts, 0);
	assert_int_equal(gr->capture_tid, 0);
	assert_int_equal(gr->stack, 0);
	/* a record too short for its graph part has none */
	r->hdr.size = (__u16)GT_REC_ALIGN(sizeof(*r) + len);
	assert_null(gt_gpu_kernel__graph(r));
	/* nor has a kernel without the flag */
	k.graphNodeId = 0;
	n = conv(c, &k);
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + len));
	assert_null(gt_gpu_kernel__graph(r));
}

static void test_graph_node_record(void **state)
{
	struct gt_gpu_graph_node *r = OUT;
	size_t n;

	(void)state;
	n = gt_cupti_conv__graph_node(PID, 43, 5000, 11, 1, 3, GT_GRAPH_NODE_CLONED, OUT);
	assert_int_equal(n, sizeof(*r));
	check_hdr(&r->hdr, GT_REC_GPU_GRAPH_NODE, 5000, 43, (int)n);
	assert_int_equal(r->node, 11);
	assert_int_equal(r->original, 1);
	assert_int_equal(r->graph, 3);
	assert_int_equal(r->flags, GT_GRAPH_NODE_CLONED);
}

static void test_kernel_edge_values(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityKernel10 k = kernel_rec(NULL);
	struct gt_gpu_kernel *r = OUT;
	int n;

	/* the serializing kind (only another client would enable it) converts the same */
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	k.end = k.start - 1;		/* clocks that disagree: no negative duration */
	k.gridY = -3;			/* nonsense from a corrupt record: 0, not 4 billion */
	k.staticSharedMemory = -1;
	n = conv(c, &k);
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + 1));
	assert_int_equal(r->hdr.type, GT_REC_GPU_KERNEL);
	assert_int_equal(r->dur, 0);
	assert_int_equal(r->grid[1], 0);
	assert_int_equal(r->shmem, 4096);
	assert_int_equal(r->len, 1);	/* no name: "" */
	assert_string_equal(r->name, "");
	check_padding(r, sizeof(*r) + 1);

	/* still running at a forced flush: a start, no end */
	k = kernel_rec("k");
	k.end = 0;
	n = conv(c, &k);
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + 2));
	assert_int_equal(r->hdr.ts, k.start);
	assert_int_equal(r->dur, 0);
	assert_int_equal(gt_cupti_conv__records(c), 2);
}

/* Records without a start time (CUPTI could not collect it) cannot go on a
 * timeline: not converted, counted. */
static void test_no_timestamps(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityKernel10 k = kernel_rec("k");
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemcpyPtoP4 p;
	CUpti_ActivityMemset4 s;
	CUpti_ActivityAPI a;

	k.start = k.end = 0;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.bytes = 8;
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.correlationId = 5;
	assert_int_equal(conv(c, &k), 0);
	assert_int_equal(conv(c, &m), 0);
	assert_int_equal(conv(c, &p), 0);
	assert_int_equal(conv(c, &s), 0);
	assert_int_equal(conv(c, &a), 0);
	assert_int_equal(gt_cupti_conv__records(c), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 5);
}

static void test_kernel_name_truncated(void **state)
{
	struct gt_cupti_conv *c = *state;
	char *name = malloc(GT_STR_MAX + 1000);
	struct gt_gpu_kernel *r = OUT;
	CUpti_ActivityKernel10 k;
	int n;

	assert_non_null(name);
	memset(name, 'x', GT_STR_MAX + 999);
	name[GT_STR_MAX + 999] = '\0';
	k = kernel_rec(name);
	n = conv(c, &k);
	assert_int_equal(r->len, GT_STR_MAX);
	assert_int_equal(strlen(r->name), GT_STR_MAX - 1);
	assert_int_equal(r->name[GT_STR_MAX - 1], '\0');
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + GT_STR_MAX));
	assert_true((size_t)n <= GT_CUPTI_REC_MAX);
	check_padding(r, sizeof(*r) + GT_STR_MAX);

	/* exactly GT_STR_MAX - 1 characters: kept whole */
	name[GT_STR_MAX - 1] = '\0';
	n = conv(c, &k);
	assert_int_equal(r->len, GT_STR_MAX);
	assert_int_equal(strlen(r->name), GT_STR_MAX - 1);

	/* one more: cut to the same */
	name[GT_STR_MAX - 1] = 'y';
	name[GT_STR_MAX] = '\0';
	n = conv(c, &k);
	assert_int_equal(r->len, GT_STR_MAX);
	assert_int_equal(r->name[GT_STR_MAX - 2], 'x');
	assert_int_equal(r->name[GT_STR_MAX - 1], '\0');
	free(name);
}

/* ------------------------------------------------------------ copies and sets */

static CUpti_ActivityMemcpy6 memcpy_rec(uint8_t kind)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = kind;
	m.bytes = 1ull << 33;	/* above 32 bits: the field is 64-bit end to end */
	m.start = 5000;
	m.end = 9000;
	m.deviceId = 2;
	m.contextId = 3;
	m.streamId = 4;
	m.correlationId = 77;
	m.runtimeCorrelationId = 66;
	m.copyCount = 1;
	return m;
}

static void test_memcpy_fields(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMemcpy6 m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	struct gt_gpu_copy *r = OUT;
	int n = conv(c, &m);

	assert_int_equal(n, sizeof(*r));
	check_hdr(&r->hdr, GT_REC_GPU_MEMCPY, 5000, 0, n);
	assert_int_equal(r->dur, 4000);
	assert_int_equal(r->launch_ts, 0);
	assert_int_equal(r->bytes, 1ull << 33);
	assert_int_equal(r->correlation, 77);	/* the driver's, not the runtime's */
	assert_int_equal(r->device, 2);
	assert_int_equal(r->context, 3);
	assert_int_equal(r->stream, 4);
	assert_int_equal(r->kind, GT_COPY_HTOD);
	assert_int_equal(r->flags, 0);
	assert_int_equal(r->_pad, 0);
}

static void test_memcpy_kinds(void **state)
{
	static const struct {
		uint8_t cupti;
		unsigned gt;
	} map[] = {
		{ CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, GT_COPY_UNKNOWN },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, GT_COPY_HTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, GT_COPY_DTOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, GT_COPY_HTOA },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, GT_COPY_ATOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, GT_COPY_ATOA },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, GT_COPY_ATOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, GT_COPY_DTOA },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, GT_COPY_DTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, GT_COPY_HTOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, GT_COPY_PTOP },
		{ 11, GT_COPY_UNKNOWN },	/* a later CUPTI's kind */
		{ 255, GT_COPY_UNKNOWN },
	};
	struct gt_cupti_conv *c = *state;
	struct gt_gpu_copy *r = OUT;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		CUpti_ActivityMemcpy6 m = memcpy_rec(map[i].cupti);

		assert_int_equal(gt_cupti_copy_kind(map[i].cupti), map[i].gt);
		assert_int_equal(conv(c, &m), sizeof(*r));
		assert_int_equal(r->kind, map[i].gt);
	}
	assert_int_equal(gt_cupti_copy_kind(0x7fffffff), GT_COPY_UNKNOWN);
	assert_int_equal(gt_cupti_conv__records(c), sizeof(map) / sizeof(map[0]));
}

static void test_memcpy_peer(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMemcpyPtoP4 m;
	struct gt_gpu_copy *r = OUT;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.bytes = 65536;
	m.start = 100;
	m.end = 350;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 9;
	m.srcDeviceId = 1;
	m.srcContextId = 2;
	m.dstDeviceId = 0;
	m.dstContextId = 1;
	m.correlationId = 123;
	assert_int_equal(conv(c, &m), sizeof(*r));
	check_hdr(&r->hdr, GT_REC_GPU_MEMCPY, 100, 0, sizeof(*r));
	assert_int_equal(r->dur, 250);
	assert_int_equal(r->bytes, 65536);
	assert_int_equal(r->kind, GT_COPY_PTOP);
	assert_int_equal(r->device, 1);		/* the source device */
	assert_int_equal(r->context, 1);	/* where it was issued: stream ids live there */
	assert_int_equal(r->stream, 9);
	assert_int_equal(r->correlation, 123);
}

static void test_memset_fields(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMemset4 m;
	struct gt_gpu_copy *r = OUT;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0xff;
	m.bytes = 4096;
	m.start = 7000;
	m.end = 7100;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 14;
	m.correlationId = 55;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	assert_int_equal(conv(c, &m), sizeof(*r));
	check_hdr(&r->hdr, GT_REC_GPU_MEMSET, 7000, 0, sizeof(*r));
	assert_int_equal(r->dur, 100);
	assert_int_equal(r->bytes, 4096);
	assert_int_equal(r->kind, 0);
	assert_int_equal(r->correlation, 55);
	assert_int_equal(r->device, 0);
	assert_int_equal(r->context, 1);
	assert_int_equal(r->stream, 14);
	assert_int_equal(r->launch_ts, 0);
	assert_int_equal(r->flags, 0);
}

/* ------------------------------------------------------------ API records */

static CUpti_ActivityAPI api_rec(CUpti_ActivityKind kind)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	a.start = 800;
	a.end = 1900;
	a.processId = PID;
	a.threadId = 4250;
	a.correlationId = 99;
	return a;
}

static void test_driver_api(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_DRIVER);
	struct gt_gpu_api *r = OUT;

	assert_int_equal(conv(c, &a), sizeof(*r));
	check_hdr(&r->hdr, GT_REC_GPU_API, 800, 4250, sizeof(*r));
	assert_int_equal(r->dur, 1100);
	assert_int_equal(r->correlation, 99);
	assert_int_equal(r->cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);

	/* runtime API records (never enabled) are not joined: counted unknown */
	a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME);
	assert_int_equal(conv(c, &a), 0);
	assert_int_equal(gt_cupti_conv__records(c), 1);
	assert_int_equal(gt_cupti_conv__unknown(c), 1);
}

/* ------------------------------------------------------------ NVTX */

static CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts, const char *name,
				   uint32_t tid)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = PID;
	m.objectId.pt.threadId = tid;
	m.name = name;
	return m;
}

#define M_START CUPTI_ACTIVITY_FLAG_MARKER_START
#define M_END CUPTI_ACTIVITY_FLAG_MARKER_END
#define M_INST CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS

static void check_nvtx(int n, __u32 id, __u64 ts, __u64 dur, __u32 tid, const char *name)
{
	const struct gt_nvtx *r = OUT;
	size_t len = strlen(name) + 1;

	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + len));
	check_hdr(&r->hdr, GT_REC_NVTX, ts, tid, n);
	assert_int_equal(r->dur, dur);
	assert_int_equal(r->id, id);
	assert_int_equal(r->len, len);
	assert_int_equal(r->_pad, 0);
	assert_string_equal(r->name, name);
	check_padding(r, sizeof(*r) + len);
}

static void test_nvtx_mark(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 m = marker(M_INST, 5, 1234, "checkpoint", 4251);

	check_nvtx(conv(c, &m), 5, 1234, 0, 4251, "checkpoint");
	/* a process-wide marker has no thread */
	m.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
	m.name = NULL;
	check_nvtx(conv(c, &m), 5, 1234, 0, 0, "");
	assert_int_equal(gt_cupti_conv__records(c), 2);
}

static void test_nvtx_pair(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 s = marker(M_START, 10, 1000, "epoch", 4251);
	CUpti_ActivityMarker2 e = marker(M_END, 10, 6000, NULL, 4251);

	assert_int_equal(conv(c, &s), 0);	/* waits for its end */
	assert_int_equal(gt_cupti_conv__records(c), 0);
	check_nvtx(conv(c, &e), 10, 1000, 5000, 4251, "epoch");
	assert_int_equal(gt_cupti_conv__records(c), 2);
	/* paired once: a second end finds nothing and waits */
	assert_int_equal(conv(c, &e), 0);
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, ROOM), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 1);
}

static void test_nvtx_nested_and_interleaved(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 s1 = marker(M_START, 1, 100, "outer", 1);
	CUpti_ActivityMarker2 s2 = marker(M_START, 2, 200, "inner", 1);
	CUpti_ActivityMarker2 s3 = marker(M_START, 3, 250, "other thread", 2);
	CUpti_ActivityMarker2 e2 = marker(M_END, 2, 300, NULL, 1);
	CUpti_ActivityMarker2 e1 = marker(M_END, 1, 900, NULL, 1);
	CUpti_ActivityMarker2 e3 = marker(M_END, 3, 950, NULL, 2);

	assert_int_equal(conv(c, &s1), 0);
	assert_int_equal(conv(c, &s2), 0);
	assert_int_equal(conv(c, &s3), 0);
	check_nvtx(conv(c, &e2), 2, 200, 100, 1, "inner");
	check_nvtx(conv(c, &e1), 1, 100, 800, 1, "outer");
	check_nvtx(conv(c, &e3), 3, 250, 700, 2, "other thread");
	assert_int_equal(gt_cupti_conv__records(c), 6);
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, ROOM), 0);
}

/* Another thread's buffer may complete first: the end waits for its start. */
static void test_nvtx_end_before_start(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 e = marker(M_END, 42, 5000, NULL, 7);
	CUpti_ActivityMarker2 s = marker(M_START, 42, 2000, "request", 8);

	assert_int_equal(conv(c, &e), 0);
	check_nvtx(conv(c, &s), 42, 2000, 3000, 8, "request");
	assert_int_equal(gt_cupti_conv__records(c), 2);
	assert_int_equal(gt_cupti_conv__unknown(c), 0);
}

static void test_nvtx_drain_open(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 s1 = marker(M_START, 1, 100, "still open", 3);
	CUpti_ActivityMarker2 s2 = marker(M_START, 2, 200, "also open", 4);
	CUpti_ActivityMarker2 e9 = marker(M_END, 9, 300, NULL, 3);
	const struct gt_nvtx *r = OUT;
	int n, seen = 0, mask = 0;

	assert_int_equal(conv(c, &s1), 0);
	assert_int_equal(conv(c, &s2), 0);
	assert_int_equal(conv(c, &e9), 0);
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, 16), -ENOSPC);
	memset(outbuf, 0xa5, sizeof(outbuf));
	while ((n = gt_cupti_conv__drain_open(c, OUT, ROOM)) > 0) {
		seen++;
		if (r->id == 1)
			check_nvtx(n, 1, 100, 0, 3, "still open");
		else
			check_nvtx(n, 2, 200, 0, 4, "also open");
		mask |= 1 << r->id;
		memset(outbuf, 0xa5, sizeof(outbuf));
	}
	assert_int_equal(n, 0);
	assert_int_equal(seen, 2);
	assert_int_equal(mask, 6);
	assert_int_equal(gt_cupti_conv__records(c), 2);
	assert_int_equal(gt_cupti_conv__unknown(c), 1);	/* the end without a start */

	/* the table is usable again */
	assert_int_equal(conv(c, &s1), 0);
	e9 = marker(M_END, 1, 150, NULL, 3);
	check_nvtx(conv(c, &e9), 1, 100, 50, 3, "still open");
}

static void test_nvtx_odd_markers(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityMarker2 sync = marker(CUPTI_ACTIVITY_FLAG_MARKER_SYNC_ACQUIRE, 3, 10, "mutex", 1);
	CUpti_ActivityMarker2 s1 = marker(M_START, 4, 100, "first", 1);
	CUpti_ActivityMarker2 s2 = marker(M_START, 4, 200, "second", 1);
	CUpti_ActivityMarker2 e = marker(M_END, 4, 500, NULL, 1);

	assert_int_equal(conv(c, &sync), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 1);
	/* an id started twice: the older start becomes a mark, the newer pairs */
	assert_int_equal(conv(c, &s1), 0);
	check_nvtx(conv(c, &s2), 4, 100, 0, 1, "first");
	check_nvtx(conv(c, &e), 4, 200, 300, 1, "second");
	assert_int_equal(gt_cupti_conv__records(c), 3);
}

static void test_nvtx_long_name(void **state)
{
	struct gt_cupti_conv *c = *state;
	char *name = malloc(2 * GT_STR_MAX);
	const struct gt_nvtx *r = OUT;
	CUpti_ActivityMarker2 s, e;
	int n;

	assert_non_null(name);
	memset(name, 'n', 2 * GT_STR_MAX - 1);
	name[2 * GT_STR_MAX - 1] = '\0';
	s = marker(M_START, 8, 10, name, 1);
	e = marker(M_END, 8, 20, NULL, 1);
	assert_int_equal(conv(c, &s), 0);
	memset(name, 'z', 2 * GT_STR_MAX - 1);	/* the start's name was copied */
	n = conv(c, &e);
	assert_int_equal(n, GT_REC_ALIGN(sizeof(*r) + GT_STR_MAX));
	assert_int_equal(r->len, GT_STR_MAX);
	assert_int_equal(strlen(r->name), GT_STR_MAX - 1);
	assert_int_equal(r->name[0], 'n');
	check_padding(r, sizeof(*r) + GT_STR_MAX);

	s = marker(M_INST, 9, 10, name, 1);
	n = conv(c, &s);
	assert_int_equal(r->len, GT_STR_MAX);
	assert_int_equal(r->name[GT_STR_MAX - 2], 'z');
	assert_int_equal(r->name[GT_STR_MAX - 1], '\0');
	free(name);
}

/* More open ranges than the table holds: the overflow start becomes a mark;
 * then many pairs closed in a scrambled order exercise the table's
 * deletion (entries shifted back over freed slots). */
static void test_nvtx_table_full_and_churn(void **state)
{
	struct gt_cupti_conv *c = *state;
	const struct gt_nvtx *r = OUT;
	CUpti_ActivityMarker2 m;
	uint32_t i, id;

	for (i = 0; i < GT_CUPTI_NVTX_OPEN_MAX; i++) {
		m = marker(M_START, i * 1024 + 7, 1000 + i, "r", 1);	/* ids colliding in low bits */
		assert_int_equal(conv(c, &m), 0);
	}
	m = marker(M_START, 999999, 5, "overflow", 1);
	check_nvtx(conv(c, &m), 999999, 5, 0, 1, "overflow");
	/* an end without a start while full: nowhere to wait, not converted */
	m = marker(M_END, 888888, 6, NULL, 1);
	assert_int_equal(conv(c, &m), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 1);

	/* close all in a scrambled order (odd multiplier: a permutation) */
	for (i = 0; i < GT_CUPTI_NVTX_OPEN_MAX; i++) {
		uint32_t k = (i * 389u) % GT_CUPTI_NVTX_OPEN_MAX;

		id = k * 1024 + 7;
		m = marker(M_END, id, 1000 + k + 10 * (k + 1), NULL, 1);
		assert_true(conv(c, &m) > 0);
		assert_int_equal(r->id, id);
		assert_int_equal(r->hdr.ts, 1000 + k);
		assert_int_equal(r->dur, 10 * (k + 1));
	}
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, ROOM), 0);
	assert_int_equal(gt_cupti_conv__records(c), 1 + 2 * GT_CUPTI_NVTX_OPEN_MAX);

	/* churn: keep ~300 open, pair each after a while */
	for (i = 0; i < 20000; i++) {
		m = marker(M_START, i, 2 * i, "c", 1);
		assert_int_equal(conv(c, &m), 0);
		if (i >= 300) {
			id = i - 300;
			m = marker(M_END, id, 2 * id + 3, NULL, 1);
			assert_true(conv(c, &m) > 0);
			assert_int_equal(r->id, id);
			assert_int_equal(r->dur, 3);
		}
	}
	for (i = 0; i < 300; i++) {
		assert_true(gt_cupti_conv__drain_open(c, OUT, ROOM) > 0);
		assert_true(r->id >= 20000 - 300);
	}
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, ROOM), 0);
}

/* ------------------------------------------------------------ the rest */

static void test_unknown_kinds(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityName nm;
	CUpti_Activity a;

	memset(&nm, 0, sizeof(nm));
	nm.kind = CUPTI_ACTIVITY_KIND_NAME;
	nm.name = "device 0";
	assert_int_equal(conv(c, &nm), 0);
	a.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	assert_int_equal(conv(c, &a), 0);
	a.kind = (CUpti_ActivityKind)0x7ffffff0;	/* a kind of a later CUPTI */
	assert_int_equal(conv(c, &a), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 3);
	assert_int_equal(gt_cupti_conv__records(c), 0);
}

static void test_errors(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityKernel10 k = kernel_rec("k");
	CUpti_ActivityMarker2 s = marker(M_START, 1, 1, "x", 1);

	assert_int_equal(gt_cupti_conv__record(c, NULL, OUT, ROOM), -EINVAL);
	/* too little room, even for a small record: nothing consumed */
	assert_int_equal(gt_cupti_conv__record(c, (const CUpti_Activity *)&k, OUT, GT_CUPTI_REC_MAX - 1),
			 -ENOSPC);
	assert_int_equal(gt_cupti_conv__record(c, (const CUpti_Activity *)&s, OUT, 64), -ENOSPC);
	assert_int_equal(gt_cupti_conv__records(c), 0);
	assert_int_equal(gt_cupti_conv__unknown(c), 0);
	assert_int_equal(gt_cupti_conv__drain_open(c, OUT, ROOM), 0);
}

static void test_stats_record(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityKernel10 k = kernel_rec("k");
	struct gt_cupti_conv_extra x = { .dropped = 17, .buffers = 5, .clock_offset_ns = 120 };
	struct gt_cupti_stats *r = OUT;
	CUpti_Activity a = { .kind = CUPTI_ACTIVITY_KIND_OVERHEAD };

	conv(c, &k);
	conv(c, &k);
	conv(c, &a);
	memset(outbuf, 0xa5, sizeof(outbuf));
	assert_int_equal(gt_cupti_conv__stats(c, 123456789, &x, OUT), sizeof(*r));
	check_hdr(&r->hdr, GT_REC_CUPTI_STATS, 123456789, 0, sizeof(*r));
	assert_int_equal(r->records, 2);
	assert_int_equal(r->unknown, 1);
	assert_int_equal(r->dropped, 17);
	assert_int_equal(r->buffers, 5);
	assert_int_equal(r->clock_offset_ns, 120);
}

/* The flush mark of live spooling: the records converted so far, at ts. */
static void test_mark_record(void **state)
{
	struct gt_cupti_conv *c = *state;
	CUpti_ActivityKernel10 k = kernel_rec("k");
	struct gt_cupti_mark *r = OUT;

	conv(c, &k);
	memset(outbuf, 0xa5, sizeof(outbuf));
	assert_int_equal(gt_cupti_conv__mark(c, 987654321, 4500, OUT), sizeof(*r));
	check_hdr(&r->hdr, GT_REC_CUPTI_MARK, 987654321, 0, sizeof(*r));
	assert_int_equal(r->records, 1);
	assert_int_equal(r->flush_ns, 4500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_edge_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_name_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_timestamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memcpy_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memcpy_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memcpy_peer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memset_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_driver_api, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_nested_and_interleaved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_end_before_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_drain_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_odd_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_long_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_table_full_and_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_graph, setup, teardown),
		cmocka_unit_test_setup_teardown(test_graph_node_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mark_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
