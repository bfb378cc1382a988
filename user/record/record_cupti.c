// SPDX-License-Identifier: MIT
/*
 * --cupti in a recording (record.c drives it; a stage may read the spools
 * itself: record_ext.reads_cupti): the session (record/cupti_session.h), the spool files
 * followed into the trace as they grow (record/cupti_follow.h), the agents
 * asked to hand over at the end, and what to tell the user when programs
 * ran the agent but their GPU side did not come.
 */
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

/* --cupti=attach: the agent loaded into each process of -p that runs now
 * and started there in the session's run directory, where the recording
 * admits it as any armed agent. A process it cannot go into is said once
 * and recorded by its calls only. */
void recorder__cupti_attach(struct recorder *r)
{
	const struct record_opts *o = r->o;
	const char *dir, *lib;
	char why[320];

	if (!o->cupti_attach || !r->cupti || !(dir = cupti_session__dir(r->cupti)))
		return;
	lib = cupti_session__lib(r->cupti);
	for (size_t i = 0; i < o->npids; i++) {
		uint64_t h = 0, ret = 0;
		uint64_t t0 = clock__mono_ns();
		int err = inject__load(o->pids[i], lib, "gt_agent_attach", dir, INJECT_WAIT_MS, &h, &ret, why,
				       sizeof(why));

		if (!err && (int)ret == 1) {
			pr_info("--cupti=attach: the agent is in pid %d (%.1f ms)", (int)o->pids[i],
				(clock__mono_ns() - t0) / 1e6);
			continue;
		}
		if (!err)
			snprintf(why, sizeof(why), "pid %d: %s", (int)o->pids[i],
				 (int)ret == -1 ? "another CUPTI subscriber holds CUPTI (torch.profiler, Kineto, "
						  "nsys): the agent stays inert" :
						  "the agent could not start (its message is on the process' stderr)");
		pr_warn("--cupti=attach: %s; its GPU side is not recorded, its calls are", why);
	}
}

int recorder__cupti_start(struct recorder *r)
{
	struct cupti_follow_opts fo = { .take = on_take };

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
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	base = base ? base + 1 : lib;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, lib) || strstr(line, base);
	fclose(f);
	return found;
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
		why = "the agent never loaded although the command used CUDA: it is linked "
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
	r->ncupti_pids = r->cupti_pids_cap = 0;
}
