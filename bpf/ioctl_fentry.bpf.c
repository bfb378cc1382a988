// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Rung 2 of the ioctl ladder: fentry/fexit on the NVIDIA driver's ioctl
 * entry points, resolved against the module's BTF when this object loads.
 * Where the kernel refuses BPF trampolines (EPERM on the machines we test
 * on) the load fails and the recorder falls through to the syscall rung.
 */
#include "ioctl.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("fentry/nvidia_unlocked_ioctl")
int BPF_PROG(nv_ioctl_entry, struct file *f, unsigned int cmd, unsigned long arg)
{
	ioctl_enter(f, -1, cmd, arg, GT_RUNG_FENTRY);
	return 0;
}

SEC("fexit/nvidia_unlocked_ioctl")
int BPF_PROG(nv_ioctl_exit, struct file *f, unsigned int cmd, unsigned long arg, long ret)
{
	ioctl_exit(ret);
	return 0;
}

SEC("fentry/uvm_unlocked_ioctl_entry")
int BPF_PROG(uvm_ioctl_entry, struct file *f, unsigned int cmd, unsigned long arg)
{
	ioctl_enter(f, -1, cmd, arg, GT_RUNG_FENTRY);
	return 0;
}

SEC("fexit/uvm_unlocked_ioctl_entry")
int BPF_PROG(uvm_ioctl_exit, struct file *f, unsigned int cmd, unsigned long arg, long ret)
{
	ioctl_exit(ret);
	return 0;
}
