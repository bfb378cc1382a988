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
CUresult (*p_cuGraphLaunch)(CUgraphExec g, CUstream s);

/* The names gtrace-bpf probes. */
static const char *const probed_names[] = {
#define GT_NAME(sym, ...) #sym,
	GT_API_TABLE(GT_NAME)
#undef GT_NAME
};

bool after_ready;	/* set once, before any launch thread starts */
volatile sig_atomic_t flood_stop;

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

/* What load_libcuda did, for the JSON line. */
static char loaded_path[PATH_MAX];
static struct timespec open_mono[2], open_real[2];	/* before and after the dlopen */

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* src copied to DIR/libcuda.so.1 through a temporary name: the file
 * appears whole, with an inode of its own. */
static void copy_file(const char *src, const char *dir, char *out, size_t len)
{
	char tmp[PATH_MAX], buf[65536];
	FILE *in, *o;
	size_t n;

	if (mkdir(dir, 0755) && errno != EEXIST)
		die("cannot make %s: %s", dir, strerror(errno));
	snprintf(out, len, "%s/libcuda.so.1", dir);
	snprintf(tmp, sizeof(tmp), "%s/.libcuda.so.1.%d", dir, (int)getpid());
	in = fopen(src, "rb");
	if (!in)
		die("cannot read %s: %s", src, strerror(errno));
	o = fopen(tmp, "wbx");
	if (!o)
		die("cannot create %s: %s", tmp, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, o) != n)
			die("cannot write %s: %s", tmp, strerror(errno));
	if (ferror(in) || fclose(o))
		die("cannot copy %s to %s", src, tmp);
	fclose(in);
	if (chmod(tmp, 0755) || rename(tmp, out))
		die("cannot move %s to %s: %s", tmp, out, strerror(errno));
}

void load_libcuda(const char *copy_dir)
{
	const char *path = getenv("GT_LIBCUDA");
	void *h;
	size_t i;

	if (!path || !*path)
		path = "libcuda.so.1";
	if (copy_dir) {
		if (!strchr(path, '/'))
			die("--copy-lib needs GT_LIBCUDA to name a file, not '%s'", path);
		copy_file(path, copy_dir, loaded_path, sizeof(loaded_path));
		path = loaded_path;
	} else {
		snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	}
	clock_gettime(CLOCK_MONOTONIC, &open_mono[0]);
	clock_gettime(CLOCK_REALTIME, &open_real[0]);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	clock_gettime(CLOCK_MONOTONIC, &open_mono[1]);
	clock_gettime(CLOCK_REALTIME, &open_real[1]);
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
	*(void **)&p_cuGraphLaunch = dlsym(h, "cuGraphLaunch");

	for (i = 0; i < WL__COUNT; i++) {
		size_t j;

		for (j = 0; j < sizeof(probed_names) / sizeof(probed_names[0]); j++)
			if (!strcmp(counts[i].name, probed_names[j]))
				counts[i].probed = true;
	}
}

void json_load(void)
{
	const char *p;

	/* the path as a JSON string: tests make it, nothing to escape but these */
	printf(",\"lib\":\"");
	for (p = loaded_path; *p; p++)
		printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	printf("\",\"dlopen_start_ns\":%llu,\"dlopen_ns\":%llu,\"dlopen_end_real_ns\":%llu",
	       (unsigned long long)ts_ns(&open_mono[0]),
	       (unsigned long long)(ts_ns(&open_mono[1]) - ts_ns(&open_mono[0])),
	       (unsigned long long)ts_ns(&open_real[1]));
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
