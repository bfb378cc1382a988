// Workloads of the overhead benchmark (tools/bench/overhead.sh):
//   workload MODE N
// MODE:
//   launch   N empty-kernel launches with <<<>>> (the runtime reaches libcuda's
//            cuLaunchKernel), one stream, synchronized at the end
//   driver   N launches of the same kernel through the driver API's
//            cuLaunchKernel, called directly
//   sync     N times: one launch, then cudaStreamSynchronize
//   memcpy   N round trips of 4 MiB: cudaMemcpy host->device, device->host
//            (pinned host memory)
//   streams  GPU-bound: N kernels of ~1 ms (one spinning thread each) on each
//            of 4 streams, synchronized at the end
// Prints one JSON line: {"mode":..,"ops":..,"ns_per_op":..,"ms":..}, where
// ops counts launches (launch, driver, sync, streams) or round trips (memcpy)
// and the time is that of the measured loop only (after a warm-up), so that
// process start and a tracer's attach are left out.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

__global__ void spin_kernel(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

static void die(const char *what, cudaError_t e)
{
	fprintf(stderr, "workload: %s: %s\n", what, cudaGetErrorString(e));
	exit(1);
}

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) die(#call, e_); } while (0)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "launch";
	long n = argc > 2 ? atol(argv[2]) : 100000, ops = n, warm = 100;
	const size_t bytes = 4u << 20;
	cudaStream_t s[4];
	CUfunction fn = NULL;
	long long cycles = 0;
	void *host = NULL, *dev = NULL;

	if (n <= 0 || argc > 3) {
		fprintf(stderr, "usage: workload launch|driver|sync|memcpy|streams N\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		CK(cudaStreamCreate(&s[i]));
	if (!strcmp(mode, "driver")) {
		CK(cudaGetFuncBySymbol(&fn, (const void *)empty_kernel));
	} else if (!strcmp(mode, "memcpy")) {
		CK(cudaMallocHost(&host, bytes));
		CK(cudaMalloc(&dev, bytes));
		memset(host, 1, bytes);
		warm = 10;
	} else if (!strcmp(mode, "streams")) {
		int khz = 0;

		CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
		cycles = (long long)khz;	/* cycles in 1 ms */
		ops = 4 * n;
		warm = 1;
	} else if (strcmp(mode, "launch") && strcmp(mode, "sync")) {
		fprintf(stderr, "workload: unknown mode '%s'\n", mode);
		return 2;
	}

	auto step = [&](long i) {
		if (!strcmp(mode, "launch")) {
			empty_kernel<<<1, 1, 0, s[0]>>>();
		} else if (!strcmp(mode, "driver")) {
			CUresult r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)s[0], NULL, NULL);
			if (r != CUDA_SUCCESS) {
				fprintf(stderr, "workload: cuLaunchKernel: %d\n", (int)r);
				exit(1);
			}
		} else if (!strcmp(mode, "sync")) {
			empty_kernel<<<1, 1, 0, s[0]>>>();
			CK(cudaStreamSynchronize(s[0]));
		} else if (!strcmp(mode, "memcpy")) {
			CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
			CK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
		} else {
			for (int k = 0; k < 4; k++)
				spin_kernel<<<1, 1, 0, s[k]>>>(cycles);
		}
		(void)i;
	};
	for (long i = 0; i < warm; i++)
		step(i);
	CK(cudaDeviceSynchronize());
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++)
		step(i);
	CK(cudaDeviceSynchronize());
	auto t1 = std::chrono::steady_clock::now();
	CK(cudaGetLastError());
	double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
	printf("{\"mode\":\"%s\",\"ops\":%ld,\"ns_per_op\":%.1f,\"ms\":%.3f}\n", mode, ops, ns / ops,
	       ns / 1e6);
	return 0;
}
