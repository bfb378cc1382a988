// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The NVIDIA driver's ioctl path. Kernel launches never get here (they go
 * through user-mapped queues), but context and channel setup, allocations,
 * mappings, UVM work and blocking waits do. Two of the three attach rungs
 * live here (kprobes on the driver's entry points, syscall tracepoints
 * filtered on the device major); fentry is in ioctl_fentry.bpf.c because it
 * needs the module's BTF at load time.
 */
#include "ioctl.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Rung 1: nvidia_unlocked_ioctl / uvm_unlocked_ioctl_entry(file, cmd, arg) */
SEC("kprobe")
int ioctl_kprobe(struct pt_regs *ctx)
{
	ioctl_enter((struct file *)PT_REGS_PARM1(ctx), -1, PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		    GT_RUNG_KPROBE);
	return 0;
}

SEC("kretprobe")
int ioctl_kretprobe(struct pt_regs *ctx)
{
	ioctl_exit((long)PT_REGS_RC(ctx));
	return 0;
}

/* Rung 3: the ioctl syscall. The file comes from the fd table. */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **arr;
	struct file *f = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	arr = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

static __always_inline void sys_enter(int fd, __u32 cmd, __u64 arg)
{
	ioctl_enter(fd_file(fd), fd, cmd, arg, GT_RUNG_SYSCALL);
}

/* Preferred: fires for ioctl only (needs tracefs). */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int ioctl_tp_enter(struct trace_event_raw_sys_enter *ctx)
{
	sys_enter(ctx->args[0], ctx->args[1], ctx->args[2]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int ioctl_tp_exit(struct trace_event_raw_sys_exit *ctx)
{
	ioctl_exit(ctx->ret);
	return 0;
}

#define GT_NR_IOCTL 16	/* x86-64 */

/* Without tracefs: every syscall, filtered on its number first. */
SEC("raw_tp/sys_enter")
int ioctl_raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs;

	if (ctx->args[1] != GT_NR_IOCTL)
		return 0;
	regs = (struct pt_regs *)ctx->args[0];
	sys_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs),
		  PT_REGS_PARM3_CORE_SYSCALL(regs));
	return 0;
}

SEC("raw_tp/sys_exit")
int ioctl_raw_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

	if (BPF_CORE_READ(regs, orig_ax) != GT_NR_IOCTL)
		return 0;
	ioctl_exit((long)ctx->args[1]);
	return 0;
}
