// Empty-kernel launch loop for overhead measurements:
//   launch_loop N [sync_every]
// Launches an empty kernel N times with the runtime API (<<<>>>, which
// reaches libcuda's cuLaunchKernel), synchronizing the stream every
// sync_every launches (0: only at the end), and prints one JSON line with
// the wall time per launch of the loop.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, every = argc > 2 ? atol(argv[2]) : 0;
	cudaStream_t s;

	if (cudaStreamCreate(&s) != cudaSuccess) {
		fprintf(stderr, "launch_loop: no CUDA device\n");
		return 1;
	}
	/* warm up: module load, first launch */
	for (int i = 0; i < 100; i++)
		empty_kernel<<<1, 1, 0, s>>>();
	cudaStreamSynchronize(s);
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++) {
		empty_kernel<<<1, 1, 0, s>>>();
		if (every && (i + 1) % every == 0)
			cudaStreamSynchronize(s);
	}
	cudaStreamSynchronize(s);
	auto t1 = std::chrono::steady_clock::now();
	double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
	if (cudaGetLastError() != cudaSuccess) {
		fprintf(stderr, "launch_loop: launch failed\n");
		return 1;
	}
	printf("{\"launches\":%ld,\"sync_every\":%ld,\"ns_per_launch\":%.1f}\n", n, every, ns / n);
	return 0;
}
