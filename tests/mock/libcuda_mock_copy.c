// SPDX-License-Identifier: MIT
/*
 * The mock libcuda's copies and sets: they move bytes between ranges the
 * memory registry (libcuda_mock_mem.c) vouches for, or pageable host
 * memory, and report their GPU work.
 */
#include "libcuda_mock.h"

/* ------------------------------------------------------------------ */
/* moving and setting bytes                                             */

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
/* copies                                                               */

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
