/* SPDX-License-Identifier: MIT */
/* Maps, configuration and helpers shared by the BPF objects of gtrace-bpf
 * (BPF side only). Each object gets its own copy of the globals. */
#ifndef GTRACE_COMMON_BPF_H
#define GTRACE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gtrace_events.h"
#include "gtrace_api.h"

/* libbpf before 1.2 has no sixth-argument accessor. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) (((const struct pt_regs *)(x))->r9)
#else
#error "PT_REGS_PARM6 missing for this architecture"
#endif
#endif

/* Reads integer argument i (0-based) of a uprobed function at entry:
 * x86-64 SysV passes the first six in registers, the rest on the stack
 * above the return address. */
static __always_inline __u64 gt_arg(struct pt_regs *ctx, int i)
{
	__u64 v = 0;

	switch (i) {
	case 0: return PT_REGS_PARM1(ctx);
	case 1: return PT_REGS_PARM2(ctx);
	case 2: return PT_REGS_PARM3(ctx);
	case 3: return PT_REGS_PARM4(ctx);
	case 4: return PT_REGS_PARM5(ctx);
	case 5: return PT_REGS_PARM6(ctx);
	default:
		if (i < 0 || i > 15)
			return 0;
		bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * (i - 5)));
		return v;
	}
}

/* Set by the recorder before load. */
const volatile bool filter_pids = false;	/* only pids in the pids map */
const volatile __u64 wakeup_bytes = 1 << 20;	/* wake the consumer above this much pending data */
const volatile __u32 self_pid = 0;		/* the recorder itself: never traced */
const volatile bool capture_ranges = false;	/* record a process only while a capture range
						 * is open in it (the ranges map) */
const volatile bool filter_cgroup = false;	/* --cgroup: only tasks in the cgroup v2 of */
const volatile __u64 cgroup_id = 0;		/* ... this id (its directory's inode) */
const volatile __s32 cgroup_level = 0;		/* ... at this depth (the root is 0), or below it */

/* Counters of every object, read by the recorder through the skeletons' bss. */
__u64 n_drop_ringbuf = 0;
/* Records lost because the start their exit needs could not be stored: the
 * kernel refused the map update (full, or its lock not taken in time). */
__u64 n_drop_state = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);	/* resized by --buffer-size */
} rb SEC(".maps");

/* Maps shared by all objects: the cuda object creates them, the others
 * reuse its file descriptors (bpf_map__reuse_fd) before they load. */

/* Processes to trace when filter_pids is set; value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/* Processes known to use the GPU (they made a CUDA call or an NVIDIA
 * ioctl): the scheduler events are taken for their threads only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} active_pids SEC(".maps");

/* Processes with a capture range open (-c): what opened it. */
struct range_state {
	__u32 index;	/* 1-based range number (struct gt_capture.index) */
	__u32 source;	/* enum gt_capture_source */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct range_state);
} ranges SEC(".maps");

static __always_inline void count(__u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

/* Runs of this object's kernel-side programs (scheduler, syscall and
 * process tracepoints, which fire for every task on the machine) that
 * concerned a traced task: the kernel's run statistics count every run, and
 * the overhead estimate charges the traced programs only their share. Per
 * CPU, one per run at most; the uprobes do not count here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} own_runs SEC(".maps");

static __always_inline void own_run(void)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&own_runs, &k);

	if (n)
		*n += 1;
}

/* Whether pid is traced. pid is the current task's process at every call
 * (a probe's own task; the parent at a fork), which the cgroup test needs:
 * it looks at the current task. */
static __always_inline bool traced(__u32 pid)
{
	if (pid == self_pid)
		return false;
	/* the ancestor at the cgroup's depth is the cgroup: no map, so that
	 * sleepable programs (which may use few map types) test it too */
	if (filter_cgroup && bpf_get_current_ancestor_cgroup_id(cgroup_level) != cgroup_id)
		return false;
	if (!filter_pids)
		return true;
	return bpf_map_lookup_elem(&pids, &pid) != NULL;
}

/* True when pid's records are wanted now: always without capture ranges,
 * else only while a range is open in the process. */
static __always_inline bool captured(__u32 pid)
{
	if (!capture_ranges)
		return true;
	return bpf_map_lookup_elem(&ranges, &pid) != NULL;
}

/* At sched_process_fork: when the new task is a process (not a thread) of
 * a traced parent, puts it in the pids filter (when filtering) and returns
 * true with both pids; false for threads and untraced parents. */
static __always_inline bool follow_fork(struct bpf_raw_tracepoint_args *ctx, __u32 *ppid, __u32 *cpid)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u8 one = 1;

	*ppid = BPF_CORE_READ(parent, tgid);
	*cpid = BPF_CORE_READ(child, pid);
	if (*cpid != BPF_CORE_READ(child, tgid) || !traced(*ppid))
		return false;
	if (filter_pids)
		bpf_map_update_elem(&pids, cpid, &one, BPF_ANY);
	return true;
}

static __always_inline void *reserve(__u32 size)
{
	void *rec = bpf_ringbuf_reserve(&rb, size, 0);

	if (!rec)
		count(&n_drop_ringbuf);
	return rec;
}

/* Submits without waking the consumer (it polls on a short timeout), unless
 * data piles up: then every submit wakes it so a full buffer adds no delay. */
static __always_inline void submit(void *rec)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);

	/* no event counter here: a shared atomic per event bounces between the
	 * CPUs of a multi-threaded program; the recorder counts what it takes */
	bpf_ringbuf_submit(rec, avail >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* The header of a record whose time ts was taken by the caller. */
static __always_inline void fill_hdr_at(struct gt_hdr *h, __u64 id, __u16 type, __u16 size, __u16 api,
					__u64 ts)
{
	h->ts = ts;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->type = type;
	h->size = size;
	h->api = api;
	h->cpu = bpf_get_smp_processor_id();
}

static __always_inline void fill_hdr(struct gt_hdr *h, __u64 id, __u16 type, __u16 size, __u16 api)
{
	fill_hdr_at(h, id, type, size, api, bpf_ktime_get_ns());
}

#endif
