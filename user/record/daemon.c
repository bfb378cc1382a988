// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf daemon: the recorder of --all writing into a rolling window of
 * compressed chunks in memory (format/chunk_ring) instead of a file, with a
 * control socket (record/control) from which snapshots of the window are
 * asked for. Chunks reach the window once a second (the recorder's flush),
 * so a snapshot holds everything up to the last second, and the chunk
 * being filled when it is asked for.
 *
 * A snapshot costs the recording loop a flush, a copy of the names kept
 * and references on the chunks (chunk_ring__snap_take); the file is
 * written by record/snap_writer's thread, and the client that asked gets
 * its reply (the path, or why not) when the file is complete.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "format/api.h"
#include "format/chunk_ring.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/log.h"
#include "record/budget.h"
#include "record/probes/cgroup_target.h"
#include "record/gpum/gpu_metrics.h"
#include "record/control.h"
#include "record/probes/elf_syms.h"
#include "record/probes/cuda_object.h"
#include "record/daemon_cupti.h"
#include "record/name_store.h"
#include "record/probes/proc_names.h"
#include "record/recorder.h"
#include "record/shed.h"
#include "record/snap_writer.h"

#define SNAP_JOBS_MAX	4	/* snapshots queued or being written at once */

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
void daemon__note(struct recorder *r, const struct gt_hdr *h)
{
	/* a daemon outlives its processes, and the machine reuses their pids:
	 * the next process with one is a new one, named and counted anew, and
	 * until then no scheduling of that pid is recorded */
	if (h->type == GT_REC_EXIT && proc_names__exited(r->procs, h->pid)) {
		r->procs_exited++;
		bpf_map__delete_elem(r->skel->maps.active_pids, &h->pid, sizeof(h->pid), 0);
	}
	name_store__note(r->names_kept, h);
}

/* name_store's window: the time before which it holds no record. */
static uint64_t names_oldest(void *ctx)
{
	struct recorder *r = ctx;

	return r->ring ? chunk_ring__min_first_ts(r->ring) : 0;
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
static void names_poll(struct recorder *r, uint64_t now)
{
	struct name_store_stats st;

	name_store__prune(r->names_kept);
	if (now - r->names_swept_at >= NAMES_SWEEP_NS) {
		r->names_swept_at = now;
		name_store__sweep(r->names_kept, names_alive, r, now);
	}
	name_store__stats(r->names_kept, &st);
	if (st.lost == r->names_lost_said ||
	    (r->names_lost_said && now - r->names_warned_at < NAMES_WARN_NS))
		return;
	pr_warn("%llu name records lost (%llu in all): the %llu bytes kept for snapshots are full of "
		"the names of processes still running or in the window; snapshots show placeholders "
		"for them (names_lost in status)", (unsigned long long)(st.lost - r->names_lost_said),
		(unsigned long long)st.lost, (unsigned long long)st.limit);
	r->names_lost_said = st.lost;
	r->names_warned_at = now;
}

/* A name a naming call gave a kernel handle: kept as a GT_NAME_KERNEL
 * record, the call itself may be out of the window by the snapshot. */
void daemon__learned(void *ctx, const struct gt_hdr *at, uint64_t handle, const char *name)
{
	struct {
		struct gt_name n;
		char str[GT_STR_MAX];
	} rec;

	daemon__note(ctx, gt_name__fill(&rec.n, sizeof(rec.str), at, GT_NAME_KERNEL, handle, name));
}

int daemon__open(struct recorder *r)
{
	struct sigaction sa = { .sa_handler = on_hup };
	pid_t other = 0;
	int err;

	if (r->o->daemon_log && (err = open_log(r->o->daemon_log))) {
		pr_err("cannot write the log %s: %s", r->o->daemon_log,
		       err == -EPERM ? "not a regular file of ours" : strerror(-err));
		return err;
	}
	/* SIGHUP reopens the log (after a rotation), never stops the daemon */
	sigaction(SIGHUP, &sa, NULL);
	err = name_store__new(names_limit(), names_oldest, r, &r->names_kept);
	if (err) {
		pr_err("failed to allocate the names: %s", strerror(-err));
		return err;
	}
	/* a log pipe whose reader went away is an error to write, not a death */
	signal(SIGPIPE, SIG_IGN);
	trigger__start(r);
	err = control__open(control__dir(), &r->ctl, &other);
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
	err = control__own_dir(r->o->daemon_dir);
	if (err) {
		pr_err("cannot use --dir %s: %s", r->o->daemon_dir,
		       err == -EPERM ? "not a directory of ours that only we may write in" : strerror(-err));
		return err;
	}
	err = snap_writer__new(SNAP_JOBS_MAX, &r->snapw);
	if (err) {
		pr_err("failed to start the snapshot writer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int daemon__create_window(struct recorder *r, const struct gt_file_info *info)
{
	struct chunk_ring_opts ro = { .max_bytes = r->o->daemon_memory, .window_ns = r->o->daemon_window_ns };
	int err;

	err = chunk_ring__new(&ro, &r->ring);
	if (err) {
		pr_err("failed to allocate the window: %s", strerror(-err));
		return err;
	}
	err = trace_writer__create_sink(NULL, chunk_ring__sink, r->ring, &r->w);
	if (err) {
		pr_err("failed to start the window: %s", strerror(-err));
		return err;
	}
	r->info = *info;
	snprintf(r->path, sizeof(r->path), "the window in memory");
	r->daemon_start = now_ns(CLOCK_MONOTONIC);
	return r->cupti ? daemon_cupti__new(r) : 0;
}

static size_t reply(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static size_t reply(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* snap_job.finish of a --cupti snapshot: ctx is the owner's hooks. */
static int finish_cupti(void *ctx, const char *raw, const char *path)
{
	return daemon_cupti__finish_snapshot(ctx, raw, path);
}

/* A snapshot for client (0: none), queued to the writer. */
static int snapshot_submit(struct recorder *r, const char *what, uint64_t last_ns, uint32_t pid,
			   const char *out, uint64_t client)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	struct chunk_ring_snap_opts sel = { .last_ns = last_ns };
	struct snap_job *j;
	const void *names;
	size_t names_len;
	int err = -ENOMEM;

	/* the writer has no room: none of the work below for nothing */
	if (r->snaps_inflight >= SNAP_JOBS_MAX)
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->client = client;
	snprintf(j->what, sizeof(j->what), "%s", what);
	j->dir = r->o->daemon_dir;
	j->info = r->info;
	j->info.options = NULL;
	j->asked_ns = t0;
	/* --cupti: what the agents wrote up to now (their names too) */
	daemon_cupti__poll(r, true);
	if (out && !(j->out = strdup(out)))
		goto fail;
	if (asprintf((char **)&j->info.options, "%s snapshot=1", r->info.options ? r->info.options : "") < 0) {
		j->info.options = NULL;
		goto fail;
	}
	/* the names go on changing while the writer writes */
	names = name_store__data(r->names_kept, &names_len);
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
	if (r->dcupti) {
		j->finish = finish_cupti;
		j->finish_ctx = (void *)r->o->hooks;
	}
	/* the chunk being filled belongs in it too */
	trace_writer__flush(r->w);
	recorder__counters(r, &j->trailer.counters);
	j->trailer.end_ts = t0;
	err = chunk_ring__snap_take(r->ring, &sel, &j->snap);
	if (err)
		goto fail;
	j->loop_ns = now_ns(CLOCK_MONOTONIC) - t0;
	err = snap_writer__submit(r->snapw, j);
	if (err)
		goto fail;
	r->snaps_inflight++;
	r->stall_in_snap = true;
	return 0;
fail:
	snap_job__free(j);
	return err;
}

int daemon__snapshot(struct recorder *r, const char *what, uint64_t last_ns, uint32_t pid,
		     const char *out)
{
	return snapshot_submit(r, what, last_ns, pid, out, 0);
}

/* A snapshot the writer is done with: said, counted, answered. */
static void snapshot_done(struct recorder *r, struct snap_job *j)
{
	const struct chunk_ring_snap_stats *st = &j->st;
	char buf[PATH_MAX + 256];
	size_t n;

	if (!j->err) {
		r->snapshots++;
		pr_info("snapshot %s: %llu records in %llu chunks, %.1f ms (the window locked %.3f ms, "
			"the recording loop held %.3f ms)", j->path, (unsigned long long)st->records,
			(unsigned long long)st->chunks, (j->done_ns - j->asked_ns) / 1e6,
			st->lock_ns / 1e6, j->loop_ns / 1e6);
		n = reply(buf, sizeof(buf), "ok\n%s\n", j->path);
	} else {
		const char *why = j->err == -ECANCELED ? "the daemon is stopping" : strerror(-j->err);
		const char *path = j->path[0] ? j->path : "the snapshot";

		r->snapshots_failed++;
		/* in the log too: a trigger's has no other reader */
		pr_warn("snapshot (%s) failed: cannot write %s: %s", j->what, path, why);
		n = reply(buf, sizeof(buf), "error: cannot write %s: %s\n", path, why);
	}
	if (j->client && control__reply(r->ctl, j->client, buf, n))
		pr_verbose("snapshot (%s): its client hung up before the reply", j->what);
	r->snaps_inflight--;
}

void daemon__stall(struct recorder *r, uint64_t ns)
{
	if (ns > r->stall_max_ns)
		r->stall_max_ns = ns;
	if (r->stall_in_snap && ns > r->stall_snap_max_ns)
		r->stall_snap_max_ns = ns;
}

/* "snapshot last_ns=N pid=P [out=PATH]" */
static size_t do_snapshot(struct recorder *r, uint64_t client, const char *req, char *buf, size_t len)
{
	unsigned long long last = 0;
	long pid = 0;
	const char *o = strstr(req, " out=");
	int err;

	if (sscanf(req, "snapshot last_ns=%llu pid=%ld", &last, &pid) != 2)
		return reply(buf, len, "error: bad snapshot request\n");
	if (pid > 0 && !proc_names__traced(r->procs, (uint32_t)pid))
		return reply(buf, len, "error: pid %ld was never seen making CUDA calls\n", pid);
	err = snapshot_submit(r, "snapshot", last, (uint32_t)pid, o ? o + 5 : NULL, client);
	if (err == -EBUSY)
		return reply(buf, len, "error: %d snapshots are being written already; try again\n",
			     SNAP_JOBS_MAX);
	if (err)
		return reply(buf, len, "error: cannot take a snapshot: %s\n", strerror(-err));
	return CONTROL_DEFER;
}

/* The budget's lines of status: estimates are labelled as such. */
static size_t budget_lines(struct recorder *r, char *buf, size_t len)
{
	struct budget_status st;
	char est[32] = "unknown";

	if (!budget__status(r, &st))
		return reply(buf, len, "overhead_estimate_pct unknown\n");
	if (st.known)
		snprintf(est, sizeof(est), "%.3f", st.estimate * 100);
	return reply(buf, len,
		     "overhead_estimate_pct %s\n"
		     "overhead_mean_estimate_pct %.3f\n"
		     "overhead_max_estimate_pct %.3f\n"
		     "overhead_budget_pct %.3f\n"
		     "overhead_over_budget %d\n"
		     "overhead_thread %u/%u\n"
		     "overhead_interval_s %.1f\n"
		     "overhead_hits %llu\n"
		     "overhead_bpf_ms %.3f\n"
		     "overhead_evaluations %llu\n"
		     "overhead_changes %llu\n"
		     "duty_cycle_pct %.3f\n"
		     "light_period_s %.1f\n"
		     "probe_hit_ns %.0f\n"
		     "probe_hit_push_ns %.0f\n"
		     "probe_hit_branch_ns %.0f\n"
		     "probe_hit_step_ns %.0f\n"
		     "probe_ret_ns %.0f\n"
		     "bpf_stats %s\n",
		     est, st.mean_estimate * 100, st.max_estimate * 100, r->o->budget * 100, st.over, st.pid, st.tid,
		     st.interval_ns / 1e9, (unsigned long long)st.hits, st.bpf_ns / 1e6,
		     (unsigned long long)st.evaluations, (unsigned long long)st.changes, st.duty * 100,
		     st.period_ns / 1e9, st.hit_ns, st.hit_insn_ns[UPROBE_INSN_PUSH],
		     st.hit_insn_ns[UPROBE_INSN_BRANCH], st.hit_insn_ns[UPROBE_INSN_STEP], st.ret_ns, st.stats ? "on" : "off");
}

/* The GPU-metrics sampler's lines of status: what it read, and its own
 * cost, measured as its threads' CPU time (the recorder's, not the traced
 * programs'). All 0 when it is off or has no NVML. */
static size_t gpum_lines(struct recorder *r, char *buf, size_t len)
{
	struct gpu_metrics_stats s = { 0 };

	if (r->gpum)
		gpu_metrics__stats(r->gpum, &s);
	return reply(buf, len,
		     "gpu_metrics_hz %u\n"
		     "gpu_metrics_gpus %u\n"
		     "gpu_metrics_mig %u\n"
		     "gpu_metrics_samples %llu\n"
		     "gpu_metrics_records %llu\n"
		     "gpu_metrics_proc_records %llu\n"
		     "gpu_metrics_errors %llu\n"
		     "gpu_metrics_dropped %llu\n"
		     "gpu_metrics_lost %u\n"
		     "gpu_metrics_cpu_ms %.3f\n"
		     "gpu_metrics_cpu_pct %.4f\n",
		     s.hz, s.gpus, s.mig, (unsigned long long)s.samples, (unsigned long long)s.records,
		     (unsigned long long)s.proc_samples, (unsigned long long)s.errors,
		     (unsigned long long)s.dropped, s.lost, s.cpu_ns / 1e6,
		     s.wall_ns ? 100.0 * (double)s.cpu_ns / (double)s.wall_ns : 0.0);
}

/* The budget's shedding: the apis recorded only in windows now (a comma
 * list, "none"), the swaps made and what they cost. */
static size_t shed_lines(struct recorder *r, char *buf, size_t len)
{
	struct shed_status st;
	char apis[SHED_MAX * 40] = "none", swap[64] = "none";
	size_t n = 0;

	if (!shed__status(r, &st))
		return 0;
	for (unsigned i = 0; i < st.n && n < sizeof(apis); i++)
		n += (size_t)snprintf(apis + n, sizeof(apis) - n, "%s%s", i ? "," : "",
				      gt_api__name(st.apis[i]) ?: "?");
	if (st.swapping)
		snprintf(swap, sizeof(swap), "%s:%s", st.swap_shed ? "shedding" : "giving_back",
			 gt_api__name(st.swapping) ?: "?");
	return reply(buf, len,
		     "overhead_shed_apis %s\n"
		     "overhead_sheds %llu\n"
		     "overhead_given_back %llu\n"
		     "overhead_swap %s\n"
		     "overhead_swap_last_ms %.1f\n"
		     "overhead_swap_max_ms %.1f\n"
		     "overhead_swap_cut_calls %llu\n"
		     "overhead_swap_handed_hits %llu\n"
		     "overhead_swap_failed %llu\n",
		     apis, (unsigned long long)st.sheds, (unsigned long long)st.restores, swap, st.last_ms,
		     st.max_ms, (unsigned long long)st.cut, (unsigned long long)st.handed,
		     (unsigned long long)st.failed);
}

static size_t do_status(struct recorder *r, char *buf, size_t len)
{
	struct gt_counters c;
	struct chunk_ring_stats rs;
	struct control_stats cs;
	struct name_store_stats ns;
	uint64_t up = now_ns(CLOCK_MONOTONIC) - r->daemon_start;
	size_t n;

	char cg[3 * PATH_MAX] = "-";

	recorder__counters(r, &c);
	chunk_ring__stats(r->ring, &rs);
	control__stats(r->ctl, &cs);
	name_store__stats(r->names_kept, &ns);
	if (r->cgroup)
		cgroup_target__escape(r->cgroup->path, cg, sizeof(cg));
	n = reply(buf, len,
		     "ok\n"
		     "pid %d\n"
		     "uptime_s %.1f\n"
		     "mode %s\n"
		     "cgroup %s\n"
		     "processes %llu\n"
		     "processes_alive %llu\n"
		     "events %llu\n"
		     "dropped %llu\n"
		     "window_chunks %llu\n"
		     "window_records %llu\n"
		     "window_bytes %llu\n"
		     "window_limit_bytes %llu\n"
		     "window_span_s %.1f\n"
		     "window_dropped_chunks %llu\n"
		     "window_dropped_records %llu\n"
		     "names_kept_bytes %llu\n"
		     "names_kept_records %llu\n"
		     "names_in_use %llu\n"
		     "names_limit_bytes %llu\n"
		     "names_forgotten %llu\n"
		     "names_repeated %llu\n"
		     "names_lost %llu\n"
		     "names_lost_bytes %llu\n"
		     "names_exits_missed %llu\n"
		     "light_windows %u\n"
		     "snapshots %llu\n"
		     "triggers_fired %llu\n"
		     "triggers_suppressed %llu\n",
		     (int)getpid(), up / 1e9, r->o->light ? "light" : "full", cg,
		     (unsigned long long)r->nprocs, (unsigned long long)(r->nprocs - r->procs_exited),
		     (unsigned long long)c.events,
		     (unsigned long long)c.drop_ringbuf, (unsigned long long)rs.chunks,
		     (unsigned long long)rs.records, (unsigned long long)rs.mem_bytes,
		     (unsigned long long)r->o->daemon_memory,
		     rs.chunks ? (rs.newest_ts - rs.oldest_ts) / 1e9 : 0.0,
		     (unsigned long long)rs.dropped_chunks, (unsigned long long)rs.dropped_records,
		     (unsigned long long)ns.bytes, (unsigned long long)ns.records,
		     (unsigned long long)ns.live, (unsigned long long)ns.limit,
		     (unsigned long long)ns.forgotten, (unsigned long long)ns.repeated,
		     (unsigned long long)ns.lost, (unsigned long long)ns.lost_bytes,
		     (unsigned long long)ns.gone,
		     r->cap.windows,
		     (unsigned long long)r->snapshots, (unsigned long long)r->trig.fired,
		     (unsigned long long)r->trig.suppressed);
	/* what went wrong with snapshots and clients, counted */
	n += reply(buf + n, len - n,
		   "snapshots_failed %llu\n"
		   "snapshots_writing %u\n"
		   "clients_served %llu\n"
		   "clients_timed_out %llu\n"
		   "clients_refused %llu\n"
		   "clients_gone %llu\n"
		   "loop_stall_max_ms %.3f\n"
		   "loop_stall_snapshot_max_ms %.3f\n",
		   (unsigned long long)r->snapshots_failed, snap_writer__busy(r->snapw),
		   (unsigned long long)cs.served, (unsigned long long)cs.timed_out,
		   (unsigned long long)cs.refused, (unsigned long long)cs.gone,
		   r->stall_max_ns / 1e6, r->stall_snap_max_ns / 1e6);
	n += budget_lines(r, buf + n, len - n);
	n += gpum_lines(r, buf + n, len - n);
	return n + shed_lines(r, buf + n, len - n);
}

static size_t handle(void *ctx, uint64_t client, const char *req, char *buf, size_t len)
{
	struct recorder *r = ctx;

	if (!strcmp(req, "status")) {
		const struct record_hooks *h = r->o->hooks;
		size_t n = do_status(r, buf, len);

		/* libcuda discovery and holds (discovery.c) */
		n += recorder__hold_status(r, buf + n, len - n);
		n += daemon_cupti__status(r, buf + n, len - n);
		if (h && h->status && n < len)
			n += h->status(h->ctx, buf + n, len - n);
		return n;
	}
	if (!strncmp(req, "snapshot ", 9))
		return do_snapshot(r, client, req, buf, len);
	return reply(buf, len, "error: unknown request\n");
}

/* The owner's figures (the metrics endpoint), once per poll. */
static void poll_hook(struct recorder *r)
{
	const struct record_hooks *h = r->o->hooks;
	struct chunk_ring_stats rs;
	struct record_self s = { 0 };
	struct budget_status bs;
	struct shed_status ss;
	struct name_store_stats ns;
	struct gt_counters c;
	struct timespec cpu;
	uint64_t up;

	if (!h || !h->on_poll)
		return;
	recorder__counters(r, &c);
	chunk_ring__stats(r->ring, &rs);
	s.records = r->received;
	s.ring_bytes = cuda_object__ring_size(r->o->buffer_size);
	s.window_bytes = rs.mem_bytes;
	if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu))
		s.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	up = now_ns(CLOCK_MONOTONIC) - r->daemon_start;
	s.duty_cycle = !r->o->light ? 1.0 : r->o->period_ns && up ?
		       (double)r->cap.windows * r->o->window_ns / up : 0.0;
	if (s.duty_cycle > 1)
		s.duty_cycle = 1;
	s.overhead = budget__status(r, &bs) && bs.known ? bs.estimate : -1;
	s.budget = r->o->budget;
	if (shed__status(r, &ss)) {
		s.has_shed = true;
		s.shed_apis = ss.n;
		s.sheds = ss.sheds;
		s.restores = ss.restores;
	}
	if (r->gpum) {
		struct gpu_metrics_stats gs = { 0 };

		gpu_metrics__stats(r->gpum, &gs);
		s.has_sampler = true;
		s.sampler_cpu_ns = gs.cpu_ns;
	}
	name_store__stats(r->names_kept, &ns);
	s.names_lost = ns.lost;
	h->on_poll(h->ctx, &c, &s);
}

void daemon__serve(struct recorder *r)
{
	struct snap_job *j;
	int err;

	r->stall_in_snap = r->snaps_inflight > 0;
	/* first: what is done makes room for what is asked below */
	while ((j = snap_writer__done(r->snapw))) {
		snapshot_done(r, j);
		snap_job__free(j);
	}
	names_poll(r, now_ns(CLOCK_MONOTONIC));
	poll_hook(r);
	daemon_cupti__poll(r, false);
	trigger__poll(r);
	if (hup) {
		hup = 0;
		if (r->o->daemon_log && (err = open_log(r->o->daemon_log)))
			pr_warn("SIGHUP: cannot reopen the log %s: %s; logging on", r->o->daemon_log,
				strerror(-err));
		else
			pr_info("SIGHUP: %s", r->o->daemon_log ? "log reopened" : "no --log to reopen");
	}
	/* never waits: a client that is silent or does not read holds a slot, not the loop */
	control__serve(r->ctl, handle, r);
}

void daemon__close(struct recorder *r)
{
	struct snap_job *j;

	/* the snapshot being written is finished, those queued are not; their
	 * clients are told */
	snap_writer__stop(r->snapw);
	while ((j = snap_writer__done(r->snapw))) {
		snapshot_done(r, j);
		snap_job__free(j);
	}
	snap_writer__free(r->snapw);
	r->snapw = NULL;
	control__flush(r->ctl, 1000);
	daemon_cupti__free(r);
	control__close(r->ctl);
	r->ctl = NULL;
	chunk_ring__free(r->ring);
	r->ring = NULL;
	name_store__free(r->names_kept);
	r->names_kept = NULL;
	trigger__free(r);
}
