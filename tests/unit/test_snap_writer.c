// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's snapshot writer (user/daemon/snap_writer.c):
 * jobs come back once each, in order, with the file written under a name
 * of its own (two default names queued together never collide), a job that
 * cannot be written comes back with its error and leaves nothing, a stop
 * cancels what has not started, and a finish step (the daemon --cupti
 * merge) gets the complete raw file on the writer's thread.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "format/chunk_ring.h"
#include "format/trace_file.h"
#include "daemon/snap_writer.h"
#include "test_util.h"

static const struct gt_file_info info = {
	.version = GT_FILE_VERSION,
	.clock_id = 1,
	.start_ts = 1000,
	.host = "host",
	.kernel = "6.18",
	.cmdline = "gtrace-bpf daemon",
};

/* A ring of n chunks of 100 call records each. */
static struct chunk_ring *make_ring(unsigned n)
{
	struct chunk_ring_opts ro = { .max_bytes = 64 << 20 };
	struct chunk_ring *ring;
	struct trace_writer *w;
	struct gt_hdr h;

	assert_int_equal(chunk_ring__new(&ro, &ring), 0);
	assert_int_equal(trace_writer__create_sink(NULL, chunk_ring__sink, ring, &w), 0);
	for (unsigned i = 0; i < n * 100; i++) {
		h = (struct gt_hdr){ .ts = 1000 + i, .pid = 7, .tid = 7, .type = GT_REC_CALL,
				     .size = sizeof(h) };
		assert_int_equal(trace_writer__append(w, &h), 0);
		if (i % 100 == 99)
			assert_int_equal(trace_writer__flush(w), 0);
	}
	trace_writer__free(w);
	return ring;
}

/* A job for the whole ring: to out, or to a default name in tmpdir. */
static struct snap_job *make_job(struct chunk_ring *ring, const char *out, uint64_t client)
{
	struct snap_job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->client = client;
	snprintf(j->what, sizeof(j->what), "snapshot");
	j->dir = tmpdir;
	j->info = info;
	j->info.options = strdup("mode=all snapshot=1");
	if (out)
		j->out = strdup(out);
	assert_int_equal(chunk_ring__snap_take(ring, NULL, &j->snap), 0);
	return j;
}

/* The next finished job, waited for (at most 10 s). */
static struct snap_job *wait_done(struct snap_writer *w)
{
	struct snap_job *j;

	for (int i = 0; i < 10000; i++) {
		if ((j = snap_writer__done(w)))
			return j;
		usleep(1000);
	}
	fail_msg("no job came back within 10 s");
	return NULL;
}

/* Records in a complete file at path. */
static uint64_t records_in(const char *path)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	uint64_t n = 0;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	while (trace_reader__next(r, &h) == 1)
		n++;
	assert_false(trace_reader__truncated(r));
	trace_reader__close(r);
	return n;
}

/* Entries of tmpdir besides . and .. */
static int entries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Three queued at once, two default names and an -o: back in order, each
 * its own complete file, v1 and v2 not the same. */
static void test_jobs_in_order(void **state)
{
	struct chunk_ring *ring = make_ring(5);
	struct snap_writer *w;
	struct snap_job *j[3];
	char date[16], want[PATH_MAX];
	time_t t = time(NULL);
	struct tm tm;

	(void)state;
	strftime(date, sizeof(date), "%Y%m%d", localtime_r(&t, &tm));
	assert_int_equal(snap_writer__new(4, &w), 0);
	assert_int_equal(snap_writer__submit(w, make_job(ring, NULL, 1)), 0);
	assert_int_equal(snap_writer__submit(w, make_job(ring, NULL, 2)), 0);
	assert_int_equal(snap_writer__submit(w, make_job(ring, tmp_path("o.gtrace"), 3)), 0);
	for (int i = 0; i < 3; i++) {
		j[i] = wait_done(w);
		assert_int_equal(j[i]->client, (uint64_t)i + 1);
		assert_int_equal(j[i]->err, 0);
		assert_null(j[i]->snap);	/* the chunks given back at once */
		assert_int_equal(j[i]->st.records, 500);
		assert_int_equal(records_in(j[i]->path), 500);
		assert_true(j[i]->done_ns > 0);
	}
	snprintf(want, sizeof(want), "%s/system_snapshot_%s_v1.gtrace", tmpdir, date);
	assert_string_equal(j[0]->path, want);
	snprintf(want, sizeof(want), "%s/system_snapshot_%s_v2.gtrace", tmpdir, date);
	assert_string_equal(j[1]->path, want);
	assert_string_equal(j[2]->path, tmp_path("o.gtrace"));
	assert_null(snap_writer__done(w));
	assert_int_equal(snap_writer__busy(w), 0);
	for (int i = 0; i < 3; i++) {
		unlink(j[i]->path);
		snap_job__free(j[i]);
	}
	snap_writer__free(w);
	chunk_ring__free(ring);
	assert_int_equal(entries(), 0);
}

/* A job that cannot be written (its -o exists, its directory does not)
 * comes back with the error, the file there untouched, nothing left. */
static void test_job_errors(void **state)
{
	struct chunk_ring *ring = make_ring(2);
	struct snap_writer *w;
	struct snap_job *j;
	struct stat st;
	FILE *f;

	(void)state;
	f = fopen(tmp_path("taken"), "w");
	assert_non_null(f);
	fputs("not ours to replace\n", f);
	fclose(f);
	assert_int_equal(snap_writer__new(2, &w), 0);
	assert_int_equal(snap_writer__submit(w, make_job(ring, tmp_path("taken"), 1)), 0);
	assert_int_equal(snap_writer__submit(w, make_job(ring, tmp_path("no/such/dir.gtrace"), 2)), 0);
	j = wait_done(w);
	assert_int_equal(j->err, -EEXIST);
	assert_string_equal(j->path, tmp_path("taken"));
	snap_job__free(j);
	j = wait_done(w);
	assert_int_equal(j->err, -ENOENT);
	snap_job__free(j);
	assert_int_equal(stat(tmp_path("taken"), &st), 0);
	assert_int_equal(st.st_size, 20);
	unlink(tmp_path("taken"));
	assert_int_equal(entries(), 0);
	snap_writer__free(w);
	chunk_ring__free(ring);
}

/* max_jobs bounds what is queued; a stop cancels what has not started, and
 * every job comes back once: written whole, or cancelled and not there. */
static void test_bound_and_stop(void **state)
{
	struct chunk_ring *ring = make_ring(200);
	struct snap_writer *w;
	struct snap_job *j, *extra;
	char path[64];
	unsigned back = 0, written = 0, cancelled = 0, i;

	(void)state;
	assert_int_equal(snap_writer__new(3, &w), 0);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "s%u.gtrace", i);
		assert_int_equal(snap_writer__submit(w, make_job(ring, tmp_path(path), i + 1)), 0);
	}
	extra = make_job(ring, tmp_path("extra.gtrace"), 9);
	/* busy or done: never a fourth in the queue while three are there */
	if (snap_writer__busy(w) == 3)
		assert_int_equal(snap_writer__submit(w, extra), -EBUSY);
	snap_writer__stop(w);
	assert_int_equal(snap_writer__submit(w, extra), -ECANCELED);
	snap_job__free(extra);
	while ((j = snap_writer__done(w))) {
		back++;
		assert_true(j->err == 0 || j->err == -ECANCELED);
		assert_null(j->snap);
		if (j->err == 0) {
			written++;
			assert_int_equal(records_in(j->path), 20000);
			unlink(j->path);
		} else {
			cancelled++;	/* and not there: entries() below */
		}
		snap_job__free(j);
	}
	assert_int_equal(back, 3);
	assert_int_equal(written + cancelled, 3);
	assert_int_equal(entries(), 0);
	snap_writer__free(w);
	chunk_ring__free(ring);
}

/* What a finish step saw, for test_finish. */
struct finish_seen {
	struct snap_job *j;	/* its job (the ctx) */
	int ret;		/* what it returns */
	pthread_t thread;	/* where it ran */
	char raw[PATH_MAX];	/* the raw file it was given */
	uint64_t raw_records;	/* ... complete, with these */
	bool path_there;	/* the final path existed already */
	bool chunks_held;	/* the job still held the ring's chunks */
	int calls;
};

/* A finish that checks its raw file and moves it into place (ret 0), or
 * removes it and fails with ret. */
static int finish_probe(void *ctx, const char *raw, const char *path)
{
	struct finish_seen *f = ctx;
	struct stat st;

	f->calls++;
	f->thread = pthread_self();
	snprintf(f->raw, sizeof(f->raw), "%s", raw);
	f->raw_records = records_in(raw);
	f->path_there = !lstat(path, &st);
	f->chunks_held = f->j->snap != NULL;
	if (f->ret) {
		unlink(raw);
		return f->ret;
	}
	return rename(raw, path) ? -errno : 0;
}

/* A job with a finish step (the daemon --cupti merge): the chunks go to
 * ".NAME.unmerged" next to the path, complete, then finish runs on the
 * writer's thread with the chunks given back; its error is the job's; a
 * path that exists fails before anything is written or finish called. */
static void test_finish(void **state)
{
	struct chunk_ring *ring = make_ring(5);
	struct finish_seen ok = { 0 }, bad = { .ret = -EIO }, taken = { 0 };
	struct snap_writer *w;
	struct snap_job *j;
	char want[PATH_MAX];
	FILE *f;

	(void)state;
	f = fopen(tmp_path("taken"), "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(snap_writer__new(4, &w), 0);
	ok.j = make_job(ring, tmp_path("m.gtrace"), 1);
	bad.j = make_job(ring, tmp_path("bad.gtrace"), 2);
	taken.j = make_job(ring, tmp_path("taken"), 3);
	ok.j->finish = bad.j->finish = taken.j->finish = finish_probe;
	ok.j->finish_ctx = &ok;
	bad.j->finish_ctx = &bad;
	taken.j->finish_ctx = &taken;
	assert_int_equal(snap_writer__submit(w, ok.j), 0);
	assert_int_equal(snap_writer__submit(w, bad.j), 0);
	assert_int_equal(snap_writer__submit(w, taken.j), 0);

	j = wait_done(w);
	assert_ptr_equal(j, ok.j);
	assert_int_equal(j->err, 0);
	assert_int_equal(ok.calls, 1);
	assert_false(pthread_equal(ok.thread, pthread_self()));
	snprintf(want, sizeof(want), "%s/.m.gtrace.unmerged", tmpdir);
	assert_string_equal(ok.raw, want);
	assert_int_equal(ok.raw_records, 500);
	assert_false(ok.path_there);
	assert_false(ok.chunks_held);
	assert_string_equal(j->path, tmp_path("m.gtrace"));
	assert_int_equal(records_in(j->path), 500);
	unlink(j->path);
	snap_job__free(j);

	j = wait_done(w);
	assert_ptr_equal(j, bad.j);
	assert_int_equal(j->err, -EIO);
	assert_int_equal(bad.calls, 1);
	snap_job__free(j);

	j = wait_done(w);
	assert_ptr_equal(j, taken.j);
	assert_int_equal(j->err, -EEXIST);
	assert_int_equal(taken.calls, 0);
	snap_job__free(j);

	unlink(tmp_path("taken"));
	assert_int_equal(entries(), 0);
	snap_writer__free(w);
	chunk_ring__free(ring);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_snap_writer");
}

static int group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_in_order),
		cmocka_unit_test(test_job_errors),
		cmocka_unit_test(test_bound_and_stop),
		cmocka_unit_test(test_finish),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
