// SPDX-License-Identifier: MIT
/*
 * Unit tests of the flight recorder's ring (user/format/chunk_ring.c) and of
 * the sink writer that feeds it: the chunks a sink gets are the ones a file
 * gets, the ring keeps to its memory and time bounds dropping the oldest and
 * counting exactly, and snapshots (all, a time range, one process, during
 * puts from another thread) are complete files that trace_reader reads back,
 * written without ever following a link or waiting on a FIFO.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "format/chunk_ring.h"
#include "format/trace_file.h"
#include "test_util.h"

static const struct gt_file_info info = {
	.version = GT_FILE_VERSION,
	.clock_id = 1,
	.realtime_offset_ns = 1700000000000000000ll,
	.start_ts = 1000,
	.host = "host",
	.kernel = "6.18",
	.cmdline = "gtrace-bpf daemon",
	.options = "snapshot=1",
};

/* ------------------------------------------------------------ records */

/* A record of 24..88 bytes whose payload is derived from its ts and seq, so
 * that a torn or mixed-up record is seen (rec_ok), and that is not all zero,
 * so that chunks do not compress to nothing. */
struct test_rec {
	struct gt_hdr hdr;
	uint64_t seq;
	uint64_t check;		/* seq * 31 + ts */
	uint64_t fill[6];	/* present as far as hdr.size says */
};

static struct gt_hdr *make_rec(struct test_rec *r, uint16_t type, uint64_t ts, uint32_t pid,
			       uint64_t seq)
{
	unsigned nfill = seq % 7;

	memset(r, 0, sizeof(*r));
	r->hdr.ts = ts;
	r->hdr.pid = pid;
	r->hdr.tid = pid + (uint32_t)(seq % 3);
	r->hdr.type = type;
	r->hdr.size = (uint16_t)(offsetof(struct test_rec, fill) + nfill * 8);
	r->seq = seq;
	r->check = seq * 31 + ts;
	for (unsigned i = 0; i < nfill; i++)
		r->fill[i] = (seq * 2654435761u) ^ ((uint64_t)i << 40);
	return &r->hdr;
}

static bool rec_ok(const struct gt_hdr *h)
{
	const struct test_rec *r = (const void *)h;

	/* a name's kind is where the others' check is */
	if (h->type == GT_REC_NAME)
		return h->size >= sizeof(struct gt_name);
	return h->size >= offsetof(struct test_rec, fill) && r->check == r->seq * 31 + h->ts;
}

/* Records back to back, as written, to compare with what comes back. */
struct recs {
	uint8_t *buf;
	size_t len, cap;
	size_t n;
};

static void recs_add(struct recs *e, const struct gt_hdr *rec)
{
	if (e->len + rec->size > e->cap) {
		e->cap = (e->cap + rec->size) * 2;
		e->buf = realloc(e->buf, e->cap);
		assert_non_null(e->buf);
	}
	memcpy(e->buf + e->len, rec, rec->size);
	e->len += rec->size;
	e->n++;
}

static void recs_free(struct recs *e)
{
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* Reads path whole into *got: it must be complete (a trailer, no damage)
 * with the trailer counting what it holds.  Returns the trailer's chunks. */
static uint64_t read_file(const char *path, struct recs *got, struct gt_trailer *tr)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	int n;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	assert_string_equal(trace_reader__info(r)->options, info.options);
	while ((n = trace_reader__next(r, &h)) == 1) {
		assert_true(rec_ok(h));
		recs_add(got, h);
	}
	assert_int_equal(n, 0);
	assert_false(trace_reader__truncated(r));
	assert_non_null(trace_reader__trailer(r));
	*tr = *trace_reader__trailer(r);
	assert_int_equal(tr->records, got->n);
	trace_reader__close(r);
	return tr->chunks;
}

/* ------------------------------------------------------------ a sink that keeps */

/* Every chunk a sink writer produced, and optionally the ring they also go to. */
struct tee {
	struct chunk_ring *ring;
	unsigned n;
	uint8_t *chunk[4096];
	size_t len[4096];
	uint32_t nrec[4096];
	uint64_t first[4096], last[4096];
	unsigned calls_after_finish;
};

static int tee_sink(void *ctx, const void *chunk, size_t len, uint64_t first_ts,
		    uint64_t last_ts, uint32_t nrec)
{
	struct tee *t = ctx;

	assert_true(t->n < 4096);
	t->chunk[t->n] = malloc(len);
	assert_non_null(t->chunk[t->n]);
	memcpy(t->chunk[t->n], chunk, len);
	t->len[t->n] = len;
	t->nrec[t->n] = nrec;
	t->first[t->n] = first_ts;
	t->last[t->n] = last_ts;
	t->n++;
	return t->ring ? chunk_ring__put(t->ring, chunk, len, first_ts, last_ts, nrec) : 0;
}

static void tee_free(struct tee *t)
{
	for (unsigned i = 0; i < t->n; i++)
		free(t->chunk[i]);
	free(t);
}

static struct tee *tee_new(struct chunk_ring *ring)
{
	struct tee *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->ring = ring;
	return t;
}

/* Chunk i of n holds per records of ts i*100 .. i*100+50, pids alternating
 * 100 and 200; each goes to sink through one sink writer, flushed per chunk. */
static void put_timed_chunks(trace_writer_sink_fn *sink, void *ctx, unsigned n, unsigned per,
			     struct recs *all)
{
	struct trace_writer *w;
	struct test_rec r;
	uint64_t seq = 0;

	assert_int_equal(trace_writer__create_sink(NULL, sink, ctx, &w), 0);
	for (unsigned i = 0; i < n; i++) {
		for (unsigned j = 0; j < per; j++, seq++) {
			uint64_t ts = i * 100 + (per > 1 ? j * 50 / (per - 1) : 0);
			struct gt_hdr *h = make_rec(&r, GT_REC_CALL, ts, j % 2 ? 200 : 100, seq);

			assert_int_equal(trace_writer__append(w, h), 0);
			if (all)
				recs_add(all, h);
		}
		assert_int_equal(trace_writer__flush(w), 0);
	}
	trace_writer__free(w);
}

/* True when the files at a and b hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb;

	assert_non_null(fa);
	assert_non_null(fb);
	do {
		ca = getc(fa);
		cb = getc(fb);
	} while (ca == cb && ca != EOF);
	fclose(fa);
	fclose(fb);
	return ca == cb;
}

/* Names in tmpdir that start with a dot: a snapshot's temporary left behind. */
static int leftovers(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* ------------------------------------------------------------ tests */

/* The same records through a file writer and through a sink writer, the
 * sink's chunks snapshotted with the same trailer: the same file, byte for
 * byte, and the same records read back. */
static void test_sink_equals_file(void **state)
{
	struct trace_writer_opts wo = { .chunk_bytes = 16384 };
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20 };
	struct gt_trailer tr = { .end_ts = 987654321 }, got_tr;
	struct chunk_ring_snap_stats st;
	struct trace_writer *fw, *sw;
	struct chunk_ring *ring;
	struct recs want = {}, got = {};
	struct test_rec r;
	struct tee *tee;
	struct stat sb;

	(void)state;
	tr.counters.events = 5000;
	tr.counters.drop_ringbuf = 7;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	tee = tee_new(ring);
	assert_int_equal(trace_writer__create(tmp_path("file.gtrace"), &info, &wo, &fw), 0);
	assert_int_equal(trace_writer__create_sink(&wo, tee_sink, tee, &sw), 0);
	for (unsigned i = 0; i < 5000; i++) {
		struct gt_hdr *h = make_rec(&r, GT_REC_CALL, 5000 + i * 10 - (i % 5), 42, i);

		assert_int_equal(trace_writer__append(fw, h), 0);
		assert_int_equal(trace_writer__append(sw, h), 0);
		recs_add(&want, h);
		if (i == 1234) {	/* a flush mid-chunk, as the recorder's tick does */
			assert_int_equal(trace_writer__flush(fw), 0);
			assert_int_equal(trace_writer__flush(sw), 0);
		}
	}
	assert_int_equal(trace_writer__finish(fw, &tr), 0);
	assert_int_equal(trace_writer__finish(sw, &tr), 0);
	/* the sink got the data chunks only, not a trailer */
	assert_true(tee->n > 3);
	assert_int_equal(trace_writer__chunks(sw), tee->n);
	assert_int_equal(trace_writer__chunks(fw), tee->n);
	assert_int_equal(trace_writer__records(sw), 5000);
	trace_writer__free(fw);
	trace_writer__free(sw);

	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("snap.gtrace"), &info, NULL, &tr, &st), 0);
	assert_int_equal(st.chunks, tee->n);
	assert_int_equal(st.records, 5000);
	assert_int_equal(stat(tmp_path("snap.gtrace"), &sb), 0);
	assert_int_equal(st.bytes, sb.st_size);
	assert_true(same_bytes(tmp_path("file.gtrace"), tmp_path("snap.gtrace")));

	assert_int_equal(read_file(tmp_path("snap.gtrace"), &got, &got_tr), tee->n);
	assert_int_equal(got.n, 5000);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.buf, want.buf, want.len);
	assert_int_equal(got_tr.end_ts, 987654321);
	assert_int_equal(got_tr.counters.drop_ringbuf, 7);

	recs_free(&want);
	recs_free(&got);
	tee_free(tee);
	chunk_ring__free(ring);
	unlink(tmp_path("file.gtrace"));
	unlink(tmp_path("snap.gtrace"));
}

/* A flood into a small ring: it never holds more than max_bytes, it holds
 * the newest chunks and as many as fit, and every chunk, record and byte put
 * is either held or counted as dropped. */
static void test_memory_bound(void **state)
{
	struct trace_writer_opts wo = { .chunk_bytes = 4096 };
	struct chunk_ring_opts ro = { .max_bytes = 100000 };
	struct chunk_ring_stats s;
	struct chunk_ring *ring;
	struct trace_writer *w;
	struct test_rec r;
	struct recs all = {}, got = {};
	struct gt_trailer tr;
	uint64_t put_bytes = 0, put_recs = 0, overhead;
	unsigned first_held;
	struct tee *tee;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	tee = tee_new(ring);
	assert_int_equal(trace_writer__create_sink(&wo, tee_sink, tee, &w), 0);
	for (unsigned i = 0; i < 60000; i++) {
		struct gt_hdr *h = make_rec(&r, GT_REC_CALL, 1000 + i, 7, i);

		assert_int_equal(trace_writer__append(w, h), 0);
		recs_add(&all, h);
		chunk_ring__stats(ring, &s);
		assert_true(s.mem_bytes <= ro.max_bytes);
	}
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
	for (unsigned i = 0; i < tee->n; i++) {
		put_bytes += tee->len[i];
		put_recs += tee->nrec[i];
	}
	assert_int_equal(put_recs, 60000);

	chunk_ring__stats(ring, &s);
	assert_true(s.dropped_chunks > 10);
	assert_int_equal(s.chunks + s.dropped_chunks, tee->n);
	assert_int_equal(s.records + s.dropped_records, put_recs);
	assert_int_equal(s.chunk_bytes + s.dropped_bytes, put_bytes);
	assert_int_equal(s.dropped_window, 0);
	assert_int_equal(s.dropped_oversized, 0);
	assert_true(s.mem_bytes <= ro.max_bytes && s.mem_bytes > s.chunk_bytes);
	/* the held ones are the newest: exactly the last s.chunks chunks */
	first_held = tee->n - (unsigned)s.chunks;
	assert_int_equal(s.oldest_ts, tee->first[first_held]);
	assert_int_equal(s.newest_ts, tee->last[tee->n - 1]);
	/* and as many as fit: the next older one would not have */
	overhead = (s.mem_bytes - s.chunk_bytes) / s.chunks;
	assert_true(s.mem_bytes + tee->len[first_held - 1] + overhead > ro.max_bytes);

	/* a snapshot holds the last s.records records, in order */
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("flood.gtrace"), &info, NULL, NULL,
					      NULL), 0);
	read_file(tmp_path("flood.gtrace"), &got, &tr);
	assert_int_equal(got.n, s.records);
	assert_int_equal(tr.chunks, s.chunks);
	assert_memory_equal(got.buf, all.buf + all.len - got.len, got.len);

	recs_free(&all);
	recs_free(&got);
	tee_free(tee);
	chunk_ring__free(ring);
	unlink(tmp_path("flood.gtrace"));
}

/* Chunks older than the window behind the newest are dropped, oldest first. */
static void test_window_bound(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20, .window_ns = 1000 };
	struct chunk_ring_stats s;
	struct chunk_ring *ring;
	struct recs all = {};

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	/* chunk i: ts i*100 .. i*100+50; the newest ends at 3050, so the
	 * window starts at 2050: chunks 0..19 end before it */
	put_timed_chunks(chunk_ring__sink, ring, 31, 10, &all);
	chunk_ring__stats(ring, &s);
	assert_int_equal(s.chunks, 11);
	assert_int_equal(s.records, 110);
	assert_int_equal(s.oldest_ts, 2000);
	assert_int_equal(s.newest_ts, 3050);
	assert_int_equal(s.dropped_chunks, 20);
	assert_int_equal(s.dropped_window, 20);
	assert_int_equal(s.dropped_records, 200);
	recs_free(&all);
	chunk_ring__free(ring);
}

/* The lowest first_ts of the chunks held: a chunk with a record written late
 * (older than the chunk before) sets it, not the first chunk; 0 when empty. */
static void test_min_first_ts(void **state)
{
	static const uint64_t ts[][2] = { { 1000, 1050 }, { 2000, 500 }, { 3000, 3050 }, { 9000, 9050 } };
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20, .window_ns = 2000 };
	struct chunk_ring_stats s;
	struct chunk_ring *ring;
	struct trace_writer *w;
	struct test_rec r;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	assert_int_equal(chunk_ring__min_first_ts(ring), 0);
	assert_int_equal(trace_writer__create_sink(NULL, chunk_ring__sink, ring, &w), 0);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, ts[i][0], 100, 2 * i)), 0);
		assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, ts[i][1], 100, 2 * i + 1)), 0);
		assert_int_equal(trace_writer__flush(w), 0);
	}
	chunk_ring__stats(ring, &s);
	assert_int_equal(s.oldest_ts, 1000);
	assert_int_equal(chunk_ring__min_first_ts(ring), 500);
	/* the window moves past all three */
	assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, ts[3][0], 100, 6)), 0);
	assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, ts[3][1], 100, 7)), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	chunk_ring__stats(ring, &s);
	assert_int_equal(s.chunks, 1);
	assert_int_equal(chunk_ring__min_first_ts(ring), 9000);
	trace_writer__free(w);
	chunk_ring__free(ring);
}

/* A chunk that alone is larger than the memory bound is dropped and counted,
 * and does not push out what is held; a damaged chunk is refused. */
static void test_oversized_and_bad_chunks(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 3000 };
	struct chunk_ring_stats s;
	struct chunk_ring *ring;
	struct test_rec r;
	struct trace_writer *w;
	struct tee *tee = tee_new(NULL);
	uint8_t bad[4096];

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	assert_int_equal(trace_writer__create_sink(NULL, tee_sink, tee, &w), 0);
	/* chunk 0: two records, a few hundred bytes */
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, 10 + i, 1, i)), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	/* chunk 1: incompressible, well over 3000 bytes */
	for (unsigned i = 0; i < 200; i++) {
		make_rec(&r, GT_REC_CALL, 20 + i, 1, 1000 + i * 7);
		for (unsigned k = 0; k < 6; k++)
			r.fill[k] = (uint64_t)rand() << 32 | (uint64_t)rand();
		r.hdr.size = sizeof(r);
		assert_int_equal(trace_writer__append(w, &r.hdr), 0);
	}
	assert_int_equal(trace_writer__flush(w), 0);
	trace_writer__free(w);
	assert_int_equal(tee->n, 2);
	assert_true(tee->len[0] < 1000 && tee->len[1] > 3000);

	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(chunk_ring__put(ring, tee->chunk[i], tee->len[i], tee->first[i],
						 tee->last[i], tee->nrec[i]), 0);
	chunk_ring__stats(ring, &s);
	assert_int_equal(s.chunks, 1);
	assert_int_equal(s.records, 2);
	assert_int_equal(s.chunk_bytes, tee->len[0]);
	assert_int_equal(s.dropped_chunks, 1);
	assert_int_equal(s.dropped_oversized, 1);
	assert_int_equal(s.dropped_records, 200);
	assert_int_equal(s.dropped_bytes, tee->len[1]);

	/* damaged: a flipped byte of the header, a cut frame, wrong arguments */
	memcpy(bad, tee->chunk[0], tee->len[0]);
	bad[9] ^= 1;
	assert_int_equal(chunk_ring__put(ring, bad, tee->len[0], tee->first[0], tee->last[0],
					 tee->nrec[0]), -EBADMSG);
	assert_int_equal(chunk_ring__put(ring, tee->chunk[0], tee->len[0] - 1, tee->first[0],
					 tee->last[0], tee->nrec[0]), -EBADMSG);
	assert_int_equal(chunk_ring__put(ring, tee->chunk[0], tee->len[0], tee->first[0],
					 tee->last[0], tee->nrec[0] + 1), -EINVAL);
	chunk_ring__stats(ring, &s);
	assert_int_equal(s.chunks, 1);
	assert_int_equal(s.dropped_chunks, 1);
	tee_free(tee);
	chunk_ring__free(ring);
}

/* A time range selects exactly the chunks that meet it, whole. */
static void test_snapshot_time_range(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20 };
	struct chunk_ring_snap_opts so = { .since_ts = 1050, .until_ts = 1500 };
	struct chunk_ring_snap_stats st;
	struct chunk_ring *ring;
	struct recs all = {}, got = {};
	struct gt_trailer tr;
	struct test_rec pre[2];
	size_t off = 0;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	put_timed_chunks(chunk_ring__sink, ring, 31, 10, &all);

	/* the bounds are inclusive: chunk 10 (1000..1050) ends at since,
	 * chunk 15 (1500..1550) starts at until; 9 ends at 950, 16 starts at
	 * 1600: chunks 10..15 */
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("range.gtrace"), &info, &so, NULL,
					      &st), 0);
	assert_int_equal(st.selected, 6);
	assert_int_equal(st.chunks, 6);
	assert_int_equal(st.first_ts, 1000);
	assert_int_equal(st.last_ts, 1550);
	assert_int_equal(read_file(tmp_path("range.gtrace"), &got, &tr), 6);
	assert_int_equal(got.n, 60);
	/* records 100..159 of all: chunks 10..15 whole */
	for (unsigned i = 0; i < 100; i++)
		off += ((const struct gt_hdr *)(all.buf + off))->size;
	assert_memory_equal(got.buf, all.buf + off, got.len);
	recs_free(&got);

	/* --last 250 ns of the newest (3050): chunks that end at 2800 or
	 * later, after a preamble of two records (the daemon's names) */
	make_rec(&pre[0], GT_REC_CALL, 5, 100, 90001);
	make_rec(&pre[1], GT_REC_CALL, 6, 200, 90002);
	pre[0].hdr.size = pre[1].hdr.size = sizeof(pre[0]);
	so = (struct chunk_ring_snap_opts){ .last_ns = 250, .force = true, .preamble = pre,
					    .preamble_len = sizeof(pre) };
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("range.gtrace"), &info, &so, NULL,
					      &st), 0);
	assert_int_equal(st.chunks, 4);
	assert_int_equal(st.selected, 3);
	assert_int_equal(st.first_ts, 2800);
	assert_int_equal(read_file(tmp_path("range.gtrace"), &got, &tr), 4);
	assert_int_equal(got.n, 32);
	assert_memory_equal(got.buf, pre, sizeof(pre));
	assert_int_equal(((const struct test_rec *)(got.buf + sizeof(pre)))->hdr.ts, 2800);
	recs_free(&got);

	/* nothing selected: still a complete, empty file */
	so = (struct chunk_ring_snap_opts){ .since_ts = 5000, .force = true };
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("range.gtrace"), &info, &so, NULL,
					      &st), 0);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(read_file(tmp_path("range.gtrace"), &got, &tr), 0);
	assert_int_equal(got.n, 0);

	recs_free(&all);
	recs_free(&got);
	chunk_ring__free(ring);
	unlink(tmp_path("range.gtrace"));
}

/* Which records a snapshot of pid 100 must keep (the rule of chunk_ring.h,
 * spelled out again by record). */
static bool keep_for_100(const struct gt_hdr *h)
{
	const struct gt_name *nm = (const void *)h;

	return h->pid == 100 || h->pid == 0 || h->type == GT_REC_STATS ||
	       (h->type == GT_REC_NAME && nm->kind == GT_NAME_LIBCUDA);
}

/* One process' records, recompressed: its own, the recorder's, the counters
 * and the libcuda paths, and nothing of the other processes. */
static void test_snapshot_pid(void **state)
{
	struct trace_writer_opts wo = { .chunk_bytes = 8192 };
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20 };
	struct chunk_ring_snap_opts so = { .pid = 100, .chunk_bytes = 4096 };
	struct gt_trailer tr = { .end_ts = 77 }, got_tr;
	struct chunk_ring_snap_stats st;
	struct recs want = {}, got = {};
	struct chunk_ring *ring;
	struct trace_writer *w;
	struct test_rec r, pre[2];
	unsigned others = 0;

	(void)state;
	tr.counters.events = 123;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	assert_int_equal(trace_writer__create_sink(&wo, chunk_ring__sink, ring, &w), 0);
	/* the preamble is filtered too: pid 300's record goes, 100's comes first */
	make_rec(&pre[0], GT_REC_PROC_INFO, 1, 300, 80001);
	make_rec(&pre[1], GT_REC_PROC_INFO, 2, 100, 80002);
	pre[0].hdr.size = pre[1].hdr.size = sizeof(pre[0]);
	so.preamble = pre;
	so.preamble_len = sizeof(pre);
	recs_add(&want, &pre[1].hdr);
	for (unsigned i = 0; i < 3000; i++) {
		static const uint32_t pids[] = { 100, 200, 300, 0, 100, 200 };
		static const uint16_t types[] = { GT_REC_CALL, GT_REC_STATS, GT_REC_NAME,
						  GT_REC_CAPTURE, GT_REC_RET };
		uint16_t type = types[i % 5];
		struct gt_hdr *h = make_rec(&r, type, 10000 + i, pids[i % 6], i);

		if (type == GT_REC_NAME)
			((struct gt_name *)h)->kind = i % 2 ? GT_NAME_LIBCUDA : GT_NAME_THREAD;
		assert_int_equal(trace_writer__append(w, h), 0);
		if (keep_for_100(h))
			recs_add(&want, h);
		else
			others++;
	}
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);
	assert_true(others > 500);

	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("pid.gtrace"), &info, &so, &tr, &st),
			 0);
	assert_int_equal(read_file(tmp_path("pid.gtrace"), &got, &got_tr), st.chunks);
	assert_int_equal(got.n, want.n);
	assert_int_equal(st.records, want.n);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.buf, want.buf, want.len);
	assert_int_equal(got_tr.end_ts, 77);
	assert_int_equal(got_tr.counters.events, 123);
	/* recompressed in chunks of the snapshot's size, not copied */
	assert_true(st.chunks >= (want.len + 4095) / 4096);

	recs_free(&want);
	recs_free(&got);
	chunk_ring__free(ring);
	unlink(tmp_path("pid.gtrace"));
}

/* ------------------------------------------------------------ concurrency */

struct flood {
	struct chunk_ring *ring;
	atomic_bool stop;	/* set by the test: the thread ends */
	atomic_bool done;	/* set by the thread as it ends */
	atomic_ulong puts;	/* thousands of records appended */
};

/* The recording thread: chunks of rising ts into a ring that drops all
 * the time, until told to stop. */
static void *flood_main(void *arg)
{
	struct trace_writer_opts wo = { .chunk_bytes = 2048 };
	struct flood *f = arg;
	struct trace_writer *w;
	struct test_rec r;
	uint64_t seq = 0;

	if (trace_writer__create_sink(&wo, chunk_ring__sink, f->ring, &w)) {
		atomic_store(&f->done, true);
		return (void *)1;
	}
	while (!atomic_load(&f->stop)) {
		if (trace_writer__append(w, make_rec(&r, GT_REC_CALL, 1000 + seq, 5, seq)))
			break;
		seq++;
		if (seq % 1000 == 0)
			atomic_fetch_add(&f->puts, 1);
	}
	trace_writer__free(w);
	atomic_store(&f->done, true);
	return atomic_load(&f->stop) ? NULL : (void *)1;
}

/* Snapshots while another thread puts: each is complete, its records whole
 * and in order, and the lock is held for far less than a chunk's worth. */
static void test_snapshot_while_putting(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 200000 };
	struct chunk_ring_snap_opts so = { .force = true };
	struct chunk_ring_snap_stats st;
	struct flood f = {};
	struct recs got = {};
	struct gt_trailer tr;
	pthread_t th;
	void *ret;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &f.ring), 0);
	assert_int_equal(pthread_create(&th, NULL, flood_main, &f), 0);
	while (atomic_load(&f.puts) < 20 && !atomic_load(&f.done))
		usleep(1000);
	for (unsigned i = 0; i < 40; i++) {
		unsigned long before = atomic_load(&f.puts);

		so.pid = i % 4 == 3 ? 5 : 0;	/* the filtering path too */
		assert_int_equal(chunk_ring__snapshot(f.ring, tmp_path("live.gtrace"), &info, &so,
						      NULL, &st), 0);
		assert_true(st.lock_ns < 50000000);
		assert_int_equal(read_file(tmp_path("live.gtrace"), &got, &tr), st.chunks);
		assert_true(got.n > 0);
		/* consecutive seqs: no chunk lost or doubled in the middle */
		for (size_t off = 0, k = 0; off < got.len; k++) {
			const struct test_rec *rec = (const void *)(got.buf + off);
			const struct test_rec *first = (const void *)got.buf;

			assert_int_equal(rec->seq, first->seq + k);
			off += rec->hdr.size;
		}
		recs_free(&got);
		while (atomic_load(&f.puts) == before && !atomic_load(&f.done))
			usleep(100);
		assert_false(atomic_load(&f.done));
	}
	atomic_store(&f.stop, true);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	chunk_ring__free(f.ring);
	unlink(tmp_path("live.gtrace"));
}

/* ------------------------------------------------------------ output safety */

static void on_alarm(int sig)
{
	(void)sig;
	fail_msg("a snapshot blocked");
}

static void test_snapshot_refuses(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 1 << 20 };
	struct chunk_ring_snap_opts force = { .force = true };
	struct chunk_ring *ring;
	struct recs got = {};
	struct gt_trailer tr;
	struct stat sb;
	char buf[16] = "";
	FILE *f;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	put_timed_chunks(chunk_ring__sink, ring, 3, 4, NULL);

	/* an existing file without force: left as it was */
	f = fopen(tmp_path("exists"), "w");
	assert_non_null(f);
	fputs("keep me", f);
	fclose(f);
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("exists"), &info, NULL, NULL, NULL),
			 -EEXIST);
	f = fopen(tmp_path("exists"), "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "keep me");
	/* with force it is replaced by a complete snapshot, owner only */
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("exists"), &info, &force, NULL, NULL),
			 0);
	assert_int_equal(read_file(tmp_path("exists"), &got, &tr), 3);
	assert_int_equal(got.n, 12);
	assert_int_equal(stat(tmp_path("exists"), &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	/* a symbolic link is not followed, with or without force */
	assert_int_equal(symlink(tmp_path("target"), tmp_path("link")), 0);
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("link"), &info, NULL, NULL, NULL),
			 -EEXIST);
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("link"), &info, &force, NULL, NULL),
			 -EPERM);
	assert_int_equal(lstat(tmp_path("target"), &sb), -1);
	assert_int_equal(lstat(tmp_path("link"), &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));

	/* a FIFO without a reader: refused at once, not waited on */
	assert_int_equal(mkfifo(tmp_path("fifo"), 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(5);
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("fifo"), &info, NULL, NULL, NULL),
			 -EEXIST);
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("fifo"), &info, &force, NULL, NULL),
			 -EPERM);
	alarm(0);
	assert_int_equal(lstat(tmp_path("fifo"), &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));

	/* a directory that does not exist */
	assert_int_equal(chunk_ring__snapshot(ring, tmp_path("no/such.gtrace"), &info, NULL, NULL,
					      NULL), -ENOENT);
	assert_int_equal(leftovers(), 0);

	recs_free(&got);
	chunk_ring__free(ring);
	unlink(tmp_path("exists"));
	unlink(tmp_path("link"));
	unlink(tmp_path("fifo"));
}

/* A snapshot that fails half-way (the disk fills) leaves nothing that looks
 * like a snapshot: no file under its name, no temporary. */
static void test_snapshot_failure_leaves_nothing(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20 };
	struct trace_writer_opts wo = { .chunk_bytes = 8192 };
	struct chunk_ring *ring;
	struct trace_writer *w;
	struct rlimit old, lim;
	struct test_rec r;
	struct stat sb;
	int err;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	assert_int_equal(trace_writer__create_sink(&wo, chunk_ring__sink, ring, &w), 0);
	for (unsigned i = 0; i < 20000; i++)
		assert_int_equal(trace_writer__append(w, make_rec(&r, GT_REC_CALL, i, 1, i)), 0);
	assert_int_equal(trace_writer__finish(w, NULL), 0);
	trace_writer__free(w);

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 20000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = chunk_ring__snapshot(ring, tmp_path("full.gtrace"), &info, NULL, NULL, NULL);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(lstat(tmp_path("full.gtrace"), &sb), -1);
	assert_int_equal(leftovers(), 0);
	chunk_ring__free(ring);
}

/* A snapshot taken, then written after the ring dropped its chunks and was
 * freed: the file holds what was taken, nothing put later, and the chunks
 * live until the snapshot lets them go. */
static void test_snapshot_take_then_write(void **state)
{
	struct chunk_ring_opts ro = { .max_bytes = 1 << 20 };
	const struct chunk_ring_snap_stats *sel;
	struct chunk_ring_snap_stats st;
	struct chunk_ring_stats rs;
	struct chunk_ring_snap *s;
	struct chunk_ring *ring;
	struct recs all = {}, got = {};
	struct gt_trailer tr;

	(void)state;
	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	put_timed_chunks(chunk_ring__sink, ring, 10, 40, &all);
	assert_int_equal(chunk_ring__snap_take(ring, NULL, &s), 0);
	sel = chunk_ring__snap_selection(s);
	assert_int_equal(sel->selected, 10);
	assert_int_equal(sel->last_ts, 950);
	/* the ring moves on: every chunk it held is dropped for newer ones */
	put_timed_chunks(chunk_ring__sink, ring, 400, 400, NULL);
	chunk_ring__stats(ring, &rs);
	assert_true(rs.dropped_chunks >= 10);
	assert_true(rs.oldest_ts > 950);
	chunk_ring__free(ring);
	assert_int_equal(chunk_ring__snap_write(s, tmp_path("taken.gtrace"), &info, NULL, NULL, &st), 0);
	/* written twice from one take: the second is refused, not mixed */
	assert_int_equal(chunk_ring__snap_write(s, tmp_path("taken.gtrace"), &info, NULL, NULL, NULL),
			 -EEXIST);
	chunk_ring__snap_free(s);
	assert_int_equal(st.chunks, 10);
	assert_int_equal(st.records, all.n);
	read_file(tmp_path("taken.gtrace"), &got, &tr);
	assert_int_equal(got.n, all.n);
	assert_memory_equal(got.buf, all.buf, all.len);
	assert_int_equal(leftovers(), 0);
	unlink(tmp_path("taken.gtrace"));
	recs_free(&all);
	recs_free(&got);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_chunk_ring");
}

/* Everything, also what a failed test left behind. */
static int group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sink_equals_file),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_window_bound),
		cmocka_unit_test(test_min_first_ts),
		cmocka_unit_test(test_oversized_and_bad_chunks),
		cmocka_unit_test(test_snapshot_time_range),
		cmocka_unit_test(test_snapshot_pid),
		cmocka_unit_test(test_snapshot_while_putting),
		cmocka_unit_test(test_snapshot_refuses),
		cmocka_unit_test(test_snapshot_failure_leaves_nothing),
		cmocka_unit_test(test_snapshot_take_then_write),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
