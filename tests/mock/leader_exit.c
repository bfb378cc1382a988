// SPDX-License-Identifier: MIT
/*
 * leader_exit: a process whose main thread ends first. main loads a module
 * through the libcuda of GT_LIBCUDA (cuInit, a context, cuModuleLoadData,
 * cuModuleGetFunction), starts a worker and calls pthread_exit; the worker
 * waits until the main thread is a zombie (its /proc/self/task/PID/stat
 * says Z), then makes LAUNCHES launches of that function and one
 * cuCtxSynchronize, prints one JSON line and returns: the process ends
 * with the last thread, status 0.
 *
 * Usage: leader_exit [LAUNCHES] (default 20).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*dev_get_fn)(int *, int);
typedef int (*ctx_create_fn)(void **, unsigned, int);
typedef int (*ctx_set_fn)(void *);
typedef int (*mod_load_fn)(void **, const void *);
typedef int (*get_fn_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			 void **, void **);
typedef int (*ctx_sync_fn)(void);

static const char ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry vecAdd(\n)\n{\n\tret;\n}\n";
static ctx_set_fn ctx_set;
static launch_fn launch;
static ctx_sync_fn ctx_sync;
static void *ctx, *fn;
static long launches = 20;
static pid_t leader;

static char task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 'X';	/* gone from the list: ended */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void *worker(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	long i, failed = 0;
	char s;

	(void)arg;
	/* the main thread has run its exit before the first launch */
	for (i = 0; i < 10000 && (s = task_state(leader)) != 'Z' && s != 'X'; i++)
		nanosleep(&ms, NULL);
	if (s != 'Z' && s != 'X') {
		fprintf(stderr, "leader_exit: the main thread is still '%c' after 10 s\n", s);
		exit(3);
	}
	if (ctx_set(ctx))
		failed++;
	for (i = 0; i < launches; i++)
		if (launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL))
			failed++;
	if (ctx_sync())
		failed++;
	printf("{\"pid\":%d,\"worker_tid\":%ld,\"launches\":%ld,\"failed\":%ld}\n", (int)leader,
	       (long)syscall(SYS_gettid), launches, failed);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *lib = getenv("GT_LIBCUDA");
	void *h, *mod;
	pthread_t th;
	int dev;

	if (argc > 1)
		launches = strtol(argv[1], NULL, 10);
	h = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "leader_exit: %s\n", dlerror());
		return 2;
	}
	ctx_set = (ctx_set_fn)dlsym(h, "cuCtxSetCurrent");
	launch = (launch_fn)dlsym(h, "cuLaunchKernel");
	ctx_sync = (ctx_sync_fn)dlsym(h, "cuCtxSynchronize");
	if (!ctx_set || !launch || !ctx_sync || ((init_fn)dlsym(h, "cuInit"))(0) ||
	    ((dev_get_fn)dlsym(h, "cuDeviceGet"))(&dev, 0) ||
	    ((ctx_create_fn)dlsym(h, "cuCtxCreate_v2"))(&ctx, 0, dev) ||
	    ((mod_load_fn)dlsym(h, "cuModuleLoadData"))(&mod, ptx) ||
	    ((get_fn_fn)dlsym(h, "cuModuleGetFunction"))(&fn, mod, "vecAdd")) {
		fprintf(stderr, "leader_exit: the setup calls failed\n");
		return 2;
	}
	leader = getpid();
	if (pthread_create(&th, NULL, worker, NULL))
		return 2;
	pthread_exit(NULL);
}
