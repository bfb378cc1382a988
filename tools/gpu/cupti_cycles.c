// SPDX-License-Identifier: MIT
/*
 * CUPTI alone, started and finalized again and again in one process, with
 * no code of gtrace-bpf's: how much of a job's memory growth over attach
 * cycles (tools/gpu/attach_check.sh) is CUPTI's and the driver's own.
 *
 *   gcc -O2 -I$CUDA/include tools/gpu/cupti_cycles.c -L$CUDA/lib64 -lcupti -lcuda -o cc
 *   ./cc [CYCLES] [LAUNCHES] [MODULES] [THREADS] [PARTS]
 *
 * Each cycle does what the agent does while attached, in one thread: the
 * activity kinds it records (kernels, copies, sets, driver API records of
 * the launches), a subscriber with the driver API domain, LAUNCHES launches
 * of an empty kernel and a copy, a flush, then cuptiFinalize; then as many
 * launches without CUPTI. After each cycle one line: the process' resident
 * and anonymous memory (kB), its mappings and threads, and the launches
 * without CUPTI timed (ns a launch, their mean): whether CUPTI leaves the
 * driver's launch slower after its finalize. MODULES (1 by default)
 * modules of one kernel each, launched in turn: whether what a cycle leaves
 * grows with the code CUPTI instruments (a framework loads hundreds).
 * THREADS (0 by default) more threads, made once and living through every
 * cycle (as a framework's: PyTorch's autograd thread launches the backward
 * pass), each launching as many again on a stream of its own: whether what
 * a cycle leaves grows with the threads that called CUDA under CUPTI. Each
 * line also gives the C heap's memory in use and free (glibc's mallinfo2):
 * held memory against memory the allocator keeps. PARTS (31 by default),
 * which of the agent's uses of CUPTI a cycle makes, to tell which one leaves
 * memory held after cuptiFinalize: 1 kernel records, 2 copies, 4 sets,
 * 8 driver API records, 16 a subscriber with the driver API domain (0: the
 * activity callbacks registered and CUPTI finalized, nothing else); 32 the
 * agent's idle detach: no cuptiFinalize, CUPTI left loaded with its kinds
 * off and the subscriber gone, the callbacks registered once (whether an
 * idle CUPTI keeps memory from cycle to cycle).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>

#define BUF_SIZE (4u << 20)

#define MAX_MODULES 1024

static const char ptx[] =
	".version 7.0\n.target sm_75\n.address_size 64\n"
	".visible .entry empty() { ret; }\n";

static double launch_ns;	/* the last work()'s launches, ns a launch */

static unsigned long records;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (valid && cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		records++;
	free(buf);
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

static long field(const char *path, const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n)) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long lines(const char *path)
{
	long n = 0;
	int c;
	FILE *f = fopen(path, "r");

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

#define CK(x)                                                                         \
	do {                                                                          \
		if ((x) != 0) {                                                       \
			fprintf(stderr, "cupti_cycles: %s failed (line %d)\n", #x, __LINE__); \
			return 1;                                                     \
		}                                                                     \
	} while (0)

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* The THREADS launchers: each waits at go, launches on its stream, waits at
 * done; until stop. */
struct launcher {
	pthread_t t;
	CUcontext ctx;
	CUstream s;
	CUfunction *fn;
	int nfn, launches;
};

static pthread_barrier_t go, done;
static volatile int stop;

static void *launcher(void *arg)
{
	struct launcher *l = arg;

	if (cuCtxSetCurrent(l->ctx) || cuStreamCreate(&l->s, CU_STREAM_NON_BLOCKING))
		l->launches = -1;
	for (;;) {
		pthread_barrier_wait(&go);
		if (stop)
			return NULL;
		for (int i = 0; i < l->launches; i++)
			if (cuLaunchKernel(l->fn[i % l->nfn], 1, 1, 1, 32, 1, 1, 0, l->s, NULL, NULL)) {
				l->launches = -1;
				break;
			}
		if (l->launches >= 0 && cuStreamSynchronize(l->s))
			l->launches = -1;
		pthread_barrier_wait(&done);
	}
}

static void heap(long *in_use_kb, long *free_kb)
{
	struct mallinfo2 m = mallinfo2();

	*in_use_kb = (long)(m.uordblks >> 10);
	*free_kb = (long)(m.fordblks >> 10);
}

static int work(CUfunction *fn, int nfn, CUdeviceptr d, void *h, int launches)
{
	double t0 = now_ns();

	for (int i = 0; i < launches; i++)
		CK(cuLaunchKernel(fn[i % nfn], 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	launch_ns = (now_ns() - t0) / (launches > 0 ? launches : 1);
	CK(cuMemcpyHtoD(d, h, 4096));
	CK(cuCtxSynchronize());
	return 0;
}

/* work() on this thread while the launchers do theirs; a launcher that
 * failed fails the cycle. */
static int work_all(CUfunction *fn, int nfn, CUdeviceptr d, void *h, int launches, struct launcher *thr, int nthr)
{
	int err;

	pthread_barrier_wait(&go);
	err = work(fn, nfn, d, h, launches);
	pthread_barrier_wait(&done);
	for (int t = 0; t < nthr; t++)
		if (thr[t].launches < 0) {
			fprintf(stderr, "cupti_cycles: launcher %d failed\n", t);
			return 1;
		}
	return err;
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 10, launches = argc > 2 ? atoi(argv[2]) : 20000;
	int nmod = argc > 3 ? atoi(argv[3]) : 1, nthr = argc > 4 ? atoi(argv[4]) : 0;
	int parts = argc > 5 ? atoi(argv[5]) : 31;
	static struct launcher thr[64];
	long in_use, freed;
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_DRIVER,
	};
	static char host[4096];
	CUdevice dev;
	CUcontext ctx;
	static CUmodule mod[MAX_MODULES];
	static CUfunction fn[MAX_MODULES];
	CUdeviceptr d;

	if (nmod < 1 || nmod > MAX_MODULES || nthr < 0 || nthr > 64 || parts < 0 || parts > 63) {
		fprintf(stderr, "cupti_cycles: MODULES must be 1 to %d, THREADS 0 to 64, PARTS 0 to 63\n", MAX_MODULES);
		return 2;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	for (int m = 0; m < nmod; m++) {
		CK(cuModuleLoadData(&mod[m], ptx));
		CK(cuModuleGetFunction(&fn[m], mod[m], "empty"));
	}
	CK(cuMemAlloc(&d, 4096));
	CK(pthread_barrier_init(&go, NULL, (unsigned)nthr + 1) || pthread_barrier_init(&done, NULL, (unsigned)nthr + 1));
	for (int t = 0; t < nthr; t++) {
		thr[t] = (struct launcher){ .ctx = ctx, .fn = fn, .nfn = nmod, .launches = launches };
		CK(pthread_create(&thr[t].t, NULL, launcher, &thr[t]));
	}
	CK(work_all(fn, nmod, d, host, launches, thr, nthr));
	heap(&in_use, &freed);
	printf("cycle 0 (no CUPTI, %d modules, %d threads more, parts %d): rss_kb %ld anon_kb %ld heap_in_use_kb %ld heap_free_kb "
	       "%ld maps %ld threads %ld launch_ns %.0f\n", nmod, nthr, parts, field("/proc/self/status", "VmRSS:"),
	       field("/proc/self/smaps_rollup", "Anonymous:"), in_use, freed, lines("/proc/self/maps"),
	       field("/proc/self/status", "Threads:"), launch_ns);
	for (int c = 1; c <= cycles; c++) {
		CUpti_SubscriberHandle sub;

		if (!(parts & 32) || c == 1)
			CK(cuptiActivityRegisterCallbacks(requested, completed));
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (parts & (1 << k))
				CK(cuptiActivityEnable(kinds[k]));
		if (parts & 16) {
			CK(cuptiSubscribe(&sub, callback, NULL));
			CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
		}
		CK(work_all(fn, nmod, d, host, launches, thr, nthr));
		CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
		if (parts & 16) {
			CK(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API));
			CK(cuptiUnsubscribe(sub));
		}
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (parts & (1 << k))
				CK(cuptiActivityDisable(kinds[k]));
		if (!(parts & 32))
			CK(cuptiFinalize());
		CK(work_all(fn, nmod, d, host, launches, thr, nthr));
		heap(&in_use, &freed);
		printf("cycle %d: rss_kb %ld anon_kb %ld heap_in_use_kb %ld heap_free_kb %ld maps %ld threads %ld records "
		       "%lu launch_ns %.0f\n", c, field("/proc/self/status", "VmRSS:"),
		       field("/proc/self/smaps_rollup", "Anonymous:"), in_use, freed, lines("/proc/self/maps"),
		       field("/proc/self/status", "Threads:"), records, launch_ns);
		fflush(stdout);
	}
	stop = 1;
	pthread_barrier_wait(&go);
	for (int t = 0; t < nthr; t++)
		pthread_join(thr[t].t, NULL);
	return 0;
}
