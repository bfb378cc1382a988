// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The overhead budget's calibration (user/record/budget.c): programs that do
 * nothing, attached to a function of the daemon itself, so that timing calls
 * of it measures what one uprobe and one uretprobe hit cost on this machine
 * (the trap, the kernel's dispatch), apart from any program's own work. Its
 * own object: recordings do not load it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("uprobe")
int calib_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int calib_ret(void *ctx)
{
	return 0;
}
