// SPDX-License-Identifier: MIT
/*
 * Unit tests of the CSV export (user/export/csv.c): a small trace written
 * with trace_writer comes out as exactly the expected rows, one per dump
 * line, with cells quoted per RFC 4180 where names hold commas, quotes or
 * line breaks; a damaged file gives the rows before the damage.
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
#include "export/export.h"
#include "format/trace_file.h"
#include "merged_trace.h"
#include "test_util.h"


/* ------------------------------------------------------------ trace building */

#define API(x) GT_API_##x

static void w_open(const char *path)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 500,
		.host = "testhost", .kernel = "6.18", .cmdline = "gtrace-bpf record", .options = "",
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
		   uint64_t a2, uint64_t a3)
{
	struct gt_call *c = (void *)rbuf;

	hdr(GT_REC_CALL, sizeof(*c), ts, tid, api);
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = a3;
	w_put(c);
}

/* An entry with a string: cuModuleGetFunction(&f, module, name),
 * cuModuleLoad(&m, path). */
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

static void w_ret(uint64_t ts, uint32_t tid, unsigned api, int32_t ret, uint64_t out,
		  uint32_t flags)
{
	struct gt_ret *r = (void *)rbuf;

	hdr(GT_REC_RET, sizeof(*r), ts, tid, api);
	r->ret = ret;
	r->out = out;
	r->flags = flags;
	w_put(r);
}

static void w_launch(uint64_t ts, unsigned api, uint64_t func, uint16_t flags)
{
	struct gt_launch *l = (void *)rbuf;

	hdr(GT_REC_LAUNCH, sizeof(*l), ts, 101, api);
	l->func = func;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 2; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	l->shmem = 512;
	l->flags = flags;
	w_put(l);
}

static void w_proc(uint16_t type, uint64_t ts, const char *comm, int32_t code)
{
	struct gt_proc_evt *p = (void *)rbuf;

	hdr(type, sizeof(*p), ts, 100, 0);
	p->ppid = 1;
	p->exit_code = code;
	memcpy(p->comm, comm, strlen(comm));	/* at most 16, no NUL then */
	w_put(p);
}

#define ODD_KERNEL "k\"x\\y,z\x01\xc3\xa9"

/* finish = false: the last chunk (the exit) never reached the file. */
static void write_trace(const char *path, bool finish)
{
	w_open(path);
	/* a comm that fills its 16 bytes, comma included */
	w_proc(GT_REC_EXEC, 1000, "my,app-with-16ch", 0);
	w_call_str(2000, API(cuModuleGetFunction), 12288, "_Z3addIfEvPT_PKS0_i");
	w_ret(2100, 101, API(cuModuleGetFunction), 0, 16384, GT_RET_OUT);
	w_call_str(2200, API(cuModuleGetFunction), 12288, ODD_KERNEL);
	w_ret(2300, 101, API(cuModuleGetFunction), 0, 20480, GT_RET_OUT);
	w_call_str(2400, API(cuModuleLoad), 0, "dir,1/a\"b\nc\xff.cubin");
	w_ret(2450, 101, API(cuModuleLoad), 0, 12288, GT_RET_OUT);
	w_launch(3000, API(cuLaunchKernel), 16384, 0);
	w_ret(3004, 101, API(cuLaunchKernel), 0, 0, 0);
	w_launch(3100, API(cuLaunchCooperativeKernel), 20480, GT_LAUNCH_COOPERATIVE);
	w_ret(3105, 101, API(cuLaunchCooperativeKernel), 0, 0, 0);
	w_call(3200, 101, API(cuGraphLaunch), 77, 7, 0, 0);
	w_ret(3203, 101, API(cuGraphLaunch), 0, 0, 0);
	w_call(5000, 101, API(cuMemcpyHtoDAsync_v2), 1000000, 2000, 4096, 7);
	w_ret(5010, 101, API(cuMemcpyHtoDAsync_v2), 0, 0, 0);
	w_call(6100, 101, API(cuMemFree_v2), 1000000, 0, 0, 0);
	w_ret(6101, 101, API(cuMemFree_v2), -1, 0, 0);
	w_call(7100, 101, API(cuEventRecord), 9, 7, 0, 0);
	w_ret(7102, 101, API(cuEventRecord), 0, 0, 0);
	w_call(7200, 101, API(cuCtxSynchronize_v2), 5, 0, 0, 0);
	w_ret(7202, 101, API(cuCtxSynchronize_v2), 0, 0, 0);
	w_call(9000, 102, API(cuStreamSynchronize), 7, 0, 0, 0);
	assert_int_equal(trace_writer__flush(W), 0);
	w_proc(GT_REC_EXIT, 10000, "app", 256);
	if (finish)
		assert_int_equal(trace_writer__finish(W, NULL), 0);
	trace_writer__free(W);
	W = NULL;
}

/* ------------------------------------------------------------ expected rows */

static const char header[] =
	"ts,pid,tid,cpu,type,api,dur,ret,failed,incomplete,kernel,mangled,func,"
	"grid_x,grid_y,grid_z,block_x,block_y,block_z,shmem,stream,bytes,kind,dst,src,ptr,"
	"handle,parent,name,path,event,ppid,comm,exit_code,graph,ctx,cooperative,"
	"cgroup,device,cmd,rm,fd,state,next_cpu,src_device,dst_device,"
	"communicator,uid,rank,nranks,seq,count,datatype,op,peer,group,local_rank,world_size,local_world,nccl_ts,"
	"context,stream_id,correlation,launch_ts,launch_tid,causality,by_order,clock_fixed,"
	"source,index,flags,latency_ns,code,wait_ns,suppressed";

/* A row from "column", "cell text" pairs (NULL-terminated), the other cells
 * empty: placed by the header above, not by the code under test. */
static char *row(const char *first, ...)
{
	const char *cols[128], *cells[128] = { 0 };
	char hbuf[sizeof(header)], *save, *c, *out;
	size_t len = 0;
	int n = 0;
	va_list ap;

	memcpy(hbuf, header, sizeof(header));
	for (c = strtok_r(hbuf, ",", &save); c; c = strtok_r(NULL, ",", &save))
		cols[n++] = c;
	va_start(ap, first);
	for (const char *k = first; k; k = va_arg(ap, const char *)) {
		const char *v = va_arg(ap, const char *);
		int i;

		for (i = 0; i < n && strcmp(cols[i], k); i++)
			;
		assert_true(i < n);
		cells[i] = v;
	}
	va_end(ap);
	out = calloc(1, 4096);
	assert_non_null(out);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, 4096 - len, "%s%s", i ? "," : "",
					cells[i] ? cells[i] : "");
	return out;
}

#define CALL(ts, tid, type, api, dur, ret, failed)				\
	"ts", ts, "pid", "100", "tid", tid, "cpu", "2", "type", type, "api", api, \
	"dur", dur, "ret", ret, "failed", failed
#define LAUNCH_DIMS							\
	"grid_x", "64", "grid_y", "2", "grid_z", "1", "block_x", "256", "block_y", "1", \
	"block_z", "1", "shmem", "512", "stream", "7"

static char *exp_rows[32];
static int nexp;

static void expect_rows(void)
{
	nexp = 0;
	exp_rows[nexp++] = strdup(header);
	exp_rows[nexp++] = row("ts", "1000", "pid", "100", "tid", "100", "cpu", "2",
			       "type", "process", "event", "exec", "ppid", "1",
			       "comm", "\"my,app-with-16ch\"", NULL);
	exp_rows[nexp++] = row(CALL("2000", "101", "module", "cuModuleGetFunction", "100", "0", "false"),
			       "handle", "16384", "parent", "12288", "name", "_Z3addIfEvPT_PKS0_i", NULL);
	exp_rows[nexp++] = row(CALL("2200", "101", "module", "cuModuleGetFunction", "100", "0", "false"),
			       "handle", "20480", "parent", "12288",
			       "name", "\"k\"\"x\\y,z\\x01\xc3\xa9\"", NULL);
	/* control characters and bytes that are not UTF-8 written out (as
	 * the tables show them): no line break or escape comes out raw */
	exp_rows[nexp++] = row(CALL("2400", "101", "module", "cuModuleLoad", "50", "0", "false"),
			       "handle", "12288", "path", "\"dir,1/a\"\"b\\nc\\xff.cubin\"", NULL);
	exp_rows[nexp++] = row(CALL("3000", "101", "launch", "cuLaunchKernel", "4", "0", "false"),
			       "kernel", "\"void add<float>(float*, float const*, int)\"",
			       "mangled", "_Z3addIfEvPT_PKS0_i", "func", "16384", LAUNCH_DIMS, NULL);
	exp_rows[nexp++] = row(CALL("3100", "101", "launch", "cuLaunchCooperativeKernel", "5", "0", "false"),
			       "kernel", "\"k\"\"x\\y,z\\x01\xc3\xa9\"", "mangled", "\"k\"\"x\\y,z\\x01\xc3\xa9\"",
			       "func", "20480", LAUNCH_DIMS, "cooperative", "true", NULL);
	exp_rows[nexp++] = row(CALL("3200", "101", "launch", "cuGraphLaunch", "3", "0", "false"),
			       "graph", "77", "stream", "7", NULL);
	exp_rows[nexp++] = row(CALL("5000", "101", "memcpy", "cuMemcpyHtoDAsync_v2", "10", "0", "false"),
			       "bytes", "4096", "kind", "HtoD", "dst", "1000000", "src", "2000",
			       "stream", "7", NULL);
	exp_rows[nexp++] = row(CALL("6100", "101", "free", "cuMemFree_v2", "1", "-1", "true"),
			       "ptr", "1000000", NULL);
	exp_rows[nexp++] = row(CALL("7100", "101", "sync", "cuEventRecord", "2", "0", "false"),
			       "event", "9", "stream", "7", NULL);
	exp_rows[nexp++] = row(CALL("7200", "101", "sync", "cuCtxSynchronize_v2", "2", "0", "false"),
			       "ctx", "5", NULL);
	exp_rows[nexp++] = row("ts", "9000", "pid", "100", "tid", "102", "cpu", "2", "type", "sync",
			       "api", "cuStreamSynchronize", "incomplete", "true", "stream", "7", NULL);
	exp_rows[nexp++] = row("ts", "10000", "pid", "100", "tid", "100", "cpu", "2",
			       "type", "process", "event", "exit", "ppid", "1", "comm", "app",
			       "exit_code", "256", NULL);
}

static void free_rows(void)
{
	for (int i = 0; i < nexp; i++)
		free(exp_rows[i]);
	nexp = 0;
}

/* ------------------------------------------------------------ helpers */

static int run_writer(const char *path, struct out *o, const char **why)
{
	struct trace_reader *r;
	FILE *f = tu_memstream(&o->buf, &o->len);
	int rc;

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	rc = export_csv__write(r, f, why);
	trace_reader__close(r);
	fclose(f);
	return rc;
}

/* Compares got with want[0..n-1], each followed by "\n"; nothing may follow. */
static void check_rows(const char *got, char *const *want, int n)
{
	const char *p = got;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(want[i]);

		if (strncmp(p, want[i], l) || p[l] != '\n') {
			fprintf(stderr, "row %d\n got: %.*s\nwant: %s\n", i, (int)strcspn(p, "\n"), p,
				want[i]);
			fail();
		}
		p += l + 1;
	}
	assert_string_equal(p, "");
}

/* ------------------------------------------------------------ tests */

static void test_csv_rows(void **state)
{
	const char *path = tmp_path("full.gtrace");
	const char *why = NULL;
	struct out o = { 0 };

	(void)state;
	write_trace(path, true);
	assert_int_equal(run_writer(path, &o, &why), 0);
	expect_rows();
	check_rows(o.buf, exp_rows, nexp);
	free_rows();
	free(o.buf);
}

/* A row per dump line, nothing else: the same decoder, the same calls. */
static void test_rows_match_dump(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct dump_opts d = { .path = path };
	const char *why = NULL;
	struct out o = { 0 }, dl = { 0 };
	FILE *err;
	char *eb = NULL;
	size_t el = 0;
	int rows = 0, lines = 0;
	bool quoted = false;

	(void)state;
	write_trace(path, true);
	assert_int_equal(run_writer(path, &o, &why), 0);
	d.out = open_memstream(&dl.buf, &dl.len);
	d.err = err = open_memstream(&eb, &el);
	assert_int_equal(dump__run(&d), 0);
	fclose(d.out);
	fclose(err);
	/* CSV records: line breaks outside quotes (one is inside a path) */
	for (const char *p = o.buf; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == '\n' && !quoted)
			rows++;
	}
	for (const char *p = dl.buf; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 13);
	assert_int_equal(rows, lines + 1);	/* + the header */
	free(o.buf);
	free(dl.buf);
	free(eb);
}

static void test_csv_truncated(void **state)
{
	const char *path = tmp_path("cut.gtrace");
	const char *why = NULL;
	struct out o = { 0 };

	(void)state;
	write_trace(path, false);
	assert_int_equal(run_writer(path, &o, &why), 0);
	expect_rows();
	/* everything but the exit, whose chunk is lost */
	free(exp_rows[--nexp]);
	check_rows(o.buf, exp_rows, nexp);
	free_rows();
	free(o.buf);
}

/* A write error comes back as the errno, with a reason. */
static void test_write_error(void **state)
{
	const char *path = tmp_path("full.gtrace");
	struct trace_reader *r;
	const char *why = NULL;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	/* unbuffered: the writer's own write fails, not a later fflush */
	setvbuf(f, NULL, _IONBF, 0);
	write_trace(path, true);
	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(export_csv__write(r, f, &why), -ENOSPC);
	assert_non_null(why);
	assert_string_equal(why, strerror(ENOSPC));
	assert_true(ferror(f));
	trace_reader__close(r);
	fclose(f);
}

#define GPU_COMMON(ts, type, dur, stream, corr)					\
	"ts", ts, "pid", "100", "type", type, "dur", dur, "device", "0", "context", "1", \
	"stream_id", stream, "correlation", corr
#define GPU_DIMS							\
	"grid_x", "64", "grid_y", "1", "grid_z", "1", "block_x", "256", "block_y", "1", \
	"block_z", "1", "shmem", "48"

/* A merged trace: a row per GPU kernel, copy, set and NVTX range, in the
 * columns dump names, the link to the call only where there is one. */
static void test_gpu_rows(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	const char *why = NULL;
	struct out o = { 0 };
	char *want[6];
	int rows = 0;

	(void)state;
	mt_file(path);
	assert_int_equal(run_writer(path, &o, &why), 0);
	assert_int_equal(strncmp(o.buf, header, strlen(header)), 0);
	want[0] = row(GPU_COMMON("3500", "gpu_kernel", "1000", "7", "11"),
		      "kernel", "\"vecAdd(float*, float*, float*, int)\"", "mangled", "_Z6vecAddPfS_S_i",
		      GPU_DIMS, "launch_ts", "3000", "launch_tid", "101", NULL);
	want[1] = row(GPU_COMMON("5990", "gpu_kernel", "20", "7", "14"),
		      "kernel", "\"vecAdd(float*, float*, float*, int)\"", "mangled", "_Z6vecAddPfS_S_i",
		      GPU_DIMS, "launch_ts", "6000", "launch_tid", "101", "causality", "true", NULL);
	want[2] = row(GPU_COMMON("4600", "gpu_memcpy", "300", "7", "12"), "bytes", "4194304",
		      "kind", "HtoD", "launch_ts", "4000", "launch_tid", "101", NULL);
	want[3] = row(GPU_COMMON("5100", "gpu_memset", "50", "8", "13"), "bytes", "1048576",
		      "launch_ts", "5000", "launch_tid", "101", NULL);
	/* unlinked: no launch_ts, launch_tid */
	want[4] = row(GPU_COMMON("2000", "gpu_kernel", "100", "7", "99"), "kernel", "relu_kernel",
		      "mangled", "relu_kernel", GPU_DIMS, NULL);
	want[5] = row("ts", "4000", "pid", "100", "tid", "101", "type", "nvtx", "dur", "0",
		      "name", "mark", NULL);
	for (int i = 0; i < 6; i++) {
		char *line = malloc(strlen(want[i]) + 3);

		assert_non_null(line);
		sprintf(line, "\n%s\n", want[i]);
		if (!strstr(o.buf, line)) {
			fprintf(stderr, "no row\n%s\nin\n%s", want[i], o.buf);
			fail();
		}
		free(line);
		free(want[i]);
	}
	/* the header, 9 calls and process events, 8 GPU records, 4 NVTX */
	for (const char *p = o.buf; *p; p++)
		rows += *p == '\n';
	assert_int_equal(rows, 1 + 8 + 8 + 4);
	free(o.buf);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_export_csv");
}

static int group_teardown(void **state)
{
	static const char *const files[] = { "full.gtrace", "cut.gtrace", "merged.gtrace" };

	(void)state;
	return tu_tmpdir_clean(files, sizeof(files) / sizeof(files[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_rows_match_dump),
		cmocka_unit_test(test_csv_truncated),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_gpu_rows),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
