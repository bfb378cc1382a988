// SPDX-License-Identifier: MIT
/*
 * Where the recorder's probes go: the libcuda and libnccl files given with
 * --libcuda/--libnccl, the driver's usual copy, and the copies the traced
 * processes map (every process, the cgroup's, or -p's), found at the start,
 * at an exec or an open, and by the periodic rescan of --all.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/records.h"
#include "lib/clock.h"
#include "lib/kdev.h"
#include "lib/log.h"
#include "lib/term_text.h"
#include "record/procs/cgroup_target.h"
#include "record/child.h"
#include "record/probes/cuda_probes.h"
#include "record/probes/hold.h"
#include "record/probes/libcuda_finder.h"
#include "record/probes/nccl_probes.h"
#include "record/recorder.h"

/* The files map's kind for a file after an attach that returned n. */
static uint32_t file_kind(int n)
{
	if (n >= 0)
		return GT_FILE_PROBED;
	/* no CUDA or NCCL symbols, or no probes for it: nothing to wait for */
	return n == -ENOEXEC ? GT_FILE_IGNORED : GT_FILE_FAILED;
}

static int attach_one(struct recorder *r, const char *path, const char *label)
{
	int n;

	/* without --trace cuda (-t none, -t ioctl,sched) the copies found
	 * later, at an exec, an open or the rescan, get no probes either */
	if (!r->o->trace_cuda)
		return -ENOEXEC;
	if (libcuda_finder__is_libnccl(label)) {
		if (!r->nccl)
			return -ENOEXEC;
		n = nccl_probes__attach_file(r->nccl, path, label);
		if (n > 0)
			pr_verbose("tracing %s (%d NCCL probes)", label, n);
		else if (n < 0 && n != -ENOEXEC)
			pr_warn("failed to attach to %s: %s", label, strerror(-n));
		return n;
	}
	n = cuda_probes__attach_file(r->probes, path, label);
	if (n > 0 && r->libcuda_waiting) {
		r->libcuda_waiting = false;
		pr_info("tracing %s (%d probes), the first libcuda found", label, n);
	} else if (n > 0) {
		pr_verbose("tracing %s (%d probes)", label, n);
	} else if (n == -ENOENT) {
		/* a process' file gone with it, or a descriptor closed */
		pr_verbose("failed to attach to %s: %s", label, strerror(-n));
	} else if (n < 0 && n != -ENOEXEC) {
		pr_warn("failed to attach to %s: %s", label, strerror(-n));
	}
	return n;
}

int recorder__attach_found(void *ctx, const char *path, const char *label)
{
	struct recorder *r = ctx;
	int n = attach_one(r, path, label);

	/* an open of it needs no hold from now on (or never a record) */
	hold__note_file(r->hold, path, NULL, file_kind(n), clock__mono_ns());
	return !r->o->trace_cuda ? 0 : n;
}

static bool in_cgroup(void *ctx, pid_t pid)
{
	return cgroup_target__holds_pid(ctx, pid);
}

/* Every process, or with --cgroup those of the cgroup: the probes go on
 * the libcuda files its processes map (and the driver's usual one), not on
 * a copy only processes outside it use */
static void scan_system(struct recorder *r)
{
	if (r->cgroup)
		libcuda_finder__scan_some(in_cgroup, r->cgroup, recorder__attach_found, r);
	else
		libcuda_finder__scan_all(recorder__attach_found, r);
}

int recorder__attach_libcuda(struct recorder *r)
{
	size_t i;
	int n;

	for (i = 0; i < r->o->nlibcuda; i++) {
		n = cuda_probes__attach_file(r->probes, r->o->libcuda[i], r->o->libcuda[i]);
		if (n < 0) {
			pr_err("cannot trace %s: %s", r->o->libcuda[i],
			       n == -ENOEXEC ? "not a libcuda (no CUDA driver API symbols)" : strerror(-n));
			return n;
		}
		hold__note_file(r->hold, r->o->libcuda[i], NULL, GT_FILE_PROBED, clock__mono_ns());
	}
	for (i = 0; i < r->o->nlibnccl; i++) {
		n = nccl_probes__attach_file(r->nccl, r->o->libnccl[i], r->o->libnccl[i]);
		if (n < 0) {
			pr_err("cannot trace %s: %s", r->o->libnccl[i],
			       n == -ENOEXEC ? "not a libnccl (no NCCL symbols)" : strerror(-n));
			return n;
		}
		hold__note_file(r->hold, r->o->libnccl[i], NULL, GT_FILE_PROBED, clock__mono_ns());
	}
	libcuda_finder__scan_default(recorder__attach_found, r);
	if (r->o->all) {
		scan_system(r);
	} else {
		for (i = 0; i < r->o->npids; i++)
			libcuda_finder__scan_pid(r->o->pids[i], recorder__attach_found, r);
	}
	/* after --delay CMD may have loaded its libcuda already */
	if (r->child && r->released)
		libcuda_finder__scan_pid(child__pid(r->child), recorder__attach_found, r);
	if (cuda_probes__nfiles(r->probes))
		return 0;
	/* a process may dlopen its own copy later (a container's, a wheel's),
	 * or the driver be installed after an always-on unit started: the
	 * openat discovery attaches to the first one opened, the process
	 * held meanwhile, and the rescan looks in the mappings */
	r->libcuda_waiting = true;
	if (r->o->cmd)
		pr_verbose("no libcuda found yet: tracing the one %s loads", r->o->cmd[0]);
	else
		pr_info("no libcuda found yet (looked in the usual driver locations%s): waiting for a "
			"libcuda; it is traced once a process opens one", !r->o->all ? " and the mappings of "
			"the traced processes" : r->cgroup ? " and the mappings of the cgroup's processes" :
			" and every process' mappings");
	return 0;
}

void rescan(struct recorder *r, bool all)
{
	size_t i;

	if (all) {
		scan_system(r);
	} else {
		for (i = 0; i < r->nscan; i++)
			libcuda_finder__scan_pid(r->scan_queue[i], recorder__attach_found, r);
	}
	r->nscan = 0;
}

#define LIBLOAD_PLACES 3

/* Where the recorder can open the file a process opened, best first: the
 * descriptor itself while it is the same file (a held process has not
 * closed it; one not held may close it any moment), the path through the
 * process' root or cwd, and, the process gone, the path in our root when
 * that is the file (a container's root may hold another at that path).
 * Returns how many places it wrote. */
static int libload_places(const struct gt_libload *l, char (*p)[PATH_MAX + 64])
{
	struct stat st;
	int n = 0;

	if (l->fd >= 0) {
		snprintf(p[n], sizeof(p[n]), "/proc/%u/fd/%d", l->hdr.pid, l->fd);
		if (!stat(p[n], &st) && st.st_ino == l->ino && kdev__of(st.st_dev) == l->dev)
			n++;
	}
	if (l->path[0] == '/')
		snprintf(p[n], sizeof(p[n]), "/proc/%u/root%s", l->hdr.pid, l->path);
	else
		snprintf(p[n], sizeof(p[n]), "/proc/%u/cwd/%s", l->hdr.pid, l->path);
	if (!access(p[n], R_OK))
		n++;
	snprintf(p[n], sizeof(p[n]), "%s", l->path);
	if (l->path[0] == '/' && !stat(p[n], &st) && st.st_ino == l->ino && kdev__of(st.st_dev) == l->dev)
		n++;
	return n;
}

/* GTRACE_TEST_ATTACH_DELAY_MS: the tests' way to make an attach slower
 * than the hold's bound, or to kill the recorder in the middle of one. */
static uint64_t test_delay_ns(void)
{
	static long ms = -1;

	if (ms < 0) {
		const char *e = getenv("GTRACE_TEST_ATTACH_DELAY_MS");

		ms = e ? strtol(e, NULL, 10) : 0;
		if (ms < 0)
			ms = 0;
	}
	return (uint64_t)ms * 1000000ull;
}

int recorder__on_libload(struct recorder *r, struct gt_libload *l)
{
	struct gt_file_key seen = { .ino = l->ino, .dev = l->dev };
	struct gt_file_state st = { .kind = GT_FILE_FAILED };
	char places[LIBLOAD_PLACES][PATH_MAX + 64];
	uint64_t delay = test_delay_ns();
	int i, n = -ENOENT, np;

	if (!r->o->trace_cuda) {
		hold__release(r->hold, l);
		return 0;
	}
	if (l->outcome == GT_LL_HELD && delay) {
		uint64_t until = clock__mono_ns() + delay;

		while (!stop_requests && clock__mono_ns() < until)
			usleep(10000);
	}
	np = libload_places(l, places);
	/* a place that vanished under the attach (a descriptor closed, the
	 * process gone): the next one */
	for (i = 0; i < np && n == -ENOENT; i++) {
		struct gt_file_key k = { 0 };
		struct stat sb;

		n = recorder__attach_found(r, places[i], l->path);
		if (n == -ENOENT)
			continue;
		/* the kind the path's file got, also under the key the
		 * opener's kernel gave it */
		if (!stat(places[i], &sb)) {
			k.ino = sb.st_ino;
			k.dev = kdev__of(sb.st_dev);
		}
		if (!hold__file_state(r->hold, &k, &st))
			st = (struct gt_file_state){ .kind = file_kind(n), .since = clock__mono_ns() };
	}
	/* found nowhere: the next opener is held and tried again */
	if (n == -ENOENT)
		pr_verbose("failed to open %s of pid %u (gone?)", l->path, l->hdr.pid);
	else
		hold__note_file(r->hold, NULL, &seen, st.kind, st.since);
	if (st.kind == GT_FILE_IGNORED) {
		hold__release(r->hold, l);
		return 0;	/* no library of ours: nothing was missed */
	}
	if (st.kind == GT_FILE_PROBED) {
		l->end_ts = st.since > l->hdr.ts ? st.since : l->hdr.ts;
	} else {
		l->end_ts = 0;
		if (l->outcome == GT_LL_HELD)
			l->outcome = GT_LL_ATTACH_FAILED;
	}
	hold__release(r->hold, l);
	/* not held, but the probes were there before it opened the file (an
	 * open of the file under another key): nothing was missed */
	if (!l->cont_ts && l->end_ts && l->end_ts <= l->hdr.ts)
		return 0;
	hold__count(r->hold, l);
	return 1;
}

/* The open that found the file, when the open's exit is not probed: the
 * process was not held; what it ran before the attach is a gap. */
struct open_found {
	struct recorder *r;
	int n;			/* the attach's result */
};

static int open_found(void *ctx, const char *path, const char *label)
{
	struct open_found *of = ctx;

	of->n = recorder__attach_found(of->r, path, label);
	return of->n;
}

int recorder__on_libopen(struct recorder *r, const struct gt_path *p)
{
	struct open_found of = { .r = r };
	struct {
		struct gt_libload l;
		char path[GT_LIBLOAD_PATH_MAX];
	} rec;
	size_t len = p->len < GT_LIBLOAD_PATH_MAX ? p->len : GT_LIBLOAD_PATH_MAX;

	libcuda_finder__on_open(p->hdr.pid, p->path, open_found, &of);
	if (of.n <= 0 || !r->o->trace_cuda)
		return 0;
	memset(&rec, 0, sizeof(rec));
	rec.l.hdr = p->hdr;
	rec.l.hdr.type = GT_REC_LIBLOAD;
	rec.l.hdr.size = GT_REC_ALIGN(sizeof(rec.l) + len);
	rec.l.end_ts = clock__mono_ns();
	rec.l.fd = -1;
	rec.l.outcome = GT_LL_OFF;
	rec.l.len = len;
	memcpy(rec.l.path, p->path, len - 1);
	hold__count(r->hold, &rec.l);
	return recorder__write(r, &rec.l.hdr);
}

void recorder__hold_summary(struct recorder *r)
{
	struct hold_stats s;
	char *path;

	hold__stats(r->hold, &s);
	if (s.held)
		pr_info("held %llu process%s until the probes of the library it opened were attached: "
			"%.1f ms on average, %.1f ms at most", (unsigned long long)s.held,
			s.held == 1 ? "" : "es", s.hold_ns_sum / 1e6 / (double)s.held, s.hold_ns_max / 1e6);
	if (s.gaps) {
		/* the path is the traced program's: shown escaped */
		path = term_text__escape(s.first_path);
		pr_warn("%llu process%s ran a libcuda or libnccl before its probes were attached: some of "
			"%s calls may be missing (the first: pid %u, %s: %s); dump --summary lists %s",
			(unsigned long long)s.gaps, s.gaps == 1 ? "" : "es", s.gaps == 1 ? "its" : "their",
			s.first_pid, path ? path : "?", gt_libload_outcome__text(s.first_outcome),
			s.gaps == 1 ? "it" : "them");
		free(path);
	}
	if (r->o->trace_cuda && !r->o->cmd && !cuda_probes__nfiles(r->probes))
		pr_warn("no libcuda was found while recording: no CUDA calls were recorded");
}

size_t recorder__hold_status(struct recorder *r, char *buf, size_t len)
{
	struct hold_stats s;
	int n;

	hold__stats(r->hold, &s);
	n = snprintf(buf, len,
		     "libcuda_files %zu\n"
		     "libcuda_waiting %d\n"
		     "hold_watchdog %d\n"
		     "holds %llu\n"
		     "hold_mean_ms %.3f\n"
		     "hold_max_ms %.3f\n"
		     "hold_timeouts %llu\n"
		     "not_held %llu\n"
		     "attach_failed %llu\n"
		     "probe_gaps %llu\n",
		     cuda_probes__nfiles(r->probes), r->libcuda_waiting, s.watchdog,
		     (unsigned long long)s.held, s.held ? s.hold_ns_sum / 1e6 / (double)s.held : 0.0,
		     s.hold_ns_max / 1e6, (unsigned long long)s.timeouts, (unsigned long long)s.not_held,
		     (unsigned long long)s.attach_failed, (unsigned long long)s.gaps);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}
