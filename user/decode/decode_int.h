/* SPDX-License-Identifier: MIT */
/*
 * Internal to the decoder: the state its files share.  decode.c pairs
 * entries with exits and decodes arguments by api class; names.c keeps the
 * names: kernels by handle, processes and threads, GPU kernels; kname.c
 * interns kernel names so that each is stored and demangled once.
 */
#ifndef GTRACE_DECODE_INT_H
#define GTRACE_DECODE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "decode/decode.h"
#include "lib/hmap.h"
#include "decode/kname.h"

#define STACK_MAX	32	/* open calls per thread; libcuda nests a few at most */
#define POOL_MAX	256	/* empty thread stacks kept for reuse (~3 KiB each) */

/* ---- decoder state ------------------------------------------------------ */

/* An entry waiting for its exit: the entry record's fields, decoded later. */
struct open_call {
	uint64_t ts;		/* entry time, ns */
	uint32_t pid, tid;	/* of the entry record */
	uint16_t api, cpu;	/* enum gt_api (NCCL: GT_NCCL_API_BASE + enum gt_nccl_api);
				 * CPU of the entry */
	uint16_t rtype;		/* GT_REC_CALL, _LAUNCH, _CALL_STR or _NCCL */
	uint16_t nargs;		/* valid entries of args[] */
	bool has_str;		/* str holds the entry's string argument */
	union {
		uint64_t args[GT_CALL_NARGS];	/* GT_REC_CALL / _CALL_STR */
		struct {			/* GT_REC_LAUNCH */
			uint64_t func, stream;
			uint32_t grid[3], block[3], shmem;
			uint16_t flags;
		} l;
		struct gt_nccl n;		/* GT_REC_NCCL (its header unused) */
	};
	char *str;		/* buffer owned by the slot, str_cap bytes */
	uint32_t str_cap;
	uint64_t cookie;	/* set by the entry hook, handed on with the call */
	uint32_t stack;		/* its GT_REC_STACK id, 0 none */
};

/* The open calls of one thread. */
struct tstack {
	uint32_t tid, pid;		/* the thread, its key in d->threads */
	uint32_t depth;			/* entries in use, ent[0] oldest */
	uint64_t last_exit;		/* time of its latest exit matched while open */
	struct tstack *prev, *next;	/* active list (or pool, next only) */
	struct open_call ent[STACK_MAX];
};

/* What the decoder knows of a process. */
struct proc {
	char *name;		/* command line or comm, NULL if none */
	uint64_t name_ts;	/* when the name was learned */
	uint8_t name_prio;	/* 1 comm, 2 command line: the better one wins a tie */
	uint32_t nkernels;	/* entries of kernels keyed by this pid */
	uint64_t cgroup;	/* cgroup v2 id, 0 if unknown */
	struct dev_proc *dev;	/* its contexts, streams, allocations (devices.c), NULL none */
	struct nccl_proc *nccl;	/* its communicators and groups (nccl.c), NULL none */
	struct gt_rank_info rank;	/* its rank, valid when has_rank */
	bool has_rank;
};

/* What an exit record brought. */
struct exit_info {
	int32_t ret;		/* CUresult */
	uint32_t flags;		/* GT_RET_*, 0 for string exits */
	uint64_t out;		/* what the out-pointer received */
	const char *str;	/* NUL-terminated, NULL if none */
};

struct gt_decoder {
	gt_call_cb on_call;		/* completed calls */
	gt_rec_cb on_other;		/* everything else, may be NULL */
	gt_entry_cb on_entry;		/* entries taken, may be NULL */
	gt_nccl_cb on_nccl;		/* NCCL calls completed, may be NULL */
	bool finishing;			/* gt_decoder__finish: what is emitted was open at the end, */
	uint64_t finish_after;		/* in flight if entered from here on (its thread's last
					 * exit: an older one lost its exit) */
	uint32_t ncomms;		/* communicators numbered so far (gt_ncclrec.comm_index) */
	bool nccl_seen;			/* an NCCL entry was taken: calls may be inside one */
	char **hosts;			/* a job trace (merge --hosts): each host's name, by index */
	uint32_t nhosts;
	void *ctx;			/* passed to all three */
	struct gt_decoder_stats stats;
	uint64_t last_ts;		/* latest ts of a record fed */
	struct hmap threads;		/* (tid, pid) -> struct tstack, non-empty only */
	struct tstack *active_head;	/* threads with open calls, oldest first */
	struct tstack *active_tail;
	struct tstack *pool;		/* empty stacks for reuse */
	uint32_t npool;			/* stacks in pool, at most POOL_MAX */
	struct hmap kernels;		/* (handle, pid) -> struct kname */
	struct kname_table names;	/* the distinct names kernels points to */
	struct hmap procs;		/* (pid, 0) -> struct proc */
	struct hmap thread_names;	/* (tid, 0) -> char * */
	struct kname_table gpu_names;	/* names of GPU kernel records and of demangle
					 * calls, one reference each, kept to the end */
	struct open_call tmp;		/* entry emitted at once (apis without exit) */
	char xstr[GT_STR_MAX + sizeof(GT_STR_CUT_MARK)];	/* exit string, NUL-terminated copy (and its cut mark) */
	char placeholder[40];		/* "unknown_kernel_0x..." of the launch being emitted */
	struct dec_stacks *stacks;	/* the stack table (decode/stacks.c), NULL before any */
};

/* decode/stacks.c */
/* A GT_REC_STACK_REF, _STACK, _MODULE or _SYMBOL: into the table. 0 or
 * -ENOMEM. */
int dec__on_stack_rec(struct gt_decoder *d, const struct gt_hdr *rec);
/* The stack id of the entry rec: the thread's GT_REC_STACK_REF of its
 * time, taken; 0 when none came. */
uint32_t dec__stack_of_entry(struct gt_decoder *d, const struct gt_hdr *rec);
/* The stack taken at the exit rec of a failed call (GT_STACK_REF_EXIT), 0 none. */
uint32_t dec__stack_of_exit(struct gt_decoder *d, const struct gt_hdr *rec);
void dec__stacks_free(struct gt_decoder *d);

/* decode/names.c */
/* What the decoder knows of pid; made when create (NULL: out of memory),
 * else NULL when it knows nothing. */
struct proc *dec__proc(struct gt_decoder *d, uint32_t pid, bool create);
/* Binds (pid, handle) to k, taking over the caller's reference. */
int dec__kernel_bind(struct gt_decoder *d, uint32_t pid, uint64_t handle, struct kname *k);
int dec__kernel_learn(struct gt_decoder *d, uint32_t pid, uint64_t handle,
		      const char *s, size_t n);
void dec__launch_name(struct gt_decoder *d, struct gt_callrec *c);
int dec__on_name(struct gt_decoder *d, const struct gt_hdr *rec);
int dec__on_proc(struct gt_decoder *d, const struct gt_hdr *rec);

/* decode/devices.c */
struct dev_proc;
/* Sets the call's device (and a copy's sides) from what the process'
 * context calls showed, counts a call on a device that has none, and
 * applies what the call changed once it succeeded.  0 or -ENOMEM. */
int dec__device_call(struct gt_decoder *d, struct gt_callrec *c, const struct gt_api_info *ai,
		     const struct open_call *e);
/* Forgets the device state of a process that exited or exec'd. */
void dec__devices_forget(struct gt_decoder *d, uint32_t pid);
void dec__devices_free(struct dev_proc *dp);

/* decode/nccl.c */
struct nccl_proc;
/* Emits an NCCL entry e (with its exit x, NULL when none) through on_nccl
 * and keeps what it says of its communicator. */
int dec__nccl_emit(struct gt_decoder *d, const struct open_call *e, const struct exit_info *x,
		   uint64_t exit_ts);
/* A GT_REC_PROC_RANK record. */
int dec__on_rank(struct gt_decoder *d, const struct gt_hdr *rec);
/* Forgets the communicators of a process that exited or exec'd. */
void dec__nccl_forget(struct gt_decoder *d, uint32_t pid);
void dec__nccl_free(struct nccl_proc *np);
/* decode/devices.c, for nccl.c: the device of pid's thread's current
 * context, GT_DEVICE_UNKNOWN when the trace did not show it. */
int32_t dec__thread_device(struct gt_decoder *d, uint32_t pid, uint32_t tid);

/* decode.c */
/* Emits the open calls of a process as incomplete: it exited or exec'd, so
 * their exits will never be recorded. */
int dec__flush_pid(struct gt_decoder *d, uint32_t pid);

#endif
