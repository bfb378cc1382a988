// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf daemon --cupti (daemon_cupti.h): the agents' spool files
 * followed as they grow, their records into the window.
 *
 * A spool is read record by record from its start.  Where that is not
 * possible -- a file taken over from an earlier daemon, which gave its start
 * back; a damaged record; a program that writes faster than the daemon
 * reads (more than SPOOL_BACKLOG_MAX unread) -- the reader skips ahead and
 * finds its way back at the agent's next flush mark: every record starts at
 * a multiple of 8 in the file, and a mark is a header of a known type, size
 * and pid.  What it skipped is counted; the idle detector starts anew there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cupti/gtrace_cupti.h"
#include "format/records.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/cupti_session.h"
#include "record/daemon_cupti.h"
#include "record/gpu_idle.h"
#include "record/recorder.h"

#define PAGE		4096ull
#define MAX_GAPS	8	/* gaps taken from one flush mark */

enum tail_mode {
	TAIL_START,	/* its magic not read yet */
	TAIL_READ,	/* off is where a record starts */
	TAIL_RESYNC,	/* off is a multiple of 8 from which a flush mark is looked for */
	TAIL_OFF,	/* left out: not a regular file of root's or ours */
};

/* One spool file followed. */
struct tail {
	char name[64];		/* gtrace-cupti.PID.spool */
	uint32_t pid;		/* its process (the name's; every record must say so too) */
	int fd;			/* read and written (holes punched), -1 when left out */
	enum tail_mode mode;
	uint64_t off;		/* where reading goes on */
	uint64_t punched;	/* [0, punched) given back */
	uint64_t disk;		/* bytes it holds on disk, at the last scan */
	bool done;		/* the agent's last record (its counters) was read */
	bool gone;		/* its process exited */
	bool seen;		/* in the directory at the last scan */
	bool at_end;		/* the last read reached the end of what is written */
	bool behind_said;	/* "writes faster than the daemon reads" said */
	struct gpu_idle *idle;	/* --trigger gpu-idle, NULL otherwise or after ENOMEM */
};

struct daemon_cupti {
	const char *dir;		/* the run directory (the session's) */
	struct tail *t;			/* the spool files followed */
	size_t n, cap;
	size_t next;			/* where the next poll starts reading: fairness */
	uint64_t next_scan;		/* when the directory is read again */
	uint64_t threshold;		/* gpu-idle>TIME, 0 = none */
	uint8_t *buf;			/* SPOOL_READ_BYTES, 8-byte aligned */
	bool no_punch;			/* the file system gives no bytes back: said once */
	/* counters, for status */
	uint64_t files;			/* spool files followed since the start */
	uint64_t removed;		/* ... removed once read to their end */
	uint64_t left_out;		/* ... refused (not a regular file of root's or ours) */
	uint64_t resyncs;		/* times reading skipped ahead to the next flush mark */
	uint64_t skipped;		/* bytes skipped so */
	uint64_t records;		/* the agents' records put into the window */
	uint64_t bad;			/* records skipped: not the agent's types, another pid's */
	uint64_t marks;			/* flush marks read */
	uint64_t gaps;			/* gpu-idle gaps found */
	uint64_t punched;		/* bytes given back */
};

static bool process_gone(uint32_t pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* Gives [punched, upto) back, whole pages, once there is enough of it. */
static void give_back(struct daemon_cupti *d, struct tail *t, uint64_t upto)
{
	upto &= ~(PAGE - 1);
	if (d->no_punch || t->fd < 0 || upto < t->punched + SPOOL_PUNCH_MIN)
		return;
	if (fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)t->punched,
		      (off_t)(upto - t->punched))) {
		d->no_punch = true;
		pr_warn("CUPTI: cannot give read bytes of %s/%s back (%s): spool files grow until "
			"their process exits", d->dir, t->name, strerror(errno));
		return;
	}
	d->punched += upto - t->punched;
	t->punched = upto;
}

/* The idle detector from scratch: what it held does not join what comes
 * after a skip. */
static void idle_restart(struct daemon_cupti *d, struct tail *t)
{
	gpu_idle__free(t->idle);
	t->idle = d->threshold ? gpu_idle__new(d->threshold) : NULL;
	if (d->threshold && !t->idle)
		pr_warn("CUPTI: pid %u: no gpu-idle trigger: %s", t->pid, strerror(ENOMEM));
}

/* Reading goes on at the next flush mark from off (rounded up to 8). */
static void resync(struct daemon_cupti *d, struct tail *t, uint64_t off)
{
	off = (off + 7) & ~7ull;
	if (off > t->off)
		d->skipped += off - t->off;
	t->off = off;
	t->mode = TAIL_RESYNC;
	d->resyncs++;
	idle_restart(d, t);
}

/* Takes a spool file found in the directory; adopted: there before us. */
static void follow(struct recorder *r, const char *name, pid_t pid, bool adopted)
{
	struct daemon_cupti *d = r->dcupti;
	char path[PATH_MAX];
	struct tail *t;
	struct stat st;

	if (d->n >= SPOOL_MAX_FILES || strlen(name) >= sizeof(t->name) ||
	    vec__reserve(&d->t, &d->cap, d->n, 1, 16))
		return;	/* tried again at the next scan */
	t = &d->t[d->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->pid = (uint32_t)pid;
	t->seen = true;
	d->files++;
	snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	/* a program's file: no link followed, no FIFO waited on; O_RDWR for
	 * the holes */
	t->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (t->fd >= 0 && (fstat(t->fd, &st) || !S_ISREG(st.st_mode) ||
			   (st.st_uid != 0 && st.st_uid != geteuid()))) {
		close(t->fd);
		t->fd = -1;
	}
	if (t->fd < 0) {
		t->mode = TAIL_OFF;
		d->left_out++;
		pr_warn("CUPTI: %s/%s left out: not a regular file of root's or ours", d->dir, name);
		return;
	}
	idle_restart(d, t);
	if (adopted)
		pr_info("CUPTI: taking over %s (pid %d) from an earlier recorder", name, (int)pid);
	else
		pr_verbose("CUPTI: pid %d joined (%s)", (int)pid, name);
}

static void unfollow(struct daemon_cupti *d, size_t i, bool remove)
{
	struct tail *t = &d->t[i];

	if (remove) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", d->dir, t->name);
		if (unlink(path) && errno != ENOENT)
			pr_warn("CUPTI: failed to remove %s: %s", path, strerror(errno));
		else
			d->removed++;
	}
	if (t->fd >= 0)
		close(t->fd);
	gpu_idle__free(t->idle);
	d->t[i] = d->t[--d->n];
}

/* New spool files, files gone, processes gone, bytes on disk. */
static void scan(struct recorder *r, bool first)
{
	struct daemon_cupti *d = r->dcupti;
	struct dirent *de;
	size_t i;
	DIR *dir = opendir(d->dir);

	if (!dir) {
		pr_warn("CUPTI: cannot read %s: %s", d->dir, strerror(errno));
		return;
	}
	for (i = 0; i < d->n; i++)
		d->t[i].seen = false;
	while ((de = readdir(dir))) {
		pid_t pid = cupti_session__spool_pid(de->d_name);

		if (!pid)
			continue;
		for (i = 0; i < d->n && strcmp(d->t[i].name, de->d_name); i++)
			;
		if (i < d->n)
			d->t[i].seen = true;
		else
			follow(r, de->d_name, pid, first);
	}
	closedir(dir);
	for (i = 0; i < d->n;) {
		struct tail *t = &d->t[i];
		struct stat st;

		if (!t->seen) {		/* removed by someone else */
			unfollow(d, i, false);
			continue;
		}
		if (t->fd >= 0) {
			if (!t->gone)
				t->gone = process_gone(t->pid);
			t->disk = fstat(t->fd, &st) ? 0 : (uint64_t)st.st_blocks * 512;
		}
		i++;
	}
}

/* A mark's header: the agent's own, of this process. */
static bool is_mark(const struct tail *t, const struct gt_hdr *h)
{
	return h->type == GT_REC_CUPTI_MARK && h->size == sizeof(struct gt_cupti_mark) &&
	       h->pid == t->pid && !h->api && !h->cpu;
}

/* One record of t's: into the window, or (a mark) to the idle detector. */
static void take(struct recorder *r, struct tail *t, const struct gt_hdr *h)
{
	struct daemon_cupti *d = r->dcupti;
	struct gpu_idle_gap gaps[MAX_GAPS];
	int n, i;

	/* what the merger takes from a spool: the agent's types, of the file's
	 * own process */
	if (h->type < GT_REC_GPU_KERNEL || h->type > GT_REC_MAX || h->type == GT_REC_MERGE_STATS ||
	    !gt_rec__size_ok(h) || h->pid != t->pid) {
		d->bad++;
		return;
	}
	if (h->type == GT_REC_CUPTI_MARK) {
		d->marks++;
		if (!t->idle)
			return;
		n = gpu_idle__mark(t->idle, h->ts, !t->gone && !process_gone(t->pid), gaps, MAX_GAPS);
		for (i = 0; i < n; i++) {
			d->gaps++;
			trigger__on_gpu_idle(r, t->pid, gaps[i].end, gaps[i].end - gaps[i].start);
		}
		if (n < 0) {
			pr_warn("CUPTI: pid %u: gpu-idle trigger off: %s", t->pid, strerror(ENOMEM));
			gpu_idle__free(t->idle);
			t->idle = NULL;
		}
		return;
	}
	if (h->type == GT_REC_CUPTI_STATS)
		t->done = true;
	if (t->idle && gpu_idle__feed(t->idle, h)) {
		pr_warn("CUPTI: pid %u: gpu-idle trigger off: %s", t->pid, strerror(ENOMEM));
		gpu_idle__free(t->idle);
		t->idle = NULL;
	}
	recorder__write(r, h);
	d->records++;
}

/* Takes the complete records of b[0, n); returns the bytes they fill.  A
 * damaged one sends t looking for the next mark. */
static size_t take_records(struct recorder *r, struct tail *t, const uint8_t *b, size_t n)
{
	struct daemon_cupti *d = r->dcupti;
	size_t p = 0;

	while (p + sizeof(struct gt_hdr) <= n) {
		const struct gt_hdr *h = (const void *)(b + p);

		if (h->size < sizeof(*h) || h->size % 8) {
			pr_warn("CUPTI: %s/%s: damaged record at offset %llu (size %u): reading goes on "
				"at pid %u's next flush mark", d->dir, t->name,
				(unsigned long long)(t->off + p), h->size, t->pid);
			resync(d, t, t->off + p + 8);
			return 0;
		}
		if (p + h->size > n)
			break;	/* not complete yet */
		take(r, t, h);
		p += h->size;
	}
	t->off += p;
	return p;
}

/* Looks for a mark in b[0, n) (read at t->off): reading goes on there.
 * Returns the bytes passed over. */
static size_t find_mark(struct daemon_cupti *d, struct tail *t, const uint8_t *b, size_t n)
{
	size_t p;

	for (p = 0; p + sizeof(struct gt_cupti_mark) <= n; p += 8) {
		if (is_mark(t, (const void *)(b + p))) {
			pr_verbose("CUPTI: pid %u: reading again at its flush mark at offset %llu",
				   t->pid, (unsigned long long)(t->off + p));
			d->skipped += p;
			t->off += p;
			t->mode = TAIL_READ;
			return p;
		}
	}
	d->skipped += p;
	t->off += p;
	return p;
}

/* Reads what t grew by, at most budget bytes. Returns the bytes passed. */
static uint64_t read_tail(struct recorder *r, struct tail *t, uint64_t budget)
{
	struct daemon_cupti *d = r->dcupti;
	uint64_t passed = 0;
	struct stat st;

	t->at_end = false;
	if (t->mode == TAIL_OFF || fstat(t->fd, &st))
		return 0;
	if (t->mode == TAIL_START) {
		char magic[GT_CUPTI_MAGIC_LEN];

		if (pread(t->fd, magic, sizeof(magic), 0) < (ssize_t)sizeof(magic)) {
			t->at_end = true;	/* the agent is writing its first bytes */
			return 0;
		}
		t->off = GT_CUPTI_MAGIC_LEN;
		t->mode = TAIL_READ;
		if (memcmp(magic, GT_CUPTI_MAGIC, sizeof(magic))) {
			/* an earlier daemon gave the start back: from its data on */
			off_t data = lseek(t->fd, 0, SEEK_DATA);

			pr_info("CUPTI: %s/%s has no spool start (an earlier daemon's): reading goes on "
				"at pid %u's next flush mark", d->dir, t->name, t->pid);
			resync(d, t, data > 0 ? (uint64_t)data : GT_CUPTI_MAGIC_LEN);
		}
	}
	/* a program that writes faster than this reads: the disk is not to
	 * fill up for it */
	if ((uint64_t)st.st_size > t->off + SPOOL_BACKLOG_MAX) {
		if (!t->behind_said)
			pr_warn("CUPTI: pid %u writes GPU records faster than the daemon reads them: "
				"skipping what is older than the last %u MiB (counted)", t->pid,
				SPOOL_RESYNC_BYTES >> 20);
		t->behind_said = true;
		resync(d, t, (uint64_t)st.st_size - SPOOL_RESYNC_BYTES);
	}
	while (passed < budget) {
		size_t want = budget - passed < SPOOL_READ_BYTES ? budget - passed : SPOOL_READ_BYTES;
		enum tail_mode before = t->mode;
		ssize_t n = pread(t->fd, d->buf, want, (off_t)t->off);
		size_t p;

		if (n <= 0) {
			t->at_end = true;
			break;
		}
		p = t->mode == TAIL_RESYNC ? find_mark(d, t, d->buf, (size_t)n) :
					     take_records(r, t, d->buf, (size_t)n);
		passed += p;
		/* a mark found, a damaged record: on from the new offset */
		if (t->mode != before)
			continue;
		/* a short read is the end of what is written (a record cut
		 * there is still being written) */
		if ((size_t)n < want) {
			t->at_end = true;
			break;
		}
		if (!p)
			break;	/* the budget is too short for the next record */
	}
	give_back(d, t, t->off);
	return passed;
}

void daemon_cupti__poll(struct recorder *r, bool drain)
{
	struct daemon_cupti *d = r->dcupti;
	uint64_t now, budget = drain ? SPOOL_DRAIN_BYTES : SPOOL_POLL_BYTES;
	size_t i, k;

	if (!d)
		return;
	now = now_ns(CLOCK_MONOTONIC);
	if (drain || now >= d->next_scan) {
		scan(r, false);
		d->next_scan = now + SPOOL_SCAN_NS;
	}
	for (k = 0; k < d->n && budget; k++) {
		uint64_t b = drain ? budget : budget < SPOOL_FILE_BYTES ? budget : SPOOL_FILE_BYTES;

		i = (d->next + k) % d->n;
		budget -= read_tail(r, &d->t[i], b);
	}
	if (d->n)
		d->next = (d->next + 1) % d->n;
	/* read to their end: the process is gone or its agent stopped */
	for (i = 0; i < d->n;) {
		struct tail *t = &d->t[i];

		if (t->mode != TAIL_OFF && t->at_end && (t->gone || t->done)) {
			pr_verbose("CUPTI: pid %u %s: %s removed", t->pid,
				   t->gone ? "exited" : "stopped recording", t->name);
			unfollow(d, i, true);
			continue;
		}
		i++;
	}
}

int daemon_cupti__new(struct recorder *r)
{
	struct daemon_cupti *d = calloc(1, sizeof(*d));

	if (d)
		d->buf = malloc(SPOOL_READ_BYTES);
	if (!d || !d->buf) {
		free(d);
		pr_err("failed to allocate the CUPTI reader: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	d->dir = cupti_session__dir(r->cupti);
	d->threshold = trigger__gpu_idle_threshold(r);
	r->dcupti = d;
	scan(r, true);
	d->next_scan = now_ns(CLOCK_MONOTONIC) + SPOOL_SCAN_NS;
	pr_info("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s",
		cupti_session__lib(r->cupti), d->dir);
	return 0;
}

int daemon_cupti__finish_snapshot(const struct record_hooks *h, const char *raw, const char *path)
{
	int err = 0;

	if (h && h->on_snapshot && !h->on_snapshot(h->ctx, raw, path)) {
		unlink(raw);
		return 0;
	}
	/* unmerged is better than nothing: gtrace-bpf merge PATH links it
	 * later; a link, so that nothing under path is replaced */
	if (link(raw, path))
		err = -errno;
	unlink(raw);
	if (!err && h && h->on_snapshot)
		pr_warn("snapshot %s: its GPU records are not linked to their calls (gtrace-bpf merge %s "
			"does it)", path, path);
	return err;
}

size_t daemon_cupti__status(const struct recorder *r, char *buf, size_t len)
{
	const struct daemon_cupti *d = r->dcupti;
	uint64_t disk = 0;
	size_t i;
	int n;

	if (!d || !len)
		return 0;
	for (i = 0; i < d->n; i++)
		disk += d->t[i].disk;
	n = snprintf(buf, len,
		     "cupti_processes %zu\n"
		     "cupti_spool_files %llu\n"
		     "cupti_spool_removed %llu\n"
		     "cupti_spool_left_out %llu\n"
		     "cupti_spool_disk_bytes %llu\n"
		     "cupti_spool_given_back_bytes %llu\n"
		     "cupti_spool_resyncs %llu\n"
		     "cupti_spool_skipped_bytes %llu\n"
		     "cupti_records %llu\n"
		     "cupti_bad_records %llu\n"
		     "cupti_marks %llu\n"
		     "gpu_idle_gaps %llu\n",
		     d->n, (unsigned long long)d->files, (unsigned long long)d->removed,
		     (unsigned long long)d->left_out, (unsigned long long)disk,
		     (unsigned long long)d->punched, (unsigned long long)d->resyncs,
		     (unsigned long long)d->skipped, (unsigned long long)d->records,
		     (unsigned long long)d->bad, (unsigned long long)d->marks,
		     (unsigned long long)d->gaps);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

void daemon_cupti__free(struct recorder *r)
{
	struct daemon_cupti *d = r->dcupti;

	if (!d)
		return;
	while (d->n)
		unfollow(d, d->n - 1, false);
	free(d->t);
	free(d->buf);
	free(d);
	r->dcupti = NULL;
	/* the spool files and "live" go with the directory: the agents stop */
	cupti_session__remove_dir(r->cupti);
}
