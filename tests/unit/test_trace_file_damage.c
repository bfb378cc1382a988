// SPDX-License-Identifier: MIT
/*
 * Unit tests of the .gtrace reader (user/format/trace_file.c) on damaged
 * files: cut short anywhere, a corrupt chunk (its zstd frame, its header), a
 * bad record inside a well-formed chunk, files that are not traces or whose
 * header is damaged, and the counters of a recording that never wrote its
 * trailer.  The byte offsets used to cut and corrupt files are the ones
 * docs/FORMAT.md documents, so these tests also hold the document to the
 * code.  The fixtures are trace_file_fixtures.h's; the round trips and the
 * writer are tested in test_trace_file.c.
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
#include <zlib.h>
#include <zstd.h>
#include <cmocka.h>
#include "format/trace_file.h"
#include "trace_file_fixtures.h"

/* ------------------------------------------------------------------- tests */

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

/* The line of the readers' rule (trace_damage__report) for r, as a string. */
static char *rule_line(const struct trace_reader *r, const char *path, int *rc)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	*rc = trace_reader__report_damage(r, path, "kept", f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* How much each kind of damage lets a reader read, and what it loses, as
 * the one line every command prints: counted here from the file's chunks
 * (docs/FORMAT.md's layout). */
static void test_damage_rule(void **state)
{
	const char *full = tmp_path("rule.gtrace"), *bad = tmp_path("rule_bad.gtrace");
	struct trace_reader *r;
	struct trace_damage d;
	struct chunk_pos c[256];
	struct expect e = {};
	char want[1024], *got;
	uint8_t *file;
	size_t len;
	int nc, k, rc;

	(void)state;
	write_trace(full, 3000, 8192, false, NULL, &e);
	file = slurp(full, &len);
	nc = parse_chunks(file, len, c, 256);
	assert_true(nc >= 5);

	/* whole: nothing said, status 0 */
	assert_int_equal(read_compare(full, &e, &r), 3000);
	trace_reader__damage_info(r, &d);
	assert_false(trace_damage__any(&d));
	assert_int_equal(d.records, 3000);
	assert_int_equal(d.chunks, nc - 1);
	got = rule_line(r, full, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(got, "");
	free(got);
	trace_reader__close(r);

	/* chunk k's frame corrupt: k chunks whole, up to its offset, its
	 * records lost */
	k = 2;
	file[c[k].off + 40 + c[k].csize / 2] ^= 0x55;
	spit(bad, file, len);
	file[c[k].off + 40 + c[k].csize / 2] ^= 0x55;
	assert_int_equal(read_compare(bad, &e, &r), records_before(c, k));
	trace_reader__damage_info(r, &d);
	assert_true(trace_damage__any(&d));
	assert_int_equal(d.chunks, k);
	assert_int_equal(d.bytes, c[k].off);
	assert_int_equal(d.size, len);
	assert_int_equal(d.lost, c[k].nrec);
	assert_int_equal(d.bad, 0);
	got = rule_line(r, bad, &rc);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s is damaged: %s; read %u records before it (%d "
		 "whole chunks, %zu of %zu bytes), %u records of the damaged chunk lost; kept\n",
		 bad, trace_reader__damage(r), records_before(c, k), k, c[k].off, len, c[k].nrec);
	assert_string_equal(got, want);
	free(got);
	trace_reader__close(r);

	/* cut inside chunk k: the same, the file's size the cut's */
	k = 3;
	spit(bad, file, c[k].off + 40 + c[k].csize / 2);
	assert_int_equal(read_compare(bad, &e, &r), records_before(c, k));
	trace_reader__damage_info(r, &d);
	assert_int_equal(d.chunks, k);
	assert_int_equal(d.bytes, c[k].off);
	assert_int_equal(d.size, c[k].off + 40 + c[k].csize / 2);
	assert_int_equal(d.lost, c[k].nrec);
	trace_reader__close(r);

	/* no trailer (a killed recorder): every chunk, every byte, nothing
	 * known lost; damaged all the same */
	spit(bad, file, c[nc - 1].off);
	assert_int_equal(read_compare(bad, &e, &r), 3000);
	trace_reader__damage_info(r, &d);
	assert_true(trace_damage__any(&d));
	assert_int_equal(d.chunks, nc - 1);
	assert_int_equal(d.bytes, c[nc - 1].off);
	assert_int_equal(d.size, c[nc - 1].off);
	assert_int_equal(d.lost, 0);
	got = rule_line(r, bad, &rc);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s is damaged: file ends after chunk %d (offset "
		 "%zu) with no trailer: recording did not finish; read 3000 records before it (%d "
		 "whole chunks, %zu of %zu bytes); kept\n", bad, nc - 2, c[nc - 1].off, nc - 1,
		 c[nc - 1].off, c[nc - 1].off);
	assert_string_equal(got, want);
	free(got);
	trace_reader__close(r);

	/* header only: nothing read */
	spit(bad, file, le32(file + 12));
	assert_int_equal(read_compare(bad, &e, &r), 0);
	trace_reader__damage_info(r, &d);
	assert_true(trace_damage__any(&d));
	assert_int_equal(d.records, 0);
	assert_int_equal(d.chunks, 0);
	trace_reader__close(r);

	free(file);
	expect_free(&e);
	unlink(full);
	unlink(bad);
}

/* A record too short for its type in a whole file: the readers skip it, the
 * rule counts it as damage; one bad record among framing damage in a chunk
 * both said. */
static void test_damage_rule_records(void **state)
{
	const char *path = tmp_path("short.gtrace");
	struct {
		struct gt_call call;
		struct gt_hdr shortrec;		/* an exit record of a header only */
		struct gt_hdr bad;
	} recs = {};
	const struct gt_hdr *rec;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_damage d;
	uint64_t hlen;
	char want[512], *got;
	int rc;

	(void)state;
	hdr_init(&recs.call.hdr, 0, GT_REC_CALL, sizeof(recs.call));
	hdr_init(&recs.shortrec, 1, GT_REC_EXIT, sizeof(recs.shortrec));
	hdr_init(&recs.bad, 2, GT_REC_EXIT, 12);
	assert_int_equal(trace_writer__create(path, &test_info, NULL, &w), 0);
	hlen = trace_writer__bytes(w);
	trace_writer__free(w);
	/* a well-formed chunk of the call and the short record, and a trailer */
	assert_int_equal(trace_writer__create(path, &test_info, &(struct trace_writer_opts){ .force = true },
					      &w), 0);
	assert_int_equal(trace_writer__append(w, &recs.call.hdr), 0);
	assert_int_equal(trace_writer__append(w, &recs.shortrec), 0);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
	assert_int_equal(count_records(path, &r), 2);
	trace_reader__damage_info(r, &d);
	assert_true(trace_damage__any(&d));
	assert_string_equal(d.why, "");
	assert_int_equal(d.bad, 1);
	got = rule_line(r, path, &rc);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s is damaged: 1 record too short for its type; "
		 "read 2 records (1 whole chunk, %llu of %llu bytes), those skipped; kept\n", path,
		 (unsigned long long)d.size, (unsigned long long)d.size);
	assert_string_equal(got, want);
	free(got);
	trace_reader__close(r);

	/* the short record, then a record whose size breaks the chunk */
	assert_int_equal(truncate(path, hlen), 0);
	append_raw_chunk(path, &recs, sizeof(recs), 3);
	assert_int_equal(count_records(path, &r), 2);
	trace_reader__damage_info(r, &d);
	assert_int_equal(d.bad, 1);
	assert_int_equal(d.chunks, 0);
	assert_int_equal(d.bytes, hlen);
	assert_int_equal(d.lost, 1);
	got = rule_line(r, path, &rc);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s is damaged: %s; read 2 records before it (0 "
		 "whole chunks, %llu of %llu bytes), 1 record of the damaged chunk lost, 1 record too "
		 "short for its type skipped; kept\n", path, trace_reader__damage(r),
		 (unsigned long long)hlen, (unsigned long long)d.size);
	assert_string_equal(got, want);
	free(got);
	trace_reader__close(r);
	(void)rec;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt_chunk),
		cmocka_unit_test(test_bad_record_in_chunk),
		cmocka_unit_test(test_damage_rule),
		cmocka_unit_test(test_damage_rule_records),
		cmocka_unit_test(test_not_gtrace),
		cmocka_unit_test(test_counters_without_trailer),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
