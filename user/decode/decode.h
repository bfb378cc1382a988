/* SPDX-License-Identifier: MIT */
/*
 * Turns the raw records of a trace into calls: pairs entries with exits per
 * thread, resolves kernel names (naming calls, recovered names, placeholder),
 * decodes arguments by api class.  Used by dump and every later tool.
 */
#ifndef GTRACE_DECODE_H
#define GTRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/gtrace_events.h"
#include "bpf/gtrace_api.h"
#include "bpf/gtrace_nccl.h"
#include "format/api.h"
#include "format/nccl.h"
#include "format/records.h"

/* One decoded libcuda call. */
struct gt_callrec {
	uint64_t ts;		/* entry, CLOCK_MONOTONIC ns */
	uint64_t dur;		/* exit - entry, valid when has_exit */
	uint32_t pid, tid;	/* process and thread */
	uint16_t cpu;		/* CPU of the entry */
	uint16_t api;		/* enum gt_api */
	enum gt_call_type type;
	bool has_exit;		/* an exit was recorded (ret, dur valid) */
	bool entry_only;	/* recorded without a return probe (launches unless
				 * --launch-exit): no exit by design, not incomplete */
	bool at_end;		/* no exit because the trace ended inside the call (emitted
				 * by gt_decoder__finish, and its thread completed no call
				 * after its entry): in flight when the recording stopped
				 * or was cut */
	int32_t ret;		/* CUresult */
	/* decoded arguments; which are set depends on type */
	uint64_t handle;	/* launch: function; graph launch: exec; sync/query: stream, event or ctx;
				 * free: pointer; module: module/library; ctx/stream/event: the handle */
	uint64_t handle2;	/* second handle: stream wait: event; event record: stream */
	uint64_t stream;	/* stream argument, 0 = default stream */
	bool has_stream;	/* the call takes a stream */
	uint64_t bytes;		/* memcpy/memset/alloc bytes */
	uint64_t ptr;		/* alloc: returned pointer (has_exit); memcpy: dst; memset: dst */
	uint64_t src;		/* memcpy: source */
	enum gt_copy_kind kind;	/* memcpy direction */
	uint32_t grid[3], block[3], shmem;	/* launch */
	uint16_t launch_flags;	/* GT_LAUNCH_* */
	bool graph;		/* launch of a CUDA graph (no kernel name) */
	const char *kernel;	/* launch: demangled name or placeholder; never NULL for launches */
	const char *mangled;	/* launch: mangled name, NULL if unknown */
	const char *str;	/* module: path or name argument; func name: the returned name */
	uint64_t out;		/* exit out value (new handle) when out_valid */
	bool out_valid;
	uint64_t cookie;	/* what the entry hook set for this call's entry, 0 if none */
	uint32_t stack;		/* its native stack (--stacks): gt_decoder__stack's id, 0 none */
	/* devices (decode/devices.c): GT_DEVICE_UNKNOWN where the trace did not
	 * show them, never guessed */
	int32_t device;		/* CUDA device ordinal the call ran on: its stream's or
				 * event's context, else its thread's current one;
				 * context calls: the device they name */
	int32_t src_device;	/* memcpy: the device of the source (peer copies: of the
				 * source context; others: of the device allocation the
				 * pointer lies in) */
	int32_t dst_device;	/* memcpy: the same for the destination */
	uint64_t nccl_ts;	/* the entry of the NCCL call this one was made inside (its
				 * thread's innermost one open), 0 none: a launch's links
				 * the NCCL kernel it started to its collective (ncclGroupEnd
				 * for a group's, whose calls precede it on the thread) */
};

#define GT_DEVICE_UNKNOWN (-1)
/* NCCL calls share the decoder's per-thread pairing with libcuda's; their
 * api there (gt_open_entry.api) is this plus enum gt_nccl_api. */
#define GT_NCCL_API_BASE 0x8000u

/* True for the calls that run on a device, whose device is counted when
 * unknown: launches, copies, sets, waits, allocations and frees. */
static inline bool gt_callrec__on_device(const struct gt_callrec *c)
{
	switch (c->type) {
	case GT_T_LAUNCH: case GT_T_MEMCPY: case GT_T_MEMSET: case GT_T_SYNC:
	case GT_T_ALLOC: case GT_T_FREE:
		return true;
	default:
		return false;
	}
}

/* One decoded libnccl call (GT_REC_NCCL and its exit), with what the
 * decoder knows of its communicator (decode/nccl.c). */
struct gt_ncclrec {
	uint64_t ts;		/* entry, CLOCK_MONOTONIC ns */
	uint64_t dur;		/* exit - entry, valid when has_exit */
	uint32_t pid, tid;
	uint16_t cpu;		/* CPU of the entry */
	uint16_t api;		/* enum gt_nccl_api */
	enum gt_nccl_kind kind;
	bool has_exit;		/* an exit was recorded (ret, dur valid) */
	bool at_end;		/* no exit: in flight at the trace's end (gt_callrec.at_end) */
	int32_t ret;		/* ncclResult_t (7: ncclInProgress, a nonblocking call under way) */
	uint64_t sendbuff, recvbuff;
	uint64_t count;		/* elements */
	uint64_t bytes;		/* count x the element size; 0 for an unknown type */
	uint32_t datatype, op;	/* ncclDataType_t, ncclRedOp_t; GT_NCCL_NONE32 none */
	int32_t peer;		/* root (Reduce, Broadcast), peer (Send, Recv); -1 none */
	uint64_t comm;		/* the communicator (split: the parent; inits: the new one
				 * once it came back), 0 none */
	uint64_t stream;	/* cudaStream_t */
	int32_t device;		/* the communicator's device (its thread's when it was made),
				 * else the thread's current one; GT_DEVICE_UNKNOWN */
	/* the communicator, as its init showed it; 0 / -1 where the trace did
	 * not (made before the recording began) */
	uint64_t uid;		/* digest of its ncclUniqueId: the same in every rank */
	int32_t rank;		/* this process' rank in it */
	int32_t nranks;		/* its size */
	uint32_t comm_index;	/* 1-based number of the communicator in the decoder's
				 * order of first sight, across processes; 0 none */
	uint64_t seq;		/* collectives: 1-based number of this one on its communicator
				 * in this process (NCCL orders them the same in every rank, so
				 * the same collective has the same uid and seq everywhere);
				 * else 0 */
	bool in_group;		/* issued between ncclGroupStart and ncclGroupEnd of its thread */
	uint32_t flags;		/* GT_NCCL_* of the entry */
	uint64_t cookie;	/* as gt_callrec's (no entry hook sees NCCL entries: 0) */
	uint32_t stack;		/* its stack (--stacks), as gt_callrec's; 0 none */
};

/* A process' place in its job: from its environment (GT_REC_PROC_RANK),
 * else from its first communicator's init. */
struct gt_rank_info {
	int32_t rank, local_rank, world_size;	/* -1 unknown */
	bool from_env;		/* the environment said (else an init, or nothing) */
};

struct gt_decoder;

/* True for an entry record after which no exit is recorded by design: a
 * launch recorded without its return probe. */
static inline bool gt_rec_entry_only(const struct gt_hdr *rec)
{
	return rec->type == GT_REC_LAUNCH && gt_rec__size_ok(rec) &&
	       (((const struct gt_launch *)rec)->flags & GT_LAUNCH_NO_EXIT);
}

struct gt_decoder_stats {
	uint64_t calls;			/* calls emitted */
	uint64_t unmatched_exits;	/* exits with no open entry */
	uint64_t open_at_end;		/* entries whose exit never came */
	uint64_t unknown_records;	/* record types or apis this build does not know, and
					 * records too short for their type (malformed: not
					 * passed on) */
	uint64_t placeholder_names;	/* launches that got a placeholder name */
	uint64_t device_unknown;	/* calls that run on a device (gt_callrec__on_device)
					 * whose device the trace did not show: no context
					 * call of their thread was seen */
	uint64_t nccl_calls;		/* libnccl calls emitted */
	uint64_t nccl_comm_unknown;	/* of which on a communicator whose init the trace
					 * did not show (no uid, rank, seq) */
};

typedef int (*gt_call_cb)(void *ctx, const struct gt_callrec *c);
/* Non-call records (process events, names, stats) are passed here, may be NULL. */
typedef int (*gt_rec_cb)(void *ctx, const struct gt_hdr *rec);

/* Called for each call entry the decoder takes, before it waits for the exit
 * (or, for an entry-only call, before the call is emitted).  What it stores
 * in *cookie (0 on entry) comes back as the cookie of the call that entry
 * makes, complete or not: so a consumer can tie its own record of an entry
 * to the decoder's pairing instead of pairing again. */
typedef int (*gt_entry_cb)(void *ctx, const struct gt_hdr *rec, uint64_t *cookie);

struct gt_decoder *gt_decoder__new(gt_call_cb on_call, gt_rec_cb on_other, void *ctx);
/* Sets the entry hook (NULL: none); ctx is the decoder's. */
void gt_decoder__set_entry_cb(struct gt_decoder *d, gt_entry_cb on_entry);
/* Called for every libnccl call completed (or cut) as on_call is for
 * libcuda's; NULL (the default): NCCL calls are paired and counted, their
 * communicators and ranks kept, and nothing handed on. */
typedef int (*gt_nccl_cb)(void *ctx, const struct gt_ncclrec *n);
void gt_decoder__set_nccl_cb(struct gt_decoder *d, gt_nccl_cb on_nccl);
/* An entry the decoder holds open: taken, waiting for its exit.  An entry
 * stays open until its call is emitted and is no longer open during that
 * call's callback, so that while an exit or a process end emits several
 * calls, what is open is exactly what has not come out yet. */
struct gt_open_entry {
	uint64_t ts;		/* entry time */
	uint16_t api;		/* enum gt_api; an NCCL call's: GT_NCCL_API_BASE + enum gt_nccl_api */
	uint64_t *cookie;	/* the entry's cookie (see gt_entry_cb): the consumer may
				 * change it until the call comes back with it */
};

typedef int (*gt_open_cb)(void *ctx, const struct gt_open_entry *e);

/* Calls cb for each entry open on thread (pid, tid), oldest first (the one
 * the decoder gives up on first when exits were lost), until cb returns
 * non-zero, which is returned.  The thread's state is the decoder's: cb
 * must not feed it.  A consumer that has to know what is still to come
 * (a watermark, GPU records of a call under way) asks here instead of
 * pairing entries and exits again. */
int gt_decoder__open_entries(struct gt_decoder *d, uint32_t pid, uint32_t tid,
			     gt_open_cb cb, void *ctx);
/* True for a record the decoder takes as a call entry (a GT_REC_CALL,
 * _LAUNCH or _CALL_STR of a known api, whole): the records the entry hook
 * sees, so that a second pass over a trace can count them. */
bool gt_decoder__takes_entry(const struct gt_hdr *rec);
/* Feeds one record; calls on_call for every call it completes.  A non-zero
 * return of a callback is returned. */
int gt_decoder__feed(struct gt_decoder *d, const struct gt_hdr *rec);
/* Emits the entries still open (has_exit = false, at_end = true but for
 * entry-only launches). */
int gt_decoder__finish(struct gt_decoder *d);
const struct gt_decoder_stats *gt_decoder__stats(const struct gt_decoder *d);
/* The latest hdr.ts of the records fed so far (0 before the first): where a
 * trace without a trailer ends. */
uint64_t gt_decoder__last_ts(const struct gt_decoder *d);
/* ---- call stacks (GT_REC_STACK and what it points to; --stacks) ---- */

/* A frame as the readers show it. */
struct gt_frame {
	const char *module;	/* the file's path, NULL when in none; a Python frame's
				 * source file */
	const char *symbol;	/* the function, NULL when not known; a Python frame's
				 * qualified name */
	uint64_t offset;	/* in the file (the address when module is NULL); a Python
				 * frame's line, 0 when not known */
	uint64_t delta;		/* from the function's start, with symbol */
	bool python;		/* a Python frame: module:offset is file:line */
};

/* Stack id's frames, innermost first (the probed libcuda function): their
 * count, *flags its GT_STACK_*; 0 when the trace holds no such stack. Valid
 * until the next feed. */
size_t gt_decoder__stack(const struct gt_decoder *d, uint32_t id, uint16_t *flags);
/* Frame i of stack id (i below gt_decoder__stack's count). */
bool gt_decoder__frame(const struct gt_decoder *d, uint32_t id, size_t i, struct gt_frame *f);
/* "func+0x1c (libfoo.so)", "libfoo.so+0x1234" or "0x7f12...": frame f in
 * buf. Returns buf. */
const char *gt_frame__str(const struct gt_frame *f, char *buf, size_t len);
/* The frame of stack id where the program called into CUDA: the first
 * past the CUDA libraries (libcuda, libcudart, libcublas, ...), else the
 * caller of the probed function; false when the stack has none. */
bool gt_decoder__call_site(const struct gt_decoder *d, uint32_t id, struct gt_frame *f);
/* A key of frame f's place (its file and offset), the same for every stack
 * through it: for grouping calls by call site. */
uint64_t gt_frame__key(const struct gt_frame *f);

void gt_decoder__free(struct gt_decoder *d);

/* Process name (command line, else comm from exec) learned from GT_NAME_PROCESS
 * and GT_REC_EXEC records so far; NULL if unknown.  Valid until the next feed. */
const char *gt_decoder__process_name(const struct gt_decoder *d, uint32_t pid);
/* A job trace (merge --hosts): its hosts (0 for any other trace), and host
 * h's name (NULL unknown), from its GT_REC_HOST records; a process of host h
 * has pid >> GT_HOST_SHIFT == h. */
uint32_t gt_decoder__nhosts(const struct gt_decoder *d);
/* A pid as the readers' text says it: in a job trace the process' own pid
 * and its host, "18540 on host 1"; else the number. */
static inline void gt_pid_text(char *buf, size_t len, uint32_t pid)
{
	if (pid >> GT_HOST_SHIFT)
		snprintf(buf, len, "%u on host %u", pid & ((1u << GT_HOST_SHIFT) - 1), pid >> GT_HOST_SHIFT);
	else
		snprintf(buf, len, "%u", pid);
}
const char *gt_decoder__host_name(const struct gt_decoder *d, uint32_t host);
/* The process name when it is the command line (GT_NAME_PROCESS, or a
 * forked child's inherited from its parent), NULL when it is a comm or
 * unknown.  Valid until the next feed. */
const char *gt_decoder__process_cmdline(const struct gt_decoder *d, uint32_t pid);
/* cgroup v2 id of a process (exec/fork/first-sight records), 0 if unknown. */
uint64_t gt_decoder__process_cgroup(const struct gt_decoder *d, uint32_t pid);
/* Thread comm learned from GT_NAME_THREAD records; NULL if unknown. */
const char *gt_decoder__thread_name(const struct gt_decoder *d, uint32_t tid);
/* pid's rank in its job (struct gt_rank_info); false when nothing says. */
bool gt_decoder__process_rank(const struct gt_decoder *d, uint32_t pid, struct gt_rank_info *r);
/* The entry of the NCCL call that the launch whose entry was at launch_ts
 * on thread tid of pid is being made inside, while that launch is still
 * open (a merged trace has a linked GPU record right after its launch's
 * entry); 0 when it is not open, or not inside an NCCL call. */
uint64_t gt_decoder__nccl_of_launch(const struct gt_decoder *d, uint32_t pid, uint32_t tid,
				    uint64_t launch_ts);
/* "rank 1/2" (rank/world size, "?" for an unknown size) into buf when pid's
 * rank is known, else ""; returns buf. */
char *gt_decoder__rank_text(const struct gt_decoder *d, uint32_t pid, char *buf, size_t len);

/* The demangled form of a mangled kernel name (as gt_demangle of
 * lib/demangle.h; the name itself when it is not an Itanium name), each
 * distinct name demangled once and kept until the decoder is freed: the same
 * string comes back for the same name, so callers may key on its address.
 * The name unchanged when out of memory. */
const char *gt_decoder__demangle(struct gt_decoder *d, const char *mangled);
/* The names of a GT_REC_GPU_KERNEL record, read no further than the record's
 * end: returns the demangled name ("unknown_kernel" when the record has
 * none) and sets *mangled to the mangled one (NULL when none); both strings
 * live as long as the decoder, as for gt_decoder__demangle. */
const char *gt_decoder__gpu_kernel_name(struct gt_decoder *d, const struct gt_gpu_kernel *k,
					const char **mangled);
/* Length of the string s[0..len) that a record carries, cut at its first NUL,
 * at the end of the record and at GT_STR_MAX - 1: a damaged len never makes
 * a reader run past the record. */
size_t gt_rec_strlen(const struct gt_hdr *rec, const char *s, size_t len);
/* Appended to a string the recorder had to cut (the record's truncated
 * flag): a kernel name or path shown cut says that it is (U+2026). */
#define GT_STR_CUT_MARK "\xe2\x80\xa6"

#endif
