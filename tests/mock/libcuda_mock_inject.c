// SPDX-License-Identifier: MIT
/*
 * The mock libcuda's GPU work, as the CUPTI agent sees it
 * (GT_MOCK_INJECTION=1, libcuda_mock.c says how): cuInit loads the agent,
 * the launches, copies and sets hand their work to its mock libcupti, on
 * one serial "GPU" per device; the NVTX ranges of gt_mock_nvtx_range().
 */
#include "libcuda_mock.h"

/* ------------------------------------------------------------------ */
/* GPU work, as the CUPTI agent sees it (GT_MOCK_INJECTION=1)           */

unsigned (*gpu_work_fn)(const struct mock_gpu_work *);	/* the mock libcupti's */
static unsigned (*nvtx_range_fn)(const char *, unsigned long long, unsigned long long);
pthread_once_t inject_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gpu_free[MOCK_NDEV];	/* when each serial "GPU" is done with what it was given */
static unsigned long gpu_ns = 5000;

/* cuInit: the driver loads CUDA_INJECTION64_PATH and calls its
 * InitializeInjection; the mock libcupti it links takes the GPU work. */
void inject(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH"), *on = getenv("GT_MOCK_INJECTION");
	int (*init_fn)(void);
	void *h;

	if (!on || strcmp(on, "1") || !path || !*path)
		return;
	gpu_ns = env_ulong("GT_MOCK_GPU_NS", 5000);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libcuda mock: cannot load CUDA_INJECTION64_PATH %s: %s\n", path, dlerror());
		return;
	}
	*(void **)&init_fn = dlsym(h, "InitializeInjection");
	if (init_fn)
		init_fn();
	*(void **)&gpu_work_fn = dlsym(h, "mock_gpu_work");
	*(void **)&nvtx_range_fn = dlsym(h, "mock_nvtx_range_record");
	*(void **)&graph_node_fn = dlsym(h, "mock_graph_node");
	if (!gpu_work_fn)
		fprintf(stderr, "libcuda mock: %s brings no mock libcupti (mock_gpu_work): no GPU records\n",
			path);
}

/* The mock libcupti, started in the running process by an agent loaded
 * there later (not at cuInit), says where GPU work goes from now on. */
__attribute__((visibility("default"))) void gt_mock_cupti_register(void *gpu_work, void *nvtx_range,
								   void *graph_node)
{
	if (!gpu_work_fn)
		*(void **)&gpu_work_fn = gpu_work;
	if (!nvtx_range_fn)
		*(void **)&nvtx_range_fn = nvtx_range;
	if (!graph_node_fn)
		*(void **)&graph_node_fn = graph_node;
}

/* Work of a call that began at api_start: on the current context's "GPU"
 * from when it is free (at the earliest 1 us after the call) for gpu_ns. */
void gpu_work(struct mock_gpu_work *w, uint64_t api_start)
{
	uint64_t now;

	if (!gpu_work_fn)
		return;
	current_ids(&w->device, &w->context);
	now = mono_ns();
	pthread_mutex_lock(&gpu_lock);
	w->start = gpu_free[w->device] > now + 1000 ? gpu_free[w->device] : now + 1000;
	w->end = w->start + gpu_ns;
	gpu_free[w->device] = w->end;
	pthread_mutex_unlock(&gpu_lock);
	w->api_start = api_start;
	w->api_end = now;
	w->corr = gpu_work_fn(w);
}

/* An NVTX range of the calling thread, start to end (CLOCK_MONOTONIC ns),
 * for the agent's records: what CUPTI records of nvtxRangePush/Pop.  Not a
 * CUDA call (the recorder probes none of this name); nothing without the
 * injection. */
__attribute__((visibility("default"))) void gt_mock_nvtx_range(const char *name, unsigned long long start,
							       unsigned long long end)
{
	if (nvtx_range_fn)
		nvtx_range_fn(name, start, end);
}

/* CUPTI's stream id of a stream: the NULL stream's is 7, as on the GPU. */
unsigned stream_id(const void *s)
{
	return s ? 13 + (unsigned)(((uintptr_t)s >> 4) % 100000) : 7;
}
