// SPDX-License-Identifier: MIT
/*
 * Unit tests of the Perfetto exporter (user/export/perfetto.c, pftrace.c,
 * protobuf.c), the CPU side: small traces written with trace_writer are
 * exported and the protobuf read back with pftrace_model.h; the encoder,
 * tracks, names, nesting, arguments, instants, process descriptors,
 * interning, the clock snapshot, the ordering repairs for lost exits,
 * damaged input and write errors. The GPU side is in
 * test_export_perfetto_gpu.c, ids and categories in test_export_perfetto_ids.c.
 */
#include "perfetto_fixtures.h"

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
	return pf_group_setup("test_export_perfetto");
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
		cmocka_unit_test(test_lost_exits_inside_a_call),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
