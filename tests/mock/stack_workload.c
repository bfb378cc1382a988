// SPDX-License-Identifier: MIT
/*
 * stack_workload: synchronize calls from known call chains, for --stacks.
 * Built with frame pointers and without inlining or tail calls, so that
 * each function below keeps its frame:
 *
 *   main -> train -> step -> sync_here -> cuStreamSynchronize   (STEPS times)
 *   main -> others -> other_site -> cuCtxSynchronize             (3 times)
 *   main -> deep(DEPTH) -> ... -> deep(0) -> cuCtxSynchronize    (once, deeper
 *                                                  than the recorder keeps)
 *
 * Usage: stack_workload [STEPS [DEPTH]] (defaults 12 and 60), libcuda from
 * GT_LIBCUDA. Prints one JSON line: the calls made.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*sync_fn)(void *);
typedef int (*ctx_sync_fn)(void);

static sync_fn stream_sync;
static ctx_sync_fn ctx_sync;
static unsigned long nstream, nctx;

#define KEEP __attribute__((noinline, optimize("no-optimize-sibling-calls")))

KEEP static void sync_here(void)
{
	stream_sync(NULL);
	nstream++;
	__asm__ volatile("" ::: "memory");
}

KEEP static void step(int i)
{
	(void)i;
	sync_here();
	__asm__ volatile("" ::: "memory");
}

KEEP static void train(int steps)
{
	for (int i = 0; i < steps; i++)
		step(i);
	__asm__ volatile("" ::: "memory");
}

KEEP static void other_site(void)
{
	ctx_sync();
	nctx++;
	__asm__ volatile("" ::: "memory");
}

KEEP static void others(int n)
{
	for (int i = 0; i < n; i++)
		other_site();
	__asm__ volatile("" ::: "memory");
}

KEEP static int deep(int n)
{
	int r;

	if (!n) {
		r = ctx_sync();
		nctx++;
	} else {
		r = deep(n - 1);
	}
	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	const char *lib = getenv("GT_LIBCUDA") ? getenv("GT_LIBCUDA") : "libcuda.so.1";
	int steps = argc > 1 ? atoi(argv[1]) : 12, depth = argc > 2 ? atoi(argv[2]) : 60;
	void *h = dlopen(lib, RTLD_NOW);
	init_fn init;

	if (!h) {
		fprintf(stderr, "stack_workload: %s\n", dlerror());
		return 1;
	}
	init = (init_fn)dlsym(h, "cuInit");
	stream_sync = (sync_fn)dlsym(h, "cuStreamSynchronize");
	ctx_sync = (ctx_sync_fn)dlsym(h, "cuCtxSynchronize");
	if (!init || !stream_sync || !ctx_sync) {
		fprintf(stderr, "stack_workload: %s lacks cuInit, cuStreamSynchronize or cuCtxSynchronize\n", lib);
		return 1;
	}
	init(0);
	train(steps);
	others(argc > 3 ? atoi(argv[3]) : 3);
	deep(depth);
	printf("{\"stream_syncs\":%lu,\"ctx_syncs\":%lu,\"depth\":%d}\n", nstream, nctx, depth);
	return 0;
}
