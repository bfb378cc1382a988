// SPDX-License-Identifier: MIT
/*
 * The recorder: open -> configure -> load -> attach -> poll -> one cleanup.
 * Records arrive from one BPF ring buffer submitted without wake-ups; this
 * loop polls on a short timeout and drains it, adds what only userspace can
 * learn (process, thread and recovered kernel names) and appends everything
 * to the trace file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "cuda_probes.h"
#include "kernel_names.h"
#include "kernel_sources.h"
#include "nv_ioctl.h"
#include "libcuda_finder.h"
#include "log.h"
#include "merge.h"
#include "record.h"
#include "trace_file.h"
#include "u64map.h"

#define POLL_MS		50	/* consumer latency bound with no wake-ups */
#define TICK_NS		1000000000ull	/* stats, flush, status line */
#define RESCAN_NS	10000000000ull	/* full /proc rescan in --all mode */
#define SCAN_QUEUE	1024

/* GTRACE_CUPTI_RUN_DIR (cupti/gtrace_cupti.h): where a running --all or -p
 * recorder lets programs started with the CUPTI agent join. */
#define CUPTI_RUN_DIR		GTRACE_CUPTI_RUN_DIR
#define CUPTI_AGENT		"libgtrace-cupti.so"
#define CUPTI_WAIT_NS		2000000000ull	/* agents get this long to flush after "stop" */
#define CUPTI_QUIET_NS		1000000000ull	/* ... or until no spool grew for this long */

struct recorder {
	const struct record_opts *o;
	struct cuda_bpf *skel;
	struct ring_buffer *rb;
	struct cuda_probes *probes;
	struct kernel_names *names;
	struct trace_writer *w;
	char path[PATH_MAX];
	bool filter;			/* only pids in the BPF pids map */
	struct u64map cuda_pids;	/* pid+1 -> 1: processes that made CUDA calls */
	struct u64map seen_tids;	/* tid+1 -> pid+1: thread names written */
	struct u64map cmdlines;		/* pid+1 -> char *: command line read at its exec */
	pid_t scan_queue[SCAN_QUEUE];	/* exec'd processes to look at */
	size_t nscan;
	int write_err;			/* first write error, stops the recording */
	uint64_t nprocs;		/* processes seen making CUDA calls */
	uint64_t bad_records;		/* malformed ring-buffer records */
	uint64_t last_drops;
	pid_t child;			/* -- CMD, 0 = none */
	int child_status;
	bool child_done;
	const char *open_probe;		/* which openat probe runs */
	bool multi;			/* uprobe_multi links (else one link per probe) */
	struct kernel_sources *ks;	/* ioctl and scheduler recording */
	uint32_t majors[8];		/* device majors whose ioctls are recorded */
	size_t nmajors;
	uint32_t frontend_major;	/* NVIDIA frontend (RM escapes decoded) */
	struct nv_majors nv;		/* NVIDIA's majors, for naming devices later */
	char cupti_lib[PATH_MAX];	/* --cupti: the agent library, absolute */
	char cupti_dir[PATH_MAX];	/* the agents' spool directory, "" while none */
	int cupti_dir_fd;		/* CUPTI_RUN_DIR, locked against a second recorder; -1 */
	char **cupti_old;		/* spool files in CUPTI_RUN_DIR before we started */
	size_t ncupti_old;
	uint64_t cupti_stop_ts;		/* when "stop" was created, 0 = not yet */
};

static volatile sig_atomic_t stop_requests;

static void on_signal(int sig)
{
	(void)sig;
	stop_requests++;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int write_rec(struct recorder *r, const struct gt_hdr *h)
{
	int err;

	if (r->write_err)
		return r->write_err;
	err = trace_writer__append(r->w, h);
	if (err) {
		r->write_err = err;
		pr_err("failed to write %s: %s; the file keeps everything up to its last complete chunk",
		       r->path, strerror(-err));
	}
	return err;
}

static int emit_name_rec(void *ctx, const struct gt_hdr *h)
{
	return write_rec(ctx, h);
}

static int write_name(struct recorder *r, const struct gt_hdr *src, uint16_t kind, uint64_t key,
		      const char *s)
{
	struct {
		struct gt_name n;
		char str[1024];
	} rec;
	size_t len = strnlen(s, sizeof(rec.str) - 1) + 1;

	memset(&rec, 0, sizeof(rec));
	rec.n.hdr.ts = src->ts;
	rec.n.hdr.pid = src->pid;
	rec.n.hdr.tid = src->tid;
	rec.n.hdr.type = GT_REC_NAME;
	rec.n.hdr.size = GT_REC_ALIGN(sizeof(rec.n) + len);
	rec.n.key = key;
	rec.n.kind = kind;
	rec.n.len = len;
	memcpy(rec.str, s, len - 1);
	return write_rec(r, &rec.n.hdr);
}

/* Reads a small /proc file; NULs (cmdline separators) become spaces. */
static void read_proc(const char *path, char *buf, size_t len)
{
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	while (n > 0 && (buf[n - 1] == 0 || buf[n - 1] == '\n'))
		n--;
	buf[n] = 0;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == 0)
			buf[i] = ' ';
	}
}

/* cgroup v2 id of a process: the inode of its cgroup directory. */
static uint64_t proc_cgroup(uint32_t pid)
{
	char p[64], line[1024], dir[1200];
	uint64_t id = 0;
	struct stat st;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%u/cgroup", pid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		if (strncmp(line, "0::", 3))
			continue;
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", line + 3);
		if (!stat(dir, &st))
			id = st.st_ino;
	}
	fclose(f);
	return id;
}

/* What an exec record would have said, for a process first seen now
 * (started before the recorder): parent, comm, cgroup. */
static void write_proc_info(struct recorder *r, const struct gt_hdr *h)
{
	struct gt_proc_evt e;
	char p[64], buf[512], *rp;

	memset(&e, 0, sizeof(e));
	e.hdr.ts = h->ts;
	e.hdr.pid = h->pid;
	e.hdr.tid = h->pid;
	e.hdr.type = GT_REC_PROC_INFO;
	e.hdr.size = sizeof(e);
	snprintf(p, sizeof(p), "/proc/%u/stat", h->pid);
	read_proc(p, buf, sizeof(buf));
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	rp = strrchr(buf, ')');
	if (rp)
		sscanf(rp + 1, " %*c %u", &e.ppid);
	snprintf(p, sizeof(p), "/proc/%u/comm", h->pid);
	read_proc(p, buf, sizeof(buf));
	memcpy(e.comm, buf, strnlen(buf, sizeof(e.comm) - 1));
	e.cgroup = proc_cgroup(h->pid);
	write_rec(r, &e.hdr);
}

static bool relevant(struct recorder *r, uint32_t pid)
{
	return r->filter || u64map__get(&r->cuda_pids, (uint64_t)pid + 1);
}

/* The command line BPF read at an exec (arguments NUL-separated): joined,
 * kept for the process' first CUDA record, and written now if the process is
 * traced already. After the exec record, so it names the new program. */
static int on_exec_cmdline(struct recorder *r, const struct gt_name *nm)
{
	uint64_t *old = u64map__get(&r->cmdlines, (uint64_t)nm->hdr.pid + 1);
	size_t n = nm->len, i;
	char *s;

	if (!n || sizeof(*nm) + n > nm->hdr.size)
		return 0;
	/* not strndup: the arguments are separated by NULs */
	s = malloc(n + 1);
	if (!s)
		return 0;
	memcpy(s, nm->str, n);
	s[n] = 0;
	for (i = 0; i < n; i++) {
		if (!s[i])
			s[i] = ' ';
	}
	while (i > 0 && (s[i - 1] == ' ' || !s[i - 1]))
		s[--i] = 0;
	if (old)
		free((char *)(uintptr_t)*old);
	if (u64map__set(&r->cmdlines, (uint64_t)nm->hdr.pid + 1, (uint64_t)(uintptr_t)s)) {
		free(s);
		return 0;
	}
	if (!s[0] || !relevant(r, nm->hdr.pid))
		return 0;
	return write_name(r, &nm->hdr, GT_NAME_PROCESS, nm->hdr.pid, s);
}

static void forget_cmdline(struct recorder *r, uint32_t pid)
{
	uint64_t *v = u64map__get(&r->cmdlines, (uint64_t)pid + 1);

	if (v && *v) {
		free((char *)(uintptr_t)*v);
		*v = 0;
	}
}

/* First record of a process or thread: write its name before it. */
static void note_process(struct recorder *r, const struct gt_hdr *h)
{
	char path[64], buf[1024];
	uint64_t *cached;

	if (!u64map__get(&r->cuda_pids, (uint64_t)h->pid + 1)) {
		uint8_t one = 1;

		u64map__set(&r->cuda_pids, (uint64_t)h->pid + 1, 1);
		r->nprocs++;
		/* its threads' scheduling is recorded from now on */
		bpf_map__update_elem(r->skel->maps.active_pids, &h->pid, sizeof(h->pid), &one,
				     sizeof(one), BPF_ANY);
		write_proc_info(r, h);
		cached = u64map__get(&r->cmdlines, (uint64_t)h->pid + 1);
		snprintf(path, sizeof(path), "/proc/%u/cmdline", h->pid);
		if (cached && *cached)
			snprintf(buf, sizeof(buf), "%s", (const char *)(uintptr_t)*cached);
		else
			read_proc(path, buf, sizeof(buf));
		if (!buf[0]) {
			snprintf(path, sizeof(path), "/proc/%u/comm", h->pid);
			read_proc(path, buf, sizeof(buf));
		}
		if (buf[0])
			write_name(r, h, GT_NAME_PROCESS, h->pid, buf);
	}
	if (h->tid && !u64map__get(&r->seen_tids, (uint64_t)h->tid + 1)) {
		u64map__set(&r->seen_tids, (uint64_t)h->tid + 1, (uint64_t)h->pid + 1);
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", h->pid, h->tid);
		read_proc(path, buf, sizeof(buf));
		if (buf[0])
			write_name(r, h, GT_NAME_THREAD, h->tid, buf);
	}
}

static int attach_found(void *ctx, const char *path, const char *label)
{
	struct recorder *r = ctx;
	int n = cuda_probes__attach_file(r->probes, path, label);

	if (n > 0)
		pr_verbose("tracing %s (%d probes)", label, n);
	else if (n < 0 && n != -ENOEXEC)
		pr_warn("failed to attach to %s: %s", label, strerror(-n));
	return n;
}


static int on_event(void *ctx, void *data, size_t len)
{
	struct recorder *r = ctx;
	const struct gt_hdr *h = data;
	int err;

	if (len < sizeof(*h) || h->size < sizeof(*h) || h->size > len || h->size % 8) {
		r->bad_records++;
		return 0;
	}
	switch (h->type) {
	case GT_REC_LIBOPEN: {
		const struct gt_path *p = data;

		if (p->len && sizeof(*p) + p->len <= h->size && !p->path[p->len - 1])
			libcuda_finder__on_open(h->pid, p->path, attach_found, r);
		return 0;
	}
	case GT_REC_EXEC:
		if (r->nscan < SCAN_QUEUE)
			r->scan_queue[r->nscan++] = h->pid;
		if (!relevant(r, h->pid))
			return 0;
		break;
	case GT_REC_FORK:
		if (!relevant(r, ((const struct gt_proc_evt *)data)->ppid))
			return 0;
		break;
	case GT_REC_EXIT:
		forget_cmdline(r, h->pid);
		if (!relevant(r, h->pid))
			return 0;
		kernel_names__on_record(r->names, h);
		break;
	case GT_REC_NAME:
		if (((const struct gt_name *)data)->kind == GT_NAME_PROCESS)
			return on_exec_cmdline(r, data);
		/* raw driver name from BPF: kernel_names writes the checked one */
		return kernel_names__on_record(r->names, h);
	default:
		note_process(r, h);
		err = kernel_names__on_record(r->names, h);
		if (err)
			return err;
		break;
	}
	return write_rec(r, h);
}

static void collect_counters(struct recorder *r, struct gt_counters *c)
{
	struct cuda_bpf__bss *b = r->skel->bss;

	memset(c, 0, sizeof(*c));
	c->events = __atomic_load_n(&b->n_events, __ATOMIC_RELAXED);
	c->drop_ringbuf = __atomic_load_n(&b->n_drop_ringbuf, __ATOMIC_RELAXED);
	c->drop_stash = __atomic_load_n(&b->n_drop_stash, __ATOMIC_RELAXED);
	c->str_fault = __atomic_load_n(&b->n_str_fault, __ATOMIC_RELAXED);
	c->args_fault = __atomic_load_n(&b->n_args_fault, __ATOMIC_RELAXED);
	kernel_names__counters(r->names, c);
	c->attach_files = cuda_probes__nfiles(r->probes);
	c->attach_probes = cuda_probes__nprobes(r->probes);
	c->attach_failed = cuda_probes__nfailed(r->probes);
	c->records_written = trace_writer__records(r->w);
	kernel_sources__counters(r->ks, c);
}

static void write_stats(struct recorder *r, struct gt_counters *c)
{
	struct gt_stats s;

	memset(&s, 0, sizeof(s));
	collect_counters(r, c);
	s.hdr.ts = now_ns(CLOCK_MONOTONIC);
	s.hdr.pid = getpid();
	s.hdr.type = GT_REC_STATS;
	s.hdr.size = sizeof(s);
	s.c = *c;
	write_rec(r, &s.hdr);
}

/* Once a second: counters into the file, a chunk to disk, drops on stderr. */
static void tick(struct recorder *r, uint64_t start, uint64_t *last_events, bool tty)
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
		if (tty && !r->o->quiet)
			fputs("\r\033[K", stderr);
		pr_warn("%llu events lost: ring buffer full (%llu in all); raise --buffer-size",
			(unsigned long long)(c.drop_ringbuf - r->last_drops),
			(unsigned long long)c.drop_ringbuf);
		r->last_drops = c.drop_ringbuf;
	}
	if (tty && !r->o->quiet) {
		fprintf(stderr, "\r\033[Kgtrace-bpf: %llus  %llu events  %llu/s  %llu dropped  %llu processes",
			(unsigned long long)(el / 1000000000ull), (unsigned long long)c.events,
			(unsigned long long)(c.events - *last_events),
			(unsigned long long)c.drop_ringbuf, (unsigned long long)r->nprocs);
		fflush(stderr);
	}
	*last_events = c.events;
}

static void sanitize(char *s)
{
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			*s = '_';
	}
}

static int open_output(struct recorder *r, const struct gt_file_info *info)
{
	struct trace_writer_opts wo = { .force = r->o->force };
	char name[128] = "system", date[16], comm[64];
	time_t t = time(NULL);
	struct tm tm;
	int err, v;

	if (r->o->output) {
		snprintf(r->path, sizeof(r->path), "%s", r->o->output);
		err = trace_writer__create(r->path, info, &wo, &r->w);
		if (err == -EEXIST)
			pr_err("%s exists: use --force to replace it", r->path);
		else if (err)
			pr_err("cannot create %s: %s", r->path, strerror(-err));
		return err;
	}
	if (r->o->cmd) {
		const char *b = strrchr(r->o->cmd[0], '/');

		snprintf(name, sizeof(name), "%s", b ? b + 1 : r->o->cmd[0]);
	} else if (r->o->npids) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/comm", r->o->pids[0]);
		read_proc(p, comm, sizeof(comm));
		if (comm[0])
			snprintf(name, sizeof(name), "%s", comm);
	}
	sanitize(name);
	localtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	for (v = 1; v < 100000; v++) {
		char scen[64];

		snprintf(scen, sizeof(scen), "%s", r->o->scenario ? r->o->scenario : "trace");
		sanitize(scen);
		snprintf(r->path, sizeof(r->path), "%s_%s_%s_v%d.gtrace", name, scen, date, v);
		wo.force = false;
		err = trace_writer__create(r->path, info, &wo, &r->w);
		if (err != -EEXIST)
			break;
	}
	if (err)
		pr_err("cannot create %s: %s", r->path, strerror(-err));
	return err;
}

/* The openat tracepoint needs tracefs; mount it where the kernel has it
 * but nobody mounted it (seen on the GPU machine). */
static bool have_openat_tracepoint(void)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/syscalls/sys_enter_openat/id",
		"/sys/kernel/debug/tracing/events/syscalls/sys_enter_openat/id",
	};

	if (!access(ids[0], R_OK) || !access(ids[1], R_OK))
		return true;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		pr_verbose("mounted tracefs at /sys/kernel/tracing");
	return !access(ids[0], R_OK);
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

static int start_child(struct recorder *r, int *go_fd)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		char c;

		close(pfd[1]);
		/* wait until the probes are in place; EOF means the recorder gave up */
		if (read(pfd[0], &c, 1) != 1)
			_exit(127);
		/* the agent's environment goes to CMD (and what it starts) only */
		if (r->cupti_dir[0] &&
		    (setenv("CUDA_INJECTION64_PATH", r->cupti_lib, 1) ||
		     setenv(GT_CUPTI_ENV_DIR, r->cupti_dir, 1) ||
		     /* the agent hands NVTX to CUPTI only while a recording wants
		      * the process: cheaper than naming libcupti itself */
		     setenv("NVTX_INJECTION64_PATH", r->cupti_lib, 1))) {
			fprintf(stderr, "gtrace-bpf: cannot set the CUPTI agent's environment: %s\n",
				strerror(errno));
			_exit(127);
		}
		execvp(r->o->cmd[0], r->o->cmd);
		fprintf(stderr, "gtrace-bpf: cannot run %s: %s\n", r->o->cmd[0], strerror(errno));
		_exit(127);
	}
	close(pfd[0]);
	*go_fd = pfd[1];
	r->child = pid;
	return 0;
}

static int load_bpf_once(struct recorder *r, bool multi, bool tp);

/* The ladder: uprobe_multi links (one per program, cheap to detach) where the
 * kernel has them (6.6+), else one perf-event uprobe per probe point. */
static int load_bpf(struct recorder *r)
{
	bool tp = have_openat_tracepoint();
	int err;

	err = load_bpf_once(r, true, tp);
	if (err && err != -EPERM && err != -EACCES) {
		pr_verbose("uprobe_multi programs did not load (%s): using one link per probe",
			   strerror(-err));
		cuda_bpf__destroy(r->skel);
		r->skel = NULL;
		err = load_bpf_once(r, false, tp);
	}
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_err("failed to load BPF programs: %s: run as root (or with CAP_BPF and CAP_PERFMON)",
			       strerror(-err));
		else
			pr_err("failed to load BPF programs: %s (run with -vv for the verifier log)",
			       strerror(-err));
	}
	return err;
}

static int load_bpf_once(struct recorder *r, bool multi, bool tp)
{
	uint64_t size = round_pow2(r->o->buffer_size);
	int err;

	r->multi = multi;
	r->skel = cuda_bpf__open();
	if (!r->skel) {
		err = -errno;
		pr_err("failed to open BPF object: %s", strerror(-err));
		return err;
	}
	r->skel->rodata->filter_pids = r->filter;
	r->skel->rodata->wakeup_bytes = size / 8;
	r->skel->rodata->self_pid = getpid();
	err = bpf_map__set_max_entries(r->skel->maps.rb, size);
	if (err) {
		pr_err("failed to size the ring buffer to %llu bytes: %s", (unsigned long long)size,
		       strerror(-err));
		return err;
	}
	bpf_program__set_autoload(tp ? r->skel->progs.open_raw : r->skel->progs.open_tp, false);
	r->open_probe = tp ? "tracepoint" : "raw_tp";
	cuda_probes__prepare_multi(r->skel, multi);
	return cuda_bpf__load(r->skel);
}

/* Attaches a program, keeping its link in the skeleton, which destroys it. */
static int attach_into(struct bpf_program *prog, struct bpf_link **slot)
{
	*slot = bpf_program__attach(prog);
	return *slot ? 0 : -errno;
}

static int attach_static(struct recorder *r)
{
	struct cuda_bpf *s = r->skel;
	bool tp = !strcmp(r->open_probe, "tracepoint");
	int err;

	if ((err = attach_into(s->progs.proc_exec, &s->links.proc_exec)) ||
	    (err = attach_into(s->progs.proc_fork, &s->links.proc_fork)) ||
	    (err = attach_into(s->progs.proc_exit, &s->links.proc_exit))) {
		pr_err("failed to attach the process lifecycle probes: %s", strerror(-err));
		return err;
	}
	/* discovery of libcuda copies opened later; a rescan covers its absence */
	err = tp ? attach_into(s->progs.open_tp, &s->links.open_tp) :
		   attach_into(s->progs.open_raw, &s->links.open_raw);
	if (err) {
		pr_warn("failed to attach the openat probe (%s): %s; new libcuda copies are found by "
			"rescanning only", r->open_probe, strerror(-err));
		r->open_probe = "none";
	}
	return 0;
}

static int attach_libcuda(struct recorder *r)
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
	}
	libcuda_finder__scan_default(attach_found, r);
	if (r->o->all) {
		libcuda_finder__scan_all(attach_found, r);
	} else {
		for (i = 0; i < r->o->npids; i++)
			libcuda_finder__scan_pid(r->o->pids[i], attach_found, r);
	}
	if (!cuda_probes__nfiles(r->probes)) {
		pr_err("no libcuda found (looked in the usual driver locations%s); pass --libcuda PATH",
		       r->o->all ? " and every process' mappings" : "");
		return -ENOENT;
	}
	return 0;
}

static void fill_info(struct recorder *r, struct gt_file_info *info, struct utsname *u, char *opts,
		      size_t len)
{
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);

	(void)r;
	uname(u);
	memset(info, 0, sizeof(*info));
	info->version = GT_FILE_VERSION;
	info->clock_id = CLOCK_MONOTONIC;
	info->realtime_offset_ns = (int64_t)(real - mono);
	info->start_ts = mono;
	info->host = u->nodename;
	info->kernel = u->release;
	info->cmdline = r->o->cmdline ? r->o->cmdline : "";
	char majors[96] = "";
	size_t i, n = 0;

	for (i = 0; i < r->nmajors; i++)
		n += snprintf(majors + n, sizeof(majors) - n, "%s%u", i ? "," : "", r->majors[i]);
	snprintf(opts, len,
		 "mode=%s trace=%s%s%s buffer_size=%llu duration=%g scenario=%s launch_exit=%d "
		 "uprobes=%s ioctl_rung=%s ioctl_majors=%s nv_majors=%u,%u,%u,%u,%u%s",
		 r->o->all ? "all" : r->o->cmd ? "command" : "pids",
		 r->o->trace_cuda ? "cuda," : "", r->o->trace_ioctl ? "ioctl," : "",
		 r->o->trace_sched ? "sched" : "",
		 (unsigned long long)round_pow2(r->o->buffer_size), r->o->duration,
		 r->o->scenario ? r->o->scenario : "trace", !r->o->no_launch_exit,
		 r->multi ? "multi" : "single",
		 ioctl_ladder__rung_name(kernel_sources__rung(r->ks)), majors[0] ? majors : "none",
		 r->nv.frontend, r->nv.uvm, r->nv.modeset, r->nv.caps, r->nv.caps_imex,
		 r->o->cupti ? " cupti=1" : "");
	info->options = opts;
}

/* Which device majors' ioctls to record: --ioctl-majors, else NVIDIA's
 * from /proc/devices (they are allocated dynamically). */
static int choose_majors(struct recorder *r)
{
	struct nv_majors m = {0};
	FILE *f;
	int n;

	if (r->o->ioctl_majors) {
		n = nv_majors__from_list(r->o->ioctl_majors, r->majors, 8);
		if (n < 0) {
			pr_err("invalid --ioctl-majors '%s' (a comma-separated list of numbers)",
			       r->o->ioctl_majors);
			return n;
		}
		r->nmajors = n;
	}
	f = fopen("/proc/devices", "re");
	if (f) {
		nv_majors__parse(f, &m);
		fclose(f);
	}
	r->frontend_major = m.frontend;
	r->nv = m;
	if (!r->o->ioctl_majors) {
		uint32_t all[] = { m.frontend, m.uvm, m.modeset, m.caps, m.caps_imex };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			if (all[i])
				r->majors[r->nmajors++] = all[i];
		}
		if (!r->nmajors)
			pr_verbose("no NVIDIA character devices in /proc/devices: no ioctls to record");
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
		.wakeup_bytes = r->skel->rodata->wakeup_bytes,
		.self_pid = getpid(),
		.rb_fd = bpf_map__fd(r->skel->maps.rb),
		.pids_fd = bpf_map__fd(r->skel->maps.pids),
		.active_fd = bpf_map__fd(r->skel->maps.active_pids),
	};

	if (!ko.ioctl && !ko.sched)
		return 0;
	return kernel_sources__start(&ko, &r->ks);
}

static void rescan(struct recorder *r, bool all)
{
	size_t i;

	if (all) {
		libcuda_finder__scan_all(attach_found, r);
	} else {
		for (i = 0; i < r->nscan; i++)
			libcuda_finder__scan_pid(r->scan_queue[i], attach_found, r);
	}
	r->nscan = 0;
}

static void poll_child(struct recorder *r)
{
	int st;

	if (!r->child || r->child_done)
		return;
	if (waitpid(r->child, &st, WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
}

static int run_loop(struct recorder *r)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC), next_tick = start + TICK_NS;
	uint64_t next_rescan = start + RESCAN_NS, last_events = 0;
	uint64_t end = r->o->duration > 0 ? start + (uint64_t)(r->o->duration * 1e9) : 0;
	bool tty = isatty(STDERR_FILENO);
	int err;

	while (!stop_requests && !r->write_err) {
		err = ring_buffer__poll(r->rb, POLL_MS);
		if (err < 0 && err != -EINTR) {
			pr_err("failed to poll the ring buffer: %s", strerror(-err));
			return err;
		}
		ring_buffer__consume(r->rb);
		poll_child(r);
		if (r->child_done)
			break;
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (end && now >= end)
			break;
		if (now >= next_tick) {
			rescan(r, r->o->all && now >= next_rescan);
			if (now >= next_rescan)
				next_rescan = now + RESCAN_NS;
			tick(r, start, &last_events, tty);
			next_tick += TICK_NS;
			if (next_tick < now)
				next_tick = now + TICK_NS;
		}
	}
	/* what the BPF side submitted before we stopped is still ours */
	ring_buffer__consume(r->rb);
	if (tty && !r->o->quiet)
		fputs("\r\033[K", stderr);
	return 0;
}

static int finish(struct recorder *r)
{
	struct gt_trailer t;
	struct gt_counters c;
	int err;

	memset(&t, 0, sizeof(t));
	if (!r->write_err)
		write_stats(r, &c);
	collect_counters(r, &c);
	t.end_ts = now_ns(CLOCK_MONOTONIC);
	t.counters = c;
	t.records = trace_writer__records(r->w);
	err = r->write_err ? r->write_err : trace_writer__finish(r->w, &t);
	if (err) {
		if (!r->write_err)
			pr_err("failed to finish %s: %s", r->path, strerror(-err));
		return err;
	}
	pr_info("wrote %s: %llu records, %.1f MiB, %llu events dropped, %llu processes",
		r->path, (unsigned long long)trace_writer__records(r->w),
		trace_writer__bytes(r->w) / 1048576.0, (unsigned long long)c.drop_ringbuf,
		(unsigned long long)r->nprocs);
	if (c.drop_ringbuf)
		pr_warn("%llu events were lost to a full ring buffer; raise --buffer-size",
			(unsigned long long)c.drop_ringbuf);
	if (c.drop_stash)
		pr_warn("%llu call results lost (too many calls in flight)",
			(unsigned long long)c.drop_stash);
	if (r->bad_records)
		pr_warn("%llu malformed records skipped", (unsigned long long)r->bad_records);
	return 0;
}

/* ------------------------------------------------------------ CUPTI agent */

static bool regular_file(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return false;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return false;
	}
	return !access(path, R_OK);
}

/* The agent library: --cupti-lib, else next to our own binary: the same
 * directory, ../lib/gtrace-bpf (installed), .output (the build tree).
 * CUDA_INJECTION64_PATH wants an absolute path. */
static int cupti_find_agent(struct recorder *r)
{
	static const char *const rel[] = {
		"/" CUPTI_AGENT, "/../lib/gtrace-bpf/" CUPTI_AGENT, "/.output/" CUPTI_AGENT,
	};
	char exe[PATH_MAX], cand[PATH_MAX + 64], *slash;
	ssize_t n;
	size_t i;

	if (r->o->cupti_lib) {
		if (!regular_file(r->o->cupti_lib) || !realpath(r->o->cupti_lib, r->cupti_lib)) {
			pr_err("cannot use the CUPTI agent library %s: %s", r->o->cupti_lib,
			       errno == EINVAL ? "not a regular file" : strerror(errno));
			return -ENOENT;
		}
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		pr_err("failed to find the CUPTI agent library: /proc/self/exe: %s; pass --cupti-lib PATH",
		       n ? strerror(errno) : "empty");
		return -ENOENT;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
		if (regular_file(cand) && realpath(cand, r->cupti_lib))
			return 0;
	}
	pr_err("the CUPTI agent library %s is not in %s, %s/../lib/gtrace-bpf or %s/.output: "
	       "build it (make) or pass --cupti-lib PATH", CUPTI_AGENT, exe, exe, exe);
	return -ENOENT;
}

static bool spool_name(const char *name)
{
	size_t n = strlen(name), sl = strlen(GT_CUPTI_SPOOL_SUFFIX);

	return n > sl && !strcmp(name + n - sl, GT_CUPTI_SPOOL_SUFFIX);
}

/* The process a spool file belongs to, from its name; 0 if it does not say. */
static pid_t spool_pid(const char *name)
{
	size_t pl = strlen(GT_CUPTI_SPOOL_PREFIX);
	unsigned long v;
	char *end;

	if (strncmp(name, GT_CUPTI_SPOOL_PREFIX, pl))
		return 0;
	errno = 0;
	v = strtoul(name + pl, &end, 10);
	if (errno || end == name + pl || strcmp(end, GT_CUPTI_SPOOL_SUFFIX) || !v || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

static bool cupti_old_spool(const struct recorder *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->ncupti_old; i++) {
		if (!strcmp(r->cupti_old[i], name))
			return true;
	}
	return false;
}

/* -- CMD: a private directory for its agents, named in its environment.
 * --all, -p: CUPTI_RUN_DIR, where agents of programs started with
 * CUDA_INJECTION64_PATH find us; root's only (0700), locked so that a
 * second recorder does not take the first one's spool files. */
static int cupti_open_dir(struct recorder *r)
{
	const char *tmp = getenv("TMPDIR");
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err;

	if (r->o->cmd) {
		snprintf(r->cupti_dir, sizeof(r->cupti_dir), "%s/gtrace-cupti.XXXXXX",
			 tmp && tmp[0] == '/' ? tmp : "/tmp");
		if (!mkdtemp(r->cupti_dir)) {
			err = -errno;
			pr_err("failed to create a spool directory for the CUPTI agent (%s): %s",
			       r->cupti_dir, strerror(-err));
			r->cupti_dir[0] = 0;
			return err;
		}
		pr_verbose("CUPTI agent %s (also the NVTX injection), spool directory %s",
			   r->cupti_lib, r->cupti_dir);
		return 0;
	}
	if ((mkdir("/run/gtrace-bpf", 0755) && errno != EEXIST) ||
	    (mkdir(CUPTI_RUN_DIR, 0700) && errno != EEXIST)) {
		err = -errno;
		pr_err("failed to create %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	r->cupti_dir_fd = open(CUPTI_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->cupti_dir_fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	if (fstat(r->cupti_dir_fd, &st)) {
		err = -errno;
		pr_err("cannot open %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	if (st.st_uid != geteuid()) {
		pr_err("%s belongs to uid %u, not to us: remove it", CUPTI_RUN_DIR, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (flock(r->cupti_dir_fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		pr_err("%s is in use%s", CUPTI_RUN_DIR,
		       err == -EWOULDBLOCK ? ": another gtrace-bpf records with --cupti" : "");
		return err;
	}
	if (fchmod(r->cupti_dir_fd, 0700)) {
		err = -errno;
		pr_err("failed to restrict %s to its owner: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	/* a crashed recorder's leftovers: its "stop" would stop the new agents,
	 * its spool files are not this recording's */
	if (unlinkat(r->cupti_dir_fd, GT_CUPTI_STOP_FILE, 0) && errno != ENOENT)
		pr_warn("failed to remove %s/%s: %s", CUPTI_RUN_DIR, GT_CUPTI_STOP_FILE, strerror(errno));
	d = opendir(CUPTI_RUN_DIR);
	while (d && (de = readdir(d))) {
		char **p, *s;

		if (!spool_name(de->d_name))
			continue;
		p = realloc(r->cupti_old, (r->ncupti_old + 1) * sizeof(*p));
		s = p ? strdup(de->d_name) : NULL;
		if (p)
			r->cupti_old = p;
		if (s)
			r->cupti_old[r->ncupti_old++] = s;
	}
	if (d)
		closedir(d);
	if (r->ncupti_old)
		pr_warn("%s holds %zu spool files of an earlier recording: they are left out",
			CUPTI_RUN_DIR, r->ncupti_old);
	snprintf(r->cupti_dir, sizeof(r->cupti_dir), "%s", CUPTI_RUN_DIR);
	pr_verbose("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s",
		   r->cupti_lib, r->cupti_dir);
	return 0;
}

/* Asks the agents to flush and stop. */
static void cupti_stop(struct recorder *r)
{
	char path[PATH_MAX + 16];
	int fd;

	if (!r->cupti_dir[0] || r->cupti_stop_ts)
		return;
	r->cupti_stop_ts = now_ns(CLOCK_MONOTONIC);
	snprintf(path, sizeof(path), "%s/%s", r->cupti_dir, GT_CUPTI_STOP_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		pr_warn("failed to create %s: %s; agents still running may not flush", path,
			strerror(errno));
	else
		close(fd);
}

/* A spool is complete once its process is gone or it ends with the agent's
 * last record (its counters). */
static bool spool_complete(const char *dir, const char *name, off_t *size)
{
	char path[PATH_MAX + 256];
	struct gt_cupti_stats last;
	struct stat st;
	pid_t pid = spool_pid(name);
	bool done = false;
	int fd;

	*size = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return true;
	if (!fstat(fd, &st)) {
		*size = st.st_size;
		done = st.st_size >= (off_t)(GT_CUPTI_MAGIC_LEN + sizeof(last)) &&
		       pread(fd, &last, sizeof(last), st.st_size - sizeof(last)) == sizeof(last) &&
		       last.hdr.type == GT_REC_CUPTI_STATS && last.hdr.size == sizeof(last);
	}
	close(fd);
	return done || (pid > 0 && kill(pid, 0) && errno == ESRCH);
}

/* Waits until every spool is complete, none grew for CUPTI_QUIET_NS, or
 * CUPTI_WAIT_NS passed since "stop". */
static void cupti_wait(struct recorder *r)
{
	uint64_t last_sum = UINT64_MAX, quiet_since = now_ns(CLOCK_MONOTONIC);

	for (;;) {
		uint64_t sum = 0, now;
		bool all_done = true;
		struct dirent *de;
		DIR *d = opendir(r->cupti_dir);

		while (d && (de = readdir(d))) {
			off_t size;

			if (!spool_name(de->d_name) || cupti_old_spool(r, de->d_name))
				continue;
			if (!spool_complete(r->cupti_dir, de->d_name, &size))
				all_done = false;
			sum += size;
		}
		if (d)
			closedir(d);
		now = now_ns(CLOCK_MONOTONIC);
		if (sum != last_sum) {
			last_sum = sum;
			quiet_since = now;
		}
		if (all_done || now - quiet_since >= CUPTI_QUIET_NS ||
		    now - r->cupti_stop_ts >= CUPTI_WAIT_NS) {
			if (!all_done)
				pr_verbose("CUPTI agents still running after stop: merging what they wrote");
			return;
		}
		usleep(50000);
	}
}

/* Empties and removes the spool directory. */
static void cupti_remove_dir(struct recorder *r)
{
	struct dirent *de;
	DIR *d;

	if (!r->cupti_dir[0])
		return;
	d = opendir(r->cupti_dir);
	while (d && (de = readdir(d))) {
		if (de->d_type == DT_DIR)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT)
			pr_warn("failed to remove %s/%s: %s", r->cupti_dir, de->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
	if (rmdir(r->cupti_dir) && errno != ENOENT)
		pr_warn("failed to remove %s: %s", r->cupti_dir, strerror(errno));
	r->cupti_dir[0] = 0;
}

static bool cupti_want_pid(void *ctx, uint32_t pid)
{
	struct recorder *r = ctx;

	return u64map__get(&r->cuda_pids, (uint64_t)pid + 1) != NULL;
}

/* After the recording: the agents' spool files into the trace (written to
 * a temporary file beside it and renamed over it), then the directory goes.
 * When the merge fails the spool files stay, with the command to retry. */
static int cupti_merge(struct recorder *r)
{
	struct merge_opts mo = { .trace = r->path, .output = r->path, .force = true };
	const char **files = NULL;
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;
	int err = 0;

	cupti_stop(r);
	cupti_wait(r);
	if (r->o->cmd) {
		const char *dir = r->cupti_dir;

		mo.spools = &dir;
		mo.nspools = 1;
		err = merge__run(&mo, NULL);
	} else {
		/* the run directory: this recording's spool files, of the processes it traced */
		d = opendir(r->cupti_dir);
		while (!err && d && (de = readdir(d))) {
			char **p, *s;

			if (!spool_name(de->d_name) || cupti_old_spool(r, de->d_name))
				continue;
			p = realloc(names, (n + 1) * sizeof(*p));
			if (p)
				names = p;
			if (!p || asprintf(&s, "%s/%s", r->cupti_dir, de->d_name) < 0) {
				err = -ENOMEM;
				break;
			}
			names[n++] = s;
		}
		if (d)
			closedir(d);
		files = calloc(n ? n : 1, sizeof(*files));
		if (err || !files) {
			err = -ENOMEM;
			pr_err("failed to list %s: %s", r->cupti_dir, strerror(-err));
		} else {
			for (i = 0; i < n; i++)
				files[i] = names[i];
			mo.spools = files;
			mo.nspools = n;
			mo.want_pid = cupti_want_pid;
			mo.want_ctx = r;
			err = merge__run(&mo, NULL);
		}
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		free(files);
	}
	if (err) {
		pr_err("the CUPTI spool files stay in %s: merge them with gtrace-bpf merge %s %s",
		       r->cupti_dir, r->path, r->cupti_dir);
		return err;
	}
	cupti_remove_dir(r);
	return 0;
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
	}
	return 0;
}

int record__run(const struct record_opts *o)
{
	struct recorder rec = { .o = o }, *r = &rec;
	struct cuda_probes_opts po = { .no_launch_exit = o->no_launch_exit };
	struct sigaction sa = { .sa_handler = on_signal };
	struct gt_file_info info;
	struct utsname u;
	char opts[768];
	int err, go_fd = -1, status = 1;
	bool recorded = false, finished = false;
	size_t i;
	uint8_t one = 1;

	r->filter = !o->all;
	r->cupti_dir_fd = -1;
	if (o->cupti) {
		if (cupti_find_agent(r))
			return 1;
	}
	if (check_pids(o))
		return 1;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): gtrace-bpf needs CONFIG_DEBUG_INFO_BTF");
		return 1;
	}
	if (geteuid() != 0)
		pr_verbose("not root: loading needs CAP_BPF and CAP_PERFMON");
	gt_log__setup_libbpf();
	if (choose_majors(r))
		return 1;
	err = load_bpf(r);
	if (err)
		goto cleanup;
	po.multi = r->multi;
	r->probes = cuda_probes__new(r->skel, &po);
	r->names = kernel_names__new(emit_name_rec, kernel_names__read_process, r);
	if (!r->probes || !r->names) {
		err = -ENOMEM;
		pr_err("failed to allocate the recorder: %s", strerror(-err));
		goto cleanup;
	}
	err = attach_static(r);
	if (err)
		goto cleanup;
	if (o->trace_cuda) {
		err = attach_libcuda(r);
		if (err)
			goto cleanup;
	}
	err = start_sources(r);
	if (err)
		goto cleanup;
	if (o->cupti) {
		err = cupti_open_dir(r);
		if (err)
			goto cleanup;
	}
	fill_info(r, &info, &u, opts, sizeof(opts));
	err = open_output(r, &info);
	if (err) {
		r->w = NULL;
		goto cleanup;
	}
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.rb), on_event, r, NULL);
	if (!r->rb) {
		err = -errno;
		pr_err("failed to create the ring buffer consumer: %s", strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < o->npids; i++) {
		uint32_t pid = o->pids[i];

		bpf_map__update_elem(r->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY);
	}
	if (o->cmd) {
		uint32_t pid;

		err = start_child(r, &go_fd);
		if (err) {
			pr_err("failed to start %s: %s", o->cmd[0], strerror(-err));
			goto cleanup;
		}
		pid = r->child;
		err = bpf_map__update_elem(r->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one),
					   BPF_ANY);
		if (err) {
			pr_err("failed to add pid %u to the filter: %s", pid, strerror(-err));
			goto cleanup;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pr_info("recording to %s (%zu libcuda file%s, %zu probes%s); Ctrl-C to stop", r->path,
		cuda_probes__nfiles(r->probes), cuda_probes__nfiles(r->probes) == 1 ? "" : "s",
		cuda_probes__nprobes(r->probes), o->all ? ", all processes" : "");
	pr_verbose("uprobes: %s; openat discovery probe: %s; options: %s",
		   r->multi ? "uprobe_multi links" : "one perf-event link per probe", r->open_probe, opts);
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1)
			pr_warn("failed to start %s: %s", o->cmd[0], strerror(errno));
		close(go_fd);
		go_fd = -1;
	}
	recorded = true;
	err = run_loop(r);
	if (r->child && !r->child_done) {
		pr_info("recording stopped; waiting for %s (pid %d) to exit", o->cmd[0], r->child);
		while (!r->child_done && stop_requests < 2) {
			poll_child(r);
			if (!r->child_done)
				usleep(50000);
		}
	}
	/* the agents flush while the trace is finished */
	cupti_stop(r);
	finished = !finish(r);
	if (!finished || err)
		status = 1;
	else
		status = r->child ? r->child_status : 0;
cleanup:
	if (go_fd >= 0) {
		close(go_fd);	/* the child sees EOF and exits 127 without running CMD */
		waitpid(r->child, NULL, 0);
	}
	ring_buffer__free(r->rb);
	cuda_probes__free(r->probes);
	kernel_sources__free(r->ks);
	kernel_names__free(r->names);
	cuda_bpf__destroy(r->skel);
	trace_writer__free(r->w);
	if (r->cupti_dir[0]) {
		if (finished) {
			if (cupti_merge(r) && status == 0)
				status = 1;
		} else if (recorded) {
			pr_warn("the CUPTI spool files stay in %s (gtrace-bpf merge TRACE %s)",
				r->cupti_dir, r->cupti_dir);
		} else {
			cupti_remove_dir(r);
		}
	}
	if (r->cupti_dir_fd >= 0)
		close(r->cupti_dir_fd);
	for (i = 0; i < r->ncupti_old; i++)
		free(r->cupti_old[i]);
	free(r->cupti_old);
	for (i = 0; i < r->cmdlines.cap; i++) {
		if (r->cmdlines.keys[i])
			free((char *)(uintptr_t)r->cmdlines.vals[i]);
	}
	u64map__free(&r->cmdlines);
	u64map__free(&r->cuda_pids);
	u64map__free(&r->seen_tids);
	return err && status == 1 ? 1 : status;
}
