// SPDX-License-Identifier: MIT
/*
 * Unit tests of `gtrace-bpf dump` (user/export/dump.c, dump_summary.c): a
 * small trace written with trace_writer must come out as exactly the expected
 * JSON lines; the summary table adds up; unreadable and damaged files give
 * one line on err.
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
#include "export/dump.h"
#include "format/trace_file.h"
#include "merged_trace.h"
#include "test_util.h"


/* ------------------------------------------------------------ trace building */

static void w_open(const char *path)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 1,
		.host = "testhost", .kernel = "6.18", .cmdline = "gtrace-bpf record",
		.options = "",
	};
	tu_w_create(path, &info);
}

static void w_put(const void *rec)
{
	tu_w_append(rec);
}

static void hdr(uint16_t type, size_t size, uint64_t ts, uint32_t tid, unsigned api)
{
	tu_hdr(type, size, ts, 100, tid, api, 2);
}

static void w_call(uint64_t ts, uint32_t tid, unsigned api, uint64_t a0, uint64_t a1,
		   uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct gt_call *c = (void *)rbuf;

	hdr(GT_REC_CALL, sizeof(*c), ts, tid, api);
	c->args[0] = a0; c->args[1] = a1; c->args[2] = a2;
	c->args[3] = a3; c->args[4] = a4; c->args[5] = a5;
	w_put(c);
}

static void w_call_str(uint64_t ts, unsigned api, uint64_t a1, const char *s)
{
	struct gt_call_str *c = (void *)rbuf;
	size_t n = strlen(s) + 1;

	hdr(GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), ts, 101, api);
	c->args[1] = a1;
	c->len = (uint16_t)n;
	memcpy(c->str, s, n);
	w_put(c);
}

static void w_ret(uint64_t ts, unsigned api, int32_t ret, uint64_t out, uint32_t flags)
{
	struct gt_ret *r = (void *)rbuf;

	hdr(GT_REC_RET, sizeof(*r), ts, 101, api);
	r->ret = ret;
	r->out = out;
	r->flags = flags;
	w_put(r);
}

static void w_ret_str(uint64_t ts, unsigned api, const char *s)
{
	struct gt_ret_str *r = (void *)rbuf;
	size_t n = strlen(s) + 1;

	hdr(GT_REC_RET_STR, GT_REC_ALIGN(sizeof(*r) + n), ts, 101, api);
	r->len = (uint16_t)n;
	memcpy(r->str, s, n);
	w_put(r);
}

static void w_launch(uint64_t ts, unsigned api, uint64_t func, uint16_t flags)
{
	struct gt_launch *l = (void *)rbuf;

	hdr(GT_REC_LAUNCH, sizeof(*l), ts, 101, api);
	l->func = func;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	l->flags = flags;
	w_put(l);
}

static void w_proc(uint16_t type, uint64_t ts, const char *comm, int32_t code)
{
	struct gt_proc_evt *p = (void *)rbuf;

	hdr(type, sizeof(*p), ts, 100, 0);
	p->ppid = 1;
	p->exit_code = code;
	memcpy(p->comm, comm, strlen(comm));	/* shorter than 16 here */
	w_put(p);
}

#define API(x) GT_API_##x

/* Every kind of line, with the one expected for it in exp[]. */
static const char *const exp_lines[] = {
	"{\"ts\":1000,\"pid\":100,\"tid\":100,\"cpu\":2,\"type\":\"process\",\"event\":\"exec\",\"ppid\":1,\"comm\":\"app\"}",
	"{\"ts\":2000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"module\",\"api\":\"cuModuleGetFunction\",\"dur\":100,\"ret\":0,\"failed\":false,\"handle\":16384,\"parent\":12288,\"name\":\"_Z6vecAddPfS_S_i\"}",
	"{\"ts\":3000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuLaunchKernel_ptsz\",\"dur\":4,\"ret\":0,\"failed\":false,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"func\":16384,\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":7}",
	"{\"ts\":3100,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuLaunchCooperativeKernel\",\"dur\":5,\"ret\":0,\"failed\":false,\"kernel\":\"unknown_kernel_0x3e7\",\"func\":999,\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":7,\"cooperative\":true}",
	"{\"ts\":4000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuGraphLaunch\",\"dur\":3,\"ret\":0,\"failed\":false,\"graph\":77,\"stream\":7}",
	"{\"ts\":5000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"memcpy\",\"api\":\"cuMemcpyHtoDAsync_v2\",\"dur\":10,\"ret\":0,\"failed\":false,\"bytes\":4096,\"kind\":\"HtoD\",\"dst\":1000000,\"src\":2000,\"stream\":7}",
	"{\"ts\":5100,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"memcpy\",\"api\":\"cuMemcpy2D_v2\",\"dur\":10,\"ret\":0,\"failed\":false,\"bytes\":640,\"kind\":\"DtoH\",\"dst\":3000,\"src\":1000000}",
	"{\"ts\":5200,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"memset\",\"api\":\"cuMemsetD2D32Async\",\"dur\":10,\"ret\":0,\"failed\":false,\"bytes\":12000,\"dst\":1000000,\"stream\":7}",
	"{\"ts\":6000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"alloc\",\"api\":\"cuMemAlloc_v2\",\"dur\":20,\"ret\":0,\"failed\":false,\"bytes\":1048576,\"ptr\":140000000000}",
	"{\"ts\":6100,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"free\",\"api\":\"cuMemFree_v2\",\"dur\":1,\"ret\":1,\"failed\":true,\"ptr\":140000000000}",
	"{\"ts\":7000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuStreamWaitEvent\",\"dur\":2,\"ret\":0,\"failed\":false,\"stream\":7,\"event\":9}",
	"{\"ts\":7100,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuEventRecord\",\"dur\":2,\"ret\":0,\"failed\":false,\"event\":9,\"stream\":7}",
	"{\"ts\":7200,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuCtxSynchronize_v2\",\"dur\":2,\"ret\":0,\"failed\":false,\"ctx\":5}",
	"{\"ts\":7300,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuEventSynchronize\",\"dur\":2,\"ret\":0,\"failed\":false,\"event\":9}",
	"{\"ts\":7400,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuStreamSynchronize\",\"dur\":2,\"ret\":0,\"failed\":false,\"stream\":7}",
	"{\"ts\":8000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"module\",\"api\":\"cuModuleLoad\",\"dur\":50,\"ret\":0,\"failed\":false,\"handle\":12288,\"path\":\"d\\\"x\\\\y\\n\\u00ff\xc3\xa9\\u0001.cubin\"}",
	"{\"ts\":8100,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"module\",\"api\":\"cuFuncGetName\",\"dur\":1,\"ret\":0,\"failed\":false,\"handle\":16384,\"name\":\"_Z6vecAddPfS_S_i\"}",
	"{\"ts\":8200,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"stream\",\"api\":\"cuStreamCreate\",\"dur\":3,\"ret\":0,\"failed\":false,\"handle\":7}",
	"{\"ts\":8300,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"context\",\"api\":\"cuCtxDestroy_v2\",\"dur\":3,\"ret\":0,\"failed\":false,\"handle\":5}",
	"{\"ts\":8400,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"init\",\"api\":\"cuInit\",\"dur\":3,\"ret\":0,\"failed\":false}",
	"{\"ts\":9000,\"pid\":100,\"tid\":102,\"cpu\":2,\"type\":\"sync\",\"api\":\"cuStreamSynchronize\",\"incomplete\":true,\"stream\":7}",
	"{\"ts\":10000,\"pid\":100,\"tid\":100,\"cpu\":2,\"type\":\"process\",\"event\":\"exit\",\"ppid\":1,\"comm\":\"app\\u0001\",\"exit_code\":0}",
};

/* A call and its exit, argument registers as given. */
#define CALL_RET(ts, dur, api, a0, a1, a2, a3, a4, a5) do {		\
		w_call(ts, 101, API(api), a0, a1, a2, a3, a4, a5);	\
		w_ret((ts) + (dur), API(api), 0, 0, 0);			\
	} while (0)

static void write_trace(const char *path, bool finish)
{
	struct gt_stats *st = (void *)rbuf;
	struct gt_trailer t = { 0 };

	w_open(path);
	w_proc(GT_REC_EXEC, 1000, "app", 0);
	w_call_str(2000, API(cuModuleGetFunction), 12288, "_Z6vecAddPfS_S_i");
	w_ret(2100, API(cuModuleGetFunction), 0, 16384, GT_RET_OUT);
	w_launch(3000, API(cuLaunchKernel_ptsz), 16384, 0);
	w_ret(3004, API(cuLaunchKernel_ptsz), 0, 0, 0);
	w_launch(3100, API(cuLaunchCooperativeKernel), 999, GT_LAUNCH_COOPERATIVE);
	w_ret(3105, API(cuLaunchCooperativeKernel), 0, 0, 0);
	CALL_RET(4000, 3, cuGraphLaunch, 77, 7, 0, 0, 0, 0);
	CALL_RET(5000, 10, cuMemcpyHtoDAsync_v2, 1000000, 2000, 4096, 7, 0, 0);
	/* 2D: src memtype device, dst host, bytes, stream, src, dst */
	CALL_RET(5100, 10, cuMemcpy2D_v2, 2, 1, 640, 0, 1000000, 3000);
	CALL_RET(5200, 10, cuMemsetD2D32Async, 1000000, 512, 0, 100, 30, 7);
	w_call(6000, 101, API(cuMemAlloc_v2), 0x1000, 1048576, 0, 0, 0, 0);
	w_ret(6020, API(cuMemAlloc_v2), 0, 140000000000ull, GT_RET_OUT);
	w_call(6100, 101, API(cuMemFree_v2), 140000000000ull, 0, 0, 0, 0, 0);
	w_ret(6101, API(cuMemFree_v2), 1, 0, 0);
	CALL_RET(7000, 2, cuStreamWaitEvent, 7, 9, 0, 0, 0, 0);
	CALL_RET(7100, 2, cuEventRecord, 9, 7, 0, 0, 0, 0);
	CALL_RET(7200, 2, cuCtxSynchronize_v2, 5, 0, 0, 0, 0, 0);
	CALL_RET(7300, 2, cuEventSynchronize, 9, 0, 0, 0, 0, 0);
	CALL_RET(7400, 2, cuStreamSynchronize, 7, 0, 0, 0, 0, 0);
	w_call_str(8000, API(cuModuleLoad), 0, "d\"x\\y\n\xff\xc3\xa9\x01.cubin");
	w_ret(8050, API(cuModuleLoad), 0, 12288, GT_RET_OUT);
	w_call(8100, 101, API(cuFuncGetName), 0x1000, 16384, 0, 0, 0, 0);
	w_ret_str(8101, API(cuFuncGetName), "_Z6vecAddPfS_S_i");
	w_call(8200, 101, API(cuStreamCreate), 0x1000, 0, 0, 0, 0, 0);
	w_ret(8203, API(cuStreamCreate), 0, 7, GT_RET_OUT);
	CALL_RET(8300, 3, cuCtxDestroy_v2, 5, 0, 0, 0, 0, 0);
	CALL_RET(8400, 3, cuInit, 0, 0, 0, 0, 0, 0);
	hdr(GT_REC_STATS, sizeof(*st), 8500, 0, 0);
	st->c.events = 42;
	st->c.drop_ringbuf = 3;
	w_put(st);
	w_call(9000, 102, API(cuStreamSynchronize), 7, 0, 0, 0, 0, 0);
	assert_int_equal(trace_writer__flush(W), 0);
	w_proc(GT_REC_EXIT, 10000, "app\x01", 0);
	if (finish) {
		t.end_ts = 11000;
		t.counters.events = 50;
		t.counters.drop_ringbuf = 4;
		t.counters.drop_state = 6;
		assert_int_equal(trace_writer__finish(W, &t), 0);
	} else {
		/* a crash after the first chunk: the second never reached the file */
	}
	trace_writer__free(W);
	W = NULL;
}

/* ------------------------------------------------------------ running dump */

static void run_dump(const char *path, bool summary, struct run *r)
{
	struct dump_opts o = { .path = path, .summary = summary };

	tu_run_open(r, &o.out, &o.err);
	r->rc = dump__run(&o);
	tu_run_close(o.out, o.err);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void check_lines_of(const char *out, const char *const *want, int nexp)
{
	const char *p = out;

	for (int i = 0; i < nexp; i++) {
		const char *nl = strchr(p, '\n');

		assert_non_null(nl);
		if ((size_t)(nl - p) != strlen(want[i]) ||
		    memcmp(p, want[i], nl - p) != 0) {
			fprintf(stderr, "line %d\n got: %.*s\nwant: %s\n", i + 1, (int)(nl - p),
				p, want[i]);
			fail();
		}
		p = nl + 1;
	}
	assert_string_equal(p, "");
}

static void check_lines(const char *out, int nexp)
{
	check_lines_of(out, exp_lines, nexp);
}

/* ------------------------------------------------------------ tests */

static void test_json_lines(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct run r = { 0 };
	int n = sizeof(exp_lines) / sizeof(exp_lines[0]);

	(void)state;
	write_trace(path, true);
	run_dump(path, false, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_lines(r.out, n);
	run_free(&r);
}

static void test_summary(void **state)
{
	const char *path = tmp_path("sum.gtrace");
	struct run r = { 0 };
	unsigned long long calls, failed, inc, dur;
	const char *row;

	(void)state;
	write_trace(path, true);
	run_dump(path, true, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	/* no JSON in a summary */
	assert_null(strchr(r.out, '{'));

	row = strstr(r.out, "\ncuMemFree_v2 ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu %llu %llu %llu", &calls, &failed, &inc, &dur), 4);
	assert_int_equal(calls, 1);
	assert_int_equal(failed, 1);
	assert_int_equal(inc, 0);
	assert_int_equal(dur, 1);

	row = strstr(r.out, "\ncuStreamSynchronize ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu %llu %llu %llu", &calls, &failed, &inc, &dur), 4);
	assert_int_equal(calls, 2);
	assert_int_equal(failed, 0);
	assert_int_equal(inc, 1);
	assert_int_equal(dur, 2);

	row = strstr(r.out, "\ntotal ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu %llu %llu", &calls, &failed, &inc), 3);
	assert_int_equal(calls, 20);
	assert_int_equal(failed, 1);
	assert_int_equal(inc, 1);

	/* counters come from the trailer; decoder stats by name */
	row = strstr(r.out, "\n  events ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu", &calls), 1);
	assert_int_equal(calls, 50);
	assert_non_null(strstr(r.out, "\n  drop_ringbuf "));
	assert_non_null(strstr(r.out, "\n  records_written "));
	/* the last counter, in what was the reserved word */
	row = strstr(r.out, "\n  drop_state ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu", &calls), 1);
	assert_int_equal(calls, 6);
	row = strstr(r.out, "\n  placeholder_names ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu", &calls), 1);
	assert_int_equal(calls, 1);
	row = strstr(r.out, "\n  incomplete ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %*s %llu", &calls), 1);
	assert_int_equal(calls, 1);
	assert_non_null(strstr(r.out, "\n  unmatched_exits "));
	assert_non_null(strstr(r.out, "\n  unknown_records "));
	assert_null(strstr(r.out, "damage"));
	run_free(&r);
}

static void test_truncated(void **state)
{
	const char *path = tmp_path("cut.gtrace");
	int n = sizeof(exp_lines) / sizeof(exp_lines[0]);
	char want[512];
	struct run r = { 0 };

	(void)state;
	write_trace(path, false);
	/* the readers' rule: the records read, status 1, one line saying how
	 * much was read (all of the file: the recording stopped after its
	 * chunk, without its trailer) */
	tu_killed_line(path, "showing the records read", want, sizeof(want));
	run_dump(path, false, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, want);
	/* everything up to the exit record, the open sync flushed at the end */
	check_lines(r.out, n - 1);
	run_free(&r);

	tu_killed_line(path, "the summary covers the records read", want, sizeof(want));
	run_dump(path, true, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, want);
	assert_non_null(strstr(r.out, "\ndamage: "));
	/* counters from the last stats record */
	assert_non_null(strstr(r.out, "\n  drop_ringbuf "));
	{
		unsigned long long v;

		assert_int_equal(sscanf(strstr(r.out, "\n  drop_ringbuf "), " %*s %llu", &v), 1);
		assert_int_equal(v, 3);
	}
	run_free(&r);
}

static void test_errors(void **state)
{
	const char *path;
	struct run r = { 0 };
	char want[256];
	FILE *f;

	(void)state;
	path = tmp_path("missing.gtrace");
	run_dump(path, false, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: No such file or directory\n", path);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);

	path = tmp_path("notes.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("these are not the records you are looking for\n", f);
	fclose(f);
	run_dump(path, false, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: not a gtrace file (bad magic)\n",
		 path);
	assert_string_equal(r.err, want);
	assert_int_equal(count_lines(r.err), 1);
	assert_string_equal(r.out, "");
	run_free(&r);
}

/* Strings longer than the escape chunk and full of bytes that need it. */
static void test_long_escapes(void **state)
{
	const char *path = tmp_path("long.gtrace");
	char name[GT_STR_MAX];
	struct run r = { 0 };
	const char *p, *end;

	(void)state;
	for (int i = 0; i < GT_STR_MAX - 1; i++)
		name[i] = (i % 3 == 0) ? '"' : (i % 3 == 1) ? '\x02' : '\xe9';
	name[GT_STR_MAX - 1] = '\0';
	w_open(path);
	w_call_str(100, API(cuModuleLoad), 0, name);
	w_ret(200, API(cuModuleLoad), 0, 1, GT_RET_OUT);
	assert_int_equal(trace_writer__finish(W, &(struct gt_trailer){ 0 }), 0);
	trace_writer__free(W);
	W = NULL;

	run_dump(path, false, &r);
	assert_int_equal(r.rc, 0);
	p = strstr(r.out, "\"path\":\"");
	assert_non_null(p);
	p += 8;
	end = strstr(p, "\"}\n");
	assert_non_null(end);
	/* 1365 x (\" + \u0002 + \u00e9) */
	assert_int_equal(end - p, 1365 * (2 + 6 + 6));
	assert_memory_equal(p, "\\\"\\u0002\\u00e9\\\"", 16);
	run_free(&r);
}

/* The merged trace of merged_trace.h: GPU records where the merger put them
 * (a linked one before its call's line, which comes at the call's exit),
 * linked ones naming their call, NVTX ranges and marks; the merger's input
 * (API records) and the stats records are no lines. */
static const char *const gpu_lines[] = {
	"{\"ts\":1000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"module\",\"api\":\"cuModuleGetFunction\",\"dur\":100,\"ret\":0,\"failed\":false,\"handle\":16384,\"parent\":12288,\"name\":\"_Z6vecAddPfS_S_i\"}",
	"{\"ts\":3500,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":1000,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":11,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48,\"launch_ts\":3000,\"launch_tid\":101}",
	"{\"ts\":3000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuLaunchKernel\",\"dur\":10,\"ret\":0,\"failed\":false,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"func\":16384,\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":7}",
	"{\"ts\":4600,\"pid\":100,\"type\":\"gpu_memcpy\",\"dur\":300,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":12,\"bytes\":4194304,\"kind\":\"HtoD\",\"launch_ts\":4000,\"launch_tid\":101}",
	"{\"ts\":4000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"memcpy\",\"api\":\"cuMemcpyHtoDAsync_v2\",\"dur\":20,\"ret\":0,\"failed\":false,\"bytes\":4194304,\"kind\":\"HtoD\",\"dst\":65536,\"src\":8192,\"stream\":7}",
	"{\"ts\":5100,\"pid\":100,\"type\":\"gpu_memset\",\"dur\":50,\"device\":0,\"context\":1,\"stream_id\":8,\"correlation\":13,\"bytes\":1048576,\"launch_ts\":5000,\"launch_tid\":101}",
	"{\"ts\":5000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"memset\",\"api\":\"cuMemsetD8Async\",\"dur\":5,\"ret\":0,\"failed\":false,\"bytes\":1048576,\"dst\":65536,\"stream\":8}",
	"{\"ts\":5990,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":20,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":14,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48,\"launch_ts\":6000,\"launch_tid\":101,\"causality\":true}",
	"{\"ts\":6000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuLaunchKernel\",\"dur\":10,\"ret\":0,\"failed\":false,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"func\":16384,\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":7}",
	"{\"ts\":7200,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":100,\"device\":0,\"context\":1,\"stream_id\":9,\"correlation\":15,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48,\"launch_ts\":7000,\"launch_tid\":102}",
	"{\"ts\":8100,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":100,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":16,\"kernel\":\"step()\",\"mangled\":\"_Z4stepv\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48,\"launch_ts\":8000,\"launch_tid\":101}",
	"{\"ts\":8300,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":200,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":17,\"kernel\":\"relu_kernel\",\"mangled\":\"relu_kernel\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48,\"launch_ts\":8000,\"launch_tid\":101}",
	"{\"ts\":8000,\"pid\":100,\"tid\":101,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuGraphLaunch\",\"dur\":10,\"ret\":0,\"failed\":false,\"graph\":77,\"stream\":7}",
	"{\"ts\":7000,\"pid\":100,\"tid\":102,\"cpu\":2,\"type\":\"launch\",\"api\":\"cuLaunchKernel\",\"incomplete\":true,\"kernel\":\"vecAdd(float*, float*, float*, int)\",\"mangled\":\"_Z6vecAddPfS_S_i\",\"func\":16384,\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":7}",
	"{\"ts\":9000,\"pid\":100,\"tid\":100,\"cpu\":2,\"type\":\"process\",\"event\":\"exit\",\"ppid\":1,\"comm\":\"app\",\"exit_code\":0}",
	"{\"ts\":2000,\"pid\":100,\"type\":\"gpu_kernel\",\"dur\":100,\"device\":0,\"context\":1,\"stream_id\":7,\"correlation\":99,\"kernel\":\"relu_kernel\",\"mangled\":\"relu_kernel\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":48}",
	"{\"ts\":2900,\"pid\":100,\"tid\":101,\"type\":\"nvtx\",\"dur\":6000,\"name\":\"step\"}",
	"{\"ts\":3000,\"pid\":100,\"tid\":101,\"type\":\"nvtx\",\"dur\":1000,\"name\":\"fwd\"}",
	"{\"ts\":4000,\"pid\":100,\"tid\":101,\"type\":\"nvtx\",\"dur\":0,\"name\":\"mark\"}",
	"{\"ts\":7000,\"pid\":100,\"tid\":101,\"type\":\"nvtx\",\"dur\":500,\"name\":\"fwd\"}",
};

static void test_gpu_lines(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	struct run r = { 0 };

	(void)state;
	mt_file(path);
	run_dump(path, false, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_lines_of(r.out, gpu_lines, sizeof(gpu_lines) / sizeof(gpu_lines[0]));
	run_free(&r);
}

/* The value after a row's name (at the start of a line) in a summary. */
static unsigned long long row_value(const char *out, const char *section, const char *name,
				    int col)
{
	char key[64];
	const char *p = strstr(out, section);
	unsigned long long v[2] = { 0 };

	assert_non_null(p);
	snprintf(key, sizeof(key), "\n  %s ", name);
	p = strstr(p, key);
	assert_non_null(p);
	assert_true(sscanf(p, " %*s %llu %llu", &v[0], &v[1]) >= col + 1);
	return v[col];
}

static void test_gpu_summary(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	struct run r = { 0 };

	(void)state;
	mt_file(path);
	run_dump(path, true, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(row_value(r.out, "\ngpu\n", "kernels", 0), 6);
	assert_int_equal(row_value(r.out, "\ngpu\n", "kernels", 1), 1520);
	assert_int_equal(row_value(r.out, "\ngpu\n", "memcpy", 0), 1);
	assert_int_equal(row_value(r.out, "\ngpu\n", "memset", 1), 50);
	assert_non_null(strstr(r.out, "\n  linked                                        7            87.5%\n"));
	assert_int_equal(row_value(r.out, "\ngpu\n", "unlinked", 0), 1);
	assert_int_equal(row_value(r.out, "\ngpu\n", "causality", 0), 1);
	assert_int_equal(row_value(r.out, "\ngpu\n", "nvtx", 0), 4);
	assert_int_equal(row_value(r.out, "\nmerge\n", "unmatched_gpu", 0), 1);
	assert_int_equal(row_value(r.out, "\nmerge\n", "unmatched_calls", 0), 0);
	assert_int_equal(row_value(r.out, "\nmerge\n", "causality", 0), 1);
	assert_int_equal(row_value(r.out, "\nmerge\n", "no_api", 0), 6);
	assert_int_equal(row_value(r.out, "\ncupti agent (pid 100)\n", "dropped", 0), 2);
	assert_int_equal(row_value(r.out, "\ncupti agent (pid 100)\n", "clock_offset_ns", 0), 120);
	/* GPU records are not unknown to the decoder */
	assert_int_equal(row_value(r.out, "\ndecoder\n", "unknown_records", 0), 0);
	run_free(&r);

	/* a trace without GPU records has no such sections */
	write_trace(tmp_path("sum.gtrace"), true);
	run_dump(tmp_path("sum.gtrace"), true, &r);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "\ngpu\n"));
	assert_null(strstr(r.out, "\nmerge\n"));
	assert_null(strstr(r.out, "cupti"));
	run_free(&r);
}

/* libcuda loads: holds and gaps counted, each listed with its pid, the
 * interval from the recording's start, why, and its path escaped; a gap
 * that never closed lasts to the end. */
static void w_libload(uint64_t ts, uint32_t pid, uint64_t end, uint64_t cont, uint16_t outcome,
		      const char *path)
{
	struct gt_libload *l = (void *)rbuf;
	size_t n = strlen(path) + 1;

	tu_hdr(GT_REC_LIBLOAD, GT_REC_ALIGN(sizeof(*l) + n), ts, pid, pid, 0, 0);
	l->end_ts = end;
	l->cont_ts = cont;
	l->outcome = outcome;
	l->fd = 3;
	l->len = (uint16_t)n;
	memcpy(l->path, path, n);
	w_put(l);
}

/* The number after a row name of several words in section. */
static unsigned long long load_row(const char *out, const char *name)
{
	const char *p = strstr(out, "\nlibcuda loads");
	char key[64];
	unsigned long long v;

	assert_non_null(p);
	snprintf(key, sizeof(key), "\n  %s ", name);
	p = strstr(p, key);
	assert_non_null(p);
	assert_int_equal(sscanf(p + strlen(key), "%llu", &v), 1);
	return v;
}

static void test_libload_summary(void **state)
{
	const char *path = tmp_path("loads.gtrace");
	struct gt_trailer t = { .end_ts = 9000000001ull };
	struct run r = { 0 };

	(void)state;
	w_open(path);
	/* start_ts is 1: times print from there */
	w_libload(1000000001ull, 7, 1004000001ull, 1005000001ull, GT_LL_HELD, "/w/libcuda.so.1");
	w_libload(2000000001ull, 8, 2500000001ull, 0, GT_LL_JOB, "/x/libcuda.so.1");
	w_libload(3000000001ull, 9, 0, 4000000001ull, GT_LL_ATTACH_FAILED, "/y/lib\x1b[2Jcuda.so.1");
	w_libload(5000000001ull, 10, 6500000001ull, 6000000001ull, GT_LL_TIMEOUT, "libcuda.so");
	assert_int_equal(trace_writer__finish(W, &t), 0);
	trace_writer__free(W);
	W = NULL;
	run_dump(path, true, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(load_row(r.out, "loads"), 4);
	assert_int_equal(load_row(r.out, "held"), 1);
	assert_int_equal(load_row(r.out, "hold time max (ns)"), 5000000);
	assert_int_equal(load_row(r.out, "timed out"), 1);
	assert_int_equal(load_row(r.out, "attach failed"), 1);
	assert_int_equal(load_row(r.out, "not held"), 1);
	assert_int_equal(load_row(r.out, "gaps"), 3);
	assert_non_null(strstr(r.out, "\n  pid 7 held 5000000 ns: /w/libcuda.so.1\n"));
	assert_non_null(strstr(r.out, "\n  pid 8 gap +2.000000..+2.500000 s (not held: a job of a "
				     "job-control shell): /x/libcuda.so.1\n"));
	/* held, then its probes failed: from its continuation to the end */
	assert_non_null(strstr(r.out, "\n  pid 9 gap +4.000000..end +9.000000 s (its probes could not "
				     "be attached): /y/lib\\x1b[2Jcuda.so.1\n"));
	assert_non_null(strstr(r.out, "\n  pid 10 gap +6.000000..+6.500000 s (held, continued at the bound "
				     "before its probes were attached): libcuda.so\n"));
	assert_null(strchr(r.out, '\x1b'));
	/* they are no unknown records */
	assert_int_equal(row_value(r.out, "\ndecoder\n", "unknown_records", 0), 0);
	run_free(&r);

	/* none: no such section */
	write_trace(tmp_path("sum.gtrace"), true);
	run_dump(tmp_path("sum.gtrace"), true, &r);
	assert_null(strstr(r.out, "libcuda loads"));
	run_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_dump");
}

static int group_teardown(void **state)
{
	static const char *const files[] = {
		"full.gtrace", "sum.gtrace", "cut.gtrace", "notes.txt", "long.gtrace",
		"merged.gtrace", "loads.gtrace",
	};

	(void)state;
	return tu_tmpdir_clean(files, sizeof(files) / sizeof(files[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_lines),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_escapes),
		cmocka_unit_test(test_gpu_lines),
		cmocka_unit_test(test_gpu_summary),
		cmocka_unit_test(test_libload_summary),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
