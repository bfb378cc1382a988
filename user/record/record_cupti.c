// SPDX-License-Identifier: MIT
/*
 * --cupti in a recording (record.c drives it; a stage may read the spools
 * itself: record_ext.reads_cupti): the session (record/cupti_session.h), the spool files
 * followed into the trace as they grow (record/cupti_follow.h), the agents
 * asked to hand over at the end, and what to tell the user when programs
 * ran the agent but their GPU side did not come.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/procs/cgroup_target.h"
#include "record/cupti_follow.h"
#include "record/cupti_session.h"
#include "record/procs/proc_names.h"
#include "record/recorder.h"
#include "record/inject/inject.h"
#include "record/inject/py_remote.h"
#include "lib/clock.h"

static bool wants_pid(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	uint32_t key = (uint32_t)pid;
	uint8_t v;

	if (r->cgroup)
		return cgroup_target__holds_pid(r->cgroup, pid);
	/* -p: those given (also before they go into the BPF filter), and the
	 * processes BPF records, their children included */
	for (size_t i = 0; i < r->o->npids; i++)
		if (r->o->pids[i] == pid)
			return true;
	return !bpf_map__lookup_elem(r->skel->maps.pids, &key, sizeof(key), &v, sizeof(v), 0);
}

/* The user pid runs as: its /proc directory's owner while it runs, else
 * what it was when it made its first CUDA call. */
static bool owner_of(void *ctx, pid_t pid, uid_t *uid)
{
	struct recorder *r = ctx;
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (!stat(proc, &st)) {
		*uid = st.st_uid;
		return true;
	}
	for (size_t i = r->ncupti_pids; i-- > 0;)
		if (r->cupti_pids[i].pid == (uint32_t)pid) {
			*uid = r->cupti_pids[i].uid;
			return r->cupti_pids[i].uid != (uid_t)-1;
		}
	return false;
}

void recorder__cupti_follow_opts(struct recorder *r, struct cupti_follow_opts *fo)
{
	fo->session = r->cupti;
	fo->wants = recorder__cupti_wants(r);
	fo->owner = owner_of;
	fo->ctx = r;
}

bool (*recorder__cupti_wants(const struct recorder *r))(void *, pid_t)
{
	/* --all: every process; -p, --cgroup: those traced; -- CMD: its
	 * private directory holds nothing else */
	if (r->o->cmd || (r->o->all && !r->cgroup))
		return NULL;
	return wants_pid;
}

int recorder__cupti_new(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct cupti_session_opts co = {
		.lib = o->cupti_lib, .private_dir = o->cmd != NULL,
		.listed = !o->cmd && (o->npids || o->cgroup), .nvtx_capture = o->nvtx_capture,
		.detach_idle = o->cupti_detach_idle,
	};

	return o->cupti ? cupti_session__new(&co, &r->cupti) : 0;
}

static void on_take(void *ctx, void **slot, const struct gt_hdr *h)
{
	(void)slot;
	recorder__write(ctx, h);
}

/* How long a process may take to reach a system call, and dlopen and the
 * agent's start to return (record/inject.h). */
#define INJECT_WAIT_MS 10000
/* for CPython 3.14 to run the script that loads the agent: a Python job
 * runs Python code between its steps */
#define PY_REMOTE_WAIT_MS 2000

/* An attach's outcome as a GT_REC_CUPTI_ATTACH record into buf (at least
 * GT_CUPTI_ATTACH_REC_MAX bytes); returns its size. */
static size_t attach_rec(void *buf, pid_t pid, const struct cupti_attach_out *a)
{
	size_t len = a->why[0] ? strnlen(a->why, sizeof(a->why) - 1) + 1 : 0;
	size_t size = GT_REC_ALIGN(sizeof(struct gt_cupti_attach) + len);
	struct gt_cupti_attach *rec = buf;

	memset(rec, 0, size);
	rec->hdr.type = GT_REC_CUPTI_ATTACH;
	rec->hdr.size = (uint16_t)size;
	rec->hdr.ts = a->ts;
	rec->hdr.pid = (uint32_t)pid;
	rec->held_ns = a->held_ns;
	rec->result = a->result;
	rec->len = (uint16_t)len;
	rec->flags = a->python ? GT_ATTACH_F_INTERP : 0;
	if (len)
		memcpy(rec->why, a->why, len - 1);
	return size;
}

int recorder__write_attach(struct recorder *r, pid_t pid, const struct cupti_attach_out *a)
{
	uint64_t buf[GT_CUPTI_ATTACH_REC_MAX / 8];

	attach_rec(buf, pid, a);
	return recorder__write(r, (const struct gt_hdr *)buf);
}

/* One attach's outcome, kept for the trace until it is open. */
static void keep_attach(struct recorder *r, pid_t pid, const struct cupti_attach_out *a)
{
	if (vec__reserve(&r->attach_recs, &r->attach_cap, r->attach_len, GT_CUPTI_ATTACH_REC_MAX, 256))
		return;
	r->attach_len += attach_rec(r->attach_recs + r->attach_len, pid, a);
}

/* Whether pid's environment (as it was started) sets name ("NAME="). */
static bool env_sets(pid_t pid, const char *name)
{
	size_t len = strlen(name), n;
	char *env = proc_names__environ((uint32_t)pid, &n);
	bool found = false;

	for (size_t i = 0; env && i < n && !found; i += strlen(env + i) + 1)
		found = !strncmp(env + i, name, len);
	free(env);
	return found;
}

uint64_t recorder__attached_at(const struct recorder *r, uint32_t pid)
{
	for (size_t off = 0; off + sizeof(struct gt_cupti_attach) <= r->attach_len;) {
		const struct gt_cupti_attach *a = (const void *)(r->attach_recs + off);

		if (a->hdr.pid == pid && a->result == GT_ATTACH_OK)
			return a->hdr.ts;
		if (!a->hdr.size)
			break;
		off += a->hdr.size;
	}
	return 0;
}

const char *recorder__attach_failed_tail(const struct cupti_attach_out *a)
{
	return a->result == GT_ATTACH_DIED ? "" : "; its GPU side is not recorded, its calls are";
}

const char *recorder__attach_note(const struct cupti_attach_out *a)
{
	const char *s = a->result == GT_ATTACH_OK && a->why[0] ? strstr(a->why, ": ") : NULL;

	return s ? s + 2 : NULL;
}

const char *recorder__attach_thread(const struct cupti_attach_out *a, char *buf, size_t len)
{
	int n;

	if (a->python) {
		snprintf(buf, len, "thread %d, by its interpreter (Python's remote debugging: no thread stopped)",
			 (int)a->tid);
		return buf;
	}
	n = snprintf(buf, len, "thread %d", (int)a->tid);

	if (a->passed_over > 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; %d thread%s inside the CUDA driver passed over",
			      (int)a->passed_over, a->passed_over == 1 ? "" : "s");
	if (a->inside && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", in a wait of the CUDA driver's: no other thread waited");
	else if (a->stack_maybe && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", its stack pointing into the CUDA driver: no other thread "
			 "waited");
	return buf;
}

void recorder__cupti_attach_pid(const struct recorder *r, pid_t pid, struct cupti_attach_out *out)
{
	const char *dir = cupti_session__dir(r->cupti), *lib = cupti_session__lib(r->cupti);
	const char *soname = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	struct inject_last last;
	uint64_t h = 0, ret = 0;
	pid_t ptid = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->ts = clock__mono_ns();
	/* a process attached before keeps its copy of the agent: by its
	 * soname, the library's file name. CPython 3.14 loads it itself,
	 * in its main thread between two of its instructions; where it does
	 * not (another program, its remote debugging switched off, no Python
	 * code run in the wait: called off, nothing done), a thread is held */
	err = inject__check(pid, out->why, sizeof(out->why));
	if (!err) {
		err = py_remote__load(pid, lib, soname, "gt_agent_attach", dir, PY_REMOTE_WAIT_MS, &ret, &ptid,
				      out->why, sizeof(out->why));
		/* anything else did nothing: a thread is held instead */
		out->python = !err || err == -EINPROGRESS;
		if (!out->python)
			pr_debug("%s: a thread held instead", out->why);
	}
	if (out->python) {
		out->tid = ptid;
	} else {
		err = inject__load_once(pid, lib, soname, "gt_agent_attach", dir, INJECT_WAIT_MS, &h, &ret,
					out->why, sizeof(out->why));
		inject__last(&last);
		out->tid = last.tid;
		out->passed_over = last.passed_over;
		out->stack_maybe = last.maybe;
		out->inside = last.inside;
	}
	/* a refusal touched nothing: the process was never held */
	out->held_ns = err && err != -ETIMEDOUT && err != -EOWNERDEAD ? 0 : clock__mono_ns() - out->ts;
	if (!err && (int)ret == 1) {
		out->result = GT_ATTACH_OK;
		/* NVTX binds its injection once, at the program's first NVTX
		 * call: an agent that comes later gets none of its ranges */
		if (!env_sets(pid, "NVTX_INJECTION64_PATH="))
			snprintf(out->why, sizeof(out->why), "pid %d: no NVTX ranges (NVTX_INJECTION64_PATH was not "
				 "set when it started: NVTX takes its injection at its first call)", (int)pid);
		return;
	}
	out->result = err == -EOWNERDEAD ? GT_ATTACH_DIED : err ? GT_ATTACH_REFUSED : (int)ret == -1 ? GT_ATTACH_CONFLICT :
		      (int)ret == 2 ? GT_ATTACH_BUSY : GT_ATTACH_FAILED;
	if (!err)
		snprintf(out->why, sizeof(out->why), "pid %d: %s", (int)pid,
			 out->result == GT_ATTACH_CONFLICT ? "another CUPTI subscriber holds CUPTI (torch.profiler, "
							     "Kineto, nsys): the agent stays inert" :
			 out->result == GT_ATTACH_BUSY ? "the agent there records for another recorder now" :
							 "the agent could not start (its message is on the process' "
							 "stderr)");
}

/* Whether a line of pid's mappings holds a (or b, when not NULL). */
static bool maps_hold(pid_t pid, const char *a, const char *b)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) || (b && strstr(line, b));
	fclose(f);
	return found;
}

/* --all --cupti=attach: the CUDA processes running now (with --cgroup,
 * those of the cgroup), in *out (malloc'd); how many. */
static size_t cuda_processes(struct recorder *r, pid_t **out)
{
	size_t n = 0, cap = 0;
	pid_t *v = NULL, self = getpid();
	struct dirent *de;
	DIR *d = opendir("/proc");

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self || (r->cgroup && !cgroup_target__holds_pid(r->cgroup, (pid_t)pid)) ||
		    !maps_hold((pid_t)pid, "/libcuda.so", NULL))
			continue;
		if (vec__reserve(&v, &cap, n, 1, 16))
			break;
		v[n++] = (pid_t)pid;
	}
	closedir(d);
	*out = v;
	return n;
}

/* --cupti=attach: the agent loaded into each process of -p (--all: each
 * CUDA process) that runs now and started there in the session's run
 * directory, where the recording admits it as any armed agent; it detaches
 * when the recording ends. A
 * process it cannot go into is said once and recorded by its calls only;
 * the trace says which and why (GT_REC_CUPTI_ATTACH). */
void recorder__cupti_attach(struct recorder *r)
{
	const struct record_opts *o = r->o;
	pid_t *found = NULL;
	const pid_t *pids = o->pids;
	size_t npids = o->npids;

	if (!o->cupti_attach || !r->cupti || !cupti_session__dir(r->cupti))
		return;
	if (o->all) {
		npids = cuda_processes(r, &found);
		pids = found;
		pr_info("--cupti=attach: %zu CUDA process%s running%s", npids, npids == 1 ? "" : "es",
			npids ? "" : ": the GPU side of those that start later comes only with "
			"CUDA_INJECTION64_PATH set");
	}
	for (size_t i = 0; i < npids; i++) {
		struct cupti_attach_out a;

		recorder__cupti_attach_pid(r, pids[i], &a);
		keep_attach(r, pids[i], &a);
		const char *note = recorder__attach_note(&a);
		char th[160];

		if (a.result == GT_ATTACH_OK)
			pr_info("--cupti=attach: the agent is in pid %d (%.1f ms, %s)%s%s", (int)pids[i],
				a.held_ns / 1e6, recorder__attach_thread(&a, th, sizeof(th)), note ? "; " : "",
				note ? note : "");
		else
			pr_warn("--cupti=attach: %s%s", a.why, recorder__attach_failed_tail(&a));
	}
	free(found);
}

int recorder__cupti_start(struct recorder *r)
{
	struct cupti_follow_opts fo = { .take = on_take };

	/* what the attaches came to, first in the trace */
	for (size_t off = 0; off < r->attach_len;) {
		const struct gt_hdr *h = (const void *)(r->attach_recs + off);
		int err = recorder__write(r, h);

		if (err)
			return err;
		off += h->size;
	}

	if (!r->cupti || (r->o->ext && r->o->ext->reads_cupti))
		return 0;
	recorder__cupti_follow_opts(r, &fo);
	return cupti_follow__new(&fo, &r->follow);
}

void recorder__cupti_poll(struct recorder *r)
{
	cupti_follow__poll(r->follow, false);
}

/* A process that made CUDA calls: the agent may be in it; the user it
 * runs as, for its spool file once it is gone. */
void recorder__cupti_note(struct recorder *r, uint32_t pid)
{
	char proc[32];
	struct stat st;

	if (!r->cupti || vec__reserve(&r->cupti_pids, &r->cupti_pids_cap, r->ncupti_pids, 1, 16))
		return;
	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	r->cupti_pids[r->ncupti_pids++] = (struct cupti_pid){
		.pid = pid, .uid = stat(proc, &st) ? (uid_t)-1 : st.st_uid,
	};
}

/* Whether pid maps the agent library (it is in the process). */
static bool runs_agent(const struct recorder *r, uint32_t pid)
{
	const char *lib = cupti_session__lib(r->cupti), *base = strrchr(lib, '/');

	return maps_hold((pid_t)pid, lib, base ? base + 1 : lib);
}

/* The programs that ran the agent and did not join: said, with why to look
 * for (the agent says it on the program's stderr). */
static void say_unjoined(struct recorder *r)
{
	char list[512] = "";
	size_t n = 0, len = 0;

	for (size_t i = 0; i < r->ncupti_pids; i++) {
		uint32_t pid = r->cupti_pids[i].pid;

		if (cupti_follow__joined(r->follow, pid) || !runs_agent(r, pid))
			continue;
		n++;
		if (len < sizeof(list) - 16)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", n > 1 ? ", " : "", pid);
	}
	r->cupti_unjoined = n;
	if (n)
		pr_warn("CUPTI: %zu process%s ran the agent but did not join, so %s no GPU side here "
			"(pid %s; its agent said why on the program's stderr: a spool directory it cannot "
			"write to, a full disk, another CUPTI client)", n, n == 1 ? "" : "es",
			n == 1 ? "it has" : "they have", list);
}

/* --cupti, at the end of a recording: a recording with no spool file has
 * no GPU records because no agent joined; says why it may not have.
 * Returns false then. */
static bool joined(struct recorder *r)
{
	struct cupti_follow_counts c;
	const char *why;

	cupti_follow__counts(r->follow, &c);
	if (c.files)
		return true;
	if (r->o->cupti_attach)
		why = "no process took the agent (--cupti=attach: why is said above; the agent: ";
	else if (!r->o->cmd)
		why = "no program joined: start them with CUDA_INJECTION64_PATH=";
	else if (!r->o->trace_cuda)
		why = "the agent never loaded: the command did not use CUDA, is linked statically, runs "
		      "under another injection or cleared its environment (CUDA_INJECTION64_PATH=";
	else if (!r->nprocs)
		why = "the command never used CUDA, so the agent never loaded (";
	else
		why = "the agent never loaded although the command used CUDA: the agent could "
		      "not be loaded (its libcupti not found?), or the command is linked "
		      "statically, runs under another injection or cleared its environment "
		      "(CUDA_INJECTION64_PATH=";
	pr_warn("--cupti: no GPU records: %s%s%s", why, cupti_session__lib(r->cupti),
		r->o->cmd || r->o->cupti_attach ? ")" : "");
	return false;
}

bool recorder__cupti_finish(struct recorder *r)
{
	struct cupti_follow_counts c;
	bool any;

	if (!r->follow)
		return true;
	/* the calls BPF submitted up to now are in the trace, the last taken:
	 * the span of the calls ends here (GPU work of later calls is not
	 * this recording's: the merge leaves it out) */
	r->calls_end = now_ns(CLOCK_MONOTONIC);
	ring_buffer__consume(r->rb);
	/* the agents hand over what they hold, then stop or pause; the
	 * processes still running are looked at before their agents go */
	cupti_session__stop(r->cupti);
	say_unjoined(r);
	cupti_follow__finish(r->follow);
	cupti_follow__counts(r->follow, &c);
	if (c.before)
		pr_info("CUPTI: %llu GPU records of programs that ran before this recording began left out",
			(unsigned long long)c.before);
	any = joined(r);
	return any;
}

void recorder__cupti_end(struct recorder *r)
{
	cupti_follow__free(r->follow);
	r->follow = NULL;
	cupti_session__end(r->cupti);
	free(r->cupti_pids);
	r->cupti_pids = NULL;
	free(r->attach_recs);
	r->attach_recs = NULL;
	r->attach_len = r->attach_cap = 0;
	r->ncupti_pids = r->cupti_pids_cap = 0;
}
