/* SPDX-License-Identifier: MIT */
/*
 * Shared by the Perfetto exporter's unit tests: small traces written with
 * trace_writer and exported into a pftrace_model (pftrace_model.h), which
 * checks the rules trace_processor relies on while it decodes.
 */
#ifndef GTRACE_TEST_PERFETTO_FIXTURES_H
#define GTRACE_TEST_PERFETTO_FIXTURES_H

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

static inline void w_open_at(const char *path, uint64_t start_ts, int64_t real_off)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = start_ts,
		.realtime_offset_ns = real_off, .host = "testhost", .kernel = "6.18",
		.cmdline = "gtrace-bpf record", .options = "",
	};
	tu_w_create(path, &info);
}

static inline void w_open(const char *path)
{
	w_open_at(path, START_TS, REAL_OFF);
}

static inline void w_close(void)
{
	assert_int_equal(trace_writer__finish(W, NULL), 0);
	trace_writer__free(W);
	W = NULL;
}

static inline void w_put(void)
{
	tu_w_append(rbuf);
}

static inline void hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid, unsigned api)
{
	tu_hdr(type, size, ts, pid, tid, api, 1);
}

/* The process of the calls w_call, w_ret and w_launch write. */
static uint32_t w_pid = 100;

static inline void w_call(uint64_t ts, uint32_t tid, unsigned api, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct gt_call *c = (void *)rbuf;

	hdr(GT_REC_CALL, sizeof(*c), ts, w_pid, tid, api);
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	w_put();
}

static inline void w_ret(uint64_t ts, uint32_t tid, unsigned api, int32_t ret)
{
	struct gt_ret *r = (void *)rbuf;

	hdr(GT_REC_RET, sizeof(*r), ts, w_pid, tid, api);
	r->ret = ret;
	w_put();
}

static inline void w_launch(uint64_t ts, uint32_t tid, uint64_t func)
{
	struct gt_launch *l = (void *)rbuf;

	hdr(GT_REC_LAUNCH, sizeof(*l), ts, w_pid, tid, API(cuLaunchKernel));
	l->func = func;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	w_put();
}

static inline void w_name(uint64_t ts, uint16_t kind, uint64_t key, const char *s)
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

static inline void w_proc(uint16_t type, uint64_t ts, uint32_t pid, const char *comm, int32_t code)
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
static inline int export_file(const char *path, struct model *m, const char **why)
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

/* Queries of an exported model. */
/* The events of the model on track uuid that begin a slice named name. */
static inline int count_slices(const struct model *m, uint64_t track, const char *name)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		n += m->ev[i].track == track && m->ev[i].type == 1 && !strcmp(m->ev[i].name, name);
	return n;
}

static inline const struct ev *event_at(const struct model *m, uint64_t track, uint64_t ts, int type)
{
	for (int i = 0; i < m->nev; i++)
		if (m->ev[i].track == track && m->ev[i].ts == ts && m->ev[i].type == type)
			return &m->ev[i];
	fail_msg("no event of type %d at %llu on track %llu", type, (unsigned long long)ts,
		 (unsigned long long)track);
	return NULL;
}

static inline bool on_gpu_track(const struct model *m, const struct ev *e)
{
	for (int i = 0; i < m->ntrk; i++)
		if (m->trk[i].uuid == e->track)
			return !strncmp(m->trk[i].name, "GPU ", 4);
	return false;
}

/* The values of counter track t in time order into ts[] and v[] (at most
 * max); how many.  Every event on t must be a double counter value. */
static inline int pf_counter_values(const struct model *m, const struct trk *t, uint64_t *ts,
				    double *v, int max)
{
	int n = 0, k;
	struct ev **e = track_events((struct model *)m, t->uuid, &k);

	for (int i = 0; i < k && n < max; i++) {
		assert_int_equal(e[i]->type, 4);	/* TrackEvent.TYPE_COUNTER */
		assert_true(e[i]->is_double);
		ts[n] = e[i]->ts;
		v[n++] = e[i]->value;
	}
	free(e);
	return n;
}

static inline int pf_group_setup(const char *name)
{
	return tu_tmpdir_make(name);
}

/* Removes the directory of a test file with every trace it wrote. */
static inline int pf_group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

#endif
