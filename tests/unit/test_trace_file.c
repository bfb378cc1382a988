// SPDX-License-Identifier: MIT
/*
 * Unit tests of the .gtrace writer and reader (user/format/trace_file.c): round
 * trips, damaged files, rewinding, the errors the API promises.  The byte offsets used to
 * cut and corrupt files are the ones docs/FORMAT.md documents, so these tests
 * also hold the document to the code.  The header options' parsers are
 * tested in test_trace_file_options.c.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <cmocka.h>
#include "format/trace_file.h"

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[2][128];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tmpdir, name);
	return buf[which];
}

/* ------------------------------------------------------------ file helpers */

static uint8_t *slurp(const char *path, size_t *len)
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

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* Chunks as FORMAT.md lays them out: offset, kind, compressed size, record count. */
struct chunk_pos {
	size_t off;
	uint16_t kind;
	uint32_t csize;
	uint32_t nrec;
};

static int parse_chunks(const uint8_t *buf, size_t len, struct chunk_pos *c, int max)
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

static void expect_add(struct expect *e, const struct gt_hdr *rec)
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

static void expect_free(struct expect *e)
{
	free(e->buf);
	free(e->offs);
	memset(e, 0, sizeof(*e));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void hdr_init(struct gt_hdr *h, unsigned i, uint16_t type, size_t size)
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

static void counters_fill(struct gt_counters *c, uint64_t base)
{
	uint64_t *v = (uint64_t *)c;

	for (size_t k = 0; k < sizeof(*c) / 8; k++)
		v[k] = base + k;
}

/* Builds record i of a deterministic mix of every record type in buf
 * (at least 64 KiB, zeroed by the caller). */
static struct gt_hdr *make_record(unsigned i, uint8_t *buf)
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
static void write_trace(const char *path, unsigned n, size_t chunk_bytes, bool force,
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
static unsigned read_compare(const char *path, const struct expect *e, struct trace_reader **out)
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
static unsigned count_records(const char *path, struct trace_reader **out)
{
	const struct gt_hdr *rec;
	unsigned n = 0;

	assert_int_equal(trace_reader__open(path, out, NULL), 0);
	while (trace_reader__next(*out, &rec) == 1)
		n++;
	return n;
}

static unsigned records_before(const struct chunk_pos *c, int k)
{
	unsigned n = 0;

	for (int i = 0; i < k; i++)
		n += c[i].nrec;
	return n;
}

/* ------------------------------------------------------------------- tests */

static void test_round_trip(void **state)
{
	struct gt_trailer t = { .end_ts = 2000000000ull };
	const char *path = tmp_path("round.gtrace");
	const struct gt_trailer *got;
	struct trace_reader *r;
	struct chunk_pos c[256];
	struct expect e = {};
	uint8_t *file;
	size_t len;
	int nc;

	(void)state;
	counters_fill(&t.counters, 77);
	write_trace(path, 5000, 16384, false, &t, &e);

	file = slurp(path, &len);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 4);			/* several data chunks and the trailer */
	assert_int_equal(c[nc - 1].kind, 2);	/* trailer last */
	for (int i = 0; i < nc - 1; i++)
		assert_int_equal(c[i].kind, 1);
	assert_int_equal(records_before(c, nc - 1), 5000);

	assert_int_equal(read_compare(path, &e, &r), 5000);
	assert_false(trace_reader__truncated(r));
	assert_string_equal(trace_reader__damage(r), "");
	got = trace_reader__trailer(r);
	assert_non_null(got);
	assert_int_equal(got->end_ts, 2000000000ull);
	assert_int_equal(got->records, 5000);
	assert_int_equal(got->chunks, nc - 1);
	assert_memory_equal(&got->counters, &t.counters, sizeof(t.counters));
	assert_true(trace_reader__has_counters(r));
	assert_memory_equal(trace_reader__counters(r), &t.counters, sizeof(t.counters));
	trace_reader__close(r);

	free(file);
	expect_free(&e);
	unlink(path);
}

static void test_writer_counts_bytes(void **state)
{
	const char *path = tmp_path("bytes.gtrace");
	struct trace_writer *w;
	struct gt_hdr h = {};
	struct stat st;
	uint64_t before;

	(void)state;
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(trace_writer__bytes(w), st.st_size);	/* the header */
	before = trace_writer__bytes(w);
	assert_int_equal(trace_writer__flush(w), 0);		/* nothing buffered */
	assert_int_equal(trace_writer__bytes(w), before);

	hdr_init(&h, 1, GT_REC_EXIT, sizeof(h));
	assert_int_equal(trace_writer__append(w, &h), 0);
	assert_int_equal(trace_writer__bytes(w), before);	/* buffered */
	assert_int_equal(trace_writer__flush(w), 0);
	assert_true(trace_writer__bytes(w) > before + 40);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(trace_writer__bytes(w), st.st_size);
	assert_int_equal(trace_writer__append(w, &h), -EINVAL);	/* nothing after the trailer */
	assert_int_equal(trace_writer__finish(w, NULL), -EINVAL);
	trace_writer__free(w);
	unlink(path);
}

static void test_header_fields(void **state)
{
	static char cmdline[5001];
	struct gt_file_info in = {
		.clock_id = 1,
		.realtime_offset_ns = -42424242424242ll,
		.start_ts = 0xfedcba9876543210ull,
		.host = "gpu-node-17.example",
		.kernel = "6.18.0-1-cloud-amd64",
		.cmdline = cmdline,
		.options = NULL,
	};
	const char *path = tmp_path("hdr.gtrace");
	const struct gt_file_info *out;
	struct trace_writer *w;
	struct trace_reader *r;
	const char *msg;
	uint8_t *file;
	size_t len;

	(void)state;
	memset(cmdline, 'x', sizeof(cmdline) - 1);
	assert_int_equal(trace_writer__create(path, &in, NULL, &w), 0);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);

	file = slurp(path, &len);
	assert_memory_equal(file, "GTRACE\0\x1a", 8);
	assert_int_equal(le32(file + 8), 1);		/* version */
	assert_int_equal(le32(file + 12) % 8, 0);	/* header_len keeps chunks 8-aligned */
	assert_int_equal(le32(file + 16), 1);		/* clock id */
	free(file);

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	out = trace_reader__info(r);
	assert_int_equal(out->version, GT_FILE_VERSION);
	assert_int_equal(out->clock_id, 1);
	assert_int_equal(out->realtime_offset_ns, -42424242424242ll);
	assert_int_equal(out->start_ts, 0xfedcba9876543210ull);
	assert_string_equal(out->host, "gpu-node-17.example");
	assert_string_equal(out->kernel, "6.18.0-1-cloud-amd64");
	assert_string_equal(out->cmdline, cmdline);
	assert_string_equal(out->options, "");		/* NULL is written as empty */
	trace_reader__close(r);
	unlink(path);
}

static void test_exists_and_force(void **state)
{
	const char *path = tmp_path("exists.gtrace");
	struct trace_writer *w = (void *)1;
	struct trace_reader *r;
	struct expect e = {};

	(void)state;
	write_trace(path, 10, 0, false, NULL, NULL);
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), -EEXIST);
	assert_null(w);
	/* the existing file is untouched */
	assert_int_equal(count_records(path, &r), 10);
	assert_non_null(trace_reader__trailer(r));
	trace_reader__close(r);

	write_trace(path, 3, 0, true, NULL, &e);
	assert_int_equal(read_compare(path, &e, &r), 3);
	assert_non_null(trace_reader__trailer(r));
	assert_int_equal(trace_reader__trailer(r)->records, 3);
	trace_reader__close(r);
	expect_free(&e);
	unlink(path);
}

static void test_mode_0600(void **state)
{
	struct trace_writer_opts force = { .force = true };
	const char *path = tmp_path("mode.gtrace");
	struct trace_writer *w;
	struct stat st;
	mode_t old;

	(void)state;
	old = umask(022);
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	trace_writer__free(w);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	/* force replaces a world-readable file: the result is still 0600 */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(trace_writer__create(path, &test_info, &force, &w), 0);
	trace_writer__free(w);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(path);

	/* a umask that takes the owner's write bit does not leave the file 0400 */
	umask(0277);
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	trace_writer__free(w);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(path);
}

/* Reads r on from where it is to its end, comparing with e from record
 * 0: what a rewound reader must give again. */
static unsigned reread_compare(struct trace_reader *r, const struct expect *e)
{
	const struct gt_hdr *rec;
	unsigned n = 0;

	while (trace_reader__next(r, &rec) == 1) {
		assert_true(n < e->n);
		assert_memory_equal(rec, e->buf + e->offs[n], rec->size);
		n++;
	}
	assert_int_equal(trace_reader__records(r), n);
	return n;
}

/* A rewound reader gives every record again, from a complete read, from
 * the middle of a chunk and from damage, and forgets the trailer, the
 * counters and the damage until it reads them again. */
static void test_rewind(void **state)
{
	const char *full = tmp_path("rewind.gtrace"), *cut = tmp_path("rewind-cut.gtrace");
	struct gt_trailer t = { .end_ts = 4000000000ull };
	const struct gt_hdr *rec;
	struct trace_reader *r;
	struct chunk_pos c[256];
	struct expect e = {};
	char damage[256];
	uint8_t *file;
	size_t len;
	int nc;

	(void)state;
	counters_fill(&t.counters, 5);
	write_trace(full, 2000, 8192, false, &t, &e);
	assert_int_equal(read_compare(full, &e, &r), 2000);
	assert_non_null(trace_reader__trailer(r));
	trace_reader__rewind(r);
	assert_null(trace_reader__trailer(r));
	assert_false(trace_reader__has_counters(r));
	assert_int_equal(trace_reader__records(r), 0);
	assert_int_equal(reread_compare(r, &e), 2000);
	assert_non_null(trace_reader__trailer(r));
	assert_memory_equal(trace_reader__counters(r), &t.counters, sizeof(t.counters));
	/* from the middle of the first chunk */
	trace_reader__rewind(r);
	for (int i = 0; i < 10; i++)
		assert_int_equal(trace_reader__next(r, &rec), 1);
	trace_reader__rewind(r);
	assert_int_equal(reread_compare(r, &e), 2000);
	assert_false(trace_reader__truncated(r));
	trace_reader__close(r);

	/* a damaged file: the same records, the same damage, again */
	file = slurp(full, &len);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 4);
	spit(cut, file, c[2].off + 20);
	assert_int_equal(read_compare(cut, &e, &r), records_before(c, 2));
	assert_true(trace_reader__truncated(r));
	snprintf(damage, sizeof(damage), "%s", trace_reader__damage(r));
	trace_reader__rewind(r);
	assert_false(trace_reader__truncated(r));
	assert_string_equal(trace_reader__damage(r), "");
	assert_int_equal(reread_compare(r, &e), records_before(c, 2));
	assert_true(trace_reader__truncated(r));
	assert_string_equal(trace_reader__damage(r), damage);
	trace_reader__close(r);

	free(file);
	expect_free(&e);
	unlink(full);
	unlink(cut);
}

/* The chunk headers alone, and a reader started at one of them: the
 * records from there on, the record count and the trailer's check as for a
 * reader that read them all; a damaged chunk ends the list. */
static void test_chunks_seek(void **state)
{
	const char *full = tmp_path("chunks.gtrace"), *cut = tmp_path("chunks-cut.gtrace");
	struct gt_trailer t = { .end_ts = 4000000000ull };
	struct trace_chunk_pos *v;
	const struct gt_hdr *rec;
	struct trace_reader *r;
	struct chunk_pos c[256];
	struct expect e = {};
	const char *msg;
	uint8_t *file;
	size_t len, n;
	unsigned k;
	int nc;

	(void)state;
	write_trace(full, 2000, 8192, false, &t, &e);
	file = slurp(full, &len);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 5);
	assert_int_equal(trace_reader__open(full, &r, &msg), 0);
	assert_int_equal(trace_reader__chunks(r, &v, &n), 0);
	/* the data chunks, not the trailer */
	assert_int_equal(n, (size_t)nc - 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].off, c[i].off);
		assert_int_equal(v[i].index, i);
		assert_int_equal(v[i].nrec, c[i].nrec);
		assert_int_equal(v[i].records, records_before(c, (int)i));
		assert_true(v[i].first_ts <= v[i].last_ts);
	}
	/* the list leaves the reader where it was: at the start */
	assert_int_equal(reread_compare(r, &e), 2000);
	/* from chunk 3 on */
	trace_reader__seek(r, &v[3]);
	for (k = (unsigned)v[3].records; trace_reader__next(r, &rec) == 1; k++)
		assert_memory_equal(rec, e.buf + e.offs[k], rec->size);
	assert_int_equal(k, 2000);
	assert_int_equal(trace_reader__records(r), 2000);
	assert_non_null(trace_reader__trailer(r));
	assert_false(trace_reader__truncated(r));
	free(v);
	trace_reader__close(r);
	/* a damaged chunk 2: the list ends before it */
	file[c[2].off + 9] ^= 0x40;
	spit(cut, file, len);
	assert_int_equal(trace_reader__open(cut, &r, &msg), 0);
	assert_int_equal(trace_reader__chunks(r, &v, &n), 0);
	assert_int_equal(n, 2);
	free(v);
	trace_reader__close(r);
	free(file);
	expect_free(&e);
	unlink(full);
	unlink(cut);
}

static void test_truncated(void **state)
{
	const char *full = tmp_path("full.gtrace"), *cut = tmp_path("cut.gtrace");
	struct gt_trailer t = { .end_ts = 3000000000ull };
	struct trace_reader *r;
	struct chunk_pos c[256];
	struct expect e = {};
	char want[256];
	const char *msg;
	uint8_t *file;
	size_t len, hlen;
	int nc, k;

	(void)state;
	write_trace(full, 3000, 8192, false, &t, &e);
	file = slurp(full, &len);
	hlen = le32(file + 12);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 5);

	/* inside the fixed part of the header: no file */
	spit(cut, file, 30);
	r = (void *)1;
	assert_int_equal(trace_reader__open(cut, &r, &msg), -EBADMSG);
	assert_null(r);
	snprintf(want, sizeof(want), "header is cut short (file ends after 30 of %zu bytes)", hlen);
	assert_string_equal(msg, want);
	spit(cut, file, 12);
	assert_int_equal(trace_reader__open(cut, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "header is cut short (file ends after 12 bytes)");

	/* header only */
	spit(cut, file, hlen);
	assert_int_equal(read_compare(cut, &e, &r), 0);
	assert_true(trace_reader__truncated(r));
	assert_string_equal(trace_reader__damage(r),
			    "file ends after the header with no trailer: recording did not finish");
	assert_null(trace_reader__trailer(r));
	trace_reader__close(r);

	/* inside chunk k's payload: the chunks before it, nothing of chunk k */
	k = 2;
	spit(cut, file, c[k].off + 40 + c[k].csize / 2);
	assert_int_equal(read_compare(cut, &e, &r), records_before(c, k));
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "chunk %d at offset %zu is cut short (file ends after %u of "
		 "%u bytes); no trailer: recording did not finish",
		 k, c[k].off, 40 + c[k].csize / 2, 40 + c[k].csize);
	assert_string_equal(trace_reader__damage(r), want);
	trace_reader__close(r);

	/* inside chunk k's header */
	k = 3;
	spit(cut, file, c[k].off + 20);
	assert_int_equal(read_compare(cut, &e, &r), records_before(c, k));
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "chunk %d at offset %zu is cut short (file ends after 20 of "
		 "40 header bytes); no trailer: recording did not finish", k, c[k].off);
	assert_string_equal(trace_reader__damage(r), want);
	trace_reader__close(r);

	/* right before the trailer: every record, no trailer */
	k = nc - 1;
	spit(cut, file, c[k].off);
	assert_int_equal(read_compare(cut, &e, &r), 3000);
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "file ends after chunk %d (offset %zu) with no trailer: "
		 "recording did not finish", k - 1, c[k].off);
	assert_string_equal(trace_reader__damage(r), want);
	assert_null(trace_reader__trailer(r));
	trace_reader__close(r);

	/* inside the trailer */
	spit(cut, file, len - 1);
	assert_int_equal(read_compare(cut, &e, &r), 3000);
	assert_true(trace_reader__truncated(r));
	assert_non_null(strstr(trace_reader__damage(r), "is cut short"));
	assert_null(trace_reader__trailer(r));
	trace_reader__close(r);

	free(file);
	expect_free(&e);
	unlink(full);
	unlink(cut);
}

static void test_corrupt_chunk(void **state)
{
	const char *full = tmp_path("good.gtrace"), *bad = tmp_path("bad.gtrace");
	struct trace_reader *r;
	struct chunk_pos c[256];
	struct expect e = {};
	char want[256];
	uint8_t *file;
	size_t len;
	int nc, k;

	(void)state;
	write_trace(full, 3000, 8192, false, NULL, &e);
	file = slurp(full, &len);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 5);

	/* one byte of chunk 2's zstd frame: the zstd checksum catches it */
	k = 2;
	file[c[k].off + 40 + c[k].csize / 2] ^= 0x55;
	spit(bad, file, len);
	assert_int_equal(read_compare(bad, &e, &r), records_before(c, k));
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "chunk %d at offset %zu is corrupt (zstd: ", k, c[k].off);
	assert_memory_equal(trace_reader__damage(r), want, strlen(want));
	assert_null(trace_reader__trailer(r));
	trace_reader__close(r);
	file[c[k].off + 40 + c[k].csize / 2] ^= 0x55;

	/* one byte of chunk 3's header: the header crc catches it */
	k = 3;
	file[c[k].off + 12] ^= 0x01;
	spit(bad, file, len);
	assert_int_equal(read_compare(bad, &e, &r), records_before(c, k));
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "chunk %d at offset %zu is corrupt (header checksum mismatch)",
		 k, c[k].off);
	assert_string_equal(trace_reader__damage(r), want);
	trace_reader__close(r);

	free(file);
	expect_free(&e);
	unlink(full);
	unlink(bad);
}

/* Appends a data chunk built by hand (FORMAT.md "Chunks") to the file. */
static void append_raw_chunk(const char *path, const void *recs, size_t len, uint32_t nrec)
{
	size_t bound = ZSTD_compressBound(len), n;
	uint8_t *buf = malloc(40 + bound);
	FILE *f;

	assert_non_null(buf);
	n = ZSTD_compress(buf + 40, bound, recs, len, 3);
	assert_false(ZSTD_isError(n));
	memset(buf, 0, 40);
	memcpy(buf, "GTCK", 4);
	buf[4] = 1;					/* kind: data */
	memcpy(buf + 8, &(uint32_t){ n }, 4);
	memcpy(buf + 12, &(uint32_t){ len }, 4);
	memcpy(buf + 32, &nrec, 4);
	memcpy(buf + 36, &(uint32_t){ crc32(0, buf, 36) }, 4);
	f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 40 + n, f), 40 + n);
	assert_int_equal(fclose(f), 0);
	free(buf);
}

static void test_bad_record_in_chunk(void **state)
{
	const char *path = tmp_path("badrec.gtrace");
	struct {
		struct gt_call call;
		struct gt_hdr bad;
	} recs = {};
	const struct gt_hdr *rec;
	struct trace_writer *w;
	struct trace_reader *r;
	uint64_t hlen;

	(void)state;
	/* a well-formed chunk whose second record claims 12 bytes */
	hdr_init(&recs.call.hdr, 0, GT_REC_CALL, sizeof(recs.call));
	hdr_init(&recs.bad, 1, GT_REC_EXIT, 12);
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	hlen = trace_writer__bytes(w);
	trace_writer__free(w);
	append_raw_chunk(path, &recs, sizeof(recs), 2);

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_memory_equal(rec, &recs.call, sizeof(recs.call));
	assert_int_equal(trace_reader__next(r, &rec), 0);
	assert_true(trace_reader__truncated(r));
	char want[128];
	snprintf(want, sizeof(want), "chunk 0 at offset %llu is corrupt (record 1 at byte 72 has "
		 "size 12)", (unsigned long long)hlen);
	assert_string_equal(trace_reader__damage(r), want);
	trace_reader__close(r);

	/* a chunk whose header counts more records than it holds */
	recs.bad.size = sizeof(recs.bad);
	assert_int_equal(truncate(path, hlen), 0);
	append_raw_chunk(path, &recs, sizeof(recs), 3);
	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(trace_reader__next(r, &rec), 0);
	assert_true(trace_reader__truncated(r));
	snprintf(want, sizeof(want), "chunk 0 at offset %llu is corrupt (holds 2 records, its "
		 "header says 3)", (unsigned long long)hlen);
	assert_string_equal(trace_reader__damage(r), want);
	trace_reader__close(r);
	unlink(path);
}

static void test_not_gtrace(void **state)
{
	const char *path = tmp_path("other.gtrace"), *good = tmp_path("v.gtrace");
	static const char text[] = "hello, this is not a trace at all\n";
	struct trace_reader *r = (void *)1;
	const char *msg = NULL;
	uint8_t *file;
	size_t len;

	(void)state;
	spit(path, text, sizeof(text) - 1);
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_null(r);
	assert_string_equal(msg, "not a gtrace file (bad magic)");

	spit(path, "GTR", 3);	/* a prefix of the magic is not enough */
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "header is cut short (file ends after 3 bytes)");

	spit(path, "", 0);
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "not a gtrace file (empty file)");

	assert_int_equal(trace_reader__open(tmp_path("missing.gtrace"), &r, &msg), -ENOENT);
	assert_string_equal(msg, strerror(ENOENT));

	/* a newer version */
	write_trace(good, 5, 0, false, NULL, NULL);
	file = slurp(good, &len);
	file[8] = 2;
	spit(path, file, len);
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "unsupported format version 2 (this build reads 1)");
	file[8] = 1;

	/* one flipped bit in the host name */
	file[44] ^= 0x20;
	spit(path, file, len);
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "header is corrupt (checksum mismatch)");

	/* an absurd header length */
	file[44] ^= 0x20;
	memcpy(file + 12, &(uint32_t){ 0x7fffffff }, 4);
	spit(path, file, len);
	assert_int_equal(trace_reader__open(path, &r, &msg), -EBADMSG);
	assert_string_equal(msg, "header is corrupt (bad length 2147483647)");

	free(file);
	unlink(path);
	unlink(good);
}

static void test_counters_without_trailer(void **state)
{
	const char *path = tmp_path("stats.gtrace");
	struct gt_stats s1 = {}, s2 = {};
	struct gt_call call = {};
	struct trace_writer *w;
	struct trace_reader *r;

	(void)state;
	hdr_init(&call.hdr, 1, GT_REC_CALL, sizeof(call));
	hdr_init(&s1.hdr, 2, GT_REC_STATS, sizeof(s1));
	hdr_init(&s2.hdr, 3, GT_REC_STATS, sizeof(s2));
	counters_fill(&s1.c, 10);
	counters_fill(&s2.c, 5000);

	/* no stats, no trailer: no counters */
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	assert_int_equal(trace_writer__append(w, &call.hdr), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	trace_writer__free(w);
	assert_int_equal(count_records(path, &r), 1);
	assert_false(trace_reader__has_counters(r));
	assert_int_equal(trace_reader__counters(r)->drop_ringbuf, 0);
	trace_reader__close(r);
	unlink(path);

	/* a crash after two stats records: the second one's counters */
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	assert_int_equal(trace_writer__append(w, &call.hdr), 0);
	assert_int_equal(trace_writer__append(w, &s1.hdr), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	assert_int_equal(trace_writer__append(w, &call.hdr), 0);
	assert_int_equal(trace_writer__append(w, &s2.hdr), 0);
	assert_int_equal(trace_writer__append(w, &call.hdr), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	assert_int_equal(trace_writer__append(w, &s1.hdr), 0);	/* never flushed: lost */
	trace_writer__free(w);

	assert_int_equal(count_records(path, &r), 5);
	assert_true(trace_reader__truncated(r));
	assert_null(trace_reader__trailer(r));
	assert_true(trace_reader__has_counters(r));
	assert_int_equal(trace_reader__counters(r)->events, 5000);
	assert_int_equal(trace_reader__counters(r)->drop_ringbuf, 5001);
	assert_memory_equal(trace_reader__counters(r), &s2.c, sizeof(s2.c));
	trace_reader__close(r);
	unlink(path);
}

static void test_invalid_record_size(void **state)
{
	static const uint16_t bad[] = { 0, 8, 16, 23, 30, 44, 65535 };
	const char *path = tmp_path("inval.gtrace");
	struct trace_writer_opts big = { .chunk_bytes = (64u << 20) + 1 };
	static uint8_t buf[65536];
	struct gt_hdr *h = (struct gt_hdr *)buf;
	struct trace_writer *w = (void *)1;

	(void)state;
	assert_int_equal(trace_writer__create(path, &test_info, &big, &w), -EINVAL);
	assert_null(w);
	assert_int_equal(access(path, F_OK), -1);	/* no file left behind */

	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hdr_init(h, i, GT_REC_CALL, bad[i]);
		assert_int_equal(trace_writer__append(w, h), -EINVAL);
	}
	assert_int_equal(trace_writer__records(w), 0);
	hdr_init(h, 0, GT_REC_EXIT, 24);		/* the smallest valid record */
	assert_int_equal(trace_writer__append(w, h), 0);
	hdr_init(h, 1, GT_REC_NAME, 65528);		/* the largest one */
	assert_int_equal(trace_writer__append(w, h), 0);
	assert_int_equal(trace_writer__records(w), 2);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
	unlink(path);
}

/* A write error (EFBIG here, ENOSPC in the field) leaves the file ending on
 * its last complete chunk, and the writer can carry on once space is back. */
static void test_write_error(void **state)
{
	const char *path = tmp_path("full-disk.gtrace");
	struct trace_writer_opts opts = { .chunk_bytes = 8192 };
	static uint8_t buf[65536];
	struct trace_writer *w;
	struct trace_reader *r;
	struct rlimit old, lim;
	struct expect e = {};
	struct stat st;
	unsigned i, failed_at = 0;
	int err;

	(void)state;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(trace_writer__create(path, &test_info, &opts, &w), 0);
	lim = old;
	lim.rlim_cur = 40000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 0; i < 4000; i++) {
		memset(buf, 0, sizeof(buf));
		struct gt_hdr *rec = make_record(i, buf);

		err = trace_writer__append(w, rec);
		if (err) {
			failed_at = i;
			break;
		}
		expect_add(&e, rec);
	}
	assert_int_equal(err, -EFBIG);
	assert_true(failed_at > 0);
	/* the partial chunk was cut off again */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, trace_writer__bytes(w));
	assert_true(st.st_size <= 40000);

	/* what is on disk reads back as complete chunks */
	assert_true(read_compare(path, &e, &r) > 0);
	assert_true(trace_reader__truncated(r));
	assert_non_null(strstr(trace_reader__damage(r), "with no trailer"));
	trace_reader__close(r);

	/* space is back: the buffered records and the rest go out */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	for (i = failed_at + 1; i < 4000; i++) {
		memset(buf, 0, sizeof(buf));
		struct gt_hdr *rec = make_record(i, buf);

		assert_int_equal(trace_writer__append(w, rec), 0);
		expect_add(&e, rec);
	}
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
	assert_int_equal(read_compare(path, &e, &r), 3999);
	assert_false(trace_reader__truncated(r));
	assert_non_null(trace_reader__trailer(r));
	assert_int_equal(trace_reader__trailer(r)->records, 3999);
	trace_reader__close(r);
	expect_free(&e);
	unlink(path);
	signal(SIGXFSZ, SIG_DFL);
}

/* -------------------------------------------------------------- fixtures */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/gtrace-test-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	/* also removes what a failed test left behind */
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_writer_counts_bytes),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_exists_and_force),
		cmocka_unit_test(test_mode_0600),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_rewind),
		cmocka_unit_test(test_chunks_seek),
		cmocka_unit_test(test_corrupt_chunk),
		cmocka_unit_test(test_bad_record_in_chunk),
		cmocka_unit_test(test_not_gtrace),
		cmocka_unit_test(test_counters_without_trailer),
		cmocka_unit_test(test_invalid_record_size),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
