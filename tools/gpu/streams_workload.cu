// Kernels on several streams in a known order, for checking the CUPTI agent
// and the merger on a real GPU:
//   streams_workload STREAMS KERNELS_PER_STREAM [threads]
// Kernel j of stream s is launched with grid (s * KERNELS + j + 1) blocks, so
// every GPU-side kernel record names the launch it must be linked to by its
// grid size alone. With "threads", one thread per stream launches kernels
// that all look the same (1 block of 32 threads), started together; only
// how long they run tells the threads apart: thread t's spin for
// (t + 1) * 20 us. Prints one JSON line with what it did (with the thread
// ids and spins in the threads mode).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void tagged(int *out, int tag, int spin)
{
	long long t0 = clock64();
	while (clock64() - t0 < spin)
		;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[tag] = tag;
}

struct worker {
	pthread_t th;
	cudaStream_t s;
	int *out, nk, spin, tid;
	pthread_barrier_t *go;
};

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;

	w->tid = (int)syscall(SYS_gettid);
	pthread_barrier_wait(w->go);
	for (int j = 0; j < w->nk; j++)
		tagged<<<1, 32, 0, w->s>>>(w->out, j, w->spin);
	cudaStreamSynchronize(w->s);
	return NULL;
}

/* The threads mode: same-looking kernels from several threads at once. */
static int run_threads(int ns, int nk, int *out)
{
	struct worker *w = new struct worker[ns];
	pthread_barrier_t go;
	int clock_khz = 0;

	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	pthread_barrier_init(&go, NULL, (unsigned)ns);
	for (int i = 0; i < ns; i++) {
		w[i].out = out;
		w[i].nk = nk;
		w[i].go = &go;
		w[i].spin = (i + 1) * 20 * (clock_khz / 1000);	/* (i + 1) * 20 us */
		cudaStreamCreateWithFlags(&w[i].s, cudaStreamNonBlocking);
	}
	for (int i = 0; i < ns; i++)
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	for (int i = 0; i < ns; i++)
		pthread_join(w[i].th, NULL);
	if (cudaGetLastError() != cudaSuccess) {
		fprintf(stderr, "streams_workload: a launch failed\n");
		return 1;
	}
	printf("{\"pid\":%d,\"streams\":%d,\"kernels_per_stream\":%d,\"kernels\":%d,\"threads\":[",
	       getpid(), ns, nk, ns * nk);
	for (int i = 0; i < ns; i++)
		printf("%s{\"tid\":%d,\"spin_us\":%d}", i ? "," : "", w[i].tid, (i + 1) * 20);
	printf("]}\n");
	return 0;
}

int main(int argc, char **argv)
{
	int ns = argc > 1 ? atoi(argv[1]) : 4, nk = argc > 2 ? atoi(argv[2]) : 250;
	bool threads = argc > 3 && !strcmp(argv[3], "threads");
	cudaStream_t *s = new cudaStream_t[ns];
	int *out;

	if (cudaMalloc(&out, sizeof(int) * ns * nk) != cudaSuccess) {
		fprintf(stderr, "streams_workload: no CUDA device\n");
		return 1;
	}
	if (threads)
		return run_threads(ns, nk, out);
	for (int i = 0; i < ns; i++)
		cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking);
	for (int j = 0; j < nk; j++)
		for (int i = 0; i < ns; i++)
			tagged<<<i * nk + j + 1, 32, 0, s[i]>>>(out, i * nk + j, 2000);
	for (int i = 0; i < ns; i++)
		cudaStreamSynchronize(s[i]);
	if (cudaGetLastError() != cudaSuccess) {
		fprintf(stderr, "streams_workload: a launch failed\n");
		return 1;
	}
	printf("{\"pid\":%d,\"streams\":%d,\"kernels_per_stream\":%d,\"kernels\":%d}\n", getpid(), ns, nk,
	       ns * nk);
	return 0;
}
