// SPDX-License-Identifier: MIT
/*
 * cuda_workload's libcuda entry points: looked up with dlsym, each call
 * counted (all, after SIGUSR1, failed), the counts written as JSON.
 */
#include "cuda_workload.h"

/* ------------------------------------------------------------------ */
/* libcuda entry points, counted                                        */

struct wl_count {
	const char *name;
	bool probed;			/* listed in bpf/gtrace_api.h */
	unsigned long calls;		/* all calls */
	unsigned long after_ready;	/* calls after SIGUSR1 (--wait-signal) */
	unsigned long failed;		/* calls that did not return CUDA_SUCCESS */
};

static struct wl_count counts[WL__COUNT] = {
#define WL_INIT(n) [WL_##n] = { .name = #n },
	WL_APIS(WL_INIT)
#undef WL_INIT
};

#define WL_PTR(n) __typeof__(&n) p_##n;
WL_APIS(WL_PTR)
#undef WL_PTR
static __typeof__(&cuGetErrorName) p_cuGetErrorName;	/* for messages, not counted */
/* the libcuda mock's NVTX ranges for the CUPTI agent (--nvtx-steps), NULL elsewhere */
void (*p_nvtx_range)(const char *name, unsigned long long start, unsigned long long end);

/* The names gtrace-bpf probes. */
static const char *const probed_names[] = {
#define GT_NAME(sym, ...) #sym,
	GT_API_TABLE(GT_NAME)
#undef GT_NAME
};

bool after_ready;	/* set once, before any launch thread starts */

CUresult wl_count(enum wl_api a, CUresult r)
{
	__atomic_add_fetch(&counts[a].calls, 1, __ATOMIC_RELAXED);
	if (after_ready)
		__atomic_add_fetch(&counts[a].after_ready, 1, __ATOMIC_RELAXED);
	if (r != CUDA_SUCCESS)
		__atomic_add_fetch(&counts[a].failed, 1, __ATOMIC_RELAXED);
	return r;
}

void cuda_fail(const char *api, CUresult r)
{
	const char *name = NULL;

	if (!p_cuGetErrorName || p_cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "unknown error";
	fprintf(stderr, PROG ": %s failed: %s (%d)\n", api, name, (int)r);
	exit(1);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void load_libcuda(void)
{
	const char *path = getenv("GT_LIBCUDA");
	void *h;
	size_t i;

	if (!path || !*path)
		path = "libcuda.so.1";
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("cannot load %s: %s", path, dlerror());
#define WL_SYM(n) \
	*(void **)&p_##n = dlsym(h, #n); \
	if (!p_##n) \
		die("%s has no symbol %s", path, #n);
	WL_APIS(WL_SYM)
#undef WL_SYM
	*(void **)&p_cuGetErrorName = dlsym(h, "cuGetErrorName");
	*(void **)&p_nvtx_range = dlsym(h, "gt_mock_nvtx_range");

	for (i = 0; i < WL__COUNT; i++) {
		size_t j;

		for (j = 0; j < sizeof(probed_names) / sizeof(probed_names[0]); j++)
			if (!strcmp(counts[i].name, probed_names[j]))
				counts[i].probed = true;
	}
}

/* One {"api": count} object: of the probed apis, or of the others. */
void json_counts(const char *key, enum count_kind kind, bool probed)
{
	bool first = true;
	size_t i;

	printf(",\"%s\":{", key);
	for (i = 0; i < WL__COUNT; i++) {
		const struct wl_count *c = &counts[i];
		unsigned long v;

		if (c->probed != probed)
			continue;
		v = kind == C_AFTER_READY ? c->after_ready : kind == C_FAILED ? c->failed : c->calls;
		if (!v)
			continue;
		printf("%s\"%s\":%lu", first ? "" : ",", c->name, v);
		first = false;
	}
	putchar('}');
}
