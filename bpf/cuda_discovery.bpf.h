/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Discovery of libcuda and libnccl copies opened after the recorder
 * started: openat watched; at its return, a file whose probes are not in
 * place is reported and the process that opened it stopped (when it may
 * be) until the recorder has attached them (bpf/gtrace_hold.h).
 * Part of cuda.bpf.c's object, included by it once (it uses that file's
 * globals and maps, defined before the include).
 */
#ifndef GTRACE_CUDA_DISCOVERY_BPF_H
#define GTRACE_CUDA_DISCOVERY_BPF_H

#include "gtrace_hold.h"

/* ---- discovery of libcuda and libnccl copies opened after the recorder started ---- */

#define GT_PATH_MAX 256

struct gt_path_max {
	struct gt_path rec;
	char path[GT_PATH_MAX];
};

/* True when the last component of the path in buf (n bytes with the NUL) is
 * libcuda.so or libnccl.so, or either followed by .<anything>, in at most
 * 28 bytes. Its '/' is looked for from the end, 29 bytes at most: a loop of
 * one test each, which the verifier goes through once per byte (trying each
 * of the 19 lengths at fixed offsets took it through 20,000 instructions). */
static __always_inline bool ends_in_lib(const char *buf, long n)
{
	int start = -1, len, i, pos;
	char c[11];

	for (i = 1; i <= 29; i++) {
		pos = n - 1 - i;
		if (pos < 0) {
			start = 0;
			break;
		}
		if (buf[pos & (GT_PATH_MAX - 1)] == '/') {
			start = pos + 1;
			break;
		}
	}
	len = n - 1 - start;
	if (start < 0 || len < 10 || len > 28)
		return false;
	for (i = 0; i < 11; i++)
		c[i] = buf[(start + i) & (GT_PATH_MAX - 1)];
	/* "lib", "cuda" or "nccl", ".so": each part decided before the next,
	 * so that the verifier's states stay few */
	if (c[0] != 'l' || c[1] != 'i' || c[2] != 'b')
		return false;
	if (!(c[3] == 'c' && c[4] == 'u' && c[5] == 'd' && c[6] == 'a') &&
	    !(c[3] == 'n' && c[4] == 'c' && c[5] == 'c' && c[6] == 'l'))
		return false;
	if (c[7] != '.' || c[8] != 's' || c[9] != 'o')
		return false;
	return c[10] == 0 || c[10] == '.';
}

/* ---- holding the process until the file's probes are attached ---- */

/* Files whose probes are attached, or that get none (bpf/gtrace_hold.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GT_HOLD_FILES);
	__type(key, struct gt_file_key);
	__type(value, struct gt_file_state);
} probed_files SEC(".maps");

/* The path of an open of a libcuda/libnccl-named file, from the openat's
 * entry (where the path is) to its exit (where the file is), by thread. */
struct open_pending {
	__u32 len;		/* bytes in path, NUL included */
	__u32 _pad;
	char path[GT_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct open_pending);
} open_paths SEC(".maps");

/* Where check_open reads a path: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct open_pending);
} open_scratch SEC(".maps");

/* Entries in open_paths: the exit of every other openat looks at this and
 * nothing else. */
__u64 n_open_pending = 0;
/* Opens of a matching name that could not be followed to their exit
 * (open_paths full): reported at the entry, without a hold. */
__u64 n_open_unfollowed = 0;

/* Written by the recorder: 1 once the openat's exit is probed (else the
 * entry reports the open itself, as before holds existed); 1 while holding
 * is on (its watchdog runs); its loop's latest CLOCK_MONOTONIC time. */
__u32 open_exit_live = 0;
__u32 hold_on = 0;
__u64 hold_heartbeat = 0;
/* Holds so far: the sequence number of the latest (struct gt_hold_slot). */
__u64 hold_seq = 0;

/* The held processes (bpf/gtrace_hold.h): read and written in place by the
 * recorder and its watchdog through a shared mapping of the map. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_hold_table);
} hold_slots SEC(".maps");

/* Set before load: every traced process descends from the recorder (-- CMD):
 * a terminal's shell cannot see their stops (only the recorder's). */
const volatile bool hold_cmd_tree = false;

#define GT_SIGSTOP		19

struct gt_libload_max {
	struct gt_libload rec;
	char path[GT_PATH_MAX];
};

/* tty_struct before 5.12 kept the foreground process group directly. */
struct tty_struct___old {
	struct pid *pgrp;
} __attribute__((preserve_access_index));

/* True when comm is s (n bytes with the NUL). */
static __always_inline bool comm_is(const char *comm, const char *s, int n)
{
	for (int i = 0; i < n && i < 16; i++)
		if (comm[i] != s[i])
			return false;
	return true;
}

/* Parents that stop themselves when a child stops (so that their own parent,
 * an interactive shell, sees it) and continue it only when they are
 * continued: a child they run must not be stopped. */
static __always_inline bool relays_stops(struct task_struct *parent)
{
	char comm[16];

	if (bpf_probe_read_kernel(comm, sizeof(comm), &parent->comm))
		return false;
	return comm_is(comm, "sudo", 5) || comm_is(comm, "su", 3) || comm_is(comm, "runuser", 8) ||
	       comm_is(comm, "doas", 5);
}

/* True when the process group pgrp is the foreground one of the
 * controlling terminal of the process whose signal_struct is sig. */
static __always_inline bool tty_foreground(struct signal_struct *sig, struct pid *pgrp)
{
	struct tty_struct *tty = BPF_CORE_READ(sig, tty);
	struct pid *fg;

	if (!tty)
		return false;
	if (bpf_core_field_exists(tty->ctrl.pgrp))
		fg = BPF_CORE_READ(tty, ctrl.pgrp);
	else
		fg = BPF_CORE_READ((struct tty_struct___old *)tty, pgrp);
	return fg && fg == pgrp;
}

/* Why the current process may not be stopped (an outcome), or 0 when it
 * may. A stop is seen by the parent (SIGCHLD, waitpid with WUNTRACED) and a
 * tracer: an interactive shell would take the terminal back and print that
 * its job stopped, which our SIGCONT does not undo. */
static __always_inline int hold_refused(struct task_struct *t, __u64 now)
{
	__u64 hb = *(volatile __u64 *)&hold_heartbeat;
	struct task_struct *parent;
	struct signal_struct *sig, *psig;
	struct pid *pgrp;

	if (!*(volatile __u32 *)&hold_on)
		return GT_LL_OFF;
	/* a recorder that does not answer would leave it to the watchdog's bound */
	if (!hb || (__s64)(now - hb) > (__s64)GT_HOLD_STALE_NS)
		return GT_LL_STALE;
	if (BPF_CORE_READ(t, ptrace))
		return GT_LL_PTRACE;
	sig = BPF_CORE_READ(t, signal);
	parent = BPF_CORE_READ(t, real_parent);
	if (BPF_CORE_READ(parent, tgid) == self_pid)
		return 0;	/* -- CMD itself: the recorder is the one that would see it */
	psig = BPF_CORE_READ(parent, signal);
	pgrp = BPF_CORE_READ(sig, pids[PIDTYPE_PGID]);
	/* job control: the parent put it in a process group of its own
	 * within the parent's session */
	if (BPF_CORE_READ(sig, pids[PIDTYPE_SID]) == BPF_CORE_READ(psig, pids[PIDTYPE_SID]) &&
	    pgrp != BPF_CORE_READ(psig, pids[PIDTYPE_PGID]))
		return GT_LL_JOB;
	if (relays_stops(parent))
		return GT_LL_RELAY;
	if (!hold_cmd_tree && tty_foreground(sig, pgrp))
		return GT_LL_TTY;
	return 0;
}

/* Stops the current process into a free slot; returns GT_LL_HELD or why not. */
static __always_inline int hold_current(struct task_struct *t, __u32 pid, __u64 now)
{
	int why = hold_refused(t, now);
	struct gt_hold_table *tab;
	struct gt_hold_slot *s = NULL;
	__u32 i, zero = 0;
	__u64 seq;

	if (why)
		return why;
	tab = bpf_map_lookup_elem(&hold_slots, &zero);
	if (!tab)
		return GT_LL_OFF;
	for (i = 0; i < GT_HOLD_SLOTS; i++) {
		if (__sync_val_compare_and_swap(&tab->slot[i].pid, 0, pid) == 0) {
			s = &tab->slot[i];
			break;
		}
	}
	if (!s)
		return GT_LL_FULL;
	seq = __sync_fetch_and_add(&hold_seq, 1) + 1;
	__sync_lock_test_and_set(&s->word, seq << 32 | GT_SLOT_FILLING);
	s->start_boottime = BPF_CORE_READ(t, group_leader, start_boottime);
	s->stop_ts = now;
	s->cont_ts = 0;
	/* the whole process stops on its way back to user space: no
	 * instruction of the library runs before the recorder continues it */
	if (bpf_send_signal(GT_SIGSTOP)) {
		__sync_lock_test_and_set(&s->word, 0);
		__sync_lock_test_and_set(&s->pid, 0);
		return GT_LL_SIGNAL;
	}
	__sync_lock_test_and_set(&s->word, seq << 32 | GT_SLOT_HELD);
	return GT_LL_HELD;
}

/* The file behind descriptor fd of task t, NULL when it cannot be read. */
static __always_inline struct file *file_of(struct task_struct *t, int fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* A libcuda/libnccl-named file opened as fd: nothing when its probes are in
 * place (or it is no library of ours); else reported at once, the process
 * held when it may be. */
static __always_inline void libload(__u64 id, int fd, const struct open_pending *op)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct gt_file_key k = {};
	struct gt_file_state *st;
	struct gt_libload_max *e;
	struct file *f = file_of(t, fd);
	struct inode *ino;
	__u32 len = op->len;
	__u64 now;

	if (f) {
		ino = BPF_CORE_READ(f, f_inode);
		k.ino = BPF_CORE_READ(ino, i_ino);
		k.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		st = bpf_map_lookup_elem(&probed_files, &k);
		if (st && st->kind != GT_FILE_FAILED)
			return;
	} else {
		st = NULL;
	}
	e = reserve(sizeof(*e));
	if (!e)
		return;	/* no hold without a record: the recorder would not know of it */
	now = bpf_ktime_get_ns();
	e->rec.outcome = st ? GT_LL_ATTACH_FAILED : hold_current(t, id >> 32, now);
	fill_hdr_at(&e->rec.hdr, id, GT_REC_LIBLOAD, GT_REC_ALIGN(sizeof(e->rec) + (len & (GT_PATH_MAX - 1))),
		    0, now);
	e->rec.end_ts = 0;
	e->rec.cont_ts = 0;
	e->rec.ino = k.ino;
	e->rec.dev = k.dev;
	e->rec.fd = f ? fd : -1;
	e->rec.len = len;
	e->rec._pad = 0;
	__builtin_memcpy(e->path, op->path, sizeof(e->path));
	/* the held process waits for this record: wake the recorder now */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Reports an openat for reading of a file named libcuda.so* or libnccl.so* (without
 * the exit probed: at once, no hold). The check runs for every openat on
 * the machine, so it reads at most GT_PATH_MAX bytes and looks only at the
 * file names these have (libcuda.so .. libcuda.so.NNN.NNN.NN,
 * libnccl.so.2.27.7); the path is kept for the exit otherwise. */
#define GT_O_ACCMODE	03
#define GT_O_PATH	010000000

static __always_inline int check_open(const char *upath, long flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, zero = 0;
	struct open_pending *op;
	struct gt_path_max *e;
	long n;

	/* a loader opens for reading; a copy being written is no load (and
	 * would be judged no library before it has its bytes) */
	if (flags & (GT_O_ACCMODE | GT_O_PATH))
		return 0;
	if (!traced(id >> 32))
		return 0;
	op = bpf_map_lookup_elem(&open_scratch, &zero);
	if (!op)
		return 0;
	n = bpf_probe_read_user_str(op->path, sizeof(op->path), upath);
	if (n < 11 || n > GT_PATH_MAX)
		return 0;
	if (!ends_in_lib(op->path, n))
		return 0;
	own_run();
	op->len = n;
	if (*(volatile __u32 *)&open_exit_live) {
		bool had = bpf_map_lookup_elem(&open_paths, &tid) != NULL;

		if (!bpf_map_update_elem(&open_paths, &tid, op, BPF_ANY)) {
			if (!had)
				__sync_fetch_and_add(&n_open_pending, 1);
			return 0;
		}
		count(&n_open_unfollowed);
	}
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->rec.hdr, id, GT_REC_LIBOPEN, GT_REC_ALIGN(sizeof(e->rec) + n), 0);
	e->rec.len = n;
	__builtin_memcpy(e->path, op->path, sizeof(e->path));
	submit(e);
	return 0;
}

/* At the openat's return: the file an open of check_open's opened. The
 * exit of every openat on the machine comes here; without one in flight
 * it reads one global and returns. */
static __always_inline int open_done(long ret)
{
	__u32 tid;
	struct open_pending *op;

	if (!*(volatile __u64 *)&n_open_pending)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	op = bpf_map_lookup_elem(&open_paths, &tid);
	if (!op)
		return 0;
	own_run();
	if (ret >= 0)
		libload(bpf_get_current_pid_tgid(), (int)ret, op);
	if (!bpf_map_delete_elem(&open_paths, &tid))
		__sync_fetch_and_sub(&n_open_pending, 1);
	return 0;
}

/* Preferred: the openat tracepoint fires for openat only. */
SEC("tracepoint/syscalls/sys_enter_openat")
int open_tp(struct trace_event_raw_sys_enter *ctx)
{
	return check_open((const char *)ctx->args[1], (long)ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int open_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	return open_done(ctx->ret);
}

/* Fallback when tracefs is unavailable: every syscall, filtered on its number. */
SEC("raw_tp/sys_enter")
int open_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs;

	if (ctx->args[1] != 257 /* __NR_openat on x86-64 */)
		return 0;
	regs = (struct pt_regs *)ctx->args[0];
	return check_open((const char *)PT_REGS_PARM2_CORE_SYSCALL(regs), (long)PT_REGS_PARM3_CORE_SYSCALL(regs));
}

/* Its exit: the global's test comes first, every syscall of the machine
 * passes here. */
SEC("raw_tp/sys_exit")
int open_exit_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs;

	if (!*(volatile __u64 *)&n_open_pending)
		return 0;
	regs = (struct pt_regs *)ctx->args[0];
	if (BPF_CORE_READ(regs, orig_ax) != 257)
		return 0;
	return open_done((long)ctx->args[1]);
}

#endif
