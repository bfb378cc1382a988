// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/records.h"
#include "record/procs/proc_names.h"
#include "lib/hash.h"
#include "lib/u64map.h"

struct proc_names {
	proc_names_emit_fn emit;
	void *ctx;
	bool filter;			/* only pids in the BPF pids map */
	struct u64map cuda_pids;	/* pid+1 -> PID_LIVE or PID_EXITED: processes that made
					 * CUDA calls */
	struct u64map seen_tids;	/* tid+1 -> pid+1: threads seen (their name looked up) */
	struct u64map tid_names;	/* tid+1 -> hash of the thread name last written */
	struct u64map cmdlines;		/* pid+1 -> char *: command line read at its exec */
	struct u64map ranks;		/* pid+1 -> hash of the rank last written | 1 */
};

#define PID_LIVE	1	/* cuda_pids: running */
#define PID_EXITED	2	/* cuda_pids: its exit was seen (proc_names__exited) */

struct proc_names *proc_names__new(bool filter, proc_names_emit_fn emit, void *ctx)
{
	struct proc_names *pn = malloc(sizeof(*pn));

	if (pn)
		*pn = (struct proc_names){ .filter = filter, .emit = emit, .ctx = ctx };
	return pn;
}

static int write_name(struct proc_names *pn, const struct gt_hdr *src, uint16_t kind, uint64_t key,
		      const char *s)
{
	struct {
		struct gt_name n;
		char str[1024];
	} rec;

	return pn->emit(pn->ctx, gt_name__fill(&rec.n, sizeof(rec.str), src, kind, key, s));
}

/* Reads a small /proc file; NULs (cmdline separators) become spaces. */
void proc_names__read_proc(const char *path, char *buf, size_t len)
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
static void write_proc_info(struct proc_names *pn, const struct gt_hdr *h)
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
	proc_names__read_proc(p, buf, sizeof(buf));
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	rp = strrchr(buf, ')');
	if (rp)
		sscanf(rp + 1, " %*c %u", &e.ppid);
	snprintf(p, sizeof(p), "/proc/%u/comm", h->pid);
	proc_names__read_proc(p, buf, sizeof(buf));
	memcpy(e.comm, buf, strnlen(buf, sizeof(e.comm) - 1));
	e.cgroup = proc_cgroup(h->pid);
	pn->emit(pn->ctx, &e.hdr);
}

bool proc_names__relevant(const struct proc_names *pn, uint32_t pid)
{
	const uint64_t *v = u64map__get(&pn->cuda_pids, (uint64_t)pid + 1);

	return pn->filter || (v && *v == PID_LIVE);
}

bool proc_names__traced(const struct proc_names *pn, uint32_t pid)
{
	return u64map__get(&pn->cuda_pids, (uint64_t)pid + 1) != NULL;
}

bool proc_names__add_process(struct proc_names *pn, uint32_t pid)
{
	const uint64_t *v = u64map__get(&pn->cuda_pids, (uint64_t)pid + 1);

	if (v && *v == PID_LIVE)
		return false;
	u64map__set(&pn->cuda_pids, (uint64_t)pid + 1, PID_LIVE);
	return true;
}

bool proc_names__exited(struct proc_names *pn, uint32_t pid)
{
	uint64_t *v = u64map__get(&pn->cuda_pids, (uint64_t)pid + 1), *t;

	if (!v || *v != PID_LIVE)
		return false;
	*v = PID_EXITED;
	/* its main thread's tid is the next owner's too: named anew */
	if ((t = u64map__get(&pn->seen_tids, (uint64_t)pid + 1)))
		*t = 0;
	if ((t = u64map__get(&pn->tid_names, (uint64_t)pid + 1)))
		*t = 0;
	return true;
}

/* The command line BPF read at an exec (arguments NUL-separated): joined,
 * kept for the process' first CUDA record, and written now if the process is
 * traced already. After the exec record, so it names the new program. */
int proc_names__on_exec_cmdline(struct proc_names *pn, const struct gt_name *nm)
{
	uint64_t *old = u64map__get(&pn->cmdlines, (uint64_t)nm->hdr.pid + 1);
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
	if (u64map__set(&pn->cmdlines, (uint64_t)nm->hdr.pid + 1, (uint64_t)(uintptr_t)s)) {
		free(s);
		return 0;
	}
	if (!s[0] || !proc_names__relevant(pn, nm->hdr.pid))
		return 0;
	return write_name(pn, &nm->hdr, GT_NAME_PROCESS, nm->hdr.pid, s);
}

void proc_names__forget_cmdline(struct proc_names *pn, uint32_t pid)
{
	uint64_t *v = u64map__get(&pn->cmdlines, (uint64_t)pid + 1);

	if (v && *v) {
		free((char *)(uintptr_t)*v);
		*v = 0;
	}
	/* a process given the pid later has its rank written, the same or not */
	v = u64map__get(&pn->ranks, (uint64_t)pid + 1);
	if (v)
		*v = 0;
}

/* The value of NAME=<integer> among the NUL-separated entries of env[0..n),
 * -1 when absent or not a number from 0 to INT32_MAX. */
static int32_t env_int(const char *env, size_t n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n;) {
		const char *e = env + i, *end = memchr(e, 0, n - i);
		size_t elen = end ? (size_t)(end - e) : n - i;

		if (elen > len && e[len] == '=' && !memcmp(e, name, len)) {
			char num[16], *stop;
			long v;

			if (elen - len - 1 == 0 || elen - len - 1 >= sizeof(num))
				return -1;
			memcpy(num, e + len + 1, elen - len - 1);
			num[elen - len - 1] = 0;
			errno = 0;
			v = strtol(num, &stop, 10);
			return !errno && !*stop && v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
		}
		i += elen + 1;
	}
	return -1;
}

bool proc_names__parse_rank(const char *env, size_t n, struct gt_proc_rank *r)
{
	r->rank = env_int(env, n, "RANK");
	r->local_rank = env_int(env, n, "LOCAL_RANK");
	r->world_size = env_int(env, n, "WORLD_SIZE");
	r->local_world_size = env_int(env, n, "LOCAL_WORLD_SIZE");
	return r->rank >= 0 || r->local_rank >= 0 || r->world_size >= 0 || r->local_world_size >= 0;
}

/* The process' rank in its job, from the environment it was started with
 * (torchrun's RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE): a record when
 * any is set and it is not the one last written for the process.  The
 * environment may be large; the first 256 KiB are read. */
char *proc_names__environ(uint32_t pid, size_t *n)
{
	char path[64], *env = malloc(PROC_ENV_MAX + 1);
	ssize_t got;
	int fd;

	*n = 0;
	if (!env)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(env);
		return NULL;
	}
	while (*n < PROC_ENV_MAX && (got = read(fd, env + *n, PROC_ENV_MAX - *n)) > 0)
		*n += (size_t)got;
	close(fd);
	env[*n] = 0;
	return env;
}

/* The rank env[0..n) names, written for h->pid unless it is the one last
 * written for it. */
static void rank_of_env(struct proc_names *pn, const struct gt_hdr *h, const char *env, size_t n)
{
	struct gt_proc_rank r;

	memset(&r, 0, sizeof(r));
	if (n > 0 && proc_names__parse_rank(env, n, &r)) {
		int32_t v[4] = { r.rank, r.local_rank, r.world_size, r.local_world_size };
		uint64_t hv = hash__bytes(v, sizeof(v)) | 1, *old = u64map__get(&pn->ranks, (uint64_t)h->pid + 1);

		if (old && *old == hv)
			return;
		u64map__set(&pn->ranks, (uint64_t)h->pid + 1, hv);
		r.hdr.ts = h->ts;
		r.hdr.pid = h->pid;
		r.hdr.type = GT_REC_PROC_RANK;
		r.hdr.size = sizeof(r);
		pn->emit(pn->ctx, &r.hdr);
	}
}

static void write_rank(struct proc_names *pn, const struct gt_hdr *h)
{
	size_t n;
	char *env = proc_names__environ(h->pid, &n);

	if (!env)
		return;
	rank_of_env(pn, h, env, n);
	free(env);
}

void proc_names__on_exec_environ(struct proc_names *pn, const struct gt_environ *e)
{
	/* as the command line BPF read at the exec: for every process the
	 * recording follows, whether its first record came yet or not */
	if (proc_names__relevant(pn, e->hdr.pid))
		rank_of_env(pn, &e->hdr, e->env, e->len);
}

void proc_names__on_exec_rank(struct proc_names *pn, const struct gt_hdr *h)
{
	if (proc_names__traced(pn, h->pid))
		write_rank(pn, h);
}

/* First record of a process: write its name before it. */
void proc_names__write_process(struct proc_names *pn, const struct gt_hdr *h)
{
	char path[64], buf[1024];
	uint64_t *cached;

	write_proc_info(pn, h);
	cached = u64map__get(&pn->cmdlines, (uint64_t)h->pid + 1);
	snprintf(path, sizeof(path), "/proc/%u/cmdline", h->pid);
	if (cached && *cached)
		snprintf(buf, sizeof(buf), "%s", (const char *)(uintptr_t)*cached);
	else
		proc_names__read_proc(path, buf, sizeof(buf));
	if (!buf[0]) {
		snprintf(path, sizeof(path), "/proc/%u/comm", h->pid);
		proc_names__read_proc(path, buf, sizeof(buf));
	}
	if (buf[0])
		write_name(pn, h, GT_NAME_PROCESS, h->pid, buf);
	write_rank(pn, h);
}

/* A thread's name, unless it is the one last written for it. */
static void thread_name(struct proc_names *pn, const struct gt_hdr *h, uint32_t tid, const char *s)
{
	/* never 0: 0 is "none written" */
	uint64_t hv = hash__bytes(s, strlen(s)) | 1, *old = u64map__get(&pn->tid_names, (uint64_t)tid + 1);

	if (!s[0] || (old && *old == hv))
		return;
	u64map__set(&pn->tid_names, (uint64_t)tid + 1, hv);
	write_name(pn, h, GT_NAME_THREAD, tid, s);
}

/* First record of a thread: write its name before it. */
void proc_names__note_thread(struct proc_names *pn, const struct gt_hdr *h)
{
	const uint64_t *seen = u64map__get(&pn->seen_tids, (uint64_t)h->tid + 1);
	char path[64], buf[1024];

	/* a tid another process had before is a new thread */
	if (h->tid && (!seen || *seen != (uint64_t)h->pid + 1)) {
		u64map__set(&pn->seen_tids, (uint64_t)h->tid + 1, (uint64_t)h->pid + 1);
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", h->pid, h->tid);
		proc_names__read_proc(path, buf, sizeof(buf));
		thread_name(pn, h, h->tid, buf);
	}
}

int proc_names__on_thread_name(struct proc_names *pn, const struct gt_name *nm)
{
	uint64_t *seen = u64map__get(&pn->seen_tids, nm->key + 1);
	char buf[16];

	/* a thread with no record needs no name; one of another process that
	 * had its tid before is not this one */
	if (nm->key > UINT32_MAX || !seen || *seen != (uint64_t)nm->hdr.pid + 1 ||
	    sizeof(*nm) + sizeof(buf) > nm->hdr.size)
		return 0;
	memcpy(buf, nm->str, sizeof(buf));
	buf[sizeof(buf) - 1] = 0;
	thread_name(pn, &nm->hdr, (uint32_t)nm->key, buf);
	return 0;
}

void proc_names__free(struct proc_names *pn)
{
	size_t i;

	if (!pn)
		return;
	for (i = 0; i < pn->cmdlines.cap; i++) {
		if (pn->cmdlines.keys[i])
			free((char *)(uintptr_t)pn->cmdlines.vals[i]);
	}
	u64map__free(&pn->cmdlines);
	u64map__free(&pn->ranks);
	u64map__free(&pn->cuda_pids);
	u64map__free(&pn->seen_tids);
	u64map__free(&pn->tid_names);
	free(pn);
}
