// SPDX-License-Identifier: MIT
/*
 * The recorder: open -> configure -> load -> attach -> poll -> one cleanup.
 * Records arrive from one BPF ring buffer submitted without wake-ups; this
 * loop polls on a short timeout and drains it, adds what only userspace can
 * learn (process, thread and recovered kernel names) and appends everything
 * to the trace file (each record: events.c).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/clock.h"
#include "cuda.skel.h"
#include "record/procs/cgroup_target.h"
#include "record/probes/cuda_object.h"
#include "record/child.h"
#include "record/probes/cuda_probes.h"
#include "record/cupti_session.h"
#include "record/probes/hold.h"
#include "record/procs/kname_recovery.h"
#include "record/probes/sched_ioctl_sources.h"
#include "format/nv_ioctl.h"
#include "record/probes/libcuda_finder.h"
#include "record/probes/nccl_probes.h"
#include "lib/log.h"
#include "record/clock_pair.h"
#include "record/probes/bpf_log.h"
#include "record/procs/proc_names.h"
#include "record/stacks/pyconf.h"
#include "record/stacks/ustacks.h"
#include "record/record.h"
#include "record/gpum/gpu_metrics.h"
#include "record/recorder.h"
#include "record/output.h"
#include "record/procs/pid_watch.h"
#include "record/procs/procfs.h"
#include "format/records.h"
#include "format/trace_file.h"

volatile sig_atomic_t stop_requests;

static void on_signal(int sig)
{
	(void)sig;
	stop_requests++;
}

uint64_t now_ns(clockid_t clk)
{
	return clock__ns(clk);
}

int recorder__write(struct recorder *r, const struct gt_hdr *h)
{
	int err;

	if (r->write_err)
		return r->write_err;
	err = trace_writer__append(r->w, h);
	if (!err)
		EXT_CALL(r, on_written, h);
	if (err) {
		r->write_err = err;
		pr_err("failed to write %s: %s; the file keeps everything up to its last complete chunk",
		       r->path, strerror(-err));
	}
	return err;
}

static int emit_name_rec(void *ctx, const struct gt_hdr *h)
{
	return recorder__write(ctx, h);
}

/* kernel_names' learned callback (ctx = the recorder): to the stage. */
static void learned(void *ctx, const struct gt_hdr *at, uint64_t handle, const char *name)
{
	struct recorder *r = ctx;

	r->o->ext->on_learned(r->o->ext->ctx, at, handle, name);
}

void recorder__counters(struct recorder *r, struct gt_counters *c)
{
	struct cuda_bpf__bss *b = r->skel->bss;

	memset(c, 0, sizeof(*c));
	c->events = r->received;
	c->drop_ringbuf = __atomic_load_n(&b->n_drop_ringbuf, __ATOMIC_RELAXED);
	c->drop_stash = __atomic_load_n(&b->n_drop_stash, __ATOMIC_RELAXED);
	c->str_fault = __atomic_load_n(&b->n_str_fault, __ATOMIC_RELAXED);
	c->args_fault = __atomic_load_n(&b->n_args_fault, __ATOMIC_RELAXED);
	c->ranges_nested = __atomic_load_n(&b->n_ranges_nested, __ATOMIC_RELAXED);
	c->ranges_refused = __atomic_load_n(&b->n_ranges_refused, __ATOMIC_RELAXED);
	kernel_names__counters(r->names, c);
	c->attach_files = cuda_probes__nfiles(r->probes);
	c->attach_probes = cuda_probes__nprobes(r->probes);
	c->attach_failed = cuda_probes__nfailed(r->probes);
	nccl_probes__counters(r->nccl, c);
	c->records_written = trace_writer__records(r->w);
	kernel_sources__counters(r->ks, c);
}

static void write_stats(struct recorder *r, struct gt_counters *c)
{
	struct gt_stats s;

	memset(&s, 0, sizeof(s));
	recorder__counters(r, c);
	s.hdr.ts = now_ns(CLOCK_MONOTONIC);
	s.hdr.pid = getpid();
	s.hdr.type = GT_REC_STATS;
	s.hdr.size = sizeof(s);
	s.c = *c;
	recorder__write(r, &s.hdr);
}

/* Once a second: counters into the file, a chunk to disk, drops on stderr. */
void tick(struct recorder *r, uint64_t start, uint64_t *last_events, bool tty)
{
	struct gt_counters c;
	uint64_t el = now_ns(CLOCK_MONOTONIC) - start;

	write_stats(r, &c);
	if (!r->write_err) {
		int err = trace_writer__flush(r->w);

		if (err && !r->write_err) {
			r->write_err = err;
			pr_err("failed to write %s: %s", r->path, strerror(-err));
		}
	}
	if (c.drop_ringbuf > r->last_drops) {
		/* the remedy once: a flood would repeat it every second */
		pr_warn("%llu events lost: ring buffer full (%llu in all)%s",
			(unsigned long long)(c.drop_ringbuf - r->last_drops),
			(unsigned long long)c.drop_ringbuf,
			r->last_drops ? "" : "; raise --buffer-size");
		r->last_drops = c.drop_ringbuf;
	}
	if (tty && !r->o->quiet) {
		char cap[64] = "";

		if (r->o->capture_range != RECORD_RANGE_NONE)
			snprintf(cap, sizeof(cap), "  ranges %u open, %u done", (unsigned)r->cap.nopen,
				 r->cap.closed);
		else if (r->o->light)
			snprintf(cap, sizeof(cap), "  %u window%s", r->cap.windows,
				 r->cap.windows == 1 ? "" : "s");
		gt_log_status("gtrace-bpf: %llus  %llu events  %llu/s  %llu dropped  %llu process%s%s",
			      (unsigned long long)(el / 1000000000ull), (unsigned long long)c.events,
			      (unsigned long long)(c.events - *last_events),
			      (unsigned long long)(c.drop_ringbuf + c.drop_state), (unsigned long long)r->nprocs,
			      r->nprocs == 1 ? "" : "es", cap);
	}
	*last_events = c.events;
}

/* In the child of -- CMD: the agent's environment goes to CMD (and what it
 * starts) only. */
int child_setup(void *ctx)
{
	struct recorder *r = ctx;
	int err;

	if (r->cupti && (err = cupti_session__setenv(r->cupti))) {
		pr_err("cannot set the CUPTI agent's environment: %s",
			strerror(-err));
		return err;
	}
	return 0;
}

static int start_sources(struct recorder *r)
{
	struct kernel_sources_opts ko = {
		.ioctl = r->o->trace_ioctl,
		.sched = r->o->trace_sched,
		.majors = r->majors,
		.nmajors = r->nmajors,
		.frontend_major = r->frontend_major,
		.filter = r->filter,
		.filter_cgroup = r->cgroup != NULL,
		.cgroup_id = r->cgroup ? r->cgroup->id : 0,
		.cgroup_level = r->cgroup ? r->cgroup->level : 0,
		.wakeup_bytes = r->skel->rodata->wakeup_bytes,
		.self_pid = getpid(),
		.rb_fd = bpf_map__fd(r->skel->maps.rb),
		.pids_fd = bpf_map__fd(r->skel->maps.pids),
		.active_fd = bpf_map__fd(r->skel->maps.active_pids),
		.ranges_fd = bpf_map__fd(r->skel->maps.ranges),
		.capture_ranges = r->o->capture_range != RECORD_RANGE_NONE,
	};

	if (!ko.ioctl && !ko.sched)
		return 0;
	return kernel_sources__start(&ko, &r->ks);
}

void recorder__clock(struct recorder *r, uint32_t kind)
{
	struct gt_clock c;

	clock_pair__read(&c, kind);
	recorder__write(r, &c.hdr);
	r->next_clock = c.hdr.ts + GT_CLOCK_PERIOD_NS;
}

static int finish(struct recorder *r)
{
	struct gt_trailer t;
	struct gt_counters c;
	struct hold_stats hs;
	char gaps[48] = "";
	uint64_t bytes;
	int err;

	hold__stats(r->hold, &hs);
	/* "0 events dropped" alone would claim every call was recorded */
	if (hs.gaps)
		snprintf(gaps, sizeof(gaps), ", %llu probe gap%s", (unsigned long long)hs.gaps,
			 hs.gaps == 1 ? "" : "s");
	memset(&t, 0, sizeof(t));
	capture__finish(r);
	if (!r->write_err) {
		recorder__clock(r, GT_CLOCK_END);
		write_stats(r, &c);
	}
	recorder__counters(r, &c);
	/* --cupti: the calls were recorded up to the agents' last hand-over
	 * began; what the agents gave after that is not in the calls' span */
	t.end_ts = r->calls_end ? r->calls_end : now_ns(CLOCK_MONOTONIC);
	t.counters = c;
	t.records = trace_writer__records(r->w);
	if (!r->to_file) {
		recorder__hold_summary(r);
		EXT_CALL(r, finished, &c, gaps);
		return 0;
	}
	err = r->write_err ? r->write_err : trace_writer__finish(r->w, &t);
	if (err) {
		if (!r->write_err)
			pr_err("failed to finish %s: %s", r->path, strerror(-err));
		return err;
	}
	bytes = trace_writer__bytes(r->w);
	/* "0.0 MiB" says nothing of a short recording */
	pr_info("wrote %s: %llu records, %.1f %s, %llu events dropped%s, %llu process%s",
		r->path, (unsigned long long)trace_writer__records(r->w),
		bytes < 104858 ? bytes / 1024.0 : bytes / 1048576.0, bytes < 104858 ? "KiB" : "MiB",
		(unsigned long long)(c.drop_ringbuf + c.drop_state), gaps, (unsigned long long)r->nprocs,
		r->nprocs == 1 ? "" : "es");
	recorder__hold_summary(r);
	if (r->skel->bss->n_environ_drop)
		pr_info("%llu exec%s found no room in the ring for the environment: the rank read from /proc instead "
			"(none where the process had exited)",
			(unsigned long long)r->skel->bss->n_environ_drop, r->skel->bss->n_environ_drop == 1 ? "" : "s");
	if (r->stacks) {
		const struct ustacks_counters *sc = ustacks__counters(r->stacks);

		char same[96] = "";

		if (sc->same)
			snprintf(same, sizeof(same), "; %llu hot calls from a call site seen before (%llu of "
				 "them not known)", (unsigned long long)sc->same,
				 (unsigned long long)sc->same_unknown);
		pr_info("stacks: %llu taken, %llu distinct, %llu cut at %d frames, %llu not unwound past "
			"the probed call (no frame pointers?), %llu frames in no file, %llu without a "
			"symbol, %llu at the exit of a failed call%s", (unsigned long long)sc->stacks,
			(unsigned long long)sc->interned, (unsigned long long)sc->cut, GT_USTACK_MAX,
			(unsigned long long)sc->fault, (unsigned long long)sc->unmapped,
			(unsigned long long)sc->no_symbol, (unsigned long long)sc->at_exit, same);
		/* BPF's counts: the cuda object's and the NCCL object's */
		uint64_t bc[6] = { 0,
				   __atomic_load_n(&r->skel->bss->n_py_fault, __ATOMIC_RELAXED),
				   __atomic_load_n(&r->skel->bss->n_py_code_drop, __ATOMIC_RELAXED),
				   __atomic_load_n(&r->skel->bss->n_py_nothread, __ATOMIC_RELAXED),
				   __atomic_load_n(&r->skel->bss->n_py_busy, __ATOMIC_RELAXED),
				   __atomic_load_n(&r->skel->bss->n_py_slowkey, __ATOMIC_RELAXED) };

		nccl_probes__stack_counts(r->nccl, bc);
		if (sc->py_stacks || sc->py_late || pyconf__counters(r->py)->interpreters)
			pr_info("stacks: %llu with Python frames (%u interpreter%s; %llu of a thread without "
				"Python, the main thread's frames), %llu code objects, %llu "
				"frames without their code object, %llu without a line, %llu cut at %d Python "
				"frames, %llu walks stopped at a frame not readable (%llu in BPF), %llu code "
				"objects lost to a full ring buffer, %llu calls of a thread with no Python "
				"state, %llu taken before the process' interpreter was known (%llu "
				"lookups of it put off: its mappings busy); %llu hot calls keyed by a walk",
				(unsigned long long)sc->py_stacks, pyconf__counters(r->py)->interpreters,
				pyconf__counters(r->py)->interpreters == 1 ? "" : "s",
				(unsigned long long)sc->py_main,
				(unsigned long long)sc->py_codes, (unsigned long long)sc->py_unknown,
				(unsigned long long)sc->py_no_line, (unsigned long long)sc->py_cut,
				GT_PYSTACK_MAX, (unsigned long long)sc->py_fault,
				(unsigned long long)bc[1], (unsigned long long)bc[2], (unsigned long long)bc[3],
				(unsigned long long)sc->py_late, (unsigned long long)bc[4],
				(unsigned long long)bc[5]);
	}
	if (c.drop_ringbuf)
		pr_warn("%llu events were lost to a full ring buffer; raise --buffer-size",
			(unsigned long long)c.drop_ringbuf);
	if (c.drop_state)
		pr_warn("%llu ioctls or off-CPU intervals lost: the kernel did not store their start",
			(unsigned long long)c.drop_state);
	if (c.drop_stash)
		pr_warn("%llu call results lost (too many calls in flight)",
			(unsigned long long)c.drop_stash);
	if (r->bad_records)
		pr_warn("%llu malformed records skipped", (unsigned long long)r->bad_records);
	return 0;
}

/* How long a process may be held: GTRACE_HOLD_BOUND_MS (tests), else 1 s. */
static uint64_t hold_bound_ns(void)
{
	const char *e = getenv("GTRACE_HOLD_BOUND_MS");
	long ms = e ? strtol(e, NULL, 10) : 0;

	return (uint64_t)(ms > 0 ? ms : 1000) * 1000000ull;
}

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

/* True when /proc/PID/stat's flags (its 9th field) mark a kernel thread. */
static bool kernel_thread(pid_t pid)
{
	char buf[512];
	const char *p = procfs__stat_fields(pid, buf, sizeof(buf));
	unsigned long flags;

	return p && sscanf(p, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & PF_KTHREAD);
}

/* True when a process maps no shared object at all: a static program,
 * which has no dynamic loader to open libcuda with, ever. */
static bool static_program(pid_t pid)
{
	char path[64], line[4096];
	bool shared = false, read_any = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!shared && fgets(line, sizeof(line), f)) {
		read_any = true;
		shared = strstr(line, ".so") != NULL;
	}
	fclose(f);
	return read_any && !shared;
}

static int check_pids(const struct record_opts *o)
{
	char p[64];
	size_t i;

	for (i = 0; i < o->npids; i++) {
		snprintf(p, sizeof(p), "/proc/%d", o->pids[i]);
		if (o->pids[i] <= 0 || access(p, F_OK)) {
			pr_err("no such process: %d", o->pids[i]);
			return -ESRCH;
		}
		if (kernel_thread(o->pids[i]))
			pr_warn("-p %d is a kernel thread: it never makes CUDA calls", o->pids[i]);
		else if (static_program(o->pids[i]))
			pr_warn("-p %d is a static program that maps no shared library: it can never "
				"load libcuda", o->pids[i]);
	}
	return 0;
}

void record_spools__done(struct record_spools *s, bool merged)
{
	if (!s)
		return;
	if (!merged)
		pr_err("the GPU records in %s are not linked to their calls: gtrace-bpf merge %s does it",
		       s->trace, s->trace);
	free(s);
}

int record__run(const struct record_opts *o, struct record_spools **spools)
{
	struct recorder rec = { .o = o }, *r = &rec;
	struct cgroup_target cgroup;
	struct cuda_probes_opts po = {
		.launch_exit = o->launch_exit,
		.hot_detached = o->light,
		.profiler_ranges = o->capture_range == RECORD_RANGE_PROFILER,
		/* the stage may swap always-on apis to the windows */
		.swap = o->ext && o->ext->swap,
		.stacks_sync = o->stacks == RECORD_STACKS_SYNC,
		.stacks_all = o->stacks == RECORD_STACKS_ALL,
	};
	struct cuda_object_opts bo = {
		.filter = !o->all,
		.buffer_size = o->buffer_size,
		.capture_ranges = o->capture_range != RECORD_RANGE_NONE,
		.gate_hot = o->light,
		.swap_gate = o->ext && o->ext->swap,
		.range_max = o->range_max,
		.hold_cmd_tree = o->cmd != NULL,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct gt_file_info info;
	struct utsname u;
	char opts[4096];	/* the GPU metrics' keys take ~60 bytes a GPU */
	int err, status = 1;
	bool recorded = false, finished = false, gpu_side = true;
	size_t i;
	uint8_t one = 1;

	if (spools)
		*spools = NULL;
	r->filter = !o->all;
	if (o->cgroup) {
		char why[PATH_MAX + 160];

		/* the command line checked it already: a cgroup gone since */
		if (cgroup_target__resolve(o->cgroup, &cgroup, why, sizeof(why))) {
			pr_err("%s", why);
			return 1;
		}
		r->cgroup = &cgroup;
		bo.filter_cgroup = true;
		bo.cgroup_id = cgroup.id;
		bo.cgroup_level = cgroup.level;
	}
	if (recorder__cupti_new(r))
		return 1;
	err = check_pids(o);
	if (err)
		goto cleanup;
	/* the agents are let in before the probes go on, so that they record
	 * when the calls are recorded (what they record before is left out) */
	if (o->cupti && (err = cupti_session__open_dir(r->cupti)))
		goto cleanup;
	if (EXT_HOOK(r, open) && (err = o->ext->open(o->ext->ctx, r)))
		goto cleanup;
	/* after the extension's open: the daemon's --log is where this goes */
	if (o->cgroup)
		pr_verbose("--cgroup %s: cgroup id %llu at depth %d", cgroup.path, (unsigned long long)cgroup.id,
			   cgroup.level);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		err = -ENOENT;
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): gtrace-bpf needs CONFIG_DEBUG_INFO_BTF");
		goto cleanup;
	}
	if (geteuid() != 0)
		pr_verbose("not root: loading needs CAP_BPF and CAP_PERFMON");
	bpf_log__setup();
	err = recorder__choose_majors(r);
	if (err)
		goto cleanup;
	err = cuda_object__load(&bo, &r->skel, &r->multi, &r->open_probe);
	if (err)
		goto cleanup;
	po.multi = r->multi;
	if (o->trace_cuda) {
		/* before any thread: the watchdog is forked */
		struct hold_opts ho = {
			.slots_fd = bpf_map__fd(r->skel->maps.hold_slots),
			.files_fd = bpf_map__fd(r->skel->maps.probed_files),
			.hold_on = &r->skel->bss->hold_on,
			.heartbeat = &r->skel->bss->hold_heartbeat,
			.bound_ns = hold_bound_ns(),
		};

		if ((err = hold__new(&ho, &r->hold))) {
			pr_err("failed to allocate the recorder: %s", strerror(-err));
			goto cleanup;
		}
	}
	r->probes = cuda_probes__new(r->skel, &po);
	if (o->trace_cuda) {
		/* libnccl beside libcuda: found by the same discovery */
		struct nccl_probes_opts no = {
			.multi = r->multi, .filter = r->filter, .filter_cgroup = r->cgroup != NULL,
			.cgroup_id = r->cgroup ? r->cgroup->id : 0, .cgroup_level = r->cgroup ? r->cgroup->level : 0,
			.capture_ranges = o->capture_range != RECORD_RANGE_NONE,
			.wakeup_bytes = r->skel->rodata->wakeup_bytes, .self_pid = getpid(),
			.rb_fd = bpf_map__fd(r->skel->maps.rb), .pids_fd = bpf_map__fd(r->skel->maps.pids),
			.active_fd = bpf_map__fd(r->skel->maps.active_pids),
			.ranges_fd = bpf_map__fd(r->skel->maps.ranges),
			.stacks_sync = o->stacks == RECORD_STACKS_SYNC, .stacks_all = o->stacks == RECORD_STACKS_ALL,
			.stack_pids_fd = bpf_map__fd(r->skel->maps.stack_pids),
			.stack_sites_fd = bpf_map__fd(r->skel->maps.stack_sites),
			.py_cfgs_fd = bpf_map__fd(r->skel->maps.py_cfgs),
			.py_files_fd = bpf_map__fd(r->skel->maps.py_files),
			.py_procs_fd = bpf_map__fd(r->skel->maps.py_procs),
			.py_threads_fd = bpf_map__fd(r->skel->maps.py_threads),
			.py_seen_fd = bpf_map__fd(r->skel->maps.py_seen),
			.py_fast_fd = bpf_map__fd(r->skel->maps.py_fast),
			.py_epoch_fd = bpf_map__fd(r->skel->maps.py_epoch),
		};

		err = nccl_probes__new(&no, &r->nccl);
		if (err)
			goto cleanup;
	}
	r->names = kernel_names__new(emit_name_rec, kernel_names__read_process, r);
	r->procs = proc_names__new(r->filter, emit_name_rec, r);
	if (o->stacks != RECORD_STACKS_NONE) {
		struct pyconf_bpf pb = {
			.cfgs_fd = bpf_map__fd(r->skel->maps.py_cfgs),
			.files_fd = bpf_map__fd(r->skel->maps.py_files),
			.procs_fd = bpf_map__fd(r->skel->maps.py_procs),
			.nfiles = &r->skel->bss->py_nfiles, .gen = &r->skel->bss->py_gen,
		};

		nccl_probes__py_globals(r->nccl, &pb.nfiles2, &pb.gen2);

		if (!(r->stacks = ustacks__new(emit_name_rec, r)) || !(r->py = pyconf__new(&pb))) {
			err = -ENOMEM;
			pr_err("failed to allocate the recorder: %s", strerror(-err));
			goto cleanup;
		}
		ustacks__set_python(r->stacks, r->py);
		/* the interpreters known before their first calls: the program
		 * about to start, the running processes to follow */
		if (o->cmd)
			pyconf__scan_cmd(r->py, o->cmd, getenv("PATH"));
		if (o->all || o->npids)
			pyconf__scan_procs(r->py);
	}
	if (r->names && EXT_HOOK(r, on_learned))
		kernel_names__on_learn(r->names, learned);
	if (!r->probes || !r->names || !r->procs) {
		err = -ENOMEM;
		pr_err("failed to allocate the recorder: %s", strerror(-err));
		goto cleanup;
	}
	if (o->delay > 0) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		err = recorder__wait_delay(r);
		if (err)
			goto cleanup;
	}
	/* the agent into the running processes of --cupti=attach, then the
	 * calls are recorded from now on: the agents' records too */
	recorder__cupti_attach(r);
	cupti_session__begin(r->cupti, recorder__cupti_wants(r), r);
	err = cuda_object__attach_static(r->skel, &r->open_probe);
	if (err)
		goto cleanup;
	/* from now on an open of a library without probes is followed to its
	 * return, where its process is held */
	if (o->trace_cuda && (r->skel->links.open_exit_tp || r->skel->links.open_exit_raw))
		r->skel->bss->open_exit_live = 1;
	if (o->trace_cuda) {
		err = recorder__attach_libcuda(r);
		if (err)
			goto cleanup;
	}
	/* every probe of the start is on: the calls are recorded from this
	 * instant, none before (cuda.bpf.c) */
	__atomic_store_n(&r->skel->bss->calls_on, 1, __ATOMIC_SEQ_CST);
	if (o->capture_range == RECORD_RANGE_NVTX) {
		err = cuda_probes__attach_ranges(r->probes, cupti_session__lib(r->cupti), GT_CAPSRC_NVTX);
		if (err) {
			pr_err("cannot follow the NVTX ranges of --nvtx-capture: %s: %s",
			       cupti_session__lib(r->cupti),
			       err == -ENOEXEC ? "no gtrace_capture_open/close in this CUPTI agent" :
			       strerror(-err));
			goto cleanup;
		}
	}
	err = start_sources(r);
	if (err)
		goto cleanup;
	recorder__fill_info(r, &info, &u, opts, sizeof(opts));
	if ((err = recorder__gpum_open(r, opts, sizeof(opts))))
		goto cleanup;
	r->to_file = !EXT_HOOK(r, create_sink);
	err = !r->to_file ? o->ext->create_sink(o->ext->ctx, &info, &r->w, r->path, sizeof(r->path)) :
			    record_output__create(o, &info, r->path, sizeof(r->path), &r->w);
	if (err) {
		trace_writer__free(r->w);
		r->w = NULL;
		goto cleanup;
	}
	/* the trace's first clock pair: what aligns it with other hosts' */
	recorder__clock(r, GT_CLOCK_START);
	if (EXT_HOOK(r, start) && (err = o->ext->start(o->ext->ctx)))
		goto cleanup;
	if ((err = recorder__cupti_start(r)))
		goto cleanup;
	if ((err = recorder__gpum_start(r)))
		goto cleanup;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.rb), recorder__on_event, r, NULL);
	if (!r->rb) {
		err = -errno;
		pr_err("failed to create the ring buffer consumer: %s", strerror(-err));
		goto cleanup;
	}
	if (o->npids && !(r->watch = pid_watch__new())) {
		err = -ENOMEM;
		pr_err("failed to allocate the recorder: %s", strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < o->npids; i++) {
		uint32_t pid = o->pids[i];

		bpf_map__update_elem(r->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY);
		/* one gone already leaves the others to record */
		err = pid_watch__add(r->watch, pid);
		if (err && err != -ESRCH) {
			pr_err("failed to watch pid %d: %s", pid, strerror(-err));
			goto cleanup;
		}
		err = 0;
	}
	if (o->cmd && !r->child && (err = recorder__start_child(r)))
		goto cleanup;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->trace_cuda && !o->trace_ioctl && !o->trace_sched)
		pr_info("recording to %s (--trace none: the GPU side only, from the CUPTI agent); Ctrl-C "
			"to stop", r->path);
	else if (o->trace_cuda && !cuda_probes__nfiles(r->probes))
		pr_info("recording to %s (libcuda: traced once %s loads one%s%s); Ctrl-C to stop", r->path,
			o->cmd ? o->cmd[0] : "a process", !o->all ? "" : r->cgroup ?
			", the processes of cgroup " : ", all processes", r->cgroup ? r->cgroup->path : "");
	else
		pr_info("recording to %s (%zu libcuda file%s, %zu probes%s%s); Ctrl-C to stop", r->path,
			cuda_probes__nfiles(r->probes), cuda_probes__nfiles(r->probes) == 1 ? "" : "s",
			cuda_probes__nprobes(r->probes),
			!o->all ? "" : r->cgroup ? ", the processes of cgroup " : ", all processes",
			r->cgroup ? r->cgroup->path : "");
	pr_verbose("uprobes: %s; openat discovery probe: %s; options: %s",
		   r->multi ? "uprobe_multi links" : "one perf-event link per probe", r->open_probe, opts);
	hold__enable(r->hold, now_ns(CLOCK_MONOTONIC));
	if (r->child && !r->released && (err = child__release(r->child)))
		pr_warn("failed to start %s: %s", o->cmd[0], strerror(-err));
	recorded = true;
	err = recorder__run_loop(r);
	recorder__gpum_finish(r);
	EXT_CALL(r, stopped);
	if (r->child && !recorder__child_done(r) && r->untraced_stop)
		recorder__wait_child_untraced(r);
	else if (r->child && !recorder__child_done(r))
		recorder__wait_child(r);
	/* what the agents hold goes into the trace before it is finished */
	gpu_side = recorder__cupti_finish(r);
	finished = !finish(r);
	if (!finished || err)
		status = 1;
	else
		status = r->child ? child__status(r->child) : 0;
	/* a command that used no CUDA: said, and its own status (it ran as
	 * it would have untraced) */
	if (o->cmd && o->trace_cuda && !cuda_probes__nfiles(r->probes))
		pr_warn("%s never loaded a libcuda (none in the usual driver locations either): "
			"no CUDA calls recorded; pass --libcuda PATH if it uses one", o->cmd[0]);
	else if (o->cmd && o->trace_cuda && !r->cuda_calls && finished && !err &&
		 o->capture_range == RECORD_RANGE_NONE && !o->light)
		pr_warn("%s made no CUDA call: %s holds none", o->cmd[0], r->to_file ? r->path : "the trace");
cleanup:
	child__free(r->child);	/* never released: it exits without running CMD */
	ring_buffer__free(r->rb);
	cuda_probes__free(r->probes);
	nccl_probes__free(r->nccl);
	gpu_metrics__free(r->gpum);
	kernel_sources__free(r->ks);
	pid_watch__free(r->watch);
	kernel_names__free(r->names);
	ustacks__free(r->stacks);
	pyconf__free(r->py);
	/* no process is left held, none held from here on */
	hold__free(r->hold);
	cuda_bpf__destroy(r->skel);
	trace_writer__free(r->w);
	EXT_CALL(r, close);
	if (o->written && r->to_file && finished && strlen(r->path) < PATH_MAX)
		memcpy(o->written, r->path, strlen(r->path) + 1);
	if (cupti_session__dir(r->cupti) && r->to_file && finished) {
		if (gpu_side && (*spools = calloc(1, sizeof(**spools))))
			memcpy((*spools)->trace, r->path, sizeof((*spools)->trace));
		else if (gpu_side)
			pr_err("failed to merge %s: %s; gtrace-bpf merge %s does it", r->path,
			       strerror(ENOMEM), r->path);
		if ((!gpu_side || !*spools) && !o->cupti_optional && status == 0)
			status = 1;
	} else if (cupti_session__dir(r->cupti) && r->to_file && recorded) {
		pr_warn("the trace %s holds the GPU records read so far: gtrace-bpf merge %s links them",
			r->path, r->path);
	}
	recorder__cupti_end(r);
	cupti_session__free(r->cupti);
	proc_names__free(r->procs);
	return err && status == 1 ? 1 : status;
}
