/* SPDX-License-Identifier: MIT */
/*
 * The libcuda symbols gtrace-bpf probes, as one X-macro table shared by the
 * attacher (which program, which probes) and the decoder (what the raw
 * arguments mean).  Types and macros only, usable from BPF and userspace.
 *
 * GT_API(sym, cls, prog, ret, out, str, a, b, c, d, kind)
 *   sym   exported libcuda symbol
 *   cls   enum gt_api_class: what the call is, how the decoder reads it
 *   prog  enum gt_prog: which BPF entry program records it
 *   ret   enum gt_ret_prog: which exit program, if any
 *   out   index of an out-pointer argument whose target the exit reads, -1 none
 *   str   index of a const char * argument the entry copies, -1 none
 *   a..d  argument indices whose meaning depends on cls (-1 none):
 *         MEMCPY       a=dst b=src c=bytes d=stream           kind=enum gt_copy_kind
 *         MEMCPY2D/3D  struct copied by BPF: args[0]=src memtype [1]=dst memtype
 *                      [2]=bytes [3]=stream [4]=src [5]=dst; d=stream arg
 *         MEMSET       a=dst b=count or width c=height (2D) d=stream   kind=element size
 *         ALLOC        a=bytes b=height (pitch) d=stream, out=pointer
 *         FREE         a=pointer d=stream
 *         SYNC/QUERY   a=first handle b=second handle d=stream
 *         GRAPH        a=graph exec d=stream
 *         other        a=main handle argument
 */
#ifndef GTRACE_API_H
#define GTRACE_API_H

enum gt_api_class {
	GT_CLS_NONE = 0,
	GT_CLS_LAUNCH,		/* struct gt_launch */
	GT_CLS_GRAPH,		/* cuGraphLaunch */
	GT_CLS_MEMCPY,
	GT_CLS_MEMCPY2D,
	GT_CLS_MEMCPY3D,
	GT_CLS_MEMSET,
	GT_CLS_ALLOC,
	GT_CLS_FREE,
	GT_CLS_SYNC,		/* waits: ctx/stream/event synchronize */
	GT_CLS_STREAM_WAIT,	/* cuStreamWaitEvent: a=stream b=event */
	GT_CLS_EVENT_RECORD,	/* cuEventRecord: a=event b=stream */
	GT_CLS_QUERY,		/* cuStreamQuery / cuEventQuery */
	GT_CLS_MODULE_LOAD,	/* out = new module/library, str = path where given */
	GT_CLS_MODULE_UNLOAD,	/* a = module/library */
	GT_CLS_GET_FUNC,	/* out = function/kernel handle, a = module/library, str = name */
	GT_CLS_KERNEL_FUNC,	/* out = function of kernel a (cuKernelGetFunction) */
	GT_CLS_FUNC_NAME,	/* exit string = name of handle a (cuFuncGetName) */
	GT_CLS_CTX,		/* context lifecycle, out = new context where created */
	GT_CLS_STREAM,		/* stream lifecycle, out = new stream where created */
	GT_CLS_EVENT,		/* event lifecycle, out = new event where created */
	GT_CLS_MARKER,		/* cuProfilerStart/Stop */
	GT_CLS_INIT,		/* cuInit */
	GT_CLS__COUNT,
};

enum gt_prog {
	GT_P_CALL = 0,		/* raw registers -> struct gt_call */
	GT_P_LAUNCH,		/* cuLaunchKernel signature, stack args -> struct gt_launch */
	GT_P_LAUNCH_EX,		/* CUlaunchConfig -> struct gt_launch */
	GT_P_CALL_STR,		/* raw registers + string -> struct gt_call_str */
	GT_P_MEMCPY2D,		/* CUDA_MEMCPY2D fields -> struct gt_call */
	GT_P_MEMCPY3D,		/* CUDA_MEMCPY3D fields -> struct gt_call */
	GT_P__COUNT,
};

enum gt_ret_prog {
	GT_R_NONE = 0,		/* entry only */
	GT_R_RET,		/* struct gt_ret */
	GT_R_RET_STR,		/* struct gt_ret_str (string behind the out-pointer) */
};

enum gt_copy_kind {
	GT_COPY_UNKNOWN = 0,
	GT_COPY_HTOD,
	GT_COPY_DTOH,
	GT_COPY_DTOD,
	GT_COPY_HTOH,
	GT_COPY_PTOP,		/* peer: device to device across contexts */
	GT_COPY_DEFAULT,	/* unified addressing: direction from the pointers */
	GT_COPY_HTOA,
	GT_COPY_ATOH,
	GT_COPY_DTOA,
	GT_COPY_ATOD,
	GT_COPY_ATOA,
	GT_COPY__COUNT,
};

/* Layout of a uprobe's BPF cookie (set by the attacher, read in BPF). */
#define GT_COOKIE_API(c)	((unsigned)((c) & 0xffff))
#define GT_COOKIE_OUT(c)	((int)(((c) >> 16) & 0xf) - 1)
#define GT_COOKIE_STR(c)	((int)(((c) >> 20) & 0xf) - 1)
#define GT_COOKIE_STREAM(c)	((int)(((c) >> 24) & 0xf) - 1)
#define GT_COOKIE_COOP		(1ull << 28)
#define GT_COOKIE_NOEXIT	(1ull << 29)	/* no return probe on this launch */
#define GT_COOKIE_HOT		(1ull << 30)	/* a hot call (gt_api__hot): gated by light mode */
#define GT_COOKIE_RANGE_OPEN	(1ull << 31)	/* entry opens a capture range (cuProfilerStart) */
#define GT_COOKIE_RANGE_CLOSE	(1ull << 32)	/* exit closes it (cuProfilerStop) */
/* The overhead budget's shedding (daemon --budget, light mode): a probe with
 * SWAP records its call only while its generation (GEN) is the one in force
 * for its api (api_state in bpf/cuda.bpf.c), so that an always-on link can be
 * replaced by one of the other generation without losing or doubling calls. */
#define GT_COOKIE_SWAP		(1ull << 33)
#define GT_COOKIE_GEN		(1ull << 34)
#define GT_COOKIE_GEN_OF(c)	((unsigned)(((c) >> 34) & 1))
/* --stacks: the entry takes the calling thread's user stack (struct
 * gt_ustack, before the entry record) */
#define GT_COOKIE_STACK		(1ull << 35)
/* --stacks all, a hot call: the stack is taken once per call site of a
 * thread (its return address and its caller's); later calls from there
 * send a GT_REC_USTACK_SAME */
#define GT_COOKIE_STACK_CACHE	(1ull << 36)
/* --stacks: a call whose entry takes no stack takes it at its exit when it
 * failed (struct gt_ustack flagged GT_STACK_AT_EXIT, before the exit record) */
#define GT_COOKIE_STACK_FAIL	(1ull << 37)

/* api_state[api], one byte per api, written by the recorder during a swap:
 *   GEN   the generation whose probes record the api now;
 *   PAIR  old and new links are both attached: at each hit the new one's
 *         program, which the kernel runs first (newest consumer first), hands
 *         its reading of GEN (or, at an exit, of the call's mark) to the old
 *         one's through the thread's swap slot, so both decide alike even
 *         when GEN flips between them;
 *   NEW   the new links' generation (which program hands on, which follows);
 *   MARK  the api's calls are marked at entry (recorded or not, by which
 *         generation) and their exits follow the mark: an exit is recorded
 *         exactly when its entry was, across the flip, and for a shed api
 *         across the window's gate and detach;
 *   STRICT with MARK, an exit without a mark is not recorded (a shed api: no
 *         entry program saw the call); without, GEN decides (the call entered
 *         before the marking began). */
#define GT_SW_GEN		0x1
#define GT_SW_PAIR		0x2
#define GT_SW_NEW		0x4
#define GT_SW_MARK		0x8
#define GT_SW_STRICT		0x10
#define GT_SW_APIS		256	/* api_state's size: every enum gt_api fits */
#define GT_COOKIE_MAKE(api, out, str, stream) \
	((unsigned long long)(api) | ((unsigned long long)((out) + 1) << 16) | \
	 ((unsigned long long)((str) + 1) << 20) | ((unsigned long long)((stream) + 1) << 24))

#define GT_NA (-1)	/* argument not present */
#define GT_API_TABLE(X) \
	/* launches */ \
	X(cuLaunchKernel,             LAUNCH, LAUNCH,    RET, GT_NA, GT_NA,  GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLaunchKernel_ptsz,        LAUNCH, LAUNCH,    RET, GT_NA, GT_NA,  GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLaunchKernelEx,           LAUNCH, LAUNCH_EX, RET, GT_NA, GT_NA,  GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLaunchKernelEx_ptsz,      LAUNCH, LAUNCH_EX, RET, GT_NA, GT_NA,  GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLaunchCooperativeKernel,  LAUNCH, LAUNCH,    RET, GT_NA, GT_NA,  GT_NA, GT_NA, GT_NA, GT_NA, 1) \
	X(cuLaunchCooperativeKernel_ptsz, LAUNCH, LAUNCH, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 1) \
	X(cuGraphLaunch,              GRAPH,  CALL,      RET, GT_NA, GT_NA,  0, GT_NA, GT_NA, 1, 0) \
	X(cuGraphLaunch_ptsz,         GRAPH,  CALL,      RET, GT_NA, GT_NA,  0, GT_NA, GT_NA, 1, 0) \
	/* copies: (dst, src, bytes[, stream]) */ \
	X(cuMemcpy,                   MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DEFAULT) \
	X(cuMemcpy_ptds,              MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DEFAULT) \
	X(cuMemcpyAsync,              MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DEFAULT) \
	X(cuMemcpyAsync_ptsz,         MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DEFAULT) \
	X(cuMemcpyHtoD_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_HTOD) \
	X(cuMemcpyHtoD_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_HTOD) \
	X(cuMemcpyHtoDAsync_v2,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_HTOD) \
	X(cuMemcpyHtoDAsync_v2_ptsz,  MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_HTOD) \
	X(cuMemcpyDtoH_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DTOH) \
	X(cuMemcpyDtoH_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DTOH) \
	X(cuMemcpyDtoHAsync_v2,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DTOH) \
	X(cuMemcpyDtoHAsync_v2_ptsz,  MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DTOH) \
	X(cuMemcpyDtoD_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DTOD) \
	X(cuMemcpyDtoD_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, GT_NA, GT_COPY_DTOD) \
	X(cuMemcpyDtoDAsync_v2,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DTOD) \
	X(cuMemcpyDtoDAsync_v2_ptsz,  MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 2, 3, GT_COPY_DTOD) \
	/* peer: (dst, dstCtx, src, srcCtx, bytes[, stream]) */ \
	X(cuMemcpyPeer,               MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, GT_NA, GT_COPY_PTOP) \
	X(cuMemcpyPeer_ptds,          MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, GT_NA, GT_COPY_PTOP) \
	X(cuMemcpyPeerAsync,          MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, 5, GT_COPY_PTOP) \
	X(cuMemcpyPeerAsync_ptsz,     MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, 5, GT_COPY_PTOP) \
	/* arrays: HtoA(dstArr, off, src, bytes) AtoH(dst, srcArr, off, bytes) ... */ \
	X(cuMemcpyHtoA_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, GT_NA, GT_COPY_HTOA) \
	X(cuMemcpyHtoA_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, GT_NA, GT_COPY_HTOA) \
	X(cuMemcpyHtoAAsync_v2,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, 4, GT_COPY_HTOA) \
	X(cuMemcpyHtoAAsync_v2_ptsz,  MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, 4, GT_COPY_HTOA) \
	X(cuMemcpyAtoH_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, GT_NA, GT_COPY_ATOH) \
	X(cuMemcpyAtoH_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, GT_NA, GT_COPY_ATOH) \
	X(cuMemcpyAtoHAsync_v2,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, 4, GT_COPY_ATOH) \
	X(cuMemcpyAtoHAsync_v2_ptsz,  MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, 4, GT_COPY_ATOH) \
	X(cuMemcpyDtoA_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, GT_NA, GT_COPY_DTOA) \
	X(cuMemcpyDtoA_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 3, GT_NA, GT_COPY_DTOA) \
	X(cuMemcpyAtoD_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, GT_NA, GT_COPY_ATOD) \
	X(cuMemcpyAtoD_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 1, 3, GT_NA, GT_COPY_ATOD) \
	X(cuMemcpyAtoA_v2,            MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, GT_NA, GT_COPY_ATOA) \
	X(cuMemcpyAtoA_v2_ptds,       MEMCPY, CALL, RET, GT_NA, GT_NA, 0, 2, 4, GT_NA, GT_COPY_ATOA) \
	/* 2D/3D: (const CUDA_MEMCPY2D/3D *[, stream]) */ \
	X(cuMemcpy2D_v2,              MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy2D_v2_ptds,         MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy2DUnaligned_v2,     MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy2DUnaligned_v2_ptds, MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy2DAsync_v2,         MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 1, 0) \
	X(cuMemcpy2DAsync_v2_ptsz,    MEMCPY2D, MEMCPY2D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 1, 0) \
	X(cuMemcpy3D_v2,              MEMCPY3D, MEMCPY3D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy3D_v2_ptds,         MEMCPY3D, MEMCPY3D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemcpy3DAsync_v2,         MEMCPY3D, MEMCPY3D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 1, 0) \
	X(cuMemcpy3DAsync_v2_ptsz,    MEMCPY3D, MEMCPY3D, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 1, 0) \
	/* sets: D8/16/32 (dst, value, count[, stream]); D2D (dst, pitch, value, width, height[, stream]) */ \
	X(cuMemsetD8_v2,              MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 1) \
	X(cuMemsetD8_v2_ptds,         MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 1) \
	X(cuMemsetD8Async,            MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 1) \
	X(cuMemsetD8Async_ptsz,       MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 1) \
	X(cuMemsetD16_v2,             MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 2) \
	X(cuMemsetD16_v2_ptds,        MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 2) \
	X(cuMemsetD16Async,           MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 2) \
	X(cuMemsetD16Async_ptsz,      MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 2) \
	X(cuMemsetD32_v2,             MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 4) \
	X(cuMemsetD32_v2_ptds,        MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, GT_NA, 4) \
	X(cuMemsetD32Async,           MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 4) \
	X(cuMemsetD32Async_ptsz,      MEMSET, CALL, RET, GT_NA, GT_NA, 0, 2, GT_NA, 3, 4) \
	X(cuMemsetD2D8_v2,            MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 1) \
	X(cuMemsetD2D8_v2_ptds,       MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 1) \
	X(cuMemsetD2D8Async,          MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 1) \
	X(cuMemsetD2D8Async_ptsz,     MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 1) \
	X(cuMemsetD2D16_v2,           MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 2) \
	X(cuMemsetD2D16_v2_ptds,      MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 2) \
	X(cuMemsetD2D16Async,         MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 2) \
	X(cuMemsetD2D16Async_ptsz,    MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 2) \
	X(cuMemsetD2D32_v2,           MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 4) \
	X(cuMemsetD2D32_v2_ptds,      MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, GT_NA, 4) \
	X(cuMemsetD2D32Async,         MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 4) \
	X(cuMemsetD2D32Async_ptsz,    MEMSET, CALL, RET, GT_NA, GT_NA, 0, 3, 4, 5, 4) \
	/* allocation: out = pointer */ \
	X(cuMemAlloc_v2,              ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemAllocAsync,            ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, 2, 0) \
	X(cuMemAllocAsync_ptsz,       ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, 2, 0) \
	X(cuMemAllocFromPoolAsync,    ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, 3, 0) \
	X(cuMemAllocFromPoolAsync_ptsz, ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, 3, 0) \
	X(cuMemAllocManaged,          ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemAllocPitch_v2,         ALLOC, CALL, RET, 0, GT_NA, 2, 3, GT_NA, GT_NA, 0) \
	X(cuMemAllocHost_v2,          ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemHostAlloc,             ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemCreate,                ALLOC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemFree_v2,               FREE,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemFreeAsync,             FREE,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 1, 0) \
	X(cuMemFreeAsync_ptsz,        FREE,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 1, 0) \
	X(cuMemFreeHost,              FREE,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuMemRelease,               FREE,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	/* synchronization */ \
	X(cuCtxSynchronize,           SYNC,  CALL, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxSynchronize_v2,        SYNC,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuStreamSynchronize,        SYNC,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 0, 0) \
	X(cuStreamSynchronize_ptsz,   SYNC,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 0, 0) \
	X(cuEventSynchronize,         SYNC,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuStreamWaitEvent,          STREAM_WAIT, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 0, 0) \
	X(cuStreamWaitEvent_ptsz,     STREAM_WAIT, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 0, 0) \
	X(cuEventRecord,              EVENT_RECORD, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 1, 0) \
	X(cuEventRecord_ptsz,         EVENT_RECORD, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 1, 0) \
	X(cuEventRecordWithFlags,     EVENT_RECORD, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 1, 0) \
	X(cuEventRecordWithFlags_ptsz, EVENT_RECORD, CALL, RET, GT_NA, GT_NA, 0, 1, GT_NA, 1, 0) \
	X(cuStreamQuery,              QUERY, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 0, 0) \
	X(cuStreamQuery_ptsz,         QUERY, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, 0, 0) \
	X(cuEventQuery,               QUERY, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	/* modules, libraries and kernel names */ \
	X(cuModuleLoad,               MODULE_LOAD, CALL_STR, RET, 0, 1, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuModuleLoadData,           MODULE_LOAD, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuModuleLoadDataEx,         MODULE_LOAD, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuModuleLoadFatBinary,      MODULE_LOAD, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuModuleUnload,             MODULE_UNLOAD, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLibraryLoadData,          MODULE_LOAD, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLibraryLoadFromFile,      MODULE_LOAD, CALL_STR, RET, 0, 1, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLibraryUnload,            MODULE_UNLOAD, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuModuleGetFunction,        GET_FUNC, CALL_STR, RET, 0, 2, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuLibraryGetKernel,         GET_FUNC, CALL_STR, RET, 0, 2, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuKernelGetFunction,        KERNEL_FUNC, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuFuncGetName,              FUNC_NAME, CALL, RET_STR, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuKernelGetName,            FUNC_NAME, CALL, RET_STR, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	/* contexts, streams, events */ \
	X(cuInit,                     INIT,   CALL, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxCreate_v2,             CTX,    CALL, RET, 0, GT_NA, 2, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxCreate_v3,             CTX,    CALL, RET, 0, GT_NA, 4, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxCreate_v4,             CTX,    CALL, RET, 0, GT_NA, 3, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxDestroy_v2,            CTX,    CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuDevicePrimaryCtxRetain,   CTX,    CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuDevicePrimaryCtxRelease_v2, CTX,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuDevicePrimaryCtxReset_v2, CTX,    CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuStreamCreate,             STREAM, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuStreamCreateWithPriority, STREAM, CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuStreamDestroy_v2,         STREAM, CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuEventCreate,              EVENT,  CALL, RET, 0, GT_NA, 1, GT_NA, GT_NA, GT_NA, 0) \
	X(cuEventDestroy_v2,          EVENT,  CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	/* markers */ \
	X(cuProfilerStart,            MARKER, CALL, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	X(cuProfilerStop,             MARKER, CALL, RET, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0) \
	/* appended later: ids are stored in trace files, so only append */ \
	X(cuDevicePrimaryCtxRelease,  CTX,    CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxSetCurrent,            CTX,    CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxPushCurrent_v2,        CTX,    CALL, RET, GT_NA, GT_NA, 0, GT_NA, GT_NA, GT_NA, 0) \
	X(cuCtxPopCurrent_v2,         CTX,    CALL, RET, 0, GT_NA, GT_NA, GT_NA, GT_NA, GT_NA, 0)

enum gt_api {
	GT_API_NONE = 0,
#define GT_API_ENUM(sym, ...) GT_API_##sym,
	GT_API_TABLE(GT_API_ENUM)
#undef GT_API_ENUM
	GT_API__COUNT,
};

#endif /* GTRACE_API_H */
