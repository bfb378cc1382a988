/* SPDX-License-Identifier: MIT */
/*
 * Scaffolding shared by the unit tests of dump, the exports and stats: a
 * temporary directory made per test group and the paths in it, a trace
 * written record by record with trace_writer from one record buffer, the
 * out and err of a run captured in memory streams, and reading a whole
 * file.  Each test is one .c file compiled alone, so everything here is
 * static (inline where it is a function) and each test takes what it uses.
 */
#ifndef GTRACE_TEST_UTIL_H
#define GTRACE_TEST_UTIL_H

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "format/records.h"
#include "format/trace_file.h"

/* ------------------------------------------------------------ temporary directory */

static char tmpdir[64] __attribute__((unused));

/* tmpdir/name; the last four results stay valid. */
static inline const char *tmp_path(const char *name)
{
	static char buf[4][160];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

/* Makes tmpdir as /tmp/<name>.XXXXXX; 0 or -1, for a group setup. */
static inline int tu_tmpdir_make(const char *name)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", name);
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes files[0..n-1] from tmpdir, then tmpdir, which must then be empty. */
static inline int tu_tmpdir_clean(const char *const *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		unlink(tmp_path(files[i]));
	return rmdir(tmpdir);
}

static inline int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes tmpdir and everything under it. */
static inline int tu_tmpdir_remove_all(void)
{
	return nftw(tmpdir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------ trace writing */

static struct trace_writer *W __attribute__((unused));
static _Alignas(8) unsigned char rbuf[8192] __attribute__((unused));

/* Creates path (overwriting it) with the header info into W. */
static inline void tu_w_create(const char *path, const struct gt_file_info *info)
{
	struct trace_writer_opts o = { .force = true };

	assert_int_equal(trace_writer__create(path, info, &o, &W), 0);
}

static inline void tu_w_append(const void *rec)
{
	assert_int_equal(trace_writer__append(W, rec), 0);
}

/* Clears the first size bytes of rbuf and fills in its record header. */
static inline void *tu_hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid,
			   unsigned api, uint16_t cpu)
{
	struct gt_hdr *h = (void *)rbuf;

	memset(rbuf, 0, size);
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = (uint16_t)size;
	h->api = (uint16_t)api;
	h->cpu = cpu;
	return h;
}

/* ------------------------------------------------------------ captured output */

struct out {
	char *buf;
	size_t len;
};

/* What a run wrote on out and err, and what it returned. */
struct run {
	char *out, *err;
	size_t out_len, err_len;
	int rc;
};

static inline FILE *tu_memstream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	assert_non_null(f);
	return f;
}

/* Opens the out and err streams of r. */
static inline void tu_run_open(struct run *r, FILE **out, FILE **err)
{
	*out = tu_memstream(&r->out, &r->out_len);
	*err = tu_memstream(&r->err, &r->err_len);
}

static inline void tu_run_close(FILE *out, FILE *err)
{
	fclose(out);
	fclose(err);
}

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

/* The whole of path as a string ("" when empty), or NULL if it cannot be opened. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len;

	if (!f)
		return NULL;
	len = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (len == (size_t)-1) {
		free(buf);
		return strdup("");
	}
	return buf;
}

/* ------------------------------------------------------------ the damage rule */

/* Records of path too short for their type, counted here record by record
 * (the readers' rule makes them damage: status 1 and one line); *nrec: all
 * its records.  The file must be otherwise whole. */
static inline uint64_t tu_bad_records(const char *path, uint64_t *nrec)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	uint64_t bad = 0, n = 0;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	while (trace_reader__next(r, &h) > 0) {
		n++;
		bad += h->size < gt_rec__min_size(h->type);
	}
	assert_false(trace_reader__truncated(r));
	trace_reader__close(r);
	*nrec = n;
	return bad;
}

/* A reader's status and stderr on path as the rule has them: 0 and nothing
 * for a whole file; for one with records too short for their type, 1 and
 * the one line saying so, how much was read, and kept. */
static inline void tu_check_rule(const char *path, int rc, const char *err, const char *kept)
{
	uint64_t n, bad = tu_bad_records(path, &n);
	char want[1024];

	if (!bad) {
		assert_int_equal(rc, 0);
		assert_string_equal(err, "");
		return;
	}
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s is damaged: %llu record%s too short for %s type; "
		 "read %llu records (", path, (unsigned long long)bad, bad == 1 ? "" : "s",
		 bad == 1 ? "its" : "their", (unsigned long long)n);
	assert_memory_equal(err, want, strlen(want));
	snprintf(want, sizeof(want), "), those skipped; %s\n", kept);
	assert_non_null(strstr(err, want));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err));
}

/* The line of the readers' rule for path, a recording that stopped without
 * its trailer after whole chunks (a killed recorder's file): every byte and
 * every record read, counted here, then kept. */
static inline void tu_killed_line(const char *path, const char *kept, char *buf, size_t len)
{
	struct trace_chunk_pos *c;
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	uint64_t n = 0;
	size_t nc;
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	assert_int_equal(trace_reader__chunks(r, &c, &nc), 0);
	free(c);
	while (trace_reader__next(r, &h) > 0)
		n++;
	assert_true(trace_reader__truncated(r));
	assert_non_null(strstr(trace_reader__damage(r), "with no trailer: recording did not finish"));
	snprintf(buf, len, "gtrace-bpf: %s is damaged: %s; read %llu records before it (%zu whole "
		 "chunk%s, %lld of %lld bytes); %s\n", path, trace_reader__damage(r),
		 (unsigned long long)n, nc, nc == 1 ? "" : "s", (long long)st.st_size,
		 (long long)st.st_size, kept);
	trace_reader__close(r);
}

#endif /* GTRACE_TEST_UTIL_H */
