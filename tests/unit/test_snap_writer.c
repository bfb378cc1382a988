// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's snapshot writer (user/record/snap_writer.c):
 * jobs come back once each, in order, with the file written under a name
 * of its own (two default names queued together never collide), a job that
 * cannot be written comes back with its error and leaves nothing, and a
 * stop cancels what has not started.
 */
#include <dirent.h>
#include <errno.h>
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
#include "record/snap_writer.h"
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
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
