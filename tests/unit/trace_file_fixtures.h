/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the unit tests of the .gtrace writer and reader
 * (test_trace_file.c, test_trace_file_damage.c): a temporary directory per
 * test group, whole files read and written, the chunks of a file as
 * docs/FORMAT.md lays them out, a deterministic mix of every record type
 * written as a trace and read back against what was written.  Each test is
 * one .c file compiled alone, so everything here is static (inline where it
 * is a function) and each test takes what it uses.
 */
#ifndef GTRACE_TEST_TRACE_FILE_FIXTURES_H
#define GTRACE_TEST_TRACE_FILE_FIXTURES_H

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "format/trace_file.h"

static char tmpdir[64];

static inline const char *tmp_path(const char *name)
{
	static char buf[2][128];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tmpdir, name);
	return buf[which];
}

/* ------------------------------------------------------------ file helpers */

static inline uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n ? n : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
	*len = n;
	return buf;
}

static inline void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static inline uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* Chunks as FORMAT.md lays them out: offset, kind, compressed size, record count. */
struct chunk_pos {
	size_t off;
	uint16_t kind;
	uint32_t csize;
	uint32_t nrec;
};

static inline int parse_chunks(const uint8_t *buf, size_t len, struct chunk_pos *c, int max)
{
	size_t off = le32(buf + 12);	/* header_len */
	int n = 0;

	while (off + 40 <= len && n < max) {
		assert_memory_equal(buf + off, "GTCK", 4);
		c[n].off = off;
		c[n].kind = le16(buf + off + 4);
		c[n].csize = le32(buf + off + 8);
		c[n].nrec = le32(buf + off + 32);
		off += 40 + c[n].csize;
		n++;
	}
	assert_int_equal(off, len);	/* the chunks end exactly at the file's end */
	return n;
}

/* ----------------------------------------------------------------- records */

/* Every record a test wrote, back to back, to compare with what comes back. */
struct expect {
	uint8_t *buf;
	size_t len, cap;
	size_t *offs;
	unsigned n, ncap;
};

static inline void expect_add(struct expect *e, const struct gt_hdr *rec)
{
	if (e->len + rec->size > e->cap) {
		e->cap = (e->cap + rec->size) * 2;
		e->buf = realloc(e->buf, e->cap);
		assert_non_null(e->buf);
	}
	if (e->n == e->ncap) {
		e->ncap = e->ncap ? e->ncap * 2 : 256;
		e->offs = realloc(e->offs, e->ncap * sizeof(*e->offs));
		assert_non_null(e->offs);
	}
	e->offs[e->n++] = e->len;
	memcpy(e->buf + e->len, rec, rec->size);
	e->len += rec->size;
}

static inline void expect_free(struct expect *e)
{
	free(e->buf);
	free(e->offs);
	memset(e, 0, sizeof(*e));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static inline void hdr_init(struct gt_hdr *h, unsigned i, uint16_t type, size_t size)
{
	/* mostly rising, sometimes behind: records from several CPUs interleave */
	h->ts = 1000000000ull + i * 1000ull - (i % 5 == 3 ? 2500 : 0);
	h->pid = 4000 + i % 3;
	h->tid = 5000 + i % 7;
	h->type = type;
	h->size = size;
	h->api = type == GT_REC_CALL || type == GT_REC_LAUNCH || type == GT_REC_RET ? 1 + i % 90 : 0;
	h->cpu = i % 16;
}

static inline void counters_fill(struct gt_counters *c, uint64_t base)
{
	uint64_t *v = (uint64_t *)c;

	for (size_t k = 0; k < sizeof(*c) / 8; k++)
		v[k] = base + k;
}

/* Builds record i of a deterministic mix of every record type in buf
 * (at least 64 KiB, zeroed by the caller). */
static inline struct gt_hdr *make_record(unsigned i, uint8_t *buf)
{
	struct gt_hdr *h = (struct gt_hdr *)buf;
	size_t n;

	switch (i % 8) {
	case 0: {
		struct gt_call *c = (void *)buf;

		hdr_init(h, i, GT_REC_CALL, sizeof(*c));
		for (int k = 0; k < GT_CALL_NARGS; k++)
			c->args[k] = rng();
		break;
	}
	case 1: {
		struct gt_launch *l = (void *)buf;

		hdr_init(h, i, GT_REC_LAUNCH, sizeof(*l));
		l->func = 0x7f0000000000ull + (rng() & 0xfff0);
		l->stream = i % 3 ? 0 : 0x5500 + i;
		l->grid[0] = 1 + i % 1024;
		l->grid[1] = l->grid[2] = 1;
		l->block[0] = 256;
		l->block[1] = l->block[2] = 1;
		l->shmem = i % 4 ? 0 : 4096;
		l->flags = i % 11 ? 0 : GT_LAUNCH_COOPERATIVE;
		break;
	}
	case 2: case 5: {
		struct gt_ret *r = (void *)buf;

		hdr_init(h, i, GT_REC_RET, sizeof(*r));
		r->out = rng();
		r->ret = i % 13 ? 0 : 700;
		r->flags = GT_RET_OUT;
		break;
	}
	case 3: {
		struct gt_call_str *c = (void *)buf;

		n = 1 + rng() % 300;
		hdr_init(h, i, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n + 1));
		c->args[0] = rng();
		for (size_t k = 0; k < n; k++)
			c->str[k] = 'a' + rng() % 26;
		c->len = n + 1;
		break;
	}
	case 4: {
		struct gt_proc_evt *p = (void *)buf;

		hdr_init(h, i, GT_REC_EXEC + i % 3, sizeof(*p));
		p->ppid = 1;
		p->exit_code = i % 3 == 2 ? 256 : 0;
		snprintf(p->comm, sizeof(p->comm), "proc%u", i);
		break;
	}
	case 6: {
		struct gt_name *nm = (void *)buf;

		n = snprintf(nm->str, 200, "_Z%uvoid_kernel_%u", i, i);
		hdr_init(h, i, GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n + 1));
		nm->key = rng();
		nm->kind = GT_NAME_KERNEL_MEM;
		nm->len = n + 1;
		break;
	}
	default: {
		struct gt_stats *s = (void *)buf;

		hdr_init(h, i, GT_REC_STATS, sizeof(*s));
		counters_fill(&s->c, i * 100ull);
		break;
	}
	}
	return h;
}

static const struct gt_file_info test_info = {
	.clock_id = 1,
	.realtime_offset_ns = 1712345678123456789ll,
	.start_ts = 999999000ull,
	.host = "testhost",
	.kernel = "6.18.0-test",
	.cmdline = "gtrace-bpf record -o out.gtrace -- ./train.py",
	.options = "buffer=64M chunk=16K",
};

/* Writes records [0, n) of the mix to path and a trailer whose end_ts and
 * counters come from t (may be NULL); e collects the records. */
static inline void write_trace(const char *path, unsigned n, size_t chunk_bytes, bool force,
			       const struct gt_trailer *t, struct expect *e)
{
	struct trace_writer_opts opts = { .chunk_bytes = chunk_bytes, .force = force };
	struct trace_writer *w = NULL;
	static uint8_t buf[65536];

	assert_int_equal(trace_writer__create(path, &test_info, &opts, &w), 0);
	for (unsigned i = 0; i < n; i++) {
		memset(buf, 0, sizeof(buf));
		struct gt_hdr *rec = make_record(i, buf);

		assert_int_equal(trace_writer__append(w, rec), 0);
		if (e)
			expect_add(e, rec);
	}
	assert_int_equal(trace_writer__records(w), n);
	assert_int_equal(trace_writer__finish(w, t), 0);
	trace_writer__free(w);
}

/* Reads path to its end, checking every record against e in order; returns
 * how many came back and leaves the reader open in *out. */
static inline unsigned read_compare(const char *path, const struct expect *e,
				     struct trace_reader **out)
{
	const struct gt_hdr *rec;
	const char *msg = "unset";
	unsigned n = 0;
	int ret;

	assert_int_equal(trace_reader__open(path, out, &msg), 0);
	assert_null(msg);
	while ((ret = trace_reader__next(*out, &rec)) == 1) {
		assert_true(n < e->n);
		assert_int_equal((uintptr_t)rec % 8, 0);
		assert_int_equal(rec->size, ((const struct gt_hdr *)(e->buf + e->offs[n]))->size);
		assert_memory_equal(rec, e->buf + e->offs[n], rec->size);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(trace_reader__records(*out), n);
	/* the end is sticky */
	assert_int_equal(trace_reader__next(*out, &rec), 0);
	return n;
}

/* Reads path to its end without comparing; the reader stays open in *out. */
static inline unsigned count_records(const char *path, struct trace_reader **out)
{
	const struct gt_hdr *rec;
	unsigned n = 0;

	assert_int_equal(trace_reader__open(path, out, NULL), 0);
	while (trace_reader__next(*out, &rec) == 1)
		n++;
	return n;
}

static inline unsigned records_before(const struct chunk_pos *c, int k)
{
	unsigned n = 0;

	for (int i = 0; i < k; i++)
		n += c[i].nrec;
	return n;
}

/* -------------------------------------------------------------- fixtures */

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static inline int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/gtrace-test-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int group_teardown(void **state)
{
	(void)state;
	/* also removes what a failed test left behind */
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#endif /* GTRACE_TEST_TRACE_FILE_FIXTURES_H */
