// SPDX-License-Identifier: MIT
/*
 * A stand-in libcuda.so.1 for tests on machines without a GPU.
 *
 * It exports every symbol gtrace-bpf probes (bpf/gtrace_api.h) with the real
 * signatures (checked against cuda.h when the toolkit is installed), plus the
 * few calls a driver-API program needs around them.  Behaviour is the
 * minimum that keeps a real program's logic working:
 *
 *  - two devices (cuDeviceGetCount 2), each with its primary context;
 *    created contexts on either; the current context is per thread, a
 *    stack (cuCtxSetCurrent, cuCtxPushCurrent_v2, cuCtxPopCurrent_v2);
 *  - handles are small heap objects tagged with a magic number;
 *  - device and pinned host memory are plain host allocations, registered so
 *    that copies and sets really move bytes and refuse ranges outside an
 *    allocation (CUDA_ERROR_INVALID_VALUE) instead of corrupting memory;
 *    0-byte allocations fail with CUDA_ERROR_INVALID_VALUE, as in the driver;
 *    device memory belongs to the current context's device, and a peer copy
 *    refuses pointers that are not on the devices of the contexts it names;
 *  - a module or library knows the kernels its PTX declares (.entry); a
 *    CUfunction / CUkernel points to a heap struct whose 8-byte field at +8
 *    points to the NUL-terminated mangled name, the layout measured on the
 *    real driver that the tracer's name recovery relies on;
 *  - launches only validate their arguments;
 *  - synchronizing calls sleep GT_MOCK_SYNC_US microseconds (default 2000),
 *    so tests can assert durations; cuInit sleeps GT_MOCK_INIT_US (default 0)
 *    to model the real driver's slow initialization;
 *  - with GT_MOCK_INJECTION=1, cuInit loads CUDA_INJECTION64_PATH (the CUPTI
 *    agent) and calls its InitializeInjection, as the driver does, and each
 *    launch, copy and set is then reported to the mock libcupti the agent
 *    brings (cupti/testing/mock_api.h: mock_gpu_work) as work of one serial
 *    "GPU" per device that runs it for GT_MOCK_GPU_NS (default 5000) once
 *    it is free; gt_mock_nvtx_range(), not a CUDA call, hands that mock an
 *    NVTX range (cuda_workload --nvtx-steps), which CUPTI would have recorded.
 *
 * Every exported function is its own non-inlined, non-cloned function with
 * its own entry address (uprobes attach by address), and none calls another
 * exported function (a nested call would be recorded twice).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_compat.h"
#include "../../cupti/testing/mock_api.h"

#include "mock_export.h"

#define MAGIC_CTX	0x67746d6f636b0001ull
#define MAGIC_STREAM	0x67746d6f636b0002ull
#define MAGIC_EVENT	0x67746d6f636b0003ull
#define MAGIC_MODULE	0x67746d6f636b0004ull
#define MAGIC_LIBRARY	0x67746d6f636b0005ull
#define MAGIC_FUNC	0x67746d6f636b0006ull
#define MAGIC_KERNEL	0x67746d6f636b0007ull
#define MAGIC_DEAD	0x67746d6f636bdeadull

#define MOCK_DEVICE_NAME "gtrace mock device"
#define MOCK_NDEV 2
#define MOCK_DRIVER_VERSION 13000
#define MOCK_ALIGN 256

/* ------------------------------------------------------------------ */
/* timing                                                               */

static unsigned long sync_us = 2000;
static pthread_once_t sync_once = PTHREAD_ONCE_INIT;

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || s[0] == '-') {
		fprintf(stderr, "libcuda mock: ignoring %s=%s (not a number)\n", name, s);
		return def;
	}
	return v;
}

static void read_sync_env(void)
{
	sync_us = env_ulong("GT_MOCK_SYNC_US", 2000);
}

static void sleep_us(unsigned long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* The wait of a synchronizing call. */
static void sync_wait(void)
{
	pthread_once(&sync_once, read_sync_env);
	if (sync_us)
		sleep_us(sync_us);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* GPU work, as the CUPTI agent sees it (GT_MOCK_INJECTION=1)           */

static unsigned (*gpu_work_fn)(const struct mock_gpu_work *);	/* the mock libcupti's */
static unsigned (*nvtx_range_fn)(const char *, unsigned long long, unsigned long long);
static pthread_once_t inject_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gpu_free[MOCK_NDEV];	/* when each serial "GPU" is done with what it was given */
static unsigned long gpu_ns = 5000;

/* cuInit: the driver loads CUDA_INJECTION64_PATH and calls its
 * InitializeInjection; the mock libcupti it links takes the GPU work. */
static void inject(void)
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
	if (!gpu_work_fn)
		fprintf(stderr, "libcuda mock: %s brings no mock libcupti (mock_gpu_work): no GPU records\n",
			path);
}

static void current_ids(unsigned *device, unsigned *context);

/* Work of a call that began at api_start: on the current context's "GPU"
 * from when it is free (at the earliest 1 us after the call) for gpu_ns. */
static void gpu_work(struct mock_gpu_work *w, uint64_t api_start)
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
	gpu_work_fn(w);
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
static unsigned stream_id(const void *s)
{
	return s ? 13 + (unsigned)(((uintptr_t)s >> 4) % 100000) : 7;
}

/* ------------------------------------------------------------------ */
/* contexts, streams, events                                            */

struct mock_ctx {
	uint64_t magic;
	CUdevice dev;
	int primary;		/* the device's primary context */
	int refs;		/* primary: retain count */
	unsigned id;		/* CUPTI's context id: 1 + device for primary contexts */
};

struct mock_stream {
	uint64_t magic;
	unsigned int flags;
	int priority;
};

struct mock_event {
	uint64_t magic;
	unsigned int flags;
	int recorded;
};

#define CTX_STACK_MAX 32

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static struct mock_ctx primary_ctx[MOCK_NDEV] = {
	{ .magic = MAGIC_CTX, .dev = 0, .primary = 1, .id = 1 },
	{ .magic = MAGIC_CTX, .dev = 1, .primary = 1, .id = 2 },
};
static unsigned next_ctx_id = MOCK_NDEV + 1;	/* of created contexts */
/* The thread's context stack: current_ctx is its top, ctx_stack the rest. */
static __thread CUcontext current_ctx;
static __thread CUcontext ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

static bool ctx_valid(CUcontext c)
{
	return c && ((const struct mock_ctx *)c)->magic == MAGIC_CTX;
}

/* NULL, CU_STREAM_LEGACY (0x1) and CU_STREAM_PER_THREAD (0x2) are valid
 * without being created. */
static bool stream_valid(CUstream s)
{
	if ((uintptr_t)s <= 2)
		return true;
	return ((const struct mock_stream *)s)->magic == MAGIC_STREAM;
}

static bool event_valid(CUevent e)
{
	return e && ((const struct mock_event *)e)->magic == MAGIC_EVENT;
}

static bool have_ctx(void)
{
	return current_ctx != NULL;
}

static bool dev_valid(CUdevice dev)
{
	return dev >= 0 && dev < MOCK_NDEV;
}

/* The current context's device and CUPTI context id (0, 0 without one). */
static void current_ids(unsigned *device, unsigned *context)
{
	const struct mock_ctx *c = (const void *)current_ctx;

	*device = c ? (unsigned)c->dev : 0;
	*context = c ? c->id : 0;
}

/* ------------------------------------------------------------------ */
/* memory registry                                                      */

enum region_kind { R_DEVICE = 1, R_HOST = 2, R_HANDLE = 4 };

struct region {
	uintptr_t base;
	size_t size;
	enum region_kind kind;
	int dev;		/* R_DEVICE: the device it is on */
};

static struct region *regions;
static size_t nregions, cap_regions;

static CUresult region_alloc(size_t size, enum region_kind kind, void **out)
{
	int dev = current_ctx ? ((const struct mock_ctx *)current_ctx)->dev : 0;
	void *p = NULL;
	CUresult r = CUDA_SUCCESS;

	if (!out || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (posix_memalign(&p, MOCK_ALIGN, size))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(p, 0, size);
	pthread_mutex_lock(&lock);
	if (nregions == cap_regions) {
		size_t ncap = cap_regions ? cap_regions * 2 : 64;
		struct region *n = realloc(regions, ncap * sizeof(*n));

		if (!n) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		regions = n;
		cap_regions = ncap;
	}
	regions[nregions++] = (struct region){ (uintptr_t)p, size, kind, dev };
out:
	pthread_mutex_unlock(&lock);
	if (r != CUDA_SUCCESS) {
		free(p);
		return r;
	}
	*out = p;
	return CUDA_SUCCESS;
}

/* Frees the allocation starting exactly at base, of one of the kinds. */
static CUresult region_free(uintptr_t base, unsigned kinds)
{
	void *p = NULL;
	size_t i;

	if (!base)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nregions; i++) {
		if (regions[i].base == base && (regions[i].kind & kinds)) {
			p = (void *)regions[i].base;
			regions[i] = regions[--nregions];
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

/* 1: [p, p+n) lies inside one device or pinned-host allocation (its
 * device in *dev, -1 for host memory); 0: p is in none; -1: p is in one but
 * the range runs past its end. */
static int region_lookup_dev(uintptr_t p, size_t n, int *dev)
{
	int found = 0;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nregions; i++) {
		const struct region *r = &regions[i];

		if (r->kind == R_HANDLE || p < r->base || p - r->base >= r->size)
			continue;
		found = (n <= r->size - (p - r->base)) ? 1 : -1;
		*dev = r->kind == R_DEVICE ? r->dev : -1;
		break;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

static int region_lookup(uintptr_t p, size_t n)
{
	int dev;

	return region_lookup_dev(p, n, &dev);
}

/* A device-side range: must lie in an allocation. */
static bool dev_range_ok(uintptr_t p, size_t n)
{
	return region_lookup(p, n) == 1;
}

/* A host-side range: inside an allocation when it is one of ours (pinned),
 * else any non-NULL pointer (pageable memory the caller owns). */
static bool host_range_ok(uintptr_t p, size_t n)
{
	if (!p)
		return false;
	return region_lookup(p, n) >= 0;
}

enum side { SIDE_HOST, SIDE_DEVICE, SIDE_UNIFIED };

static bool side_ok(uintptr_t p, size_t n, enum side s)
{
	if (s == SIDE_DEVICE)
		return dev_range_ok(p, n);
	return host_range_ok(p, n);	/* host, or unified addressing */
}

static CUresult copy_bytes(uintptr_t dst, enum side ds, uintptr_t src, enum side ss, size_t n)
{
	uint64_t t0 = gpu_work_fn ? mono_ns() : 0;

	if (n == 0)
		return CUDA_SUCCESS;
	if (!side_ok(dst, n, ds) || !side_ok(src, n, ss))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)dst, (const void *)src, n);
	if (gpu_work_fn) {
		/* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, 0 unknown */
		struct mock_gpu_work w = {
			.kind = MOCK_WORK_MEMCPY, .bytes = n, .stream = stream_id(NULL),
			.copy_kind = ss == SIDE_HOST && ds == SIDE_DEVICE ? 1 :
				     ss == SIDE_DEVICE && ds == SIDE_HOST ? 2 :
				     ss == SIDE_DEVICE && ds == SIDE_DEVICE ? 8 : 0,
		};

		gpu_work(&w, t0);
	}
	return CUDA_SUCCESS;
}

/* Copies that involve a CUDA array: there is no way to create one here, so
 * a non-NULL array handle is accepted and nothing is copied.  p/ps is the
 * other side of the copy, when it is not an array. */
static CUresult array_copy(CUarray a, uintptr_t p, enum side ps, size_t n)
{
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (n && !side_ok(p, n, ps))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult array_array_copy(CUarray a, CUarray b)
{
	return (a && b) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult async_check(CUstream s)
{
	return stream_valid(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult memset_impl(CUdeviceptr dst, size_t pitch, unsigned int value, unsigned elem,
			    size_t width, size_t height)
{
	size_t row, i, rowbytes = width * elem;
	uintptr_t base = (uintptr_t)dst;
	uint64_t t0 = gpu_work_fn ? mono_ns() : 0;

	if (width == 0 || height == 0)
		return CUDA_SUCCESS;
	if (height > 1 && pitch < rowbytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (height == 1)
		pitch = rowbytes;
	if (!dev_range_ok(base, pitch * (height - 1) + rowbytes))
		return CUDA_ERROR_INVALID_VALUE;
	for (row = 0; row < height; row++) {
		unsigned char *p = (unsigned char *)(base + row * pitch);

		switch (elem) {
		case 1:
			memset(p, (int)(value & 0xff), width);
			break;
		case 2:
			for (i = 0; i < width; i++) {
				uint16_t v = (uint16_t)value;

				memcpy(p + 2 * i, &v, 2);
			}
			break;
		default:
			for (i = 0; i < width; i++)
				memcpy(p + 4 * i, &value, 4);
			break;
		}
	}
	if (gpu_work_fn) {
		struct mock_gpu_work w = { .kind = MOCK_WORK_MEMSET, .bytes = rowbytes * height,
					   .stream = stream_id(NULL) };

		gpu_work(&w, t0);
	}
	return CUDA_SUCCESS;
}

/* One side of a 2D/3D copy: its start address and kind, from the memory
 * type.  Arrays have no memory here: *addr = 0. */
static CUresult copy_side(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr,
			  uintptr_t *addr, enum side *s)
{
	switch (t) {
	case CU_MEMORYTYPE_HOST:
		*addr = (uintptr_t)host;
		*s = SIDE_HOST;
		return host ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_MEMORYTYPE_DEVICE:
		*addr = (uintptr_t)dev;
		*s = SIDE_DEVICE;
		return dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_MEMORYTYPE_UNIFIED:
		*addr = (uintptr_t)dev;
		*s = SIDE_UNIFIED;
		return dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_MEMORYTYPE_ARRAY:
		*addr = 0;
		*s = SIDE_DEVICE;
		return arr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* Strided copy of depth x height rows of width bytes; a 2D copy has depth 1. */
static CUresult copy_strided(uintptr_t src, enum side ss, size_t spitch, size_t sheight,
			     uintptr_t dst, enum side ds, size_t dpitch, size_t dheight,
			     size_t width, size_t height, size_t depth)
{
	size_t z, y;

	if (!width || !height || !depth)
		return CUDA_SUCCESS;
	if (!src || !dst)	/* an array side: nothing to move */
		return CUDA_SUCCESS;
	if ((height > 1 || depth > 1) && (spitch < width || dpitch < width))
		return CUDA_ERROR_INVALID_VALUE;
	if (depth > 1 && (sheight < height || dheight < height))
		return CUDA_ERROR_INVALID_VALUE;
	for (z = 0; z < depth; z++) {
		for (y = 0; y < height; y++) {
			uintptr_t s = src + (z * sheight + y) * spitch;
			uintptr_t d = dst + (z * dheight + y) * dpitch;
			CUresult r = copy_bytes(d, ds, s, ss, width);

			if (r != CUDA_SUCCESS)
				return r;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult memcpy2d_impl(const CUDA_MEMCPY2D *c)
{
	uintptr_t src, dst;
	enum side ss, ds;
	CUresult r;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	r = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, &src, &ss);
	if (r == CUDA_SUCCESS)
		r = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, &dst, &ds);
	if (r != CUDA_SUCCESS)
		return r;
	if (src)
		src += c->srcY * c->srcPitch + c->srcXInBytes;
	if (dst)
		dst += c->dstY * c->dstPitch + c->dstXInBytes;
	return copy_strided(src, ss, c->srcPitch, c->Height, dst, ds, c->dstPitch, c->Height,
			    c->WidthInBytes, c->Height, 1);
}

static CUresult memcpy3d_impl(const CUDA_MEMCPY3D *c)
{
	uintptr_t src, dst;
	enum side ss, ds;
	CUresult r;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	r = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, &src, &ss);
	if (r == CUDA_SUCCESS)
		r = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, &dst, &ds);
	if (r != CUDA_SUCCESS)
		return r;
	if (src)
		src += (c->srcZ * c->srcHeight + c->srcY) * c->srcPitch + c->srcXInBytes;
	if (dst)
		dst += (c->dstZ * c->dstHeight + c->dstY) * c->dstPitch + c->dstXInBytes;
	return copy_strided(src, ss, c->srcPitch, c->srcHeight, dst, ds, c->dstPitch, c->dstHeight,
			    c->WidthInBytes, c->Height, c->Depth);
}

/* ------------------------------------------------------------------ */
/* modules, libraries, functions, kernels                               */

/* A CUfunction or CUkernel.  The real driver's structs (driver 580,
 * measured) hold at +8 a pointer to the mangled name; keep that. */
struct mock_func {
	uint64_t magic;			/* +0  MAGIC_FUNC or MAGIC_KERNEL */
	const char *name;		/* +8  NUL-terminated mangled name */
	struct mock_module *owner;	/* module or library it came from */
	struct mock_func *function;	/* kernels: the CUfunction of cuKernelGetFunction */
};
_Static_assert(offsetof(struct mock_func, name) == 8, "name pointer at +8 like the driver");

struct mock_module {
	uint64_t magic;			/* MAGIC_MODULE or MAGIC_LIBRARY */
	size_t n;			/* kernels */
	struct mock_func **funcs;	/* modules: functions; libraries: kernels */
};

static bool ptx_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '%';
}

static bool ptx_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static struct mock_func *func_new(uint64_t magic, const char *name, size_t len,
				  struct mock_module *owner)
{
	struct mock_func *f = calloc(1, sizeof(*f));
	char *s = malloc(len + 1);

	if (!f || !s) {
		free(f);
		free(s);
		return NULL;
	}
	memcpy(s, name, len);
	s[len] = '\0';
	f->magic = magic;
	f->name = s;
	f->owner = owner;
	return f;
}

static void func_free(struct mock_func *f)
{
	if (!f)
		return;
	f->magic = MAGIC_DEAD;
	free((char *)f->name);
	free(f);
}

static void module_free(struct mock_module *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		if (m->funcs[i])
			func_free(m->funcs[i]->function);
		func_free(m->funcs[i]);
	}
	free(m->funcs);
	m->magic = MAGIC_DEAD;
	free(m);
}

/* Builds a module or library from PTX text: one kernel per ".entry NAME". */
static CUresult module_from_ptx(const char *ptx, bool library, struct mock_module **out)
{
	struct mock_module *m = calloc(1, sizeof(*m));
	const char *p = ptx;
	size_t cap = 0;

	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = library ? MAGIC_LIBRARY : MAGIC_MODULE;
	while (ptx && (p = strstr(p, ".entry")) != NULL) {
		const char *name;
		struct mock_func *f;
		bool word = (p == ptx || ptx_space(p[-1])) && ptx_space(p[6]);

		p += 6;
		if (!word)
			continue;
		while (ptx_space(*p))
			p++;
		name = p;
		while (ptx_ident_char(*p))
			p++;
		if (p == name)
			continue;
		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct mock_func **n = realloc(m->funcs, ncap * sizeof(*n));

			if (!n)
				goto nomem;
			m->funcs = n;
			cap = ncap;
		}
		f = func_new(library ? MAGIC_KERNEL : MAGIC_FUNC, name, (size_t)(p - name), m);
		if (!f)
			goto nomem;
		if (library) {
			f->function = func_new(MAGIC_FUNC, name, (size_t)(p - name), m);
			if (!f->function) {
				func_free(f);
				goto nomem;
			}
		}
		m->funcs[m->n++] = f;
	}
	*out = m;
	return CUDA_SUCCESS;
nomem:
	module_free(m);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Fat binaries (magic 0xBA55ED50) and ELF cubins are not parsed: they load
 * as empty modules.  Anything else is taken as NUL-terminated PTX text. */
static bool image_is_binary(const void *image)
{
	const unsigned char *b = image;
	static const unsigned char fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const unsigned char elf[4] = { 0x7f, 'E', 'L', 'F' };

	return !memcmp(b, fatbin, 4) || !memcmp(b, elf, 4);
}

static CUresult load_image(const void *image, bool library, struct mock_module **out)
{
	if (!image || !out)
		return CUDA_ERROR_INVALID_VALUE;
	return module_from_ptx(image_is_binary(image) ? NULL : image, library, out);
}

static CUresult load_file(const char *path, bool library, struct mock_module **out)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	CUresult r;

	if (!path || !out)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(path, "rb");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return CUDA_ERROR_OUT_OF_MEMORY;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	r = load_image(len >= 4 ? buf : "", library, out);
	free(buf);
	return r;
}

static CUresult get_func(struct mock_module *m, uint64_t magic, const char *name, void **out)
{
	size_t i;

	if (!out || !name || !m)
		return CUDA_ERROR_INVALID_VALUE;
	if (m->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	for (i = 0; i < m->n; i++) {
		if (!strcmp(m->funcs[i]->name, name)) {
			*out = m->funcs[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult func_name(const void *h, const char **name)
{
	const struct mock_func *f = h;

	if (!name || !f)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->magic != MAGIC_FUNC && f->magic != MAGIC_KERNEL)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* launches                                                             */

static CUresult launch_check(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			     unsigned int bx, unsigned int by, unsigned int bz, CUstream s)
{
	const struct mock_func *fn = (const void *)f;
	uint64_t t0 = gpu_work_fn ? mono_ns() : 0;

	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	/* the driver accepts a CUkernel cast to CUfunction */
	if (!fn || (fn->magic != MAGIC_FUNC && fn->magic != MAGIC_KERNEL))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned long long)bx * by * bz > 1024 || bz > 64 || gy > 65535 || gz > 65535)
		return CUDA_ERROR_INVALID_VALUE;
	if (!stream_valid(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (gpu_work_fn) {
		struct mock_gpu_work w = { .kind = MOCK_WORK_KERNEL, .name = fn->name,
					   .grid = { gx, gy, gz }, .block = { bx, by, bz },
					   .stream = stream_id(s) };

		gpu_work(&w, t0);
	}
	return CUDA_SUCCESS;
}

static CUresult launch_ex_check(const CUlaunchConfig *c, CUfunction f)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (c->numAttrs && !c->attrs)
		return CUDA_ERROR_INVALID_VALUE;
	return launch_check(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			    c->blockDimZ, c->hStream);
}

/* ------------------------------------------------------------------ */
/* initialization, errors, devices                                      */

MOCK_API CUresult cuInit(unsigned int Flags)
{
	unsigned long us = env_ulong("GT_MOCK_INIT_US", 0);

	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (us)
		sleep_us(us);
	pthread_once(&inject_once, inject);
	__atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static bool is_init(void)
{
	return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE);
}

MOCK_API CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = MOCK_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int error_index(CUresult e)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e)
			return (int)i;
	return -1;
}

MOCK_API CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	int i = error_index(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	if (i < 0) {
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pStr = errors[i].name;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	int i = error_index(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	if (i < 0) {
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pStr = errors[i].text;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuDeviceGetCount(int *count)
{
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = MOCK_NDEV;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "%s", MOCK_DEVICE_NAME);
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* contexts                                                             */

static CUresult ctx_create(CUcontext *pctx, CUdevice dev)
{
	struct mock_ctx *c;

	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = MAGIC_CTX;
	c->dev = dev;
	c->id = __atomic_fetch_add(&next_ctx_id, 1, __ATOMIC_RELAXED);
	*pctx = (CUcontext)c;
	current_ctx = (CUcontext)c;	/* created contexts are made current */
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	return ctx_create(pctx, dev);
}

MOCK_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
				 unsigned int flags, CUdevice dev)
{
	(void)flags;
	if (numParams < 0 || (numParams > 0 && !paramsArray))
		return CUDA_ERROR_INVALID_VALUE;
	return ctx_create(pctx, dev);
}

MOCK_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
				 unsigned int flags, CUdevice dev)
{
	(void)ctxCreateParams;
	(void)flags;
	return ctx_create(pctx, dev);
}

MOCK_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct mock_ctx *c = (struct mock_ctx *)ctx;

	if (!ctx_valid(ctx) || c->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (current_ctx == ctx)
		current_ctx = NULL;
	c->magic = MAGIC_DEAD;
	free(c);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx && !ctx_valid(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (!ctx_valid(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_stack[ctx_depth++] = current_ctx;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (!current_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = current_ctx;
	current_ctx = ctx_depth ? ctx_stack[--ctx_depth] : NULL;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = current_ctx;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxSynchronize(void)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	sync_wait();
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	if (ctx ? !ctx_valid(ctx) : !have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	sync_wait();
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	primary_ctx[dev].refs++;
	pthread_mutex_unlock(&lock);
	*pctx = (CUcontext)&primary_ctx[dev];
	return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
	CUresult r = CUDA_SUCCESS;

	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	if (primary_ctx[dev].refs > 0)
		primary_ctx[dev].refs--;
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&lock);
	return r;
}

MOCK_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return primary_release(dev);
}

/* exported as "cuDevicePrimaryCtxRelease" (see cuda_compat.h) */
MOCK_API CUresult gt_cuDevicePrimaryCtxRelease_v1(CUdevice dev)
{
	return primary_release(dev);
}

MOCK_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* modules, libraries, kernels                                          */

MOCK_API CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_file(fname, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_image(image, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				     CUjit_option *options, void **optionValues)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (numOptions && (!options || !optionValues))
		return CUDA_ERROR_INVALID_VALUE;
	return load_image(image, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_image(fatCubin, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleUnload(CUmodule hmod)
{
	struct mock_module *m = (struct mock_module *)hmod;

	if (!m || m->magic != MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	return get_func((struct mock_module *)hmod, MAGIC_MODULE, name, (void **)hfunc);
}

MOCK_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
				    void **jitOptionsValues, unsigned int numJitOptions,
				    CUlibraryOption *libraryOptions, void **libraryOptionValues,
				    unsigned int numLibraryOptions)
{
	if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return load_image(code, true, (struct mock_module **)library);
}

MOCK_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
					CUjit_option *jitOptions, void **jitOptionsValues,
					unsigned int numJitOptions, CUlibraryOption *libraryOptions,
					void **libraryOptionValues, unsigned int numLibraryOptions)
{
	if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return load_file(fileName, true, (struct mock_module **)library);
}

MOCK_API CUresult cuLibraryUnload(CUlibrary library)
{
	struct mock_module *m = (struct mock_module *)library;

	if (!m || m->magic != MAGIC_LIBRARY)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	return get_func((struct mock_module *)library, MAGIC_LIBRARY, name, (void **)pKernel);
}

MOCK_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	const struct mock_func *k = (const void *)kernel;

	if (!pFunc || !k)
		return CUDA_ERROR_INVALID_VALUE;
	if (k->magic != MAGIC_KERNEL || !k->function)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*pFunc = (CUfunction)k->function;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return func_name(hfunc, name);
}

MOCK_API CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return func_name(hfunc, name);
}

/* ------------------------------------------------------------------ */
/* launches                                                             */

MOCK_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
				 unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
				 void **kernelParams, void **extra)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	(void)extra;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				      unsigned int gridDimZ, unsigned int blockDimX,
				      unsigned int blockDimY, unsigned int blockDimZ,
				      unsigned int sharedMemBytes, CUstream hStream,
				      void **kernelParams, void **extra)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	(void)extra;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				   void **extra)
{
	(void)kernelParams;
	(void)extra;
	return launch_ex_check(config, f);
}

MOCK_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
					void **kernelParams, void **extra)
{
	(void)kernelParams;
	(void)extra;
	return launch_ex_check(config, f);
}

MOCK_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					    unsigned int gridDimY, unsigned int gridDimZ,
					    unsigned int blockDimX, unsigned int blockDimY,
					    unsigned int blockDimZ, unsigned int sharedMemBytes,
					    CUstream hStream, void **kernelParams)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
						 unsigned int gridDimY, unsigned int gridDimZ,
						 unsigned int blockDimX, unsigned int blockDimY,
						 unsigned int blockDimZ, unsigned int sharedMemBytes,
						 CUstream hStream, void **kernelParams)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

static CUresult graph_launch(CUgraphExec g, CUstream s)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	return async_check(s);
}

MOCK_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream);
}

MOCK_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream);
}

/* ------------------------------------------------------------------ */
/* copies                                                               */

#define U(p) ((uintptr_t)(p))

MOCK_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy_bytes(U(dst), SIDE_UNIFIED, U(src), SIDE_UNIFIED, ByteCount);
}

MOCK_API CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy_bytes(U(dst), SIDE_UNIFIED, U(src), SIDE_UNIFIED, ByteCount);
}

MOCK_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dst), SIDE_UNIFIED, U(src), SIDE_UNIFIED, ByteCount);
}

MOCK_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				     CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dst), SIDE_UNIFIED, U(src), SIDE_UNIFIED, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
				       CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
					    size_t ByteCount, CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy_bytes(U(dstHost), SIDE_HOST, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy_bytes(U(dstHost), SIDE_HOST, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
				       CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstHost), SIDE_HOST, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
					    CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstHost), SIDE_HOST, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
				       CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					    size_t ByteCount, CUstream hStream)
{
	return async_check(hStream) ?: copy_bytes(U(dstDevice), SIDE_DEVICE, U(srcDevice), SIDE_DEVICE, ByteCount);
}

/* Each side on the device of the context that names it. */
static CUresult peer_copy(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
	int ddev, sdev;

	if (!ctx_valid(dctx) || !ctx_valid(sctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (n && (region_lookup_dev(U(dst), n, &ddev) != 1 || region_lookup_dev(U(src), n, &sdev) != 1 ||
		  ddev != ((const struct mock_ctx *)dctx)->dev || sdev != ((const struct mock_ctx *)sctx)->dev))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_bytes(U(dst), SIDE_DEVICE, U(src), SIDE_DEVICE, n);
}

MOCK_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
			       CUcontext srcContext, size_t ByteCount)
{
	return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount);
}

MOCK_API CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
				    CUcontext srcContext, size_t ByteCount)
{
	return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount);
}

MOCK_API CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
				    CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	return async_check(hStream) ?: peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount);
}

MOCK_API CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
					 CUdeviceptr srcDevice, CUcontext srcContext,
					 size_t ByteCount, CUstream hStream)
{
	return async_check(hStream) ?: peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
	(void)dstOffset;
	return array_copy(dstArray, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void *srcHost,
				       size_t ByteCount)
{
	(void)dstOffset;
	return array_copy(dstArray, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost,
				       size_t ByteCount, CUstream hStream)
{
	(void)dstOffset;
	return async_check(hStream) ?: array_copy(dstArray, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void *srcHost,
					    size_t ByteCount, CUstream hStream)
{
	(void)dstOffset;
	return async_check(hStream) ?: array_copy(dstArray, U(srcHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
	(void)srcOffset;
	return array_copy(srcArray, U(dstHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoH_v2_ptds(void *dstHost, CUarray srcArray, size_t srcOffset,
				       size_t ByteCount)
{
	(void)srcOffset;
	return array_copy(srcArray, U(dstHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset,
				       size_t ByteCount, CUstream hStream)
{
	(void)srcOffset;
	return async_check(hStream) ?: array_copy(srcArray, U(dstHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dstHost, CUarray srcArray, size_t srcOffset,
					    size_t ByteCount, CUstream hStream)
{
	(void)srcOffset;
	return async_check(hStream) ?: array_copy(srcArray, U(dstHost), SIDE_HOST, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
				  size_t ByteCount)
{
	(void)dstOffset;
	return array_copy(dstArray, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
				       size_t ByteCount)
{
	(void)dstOffset;
	return array_copy(dstArray, U(srcDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
				  size_t ByteCount)
{
	(void)srcOffset;
	return array_copy(srcArray, U(dstDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
				       size_t ByteCount)
{
	(void)srcOffset;
	return array_copy(srcArray, U(dstDevice), SIDE_DEVICE, ByteCount);
}

MOCK_API CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray,
				  size_t srcOffset, size_t ByteCount)
{
	(void)dstOffset;
	(void)srcOffset;
	(void)ByteCount;
	return array_array_copy(dstArray, srcArray);
}

MOCK_API CUresult cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray,
				       size_t srcOffset, size_t ByteCount)
{
	(void)dstOffset;
	(void)srcOffset;
	(void)ByteCount;
	return array_array_copy(dstArray, srcArray);
}

MOCK_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
	return memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
	return memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
	return memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return async_check(hStream) ?: memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return async_check(hStream) ?: memcpy2d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	return memcpy3d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
	return memcpy3d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return async_check(hStream) ?: memcpy3d_impl(pCopy);
}

MOCK_API CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return async_check(hStream) ?: memcpy3d_impl(pCopy);
}

/* ------------------------------------------------------------------ */
/* sets                                                                 */

MOCK_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return memset_impl(dstDevice, 0, uc, 1, N, 1);
}

MOCK_API CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return memset_impl(dstDevice, 0, uc, 1, N, 1);
}

MOCK_API CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, uc, 1, N, 1);
}

MOCK_API CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				       CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, uc, 1, N, 1);
}

MOCK_API CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return memset_impl(dstDevice, 0, us, 2, N, 1);
}

MOCK_API CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return memset_impl(dstDevice, 0, us, 2, N, 1);
}

MOCK_API CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, us, 2, N, 1);
}

MOCK_API CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
					CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, us, 2, N, 1);
}

MOCK_API CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return memset_impl(dstDevice, 0, ui, 4, N, 1);
}

MOCK_API CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return memset_impl(dstDevice, 0, ui, 4, N, 1);
}

MOCK_API CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, ui, 4, N, 1);
}

MOCK_API CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
					CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, 0, ui, 4, N, 1);
}

MOCK_API CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
				  size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, uc, 1, Width, Height);
}

MOCK_API CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
				       size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, uc, 1, Width, Height);
}

MOCK_API CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
				    size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, uc, 1, Width, Height);
}

MOCK_API CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
					 size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, uc, 1, Width, Height);
}

MOCK_API CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
				   size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, us, 2, Width, Height);
}

MOCK_API CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
					size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, us, 2, Width, Height);
}

MOCK_API CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
				     size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, us, 2, Width, Height);
}

MOCK_API CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
					  size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, us, 2, Width, Height);
}

MOCK_API CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
				   size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, ui, 4, Width, Height);
}

MOCK_API CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
					size_t Width, size_t Height)
{
	return memset_impl(dstDevice, dstPitch, ui, 4, Width, Height);
}

MOCK_API CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
				     size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, ui, 4, Width, Height);
}

MOCK_API CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
					  size_t Width, size_t Height, CUstream hStream)
{
	return async_check(hStream) ?: memset_impl(dstDevice, dstPitch, ui, 4, Width, Height);
}

/* ------------------------------------------------------------------ */
/* allocation                                                           */

static CUresult dev_alloc(CUdeviceptr *dptr, size_t bytes)
{
	void *p;
	CUresult r;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	r = region_alloc(bytes, R_DEVICE, &p);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

static CUresult host_alloc(void **pp, size_t bytes)
{
	if (!pp)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return region_alloc(bytes, R_HOST, pp);
}

MOCK_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return async_check(hStream) ?: dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return async_check(hStream) ?: dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					  CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return async_check(hStream) ?: dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					       CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return async_check(hStream) ?: dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	(void)flags;
	return dev_alloc(dptr, bytesize);
}

MOCK_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				     size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch;

	if (!pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	pitch = (WidthInBytes + 511) & ~(size_t)511;
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pPitch = pitch;
	return dev_alloc(dptr, pitch * Height);
}

MOCK_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return host_alloc(pp, bytesize);
}

MOCK_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	(void)Flags;
	return host_alloc(pp, bytesize);
}

MOCK_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			      const CUmemAllocationProp *prop, unsigned long long flags)
{
	void *p;
	CUresult r;

	if (!handle || !prop || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = region_alloc(size, R_HANDLE, &p);
	if (r == CUDA_SUCCESS)
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return r;
}

MOCK_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return region_free(U(dptr), R_DEVICE);
}

MOCK_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return async_check(hStream) ?: region_free(U(dptr), R_DEVICE);
}

MOCK_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return async_check(hStream) ?: region_free(U(dptr), R_DEVICE);
}

MOCK_API CUresult cuMemFreeHost(void *p)
{
	return region_free(U(p), R_HOST);
}

MOCK_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	return region_free(U(handle), R_HANDLE);
}

/* ------------------------------------------------------------------ */
/* streams and events                                                   */

static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	struct mock_stream *s;

	if (!ph || flags > CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = MAGIC_STREAM;
	s->flags = flags;
	s->priority = priority;
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return stream_create(phStream, Flags, 0);
}

MOCK_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	return stream_create(phStream, flags, priority);
}

MOCK_API CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct mock_stream *s = (struct mock_stream *)hStream;

	if ((uintptr_t)s <= 2 || !stream_valid(hStream))
		return CUDA_ERROR_INVALID_HANDLE;
	s->magic = MAGIC_DEAD;
	free(s);
	return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream s)
{
	if (!stream_valid(s))
		return CUDA_ERROR_INVALID_HANDLE;
	sync_wait();
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuStreamSynchronize(CUstream hStream)
{
	return stream_sync(hStream);
}

MOCK_API CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	return stream_sync(hStream);
}

MOCK_API CUresult cuStreamQuery(CUstream hStream)
{
	return async_check(hStream);
}

MOCK_API CUresult cuStreamQuery_ptsz(CUstream hStream)
{
	return async_check(hStream);
}

static CUresult stream_wait_event(CUstream s, CUevent e)
{
	if (!event_valid(e))
		return CUDA_ERROR_INVALID_HANDLE;
	return async_check(s);
}

MOCK_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	(void)Flags;
	return stream_wait_event(hStream, hEvent);
}

MOCK_API CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	(void)Flags;
	return stream_wait_event(hStream, hEvent);
}

MOCK_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct mock_event *e;

	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = MAGIC_EVENT;
	e->flags = Flags;
	*phEvent = (CUevent)e;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuEventDestroy_v2(CUevent hEvent)
{
	struct mock_event *e = (struct mock_event *)hEvent;

	if (!event_valid(hEvent))
		return CUDA_ERROR_INVALID_HANDLE;
	e->magic = MAGIC_DEAD;
	free(e);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream s)
{
	if (!event_valid(e) || !stream_valid(s))
		return CUDA_ERROR_INVALID_HANDLE;
	((struct mock_event *)e)->recorded = 1;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return event_record(hEvent, hStream);
}

MOCK_API CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return event_record(hEvent, hStream);
}

MOCK_API CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	(void)flags;
	return event_record(hEvent, hStream);
}

MOCK_API CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	(void)flags;
	return event_record(hEvent, hStream);
}

MOCK_API CUresult cuEventSynchronize(CUevent hEvent)
{
	if (!event_valid(hEvent))
		return CUDA_ERROR_INVALID_HANDLE;
	sync_wait();
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuEventQuery(CUevent hEvent)
{
	if (!event_valid(hEvent))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* profiler markers                                                     */

static int profiling;

MOCK_API CUresult cuProfilerStart(void)
{
	__atomic_store_n(&profiling, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuProfilerStop(void)
{
	__atomic_store_n(&profiling, 0, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}
