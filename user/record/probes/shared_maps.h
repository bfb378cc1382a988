/* SPDX-License-Identifier: MIT */
/*
 * The maps and configuration every BPF object of the recorder shares with
 * the cuda object (bpf/common.bpf.h): an options struct of any source with
 * the fields named here passes them on before its object loads.
 */
#ifndef GTRACE_SHARED_MAPS_H
#define GTRACE_SHARED_MAPS_H

#include <bpf/libbpf.h>

/* skel: an open skeleton that includes common.bpf.h; o: options with
 * rb_fd, pids_fd, active_fd, ranges_fd (the cuda object's maps), filter,
 * filter_cgroup, cgroup_id, cgroup_level, capture_ranges, wakeup_bytes and self_pid.  Evaluates to 0 or the first
 * error of bpf_map__reuse_fd. */
#define SHARE_MAPS(skel, o)                                                            \
	({                                                                             \
		int e_ = bpf_map__reuse_fd((skel)->maps.rb, (o)->rb_fd);              \
		if (!e_)                                                               \
			e_ = bpf_map__reuse_fd((skel)->maps.pids, (o)->pids_fd);       \
		if (!e_)                                                               \
			e_ = bpf_map__reuse_fd((skel)->maps.active_pids, (o)->active_fd); \
		if (!e_)                                                               \
			e_ = bpf_map__reuse_fd((skel)->maps.ranges, (o)->ranges_fd);   \
		(skel)->rodata->filter_pids = (o)->filter;                             \
		(skel)->rodata->filter_cgroup = (o)->filter_cgroup;                    \
		(skel)->rodata->cgroup_id = (o)->cgroup_id;                            \
		(skel)->rodata->cgroup_level = (o)->cgroup_level;                      \
		(skel)->rodata->capture_ranges = (o)->capture_ranges;                  \
		(skel)->rodata->wakeup_bytes = (o)->wakeup_bytes;                      \
		(skel)->rodata->self_pid = (o)->self_pid;                              \
		e_;                                                                    \
	})

#endif
