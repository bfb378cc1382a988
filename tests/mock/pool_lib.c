// SPDX-License-Identifier: MIT
/*
 * libpool: a native worker thread that calls libcuda for its caller, as
 * autograd's and a framework's pools do (tests of --stacks' Python frames:
 * the worker runs no Python, its caller waits in a Python line).
 *
 *   int pool_sync(const char *libcuda): cuCtxSynchronize on a new thread,
 *   joined; its result, or -1 when the library or the thread is missing.
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
