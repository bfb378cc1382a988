// SPDX-License-Identifier: MIT
/*
 * A stand-in libnccl.so.2 for tests on machines without GPUs: the calls of
 * nccl_compat.h with the real signatures, and just enough behaviour for a
 * multi-process job to run through it as through NCCL:
 *
 *  - ncclGetUniqueId makes an id that names a rendezvous file,
 *    $GT_MOCK_NCCL_DIR (default /dev/shm) / gt-mock-nccl-<id>, which every
 *    rank of the communicator maps; the ranks meet there at the init, at
 *    each collective, point-to-point call or group end, and at the destroy
 *    (a barrier of all ranks, GT_MOCK_NCCL_TIMEOUT_MS, default 30000, then
 *    ncclSystemError).  Where real NCCL returns at once and its kernels wait
 *    on the GPU, the mock's calls wait on the host: a rank that comes late
 *    to a collective makes the others' calls last that much longer.
 *  - the init loads the "kernels" through the libcuda the process uses
 *    (GT_LIBCUDA, default libcuda.so.1): one cuModuleLoadData and
 *    NKERNELS cuModuleGetFunction; a collective, point-to-point call or
 *    group outside a group then makes one cuLaunchKernel of its kernel on its
 *    stream after the barrier, a group end one for the whole group (the
 *    kernel of its first call), as NCCL launches one kernel a group.
 *  - calls between ncclGroupStart and ncclGroupEnd (per thread, nested) are
 *    checked and queued; the group end meets the other ranks once.
 *
 * Every exported function is its own non-inlined function (uprobes attach
 * by address) and none calls another exported one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_compat.h"
#include "nccl_compat.h"

#include "mock_export.h"

#define ID_MAGIC 0x67746e63636c4944ull	/* "gtncclID" */
#define COMM_MAGIC 0x67746e6363436f6dull
#define SLOTS 64			/* barrier slots in the rendezvous file, reused in turn */

/* ------------------------------------------------------------------ */
/* kernels                                                              */

enum kern { K_ALLREDUCE, K_REDUCESCATTER, K_ALLGATHER, K_BROADCAST, K_REDUCE, K_SENDRECV, NKERNELS };

static const char *const kernel_names[NKERNELS] = {
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
	"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
	"ncclDevKernel_AllGather_RING_LL",
	"ncclDevKernel_Broadcast_RING_LL",
	"ncclDevKernel_Reduce_Sum_f32_RING_LL",
	"ncclDevKernel_SendRecv",
};

static const char kernels_ptx[] =
	".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry ncclDevKernel_AllReduce_Sum_f32_RING_LL()\n{\n\tret;\n}\n"
	".visible .entry ncclDevKernel_ReduceScatter_Sum_f32_RING_LL()\n{\n\tret;\n}\n"
	".visible .entry ncclDevKernel_AllGather_RING_LL()\n{\n\tret;\n}\n"
	".visible .entry ncclDevKernel_Broadcast_RING_LL()\n{\n\tret;\n}\n"
	".visible .entry ncclDevKernel_Reduce_Sum_f32_RING_LL()\n{\n\tret;\n}\n"
	".visible .entry ncclDevKernel_SendRecv()\n{\n\tret;\n}\n";

static struct {
	pthread_once_t once;
	__typeof__(&cuModuleLoadData) load;
	__typeof__(&cuModuleGetFunction) get;
	__typeof__(&cuLaunchKernel) launch;
} cu = { .once = PTHREAD_ONCE_INIT };

static void cu_load(void)
{
	const char *path = getenv("GT_LIBCUDA");
	void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&cu.load = dlsym(h, "cuModuleLoadData");
	*(void **)&cu.get = dlsym(h, "cuModuleGetFunction");
	*(void **)&cu.launch = dlsym(h, "cuLaunchKernel");
}

/* ------------------------------------------------------------------ */
/* the rendezvous                                                       */

struct rdv {
	uint64_t magic;
	int32_t nranks;
	int32_t _pad;
	uint64_t left;			/* ranks that destroyed their communicator */
	uint64_t arrived[SLOTS];	/* barrier k: slot k % SLOTS, nranks per round */
};

struct ncclComm {
	uint64_t magic;
	int nranks, rank;
	struct rdv *rdv;		/* the shared file, mapped */
	char path[256];			/* its name, unlinked by the last rank to leave */
	uint64_t barriers;		/* barriers this rank passed */
	CUfunction fn[NKERNELS];	/* NULL when libcuda was not there */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static unsigned long timeout_ms(void)
{
	const char *s = getenv("GT_MOCK_NCCL_TIMEOUT_MS");

	return s && *s ? strtoul(s, NULL, 10) : 30000;
}

/* Every rank arrives, or the timeout passes (ncclSystemError). */
static ncclResult_t barrier(struct ncclComm *c)
{
	uint64_t k = c->barriers++, *slot = &c->rdv->arrived[k % SLOTS];
	uint64_t want = (uint64_t)c->nranks * (k / SLOTS + 1), end = mono_ms() + timeout_ms();
	struct timespec nap = { 0, 50000 };

	__atomic_add_fetch(slot, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < want) {
		if (mono_ms() > end) {
			fprintf(stderr, "libnccl mock: rank %d waited %lu ms for the others: giving up\n",
				c->rank, timeout_ms());
			return ncclSystemError;
		}
		nanosleep(&nap, NULL);
	}
	return ncclSuccess;
}

static void rdv_name(const ncclUniqueId *id, char *buf, size_t len)
{
	const char *dir = getenv("GT_MOCK_NCCL_DIR");
	uint64_t a, b;

	memcpy(&a, id->internal + 8, 8);
	memcpy(&b, id->internal + 16, 8);
	snprintf(buf, len, "%s/gt-mock-nccl-%016llx%016llx", dir && *dir ? dir : "/dev/shm",
		 (unsigned long long)a, (unsigned long long)b);
}

static bool id_valid(const ncclUniqueId *id)
{
	uint64_t m;

	memcpy(&m, id->internal, 8);
	return m == ID_MAGIC;
}

static ncclResult_t comm_make(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank)
{
	struct ncclComm *c;
	CUmodule mod;
	ncclResult_t r;
	int fd;

	if (!out || nranks < 1 || rank < 0 || rank >= nranks || !id || !id_valid(id))
		return ncclInvalidArgument;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	c->magic = COMM_MAGIC;
	c->nranks = nranks;
	c->rank = rank;
	rdv_name(id, c->path, sizeof(c->path));
	fd = open(c->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct rdv))) {
		if (fd >= 0)
			close(fd);
		free(c);
		return ncclSystemError;
	}
	c->rdv = mmap(NULL, sizeof(struct rdv), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->rdv == MAP_FAILED) {
		free(c);
		return ncclSystemError;
	}
	pthread_once(&cu.once, cu_load);
	if (cu.load && cu.get && cu.load(&mod, kernels_ptx) == CUDA_SUCCESS)
		for (int k = 0; k < NKERNELS; k++)
			cu.get(&c->fn[k], mod, kernel_names[k]);
	r = barrier(c);
	if (r != ncclSuccess) {
		munmap(c->rdv, sizeof(struct rdv));
		free(c);
		return r;
	}
	*out = c;
	return ncclSuccess;
}

static bool comm_valid(const struct ncclComm *c)
{
	return c && c->magic == COMM_MAGIC;
}

/* ------------------------------------------------------------------ */
/* calls and groups                                                     */

/* The group of this thread: its depth, the communicator and the stream
 * and kernel of its first call. */
static __thread struct {
	int depth;
	struct ncclComm *comm;
	cudaStream_t stream;
	enum kern kern;
} grp;

static ncclResult_t run_kernel(struct ncclComm *c, enum kern k, cudaStream_t s)
{
	if (!c->fn[k] || !cu.launch)
		return ncclSuccess;
	return cu.launch(c->fn[k], 1, 1, 1, 64, 1, 1, 0, (CUstream)s, NULL, NULL) == CUDA_SUCCESS ?
	       ncclSuccess : ncclUnhandledCudaError;
}

/* A call checked: in a group it is queued; else the ranks meet and its
 * kernel is launched. */
static ncclResult_t issue(struct ncclComm *c, enum kern k, cudaStream_t s)
{
	ncclResult_t r;

	if (grp.depth) {
		if (!grp.comm) {
			grp.comm = c;
			grp.stream = s;
			grp.kern = k;
		}
		return ncclSuccess;
	}
	r = barrier(c);
	return r == ncclSuccess ? run_kernel(c, k, s) : r;
}

static ncclResult_t data_check(const struct ncclComm *c, ncclDataType_t t, int op, int root)
{
	if (!comm_valid(c))
		return ncclInvalidArgument;
	if ((int)t < 0 || t >= ncclNumTypes)
		return ncclInvalidArgument;
	if (op >= 0 && op >= ncclNumOps)
		return ncclInvalidArgument;
	if (root >= 0 && root >= c->nranks)
		return ncclInvalidArgument;
	return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* the API                                                              */

MOCK_API ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = GT_MOCK_NCCL_VERSION;
	return ncclSuccess;
}

MOCK_API ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	static uint64_t n;
	struct timespec ts;
	uint64_t m = ID_MAGIC, a, b;

	if (!uniqueId)
		return ncclInvalidArgument;
	clock_gettime(CLOCK_REALTIME, &ts);
	a = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec;
	b = (uint64_t)ts.tv_sec << 16 ^ __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED);
	memset(uniqueId, 0, sizeof(*uniqueId));
	memcpy(uniqueId->internal, &m, 8);
	memcpy(uniqueId->internal + 8, &a, 8);
	memcpy(uniqueId->internal + 16, &b, 8);
	return ncclSuccess;
}

MOCK_API const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclInvalidArgument: return "invalid argument";
	case ncclSystemError: return "unhandled system error";
	case ncclUnhandledCudaError: return "unhandled cuda error";
	default: return "unknown result code";
	}
}

MOCK_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	return comm_make(comm, nranks, &commId, rank);
}

MOCK_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
					     int rank, ncclConfig_t *config)
{
	(void)config;
	return comm_make(comm, nranks, &commId, rank);
}

MOCK_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
					       ncclUniqueId *commIds, ncclConfig_t *config)
{
	(void)config;
	if (nId < 1 || !commIds)
		return ncclInvalidArgument;
	return comm_make(newcomm, nranks, &commIds[0], myrank);
}

MOCK_API ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
	(void)comm;
	(void)ndev;
	(void)devlist;
	return ncclInvalidUsage;	/* one process, several devices: not mocked */
}

MOCK_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
				    ncclConfig_t *config)
{
	(void)comm;
	(void)color;
	(void)key;
	(void)newcomm;
	(void)config;
	return ncclInvalidUsage;	/* not mocked */
}

static ncclResult_t comm_free(ncclComm_t c, bool meet)
{
	ncclResult_t r = ncclSuccess;

	if (!comm_valid(c))
		return ncclInvalidArgument;
	if (meet)
		r = barrier(c);
	if (__atomic_add_fetch(&c->rdv->left, 1, __ATOMIC_ACQ_REL) == (uint64_t)c->nranks)
		unlink(c->path);
	munmap(c->rdv, sizeof(struct rdv));
	c->magic = 0;
	free(c);
	return r;
}

MOCK_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	return comm_free(comm, true);
}

MOCK_API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return comm_free(comm, false);
}

MOCK_API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm_valid(comm) || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

MOCK_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm_valid(comm) || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

MOCK_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!comm_valid(comm) || !device)
		return ncclInvalidArgument;
	*device = 0;
	return ncclSuccess;
}

/* A data call: checked (bufs: its buffers are there), then issued. */
static ncclResult_t data_call(ncclComm_t c, ncclDataType_t t, int op, int root, bool bufs, enum kern k,
			      cudaStream_t s)
{
	ncclResult_t r = data_check(c, t, op, root);

	if (r == ncclSuccess && !bufs)
		r = ncclInvalidArgument;
	return r == ncclSuccess ? issue(c, k, s) : r;
}

/* The root's buffer is needed on the root only. */
static bool root_has(const struct ncclComm *c, int root, const void *buf)
{
	return buf || (comm_valid(c) && c->rank != root);
}

MOCK_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
				 ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
				 cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, (int)op, root, sendbuff && root_has(comm, root, recvbuff),
			 K_REDUCE, stream);
}

MOCK_API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
				ncclComm_t comm, cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, -1, root, buff, K_BROADCAST, stream);
}

MOCK_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				    ncclDataType_t datatype, int root, ncclComm_t comm,
				    cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, -1, root, recvbuff && root_has(comm, root, sendbuff),
			 K_BROADCAST, stream);
}

MOCK_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
				    cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, (int)op, -1, sendbuff && recvbuff, K_ALLREDUCE, stream);
}

MOCK_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
					ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
					cudaStream_t stream)
{
	(void)recvcount;
	return data_call(comm, datatype, (int)op, -1, sendbuff && recvbuff, K_REDUCESCATTER, stream);
}

MOCK_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendcount;
	return data_call(comm, datatype, -1, -1, sendbuff && recvbuff, K_ALLGATHER, stream);
}

MOCK_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
			       ncclComm_t comm, cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, -1, peer, sendbuff && peer >= 0, K_SENDRECV, stream);
}

MOCK_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
			       ncclComm_t comm, cudaStream_t stream)
{
	(void)count;
	return data_call(comm, datatype, -1, peer, recvbuff && peer >= 0, K_SENDRECV, stream);
}

MOCK_API ncclResult_t ncclGroupStart(void)
{
	grp.depth++;
	return ncclSuccess;
}

MOCK_API ncclResult_t ncclGroupEnd(void)
{
	struct ncclComm *c = grp.comm;
	ncclResult_t r;

	if (!grp.depth)
		return ncclInvalidUsage;
	if (--grp.depth || !c)
		return ncclSuccess;
	grp.comm = NULL;
	r = barrier(c);
	return r == ncclSuccess ? run_kernel(c, grp.kern, grp.stream) : r;
}
