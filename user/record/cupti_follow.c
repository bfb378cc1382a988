// SPDX-License-Identifier: MIT
/*
 * The agents' spool files followed as they grow (cupti_follow.h).
 *
 * A spool is read record by record.  Where that is not possible -- a damaged
 * record; a program that writes faster than the recorder reads (more than
 * SPOOL_BACKLOG_MAX unread) -- the reader skips ahead and finds its way back
 * at the agent's next flush mark: every record starts at a multiple of 8 in
 * the file, and a mark is a header of a known type, size and pid.  What it
 * skipped is counted; the owner starts anew there (restart).
 *
 * Every file is reached through the spool directory's descriptor
 * (record/cupti_session.h), opened without following a link or waiting on a
 * FIFO, and taken only when it is a regular file of root's, ours or its
 * process' user.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "cupti/gtrace_cupti.h"
#include "format/records.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/cupti_follow.h"
#include "record/cupti_session.h"

#define PAGE		4096ull

enum tail_mode {
	TAIL_START,	/* where its unread records begin is not known yet */
	TAIL_READ,	/* off is where a record starts */
	TAIL_RESYNC,	/* off is a multiple of 8 from which a flush mark is looked for */
	TAIL_OFF,	/* left out: not a regular file of root's, ours or its process' */
	TAIL_UNWANTED,	/* of a process the recording does not trace: not opened */
};

/* One spool file followed. */
struct tail {
	char name[64];		/* gtrace-cupti.PID[.N].spool */
	uint32_t pid;		/* its process (the name's; every record must say so too) */
	int fd;			/* read and written (holes punched), -1 when not opened */
	enum tail_mode mode;
	uint64_t off;		/* where reading goes on */
	uint64_t punched;	/* [0, punched) given back: zeros */
	uint64_t disk;		/* bytes it holds on disk, at the last scan */
	uint64_t taken;		/* records taken from it */
	uint64_t stats_ts;	/* the last counters of its agent: when written, 0 = none */
	uint64_t lost_disk, lost_backlog, dropped;	/* what those counters said was lost */
	bool gone;		/* its process exited */
	bool seen;		/* in the directory at the last scan */
	bool at_end;		/* the last read reached the end of what is written */
	bool cut;		/* it ends in a record cut short */
	bool behind_said;	/* "writes faster than the recorder reads" said */
	bool empty_said;	/* "its agent has not written its magic yet" said (verbose) */
	void *slot;		/* the owner's */
};

struct cupti_follow {
	struct cupti_follow_opts o;
	int dfd;			/* the spool directory (the session's) */
	const char *dir;		/* its path, for messages */
	uint64_t start;			/* records before it are not this recording's, 0 = all are */
	bool private_dir;		/* -- CMD's: every process in it is the recording's */
	int ino;			/* inotify on the directory: new spools at the next poll */
	struct tail *t;			/* the spool files followed */
	size_t n, cap;
	size_t next;			/* where the next poll starts reading: fairness */
	uint64_t next_scan;		/* when the directory is read again */
	uint8_t *buf;			/* SPOOL_READ_BYTES, 8-byte aligned */
	bool no_punch;			/* the file system gives no bytes back: said once */
	uint64_t orphans_said;		/* orphans counted when that was last said */
	uint32_t *joined;		/* pids whose spools were followed */
	size_t njoined, joined_cap;
	struct cupti_follow_counts c;
};

static bool process_gone(uint32_t pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

static uint64_t realtime_of_mono(uint64_t mono)
{
	uint64_t now_m = clock__ns(CLOCK_MONOTONIC), now_r = clock__ns(CLOCK_REALTIME);

	return now_r - (now_m > mono ? now_m - mono : 0);
}

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* Gives [punched, upto) back, exactly: upto is where the next unread record
 * starts, so the file's first non-zero bytes say where reading goes on. The
 * hole starts at the page punched is in: [0, punched) is zeros already, and
 * a page the last hole ended inside is only freed by a hole that covers it
 * whole (else one page a give-back would stay on disk). */
static void give_back(struct cupti_follow *f, struct tail *t, uint64_t upto, bool now)
{
	uint64_t from = t->punched & ~4095ull;

	if (f->no_punch || t->fd < 0 || upto <= t->punched || (!now && upto < t->punched + SPOOL_PUNCH_MIN))
		return;
	if (fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(upto - from))) {
		f->no_punch = true;
		pr_warn("CUPTI: cannot give read bytes of %s/%s back (%s): spool files grow until "
			"their process exits", f->dir, t->name, strerror(errno));
		return;
	}
	f->c.punched += upto - t->punched;
	t->punched = upto;
}

/* Reading goes on at the next flush mark from off (rounded up to 8). */
static void resync(struct cupti_follow *f, struct tail *t, uint64_t off)
{
	off = (off + 7) & ~7ull;
	if (off > t->off)
		f->c.skipped += off - t->off;
	t->off = off;
	t->mode = TAIL_RESYNC;
	f->c.resyncs++;
	if (f->o.restart)
		f->o.restart(f->o.ctx, &t->slot, t->pid, false);
}

static void joined_add(struct cupti_follow *f, uint32_t pid)
{
	if (!cupti_follow__joined(f, pid) &&
	    !vec__reserve(&f->joined, &f->joined_cap, f->njoined, 1, 16))
		f->joined[f->njoined++] = pid;
}

/* The spool file may be read: a regular file of root's, ours, or its
 * process' user. */
static bool owner_ok(const struct cupti_follow *f, const struct stat *st, uint32_t pid)
{
	uid_t uid;

	if (st->st_uid == 0 || st->st_uid == geteuid())
		return true;
	return f->o.owner && f->o.owner(f->o.ctx, (pid_t)pid, &uid) && uid == st->st_uid;
}

/* Opens t's file for reading and giving back; false (said, counted) when it
 * is not one to read. */
static bool open_tail(struct cupti_follow *f, struct tail *t)
{
	struct stat st;

	t->fd = openat(f->dfd, t->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (t->fd >= 0 && (fstat(t->fd, &st) || !S_ISREG(st.st_mode) || !owner_ok(f, &st, t->pid))) {
		close(t->fd);
		t->fd = -1;
	}
	if (t->fd >= 0)
		return true;
	t->mode = TAIL_OFF;
	f->c.left_out++;
	pr_warn("CUPTI: %s/%s left out: not a regular file of root's, ours or its process' user", f->dir,
		t->name);
	return false;
}

/* A spool found in the directory. */
static void follow(struct cupti_follow *f, const char *name, pid_t pid)
{
	struct tail *t;

	if (f->n >= SPOOL_MAX_FILES || strlen(name) >= sizeof(t->name) ||
	    vec__reserve(&f->t, &f->cap, f->n, 1, 16))
		return;	/* tried again at the next scan */
	t = &f->t[f->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->pid = (uint32_t)pid;
	t->seen = true;
	t->fd = -1;
	t->gone = process_gone(t->pid);
	if (!t->gone && f->o.wants && !f->o.wants(f->o.ctx, pid)) {
		t->mode = TAIL_UNWANTED;
		f->c.not_wanted++;
		return;
	}
	f->c.files++;
	if (!open_tail(f, t))
		return;
	if (!t->gone && cupti_session__admit(f->o.session, pid))
		pr_warn("CUPTI: failed to admit pid %d: %s", (int)pid, strerror(errno));
	joined_add(f, t->pid);
	pr_verbose("CUPTI: pid %d joined (%s)", (int)pid, name);
}

/* A spool of a process that ended before this recording began: nothing in
 * it is ours. */
static bool orphan(struct cupti_follow *f, const char *name, pid_t pid)
{
	struct stat st;

	if (f->private_dir || !f->start || !process_gone((uint32_t)pid) ||
	    fstatat(f->dfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    ts_ns(&st.st_mtim) >= realtime_of_mono(f->start))
		return false;
	if (unlinkat(f->dfd, name, 0)) {
		if (errno != ENOENT)
			pr_warn("CUPTI: failed to remove %s/%s: %s", f->dir, name, strerror(errno));
		return true;
	}
	f->c.orphans++;
	f->c.orphan_bytes += (uint64_t)st.st_blocks * 512;
	return true;
}

static void say_losses(struct cupti_follow *f, struct tail *t);

static void unfollow(struct cupti_follow *f, size_t i, bool remove)
{
	struct tail *t = &f->t[i];

	if (t->cut && t->gone)
		f->c.cut++;
	say_losses(f, t);
	if (remove) {
		if (unlinkat(f->dfd, t->name, 0) && errno != ENOENT)
			pr_warn("CUPTI: failed to remove %s/%s: %s", f->dir, t->name, strerror(errno));
		else
			f->c.removed++;
	}
	if (f->o.restart)
		f->o.restart(f->o.ctx, &t->slot, t->pid, true);
	if (t->fd >= 0)
		close(t->fd);
	f->t[i] = f->t[--f->n];
}

/* New spool files, files gone, processes gone, bytes on disk. */
static void scan(struct cupti_follow *f)
{
	int fd = dup(f->dfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t i;

	if (!dir) {
		pr_warn("CUPTI: cannot read %s: %s", f->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dir);	/* a dup shares the offset of the last reader */
	for (i = 0; i < f->n; i++)
		f->t[i].seen = false;
	while ((de = readdir(dir))) {
		pid_t pid = cupti_session__spool_pid(de->d_name);

		if (!pid)
			continue;
		for (i = 0; i < f->n && strcmp(f->t[i].name, de->d_name); i++)
			;
		if (i < f->n)
			f->t[i].seen = true;
		else if (!orphan(f, de->d_name, pid))
			follow(f, de->d_name, pid);
	}
	closedir(dir);
	for (i = 0; i < f->n;) {
		struct tail *t = &f->t[i];
		struct stat st;

		if (!t->seen) {		/* removed by someone else */
			unfollow(f, i, false);
			continue;
		}
		if (!t->gone)
			t->gone = process_gone(t->pid);
		/* a process the recording came to trace (a child, one that
		 * moved into the cgroup) */
		if (t->mode == TAIL_UNWANTED && (t->gone || !f->o.wants || f->o.wants(f->o.ctx, t->pid))) {
			char name[sizeof(t->name)];
			pid_t pid = (pid_t)t->pid;

			snprintf(name, sizeof(name), "%s", t->name);
			f->t[i] = f->t[--f->n];
			follow(f, name, pid);
			continue;
		}
		if (t->fd >= 0)
			t->disk = fstat(t->fd, &st) ? 0 : (uint64_t)st.st_blocks * 512;
		i++;
	}
	if (f->c.orphans > f->orphans_said) {
		pr_info("CUPTI: removed %llu spool file%s of programs that ended while no recorder read them "
			"(%.1f MiB of GPU records no recording has)",
			(unsigned long long)(f->c.orphans - f->orphans_said),
			f->c.orphans - f->orphans_said == 1 ? "" : "s", f->c.orphan_bytes / 1048576.0);
		f->orphans_said = f->c.orphans;
	}
}

/* A mark's header: the agent's own, of this process. */
static bool is_mark(const struct tail *t, const struct gt_hdr *h)
{
	return h->type == GT_REC_CUPTI_MARK && h->size == sizeof(struct gt_cupti_mark) &&
	       h->pid == t->pid && !h->api && !h->cpu;
}

/* What the merger takes from a spool: the agent's types, of the file's own
 * process. */
static bool agent_rec(const struct tail *t, const struct gt_hdr *h)
{
	return h->type >= GT_REC_GPU_KERNEL && h->type <= GT_REC_MAX && h->type != GT_REC_MERGE_STATS &&
	       gt_rec__size_ok(h) && h->pid == t->pid;
}

/* The agent's counters: what it lost, and that it handed everything over. */
static void take_stats(struct cupti_follow *f, struct tail *t, const struct gt_hdr *h)
{
	const struct gt_cupti_stats *s = (const void *)h;

	t->stats_ts = h->ts;
	/* a detached agent closed the file for good: it goes once read, as
	 * the file of a process that ended (a later attach makes another) */
	if (h->size >= sizeof(*s) && (s->flags & GT_CUPTI_ST_DETACHED))
		t->gone = true;
	t->dropped += s->dropped;
	f->c.dropped += s->dropped;
	if (h->size >= sizeof(*s)) {
		t->lost_disk += s->lost_disk;
		t->lost_backlog += s->lost_backlog;
		f->c.lost_disk += s->lost_disk;
		f->c.lost_backlog += s->lost_backlog;
	}
}

/* One record of t's: to the owner, or (a mark) to its mark callback. */
static void take(struct cupti_follow *f, struct tail *t, const struct gt_hdr *h)
{
	if (!agent_rec(t, h)) {
		f->c.bad++;
		return;
	}
	/* the program ran on from an earlier recording: what it did then is
	 * not this one's */
	if (h->ts < f->start) {
		f->c.before++;
		return;
	}
	if (h->type == GT_REC_CUPTI_MARK) {
		f->c.marks++;
		if (f->o.mark)
			f->o.mark(f->o.ctx, &t->slot, t->pid, h->ts, !t->gone && !process_gone(t->pid));
		return;
	}
	if (h->type == GT_REC_CUPTI_STATS)
		take_stats(f, t, h);
	f->o.take(f->o.ctx, &t->slot, h);
	t->taken++;
	f->c.records++;
}

/* Takes the complete records of b[0, n); returns the bytes they fill.  A
 * damaged one sends t looking for the next mark. */
static size_t take_records(struct cupti_follow *f, struct tail *t, const uint8_t *b, size_t n)
{
	size_t p = 0;

	while (p + sizeof(struct gt_hdr) <= n) {
		const struct gt_hdr *h = (const void *)(b + p);

		if (h->size < sizeof(*h) || h->size % 8) {
			pr_warn("CUPTI: %s/%s: damaged record at offset %llu (size %u): reading goes on "
				"at pid %u's next flush mark", f->dir, t->name,
				(unsigned long long)(t->off + p), h->size, t->pid);
			resync(f, t, t->off + p + 8);
			return 0;
		}
		if (p + h->size > n)
			break;	/* not complete yet */
		take(f, t, h);
		p += h->size;
	}
	t->off += p;
	return p;
}

/* Looks for a mark in b[0, n) (read at t->off): reading goes on there.
 * Returns the bytes passed over. */
static size_t find_mark(struct cupti_follow *f, struct tail *t, const uint8_t *b, size_t n)
{
	size_t p;

	for (p = 0; p + sizeof(struct gt_cupti_mark) <= n; p += 8) {
		if (is_mark(t, (const void *)(b + p))) {
			pr_verbose("CUPTI: pid %u: reading again at its flush mark at offset %llu",
				   t->pid, (unsigned long long)(t->off + p));
			f->c.skipped += p;
			t->off += p;
			t->mode = TAIL_READ;
			return p;
		}
	}
	f->c.skipped += p;
	t->off += p;
	return p;
}

/* A header that can begin the unread records at off. */
static bool starts_here(const struct tail *t, const struct gt_hdr *h)
{
	return h->size >= sizeof(*h) && h->size % 8 == 0 && agent_rec(t, h);
}

/* Where t's unread records begin: after the magic of a file no one read,
 * else at the first non-zero bytes after what an earlier recorder gave back
 * (cupti/gtrace_cupti.h); without them, at the next flush mark.  Returns
 * false while the agent has not written its magic yet. */
static bool find_start(struct cupti_follow *f, struct tail *t, uint64_t size)
{
	off_t data;
	uint64_t pos;

	/* made, its magic not written yet: an empty file is no file given
	 * back (SEEK_DATA finds no data in either), and reading it from 0
	 * would take the magic for a record and skip to the first flush mark,
	 * losing what came before it */
	if (size < GT_CUPTI_MAGIC_LEN) {
		if (!t->empty_said)
			pr_verbose("CUPTI: %s/%s: empty: waiting for pid %u's agent to write its first bytes",
				   f->dir, t->name, t->pid);
		t->empty_said = true;
		return false;
	}
	data = lseek(t->fd, 0, SEEK_DATA);
	if (data < 0 && errno == ENXIO) {	/* all given back: on from its end */
		t->off = t->punched = size & ~7ull;
		t->mode = TAIL_READ;
		return true;
	}
	pos = data > 0 ? (uint64_t)data & ~7ull : 0;
	while (pos < size) {
		ssize_t n = pread(t->fd, f->buf, SPOOL_READ_BYTES, (off_t)pos);
		size_t p;

		if (n < 8)
			return false;
		if (pos == 0 && !memcmp(f->buf, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN)) {
			t->off = GT_CUPTI_MAGIC_LEN;
			t->mode = TAIL_READ;
			return true;
		}
		for (p = 0; p + 8 <= (size_t)n; p += 8) {
			uint64_t w;

			memcpy(&w, f->buf + p, 8);
			if (!w)
				continue;
			/* a record's first 8 bytes are its ts, which may be 0;
			 * the next 8 hold its pid, which is not */
			t->punched = pos + p;
			if (p + sizeof(struct gt_hdr) <= (size_t)n &&
			    starts_here(t, (const void *)(f->buf + p))) {
				t->off = pos + p;
			} else if (p >= 8 && p + 16 <= (size_t)n && starts_here(t, (const void *)(f->buf + p - 8))) {
				t->off = t->punched = pos + p - 8;
			} else {
				pr_info("CUPTI: %s/%s: no record where the last reader stopped: reading goes on "
					"at pid %u's next flush mark", f->dir, t->name, t->pid);
				t->off = pos + p;
				resync(f, t, pos + p);
				return true;
			}
			t->mode = TAIL_READ;
			if (t->off > GT_CUPTI_MAGIC_LEN)
				pr_verbose("CUPTI: %s/%s: reading on at offset %llu, where the last reader stopped",
					   f->dir, t->name, (unsigned long long)t->off);
			return true;
		}
		pos += (uint64_t)n & ~7ull;
	}
	t->off = t->punched = size & ~7ull;
	t->mode = TAIL_READ;
	return true;
}

/* Reads what t grew by, at most budget bytes. Returns the bytes passed. */
static uint64_t read_tail(struct cupti_follow *f, struct tail *t, uint64_t budget)
{
	uint64_t passed = 0;
	struct stat st;

	t->at_end = false;
	if (t->fd < 0 || fstat(t->fd, &st))
		return 0;
	if (t->mode == TAIL_START && !find_start(f, t, (uint64_t)st.st_size)) {
		t->at_end = true;	/* the agent is writing its first bytes */
		return 0;
	}
	/* a program that writes faster than this reads: the disk is not to
	 * fill up for it */
	if ((uint64_t)st.st_size > t->off + SPOOL_BACKLOG_MAX) {
		if (!t->behind_said)
			pr_warn("CUPTI: pid %u writes GPU records faster than they are read: skipping what is "
				"older than the last %u MiB (counted)", t->pid, SPOOL_RESYNC_BYTES >> 20);
		t->behind_said = true;
		resync(f, t, (uint64_t)st.st_size - SPOOL_RESYNC_BYTES);
	}
	while (passed < budget) {
		size_t want = budget - passed < SPOOL_READ_BYTES ? budget - passed : SPOOL_READ_BYTES;
		enum tail_mode before = t->mode;
		ssize_t n = pread(t->fd, f->buf, want, (off_t)t->off);
		size_t p;

		if (n <= 0) {
			t->at_end = true;
			break;
		}
		p = t->mode == TAIL_RESYNC ? find_mark(f, t, f->buf, (size_t)n) :
					     take_records(f, t, f->buf, (size_t)n);
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
	/* what can be read now, read: a record left over is cut short once
	 * its process is gone */
	t->cut = t->at_end && t->mode == TAIL_READ && (uint64_t)st.st_size > t->off;
	give_back(f, t, t->mode == TAIL_READ ? t->off : t->punched, false);
	return passed;
}

/* Read to its end and its process gone (or its agent done for good): the
 * file goes. */
static bool finished(const struct tail *t)
{
	return t->fd >= 0 && t->at_end && t->gone;
}

static void drop_finished(struct cupti_follow *f)
{
	for (size_t i = 0; i < f->n;) {
		struct tail *t = &f->t[i];

		if (finished(t)) {
			pr_verbose("CUPTI: pid %u exited: %s removed", t->pid, t->name);
			unfollow(f, i, true);
			continue;
		}
		i++;
	}
}

/* New files named in the directory since the last look. */
static bool created(struct cupti_follow *f)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;

	while (f->ino >= 0 && read(f->ino, buf, sizeof(buf)) > 0)
		any = true;
	return any;
}

void cupti_follow__poll(struct cupti_follow *f, bool drain)
{
	uint64_t now, budget = drain ? SPOOL_DRAIN_BYTES : SPOOL_POLL_BYTES;
	size_t i, k;

	if (!f)
		return;
	now = clock__ns(CLOCK_MONOTONIC);
	if (created(f) || drain || now >= f->next_scan) {
		scan(f);
		f->next_scan = now + SPOOL_SCAN_NS;
	}
	for (k = 0; k < f->n && budget; k++) {
		uint64_t b = drain ? budget : budget < SPOOL_FILE_BYTES ? budget : SPOOL_FILE_BYTES;

		i = (f->next + k) % f->n;
		budget -= read_tail(f, &f->t[i], b);
	}
	if (f->n)
		f->next = (f->next + 1) % f->n;
	drop_finished(f);
}

/* An agent handed over everything it held since the stop (its counters came
 * after it), or its process is gone and its file read to the end. */
static bool settled(const struct tail *t, uint64_t stop_ts)
{
	return t->fd < 0 || (t->at_end && (t->gone || (stop_ts && t->stats_ts >= stop_ts)));
}

static uint64_t written(const struct cupti_follow *f)
{
	uint64_t sum = 0;
	struct stat st;

	for (size_t i = 0; i < f->n; i++)
		if (f->t[i].fd >= 0 && !fstat(f->t[i].fd, &st))
			sum += (uint64_t)st.st_size;
	return sum;
}

/* What t's agent lost, and a spool cut short: said when t is left, once. */
static void say_losses(struct cupti_follow *f, struct tail *t)
{
	struct statvfs vfs;

	if (t->lost_disk)
		pr_warn("CUPTI: pid %u lost %llu GPU records: the file system of %s was full", t->pid,
			(unsigned long long)t->lost_disk, f->dir);
	if (t->lost_backlog)
		pr_warn("CUPTI: pid %u lost %llu GPU records: its spool held more than its agent's bound "
			"unread (the recorder fell behind)", t->pid, (unsigned long long)t->lost_backlog);
	if (t->cut && t->gone)
		pr_warn("CUPTI: %s/%s ends in a record cut short: %s", f->dir, t->name,
			!fstatvfs(f->dfd, &vfs) && vfs.f_bavail == 0 ? "the file system is full" :
			"its process ended while writing");
	t->lost_disk = t->lost_backlog = 0;
	t->cut = false;
}

void cupti_follow__finish(struct cupti_follow *f)
{
	uint64_t stop_ts, start, last_sum = UINT64_MAX, quiet_since, now;

	if (!f)
		return;
	stop_ts = cupti_session__stop_ts(f->o.session);
	start = quiet_since = clock__ns(CLOCK_MONOTONIC);
	for (;;) {
		bool all = true;
		uint64_t sum;

		cupti_follow__poll(f, true);
		for (size_t i = 0; i < f->n && all; i++)
			all = settled(&f->t[i], stop_ts);
		now = clock__ns(CLOCK_MONOTONIC);
		sum = written(f);
		if (sum != last_sum) {
			last_sum = sum;
			quiet_since = now;
		}
		if (all || now - quiet_since >= SPOOL_QUIET_NS || now - start >= SPOOL_WAIT_NS) {
			if (!all)
				pr_verbose("CUPTI: agents still running after stop: taking what they wrote");
			break;
		}
		usleep(20000);
	}
	/* everything read is given back: the next recorder starts after it */
	for (size_t i = 0; i < f->n; i++) {
		struct tail *t = &f->t[i];

		if (!t->gone)
			t->gone = process_gone(t->pid);
		give_back(f, t, t->mode == TAIL_READ ? t->off : t->punched, true);
	}
	for (size_t i = 0; i < f->n;) {
		struct tail *t = &f->t[i];

		/* a private directory goes whole; of the run directory the
		 * files of processes that are gone */
		if (t->fd >= 0 && t->at_end && (t->gone || f->private_dir)) {
			unfollow(f, i, true);
			continue;
		}
		say_losses(f, t);
		i++;
	}
}

void cupti_follow__counts(const struct cupti_follow *f, struct cupti_follow_counts *c)
{
	uint64_t disk = 0;
	size_t procs = 0;

	memset(c, 0, sizeof(*c));
	if (!f)
		return;
	*c = f->c;
	for (size_t i = 0; i < f->n; i++) {
		disk += f->t[i].disk;
		procs += f->t[i].fd >= 0;
	}
	c->disk_bytes = disk;
	c->processes = procs;
}

bool cupti_follow__joined(const struct cupti_follow *f, uint32_t pid)
{
	for (size_t i = 0; f && i < f->njoined; i++)
		if (f->joined[i] == pid)
			return true;
	return false;
}

size_t cupti_follow__status(const struct cupti_follow *f, char *buf, size_t len)
{
	struct cupti_follow_counts c;
	int n;

	if (!f || !len)
		return 0;
	cupti_follow__counts(f, &c);
	n = snprintf(buf, len,
		     "cupti_processes %llu\n"
		     "cupti_spool_files %llu\n"
		     "cupti_spool_removed %llu\n"
		     "cupti_spool_left_out %llu\n"
		     "cupti_spool_not_traced %llu\n"
		     "cupti_spool_orphans %llu\n"
		     "cupti_spool_disk_bytes %llu\n"
		     "cupti_spool_given_back_bytes %llu\n"
		     "cupti_spool_resyncs %llu\n"
		     "cupti_spool_skipped_bytes %llu\n"
		     "cupti_records %llu\n"
		     "cupti_records_before_start %llu\n"

		     "cupti_bad_records %llu\n"
		     "cupti_marks %llu\n"
		     "cupti_lost_disk_full %llu\n"
		     "cupti_lost_backlog %llu\n"
		     "cupti_dropped %llu\n",
		     (unsigned long long)c.processes, (unsigned long long)c.files,
		     (unsigned long long)c.removed, (unsigned long long)c.left_out,
		     (unsigned long long)c.not_wanted, (unsigned long long)c.orphans,
		     (unsigned long long)c.disk_bytes, (unsigned long long)c.punched,
		     (unsigned long long)c.resyncs, (unsigned long long)c.skipped,
		     (unsigned long long)c.records, (unsigned long long)c.before,
		     (unsigned long long)c.bad, (unsigned long long)c.marks,
		     (unsigned long long)c.lost_disk, (unsigned long long)c.lost_backlog,
		     (unsigned long long)c.dropped);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

int cupti_follow__new(const struct cupti_follow_opts *o, struct cupti_follow **out)
{
	struct cupti_follow *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (f)
		f->buf = malloc(SPOOL_READ_BYTES);
	if (!f || !f->buf) {
		free(f);
		pr_err("failed to allocate the CUPTI reader: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	f->o = *o;
	f->dfd = cupti_session__dirfd(o->session);
	f->dir = cupti_session__dir(o->session);
	f->start = cupti_session__start(o->session);
	f->private_dir = cupti_session__private(o->session);
	/* new spool files read at the next poll, not the next scan; without
	 * inotify, the scan finds them */
	f->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f->ino >= 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", f->dfd);
		if (inotify_add_watch(f->ino, path, IN_CREATE | IN_MOVED_TO) < 0) {
			close(f->ino);
			f->ino = -1;
		}
	}
	scan(f);
	f->next_scan = clock__ns(CLOCK_MONOTONIC) + SPOOL_SCAN_NS;
	*out = f;
	return 0;
}

void cupti_follow__free(struct cupti_follow *f)
{
	if (!f)
		return;
	while (f->n)
		unfollow(f, f->n - 1, false);
	if (f->ino >= 0)
		close(f->ino);
	free(f->t);
	free(f->joined);
	free(f->buf);
	free(f);
}
