// SPDX-License-Identifier: MIT
/*
 * analyze_workloads: one small CUDA program per verdict of gtrace-bpf
 * analyze, for tools/gpu/analyze_check.sh on the GPU machine.
 *
 *   analyze_workloads MODE
 *
 *   launch     20000 launches of an empty 1-block kernel, 3 us of host work
 *              before each, as a framework's (launch-bound: each kernel runs
 *              shorter than the time between launches)
 *   gemm       40 tiled 2048^3 SGEMMs on one stream (compute: a GEMM kernel)
 *   copy       30 passes of a grid-stride copy kernel over 1 GiB (memory:
 *              bandwidth-bound, an elementwise kernel)
 *   pageable   40 cudaMemcpyAsync of 16 MiB from malloc'd (pageable) memory,
 *              a kernel after each (cuda_memcpy_async)
 *   syncloop   3000 x (a 10 us kernel, cudaStreamSynchronize) (sync_in_loop)
 *   onestream  200 x (an async 8 MiB copy from pinned memory, an independent
 *              kernel), all on one stream (single_stream: they could overlap)
 *   hoststall  20 steps of 40 kernels of ~200 us, a synchronize, then 20 ms of
 *              host work (host_stall)
 *
 * The last line on stdout is one JSON object: the mode, the device's name
 * and SM count (for analyze --sms), what the program did, its wall time.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "analyze_workloads: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__global__ void empty_kernel(void)
{
}

#define TILE 32
/* C = A * B, n x n, shared-memory tiles */
__global__ void gemm_tiled_kernel(const float *a, const float *b, float *c, int n)
{
	__shared__ float ta[TILE][TILE], tb[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0;

	for (int t = 0; t < n; t += TILE) {
		ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
		tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
		__syncthreads();
	}
	c[row * n + col] = acc;
}

__global__ void copy_kernel(const float4 *src, float4 *dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

/* spins about ns on the GPU */
__global__ void spin_kernel(long long ns, float *out)
{
	long long t0 = clock64();
	/* clock64 counts SM cycles: about 1.5-2 GHz, ns * 2 cycles is >= ns */
	while (clock64() - t0 < ns * 2)
		;
	if (out && threadIdx.x == 0)
		out[blockIdx.x] = (float)t0;
}

__global__ void scale_kernel(float *x, size_t n, float f)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] *= f;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	cudaDeviceProp prop;
	cudaStream_t s;
	double t0, t1;
	long count = 0;
	int sms;

	CK(cudaGetDeviceProperties(&prop, 0));
	sms = prop.multiProcessorCount;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaDeviceSynchronize());
	t0 = now_s();
	if (!strcmp(mode, "launch")) {
		for (count = 0; count < 20000; count++) {
			double until = now_s() + 3e-6;

			while (now_s() < until)
				;
			empty_kernel<<<1, 32, 0, s>>>();
		}
		CK(cudaStreamSynchronize(s));
	} else if (!strcmp(mode, "gemm")) {
		int n = 2048;
		float *a, *b, *c;

		CK(cudaMalloc(&a, (size_t)n * n * 4));
		CK(cudaMalloc(&b, (size_t)n * n * 4));
		CK(cudaMalloc(&c, (size_t)n * n * 4));
		CK(cudaMemsetAsync(a, 0, (size_t)n * n * 4, s));
		CK(cudaMemsetAsync(b, 0, (size_t)n * n * 4, s));
		for (count = 0; count < 40; count++)
			gemm_tiled_kernel<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE), 0, s>>>(a, b, c, n);
		CK(cudaStreamSynchronize(s));
	} else if (!strcmp(mode, "copy")) {
		size_t bytes = 1ull << 30, n = bytes / 16;
		float4 *src, *dst;

		CK(cudaMalloc(&src, bytes));
		CK(cudaMalloc(&dst, bytes));
		CK(cudaMemsetAsync(src, 1, bytes, s));
		for (count = 0; count < 30; count++)
			copy_kernel<<<sms * 8, 512, 0, s>>>(src, dst, n);
		CK(cudaStreamSynchronize(s));
	} else if (!strcmp(mode, "pageable")) {
		size_t bytes = 16u << 20;
		char *h = (char *)malloc(bytes);
		float *d;

		if (!h)
			return 1;
		memset(h, 1, bytes);
		CK(cudaMalloc(&d, bytes));
		for (count = 0; count < 40; count++) {
			CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
			scale_kernel<<<sms * 4, 256, 0, s>>>(d, bytes / 4, 1.0f);
		}
		CK(cudaStreamSynchronize(s));
		free(h);
	} else if (!strcmp(mode, "syncloop")) {
		for (count = 0; count < 3000; count++) {
			spin_kernel<<<sms, 128, 0, s>>>(10000, NULL);
			CK(cudaStreamSynchronize(s));
		}
	} else if (!strcmp(mode, "onestream")) {
		size_t bytes = 8u << 20;
		char *h;
		float *d, *w;

		CK(cudaMallocHost(&h, bytes));
		CK(cudaMalloc(&d, bytes));
		CK(cudaMalloc(&w, (size_t)sms * 4));
		memset(h, 1, bytes);
		for (count = 0; count < 200; count++) {
			/* the copy fills d, the kernel works on w: independent, but
			 * one stream runs them one after the other */
			CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
			spin_kernel<<<sms, 128, 0, s>>>(300000, w);
		}
		CK(cudaStreamSynchronize(s));
	} else if (!strcmp(mode, "hoststall")) {
		for (int step = 0; step < 20; step++) {
			for (int k = 0; k < 40; k++, count++)
				spin_kernel<<<sms, 128, 0, s>>>(200000, NULL);
			CK(cudaStreamSynchronize(s));
			/* host work between steps: on the CPU, outside CUDA */
			double until = now_s() + 0.020;

			while (now_s() < until)
				;
		}
	} else {
		fprintf(stderr, "usage: analyze_workloads launch|gemm|copy|pageable|syncloop|onestream|hoststall\n");
		return 2;
	}
	CK(cudaDeviceSynchronize());
	t1 = now_s();
	printf("{\"mode\":\"%s\",\"device\":\"%s\",\"sms\":%d,\"count\":%ld,\"wall_s\":%.6f}\n", mode,
	       prop.name, sms, count, t1 - t0);
	return 0;
}
