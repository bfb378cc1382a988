/* SPDX-License-Identifier: MIT */
/*
 * The one event ABI of gtrace-bpf: record layouts shared by the BPF programs
 * (bpf/), the recorder and every reader (user/) and the CUPTI agent (cupti/).
 * Types only: no functions, no includes that pull in libc.  Every record
 * starts with struct gt_hdr; sizes are multiples of 8 and checked below, so
 * the same bytes mean the same thing in the kernel, on disk and in readers.
 */
#ifndef GTRACE_EVENTS_H
#define GTRACE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Record types.  Values below 32 come from BPF (or stand for a BPF record the
 * recorder wrote on its behalf), 32 and up from userspace. */
enum gt_rec_type {
	GT_REC_CALL = 1,	/* libcuda call entry with raw arguments (struct gt_call) */
	GT_REC_LAUNCH = 2,	/* kernel launch entry (struct gt_launch) */
	GT_REC_RET = 3,		/* libcuda call exit (struct gt_ret) */
	GT_REC_CALL_STR = 4,	/* call entry carrying a string argument (struct gt_call_str) */
	GT_REC_RET_STR = 5,	/* call exit carrying the string an out-pointer points to (struct gt_ret_str) */
	GT_REC_LIBOPEN = 6,	/* a process opened a file named libcuda.so* or libnccl.so* (struct gt_path) */
	GT_REC_EXEC = 7,	/* a process called exec (struct gt_proc_evt) */
	GT_REC_FORK = 8,	/* a traced process forked (struct gt_proc_evt) */
	GT_REC_EXIT = 9,	/* a process exited (struct gt_proc_evt) */
	GT_REC_IOCTL = 10,	/* an ioctl on an NVIDIA device, entry to exit (struct gt_ioctl) */
	GT_REC_OFFCPU = 11,	/* a traced thread was off-CPU (struct gt_offcpu) */
	GT_REC_RANGE = 12,	/* a capture range opened or closed in a process (struct gt_capture) */
	GT_REC_NCCL = 13,	/* libnccl call entry with its arguments (struct gt_nccl) */
	GT_REC_NCCL_RET = 14,	/* libnccl call exit (struct gt_ret; api = enum gt_nccl_api) */
	GT_REC_LIBLOAD = 15,	/* a traced process opened a libcuda or libnccl file whose probes were
				 * not in place: held until they were, or the calls it made before
				 * may be missing (struct gt_libload; BPF's, completed by the
				 * recorder) */
	GT_REC_USTACK = 16,	/* the user stack of the call its thread enters next, raw (struct
				 * gt_ustack): from BPF to the recorder only, which writes a
				 * GT_REC_STACK_REF in its place */
	GT_REC_STACK_REF = 17,	/* the interned stack of the call entered next on hdr.tid at hdr.ts
				 * (struct gt_stack_ref) */
	GT_REC_USTACK_SAME = 18,/* the call entered next on hdr.tid comes from a call site whose
				 * stack was sent before (struct gt_ustack_same): from BPF to the
				 * recorder only, which writes a GT_REC_STACK_REF in its place */
	GT_REC_PYCODE = 19,	/* a Python code object seen for the first time in a process' stacks
				 * (struct gt_pycode): from BPF to the recorder only, which writes
				 * a GT_REC_PYFUNC for it */
	GT_REC_ENVIRON = 20,	/* a traced process' environment at its exec (struct gt_environ),
				 * with a pid filter only: from BPF to the recorder only, which
				 * writes the GT_REC_PROC_RANK it gives; never in a file */

	GT_REC_NAME = 32,	/* name table entry written by the recorder (struct gt_name) */
	GT_REC_STATS = 33,	/* snapshot of the drop and event counters (struct gt_stats) */
	GT_REC_PROC_INFO = 34,	/* a process seen for the first time, started before the
				 * recorder or its exec missed (struct gt_proc_evt) */
	/* from the CUPTI agent (cupti/), GPU-side, linked by the merger */
	GT_REC_GPU_KERNEL = 40,	/* a kernel's execution on the GPU (struct gt_gpu_kernel) */
	GT_REC_GPU_MEMCPY = 41,	/* a copy executed by the GPU (struct gt_gpu_copy) */
	GT_REC_GPU_MEMSET = 42,	/* a set executed by the GPU (struct gt_gpu_copy) */
	GT_REC_GPU_API = 43,	/* CUPTI's record of the driver call that caused GPU work:
				 * its correlation id and CPU interval (struct gt_gpu_api) */
	GT_REC_NVTX = 44,	/* an NVTX range or mark (struct gt_nvtx) */
	GT_REC_CUPTI_STATS = 45,/* the agent's counters at the end of a process (struct gt_cupti_stats) */
	GT_REC_MERGE_STATS = 46,/* what the merger linked and could not (struct gt_merge_stats) */
	GT_REC_CAPTURE = 47,	/* the recorder changed what it captures: a light-mode window
				 * opened or closed, the hot probes went live or off (struct gt_capture) */
	GT_REC_TRIGGER = 48,	/* the daemon's flight recorder fired on a condition (struct gt_trigger) */
	GT_REC_OVERHEAD = 49,	/* the daemon's estimate of what recording costs, and what it changed
				 * to keep --budget (struct gt_overhead) */
	GT_REC_CUPTI_MARK = 50,	/* the agent handed over what CUPTI held: only in spool files that a
				 * daemon reads as they grow, never in a trace (struct gt_cupti_mark) */
	GT_REC_GPU_METRIC = 51,	/* one GPU metric sampled through NVML by the recorder
				 * (struct gt_gpu_metric) */
	GT_REC_PROC_RANK = 52,	/* a process' rank in its job, from its environment at exec
				 * (struct gt_proc_rank) */
	GT_REC_STACK = 53,	/* an interned stack: its frames as module + offset (struct gt_stack) */
	GT_REC_MODULE = 54,	/* a file the frames of stacks point into (struct gt_module) */
	GT_REC_SYMBOL = 55,	/* the function a frame of a module falls in (struct gt_symbol) */
	GT_REC_PYFUNC = 56,	/* a Python function Python frames of stacks point to (struct gt_pyfunc) */
	GT_REC_GPU_GRAPH_NODE = 57,/* the CUPTI agent saw a CUDA graph's kernel node made (stream
				 * capture, cuGraphAddKernelNode) or cloned (instantiation,
				 * cuGraphClone) (struct gt_gpu_graph_node) */
	GT_REC_CUPTI_ATTACH = 58,/* the recorder loaded the CUPTI agent into a running process
				 * (--cupti=attach), or refused to, or could not (struct
				 * gt_cupti_attach) */
	GT_REC_CLOCK = 59,	/* a CLOCK_REALTIME reading paired with CLOCK_MONOTONIC, and the
				 * host's clock-sync state: what aligns the traces of several
				 * hosts (struct gt_clock) */
	GT_REC_HOST = 60,	/* a job trace (merge --hosts): one host's place in it (struct
				 * gt_host) */
	GT_REC_MAX = 63,
};

/* Common header of every record. */
struct gt_hdr {
	__u64 ts;	/* CLOCK_MONOTONIC ns (bpf_ktime_get_ns in BPF) */
	__u32 pid;	/* process id (tgid) */
	__u32 tid;	/* thread id (kernel tid), 0 where no thread applies */
	__u16 type;	/* enum gt_rec_type */
	__u16 size;	/* size of the whole record in bytes, a multiple of 8 */
	__u16 api;	/* enum gt_api of the libcuda symbol, 0 for non-call records */
	__u16 cpu;	/* CPU the event was taken on */
};

#define GT_CALL_NARGS 6

/* Entry of a libcuda call decoded in userspace from its raw arguments. For
 * calls whose arguments are a struct (cuMemcpy2D/3D) BPF copies the needed
 * struct fields into args[] instead; gtrace_api.h says which. */
struct gt_call {
	struct gt_hdr hdr;
	__u64 args[GT_CALL_NARGS];	/* the first six integer arguments (x86-64 rdi..r9) */
};

/* Flags of struct gt_launch. */
#define GT_LAUNCH_COOPERATIVE	(1u << 0)	/* cooperative launch, or Ex with the cooperative attribute */
#define GT_LAUNCH_EX		(1u << 1)	/* came from a CUlaunchConfig (cuLaunchKernelEx) */
#define GT_LAUNCH_CFG_FAULT	(1u << 2)	/* the CUlaunchConfig could not be read: dims are 0 */
#define GT_LAUNCH_NO_EXIT	(1u << 3)	/* recorded without a return probe: no exit record follows */

/* Entry of cuLaunchKernel / cuLaunchKernelEx / cuLaunchCooperativeKernel and
 * their _ptsz variants, the hot path: everything already in final form. */
struct gt_launch {
	struct gt_hdr hdr;
	__u64 func;		/* CUfunction (or CUkernel) handle as passed */
	__u64 stream;		/* CUstream handle, 0 = legacy default stream */
	__u32 grid[3];		/* gridDimX/Y/Z */
	__u32 block[3];		/* blockDimX/Y/Z */
	__u32 shmem;		/* dynamic shared memory bytes per block */
	__u16 flags;		/* GT_LAUNCH_* */
	__u16 nattrs;		/* CUlaunchConfig.numAttrs for Ex launches */
};

/* Entry of a libnccl call (bpf/gtrace_nccl.h lists them and where each
 * argument is). */
struct gt_nccl {
	struct gt_hdr hdr;	/* api = enum gt_nccl_api */
	__u64 sendbuff;		/* the send buffer, 0 where none */
	__u64 recvbuff;		/* the receive buffer, 0 where none */
	__u64 count;		/* elements (ReduceScatter: recvcount; AllGather: sendcount) */
	__u64 comm;		/* the communicator the call works on (split: the parent), 0 none */
	__u64 stream;		/* cudaStream_t, 0 = the default stream or none */
	__u64 uid;		/* inits: digest of the ncclUniqueId (GT_NCCL_UID), the same in
				 * every rank of the communicator; else 0 */
	__u64 out;		/* where a new communicator is written (inits, split), 0 none */
	__s32 peer;		/* root (Reduce, Broadcast), peer (Send, Recv), rank (inits),
				 * color (split); -1 none */
	__s32 nranks;		/* inits: nranks (InitAll: ndev); split: key; else 0 */
	__u32 datatype;		/* ncclDataType_t, 0xffffffff none */
	__u32 op;		/* ncclRedOp_t (0-4 built in, higher a custom one), 0xffffffff none */
	__u32 flags;		/* GT_NCCL_UID, GT_NCCL_ARGS_FAULT */
	__u32 _pad;		/* explicit padding, zero */
};

/* A process' place in its job, read by the recorder from
 * /proc/PID/environ when it first saw the process (the environment the
 * program was started with: torchrun and most launchers set these). */
struct gt_proc_rank {
	struct gt_hdr hdr;	/* ts = when read; pid = the process; tid 0 */
	__s32 rank;		/* RANK, -1 unset */
	__s32 local_rank;	/* LOCAL_RANK, -1 unset */
	__s32 world_size;	/* WORLD_SIZE, -1 unset */
	__s32 local_world_size;	/* LOCAL_WORLD_SIZE, -1 unset */
};

/* GT_REC_ENVIRON: the first GT_ENVIRON_MAX - 1 bytes of the environment a
 * process exec'd with (NUL-separated as in the process), read at the exec:
 * a short process may be gone before the recorder could read
 * /proc/PID/environ. Only its rank is taken from it; it is never written. */
#define GT_ENVIRON_MAX 32768

struct gt_environ {
	struct gt_hdr hdr;	/* ts = when read, at the exec; pid, tid of the process */
	__u32 len;		/* bytes of env read */
	__u32 total;		/* bytes of the whole environment */
	char env[GT_ENVIRON_MAX];
};

/* Flags of struct gt_ret. */
#define GT_RET_OUT	(1u << 0)	/* out holds the value the out-pointer argument pointed to */
#define GT_RET_OUT_FAULT (1u << 1)	/* the out-pointer could not be read */

/* Exit of a libcuda call: pairs with the latest open entry of the same
 * api on the same thread. */
struct gt_ret {
	struct gt_hdr hdr;
	__u64 out;	/* *out-pointer after the call (new handle, device pointer), see flags */
	__s32 ret;	/* CUresult returned */
	__u32 flags;	/* GT_RET_* */
};

#define GT_STR_MAX 4096	/* longest string a record carries, NUL included */

/* Entry of a call with a string argument (kernel name, module path). */
struct gt_call_str {
	struct gt_hdr hdr;
	__u64 args[4];	/* first four integer arguments */
	__u16 len;	/* bytes in str including the NUL (0 = could not be read) */
	__u16 truncated;/* 1 when the string was longer than GT_STR_MAX - 1 */
	__u32 _pad;	/* explicit padding */
	char str[];	/* NUL-terminated, record padded to 8 bytes */
};

/* Exit of a call whose out-pointer receives a string (cuFuncGetName). */
struct gt_ret_str {
	struct gt_hdr hdr;
	__u64 out;	/* the char* the out-pointer received */
	__s32 ret;	/* CUresult returned */
	__u16 len;	/* bytes in str including the NUL (0 = could not be read) */
	__u16 truncated;/* 1 when cut at GT_STR_MAX - 1 */
	char str[];	/* NUL-terminated, record padded to 8 bytes */
};

/* A path a process opened (libcuda discovery). */
struct gt_path {
	struct gt_hdr hdr;
	__u16 len;	/* bytes in path including the NUL */
	__u16 _pad[3];	/* explicit padding */
	char path[];	/* as passed to openat, relative to the process' cwd and root */
};

/* What became of a process that opened a libcuda or libnccl file whose
 * probes were not in place (struct gt_libload's outcome). Every outcome
 * but HELD leaves a gap: calls the process made in it may be missing. */
enum gt_libload_outcome {
	GT_LL_HELD = 1,		/* stopped until the probes were attached, then continued: no gap */
	GT_LL_TIMEOUT = 2,	/* stopped, but continued at the bound before the probes were in
				 * place: gap from cont_ts to end_ts */
	GT_LL_ATTACH_FAILED = 3,/* the file's probes could not be attached: gap from the open (or
				 * cont_ts when held) to the end of the recording */
	/* not stopped (gap from the open, hdr.ts, to end_ts), because: */
	GT_LL_JOB = 4,		/* a job of a job-control shell (a process group of its own in its
				 * parent's session): the shell would see the stop */
	GT_LL_TTY = 5,		/* in the foreground process group of its controlling terminal */
	GT_LL_PTRACE = 6,	/* ptraced: its tracer would see the stop */
	GT_LL_RELAY = 7,	/* its parent (sudo, su, runuser, doas) relays a child's stop to its own */
	GT_LL_STALE = 8,	/* the recorder was not answering (its heartbeat older than the bound) */
	GT_LL_FULL = 9,		/* too many processes held at once */
	GT_LL_SIGNAL = 10,	/* the stop signal could not be sent, or did not stop it */
	GT_LL_OFF = 11,		/* holding is off (no watchdog, or the open's exit not probed) */
	GT_LL__COUNT,
};

/* A traced process opened a libcuda or libnccl file whose probes were not
 * in place. BPF takes it at the open's return (and stops the process when
 * it may); the recorder attaches the file's probes, continues the process
 * and writes the record with end_ts, cont_ts and the final outcome. */
struct gt_libload {
	struct gt_hdr hdr;	/* ts = the open's return (the stop, when held); pid, tid = the
				 * process and the thread that opened it */
	__u64 end_ts;		/* when the file's probes were in place, 0 = never during the
				 * recording */
	__u64 cont_ts;		/* when the held process was continued, 0 = not held */
	__u64 ino;		/* the file's inode, as the kernel saw it opened */
	__u32 dev;		/* its device, kernel encoding: major << 20 | minor */
	__s32 fd;		/* the descriptor the open returned (-1 unknown) */
	__u16 outcome;		/* enum gt_libload_outcome */
	__u16 len;		/* bytes in path, NUL included */
	__u32 _pad;		/* explicit padding, zero */
	char path[];		/* as passed to openat: relative to the process' cwd and root */
};

/* Process lifecycle. */
struct gt_proc_evt {
	struct gt_hdr hdr;
	__u32 ppid;	/* parent (fork: the forking process; exec/exit: the real parent) */
	__s32 exit_code;/* exit: the wait status code, else 0 */
	char comm[16];	/* task comm at the time of the event */
	__u64 cgroup;	/* cgroup v2 id (inode of the cgroup directory), 0 if unknown */
};

/* Which attach rung produced an ioctl record (enum gt_ioctl_rung). */
enum gt_ioctl_rung {
	GT_RUNG_NONE = 0,
	GT_RUNG_KPROBE = 1,	/* kprobe/kretprobe on the driver's ioctl entry points */
	GT_RUNG_FENTRY = 2,	/* fentry/fexit on them (module BTF) */
	GT_RUNG_SYSCALL = 3,	/* ioctl syscall tracepoints filtered on the device major */
};

/* Flags of struct gt_ioctl. */
#define GT_IOCTL_RM_CONTROL	(1u << 0)	/* param = RM control command (NVOS54 cmd) */
#define GT_IOCTL_RM_ALLOC	(1u << 1)	/* param = RM class allocated (NVOS21/64 hClass) */
#define GT_IOCTL_PARAM_FAULT	(1u << 2)	/* the parameter struct could not be read */

/* One ioctl on an NVIDIA device (or the devices of --ioctl-majors). */
struct gt_ioctl {
	struct gt_hdr hdr;	/* ts = entry; api = 0 */
	__u64 dur;		/* ns from entry to exit */
	__u64 arg;		/* the ioctl's argument (a user pointer for NVIDIA's) */
	__s64 ret;		/* return value: >= 0, or -errno */
	__u32 cmd;		/* request number */
	__u32 rdev;		/* device number, kernel encoding: major << 20 | minor */
	__u32 param;		/* RM control command or RM class, see flags */
	__u16 flags;		/* GT_IOCTL_* */
	__u16 rung;		/* enum gt_ioctl_rung */
	__s32 fd;		/* file descriptor (-1 where the rung does not see it) */
	__u32 _pad;		/* explicit padding */
};

/* An interval a traced thread spent off-CPU. */
struct gt_offcpu {
	struct gt_hdr hdr;	/* ts = switched out; cpu = the CPU it left */
	__u64 dur;		/* ns until it ran again */
	__u32 state;		/* task state it left in: 0 runnable (preempted), 1 sleeping
				 * (S), 2 uninterruptible (D), other kernel TASK_* bits */
	__u32 next_cpu;		/* CPU it came back on */
};

/* Kinds of struct gt_name. */
enum gt_name_kind {
	GT_NAME_KERNEL_MEM = 1,	/* kernel name read from the handle's driver struct (fallback) */
	GT_NAME_PROCESS = 2,	/* key = pid: command line of the process */
	GT_NAME_THREAD = 3,	/* key = tid: thread comm */
	GT_NAME_LIBCUDA = 4,	/* key = dev<<32|ino... (see FORMAT.md): path of an attached libcuda */
	GT_NAME_KERNEL = 5,	/* key = handle: mangled name a naming call gave it, written at the
				 * head of a daemon snapshot whose window no longer holds that call */
};

/* A name learned by the recorder outside the traced programs' path. */
struct gt_name {
	struct gt_hdr hdr;	/* ts = when learned, pid = owning process */
	__u64 key;		/* handle, pid or tid, by kind */
	__u16 kind;		/* enum gt_name_kind */
	__u16 len;		/* bytes in str including the NUL (0: could not be read) */
	__u32 flags;		/* GT_NAME_F_* */
	char str[];		/* NUL-terminated, record padded to 8 bytes */
};

/* Flags of struct gt_name. */
#define GT_NAME_F_RAW	(1u << 0)	/* read by BPF (a kernel name at a first launch, a
					 * command line at exec, a thread comm at a rename or
					 * exit), not yet checked: the recorder checks it and
					 * writes it without this flag, or drops it; never in
					 * a file */

/* Counters, snapshotted into GT_REC_STATS records and the trailer. */
struct gt_counters {
	__u64 events;		/* records the BPF side submitted */
	__u64 drop_ringbuf;	/* records lost to a full ring buffer */
	__u64 drop_stash;	/* out-pointer stash full: exit lost its out value */
	__u64 str_fault;	/* strings that could not be read from user memory */
	__u64 args_fault;	/* argument structs or stack slots that could not be read */
	__u64 names_mem;	/* kernel names recovered from driver structs */
	__u64 names_mem_rejected;/* recovered strings rejected (not a symbol, or layout check failed) */
	__u64 names_mem_verified;/* layout checks against names learned from naming calls that held */
	__u64 names_mem_mismatch;/* layout checks that failed */
	__u64 attach_files;	/* distinct libcuda files attached */
	__u64 attach_probes;	/* uprobes and uretprobes attached */
	__u64 attach_failed;	/* probe attachments that failed */
	__u64 records_written;	/* records written to the file (BPF and userspace) */
	__u64 ranges_nested;	/* range opens inside an open range of the process: ignored */
	__u64 ranges_refused;	/* range opens beyond --capture-range-end's count: not recorded */
	__u64 drop_state;	/* ioctls and off-CPU intervals lost: their start could not be
				 * stored (the kernel refused the map update); 0 in traces
				 * from before this counter */
};

struct gt_stats {
	struct gt_hdr hdr;
	struct gt_counters c;	/* cumulative values at hdr.ts */
};

/* What a struct gt_capture says. */
enum gt_capture_kind {
	GT_CAP_RANGE_OPEN = 1,	/* GT_REC_RANGE: a range opened in hdr.pid, on thread hdr.tid */
	GT_CAP_RANGE_CLOSE = 2,	/* GT_REC_RANGE: the range of hdr.pid closed */
	GT_CAP_WINDOW_OPEN = 3,	/* GT_REC_CAPTURE: light mode: a full-capture window began; every
				 * probe is live from hdr.ts */
	GT_CAP_WINDOW_CLOSE = 4,/* GT_REC_CAPTURE: the window ended at hdr.ts (hot calls after it
				 * are not recorded) */
	GT_CAP_HOT_LIVE = 5,	/* GT_REC_CAPTURE: light mode with capture ranges: the hot probes
				 * are live from hdr.ts (a range that opened before is missing its
				 * hot calls from its open to here) */
	GT_CAP_HOT_OFF = 6,	/* GT_REC_CAPTURE: no range open any more: hot calls after hdr.ts
				 * are not recorded */
	GT_CAP_LOOKUPS_OFF = 7,	/* GT_REC_CAPTURE: the kernel lookups (cuKernelGetFunction, made by
				 * the runtime per launch) are not recorded after hdr.ts: kernel
				 * names come from the driver's function structures, checked
				 * against index names the program looked up; latency_ns = how
				 * long their probes took to detach (starting at hdr.ts) */
};

/* What opened a capture range, or that a record is about a window. */
enum gt_capture_source {
	GT_CAPSRC_NONE = 0,
	GT_CAPSRC_PROFILER = 1,	/* cuProfilerStart .. cuProfilerStop (-c cudaProfilerApi) */
	GT_CAPSRC_NVTX = 2,	/* an NVTX range of --nvtx-capture, reported by the CUPTI agent */
	GT_CAPSRC_WINDOW = 3,	/* light mode's periodic full-capture window */
};

/* Flags of struct gt_capture. */
#define GT_CAP_F_REFUSED	(1u << 0)	/* open: beyond --capture-range-end's count; nothing of
						 * this range is recorded, and no close follows */
#define GT_CAP_F_EXIT		(1u << 1)	/* close: the process exited inside the range */
#define GT_CAP_F_CUT		(1u << 2)	/* close: the recording ended inside the range (written
						 * by the recorder) */

/* A change of what is captured.  "Hot" calls are those a program makes
 * per kernel (launches, graph launches, async copies and sets, event
 * records, stream waits, queries): light mode records them only inside
 * windows, while the cold ones (waits, allocations, module loads, context,
 * stream and event lifecycles, markers) and the kernel sources stay on. */
struct gt_capture {
	struct gt_hdr hdr;	/* ts = when; pid, tid = the range's process and thread, 0 for
				 * the recorder's own (windows, hot probes) */
	__u32 kind;		/* enum gt_capture_kind */
	__u32 source;		/* enum gt_capture_source */
	__u32 index;		/* ranges: 1-based number in order of opening in the recording;
				 * windows: 1-based window number; HOT_LIVE/OFF: the range that
				 * made the change */
	__u32 flags;		/* GT_CAP_F_* */
	__u64 latency_ns;	/* WINDOW_OPEN, HOT_LIVE: ns the hot probes took to attach (ending
				 * at hdr.ts); WINDOW_CLOSE, HOT_OFF: ns they took to detach
				 * (starting at hdr.ts); 0 for ranges */
};

/* What fired a flight-recorder trigger (gtrace-bpf daemon --trigger). */
enum gt_trigger_kind {
	GT_TRIG_SYNC = 1,	/* a synchronization call waited longer than the threshold */
	GT_TRIG_ERROR = 2,	/* a CUDA call returned an error (code) */
	GT_TRIG_EXIT = 3,	/* a traced process exited with a non-zero status or a signal */
	GT_TRIG_PROFILER = 4,	/* a cuProfilerStart range opened */
	GT_TRIG_SIGNAL = 5,	/* the daemon received SIGUSR1 */
	GT_TRIG_GPU_IDLE = 6,	/* a process with the CUPTI agent had its GPU idle longer than the
				 * threshold (from its GPU records) */
};

/* A trigger that fired, written into the daemon's window before its
 * snapshot is taken (an instant on the timeline). */
struct gt_trigger {
	struct gt_hdr hdr;	/* ts = when the condition held (the sync's or failed call's
				 * exit, the exit, the profiler start, the signal's arrival, the
				 * end of the idle time measured); pid, tid = what caused it (0
				 * for a signal; tid 0 for gpu-idle); api = the call's
				 * enum gt_api for sync, error and profiler, else 0 */
	__u32 kind;		/* enum gt_trigger_kind */
	__s32 code;		/* error: the CUresult; exit: the wait status; else 0 */
	__u64 wait_ns;		/* sync: how long the call waited; gpu-idle: how long the GPU was
				 * idle, up to hdr.ts (the next activity's start, or the agent's
				 * flush mark while it still was); else 0 */
	__u32 suppressed;	/* triggers that fired since the previous snapshot was taken
				 * and wrote none (rate limit: one snapshot per window) */
	__u32 _pad;		/* explicit padding, zero */
};

/* Why a struct gt_overhead was written. */
enum gt_overhead_reason {
	GT_OVH_ESTIMATE = 0,	/* the periodic estimate; nothing changed */
	GT_OVH_CALIBRATED = 1,	/* the cost of one probe hit was measured (hit_ns, ret_ns) */
	GT_OVH_DUTY_DOWN = 2,	/* light mode's full-capture duty cycle was lowered to keep the budget */
	GT_OVH_DUTY_UP = 3,	/* ... raised again, never above the configured one */
	GT_OVH_OVER = 4,	/* over budget at the lowest duty cycle: the always-on probes alone
				 * cost more than the budget */
	GT_OVH_SHED = 5,	/* ... so the always-on api that cost most (hdr.api) was moved to
				 * the window set: recorded only inside light windows from ts */
	GT_OVH_RESTORE = 6,	/* a shed api (hdr.api) recorded always-on again from ts */
	GT_OVH__COUNT,
};

/* The overhead budget (gtrace-bpf daemon --budget): what the probes cost the
 * traced programs over the last interval, estimated from measured figures:
 * probe hits (the kernel's BPF run counts, entry and return programs apart)
 * times the cost of one hit calibrated on this machine, plus the programs'
 * run time (kernel BPF stats). The estimate is per thread, as a fraction of
 * wall time: probe time / (interval - probe time) of the thread that paid
 * most (hits attributed to threads by their records; hits no record shows,
 * e.g. gated ones, charged to that thread too). */
struct gt_overhead {
	struct gt_hdr hdr;	/* ts = the interval's end (shed, restore: the flip); pid, tid =
				 * the thread that paid most, 0 when no traced thread hit a
				 * probe; api = the api shed or given back, else 0 */
	__u64 interval_ns;	/* the interval the figures are over */
	__u64 hits;		/* probe program runs in the interval, every program */
	__u64 probe_ns;		/* the estimated time that thread spent in probes */
	__u64 total_ns;		/* ... every thread together */
	__u64 bpf_ns;		/* the BPF programs' run time in the interval (part of total_ns) */
	__u32 estimate_ppm;	/* probe_ns / (interval_ns - probe_ns), parts per million */
	__u32 budget_ppm;	/* --budget in ppm, 0 = none */
	__u32 duty_ppm;		/* light mode's full-capture duty cycle from now on (window /
				 * period), ppm; 1000000 in full mode */
	__u32 period_ms;	/* light mode's window period from now on, ms; 0 in full mode */
	__u32 hit_ns;		/* calibrated cost of one entry-probe hit (trap and a minimal
				 * program), ns */
	__u32 ret_ns;		/* ... of one return-probe hit, ns */
	__u32 reason;		/* enum gt_overhead_reason */
	__u32 sampler_ppm;	/* CPU time of the recorder's GPU-metrics threads (--gpu-metrics)
				 * in the interval / interval_ns, ppm of one CPU; measured, the
				 * recorder's own cost, not in estimate_ppm (0: no sampler) */
	__u32 cut;		/* shed, restore: calls of the api in flight at the swap whose
				 * exit could not be recorded; else 0.  Appended: a record of a
				 * build before it ends here (96 bytes) and reads 0
				 * (gt_overhead__cut) */
	__u32 _pad;		/* zero */
};

/* What a struct gt_gpu_metric measures. Ids are ours (stable in the file),
 * not NVML's; which of them a GPU supports is probed once at the start and
 * said in the header's options (gpu_metrics_devN=MASK, bit = id). */
enum gt_gpu_metric_id {
	/* every GPU (NVML's basic queries) */
	GT_GPUM_GPU_UTIL = 0,	/* percent of time a kernel was executing */
	GT_GPUM_MEM_UTIL = 1,	/* percent of time device memory was read or written */
	GT_GPUM_MEM_USED = 2,	/* device memory used, bytes */
	GT_GPUM_MEM_TOTAL = 3,	/* device memory, bytes */
	GT_GPUM_SM_CLOCK = 4,	/* SM clock, MHz */
	GT_GPUM_MEM_CLOCK = 5,	/* memory clock, MHz */
	GT_GPUM_POWER = 6,	/* power draw, W */
	GT_GPUM_TEMP = 7,	/* GPU die temperature, degrees C */
	GT_GPUM_THROTTLE = 8,	/* clocks event (throttle) reasons, NVML's bit mask */
	GT_GPUM_PROC_MEM = 9,	/* device memory one process uses, bytes (hdr.pid = the process,
				 * as NVML lists it; about once a second; 0 once it is no
				 * longer listed) */
	GT_GPUM_LOST = 15,	/* 1: NVML said the GPU fell off the bus (NVML_ERROR_GPU_IS_LOST);
				 * written once, none of its metrics after it */
	/* GPM (Hopper and later), over the interval since the previous sample */
	GT_GPUM_SM_ACTIVE = 16,	/* percent of SMs busy */
	GT_GPUM_SM_OCCUPANCY = 17,/* percent of warps active vs the theoretical maximum */
	GT_GPUM_TENSOR_ACTIVE = 18,/* percent of time SMs did any tensor operation */
	GT_GPUM_FP16_ACTIVE = 19,/* percent, non-tensor FP16 */
	GT_GPUM_FP32_ACTIVE = 20,/* percent, non-tensor FP32 */
	GT_GPUM_FP64_ACTIVE = 21,/* percent, non-tensor FP64 */
	GT_GPUM_INT_ACTIVE = 22,/* percent, integer operations */
	GT_GPUM_DRAM_BW = 23,	/* percent of the DRAM bandwidth's theoretical maximum */
	GT_GPUM_PCIE_TX = 24,	/* PCIe traffic from the GPU, MiB/s */
	GT_GPUM_PCIE_RX = 25,	/* ... to the GPU, MiB/s */
	GT_GPUM_NVLINK_TX = 26,	/* NVLink, every link, written, MiB/s */
	GT_GPUM_NVLINK_RX = 27,	/* ... read, MiB/s */
	GT_GPUM_MAX = 32,	/* ids are below this (the header's masks are 32 bits) */
};

/* One GPU metric at one time: the recorder's sampler (--gpu-metrics) reads
 * NVML at a fixed rate and writes one record per metric a GPU gave. Records
 * of one sample share hdr.ts; they reach the file up to a poll interval
 * after it (not in time order with the BPF records around them). */
struct gt_gpu_metric {
	struct gt_hdr hdr;	/* ts = when the sample was taken (CLOCK_MONOTONIC); pid 0 (the
				 * process of a GT_GPUM_PROC_MEM), tid 0 */
	__u32 device;		/* the GPU's NVML index */
	__u32 metric;		/* enum gt_gpu_metric_id */
	__s64 value_micro;	/* the value in the metric's unit, times 10^6, rounded */
};

#include "gtrace_gpu_events.h"
#include "gtrace_job_events.h"

#define GT_REC_ALIGN(n) (((n) + 7u) & ~7u)

#include "gtrace_stack_events.h"

_Static_assert(sizeof(struct gt_ustack) == 432 + 8 + GT_PYSTACK_MAX * 16, "gt_ustack size");
_Static_assert(sizeof(struct gt_pycode) == 56 + GT_PYCODE_FILE + GT_PYCODE_NAME + GT_PYCODE_LINES,
	       "gt_pycode size");
_Static_assert(sizeof(struct gt_pyfunc) == 40, "gt_pyfunc size");
_Static_assert(sizeof(struct gt_ustack_same) == 56, "gt_ustack_same size");
_Static_assert(sizeof(struct gt_stack_ref) == 32, "gt_stack_ref size");
_Static_assert(sizeof(struct gt_stack) == 32, "gt_stack size");
_Static_assert(sizeof(struct gt_module) == 56, "gt_module size");
_Static_assert(sizeof(struct gt_symbol) == 48, "gt_symbol size");
_Static_assert(sizeof(struct gt_hdr) == 24, "gt_hdr size");
_Static_assert(sizeof(struct gt_call) == 72, "gt_call size");
_Static_assert(sizeof(struct gt_launch) == 72, "gt_launch size");
_Static_assert(sizeof(struct gt_ret) == 40, "gt_ret size");
_Static_assert(sizeof(struct gt_call_str) == 64, "gt_call_str size");
_Static_assert(sizeof(struct gt_nccl) == 104, "gt_nccl size");
_Static_assert(sizeof(struct gt_proc_rank) == 40, "gt_proc_rank size");
_Static_assert(sizeof(struct gt_ret_str) == 40, "gt_ret_str size");
_Static_assert(sizeof(struct gt_path) == 32, "gt_path size");
_Static_assert(sizeof(struct gt_proc_evt) == 56, "gt_proc_evt size");
_Static_assert(sizeof(struct gt_libload) == 64, "gt_libload size");
_Static_assert(sizeof(struct gt_ioctl) == 72, "gt_ioctl size");
_Static_assert(sizeof(struct gt_offcpu) == 40, "gt_offcpu size");
_Static_assert(sizeof(struct gt_gpu_kernel) == 88, "gt_gpu_kernel size");
_Static_assert(sizeof(struct gt_gpu_copy) == 72, "gt_gpu_copy size");
_Static_assert(sizeof(struct gt_gpu_api) == 40, "gt_gpu_api size");
_Static_assert(sizeof(struct gt_nvtx) == 40, "gt_nvtx size");
_Static_assert(sizeof(struct gt_cupti_stats) == 88, "gt_cupti_stats size");
_Static_assert(sizeof(struct gt_merge_stats) == 72, "gt_merge_stats size");
_Static_assert(sizeof(struct gt_cupti_mark) == 40, "gt_cupti_mark size");
_Static_assert(sizeof(struct gt_name) == 40, "gt_name size");
_Static_assert(sizeof(struct gt_capture) == 48, "gt_capture size");
_Static_assert(sizeof(struct gt_trigger) == 48, "gt_trigger size");
_Static_assert(sizeof(struct gt_overhead) == 104, "gt_overhead size");
_Static_assert(sizeof(struct gt_gpu_metric) == 40, "gt_gpu_metric size");
_Static_assert(sizeof(struct gt_counters) == 128, "gt_counters size");
_Static_assert(sizeof(struct gt_stats) == 152, "gt_stats size");

#endif /* GTRACE_EVENTS_H */
