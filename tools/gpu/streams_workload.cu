// Kernels on several streams in a known order, for checking the CUPTI agent
// and the merger on a real GPU:
//   streams_workload STREAMS KERNELS_PER_STREAM
// Kernel j of stream s is launched with grid (s * KERNELS + j + 1) blocks, so
// every GPU-side kernel record names the launch it must be linked to by its
// grid size alone. Prints one JSON line with what it did.
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char **argv)
{
	int ns = argc > 1 ? atoi(argv[1]) : 4, nk = argc > 2 ? atoi(argv[2]) : 250;
	cudaStream_t *s = new cudaStream_t[ns];
	int *out;

	if (cudaMalloc(&out, sizeof(int) * ns * nk) != cudaSuccess) {
		fprintf(stderr, "streams_workload: no CUDA device\n");
		return 1;
	}
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
