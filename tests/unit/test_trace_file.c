// SPDX-License-Identifier: MIT
/*
 * Unit tests of the .gtrace writer and reader (user/format/trace_file.c): round
 * trips, rewinding, the chunk list and seeking, the errors the API promises.
 * The byte offsets used to take files apart are the ones docs/FORMAT.md
 * documents, so these tests also hold the document to the code.  The reader
 * on damaged files is tested in test_trace_file_damage.c, the header
 * options' parsers in test_trace_file_options.c; the fixtures are
 * trace_file_fixtures.h's.
 */
#include <errno.h>
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
#include <cmocka.h>
#include "format/trace_file.h"
#include "trace_file_fixtures.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_writer_counts_bytes),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_exists_and_force),
		cmocka_unit_test(test_mode_0600),
		cmocka_unit_test(test_rewind),
		cmocka_unit_test(test_chunks_seek),
		cmocka_unit_test(test_invalid_record_size),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
