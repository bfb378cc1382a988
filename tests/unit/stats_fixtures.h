/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the unit tests of `gtrace-bpf stats` (test_stats.c,
 * test_stats_gpu.c): writing a trace record by record (on the scaffolding
 * of test_util.h), running stats into captured streams, and comparing its
 * output line by line.  Each test is one .c file compiled alone, so
 * everything here is static inline and each test takes what it uses.
 *
 * The trace (pid 100 "app --tag "x\y"", threads 101-103; pid 200 "worker"):
 *   cuModuleGetFunction 100 ns names 0x4000 vecAdd
 *   cuLaunchKernel x3 of vecAdd: 10, 20, 60 ns (grid 64, 64, 128; block 256)
 *   cuGraphLaunch 9 ns
 *   cuMemcpyHtoD_v2 1000 B in 5 ns, 3000 B in 16 ns; cuMemcpyDtoH_v2 500 B
 *   failing (ret 1) in 3 ns; cuMemsetD32_v2 of 256 words (1024 B) in 7 ns
 *   cuStreamSynchronize 100, 200, 300, 1000 ns, and one with no exit (tid 102)
 *   cuCtxSynchronize with no exit (tid 103)
 *   pid 200: cuLaunchKernel_ptsz of unnamed 0x3e7 40 ns, cuStreamSynchronize
 *   50 ns, exit
 * Worked out:
 *   cuStreamSynchronize over both pids: 50 100 200 300 1000 -> total 1650,
 *   mean 330, median 200, sample sd sqrt(598000 / 4) = 386.65; its pid 100
 *   part: 100 200 300 1000 -> median 250 (even), sd sqrt(500000 / 3) = 408.25
 *   cuLaunchKernel: 10 20 60 -> mean 30, median 20, sd sqrt(1400 / 2) = 26.46
 *   cuMemcpyHtoD_v2: 5 16 -> mean = median = 10.5, sd sqrt(60.5) = 7.78
 *   all api time 1920 ns: 1650 -> 85.9 %, 100 -> 5.2 %, 90 -> 4.7 %, ...
 */
#ifndef GTRACE_TEST_STATS_FIXTURES_H
#define GTRACE_TEST_STATS_FIXTURES_H

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
#include "stats/stats.h"
#include "format/trace_file.h"
#include "test_util.h"

#define API(x) GT_API_##x

/* ------------------------------------------------------------ trace building */

static inline void w_open(const char *path)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 1,
		.host = "testhost", .kernel = "6.18", .cmdline = "gtrace-bpf record",
		.options = "",
	};
	tu_w_create(path, &info);
}

static inline void w_put(const void *rec)
{
	tu_w_append(rec);
}

static inline void w_close(bool finish)
{
	if (finish)
		assert_int_equal(trace_writer__finish(W, &(struct gt_trailer){ .end_ts = 99999 }), 0);
	trace_writer__free(W);
	W = NULL;
}

static inline void *hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid,
			unsigned api)
{
	return tu_hdr(type, size, ts, pid, tid, api, 1);
}

static inline void w_call(uint64_t ts, uint32_t pid, uint32_t tid, unsigned api, uint64_t a0,
			  uint64_t a1, uint64_t a2)
{
	struct gt_call *c = hdr(GT_REC_CALL, sizeof(*c), ts, pid, tid, api);

	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	w_put(c);
}

static inline void w_ret(uint64_t ts, uint32_t pid, uint32_t tid, unsigned api, int32_t ret,
			 uint64_t out, uint32_t flags)
{
	struct gt_ret *r = hdr(GT_REC_RET, sizeof(*r), ts, pid, tid, api);

	r->ret = ret;
	r->out = out;
	r->flags = flags;
	w_put(r);
}

/* A call on pid 100 / tid 101 and its successful exit dur ns later. */
static inline void w_call_ret(uint64_t ts, uint64_t dur, unsigned api, uint64_t a0, uint64_t a1,
			      uint64_t a2)
{
	w_call(ts, 100, 101, api, a0, a1, a2);
	w_ret(ts + dur, 100, 101, api, 0, 0, 0);
}

/* A launch entry; its exit dur ns later, or none (dur == UINT64_MAX: recorded
 * at entry only, flagged GT_LAUNCH_NO_EXIT as the recorder does by default). */
static inline void w_launch(uint64_t ts, uint64_t dur, uint32_t pid, uint32_t tid, unsigned api,
			    uint64_t func, uint32_t gridx)
{
	struct gt_launch *l = hdr(GT_REC_LAUNCH, sizeof(*l), ts, pid, tid, api);

	l->func = func;
	l->stream = 7;
	l->grid[0] = gridx; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	if (dur == UINT64_MAX)
		l->flags = GT_LAUNCH_NO_EXIT;
	w_put(l);
	if (dur != UINT64_MAX)
		w_ret(ts + dur, pid, tid, api, 0, 0, 0);
}

#define ENTRY_ONLY UINT64_MAX

static inline void w_str(uint16_t type, uint64_t ts, uint32_t pid, unsigned api, uint64_t key,
			 uint16_t kind, const char *s)
{
	size_t n = strlen(s) + 1;

	if (type == GT_REC_CALL_STR) {
		struct gt_call_str *c = hdr(type, GT_REC_ALIGN(sizeof(*c) + n), ts, pid, 101, api);

		c->args[1] = key;	/* cuModuleGetFunction(&f, module, name) */
		c->len = (uint16_t)n;
		memcpy(c->str, s, n);
		w_put(c);
	} else {
		struct gt_name *nm = hdr(type, GT_REC_ALIGN(sizeof(*nm) + n), ts, pid, 0, 0);

		nm->key = key;
		nm->kind = kind;
		nm->len = (uint16_t)n;
		memcpy(nm->str, s, n);
		w_put(nm);
	}
}

static inline void w_proc(uint16_t type, uint64_t ts, uint32_t pid, const char *comm)
{
	struct gt_proc_evt *p = hdr(type, sizeof(*p), ts, pid, pid, 0);

	p->ppid = 1;
	memcpy(p->comm, comm, strlen(comm));	/* shorter than 16 here */
	w_put(p);
}

/* The trace of the header comment.  !finish: a crash before the last chunk,
 * which holds pid 200's exit only. */
static inline void write_trace(const char *path, bool finish)
{
	struct gt_stats *st;

	w_open(path);
	w_str(GT_REC_NAME, 500, 100, 0, 100, GT_NAME_PROCESS, "app --tag \"x\\y\"");
	w_proc(GT_REC_EXEC, 600, 200, "worker");
	w_str(GT_REC_CALL_STR, 1000, 100, API(cuModuleGetFunction), 0x3000, 0, "_Z6vecAddPfS_S_i");
	w_ret(1100, 100, 101, API(cuModuleGetFunction), 0, 0x4000, GT_RET_OUT);
	w_launch(2000, 10, 100, 101, API(cuLaunchKernel), 0x4000, 64);
	w_launch(2100, 20, 100, 101, API(cuLaunchKernel), 0x4000, 64);
	w_launch(2200, 60, 100, 101, API(cuLaunchKernel), 0x4000, 128);
	w_call_ret(2300, 9, API(cuGraphLaunch), 77, 7, 0);
	w_call_ret(3000, 5, API(cuMemcpyHtoD_v2), 0x10000, 0x2000, 1000);
	w_call_ret(3100, 16, API(cuMemcpyHtoD_v2), 0x10000, 0x2000, 3000);
	w_call(3200, 100, 101, API(cuMemcpyDtoH_v2), 0x2000, 0x10000, 500);
	w_ret(3203, 100, 101, API(cuMemcpyDtoH_v2), 1, 0, 0);
	w_call_ret(3300, 7, API(cuMemsetD32_v2), 0x10000, 0x40e00000, 256);
	/* the recorder's snapshot belongs to no process */
	st = hdr(GT_REC_STATS, sizeof(*st), 3500, 0, 0, 0);
	st->c.events = 20;
	w_put(st);
	w_call_ret(4000, 100, API(cuStreamSynchronize), 7, 0, 0);
	w_call_ret(4200, 200, API(cuStreamSynchronize), 7, 0, 0);
	w_call_ret(4500, 300, API(cuStreamSynchronize), 7, 0, 0);
	w_call_ret(5000, 1000, API(cuStreamSynchronize), 7, 0, 0);
	w_call(7000, 100, 102, API(cuStreamSynchronize), 7, 0, 0);
	w_call(7100, 100, 103, API(cuCtxSynchronize), 0, 0, 0);
	w_launch(8000, 40, 200, 200, API(cuLaunchKernel_ptsz), 999, 64);
	w_call(8100, 200, 200, API(cuStreamSynchronize), 8, 0, 0);
	w_ret(8150, 200, 200, API(cuStreamSynchronize), 0, 0, 0);
	assert_int_equal(trace_writer__flush(W), 0);
	w_proc(GT_REC_EXIT, 9000, 200, "worker");
	w_close(finish);
}

/* ------------------------------------------------------------ running stats */

/* CSV of several reports is one file per report (-o BASE): their contents
 * in r->out, each after a line "# <report>", an empty line between them;
 * the files are removed.  Every file must be 0600 (command lines). */
static inline void run_stats_csv_files(const char *path, const char *reports, const char *unit,
				       struct run *r)
{
	struct stats_opts o = { .path = path, .reports = reports, .format = STATS_CSV,
				.timeunit = unit, .output = tmp_path("csv") };
	char base[160], names[1024], *save = NULL;
	FILE *all;

	snprintf(base, sizeof(base), "%s", o.output);
	tu_run_open(r, &o.out, &o.err);
	r->rc = stats__run(&o);
	/* nothing on stdout: it all went to the files */
	fflush(o.out);
	assert_int_equal(r->out_len, 0);
	fclose(o.out);
	fclose(o.err);
	free(r->out);
	all = tu_memstream(&r->out, &r->out_len);
	if (!reports) {
		names[0] = '\0';
		for (int i = 0; stats_report_names[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? "," : "", stats_report_names[i]);
	} else {
		snprintf(names, sizeof(names), "%s", reports);
	}
	/* a damaged input writes its files too (status 1): they are read the same */
	for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		char file[256], *text;
		struct stat st;

		snprintf(file, sizeof(file), "%s_%s.csv", base, n);
		text = slurp(file);
		if (r->rc && !text)
			continue;
		assert_non_null(text);
		assert_int_equal(stat(file, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		fprintf(all, "%s# %s\n%s", ftell(all) ? "\n" : "", n, text);
		free(text);
		unlink(file);
	}
	fclose(all);
}

static inline void run_stats(const char *path, const char *reports, enum stats_format fmt,
			     const char *unit, struct run *r)
{
	struct stats_opts o = { .path = path, .reports = reports, .format = fmt, .timeunit = unit };

	if (fmt == STATS_CSV && (!reports || strchr(reports, ','))) {
		run_stats_csv_files(path, reports, unit, r);
		return;
	}
	tu_run_open(r, &o.out, &o.err);
	r->rc = stats__run(&o);
	tu_run_close(o.out, o.err);
}

/* Compares got with the lines of want (each ends with a newline in got),
 * saying where they first differ. */
static inline void check_text(const char *got, const char *const *want, size_t n)
{
	const char *p = got;

	for (size_t i = 0; i < n; i++) {
		const char *nl = strchr(p, '\n');

		if (!nl || (size_t)(nl - p) != strlen(want[i]) || memcmp(p, want[i], nl - p)) {
			fprintf(stderr, "line %zu\n got: %.*s\nwant: %s\n", i + 1,
				nl ? (int)(nl - p) : (int)strlen(p), p, want[i]);
			fail();
		}
		p = nl + 1;
	}
	if (*p) {
		fprintf(stderr, "extra output after line %zu: %s\n", n, p);
		fail();
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

#endif /* GTRACE_TEST_STATS_FIXTURES_H */
