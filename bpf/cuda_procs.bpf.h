/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Process lifecycle of the libcuda recorder: exec, fork, exit and thread
 * names, for the names and the pid filter.
 * Part of cuda.bpf.c's object, included by it once (it uses that file's
 * globals and maps, defined before the include).
 */
#ifndef GTRACE_CUDA_PROCS_BPF_H
#define GTRACE_CUDA_PROCS_BPF_H

/* ---- processes: lifecycle for names and the pid filter ---- */

/* Processes whose exit record was sent, by pid, with the start time of
 * their leader: two threads of a group exit may both find signal->live at
 * zero (one counted it down, the other reads it after), and the first to
 * insert says the exit. The start time tells a new process that took the
 * pid again from the one that left it here. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} exit_said SEC(".maps");

/* True the first time it is asked for this process (pid and leader's start). */
static __always_inline bool exit_first(__u32 pid, __u64 start)
{
	__u64 *old;

	if (!bpf_map_update_elem(&exit_said, &pid, &start, BPF_NOEXIST))
		return true;
	old = bpf_map_lookup_elem(&exit_said, &pid);
	if (old && *old == start)
		return false;
	/* an earlier process' pid: this one's own first */
	bpf_map_update_elem(&exit_said, &pid, &start, BPF_ANY);
	return true;
}

/* kcomm: the name to give (a kernel address), NULL for the current task's */
static __always_inline void proc_event(__u16 type, __u32 pid, __u32 tid, __u32 ppid, int code,
				       const char *kcomm)
{
	struct gt_proc_evt *e = reserve(sizeof(*e));

	if (!e)
		return;
	fill_hdr(&e->hdr, ((__u64)pid << 32) | tid, type, sizeof(*e), 0);
	e->ppid = ppid;
	e->exit_code = code;
	if (kcomm)
		bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), kcomm);
	else
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->cgroup = bpf_get_current_cgroup_id();
	submit(e);
}

#define GT_CMDLINE_MAX 1024

/* The new program's arguments, read now: a short-lived process may be gone
 * before userspace could read /proc/PID/cmdline. NUL-separated as in the
 * process; the recorder joins them (GT_NAME_F_RAW). */
static __always_inline void exec_cmdline(struct task_struct *t, __u64 id)
{
	__u64 start = BPF_CORE_READ(t, mm, arg_start), end = BPF_CORE_READ(t, mm, arg_end);
	struct gt_name_max *e;
	__u64 n = end - start;

	if (!start || end <= start)
		return;
	if (n > GT_CMDLINE_MAX - 1)
		n = GT_CMDLINE_MAX - 1;
	e = reserve(sizeof(*e));
	if (!e)
		return;
	if (bpf_probe_read_user(e->str, n & (GT_CMDLINE_MAX - 1), (void *)start))
		n = 0;
	e->str[n & (GT_CMDLINE_MAX - 1)] = 0;
	e->rec.key = id >> 32;
	e->rec.kind = GT_NAME_PROCESS;
	e->rec.len = n + 1;
	e->rec.flags = GT_NAME_F_RAW;
	fill_hdr(&e->rec.hdr, id, GT_REC_NAME, GT_REC_ALIGN(sizeof(e->rec) + n + 1), 0);
	submit(e);
}

/* Environments read at an exec that found no room in the ring (not counted
 * among the dropped events: the recorder reads /proc instead). */
__u64 n_environ_drop = 0;

/* The new program's environment, read now for its rank (RANK, LOCAL_RANK,
 * WORLD_SIZE): a short-lived rank may be gone before the recorder reads
 * /proc/PID/environ. With a pid filter only (`-- CMD`, `-p`): under --all
 * every exec of the machine would send it. */
static __always_inline void exec_environ(struct task_struct *t, __u64 id)
{
	__u64 start = BPF_CORE_READ(t, mm, env_start), end = BPF_CORE_READ(t, mm, env_end);
	struct gt_environ *e;
	__u64 n = end - start;

	if (!filter_pids || !start || end <= start)
		return;
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count(&n_environ_drop);
		return;
	}
	e->total = n;
	if (n > GT_ENVIRON_MAX - 1)
		n = GT_ENVIRON_MAX - 1;
	if (bpf_probe_read_user(e->env, n & (GT_ENVIRON_MAX - 1), (void *)start))
		n = 0;
	e->env[n & (GT_ENVIRON_MAX - 1)] = 0;
	e->len = n;
	fill_hdr(&e->hdr, id, GT_REC_ENVIRON, sizeof(*e), 0);
	bpf_ringbuf_submit(e, 0);
}

/* Every exec is reported: the recorder scans the new image's mappings for a
 * libcuda it has not attached yet. */
SEC("raw_tp/sched_process_exec")
int proc_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 ppid = BPF_CORE_READ(t, real_parent, tgid);

	py_forget(id >> 32);
	if (!traced(id >> 32))
		return 0;
	own_run();
	proc_event(GT_REC_EXEC, id >> 32, (__u32)id, ppid, 0, NULL);
	exec_cmdline(t, id);
	exec_environ(t, id);
	return 0;
}

/* New processes of traced ones are traced too (`-- CMD` and its children). */
SEC("raw_tp/sched_process_fork")
int proc_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 ppid, cpid;

	if (follow_fork(ctx, &ppid, &cpid)) {
		own_run();
		proc_event(GT_REC_FORK, cpid, cpid, ppid, 0, NULL);
	}
	return 0;
}

struct gt_name_comm {
	struct gt_name rec;
	char str[16];	/* TASK_COMM_LEN */
};

/* A thread's comm, in BPF: a thread that lives less than the recorder's
 * poll interval is gone from /proc before its first record is read there.
 * For every traced process, not only the ones known to use the GPU: a
 * process that lives less than that interval is not known yet either. The
 * recorder writes it when the thread had records and the name is new. */
static __always_inline bool thread_name(__u64 id, __u32 tid, const char *kcomm)
{
	__u32 pid = id >> 32;
	struct gt_name_comm *e;

	if (!traced(pid))
		return false;
	e = reserve(sizeof(*e));
	if (!e)
		return true;
	if (kcomm)
		bpf_probe_read_kernel_str(e->str, sizeof(e->str), kcomm);
	else
		bpf_get_current_comm(e->str, sizeof(e->str));
	e->str[sizeof(e->str) - 1] = 0;
	e->rec.key = tid;
	e->rec.kind = GT_NAME_THREAD;
	e->rec.len = sizeof(e->str);
	e->rec.flags = GT_NAME_F_RAW;
	fill_hdr(&e->rec.hdr, (id & ~0xffffffffull) | tid, GT_REC_NAME, sizeof(*e), 0);
	submit(e);
	return true;
}

/* prctl(PR_SET_NAME), pthread_setname_np, a write to /proc/.../comm: the
 * renamed task may be another thread than the current one. */
SEC("raw_tp/task_rename")
int thread_rename(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	__u64 id = (__u64)BPF_CORE_READ(t, tgid) << 32;

	/* --cgroup tests the current task: a name another process gives is
	 * left to the recorder's reading of /proc */
	if (filter_cgroup && id >> 32 != bpf_get_current_pid_tgid() >> 32)
		return 0;
	if (thread_name(id, BPF_CORE_READ(t, pid), (const char *)ctx->args[1]))
		own_run();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int proc_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task(), *leader;
	__u64 id = bpf_get_current_pid_tgid();

	/* every thread's last name, before the process' exit record */
	if (!thread_name(id, (__u32)id, NULL))
		return 0;	/* not traced */
	own_run();
	/* The process ends with its last thread: do_exit counts its threads
	 * down (signal->live) before this tracepoint. Not with its leader: a
	 * main thread that ends first (pthread_exit, or the first of a group
	 * exit to get here) leaves other threads' calls and exits to come, and
	 * an exec from another thread ends the leader, not the process. */
	if (BPF_CORE_READ(t, signal, live.counter))
		return 0;
	leader = BPF_CORE_READ(t, group_leader);
	if (!exit_first(id >> 32, BPF_CORE_READ(leader, start_time)))
		return 0;	/* another thread of the group exit said it */
	py_forget(id >> 32);
	if (capture_ranges)
		range_close(id, GT_CAP_F_EXIT);
	/* in a group exit every thread's code is the group's; the name is the
	 * process', its leader's */
	proc_event(GT_REC_EXIT, id >> 32, (__u32)id, BPF_CORE_READ(t, real_parent, tgid),
		   BPF_CORE_READ(t, exit_code), leader ? (const char *)&leader->comm : NULL);
	return 0;
}

#endif
