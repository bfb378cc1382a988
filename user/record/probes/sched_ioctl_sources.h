/* SPDX-License-Identifier: MIT */
/* The kernel-side sources beside the libcuda uprobes: the NVIDIA driver's
 * ioctls (through the attach ladder) and off-CPU intervals from the
 * scheduler. They write to the cuda object's ring buffer and share its pid
 * maps. */
#ifndef GTRACE_KERNEL_SOURCES_H
#define GTRACE_KERNEL_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"
#include "record/probes/ioctl_ladder.h"

struct kernel_sources_opts {
	bool ioctl;			/* record ioctls on the devices of majors */
	bool sched;			/* record off-CPU intervals of GPU processes' threads */
	const uint32_t *majors;		/* device majors to record (NVIDIA's, or --ioctl-majors) */
	size_t nmajors;
	uint32_t frontend_major;	/* NVIDIA frontend major: RM commands decoded, 0 = none */
	bool filter;			/* only processes in the pids map */
	bool filter_cgroup;		/* --cgroup: only tasks in this cgroup or below it: */
	uint64_t cgroup_id;		/* its id (the directory's inode) */
	int cgroup_level;		/* its depth, the root 0 */
	uint64_t wakeup_bytes;		/* as the cuda object */
	uint32_t self_pid;		/* the recorder */
	bool capture_ranges;		/* a process only while a capture range is open in it */
	int rb_fd, pids_fd, active_fd, ranges_fd; /* the cuda object's maps */
	const struct ioctl_caps *caps;	/* NULL: probe this machine */
};

struct kernel_sources;
struct bpf_object;

/* Loads and attaches what opts asks for. Returns 0 or a negative errno with
 * one error line printed; a rung that fails falls through to the next. */
int kernel_sources__start(const struct kernel_sources_opts *o, struct kernel_sources **out);
/* The ioctl rung that runs (GT_RUNG_NONE if ioctls are not recorded). */
enum gt_ioctl_rung kernel_sources__rung(const struct kernel_sources *ks);
/* Adds this side's events and drops into c. */
void kernel_sources__counters(const struct kernel_sources *ks, struct gt_counters *c);
/* The loaded BPF objects (for their programs' run counts: the overhead
 * budget); up to max into objs, returns how many. */
size_t kernel_sources__objects(const struct kernel_sources *ks, struct bpf_object **objs, size_t max);
void kernel_sources__free(struct kernel_sources *ks);

#endif
