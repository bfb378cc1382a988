// SPDX-License-Identifier: MIT
/*
 * libpool: a native worker thread that calls libcuda for its caller, as
 * autograd's and a framework's pools do (tests of --stacks' Python frames:
 * the worker runs no Python, its caller waits in a Python line).
 *
 *   int pool_sync(const char *libcuda): cuCtxSynchronize on a new thread,
 *   joined; its result, or -1 when the library or the thread is missing.
 *
 *   int pool_launches(const char *libcuda, void *ctx, void *fn, int n,
 *                     void (*hook)(void)): a new thread that, as autograd's,
 *   takes a Python thread state of its own (before its first CUDA call) and
 *   runs no Python on it: n launches of fn in ctx, then hook (a Python
 *   function through ctypes: it runs on that state), then n launches more;
 *   joined. 0, or -1 when something is missing (the interpreter's functions
 *   are the process').
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

struct job {
	int (*sync)(void);
	int rc;
};

static void *worker(void *arg)
{
	struct job *j = arg;

	j->rc = j->sync();
	return NULL;
}

__attribute__((visibility("default"))) int pool_sync(const char *libcuda)
{
	void *lib = dlopen(libcuda, RTLD_NOW | RTLD_NOLOAD);
	struct job j = { NULL, -1 };
	pthread_t t;

	if (!lib)
		lib = dlopen(libcuda, RTLD_NOW);
	if (!lib || !(j.sync = (int (*)(void))dlsym(lib, "cuCtxSynchronize")))
		return -1;
	if (pthread_create(&t, NULL, worker, &j))
		return -1;
	pthread_join(t, NULL);
	return j.rc;
}

struct hot {
	const char *libcuda;
	void *ctx, *fn;
	int n, rc;
	void (*hook)(void);
};

static void *hot_worker(void *arg)
{
	struct hot *h = arg;
	void *lib = dlopen(h->libcuda, RTLD_NOW);
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
		      void **) = lib ? dlsym(lib, "cuLaunchKernel") : NULL;
	int (*set_ctx)(void *) = lib ? dlsym(lib, "cuCtxSetCurrent") : NULL;
	int (*ensure)(void) = dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
	void (*release)(int) = dlsym(RTLD_DEFAULT, "PyGILState_Release");
	void *(*save)(void) = dlsym(RTLD_DEFAULT, "PyEval_SaveThread");
	void (*restore)(void *) = dlsym(RTLD_DEFAULT, "PyEval_RestoreThread");
	void *ts;
	int g;

	if (!launch || !set_ctx || !ensure || !release || !save || !restore)
		return NULL;
	/* a state of its own, bound to this thread before its first CUDA call
	 * (a thread found without one is looked for again only a second
	 * later: bpf/pystack.bpf.h, PY_NOSTATE_RECHECK_NS) */
	g = ensure();
	ts = save();	/* ... that runs no Python while the thread works */
	h->rc = set_ctx(h->ctx);
	for (int part = 0; part < 2; part++) {
		for (int i = 0; i < h->n; i++)
			h->rc |= launch(h->fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		if (!part)
			h->hook();	/* Python on the thread's own state */
	}
	restore(ts);
	release(g);
	return NULL;
}

__attribute__((visibility("default"))) int pool_launches(const char *libcuda, void *ctx, void *fn, int n,
							 void (*hook)(void))
{
	struct hot h = { libcuda, ctx, fn, n, -1, hook };
	pthread_t t;

	if (pthread_create(&t, NULL, hot_worker, &h))
		return -1;
	pthread_join(t, NULL);
	return h.rc;
}
