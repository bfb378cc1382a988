/* SPDX-License-Identifier: MIT */
/*
 * The libnccl symbols gtrace-bpf probes, as one X-macro table shared by the
 * attacher, the BPF program (where each argument is) and the decoder (what
 * a call is).  Types and macros only, usable from BPF and userspace.
 *
 * The signatures are NCCL's public C API (nccl.h, stable since NCCL 2.x;
 * checked against NCCL 2.27-2.29): x86-64 SysV passes the first six integer
 * arguments in registers and the rest on the stack; an ncclUniqueId (128
 * bytes) passed by value goes on the stack and takes no register, so
 * ncclCommInitRank(comm*, nranks, commId, rank) has rank in the third
 * register.
 *
 * GT_NCCL_API(sym, kind, send, recv, count, dtype, op, peer, comm, stream, out, nranks)
 *   sym    exported libnccl symbol
 *   kind   enum gt_nccl_kind
 *   the rest: argument indices (0-5 registers, 6 and up stack slots), GT_NA none:
 *   send/recv  buffers; count  elements; dtype  ncclDataType_t; op  ncclRedOp_t;
 *   peer   root (Reduce, Broadcast), peer (Send, Recv), rank (inits), color (split);
 *   comm   the communicator the call works on; stream  cudaStream_t;
 *   out    the ncclComm_t* a new communicator is written to;
 *   nranks nranks (inits), key (split)
 */
#ifndef GTRACE_NCCL_H
#define GTRACE_NCCL_H

enum gt_nccl_kind {
	GT_NCCL_K_NONE = 0,
	GT_NCCL_K_COLL,		/* a collective: every rank of the communicator, in the same order */
	GT_NCCL_K_P2P,		/* ncclSend / ncclRecv */
	GT_NCCL_K_GROUP,	/* ncclGroupStart / ncclGroupEnd */
	GT_NCCL_K_INIT,		/* a new communicator (out), its rank and size */
	GT_NCCL_K_SPLIT,	/* ncclCommSplit: a new communicator from comm (color, key) */
	GT_NCCL_K_FREE,		/* ncclCommDestroy / ncclCommAbort */
};

/* Flags of struct gt_nccl. */
#define GT_NCCL_UID		(1u << 0)	/* uid holds the digest of the ncclUniqueId */
#define GT_NCCL_ARGS_FAULT	(1u << 1)	/* stack arguments could not be read: 0 */

#define GT_NCCL_NA (-1)
#define GT_NCCL_TABLE(X) \
	X(ncclAllReduce,      COLL,  0, 1, 2, 3, 4, GT_NCCL_NA, 5, 6, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclReduceScatter,  COLL,  0, 1, 2, 3, 4, GT_NCCL_NA, 5, 6, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclAllGather,      COLL,  0, 1, 2, 3, GT_NCCL_NA, GT_NCCL_NA, 4, 5, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclBroadcast,      COLL,  0, 1, 2, 3, GT_NCCL_NA, 4, 5, 6, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclReduce,         COLL,  0, 1, 2, 3, 4, 5, 6, 7, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclBcast,          COLL,  0, 0, 1, 2, GT_NCCL_NA, 3, 4, 5, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclSend,           P2P,   0, GT_NCCL_NA, 1, 2, GT_NCCL_NA, 3, 4, 5, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclRecv,           P2P,   GT_NCCL_NA, 0, 1, 2, GT_NCCL_NA, 3, 4, 5, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclGroupStart,     GROUP, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclGroupEnd,       GROUP, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA) \
	/* (comm*, nranks, ncclUniqueId on the stack, rank[, config]) */ \
	X(ncclCommInitRank,   INIT,  GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 2, GT_NCCL_NA, GT_NCCL_NA, 0, 1) \
	X(ncclCommInitRankConfig, INIT, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 2, GT_NCCL_NA, GT_NCCL_NA, 0, 1) \
	/* (comm*, nranks, myrank, nId, ncclUniqueId *commIds, config) */ \
	X(ncclCommInitRankScalable, INIT, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 2, GT_NCCL_NA, GT_NCCL_NA, 0, 1) \
	/* (comm *array, ndev, devlist): the first communicator, rank 0 of ndev */ \
	X(ncclCommInitAll,    INIT,  GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 0, 1) \
	/* (comm, color, key, newcomm*, config) */ \
	X(ncclCommSplit,      SPLIT, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 1, 0, GT_NCCL_NA, 3, 2) \
	X(ncclCommDestroy,    FREE,  GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 0, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA) \
	X(ncclCommAbort,      FREE,  GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA, 0, GT_NCCL_NA, GT_NCCL_NA, GT_NCCL_NA) \
	/* appended later: ids are stored in trace files, so only append */

enum gt_nccl_api {
	GT_NCCL_API_NONE = 0,
#define GT_NCCL_ENUM(sym, ...) GT_NCCL_API_##sym,
	GT_NCCL_TABLE(GT_NCCL_ENUM)
#undef GT_NCCL_ENUM
	GT_NCCL_API__COUNT,
};

#endif /* GTRACE_NCCL_H */
