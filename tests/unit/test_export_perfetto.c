// SPDX-License-Identifier: MIT
/*
 * Unit tests of the Perfetto exporter (user/export/perfetto.c, pftrace.c,
 * protobuf.c): small traces written with trace_writer are exported and the
 * protobuf read back with pftrace_model.h, which also checks the rules
 * trace_processor relies on (each sequence starts by clearing its state,
 * timestamps never decrease along a sequence, interned ids are defined
 * before use, events name described tracks, slices nest per track); then
 * the tracks, names, nesting, arguments, instants, the clock snapshot, the
 * ordering repairs for lost exits, damaged input and write errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "export/export.h"
#include "export/perfetto/protobuf.h"
#include "format/trace_file.h"
#include "pftrace_model.h"
#include "merged_trace.h"
#include "test_util.h"

#define API(x) GT_API_##x
#define START_TS 500
#define REAL_OFF 1700000000000000000ll


/* ------------------------------------------------------------ trace building */

static void w_open_at(const char *path, uint64_t start_ts, int64_t real_off)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = start_ts,
		.realtime_offset_ns = real_off, .host = "testhost", .kernel = "6.18",
		.cmdline = "gtrace-bpf record", .options = "",
	};
	tu_w_create(path, &info);
}

static void w_open(const char *path)
{
	w_open_at(path, START_TS, REAL_OFF);
}

static void w_close(void)
{
	assert_int_equal(trace_writer__finish(W, NULL), 0);
	trace_writer__free(W);
	W = NULL;
}

static void w_put(void)
{
	tu_w_append(rbuf);
}

static void hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid, unsigned api)
{
	tu_hdr(type, size, ts, pid, tid, api, 1);
}

/* The process of the calls w_call, w_ret and w_launch write. */
static uint32_t w_pid = 100;

static void w_call(uint64_t ts, uint32_t tid, unsigned api, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct gt_call *c = (void *)rbuf;

	hdr(GT_REC_CALL, sizeof(*c), ts, w_pid, tid, api);
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	w_put();
}

static void w_ret(uint64_t ts, uint32_t tid, unsigned api, int32_t ret)
{
	struct gt_ret *r = (void *)rbuf;

	hdr(GT_REC_RET, sizeof(*r), ts, w_pid, tid, api);
	r->ret = ret;
	w_put();
}

static void w_launch(uint64_t ts, uint32_t tid, uint64_t func)
{
	struct gt_launch *l = (void *)rbuf;

	hdr(GT_REC_LAUNCH, sizeof(*l), ts, w_pid, tid, API(cuLaunchKernel));
	l->func = func;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	w_put();
}

static void w_name(uint64_t ts, uint16_t kind, uint64_t key, const char *s)
{
	struct gt_name *nm = (void *)rbuf;
	size_t n = strlen(s) + 1;

	hdr(GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), ts, 100, 0, 0);
	nm->key = key;
	nm->kind = kind;
	nm->len = (uint16_t)n;
	memcpy(nm->str, s, n);
	w_put();
}

static void w_proc(uint16_t type, uint64_t ts, uint32_t pid, const char *comm, int32_t code)
{
	struct gt_proc_evt *p = (void *)rbuf;

	hdr(type, sizeof(*p), ts, pid, pid, 0);
	p->ppid = 1;
	p->exit_code = code;
	memcpy(p->comm, comm, strlen(comm));
	w_put();
}

#define CALL_RET(ts, end, tid, api) do { w_call(ts, tid, API(api), 0, 0, 0); \
		w_ret(end, tid, API(api), 0); } while (0)

/* Exports path into m; returns export_perfetto__write's result. */
static int export_file(const char *path, struct model *m, const char **why)
{
	struct trace_reader *r;
	const char *msg;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = tu_memstream(&buf, &len);
	int rc;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	rc = export_perfetto__write(r, out, why);
	assert_int_equal(fclose(out), 0);
	trace_reader__close(r);
	if (rc == 0)
		model_read(m, (const uint8_t *)buf, len);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------ tests */

static void test_encoder(void **state)
{
	struct pb_buf b;
	char body[300];

	(void)state;
	assert_int_equal(pb_buf__init(&b, 0), 0);
	pb_buf__varint(&b, 1, 300);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.b, "\x08\xac\x02", 3);
	b.len = 0;
	pb_buf__int(&b, 4, -1);		/* sign-extended: ten bytes */
	assert_int_equal(b.len, 11);
	assert_int_equal(b.b[10], 0x01);
	b.len = 0;
	pb_buf__fixed64(&b, 47, 0x0102030405060708ull);
	assert_memory_equal(b.b, "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10);
	b.len = 0;
	/* a nested message of 300 bytes: its length takes two bytes, the body moves */
	memset(body, 'x', sizeof(body));
	{
		size_t outer = pb_buf__begin(&b, 1), inner = pb_buf__begin(&b, 2);

		pb_buf__bytes(&b, 3, body, sizeof(body));
		pb_buf__end(&b, inner);
		pb_buf__varint(&b, 4, 1);
		pb_buf__end(&b, outer);
	}
	/* 1: [2: [3: 300 bytes]] [4: 1]: inner 3 + 303 bytes, outer 306 + 2 for field 4 */
	assert_memory_equal(b.b, "\x0a\xb4\x02\x12\xaf\x02\x1a\xac\x02xx", 11);
	assert_int_equal(b.len, 3 + 3 + 3 + 300 + 2);
	assert_memory_equal(b.b + b.len - 2, "\x20\x01", 2);
	pb_buf__free(&b);
}

/* Tracks, names, the clock snapshot, nesting and the arguments of a launch. */
static void test_tracks_and_slices(void **state)
{
	const char *path = tmp_path("nest.gtrace");
	const struct trk *proc, *t1, *t2;
	struct ev **v;
	const struct ann *a;
	struct model m;
	const char *why = "x";
	int n;

	(void)state;
	w_open(path);
	w_name(600, GT_NAME_PROCESS, 100, "app --flag");
	w_name(600, GT_NAME_THREAD, 101, "main-thread");
	w_name(600, GT_NAME_THREAD, 102, "worker");
	w_name(600, GT_NAME_KERNEL_MEM, 0x7000, "_Z6vecAddPfS_S_i");
	/* thread 101: ctx sync [1000, 9000] holding a launch and a copy that
	 * holds an allocation (libcuda calling its own exported functions),
	 * exits in completion order; thread 102 interleaved */
	w_call(1000, 101, API(cuCtxSynchronize_v2), 5, 0, 0);
	w_launch(2000, 101, 0x7000);
	w_call(2500, 102, API(cuStreamSynchronize), 7, 0, 0);
	w_ret(3000, 101, API(cuLaunchKernel), 0);
	w_call(4000, 101, API(cuMemcpyHtoD_v2), 0x1000, 0x2000, 4096);
	w_call(4100, 101, API(cuMemAlloc_v2), 0x3000, 64, 0);
	w_ret(4200, 101, API(cuMemAlloc_v2), 2);
	w_ret(5000, 101, API(cuMemcpyHtoD_v2), 0);
	w_ret(6000, 102, API(cuStreamSynchronize), 0);
	/* zero-length parent and child at the same instant */
	w_call(8000, 101, API(cuEventRecord), 9, 7, 0);
	w_call(8000, 101, API(cuEventQuery), 9, 0, 0);
	w_ret(8000, 101, API(cuEventQuery), 0);
	w_ret(8000, 101, API(cuEventRecord), 0);
	w_ret(9000, 101, API(cuCtxSynchronize_v2), 0);
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	assert_null(why);
	/* the clock snapshot: MONOTONIC is the trace clock, REALTIME beside it */
	assert_int_equal(m.primary, 3);
	assert_int_equal(m.clk[3], START_TS);
	assert_int_equal(m.clk[1], START_TS + REAL_OFF);
	assert_int_equal(m.defaults_ok, m.nseq);
	/* clock, process, two threads */
	assert_int_equal(m.nseq, 4);
	proc = find_track(&m, 'p', 100);
	assert_int_equal(proc->pid, 100);
	assert_string_equal(proc->name, "app --flag");
	t1 = find_track(&m, 't', 101);
	t2 = find_track(&m, 't', 102);
	assert_string_equal(t1->name, "main-thread");
	assert_string_equal(t2->name, "worker");
	assert_int_equal(t1->pid, 100);
	assert_int_equal(t1->parent, proc->uuid);
	assert_int_equal(t2->parent, proc->uuid);
	assert_int_equal(count_type(&m, 1), 7);
	assert_int_equal(count_type(&m, 2), 7);
	assert_int_equal(count_type(&m, 3), 0);

	v = track_events(&m, t1->uuid, &n);
	{
		static const struct { int type; uint64_t ts; const char *name; } want[] = {
			{ 1, 1000, "cuCtxSynchronize_v2" }, { 1, 2000, "vecAdd(float*, float*, float*, int)" },
			{ 2, 3000, "" }, { 1, 4000, "cuMemcpyHtoD_v2" }, { 1, 4100, "cuMemAlloc_v2" },
			{ 2, 4200, "" }, { 2, 5000, "" }, { 1, 8000, "cuEventRecord" },
			{ 1, 8000, "cuEventQuery" }, { 2, 8000, "" }, { 2, 8000, "" }, { 2, 9000, "" },
		};

		assert_int_equal(n, 12);
		for (int i = 0; i < n; i++) {
			assert_int_equal(v[i]->type, want[i].type);
			assert_int_equal(v[i]->ts, want[i].ts);
			assert_string_equal(v[i]->name, want[i].name);
			/* one sequence per thread, in time order in the file too */
			assert_int_equal(v[i]->seq, v[0]->seq);
			if (i)
				assert_true(v[i]->pkt > v[i - 1]->pkt);
		}
	}
	/* the launch: demangled name, api and the rest as annotations */
	a = find_ann(v[1], "api");
	assert_non_null(a);
	assert_int_equal(a->field, 17);
	assert_string_equal(a->str, "cuLaunchKernel");
	a = find_ann(v[1], "mangled");
	assert_non_null(a);
	assert_string_equal(a->str, "_Z6vecAddPfS_S_i");
	a = find_ann(v[1], "grid");
	assert_non_null(a);
	assert_int_equal(a->narr, 3);
	assert_int_equal(a->arr[0], 64);
	assert_int_equal(a->arr[1], 1);
	a = find_ann(v[1], "block");
	assert_int_equal(a->arr[0], 256);
	a = find_ann(v[1], "stream");
	assert_int_equal(a->field, 7);
	assert_int_equal(a->v, 7);
	a = find_ann(v[1], "failed");
	assert_int_equal(a->field, 2);
	assert_int_equal(a->v, 0);
	/* a copy: bytes, kind; a failed allocation: ret, failed */
	assert_int_equal(find_ann(v[3], "bytes")->v, 4096);
	assert_string_equal(find_ann(v[3], "kind")->str, "HtoD");
	assert_int_equal(find_ann(v[4], "ret")->v, 2);
	assert_int_equal(find_ann(v[4], "failed")->v, 1);
	free(v);

	v = track_events(&m, t2->uuid, &n);
	assert_int_equal(n, 2);
	assert_int_equal(v[0]->ts, 2500);
	assert_int_equal(v[1]->ts, 6000);
	assert_int_equal(find_ann(v[0], "stream")->v, 7);
	free(v);
	model_free(&m);
}

/* Calls whose exit never came are instants; process events are instants on
 * the process track; a rename describes the track again. */
static void test_instants_and_process_events(void **state)
{
	const char *path = tmp_path("proc.gtrace");
	const struct trk *proc, *t1;
	struct model m;
	const char *why;
	struct ev **v;
	int n, last;

	(void)state;
	w_open(path);
	w_proc(GT_REC_EXEC, 1000, 100, "app", 0);
	CALL_RET(2000, 2100, 100, cuInit);
	w_proc(GT_REC_FORK, 2500, 300, "app", 0);
	/* open when the process exits: written as incomplete instants */
	w_call(3000, 100, API(cuStreamSynchronize), 7, 0, 0);
	w_call(3100, 100, API(cuMemAlloc_v2), 0x3000, 64, 0);
	w_proc(GT_REC_EXIT, 4000, 100, "app", 256);
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	proc = find_track(&m, 'p', 100);
	assert_string_equal(proc->name, "app");
	find_track(&m, 'p', 300);
	t1 = find_track(&m, 't', 100);
	assert_int_equal(count_type(&m, 1), 1);
	assert_int_equal(count_type(&m, 3), 5);

	v = track_events(&m, t1->uuid, &n);
	assert_int_equal(n, 4);
	last = v[3]->pkt;
	assert_int_equal(v[2]->type, 3);
	assert_int_equal(v[2]->ts, 3000);
	assert_string_equal(v[2]->name, "cuStreamSynchronize");
	assert_int_equal(find_ann(v[2], "incomplete")->v, 1);
	assert_null(find_ann(v[2], "ret"));
	assert_int_equal(v[3]->ts, 3100);
	free(v);

	v = track_events(&m, proc->uuid, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0]->name, "exec");
	assert_string_equal(v[1]->name, "exit");
	assert_int_equal(find_ann(v[1], "exit_code")->v, 256);
	assert_int_equal(find_ann(v[1], "ppid")->v, 1);
	assert_string_equal(find_ann(v[1], "comm")->str, "app");
	/* the calls it left open are written before its end */
	assert_true(v[1]->pkt > last);
	free(v);
	v = track_events(&m, find_track(&m, 'p', 300)->uuid, &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->name, "fork");
	free(v);
	model_free(&m);
}

/* Each process (pid lifetime) has one ProcessDescriptor, written when
 * first needed with the name and command line known then: exec, the
 * command line (GT_NAME_PROCESS) and a fork come before any call, and a
 * child's exec renames it, without a second descriptor of either. */
static void test_one_process_descriptor(void **state)
{
	const char *path = tmp_path("pdesc.gtrace");
	const struct trk *p1, *p2, *p3;
	struct model m;
	const char *why;
	struct ev **v;
	int n;

	(void)state;
	w_open(path);
	w_proc(GT_REC_EXEC, 1000, 100, "app", 0);
	w_name(1010, GT_NAME_PROCESS, 100, "app --flag x");
	w_proc(GT_REC_FORK, 1500, 300, "app", 0);
	w_proc(GT_REC_EXEC, 1600, 300, "tool", 0);
	w_name(1610, GT_NAME_PROCESS, 300, "tool -v");
	/* a process that never calls: described at the end */
	w_proc(GT_REC_FORK, 1700, 400, "app", 0);
	CALL_RET(2000, 2100, 100, cuInit);
	w_pid = 300;
	CALL_RET(2200, 2300, 300, cuInit);
	w_pid = 100;
	w_proc(GT_REC_EXIT, 4000, 100, "app", 0);
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	p1 = find_track(&m, 'p', 100);
	p2 = find_track(&m, 'p', 300);
	p3 = find_track(&m, 'p', 400);
	assert_int_equal(p1->ndesc, 1);
	assert_int_equal(p2->ndesc, 1);
	assert_int_equal(p3->ndesc, 1);
	assert_string_equal(p1->name, "app --flag x");
	assert_string_equal(p1->cmdline, "app --flag x");
	assert_int_equal(p1->ncmdline, 1);
	assert_string_equal(p2->name, "tool -v");
	assert_string_equal(p2->cmdline, "tool -v");
	/* its parent (ppid 1) unknown: the comm, no command line */
	assert_string_equal(p3->name, "app");
	assert_int_equal(p3->ncmdline, 0);
	assert_int_equal(find_track(&m, 't', 300)->parent, p2->uuid);

	v = track_events(&m, p1->uuid, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0]->name, "exec");
	assert_string_equal(v[1]->name, "exit");
	free(v);
	v = track_events(&m, p2->uuid, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0]->name, "fork");
	assert_int_equal(v[0]->ts, 1500);
	assert_string_equal(v[1]->name, "exec");
	assert_int_equal(v[1]->ts, 1600);
	free(v);
	v = track_events(&m, p3->uuid, &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->name, "fork");
	free(v);
	model_free(&m);
}

/* Names are interned once per sequence that uses them, shared ids. */
static void test_interning(void **state)
{
	const char *path = tmp_path("intern.gtrace");
	struct model m;
	const char *why;
	int defs = 0, uses = 0;

	(void)state;
	w_open(path);
	w_name(600, GT_NAME_KERNEL_MEM, 0x7000, "_Z6vecAddPfS_S_i");
	for (int i = 0; i < 10; i++) {
		w_launch(1000 + i * 100, 101 + i % 2, 0x7000);
		w_ret(1050 + i * 100, 101 + i % 2, API(cuLaunchKernel), 0);
	}
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	for (int i = 0; i < m.nint; i++)
		defs += m.in[i].kind == K_EVENT &&
			!strcmp(m.in[i].name, "vecAdd(float*, float*, float*, int)");
	for (int i = 0; i < m.nev; i++)
		uses += !strcmp(m.ev[i].name, "vecAdd(float*, float*, float*, int)");
	assert_int_equal(defs, 2);	/* one per thread sequence */
	assert_int_equal(uses, 10);
	model_free(&m);
}

/* An entry whose exit was lost does not make a thread buffer the rest of
 * the trace: its later calls are written, and everything stays ordered. */
static void test_lost_exit(void **state)
{
	const char *path = tmp_path("lost.gtrace");
	const struct trk *t1;
	struct model m;
	const char *why;
	struct ev **v;
	int n, seqs_on_track = 0;
	uint32_t seen[8] = { 0 };

	(void)state;
	w_open(path);
	w_call(1000, 101, API(cuStreamSynchronize), 7, 0, 0);	/* its exit is lost */
	for (int i = 0; i < 2000; i++)
		CALL_RET(2000 + i * 10, 2005 + i * 10, 101, cuMemAlloc_v2);
	/* the parent of the next calls exits after they were written */
	w_call(30000, 101, API(cuCtxSynchronize_v2), 5, 0, 0);
	for (int i = 0; i < 600; i++)
		CALL_RET(30010 + i * 10, 30015 + i * 10, 101, cuEventQuery);
	w_ret(40000, 101, API(cuCtxSynchronize_v2), 0);
	CALL_RET(41000, 41005, 101, cuInit);
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	t1 = find_track(&m, 't', 101);
	v = track_events(&m, t1->uuid, &n);
	/* 2602 slices and the instant of the lost one */
	assert_int_equal(n, 2602 * 2 + 1);
	assert_int_equal(v[0]->type, 3);
	assert_int_equal(v[0]->ts, 1000);
	assert_string_equal(v[0]->name, "cuStreamSynchronize");
	/* the parent given up on still encloses its 600 children in time */
	for (int i = 0; i < n; i++)
		if (v[i]->ts == 30000) {
			assert_int_equal(v[i]->type, 1);
			assert_string_equal(v[i + 1]->name, "cuEventQuery");
		}
	for (int i = 0; i < n; i++) {
		int k;

		for (k = 0; k < seqs_on_track && seen[k] != v[i]->seq; k++)
			;
		if (k == seqs_on_track) {
			assert_true(k < 8);
			seen[seqs_on_track++] = v[i]->seq;
		}
	}
	/* the track's own sequence and late ones */
	assert_true(seqs_on_track >= 2);
	free(v);
	model_free(&m);
}

/* A file cut short exports what it holds; a failed write gives the reason. */
static void test_truncated_and_errors(void **state)
{
	const char *path = tmp_path("cut.gtrace");
	struct trace_reader *r;
	const char *msg, *why = NULL;
	struct model m;
	FILE *full;
	off_t size;
	int rc;

	(void)state;
	w_open(path);
	CALL_RET(1000, 1100, 101, cuInit);
	assert_int_equal(trace_writer__flush(W), 0);
	size = (off_t)trace_writer__bytes(W);
	CALL_RET(2000, 2100, 101, cuInit);
	w_close();
	assert_int_equal(truncate(path, size + 30), 0);

	assert_int_equal(export_file(path, &m, &why), 0);
	assert_int_equal(count_type(&m, 1), 1);
	assert_int_equal(count_type(&m, 2), 1);
	model_free(&m);

	full = fopen("/dev/full", "w");
	if (!full)
		skip();
	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	rc = export_perfetto__write(r, full, &why);
	assert_int_equal(rc, -ENOSPC);
	assert_non_null(why);
	assert_string_equal(why, "failed to write the output: No space left on device");
	assert_true(trace_reader__truncated(r));
	trace_reader__close(r);
	fclose(full);
}

/* The events of the model on track uuid that begin a slice named name. */
static int count_slices(const struct model *m, uint64_t track, const char *name)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		n += m->ev[i].track == track && m->ev[i].type == 1 && !strcmp(m->ev[i].name, name);
	return n;
}

static const struct ev *event_at(const struct model *m, uint64_t track, uint64_t ts, int type)
{
	for (int i = 0; i < m->nev; i++)
		if (m->ev[i].track == track && m->ev[i].ts == ts && m->ev[i].type == type)
			return &m->ev[i];
	fail_msg("no event of type %d at %llu on track %llu", type, (unsigned long long)ts,
		 (unsigned long long)track);
	return NULL;
}

static bool on_gpu_track(const struct model *m, const struct ev *e)
{
	for (int i = 0; i < m->ntrk; i++)
		if (m->trk[i].uuid == e->track)
			return !strncmp(m->trk[i].name, "GPU ", 4);
	return false;
}

/* A merged trace (merged_trace.h): a track per GPU stream under the process,
 * kernels, copies and sets as slices named for people, NVTX on a track of
 * its own, and an arrow from every linked record's call to it: each flow id
 * on exactly two events, one CPU, one GPU. */
static void test_gpu_tracks_and_flows(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	const struct trk *proc, *s7, *s8, *s9, *nv, *t101, *t102;
	const struct ev *e;
	const struct ann *a;
	const char *why;
	struct model m;
	uint64_t ids[16];
	int nids = 0, n, kernels = 0;
	struct ev **v;

	(void)state;
	mt_file(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	proc = find_track(&m, 'p', MT_PID);
	t101 = find_track(&m, 't', 101);
	t102 = find_track(&m, 't', 102);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	s8 = find_named_track(&m, "GPU 0 stream 8");
	s9 = find_named_track(&m, "GPU 0 stream 9");
	nv = find_named_track(&m, "NVTX main 101");
	assert_int_equal(s7->parent, proc->uuid);
	assert_int_equal(s8->parent, proc->uuid);
	assert_int_equal(s9->parent, proc->uuid);
	assert_int_equal(nv->parent, proc->uuid);

	/* stream 7: the linked kernels and copy in order, the unlinked kernel
	 * (older than them: it comes last in the file) on a late sequence */
	assert_int_equal(count_slices(&m, s7->uuid, "vecAdd(float*, float*, float*, int)"), 2);
	assert_int_equal(count_slices(&m, s7->uuid, "step()"), 1);
	assert_int_equal(count_slices(&m, s7->uuid, "relu_kernel"), 2);
	assert_int_equal(count_slices(&m, s7->uuid, "memcpy HtoD 4 MiB"), 1);
	assert_int_equal(count_slices(&m, s8->uuid, "memset 1 MiB"), 1);
	assert_int_equal(count_slices(&m, s9->uuid, "vecAdd(float*, float*, float*, int)"), 1);
	for (int i = 0; i < m.nev; i++)
		kernels += m.ev[i].type == 1 && on_gpu_track(&m, &m.ev[i]) &&
			   strncmp(m.ev[i].name, "mem", 3);
	assert_int_equal(kernels, 6);
	v = track_events(&m, s7->uuid, &n);
	assert_int_equal(n, 12);
	assert_int_equal(v[0]->ts, 2000);
	assert_int_equal(v[1]->ts, 2100);	/* its end, before the next begin */
	assert_true(v[0]->seq != v[2]->seq);
	free(v);

	/* the arguments of a kernel, as dump names them: CUPTI's stream id is
	 * stream_id, "stream" is a call's CUstream handle only */
	e = event_at(&m, s7->uuid, 3500, 1);
	assert_non_null(a = find_ann(e, "stream_id"));
	assert_int_equal(a->v, 7);
	assert_null(find_ann(e, "stream"));
	assert_non_null(a = find_ann(e, "correlation"));
	assert_int_equal(a->v, 11);
	assert_non_null(a = find_ann(e, "launch_tid"));
	assert_int_equal(a->v, 101);
	assert_non_null(a = find_ann(e, "launch_ts"));
	assert_int_equal(a->v, 3000);
	assert_non_null(a = find_ann(e, "mangled"));
	assert_string_equal(a->str, "_Z6vecAddPfS_S_i");
	assert_non_null(a = find_ann(e, "grid"));
	assert_int_equal(a->narr, 3);
	assert_int_equal(a->arr[0], 64);
	assert_null(find_ann(e, "causality"));
	assert_non_null(a = find_ann(event_at(&m, s7->uuid, 5990, 1), "causality"));
	assert_int_equal(a->v, 1);
	/* the unlinked kernel names no call and has no arrow */
	e = event_at(&m, s7->uuid, 2000, 1);
	assert_null(find_ann(e, "launch_ts"));
	assert_int_equal(e->nflow, 0);

	/* every flow id on exactly two events: one GPU slice (which has no
	 * other) and one event of a thread */
	for (int i = 0; i < m.nev; i++) {
		if (!on_gpu_track(&m, &m.ev[i]) || !m.ev[i].nflow)
			continue;
		assert_int_equal(m.ev[i].nflow, 1);
		assert_true(nids < 16);
		ids[nids++] = m.ev[i].flow;
		assert_int_equal(flow_uses(&m, m.ev[i].flow), 2);
	}
	assert_int_equal(nids, 7);
	for (int i = 0; i < m.nev; i++) {
		for (int k = 0; k < m.ev[i].nflow && !on_gpu_track(&m, &m.ev[i]); k++) {
			bool gpu_end = false;

			for (int j = 0; j < nids; j++)
				gpu_end |= ids[j] == m.ev[i].flows[k];
			assert_true(gpu_end);
		}
	}
	/* the graph launch carries the arrows of its two kernels; the launch
	 * that never returned, as an instant, the arrow of its kernel */
	e = event_at(&m, t101->uuid, 8000, 1);
	assert_string_equal(e->name, "cuGraphLaunch");
	assert_int_equal(e->nflow, 2);
	assert_int_equal(e->flows[0], event_at(&m, s7->uuid, 8100, 1)->flow);
	assert_int_equal(e->flows[1], event_at(&m, s7->uuid, 8300, 1)->flow);
	e = event_at(&m, t102->uuid, 7000, 3);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s9->uuid, 7200, 1)->flow);
	assert_int_equal(event_at(&m, t101->uuid, 4000, 1)->flow,
			 event_at(&m, s7->uuid, 4600, 1)->flow);

	/* NVTX: the ranges nest on their track, a mark is an instant */
	assert_int_equal(count_slices(&m, nv->uuid, "step"), 1);
	assert_int_equal(count_slices(&m, nv->uuid, "fwd"), 2);
	assert_string_equal(event_at(&m, nv->uuid, 4000, 3)->name, "mark");
	v = track_events(&m, nv->uuid, &n);
	assert_int_equal(n, 7);
	assert_string_equal(v[0]->name, "step");
	assert_string_equal(v[1]->name, "fwd");
	assert_int_equal(v[2]->type, 2);	/* fwd ends at 4000, before the mark */
	assert_int_equal(v[2]->ts, 4000);
	assert_int_equal(v[3]->type, 3);
	assert_int_equal(v[6]->type, 2);	/* step ends last, at 8900 */
	assert_int_equal(v[6]->ts, 8900);
	free(v);
	model_free(&m);
}

/* Calls whose exits were lost inside a call that returns: the decoder hands
 * them over when the outer exit comes, and they are written where they
 * began, inside it, on the thread's own sequence in time order; GPU work of
 * a launch with calls still open above it gets its arrows. */
static void test_lost_exits_inside_a_call(void **state)
{
	static const uint64_t want_ts[] = { 1000, 1100, 1200, 1300, 1310, 2000 };
	static const int want_type[] = { 1, 3, 3, 1, 2, 2 };
	const char *path = tmp_path("inside.gtrace");
	const struct trk *t1, *s7;
	const struct ev *e, *b;
	struct model m;
	const char *why;
	int k = 0;

	(void)state;
	w_open(path);
	w_call(1000, 101, API(cuCtxSynchronize_v2), 5, 0, 0);
	w_launch(1100, 101, 0x4000);				/* its exit is lost */
	mt_kernel(W, 1150, 10, 101, 1100, MT_LINKED, 7, 1, "k_first");
	w_call(1200, 101, API(cuStreamSynchronize), 7, 0, 0);	/* its exit is lost */
	mt_kernel(W, 1250, 10, 101, 1100, MT_LINKED, 7, 2, "k_second");
	CALL_RET(1300, 1310, 101, cuMemAlloc_v2);
	w_ret(2000, 101, API(cuCtxSynchronize_v2), 0);
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	t1 = find_track(&m, 't', 101);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	for (int i = 0; i < m.nev; i++) {
		e = &m.ev[i];
		if (e->track != t1->uuid)
			continue;
		assert_true(k < 6);
		assert_int_equal(e->ts, want_ts[k]);
		assert_int_equal(e->type, want_type[k]);
		/* one sequence: none went late */
		assert_int_equal(e->seq, event_at(&m, t1->uuid, 1000, 1)->seq);
		k++;
	}
	assert_int_equal(k, 6);
	b = event_at(&m, t1->uuid, 1100, 3);
	assert_int_equal(b->nflow, 2);
	assert_int_equal(b->flows[0], event_at(&m, s7->uuid, 1150, 1)->flow);
	assert_int_equal(b->flows[1], event_at(&m, s7->uuid, 1250, 1)->flow);
	assert_int_equal(flow_uses(&m, b->flows[0]), 2);
	assert_int_equal(flow_uses(&m, b->flows[1]), 2);
	assert_int_equal(event_at(&m, t1->uuid, 1200, 3)->nflow, 0);
	model_free(&m);
}

/* Arrows whose call is not where it should be: a linked record whose call
 * is not open gets none; one whose call the exporter gave up waiting for
 * (its exit lost, hundreds of calls after it) still gets its arrow when the
 * decoder finally emits the call, as an instant. */
static void test_gpu_flow_edges(void **state)
{
	const char *path = tmp_path("edges.gtrace");
	const struct trk *t1, *s7;
	const struct ev *e;
	struct model m;
	const char *why;

	(void)state;
	w_open(path);
	/* the launch returned before its kernel came: no arrow */
	w_launch(1000, 101, 0x4000);
	w_ret(1010, 101, API(cuLaunchKernel), 0);
	mt_kernel(W, 1500, 10, 101, 1000, MT_LINKED, 7, 1, "k_late");
	/* a launch whose exit is lost, then enough calls to give up on it */
	w_launch(2000, 101, 0x4000);
	mt_kernel(W, 2100, 10, 101, 2000, MT_LINKED, 7, 2, "k_lost");
	for (int i = 0; i < 600; i++)
		CALL_RET(3000 + i * 10, 3005 + i * 10, 101, cuMemAlloc_v2);
	/* a record linked to a thread never seen */
	mt_kernel(W, 9000, 10, 555, 8000, MT_LINKED, 7, 3, "k_nothread");
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	t1 = find_track(&m, 't', 101);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	assert_int_equal(event_at(&m, s7->uuid, 1500, 1)->nflow, 0);
	assert_int_equal(event_at(&m, s7->uuid, 9000, 1)->nflow, 0);
	e = event_at(&m, s7->uuid, 2100, 1);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(flow_uses(&m, e->flow), 2);
	/* the lost launch: an instant at its entry, with the arrow, written
	 * late (on another sequence than the calls after it): it was given up on */
	assert_int_equal(event_at(&m, t1->uuid, 2000, 3)->flow, e->flow);
	assert_true(event_at(&m, t1->uuid, 2000, 3)->seq != event_at(&m, t1->uuid, 3000, 1)->seq);
	model_free(&m);
}

/* A merged trace of a default recording (launches at entry only): every
 * linked GPU record has its arrow from its call, the entry-only launches
 * being slices of 1 ns at their entry that carry them. */
static void test_entry_only_flows(void **state)
{
	const char *path = tmp_path("merged_entry_only.gtrace");
	const struct trk *t101, *t102, *s7, *s9;
	const struct ev *e;
	const char *why;
	struct model m;
	int linked = 0, gpu_flows = 0;

	(void)state;
	mt_file_entry_only(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	t101 = find_track(&m, 't', 101);
	t102 = find_track(&m, 't', 102);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	s9 = find_named_track(&m, "GPU 0 stream 9");
	for (int i = 0; i < m.nev; i++) {
		const struct ev *g = &m.ev[i];

		if (!on_gpu_track(&m, g) || g->type != 1)
			continue;
		linked += find_ann(g, "launch_ts") != NULL;
		gpu_flows += g->nflow;
		if (g->nflow) {
			assert_int_equal(g->nflow, 1);
			assert_int_equal(flow_uses(&m, g->flow), 2);
		}
	}
	assert_int_equal(linked, 7);
	assert_int_equal(gpu_flows, 7);
	/* the launches: a slice of 1 ns each, with the arrow of its kernel */
	e = event_at(&m, t101->uuid, 3000, 1);
	assert_string_equal(e->name, "vecAdd(float*, float*, float*, int)");
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s7->uuid, 3500, 1)->flow);
	assert_null(find_ann(e, "incomplete"));
	assert_non_null(event_at(&m, t101->uuid, 3001, 2));
	assert_int_equal(event_at(&m, t101->uuid, 6000, 1)->flow,
			 event_at(&m, s7->uuid, 5990, 1)->flow);
	e = event_at(&m, t102->uuid, 7000, 1);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s9->uuid, 7200, 1)->flow);
	assert_non_null(event_at(&m, t102->uuid, 7001, 2));
	model_free(&m);
}

/* A trace with a thread, a launch and its kernel (one flow), starting at start. */
static void ids_trace(const char *path, uint64_t start)
{
	w_open_at(path, start, REAL_OFF);
	w_name(start, GT_NAME_THREAD, 101, "main");
	w_launch(start + 1000, 101, 0x4000);
	mt_kernel(W, start + 1500, 10, 101, start + 1000, MT_LINKED, 7, 1, "k");
	w_ret(start + 1010, 101, API(cuLaunchKernel), 0);
	w_close();
}

static bool ids_meet(const uint64_t *a, int na, const uint64_t *b, int nb)
{
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

/* Track uuids, sequence ids and flow ids of one model, for comparisons. */
struct ids {
	uint64_t uuid[64], seq[64], flow[64];
	int nuuid, nseq, nflow;
};

static void ids_of(const struct model *m, struct ids *d)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < m->ntrk; i++)
		d->uuid[d->nuuid++] = m->trk[i].uuid;
	for (int i = 0; i < m->nseq; i++)
		d->seq[d->nseq++] = m->seqs[i];
	for (int i = 0; i < m->nev && d->nflow < 64; i++)
		for (int k = 0; k < m->ev[i].nflow && d->nflow < 64; k++)
			d->flow[d->nflow++] = m->ev[i].flows[k];
}

/* Two exports load together in one Perfetto UI (or one concatenated file):
 * different traces share no track uuid, sequence id or flow id; the same
 * trace exported twice gets the same ones. */
static void test_ids_per_trace(void **state)
{
	const char *a = tmp_path("ids_a.gtrace"), *b = tmp_path("ids_b.gtrace");
	struct model ma, ma2, mb;
	struct ids ia, ia2, ib;
	const char *why;

	(void)state;
	ids_trace(a, 500);
	ids_trace(b, 700);
	assert_int_equal(export_file(a, &ma, &why), 0);
	assert_int_equal(export_file(a, &ma2, &why), 0);
	assert_int_equal(export_file(b, &mb, &why), 0);
	ids_of(&ma, &ia);
	ids_of(&ma2, &ia2);
	ids_of(&mb, &ib);
	assert_true(ia.nuuid >= 3 && ia.nseq >= 3 && ia.nflow == 2);
	assert_int_equal(ia.nuuid, ib.nuuid);
	assert_int_equal(ia.nseq, ib.nseq);
	assert_int_equal(ia.nflow, ib.nflow);
	assert_false(ids_meet(ia.uuid, ia.nuuid, ib.uuid, ib.nuuid));
	assert_false(ids_meet(ia.seq, ia.nseq, ib.seq, ib.nseq));
	assert_false(ids_meet(ia.flow, ia.nflow, ib.flow, ib.nflow));
	assert_memory_equal(&ia, &ia2, sizeof(ia));
	model_free(&ma);
	model_free(&ma2);
	model_free(&mb);
}

/* No records: a valid trace with the clock snapshot alone. */
/* A trace of calls of several kinds, process events and kernel-side
 * records (an ioctl inside a call, an off-CPU interval). */
static void kinds_file(const char *path)
{
	struct gt_ioctl *io = (void *)rbuf;
	struct gt_offcpu *oc = (void *)rbuf;

	w_open(path);
	w_proc(GT_REC_EXEC, 550, 100, "app", 0);
	w_launch(1000, 101, 0x4000);
	w_ret(1100, 101, API(cuLaunchKernel), 0);
	CALL_RET(1200, 1300, 101, cuMemAlloc_v2);
	w_call(1400, 101, API(cuStreamSynchronize), 7, 0, 0);
	hdr(GT_REC_IOCTL, sizeof(*io), 1450, 100, 101, 0);
	io->dur = 20;
	io->cmd = 0xc020462a;
	io->rdev = 195u << 20;
	io->fd = 3;
	w_put();
	hdr(GT_REC_OFFCPU, sizeof(*oc), 1480, 100, 101, 0);
	oc->dur = 10;
	oc->state = 1;
	w_put();
	w_ret(1500, 101, API(cuStreamSynchronize), 0);
	w_call(1600, 101, API(cuCtxSynchronize_v2), 0, 0, 0);	/* never returns: an instant */
	w_proc(GT_REC_EXIT, 2000, 100, "app", 0);
	w_close();
}

/* Each slice and instant has one category, the "cat" the JSON export
 * gives the same event (same name, same time): calls by their type, GPU
 * records by theirs, process events, ioctls and off-CPU intervals. */
static void check_categories_as_json(const char *path, int want_min)
{
	struct trace_reader *r;
	struct model m;
	const char *why;
	char *json = NULL;
	size_t len = 0;
	FILE *out = tu_memstream(&json, &len);
	int checked = 0;

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(export_json__write(r, out, &why), 0);
	assert_int_equal(fclose(out), 0);
	trace_reader__close(r);
	assert_int_equal(export_file(path, &m, &why), 0);
	for (int i = 0; i < m.nev; i++) {
		const struct ev *e = &m.ev[i];
		char name[160], ts[48], cat[48];
		bool found = false;

		if (e->type == 2) {
			assert_int_equal(e->ncat, 0);	/* an end is no event of its own */
			continue;
		}
		assert_int_equal(e->ncat, 1);
		snprintf(name, sizeof(name), "{\"name\":\"%s\",", e->name);
		snprintf(ts, sizeof(ts), "\"ts\":%llu.%03llu,", (unsigned long long)(e->ts / 1000),
			 (unsigned long long)(e->ts % 1000));
		snprintf(cat, sizeof(cat), ",\"cat\":\"%s\",", e->cat);
		for (const char *p = json; *p && !found;) {
			size_t n = strcspn(p, "\n");
			char *line = strndup(p, n);

			found = strstr(line, name) == line && strstr(line, ts) && strstr(line, cat);
			free(line);
			p += n + (p[n] == '\n');
		}
		if (!found)
			fail_msg("no JSON event %s %s %s", name, ts, cat);
		checked++;
	}
	assert_true(checked >= want_min);
	free(json);
	model_free(&m);
}

static void test_categories_as_json(void **state)
{
	const char *path = tmp_path("kinds.gtrace");
	struct model m;
	const char *why;
	const char *want[] = { "launch", "alloc", "sync", "ioctl", "sched", "process" };

	(void)state;
	kinds_file(path);
	check_categories_as_json(path, 7);
	/* every kind is there: the test sees each category */
	assert_int_equal(export_file(path, &m, &why), 0);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		bool seen = false;

		for (int i = 0; i < m.nev; i++)
			seen |= !strcmp(m.ev[i].cat, want[k]);
		if (!seen)
			fail_msg("no event of category %s", want[k]);
	}
	model_free(&m);
	path = tmp_path("merged.gtrace");
	mt_file(path);
	check_categories_as_json(path, 20);
}

static void test_empty(void **state)
{
	const char *path = tmp_path("empty.gtrace");
	struct model m;
	const char *why;

	(void)state;
	w_open(path);
	w_close();
	assert_int_equal(export_file(path, &m, &why), 0);
	assert_int_equal(m.npkt, 1);
	assert_int_equal(m.nev, 0);
	assert_int_equal(m.primary, 3);
	model_free(&m);
}

/* A header whose start and realtime offset add up past what a timestamp
 * holds (a damaged or hostile file): the export goes on with the monotonic
 * clock alone rather than a wrapped wall-clock time. */
static void test_clock_out_of_range(void **state)
{
	static const struct { uint64_t start; int64_t off; } hdrs[] = {
		{ INT64_MAX - 5, REAL_OFF },		/* past INT64_MAX */
		{ (uint64_t)INT64_MAX + 7, INT64_MIN },	/* a start no clock has */
		{ START_TS, -REAL_OFF },		/* before 1970 */
	};
	const char *path = tmp_path("clock.gtrace");
	struct model m;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
		unlink(path);
		w_open_at(path, hdrs[i].start, hdrs[i].off);
		w_close();
		assert_int_equal(export_file(path, &m, &why), 0);
		assert_int_equal(m.clk[3], hdrs[i].start);
		assert_int_equal(m.clk[1], 0);	/* no realtime clock */
		model_free(&m);
	}
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_export_perfetto");
}

static int group_teardown(void **state)
{
	static const char *const files[] = {
		"nest.gtrace", "proc.gtrace", "intern.gtrace", "lost.gtrace", "cut.gtrace",
		"empty.gtrace", "merged.gtrace", "edges.gtrace", "inside.gtrace",
	};

	(void)state;
	return tu_tmpdir_clean(files, sizeof(files) / sizeof(files[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoder),
		cmocka_unit_test(test_tracks_and_slices),
		cmocka_unit_test(test_instants_and_process_events),
		cmocka_unit_test(test_one_process_descriptor),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_lost_exit),
		cmocka_unit_test(test_truncated_and_errors),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_clock_out_of_range),
		cmocka_unit_test(test_gpu_tracks_and_flows),
		cmocka_unit_test(test_gpu_flow_edges),
		cmocka_unit_test(test_entry_only_flows),
		cmocka_unit_test(test_ids_per_trace),
		cmocka_unit_test(test_categories_as_json),
		cmocka_unit_test(test_lost_exits_inside_a_call),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
