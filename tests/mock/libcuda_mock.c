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
 *
 * The parts (libcuda_mock.h says what they share): this file (timing,
 * contexts, initialization, errors, devices, streams, events, profiler
 * markers), libcuda_mock_inject.c (the GPU work the CUPTI agent sees),
 * libcuda_mock_mem.c (the memory registry, allocation),
 * libcuda_mock_copy.c (copies and sets), libcuda_mock_module.c (modules,
 * libraries, kernels, launches).
 */
#include "libcuda_mock.h"

/* ------------------------------------------------------------------ */
/* timing                                                               */

static unsigned long sync_us = 2000;
static pthread_once_t sync_once = PTHREAD_ONCE_INIT;

unsigned long env_ulong(const char *name, unsigned long def)
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

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* contexts, streams, events                                            */

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

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static struct mock_ctx primary_ctx[MOCK_NDEV] = {
	{ .magic = MAGIC_CTX, .dev = 0, .primary = 1, .id = 1 },
	{ .magic = MAGIC_CTX, .dev = 1, .primary = 1, .id = 2 },
};
static unsigned next_ctx_id = MOCK_NDEV + 1;	/* of created contexts */
/* The thread's context stack: current_ctx is its top, ctx_stack the rest. */
__thread CUcontext current_ctx;
static __thread CUcontext ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

bool ctx_valid(CUcontext c)
{
	return c && ((const struct mock_ctx *)c)->magic == MAGIC_CTX;
}

/* NULL, CU_STREAM_LEGACY (0x1) and CU_STREAM_PER_THREAD (0x2) are valid
 * without being created. */
bool stream_valid(CUstream s)
{
	if ((uintptr_t)s <= 2)
		return true;
	return ((const struct mock_stream *)s)->magic == MAGIC_STREAM;
}

CUresult async_check(CUstream s)
{
	return stream_valid(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static bool event_valid(CUevent e)
{
	return e && ((const struct mock_event *)e)->magic == MAGIC_EVENT;
}

bool have_ctx(void)
{
	return current_ctx != NULL;
}

static bool dev_valid(CUdevice dev)
{
	return dev >= 0 && dev < MOCK_NDEV;
}

/* The current context's device and CUPTI context id (0, 0 without one). */
void current_ids(unsigned *device, unsigned *context)
{
	const struct mock_ctx *c = (const void *)current_ctx;

	*device = c ? (unsigned)c->dev : 0;
	*context = c ? c->id : 0;
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

bool is_init(void)
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
