// SPDX-License-Identifier: MIT
/*
 * Plays a CUDA program with the agent injected, over the mock libcupti:
 *   agent_driver AGENT STEPS [NVTX-STEP...]
 * loads AGENT as the CUDA driver would and runs STEPS, one letter each:
 *   i  InitializeInjection()            n  InitializeInjectionNvtx2()
 *   e  100 kernels (+ copy, set, range)  E  2000 x e
 *   c  CUPTI's thread completes the current buffer
 *   s  sleep 500 ms                     S  create $GTRACE_CUPTI_DIR/stop
 *   f  fork a child that exits          x  _exit(0) (no exit handlers)
 *   a  gt_agent_attach($GTRACE_RUN_DIR/cupti), as a recorder's --cupti=attach
 *   w  100 kernels, each through its driver call's exit (mock_gpu_work)
 *   W  the same 100 kernels run by a CUDA graph (cuGraphLaunch, a node each)
 *   F  fork a child that makes 100 such calls (w) and exits
 *   D  wait (10 s at most) until the agent watches the driver calls (the
 *      mock's api_domains): a detach asked for CUPTI's finalize
 *   q  print the mock's state as key=value
 *   L U A l P R g   the run directory ($GTRACE_RUN_DIR/cupti) as a recorder
 *      keeps it: hold / let go its lock, the session file "scope all",
 *      "scope listed", "pause", none, this process' go file
 * then each NVTX-STEP, one NVTX call through the mock's NVTX (mock_api.h),
 * printing "STEP open=N close=M" after it: the calls of the agent's
 * gtrace_capture_open and gtrace_capture_close so far, counted by uprobes
 * on those symbols of AGENT (perf_event_open of the uprobe PMU, a counter
 * per thread: needs root), as the recorder sees them:
 *   push:NAME pushw:NAME pushex:NAME pushexw:NAME   nvtxRangePushA/W/Ex(ASCII, Unicode)
 *   pushreg:NAME      nvtxRangePushEx of the string reg:-:NAME registered
 *   pop               nvtxRangePop
 *   start:NAME startw:NAME startex:NAME   nvtxRangeStartA/W/Ex; the Kth start's id is #K
 *   end:K             nvtxRangeEnd(#K)
 *   dom:D domw:D      nvtxDomainCreateA/W("D")       undom:D   nvtxDomainDestroy
 *   reg:D:NAME regw:D:NAME   nvtxDomainRegisterStringA/W (D "-": the default domain)
 *   dpush:D:NAME dpushw:D:NAME dpushreg:D:NAME   nvtxDomainRangePushEx
 *   dpop:D  dstart:D:NAME  dend:D:K               nvtxDomainRangePop/StartEx/End
 *   cuinit            InitializeInjection()          q   as the letter q
 *   2/STEP            STEP on a second thread (started at its first use)
 *   fork/STEP         STEP in a forked child, which prints "child STEP ..." with
 *                     counters of its own
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mock_api.h"

static int (*init)(void), (*nvtx)(const void *(*)(unsigned)), (*attach)(const char *);

static void print_state(void)
{
	struct mock_state s;

	mock_state(&s);
	printf("subscribed=%d kinds=%d driver_ids=%d order_errors=%d subscribes=%d "
	       "unsubscribes=%d flushes=%d nvtx_inits=%d nvtx_cbs=%d nvtx_calls=%d finalizes=%d "
	       "api_domains=%d\n", s.subscribed,
	       s.kinds, s.driver_ids, s.order_errors, s.subscribes, s.unsubscribes, s.flushes,
	       s.nvtx_inits, s.nvtx_cbs, s.nvtx_calls, s.finalizes, s.api_domains);
}

/* ------------------------------------------------------------ uprobe counters */

static const char *agent_path;	/* AGENT, absolute */
static uint64_t probe_off[2];	/* file offsets of gtrace_capture_open, _close */
static uintptr_t want_addr;	/* dl_iterate_phdr: the address to find... */
static uint64_t found_off;	/* ...and its file offset */
static int probe_type = -1;	/* the uprobe PMU */

static int to_file_offset(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && want_addr >= lo && want_addr < lo + ph->p_memsz) {
			found_off = want_addr - lo + ph->p_offset;
			return 1;
		}
	}
	return 0;
}

/* The probed symbols, as the recorder finds them: exported by AGENT. */
static int probes_setup(void *h, const char *path)
{
	static const char *const syms[2] = { "gtrace_capture_open", "gtrace_capture_close" };
	static char abs[4096];
	FILE *f;

	if (!realpath(path, abs)) {
		perror(path);
		return -1;
	}
	agent_path = abs;
	for (int i = 0; i < 2; i++) {
		void *sym = dlsym(h, syms[i]);

		if (!sym) {
			fprintf(stderr, "the agent does not export %s\n", syms[i]);
			return -1;
		}
		want_addr = (uintptr_t)sym;
		if (!dl_iterate_phdr(to_file_offset, NULL)) {
			fprintf(stderr, "%s: not in a mapped segment\n", syms[i]);
			return -1;
		}
		probe_off[i] = found_off;
	}
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &probe_type) != 1) {
		fprintf(stderr, "no uprobe PMU (/sys/bus/event_source/devices/uprobe/type)\n");
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/* Counters of the two probes' hits in the calling thread. */
static void counters_open(int fd[2])
{
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = (uint32_t)probe_type;
		a.config1 = (uint64_t)(uintptr_t)agent_path;	/* uprobe_path */
		a.config2 = probe_off[i];			/* probe_offset */
		fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd[i] < 0) {
			perror("perf_event_open(uprobe)");
			exit(2);
		}
	}
}

static uint64_t counter_read(int fd)
{
	uint64_t n = 0;

	if (fd >= 0 && read(fd, &n, sizeof(n)) != sizeof(n)) {
		perror("read(uprobe counter)");
		exit(2);
	}
	return n;
}

static int fds[2][2] = { { -1, -1 }, { -1, -1 } };	/* [thread][open, close] */

static void print_counts(const char *who, const char *step, int (*f)[2], int nthreads)
{
	uint64_t n[2] = { 0, 0 };

	for (int t = 0; t < nthreads; t++)
		for (int i = 0; i < 2; i++)
			n[i] += counter_read(f[t][i]);
	printf("%s%s open=%llu close=%llu\n", who, step, (unsigned long long)n[0], (unsigned long long)n[1]);
	fflush(stdout);
}

/* ------------------------------------------------------------ NVTX steps */

static struct {
	char name[64];
	void *h;
} doms[16];				/* domains created, by name */
static struct {
	char key[160];			/* "D:NAME" */
	void *h;
} regs[32];				/* registered strings */
static unsigned long long ids[1024];	/* range ids of the starts, #1 first */
static int ndoms, nregs, nids;

static void bad_step(const char *step, const char *why)
{
	fprintf(stderr, "agent_driver: %s: %s\n", step, why);
	exit(2);
}

static void *domain_of(const char *step, const char *d)
{
	if (!strcmp(d, "-"))
		return NULL;
	for (int i = 0; i < ndoms; i++)
		if (!strcmp(doms[i].name, d))
			return doms[i].h;
	bad_step(step, "domain not created");
	return NULL;
}

static void *string_of(const char *step, const char *d, const char *name)
{
	char key[160];

	snprintf(key, sizeof(key), "%s:%s", d, name);
	for (int i = 0; i < nregs; i++)
		if (!strcmp(regs[i].key, key))
			return regs[i].h;
	bad_step(step, "string not registered");
	return NULL;
}

static unsigned long long id_of(const char *step, const char *k)
{
	int i = atoi(k);

	if (i < 1 || i > nids)
		bad_step(step, "no such start");
	return ids[i - 1];
}

static void start_done(const char *step, unsigned long long id)
{
	if (nids == (int)(sizeof(ids) / sizeof(ids[0])))
		bad_step(step, "too many starts");
	ids[nids++] = id;
}

/* One NVTX step (without its 2/ or fork/). */
static void nvtx_step(const char *step)
{
	char op[16] = "", a[64] = "", b[64] = "";
	const char *c1 = strchr(step, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	snprintf(op, sizeof(op), "%.*s", (int)(c1 ? c1 - step : (long)strlen(step)), step);
	if (c1)
		snprintf(a, sizeof(a), "%.*s", (int)(c2 ? c2 - c1 - 1 : (long)strlen(c1 + 1)), c1 + 1);
	if (c2)
		snprintf(b, sizeof(b), "%s", c2 + 1);

	if (!strcmp(op, "push"))
		mock_nvtx_push(0, NULL, MOCK_NVTX_A, a);
	else if (!strcmp(op, "pushw"))
		mock_nvtx_push(0, NULL, MOCK_NVTX_W, a);
	else if (!strcmp(op, "pushex"))
		mock_nvtx_push(0, NULL, MOCK_NVTX_EX_A, a);
	else if (!strcmp(op, "pushexw"))
		mock_nvtx_push(0, NULL, MOCK_NVTX_EX_W, a);
	else if (!strcmp(op, "pushreg"))
		mock_nvtx_push(0, NULL, MOCK_NVTX_EX_REG, string_of(step, "-", a));
	else if (!strcmp(op, "pop"))
		mock_nvtx_pop(0, NULL);
	else if (!strcmp(op, "start"))
		start_done(step, mock_nvtx_start(0, NULL, MOCK_NVTX_A, a));
	else if (!strcmp(op, "startw"))
		start_done(step, mock_nvtx_start(0, NULL, MOCK_NVTX_W, a));
	else if (!strcmp(op, "startex"))
		start_done(step, mock_nvtx_start(0, NULL, MOCK_NVTX_EX_A, a));
	else if (!strcmp(op, "end"))
		mock_nvtx_end(0, NULL, id_of(step, a));
	else if (!strcmp(op, "dom") || !strcmp(op, "domw")) {
		if (ndoms == 16)
			bad_step(step, "too many domains");
		snprintf(doms[ndoms].name, sizeof(doms[0].name), "%s", a);
		doms[ndoms++].h = mock_nvtx_domain(a, op[3] == 'w');
	} else if (!strcmp(op, "undom"))
		mock_nvtx_domain_destroy(domain_of(step, a));
	else if (!strcmp(op, "reg") || !strcmp(op, "regw")) {
		if (nregs == 32)
			bad_step(step, "too many strings");
		snprintf(regs[nregs].key, sizeof(regs[0].key), "%s:%s", a, b);
		regs[nregs++].h = mock_nvtx_register(domain_of(step, a), b, op[3] == 'w');
	} else if (!strcmp(op, "dpush"))
		mock_nvtx_push(1, domain_of(step, a), MOCK_NVTX_EX_A, b);
	else if (!strcmp(op, "dpushw"))
		mock_nvtx_push(1, domain_of(step, a), MOCK_NVTX_EX_W, b);
	else if (!strcmp(op, "dpushreg"))
		mock_nvtx_push(1, domain_of(step, a), MOCK_NVTX_EX_REG, string_of(step, a, b));
	else if (!strcmp(op, "dpop"))
		mock_nvtx_pop(1, domain_of(step, a));
	else if (!strcmp(op, "dstart"))
		start_done(step, mock_nvtx_start(1, domain_of(step, a), MOCK_NVTX_EX_A, b));
	else if (!strcmp(op, "dend"))
		mock_nvtx_end(1, domain_of(step, a), id_of(step, b));
	else if (!strcmp(op, "cuinit"))
		init();
	else if (!strcmp(op, "q"))
		print_state();
	else
		bad_step(step, "unknown step");
}

/* The second thread: runs one step at a time for the main one. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	bool started;
	const char *job;	/* step to run; NULL when done */
} second = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *second_main(void *arg)
{
	(void)arg;
	counters_open(fds[1]);
	pthread_mutex_lock(&second.mu);
	for (;;) {
		second.job = NULL;
		pthread_cond_broadcast(&second.cv);
		while (!second.job)
			pthread_cond_wait(&second.cv, &second.mu);
		pthread_mutex_unlock(&second.mu);
		nvtx_step(second.job);
		pthread_mutex_lock(&second.mu);
	}
	return NULL;
}

static void on_second(const char *step)
{
	pthread_mutex_lock(&second.mu);
	if (!second.started) {
		second.job = "";	/* busy until it has its counters */
		if (pthread_create(&second.th, NULL, second_main, NULL))
			bad_step(step, "cannot start a thread");
		second.started = true;
	}
	while (second.job)
		pthread_cond_wait(&second.cv, &second.mu);
	second.job = step;
	pthread_cond_broadcast(&second.cv);
	while (second.job)
		pthread_cond_wait(&second.cv, &second.mu);
	pthread_mutex_unlock(&second.mu);
}

static void in_child(const char *step)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bad_step(step, "cannot fork");
	if (pid == 0) {
		int mine[1][2];

		counters_open(mine[0]);
		nvtx_step(step);
		print_counts("child ", step, mine, 1);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

static void run_nvtx(const char *step)
{
	if (!strncmp(step, "2/", 2))
		on_second(step + 2);
	else if (!strncmp(step, "fork/", 5))
		in_child(step + 5);
	else
		nvtx_step(step);
	print_counts("", step, fds, second.started ? 2 : 1);
}

/* ------------------------------------------------------------ a recorder's part */

static int lock_fd = -1;	/* 'L': the recorder's lock, held */

/* $GTRACE_RUN_DIR/cupti/NAME, made anew (a new inode, as the recorder
 * does) with content, or removed (content NULL). */
static void run_file(const char *name, const char *content)
{
	char path[4200], tmp[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cupti/%s", getenv("GTRACE_RUN_DIR"), name);
	if (!content) {
		unlink(path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(content, f);
	fclose(f);
	rename(tmp, path);
}

/* The run directory as a recorder keeps it:
 *   L  hold the recorder's lock (an OFD write lock)   U  let it go
 *   A  session "scope all"   l  "scope listed"   P  "pause"   R  no session
 *   g  this process' go file (and the session made anew, as the recorder
 *      does when it lists a process) */
static void recorder_step(char c)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[4200], go[32];

	switch (c) {
	case 'L':
		snprintf(path, sizeof(path), "%s/cupti/recorder", getenv("GTRACE_RUN_DIR"));
		lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (lock_fd < 0 || fcntl(lock_fd, F_OFD_SETLK, &fl))
			perror("recorder lock");
		break;
	case 'U':
		close(lock_fd);
		lock_fd = -1;
		break;
	case 'A': run_file("session", "scope all\n"); break;
	case 'l': run_file("session", "scope listed\n"); break;
	case 'P': run_file("session", "pause\n"); break;
	case 'R': run_file("session", NULL); break;
	case 'g':
		snprintf(go, sizeof(go), "go.%d", (int)getpid());
		run_file(go, "");
		/* as the recorder does: the session made anew, for the agent
		 * to look */
		run_file("session", "scope listed\n");
		break;
	}
}

/* 'w': 100 kernel launches as the mock libcuda makes them: each call's
 * exit through CUPTI's callbacks, then its records; 'W' (graph): the same
 * kernels run by a CUDA graph's replays (each a node of it). */
static void launches(bool graph)
{
	for (int i = 0; i < 100; i++) {
		struct timespec ts;
		unsigned long long now;
		struct mock_gpu_work w = {
			.kind = MOCK_WORK_KERNEL, .name = "_Z10mockKernelv",
			.grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .stream = 7,
		};

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
		w.api_start = now;
		w.api_end = now + 1000;
		w.start = now + 2000;
		w.end = now + 5000;
		if (graph)
			w.graph_node = (unsigned long long)i + 1;
		mock_gpu_work(&w);
	}
}

int main(int argc, char **argv)
{
	unsigned corr = 1;
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: %s AGENT STEPS [NVTX-STEP...]\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	*(void **)&nvtx = dlsym(h, "InitializeInjectionNvtx2");
	*(void **)&attach = dlsym(h, "gt_agent_attach");
	if (!init || !nvtx || !attach) {
		fprintf(stderr, "the agent does not export its entry points\n");
		return 2;
	}
	if (argc > 3) {
		if (probes_setup(h, argv[1]))
			return 2;
		counters_open(fds[0]);
	}
	for (const char *p = argv[2]; *p; p++) {
		switch (*p) {
		case 'i': printf("init=%d\n", init()); break;
		case 'n': printf("nvtx=%d\n", nvtx(NULL)); break;
		case 'e': mock_emit(100, corr); corr += 1000; break;
		case 'E':
			for (int j = 0; j < 2000; j++, corr += 1000)
				mock_emit(100, corr);
			break;
		case 'c': mock_complete_async(); break;
		case 's': usleep(500000); break;
		case 'S': {
			char path[4200];
			FILE *f;

			snprintf(path, sizeof(path), "%s/stop", getenv("GTRACE_CUPTI_DIR"));
			f = fopen(path, "w");
			if (f)
				fclose(f);
			break;
		}
		case 'f': {
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid == 0)
				exit(0);
			waitpid(pid, NULL, 0);
			break;
		}
		case 'q': print_state(); break;
		case 'a': {
			char dir[4200];

			snprintf(dir, sizeof(dir), "%s/cupti", getenv("GTRACE_RUN_DIR"));
			printf("attach=%d\n", attach(dir));
			break;
		}
		case 'w': launches(false); break;
		case 'W': launches(true); break;
		case 'D':
			for (int j = 0; j < 1000; j++) {
				struct mock_state st;

				mock_state(&st);
				if (st.api_domains)
					break;
				usleep(10000);
			}
			break;
		case 'F': {
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				launches(false);
				exit(0);
			}
			waitpid(pid, NULL, 0);
			break;
		}
		case 'x': fflush(stdout); fflush(stderr); _exit(0);
		case 'L': case 'U': case 'A': case 'l': case 'P': case 'R': case 'g':
			recorder_step(*p);
			break;
		}
	}
	for (int i = 3; i < argc; i++)
		run_nvtx(argv[i]);
	return 0;
}
