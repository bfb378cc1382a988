// A CUDA runtime-API program with a known number of launches, copies and
// stream syncs, for checking the recorder on a real GPU:
//   runtime_workload LAUNCHES COPIES SYNCS
// Prints one JSON line with what it did.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

template <typename T> __global__ void scale(T *x, T f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= f;
}

#define CHECK(call)                                                                    \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	long launches = argc > 1 ? atol(argv[1]) : 1000;
	long copies = argc > 2 ? atol(argv[2]) : 100;
	long syncs = argc > 3 ? atol(argv[3]) : 50;
	const int n = 1 << 16;
	const size_t bytes = n * sizeof(float);
	float *x, *y, *h;
	cudaStream_t s;

	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMallocHost(&h, bytes));
	for (int i = 0; i < n; i++)
		h[i] = 1.0f;
	for (long i = 0; i < copies; i++)
		CHECK(cudaMemcpy(x, h, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(y, 0, bytes));
	for (long i = 0; i < launches; i++) {
		if (i % 2)
			saxpy<<<n / 256, 256, 0, s>>>(2.0f, x, y, n);
		else
			scale<float><<<n / 128, 128, 0, s>>>(y, 1.0f, n);
		if (i < syncs)
			CHECK(cudaStreamSynchronize(s));
	}
	for (long i = launches; i < syncs; i++)
		CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, y, bytes, cudaMemcpyDeviceToHost));
	printf("{\"pid\":%d,\"launches\":%ld,\"copies_htod\":%ld,\"copies_dtoh\":1,\"stream_syncs\":%ld,"
	       "\"bytes\":%zu,\"y0\":%g}\n", getpid(), launches, copies, syncs, bytes, h[0]);
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFreeHost(h));
	CHECK(cudaStreamDestroy(s));
	return 0;
}
