/* SPDX-License-Identifier: MIT */
/*
 * The cuda object (bpf/cuda.bpf.c) up to its static probes: open, set its
 * configuration, size the ring buffer, load (record/probes/uprobe_ladder.h, the
 * openat probe that can run) and attach the process lifecycle and openat
 * probes. The libcuda uprobes are cuda_probes' (attached per file later).
 */
#ifndef GTRACE_CUDA_OBJECT_H
#define GTRACE_CUDA_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

struct cuda_bpf;

struct cuda_object_opts {
	bool filter;		/* only the pids in the pids map (not --all) */
	uint64_t buffer_size;	/* ring buffer bytes, rounded by cuda_object__ring_size() */
	bool capture_ranges;	/* record a process only while a capture range is open in it */
	bool gate_hot;		/* light mode: hot calls only while bss hot_on is set */
	bool swap_gate;		/* the budget's swaps: GT_COOKIE_SWAP probes check their generation */
	uint32_t range_max;	/* ranges recorded at most, 0 = any number */
	bool filter_cgroup;	/* --cgroup: only tasks in this cgroup or below it: */
	uint64_t cgroup_id;	/* its id (the directory's inode) */
	int cgroup_level;	/* its depth, the root 0 */
	bool hold_cmd_tree;	/* -- CMD: every traced process descends from the recorder (a
				 * terminal's shell sees none of their stops) */
};

/* Loads the object into *skel, which is set even on failure (destroy it
 * with cuda_bpf__destroy). *multi: uprobe_multi programs were loaded (else
 * one link per probe). *open_probe: which openat probe runs ("tracepoint",
 * "raw_tp"). Returns 0 or a negative errno with one error line printed. */
int cuda_object__load(const struct cuda_object_opts *o, struct cuda_bpf **skel, bool *multi,
		      const char **open_probe);
/* Attaches the process lifecycle probes (their failure is an error) and the
 * openat probes, its exit then its entry (a failure is a warning: for the
 * entry, *open_probe becomes "none"; without the exit, no process is held
 * while the probes of the library it opened are attached). Links
 * stay in the skeleton, which destroys them. Returns 0 or a negative errno. */
int cuda_object__attach_static(struct cuda_bpf *skel, const char **open_probe);
/* The ring buffer's size for buffer_size: a power of two, 4 KiB to 1 TiB. */
uint64_t cuda_object__ring_size(uint64_t buffer_size);

#endif
