// SPDX-License-Identifier: MIT
/*
 * The mock libcuda's memory: the registry of device, pinned-host and
 * handle allocations that copies and sets check their ranges against,
 * and the calls that allocate and free.
 */
#include "libcuda_mock.h"

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
int region_lookup_dev(uintptr_t p, size_t n, int *dev)
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
bool dev_range_ok(uintptr_t p, size_t n)
{
	return region_lookup(p, n) == 1;
}

/* A host-side range: inside an allocation when it is one of ours (pinned),
 * else any non-NULL pointer (pageable memory the caller owns). */
bool host_range_ok(uintptr_t p, size_t n)
{
	if (!p)
		return false;
	return region_lookup(p, n) >= 0;
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
