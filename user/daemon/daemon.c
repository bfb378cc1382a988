// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf daemon: the recorder of --all writing into a rolling window of
 * compressed chunks in memory (format/chunk_ring) instead of a file, with a
 * control socket (daemon/control) from which snapshots of the window are
 * asked for. Chunks reach the window once a second (the recorder's flush),
 * so a snapshot holds everything up to the last second, and the chunk
 * being filled when it is asked for.
 *
 * A snapshot costs the recording loop a flush, a copy of the names kept
 * and references on the chunks (chunk_ring__snap_take); the file is
 * written by daemon/snap_writer's thread, and the client that asked gets
 * its reply (the path, or why not) when the file is complete.
 *
 * The recorder is driven through record/ext.h: the window is its sink, the
 * hooks below are called from its loop.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "daemon/budget/budget.h"
#include "daemon/control.h"
#include "daemon/daemon_cupti.h"
#include "daemon/daemon_int.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/name_store.h"
#include "daemon/snap_writer.h"
#include "format/chunk_ring.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/clock.h"
#include "lib/log.h"


static volatile sig_atomic_t hup;

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

/* --log: appended to, never through a link, a regular file of ours only;
 * it becomes stderr (the log's messages go there). */
static int open_log(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	if (dup2(fd, STDERR_FILENO) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

#define NAMES_WARN_NS	60000000000ull	/* lost names are said at most this often */
#define NAMES_SWEEP_NS	10000000000ull	/* exits lost with the ring buffer looked for */

/* Names are written once, when learned: a snapshot whose oldest chunk came
 * later would show placeholders. The name records are kept (name_store.h:
 * while their process may still be in the window, bounded) and put at the
 * head of each snapshot. */
static void on_written(void *ctx, const struct gt_hdr *h)
{
	struct daemon *d = ctx;

	/* a daemon outlives its processes, and the machine reuses their pids:
	 * the next process with one is a new one, named and counted anew, and
	 * until then no scheduling of that pid is recorded */
	if (h->type == GT_REC_EXIT && recorder__forget(d->r, h->pid))
		d->procs_exited++;
	name_store__note(d->names_kept, h);
	/* --metrics: the aggregator sees every record */
	if (d->metrics)
		gt_metrics__feed(d->metrics, h);
}

/* name_store's window: the time before which it holds no record. */
static uint64_t names_oldest(void *ctx)
{
	struct daemon *d = ctx;

	return d->ring ? chunk_ring__min_first_ts(d->ring) : 0;
}

static bool names_alive(void *ctx, uint32_t pid)
{
	(void)ctx;
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/* GTRACE_NAMES_MAX_BYTES (for tests): the names' bound, else the default. */
static size_t names_limit(void)
{
	const char *e = getenv("GTRACE_NAMES_MAX_BYTES");
	unsigned long long v;
	char *end;

	if (!e || !*e)
		return NAME_STORE_LIMIT;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno || *end || v < 4096 || v > (1ull << 32)) {
		pr_warn("GTRACE_NAMES_MAX_BYTES=%s is not a number of bytes in [4096, 4G]: ignored", e);
		return NAME_STORE_LIMIT;
	}
	return (size_t)v;
}

/* From the loop: dead names let go, lost exits looked for now and then,
 * lost names said (the first at once, then at most once a minute). */
static void names_poll(struct daemon *d, uint64_t now)
{
	struct name_store_stats st;

	name_store__prune(d->names_kept);
	if (now - d->names_swept_at >= NAMES_SWEEP_NS) {
		d->names_swept_at = now;
		name_store__sweep(d->names_kept, names_alive, d, now);
	}
	name_store__stats(d->names_kept, &st);
	if (st.lost == d->names_lost_said ||
	    (d->names_lost_said && now - d->names_warned_at < NAMES_WARN_NS))
		return;
	pr_warn("%llu name records lost (%llu in all): the %llu bytes kept for snapshots are full of "
		"the names of processes still running or in the window; snapshots show placeholders "
		"for them (names_lost in status)", (unsigned long long)(st.lost - d->names_lost_said),
		(unsigned long long)st.lost, (unsigned long long)st.limit);
	d->names_lost_said = st.lost;
	d->names_warned_at = now;
}

/* A name a naming call gave a kernel handle: kept as a GT_NAME_KERNEL
 * record, the call itself may be out of the window by the snapshot. */
static void on_learned(void *ctx, const struct gt_hdr *at, uint64_t handle, const char *name)
{
	struct daemon *d = ctx;
	struct {
		struct gt_name n;
		char str[GT_STR_MAX];
	} rec;

	name_store__note(d->names_kept, gt_name__fill(&rec.n, sizeof(rec.str), at, GT_NAME_KERNEL, handle,
							name));
}

static int on_open(void *ctx, struct recorder *r)
{
	struct daemon *d = ctx;
	struct sigaction sa = { .sa_handler = on_hup };
	pid_t other = 0;
	int err;

	d->r = r;

	if (d->o->log && (err = open_log(d->o->log))) {
		pr_err("cannot write the log %s: %s", d->o->log,
		       err == -EPERM ? "not a regular file of ours" : strerror(-err));
		return err;
	}
	/* SIGHUP reopens the log (after a rotation), never stops the daemon */
	sigaction(SIGHUP, &sa, NULL);
	err = name_store__new(names_limit(), names_oldest, d, &d->names_kept);
	if (err) {
		pr_err("failed to allocate the names: %s", strerror(-err));
		return err;
	}
	/* a log pipe whose reader went away is an error to write, not a death */
	signal(SIGPIPE, SIG_IGN);
	trigger__start(d);
	err = control__open(control__dir(), &d->ctl, &other);
	if (err == -EBUSY) {
		pr_err("a daemon is already running (pid %d): stop it first", (int)other);
		return err;
	}
	if (err) {
		pr_err("failed to open the control socket in %s: %s", control__dir(),
		       err == -EPERM ? "not a directory of ours that only we may write in" :
		       err == -ENOTSOCK ? "control.sock there is not our socket" :
		       err == -EEXIST ? "daemon.pid there is not a regular file of ours" :
		       strerror(-err));
		return err;
	}
	err = control__own_dir(d->o->dir);
	if (err) {
		pr_err("cannot use --dir %s: %s", d->o->dir,
		       err == -EPERM ? "not a directory of ours that only we may write in" : strerror(-err));
		return err;
	}
	err = snap_writer__new(SNAP_JOBS_MAX, &d->snapw);
	if (err) {
		pr_err("failed to start the snapshot writer: %s", strerror(-err));
		return err;
	}
	return 0;
}

static int create_sink(void *ctx, const struct gt_file_info *info, struct trace_writer **w, char *name,
		       size_t len)
{
	struct daemon *d = ctx;
	struct chunk_ring_opts ro = { .max_bytes = d->o->memory, .window_ns = d->o->window_ns };
	int err;

	err = chunk_ring__new(&ro, &d->ring);
	if (err) {
		pr_err("failed to allocate the window: %s", strerror(-err));
		return err;
	}
	err = trace_writer__create_sink(NULL, chunk_ring__sink, d->ring, w);
	if (err) {
		pr_err("failed to start the window: %s", strerror(-err));
		return err;
	}
	d->info = *info;
	snprintf(name, len, "the window in memory");
	d->start = clock__mono_ns();
	return recorder__cupti(d->r) ? daemon_cupti__new(d) : 0;
}

/* The window exists: the overhead budget starts (it measures a probe hit
 * first). */
static int on_start(void *ctx)
{
	struct daemon *d = ctx;

	return budget__start(d->r, d->o->budget, &d->bud);
}

/* A snapshot for client (0: none), queued to the writer. */
static int snapshot_submit(struct daemon *d, const char *what, uint64_t last_ns, uint32_t pid,
			   const char *out, uint64_t client)
{
	uint64_t t0 = clock__mono_ns();
	struct chunk_ring_snap_opts sel = { .last_ns = last_ns };
	struct snap_job *j;
	const void *names;
	size_t names_len;
	int err = -ENOMEM;

	/* the writer has no room: none of the work below for nothing */
	if (d->snaps_inflight >= SNAP_JOBS_MAX)
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->client = client;
	snprintf(j->what, sizeof(j->what), "%s", what);
	j->dir = d->o->dir;
	j->info = d->info;
	j->info.options = NULL;
	j->asked_ns = t0;
	/* --cupti: what the agents wrote up to now (their names too) */
	daemon_cupti__poll(d, true);
	if (out && !(j->out = strdup(out)))
		goto fail;
	if (asprintf((char **)&j->info.options, "%s snapshot=1", d->info.options ? d->info.options : "") < 0) {
		j->info.options = NULL;
		goto fail;
	}
	/* the names go on changing while the writer writes */
	names = name_store__data(d->names_kept, &names_len);
	if (names_len) {
		void *pre = malloc(names_len);

		if (!pre)
			goto fail;
		memcpy(pre, names, names_len);
		j->o.preamble = pre;
		j->o.preamble_len = names_len;
	}
	j->o.pid = pid;
	/* --cupti: merged on the writer's thread, from a raw file next to it */
	if (d->dcupti)
		j->finish = daemon_cupti__finish_snapshot;
	/* the chunk being filled belongs in it too */
	recorder__flush(d->r);
	recorder__counters(d->r, &j->trailer.counters);
	j->trailer.end_ts = t0;
	err = chunk_ring__snap_take(d->ring, &sel, &j->snap);
	if (err)
		goto fail;
	j->loop_ns = clock__mono_ns() - t0;
	err = snap_writer__submit(d->snapw, j);
	if (err)
		goto fail;
	d->snaps_inflight++;
	d->stall_in_snap = true;
	return 0;
fail:
	snap_job__free(j);
	return err;
}

int daemon__snapshot(struct daemon *d, const char *what, uint64_t last_ns, uint32_t pid, const char *out)
{
	return snapshot_submit(d, what, last_ns, pid, out, 0);
}

/* A snapshot the writer is done with: said, counted, answered. */
static void snapshot_done(struct daemon *d, struct snap_job *j)
{
	const struct chunk_ring_snap_stats *st = &j->st;
	char buf[PATH_MAX + 256];
	size_t n;

	if (!j->err) {
		d->snapshots++;
		pr_info("snapshot %s: %llu records in %llu chunks, %.1f ms (the window locked %.3f ms, "
			"the recording loop held %.3f ms)", j->path, (unsigned long long)st->records,
			(unsigned long long)st->chunks, (j->done_ns - j->asked_ns) / 1e6,
			st->lock_ns / 1e6, j->loop_ns / 1e6);
		n = daemon__reply(buf, sizeof(buf), "ok\n%s\n", j->path);
	} else {
		const char *why = j->err == -ECANCELED ? "the daemon is stopping" : strerror(-j->err);
		const char *path = j->path[0] ? j->path : "the snapshot";

		d->snapshots_failed++;
		/* in the log too: a trigger's has no other reader */
		pr_warn("snapshot (%s) failed: cannot write %s: %s", j->what, path, why);
		n = daemon__reply(buf, sizeof(buf), "error: cannot write %s: %s\n", path, why);
	}
	if (j->client && control__reply(d->ctl, j->client, buf, n))
		pr_verbose("snapshot (%s): its client hung up before the reply", j->what);
	d->snaps_inflight--;
}

/* "snapshot last_ns=N pid=P [out=PATH]" */
static size_t do_snapshot(struct daemon *d, uint64_t client, const char *req, char *buf, size_t len)
{
	unsigned long long last = 0;
	long pid = 0;
	const char *o = strstr(req, " out=");
	int err;

	if (sscanf(req, "snapshot last_ns=%llu pid=%ld", &last, &pid) != 2)
		return daemon__reply(buf, len, "error: bad snapshot request\n");
	if (pid > 0 && !recorder__traced(d->r, (uint32_t)pid))
		return daemon__reply(buf, len, "error: pid %ld was never seen making CUDA calls\n", pid);
	err = snapshot_submit(d, "snapshot", last, (uint32_t)pid, o ? o + 5 : NULL, client);
	if (err == -EBUSY)
		return daemon__reply(buf, len, "error: %d snapshots are being written already; try again\n",
			     SNAP_JOBS_MAX);
	if (err)
		return daemon__reply(buf, len, "error: cannot take a snapshot: %s\n", strerror(-err));
	return CONTROL_DEFER;
}

/* "attach pid=P ms=M": the reply when the agent is in, or why not */
static size_t do_attach(struct daemon *d, uint64_t client, const char *req, char *buf, size_t len)
{
	unsigned long long ms = 0;
	char why[320];
	long pid = 0;
	int err;

	if (sscanf(req, "attach pid=%ld ms=%llu", &pid, &ms) != 2 || pid <= 0 || !ms || ms > 86400000ull)
		return daemon__reply(buf, len, "error: bad attach request\n");
	err = attach__request(d, (pid_t)pid, ms * 1000000ull, client, why, sizeof(why));
	if (err == -EALREADY)
		return daemon__reply(buf, len, "ok\n%s\n", why);
	if (err)
		return daemon__reply(buf, len, "error: %s\n", why);
	return CONTROL_DEFER;
}

static size_t handle(void *ctx, uint64_t client, const char *req, char *buf, size_t len)
{
	struct daemon *d = ctx;

	if (!strcmp(req, "status"))
		return daemon__status(d, buf, len);
	if (!strncmp(req, "snapshot ", 9))
		return do_snapshot(d, client, req, buf, len);
	if (!strncmp(req, "attach ", 7))
		return do_attach(d, client, req, buf, len);
	return daemon__reply(buf, len, "error: unknown request\n");
}

/* The loop's time between the end of one drain of the ring buffer and the
 * next poll: the daemon's figure of what its own work (snapshots) costs the
 * recording, kept for status (the longest, overall and with a snapshot). */
static void before_poll(void *ctx)
{
	struct daemon *d = ctx;
	uint64_t ns;

	if (!d->drained)
		return;
	ns = clock__mono_ns() - d->drained;
	if (ns > d->stall_max_ns)
		d->stall_max_ns = ns;
	if (d->stall_in_snap && ns > d->stall_snap_max_ns)
		d->stall_snap_max_ns = ns;
}

static void drained(void *ctx)
{
	struct daemon *d = ctx;

	d->drained = clock__mono_ns();
}

/* A record from BPF: the triggers and the budget see it. */
static void on_record(void *ctx, const struct gt_hdr *h)
{
	struct daemon *d = ctx;

	trigger__on_record(d, h);
	budget__on_record(d->bud, h);
}

/* Served from the loop, after its inputs were read. */
static void serve(void *ctx)
{
	struct daemon *d = ctx;
	struct snap_job *j;
	int err;

	d->stall_in_snap = d->snaps_inflight > 0;
	/* first: what is done makes room for what is asked below */
	while ((j = snap_writer__done(d->snapw))) {
		snapshot_done(d, j);
		snap_job__free(j);
	}
	names_poll(d, clock__mono_ns());
	daemon__metrics_poll(d);
	daemon_cupti__poll(d, false);
	attach__poll(d);
	trigger__poll(d);
	if (hup) {
		hup = 0;
		if (d->o->log && (err = open_log(d->o->log)))
			pr_warn("SIGHUP: cannot reopen the log %s: %s; logging on", d->o->log, strerror(-err));
		else
			pr_info("SIGHUP: %s", d->o->log ? "log reopened" : "no --log to reopen");
	}
	/* never waits: a client that is silent or does not read holds a slot, not the loop */
	control__serve(d->ctl, handle, d);
}

/* The budget weighs a window period before the next one opens (the loop
 * calls this before it opens light mode's windows). */
static void tick(void *ctx, uint64_t now)
{
	struct daemon *d = ctx;

	budget__poll(d->bud);
	budget__tick(d->bud, now);
}

/* The loop has ended: the budget's last figures; the agents hand over and
 * pause, what they held goes into the window while it is still written. */
static void stopped(void *ctx)
{
	struct daemon *d = ctx;

	budget__finish(d->bud);
	attach__free(d);
	daemon_cupti__free(d);
}

static void finished(void *ctx, const struct gt_counters *c, const char *gaps)
{
	struct daemon *d = ctx;

	pr_info("daemon stopped: %llu events, %llu dropped%s, %llu snapshots written",
		(unsigned long long)c->events, (unsigned long long)(c->drop_ringbuf + c->drop_state), gaps,
		(unsigned long long)d->snapshots);
}

static void on_close(void *ctx)
{
	struct daemon *d = ctx;
	struct snap_job *j;

	budget__free(d->bud);
	d->bud = NULL;
	/* the snapshot being written is finished, those queued are not; their
	 * clients are told */
	snap_writer__stop(d->snapw);
	while ((j = snap_writer__done(d->snapw))) {
		snapshot_done(d, j);
		snap_job__free(j);
	}
	snap_writer__free(d->snapw);
	d->snapw = NULL;
	control__flush(d->ctl, 1000);
	/* done at `stopped` already, unless the loop never ran */
	daemon_cupti__free(d);
	control__close(d->ctl);
	d->ctl = NULL;
	chunk_ring__free(d->ring);
	d->ring = NULL;
	name_store__free(d->names_kept);
	d->names_kept = NULL;
	trigger__free(d);
}

void daemon_opts__init(struct daemon_opts *o)
{
	*o = (struct daemon_opts){
		.rec = {
			.all = true, .buffer_size = RECORD_BUFFER_DEFAULT, .scenario = "snapshot", .trace_cuda = true,
			.trace_ioctl = true, .trace_sched = true, .light = true, .window_ns = RECORD_WINDOW_DEFAULT_NS,
			.period_ns = RECORD_PERIOD_DEFAULT_NS,
		},
		.window_ns = 60000000000ull, .memory = 256ull << 20, .dir = "/var/lib/gtrace-bpf",
		.post_ns = 5000000000ull, .budget = 0.01,
	};
}

int daemon__run(struct daemon_opts *o)
{
	struct daemon d = { .o = o };
	int err, status;

	if (o->metrics) {
		struct metrics_http_opts ho = { .listen = o->metrics, .allow_remote = o->metrics_remote };

		struct gt_metrics_opts mo = { .sampled = o->rec.light };

		d.metrics = gt_metrics__new(&mo);
		err = d.metrics ? metrics_http__open(&ho, &d.http) : -ENOMEM;
		if (err) {
			pr_err("cannot serve metrics on %s: %s", o->metrics,
			       err == -EPERM ? "not a loopback address (--metrics-remote allows it)" :
			       strerror(-err));
			gt_metrics__free(d.metrics);
			return 1;
		}
	}
	d.ext = (struct record_ext){
		.ctx = &d,
		/* the budget may shed always-on apis to light mode's windows */
		.swap = o->rec.light && o->budget > 0 && o->rec.capture_range == RECORD_RANGE_NONE,
		.reads_cupti = true,
		.open = on_open, .create_sink = create_sink, .start = on_start,
		.on_record = on_record, .on_written = on_written, .on_learned = on_learned,
		.before_poll = before_poll, .drained = drained, .serve = serve, .tick = tick,
		.stopped = stopped, .finished = finished, .close = on_close,
	};
	o->rec.ext = &d.ext;
	o->rec.quiet = true;	/* no status line: a daemon's stderr is a log */
	status = record__run(&o->rec, NULL);
	metrics_http__free(d.http);
	gt_metrics__free(d.metrics);
	return status;
}
