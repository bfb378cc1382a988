// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "daemon/snap_writer.h"

#define WRITER_NICE	10	/* the thread's nice value */

struct snap_writer {
	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t wake;		/* a job was queued, or stop */
	pthread_t thread;
	bool started;			/* thread is to be joined */
	bool stop;			/* the thread is to end */
	unsigned max_jobs;
	unsigned busy;			/* queued + being written */
	struct snap_job *queue, **queue_tail;	/* to write, oldest first */
	struct snap_job *done, **done_tail;	/* written or cancelled, oldest first */
};

void snap_job__free(struct snap_job *j)
{
	if (!j)
		return;
	chunk_ring__snap_free(j->snap);
	free(j->out);
	free((void *)j->o.preamble);
	free((char *)j->info.options);
	free(j);
}

/* system_WHAT_YYYYMMDD_vN.gtrace in dir: the first N not taken. Only this
 * thread makes names, one file at a time, so two snapshots queued together
 * never pick the same one. */
static int default_path(const struct snap_job *j, char *out, size_t len)
{
	char date[16];
	time_t t = time(NULL);
	struct tm tm;
	struct stat st;
	int n;

	strftime(date, sizeof(date), "%Y%m%d", localtime_r(&t, &tm));
	for (n = 1; n < 100000; n++) {
		if (snprintf(out, len, "%s/system_%s_%s_v%d.gtrace", j->dir, j->what, date, n) >= (int)len)
			return -ENAMETOOLONG;
		if (lstat(out, &st) && errno == ENOENT)
			return 0;
	}
	return -EEXIST;
}

/* ".NAME.unmerged" next to path: not a trace's name, so a leftover does
 * not pass for one. 0, -EEXIST when path exists, or -ENAMETOOLONG. */
static int raw_path(const char *path, char *raw, size_t len)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	int n;

	if (!lstat(path, &st))
		return -EEXIST;
	if (slash)
		n = snprintf(raw, len, "%.*s/.%s.unmerged", (int)(slash - path), path, slash + 1);
	else
		n = snprintf(raw, len, ".%s.unmerged", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void write_job(struct snap_job *j)
{
	char raw[PATH_MAX];

	if (j->out) {
		if (snprintf(j->path, sizeof(j->path), "%s", j->out) >= (int)sizeof(j->path))
			j->err = -ENAMETOOLONG;
	} else {
		j->err = default_path(j, j->path, sizeof(j->path));
	}
	if (!j->err && j->finish)
		j->err = raw_path(j->path, raw, sizeof(raw));
	if (!j->err)
		j->err = chunk_ring__snap_write(j->snap, j->finish ? raw : j->path, &j->info, &j->o,
						&j->trailer, &j->st);
	/* the chunks go back now, not when the loop gets round to it (nor
	 * after a merge) */
	chunk_ring__snap_free(j->snap);
	j->snap = NULL;
	if (!j->err && j->finish)
		j->err = j->finish(j->finish_ctx, raw, j->path);
	if (j->err == -ENAMETOOLONG)
		j->path[0] = 0;
}

/* The lock is held. */
static void finish(struct snap_writer *w, struct snap_job *j)
{
	j->done_ns = clock__mono_ns();
	j->next = NULL;
	*w->done_tail = j;
	w->done_tail = &j->next;
	w->busy--;
}

static void *writer_main(void *arg)
{
	struct snap_writer *w = arg;
	struct snap_job *j;

	/* on a busy machine the recording loop comes first: compressing a
	 * snapshot is the work that can wait (a failure leaves nice 0) */
	setpriority(PRIO_PROCESS, (id_t)gettid(), WRITER_NICE);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && !w->queue)
			pthread_cond_wait(&w->wake, &w->lock);
		if (!w->queue)
			break;
		j = w->queue;
		w->queue = j->next;
		if (!w->queue)
			w->queue_tail = &w->queue;
		pthread_mutex_unlock(&w->lock);
		write_job(j);
		pthread_mutex_lock(&w->lock);
		finish(w, j);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int snap_writer__new(unsigned max_jobs, struct snap_writer **out)
{
	struct snap_writer *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->max_jobs = max_jobs ? max_jobs : 1;
	w->queue_tail = &w->queue;
	w->done_tail = &w->done;
	if ((err = -pthread_mutex_init(&w->lock, NULL))) {
		free(w);
		return err;
	}
	if ((err = -pthread_cond_init(&w->wake, NULL))) {
		pthread_mutex_destroy(&w->lock);
		free(w);
		return err;
	}
	/* SIGTERM, SIGHUP, SIGUSR1 are for the loop: the thread inherits a
	 * mask that blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		snap_writer__free(w);
		return err;
	}
	w->started = true;
	*out = w;
	return 0;
}

int snap_writer__submit(struct snap_writer *w, struct snap_job *j)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->stop) {
		err = -ECANCELED;
	} else if (w->busy >= w->max_jobs) {
		err = -EBUSY;
	} else {
		j->next = NULL;
		*w->queue_tail = j;
		w->queue_tail = &j->next;
		w->busy++;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

struct snap_job *snap_writer__done(struct snap_writer *w)
{
	struct snap_job *j;

	if (!w)
		return NULL;
	pthread_mutex_lock(&w->lock);
	j = w->done;
	if (j) {
		w->done = j->next;
		if (!w->done)
			w->done_tail = &w->done;
		j->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return j;
}

unsigned snap_writer__busy(struct snap_writer *w)
{
	unsigned n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	n = w->busy;
	pthread_mutex_unlock(&w->lock);
	return n;
}

void snap_writer__stop(struct snap_writer *w)
{
	struct snap_job *j;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	while ((j = w->queue)) {
		w->queue = j->next;
		j->err = -ECANCELED;
		chunk_ring__snap_free(j->snap);
		j->snap = NULL;
		finish(w, j);
	}
	w->queue_tail = &w->queue;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	if (w->started) {
		pthread_join(w->thread, NULL);
		w->started = false;
	}
}

void snap_writer__free(struct snap_writer *w)
{
	struct snap_job *j;

	if (!w)
		return;
	snap_writer__stop(w);
	while ((j = snap_writer__done(w)))
		snap_job__free(j);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
