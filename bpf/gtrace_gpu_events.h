/* SPDX-License-Identifier: MIT */
/*
 * The GPU side's records: what the CUPTI agent writes (kernels, copies,
 * sets, API records, NVTX, graph nodes, its counters and marks), what the
 * merger adds, and what came of loading the agent into a process.
 * Part of the trace format: included by bpf/gtrace_events.h (struct
 * gt_hdr, the record types), never on its own.
 */
#ifndef GTRACE_GPU_EVENTS_H
#define GTRACE_GPU_EVENTS_H

/* Flags of GPU records. */
#define GT_GPU_LINKED		(1u << 0)	/* launch_ts/launch_tid name the eBPF call it came from */
#define GT_GPU_CAUSALITY	(1u << 1)	/* linked, but the GPU started before the call's entry */
#define GT_GPU_API_MATCHED	(1u << 2)	/* a GT_REC_GPU_API with the correlation id was found */
#define GT_GPU_BY_ORDER		(1u << 3)	/* linked by launch order (no GT_REC_GPU_API), see FORMAT.md */
#define GT_GPU_GRAPH		(1u << 4)	/* kernel: a CUDA graph ran it; a struct gt_gpu_graph
						 * ends the record (the agent) */
#define GT_GPU_CAPTURED		(1u << 5)	/* kernel: its gt_gpu_graph names the launch call that
						 * made its node during stream capture (the merger) */
#define GT_GPU_CLOCK_FIXED	(1u << 6)	/* hdr.ts moved by the merger: the process' GPU clock
						 * drifted from the host's (FORMAT.md) */

/* A kernel as the GPU ran it. Written by the CUPTI agent with the link
 * fields 0; the merger fills them. */
struct gt_gpu_kernel {
	struct gt_hdr hdr;	/* ts = start on the GPU (CLOCK_MONOTONIC); pid = process;
				 * tid = 0 until linked, then the launching thread */
	__u64 dur;		/* end - start on the GPU, ns */
	__u64 launch_ts;	/* entry ts of the eBPF launch call (merger), 0 = unmatched */
	__u32 correlation;	/* CUPTI correlation id, shared with its GT_REC_GPU_API */
	__u32 device;		/* CUPTI device id */
	__u32 context;		/* CUPTI context id */
	__u32 stream;		/* CUPTI stream id */
	__u32 grid[3];		/* grid dims */
	__u32 block[3];		/* block dims */
	__u32 shmem;		/* dynamic + static shared memory per block, bytes */
	__u16 flags;		/* GT_GPU_* */
	__u16 len;		/* bytes in name including the NUL */
	char name[];		/* mangled kernel name as CUPTI gives it, record padded to 8 */
};

/* The last bytes of a kernel record that a CUDA graph ran (GT_GPU_GRAPH),
 * after the name's padding: the graph node that ran it and, once the merger
 * found it (GT_GPU_CAPTURED), the launch call whose stream capture made that
 * node -- the line of code that put the kernel in the graph. */
struct gt_gpu_graph {
	__u64 node;		/* CUPTI's id of the node that ran it (the executable graph's) */
	__u64 capture_ts;	/* entry ts of the eBPF launch call that made the node, 0 = unknown */
	__u32 capture_tid;	/* its thread */
	__u32 stack;		/* its stack (a GT_REC_STACK id), 0 = none recorded */
};

/* gt_cupti_attach.result */
enum gt_attach_result {
	GT_ATTACH_OK = 0,	/* the agent is in the process and started: its GPU side is recorded */
	GT_ATTACH_REFUSED = 1,	/* unsafe or impossible (why says): nothing was done to it */
	GT_ATTACH_CONFLICT = 2,	/* another CUPTI subscriber holds CUPTI (torch.profiler, Kineto,
				 * nsys): the agent is in the process, inert */
	GT_ATTACH_FAILED = 3,	/* the agent is in the process but could not start (it said why
				 * on the process' stderr) */
	GT_ATTACH_BUSY = 4,	/* the agent there records for another recorder now */
	GT_ATTACH_DIED = 5,	/* the process died while the agent was loaded or started in it
				 * (why says how: the fault of the held thread and where it was,
				 * or the signal that ended it) */
	GT_ATTACH__COUNT
};

/* One process the recorder tried to load the CUPTI agent into: what came of
 * it, and how long the process' thread was held for it (the stall the
 * attach cost the program: its system call interrupted, dlopen, CUPTI's
 * start).  A process not GT_ATTACH_OK is recorded by its calls only. */
/* The process' CPython (3.14) loaded the agent itself, as a remote script
 * (PEP 768): no thread was stopped; held_ns is the time its interpreter
 * spent on it. Without it a thread was held (ptrace). */
#define GT_ATTACH_F_INTERP	(1u << 0)
struct gt_cupti_attach {
	struct gt_hdr hdr;	/* ts = when the attach began (CLOCK_MONOTONIC); pid = the process */
	__u64 held_ns;		/* how long its thread was held, 0 when it never was */
	__u32 result;		/* enum gt_attach_result */
	__u16 len;		/* bytes in why including its NUL, 0 = none */
	__u16 flags;		/* GT_ATTACH_F_*: how the agent went in (0 in older traces) */
	char why[];		/* why it was not attached, in words (attached: what it does not
				 * record, "no NVTX ranges ..."; len 0 when nothing); record padded to 8 */
};

/* A kernel node of a CUDA graph made (flags 0: inside the call that made
 * it, on its thread -- a launch on a capturing stream, cuGraphAddKernelNode)
 * or cloned from another node (GT_GRAPH_NODE_CLONED: cuGraphInstantiate's
 * executable graph, cuGraphClone). */
#define GT_GRAPH_NODE_CLONED	(1u << 0)
struct gt_gpu_graph_node {
	struct gt_hdr hdr;	/* ts = when (CLOCK_MONOTONIC); pid; tid = the calling thread */
	__u64 node;		/* CUPTI's node id */
	__u64 original;		/* GT_GRAPH_NODE_CLONED: the node it is a clone of */
	__u32 graph;		/* CUPTI's id of the node's graph, 0 = unknown */
	__u32 flags;		/* GT_GRAPH_NODE_* */
};

/* A copy or set as the GPU ran it. */
struct gt_gpu_copy {
	struct gt_hdr hdr;	/* ts = start on the GPU; pid; tid = launching thread once linked */
	__u64 dur;		/* end - start, ns */
	__u64 launch_ts;	/* entry ts of the eBPF call (merger), 0 = unmatched */
	__u64 bytes;		/* bytes copied or set */
	__u32 correlation;	/* CUPTI correlation id */
	__u32 device;		/* CUPTI device id (the source device for peer copies) */
	__u32 context;		/* CUPTI context id */
	__u32 stream;		/* CUPTI stream id */
	__u16 kind;		/* copies: enum gt_copy_kind; sets: 0 */
	__u16 flags;		/* GT_GPU_* */
	__u32 _pad;		/* explicit padding */
};

/* CUPTI's record of a driver API call that launched or copied: joins the GPU
 * records (by correlation) to a thread and a CPU interval, which the merger
 * matches with the eBPF call. */
struct gt_gpu_api {
	struct gt_hdr hdr;	/* ts = CPU start per CUPTI; pid; tid = system tid */
	__u64 dur;		/* CPU end - start, ns */
	__u32 correlation;	/* CUPTI correlation id */
	__u32 cbid;		/* CUPTI driver API callback id (CUpti_driver_api_trace_cbid) */
};

/* An NVTX range (dur > 0 or a push/pop pair) or mark (dur = 0). */
struct gt_nvtx {
	struct gt_hdr hdr;	/* ts = start; pid; tid = system tid */
	__u64 dur;		/* ns; 0 for a mark */
	__u32 id;		/* CUPTI marker id */
	__u16 len;		/* bytes in name including the NUL */
	__u16 _pad;		/* explicit padding */
	char name[];		/* the message, record padded to 8 */
};

/* gt_cupti_stats.flags */
enum gt_cupti_stats_flags {
	GT_CUPTI_ST_FINAL = 1u << 0,	/* the agent stopped for good (the process exits, or
					 * a private spool directory's recording ended) */
	GT_CUPTI_ST_PAUSED = 1u << 1,	/* the agent paused: the recorder ended or asked it to;
					 * it records again for the next recorder */
	GT_CUPTI_ST_DISK_FULL = 1u << 2,/* the spool's file system was full at least once */
	GT_CUPTI_ST_BACKLOG = 1u << 3,	/* the spool held more unread bytes than the agent's
					 * bound at least once (no recorder read it fast enough) */
	GT_CUPTI_ST_DETACHED = 1u << 4,	/* the agent was loaded into the running process
					 * (--cupti=attach) and detaches: CUPTI is finalized at the
					 * program's next CUDA call, the agent inert after */
};

/* The agent's own counters for one process, written when it stops or pauses:
 * what it did since it last began recording into this spool file.  Records of
 * an agent older than `flags` end at clock_offset_ns (gt_rec__min_size). */
struct gt_cupti_stats {
	struct gt_hdr hdr;	/* ts = when written; pid = the process */
	__u64 records;		/* activity records converted */
	__u64 dropped;		/* records CUPTI reported dropped (buffers full) */
	__u64 buffers;		/* buffers completed */
	__u64 unknown;		/* activity kinds received but not converted */
	__u64 clock_offset_ns;	/* |CUPTI timestamp - CLOCK_MONOTONIC| measured at start */
	__u64 flags;		/* enum gt_cupti_stats_flags */
	__u64 lost_disk;	/* converted records not written: the file system was full */
	__u64 lost_backlog;	/* converted records not written: the spool held too much unread */
};

/* Written by the agent after each forced flush while it records into the run
 * directory or a recorder's private one (cupti/gtrace_cupti.h): every kernel,
 * copy and set that ended before hdr.ts is in the file before this record, so
 * that the reader may take hdr.ts as "now" on the GPU records' own clock. */
struct gt_cupti_mark {
	struct gt_hdr hdr;	/* ts = just before the flush (CLOCK_MONOTONIC); pid = the process */
	__u64 records;		/* activity records converted so far */
	__u64 flush_ns;		/* how long the flush and the writing of what it gave took */
};

/* What the merger did, appended once to a merged trace. */
struct gt_merge_stats {
	struct gt_hdr hdr;	/* ts = when merged */
	__u64 gpu_records;	/* kernels, copies and sets merged */
	__u64 linked;		/* of which linked to their eBPF call */
	__u64 unmatched_gpu;	/* GPU records with no eBPF call found */
	__u64 unmatched_calls;	/* eBPF launches/copies with no GPU record */
	__u64 causality;	/* linked GPU records that started before their call */
	__u64 no_api;		/* GPU records without a GT_REC_GPU_API of their correlation */
};

#endif /* GTRACE_GPU_EVENTS_H */
