// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Off-CPU intervals of the threads of GPU processes, from sched_switch: a
 * synchronization call shows as spinning (its thread stays on-CPU) or
 * blocked (an off-CPU interval inside it), and a starved GPU can be traced
 * back to a descheduled launching thread.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#ifndef PF_EXITING
#define PF_EXITING 0x00000004	/* task_struct.flags: getting shut down (linux/sched.h) */
#endif

/* Shorter off-CPU intervals are not recorded (set by the recorder). */
const volatile __u64 min_offcpu_ns = 0;

/* A traced thread switched out. */
struct offcpu_start {
	__u64 ts;	/* when it left the CPU */
	__u32 state;	/* task state it left in */
	__u32 cpu;	/* CPU it left */
	__u32 pid;	/* its process */
	__u32 _pad;	/* explicit padding */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tid */
	__type(value, struct offcpu_start);
} offcpu SEC(".maps");

static __always_inline bool gpu_process(__u32 pid)
{
	if (!pid || pid == self_pid)
		return false;
	if (filter_pids ? !bpf_map_lookup_elem(&pids, &pid) : !bpf_map_lookup_elem(&active_pids, &pid))
		return false;
	return captured(pid);
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
 *              unsigned int prev_state) */
SEC("raw_tp/sched_switch")
int on_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 prev_pid = BPF_CORE_READ(prev, tgid), prev_tid = BPF_CORE_READ(prev, pid);
	__u32 next_tid = BPF_CORE_READ(next, pid);
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start *s;
	struct gt_offcpu *e;
	bool own = false;

	/* a task in do_exit (its exit event is out, or about to be) may still
	 * block while it tears down: that is not the program's off-CPU time,
	 * and recorded it would come after the process' exit */
	if (prev_tid && gpu_process(prev_pid) && !(BPF_CORE_READ(prev, flags) & PF_EXITING)) {
		struct offcpu_start st = {
			.ts = now, .state = (__u32)ctx->args[3],
			.cpu = bpf_get_smp_processor_id(), .pid = prev_pid,
		};

		/* not stored, the interval is lost: counted, never silent */
		if (bpf_map_update_elem(&offcpu, &prev_tid, &st, BPF_ANY))
			count(&n_drop_state);
		own = true;
	}
	s = next_tid ? bpf_map_lookup_elem(&offcpu, &next_tid) : NULL;
	if (!s) {
		if (own)
			own_run();
		return 0;
	}
	own_run();
	if (now - s->ts >= min_offcpu_ns) {
		e = reserve(sizeof(*e));
		if (e) {
			e->hdr.ts = s->ts;
			e->hdr.pid = s->pid;
			e->hdr.tid = next_tid;
			e->hdr.type = GT_REC_OFFCPU;
			e->hdr.size = sizeof(*e);
			e->hdr.api = 0;
			e->hdr.cpu = s->cpu;
			e->dur = now - s->ts;
			e->state = s->state;
			e->next_cpu = bpf_get_smp_processor_id();
			submit(e);
		}
	}
	bpf_map_delete_elem(&offcpu, &next_tid);
	return 0;
}

/* A thread that exits takes its off-CPU start with it. Its next switch-in
 * normally takes the start; one left behind (seen under a fork storm: a
 * start 12 ms old, not taken when the thread ran again) would be read at a
 * switch-in during the thread's teardown, after its process' exit record
 * (and the recorder would count the process again), or by the next thread
 * given its id. */
SEC("raw_tp/sched_process_exit")
int on_thread_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&offcpu, &tid);
	return 0;
}
