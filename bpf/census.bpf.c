// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Kernel side of `gtrace-bpf census`: a bare counting uprobe on every
 * exported cu* function of libcuda, for the processes of -- CMD. Its own
 * object, so that recordings do not load it.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define GT_CENSUS_MAX 4096	/* CENSUS_MAX in user/record/census.c */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GT_CENSUS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} census_counts SEC(".maps");

/* Counts calls of one exported function (cookie = its index). */
SEC("uprobe")
int count_entry(struct pt_regs *ctx)
{
	__u32 idx = bpf_get_attach_cookie(ctx);
	__u64 *c;

	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	c = bpf_map_lookup_elem(&census_counts, &idx);
	if (c)
		__sync_fetch_and_add(c, 1);
	return 0;
}

/* The processes CMD starts are counted too. */
SEC("raw_tp/sched_process_fork")
int census_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 ppid, cpid;

	follow_fork(ctx, &ppid, &cpid);	/* census always filters on its pids */
	return 0;
}
