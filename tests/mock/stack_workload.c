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
 *   main -> launches -> launch_a -> launch_outer -> launch_inner -> cuLaunchKernel
 *                    -> launch_b -> launch_outer -> launch_inner -> cuLaunchKernel
 *                                              (LAUNCHES times each, alternating)
 *
 * launch_a and launch_b start two kernels (kern_a, kern_b) through the same
 * two wrapper functions, as a CUDA runtime's launch function does: the two
 * return addresses nearest the driver are the same for both.
 *
 * Usage: stack_workload [STEPS [DEPTH [OTHERS [LAUNCHES]]]] (defaults 12, 60,
 * 3 and 0), libcuda from GT_LIBCUDA. Prints one JSON line: the calls made.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*sync_fn)(void *);
typedef int (*ctx_sync_fn)(void);

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			 void **, void **);

static sync_fn stream_sync;
static ctx_sync_fn ctx_sync;
static launch_fn launch;
static void *kern_a, *kern_b;
static unsigned long nstream, nctx, nlaunch_a, nlaunch_b;

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

KEEP static int launch_inner(void *f)
{
	int r = launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);

	__asm__ volatile("" ::: "memory");
	return r;
}

KEEP static int launch_outer(void *f)
{
	int r = launch_inner(f);

	__asm__ volatile("" ::: "memory");
	return r;
}

KEEP static void launch_a(void)
{
	nlaunch_a += !launch_outer(kern_a);
	__asm__ volatile("" ::: "memory");
}

KEEP static void launch_b(void)
{
	nlaunch_b += !launch_outer(kern_b);
	__asm__ volatile("" ::: "memory");
}

KEEP static void launches(int n)
{
	for (int i = 0; i < n; i++) {
		launch_a();
		launch_b();
	}
	__asm__ volatile("" ::: "memory");
}

static const char PTX[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
			  ".visible .entry kern_a(\n)\n{\n\tret;\n}\n"
			  ".visible .entry kern_b(\n)\n{\n\tret;\n}\n";

/* A context, a module and its two kernels, for launches(). */
static int load_kernels(void *h)
{
	int (*dev_get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
	int (*ctx_create)(void **, unsigned, int) = (int (*)(void **, unsigned, int))dlsym(h, "cuCtxCreate_v2");
	int (*load)(void **, const void *) = (int (*)(void **, const void *))dlsym(h, "cuModuleLoadData");
	int (*get)(void **, void *, const char *) = (int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction");
	void *ctx = NULL, *mod = NULL;
	int dev = 0;

	launch = (launch_fn)dlsym(h, "cuLaunchKernel");
	if (!dev_get || !ctx_create || !load || !get || !launch || dev_get(&dev, 0) || ctx_create(&ctx, 0, dev) ||
	    load(&mod, PTX) || get(&kern_a, mod, "kern_a") || get(&kern_b, mod, "kern_b")) {
		fprintf(stderr, "stack_workload: cannot load kern_a and kern_b\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *lib = getenv("GT_LIBCUDA") ? getenv("GT_LIBCUDA") : "libcuda.so.1";
	int steps = argc > 1 ? atoi(argv[1]) : 12, depth = argc > 2 ? atoi(argv[2]) : 60;
	int nlaunch = argc > 4 ? atoi(argv[4]) : 0;
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
	if (nlaunch > 0 && load_kernels(h))
		return 1;
	train(steps);
	others(argc > 3 ? atoi(argv[3]) : 3);
	deep(depth);
	launches(nlaunch);
	printf("{\"stream_syncs\":%lu,\"ctx_syncs\":%lu,\"depth\":%d,\"launches_a\":%lu,\"launches_b\":%lu}\n",
	       nstream, nctx, depth, nlaunch_a, nlaunch_b);
	return 0;
}
