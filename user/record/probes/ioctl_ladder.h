/* SPDX-License-Identifier: MIT */
/*
 * Which way to record the NVIDIA driver's ioctls, tried in order:
 *  1. kprobe/kretprobe on the driver's ioctl entry points (kernel with
 *     kprobes, symbols in /proc/kallsyms);
 *  2. fentry/fexit on them (module BTF; the kernel may still refuse);
 *  3. the ioctl syscall tracepoints filtered on the device major (always).
 * The plan is a pure function of the capabilities so it can be tested with
 * faked ones; whether a rung really works is only known by trying it.
 */
#ifndef GTRACE_IOCTL_LADDER_H
#define GTRACE_IOCTL_LADDER_H

#include <stdbool.h>
#include "bpf/gtrace_events.h"

/* The driver functions probed by rungs 1 and 2. */
#define GT_NV_IOCTL_FN	"nvidia_unlocked_ioctl"
#define GT_UVM_IOCTL_FN	"uvm_unlocked_ioctl_entry"

struct ioctl_caps {
	bool kprobes;		/* the kernel can create kprobes */
	bool nv_sym;		/* GT_NV_IOCTL_FN is in /proc/kallsyms */
	bool uvm_sym;		/* GT_UVM_IOCTL_FN is in /proc/kallsyms */
	bool nv_btf;		/* /sys/kernel/btf/nvidia exists */
	bool uvm_btf;		/* /sys/kernel/btf/nvidia_uvm exists */
	bool syscall_tp;	/* syscalls:sys_enter_ioctl usable (tracefs) */
};

/* Fills plan with the rungs worth trying, best first; returns how many
 * (always >= 1: the syscall rung). */
int ioctl_ladder__plan(const struct ioctl_caps *c, enum gt_ioctl_rung *plan, int max);
/* Reads the capabilities of this machine. Paths are parameters so tests
 * can point them at fakes; NULL = the real ones. */
void ioctl_ladder__probe(struct ioctl_caps *c, const char *kallsyms, const char *btf_dir,
			 const char *kprobe_type, const char *tracefs_ioctl_id);
const char *ioctl_ladder__rung_name(enum gt_ioctl_rung r);

#endif
