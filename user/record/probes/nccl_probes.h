/* SPDX-License-Identifier: MIT */
/*
 * The NCCL source: its BPF object (bpf/nccl.bpf.c, writing to the cuda
 * object's ring buffer and sharing its pid maps) and the uprobes of
 * bpf/gtrace_nccl.h on every libnccl file found (record/probes/libcuda_finder.c
 * finds them as it finds libcuda), once per distinct file (device + inode).
 */
#ifndef GTRACE_NCCL_PROBES_H
#define GTRACE_NCCL_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

struct nccl_probes_opts {
	bool multi;			/* uprobe_multi links (as the cuda object's probes) */
	bool filter;			/* only processes in the pids map */
	bool filter_cgroup;		/* --cgroup: only tasks in this cgroup or below it: */
	uint64_t cgroup_id;		/* its id (the directory's inode) */
	int cgroup_level;		/* its depth, the root 0 */
	bool capture_ranges;		/* a process only while a capture range is open in it */
	uint64_t wakeup_bytes;		/* as the cuda object */
	uint32_t self_pid;		/* the recorder */
	int rb_fd, pids_fd, active_fd, ranges_fd; /* the cuda object's maps */
	/* --stacks: sync takes the stacks of communicator inits, splits and
	 * frees; all of every call, collectives and the others once per call
	 * site (a lookup). The cuda object's stack and Python maps (-1: none,
	 * with stacks off) */
	bool stacks_sync, stacks_all;
	int stack_pids_fd, stack_sites_fd, py_cfgs_fd, py_files_fd, py_procs_fd, py_threads_fd, py_seen_fd;
	int py_fast_fd, py_epoch_fd;	/* py_top_key's cache and its epoch (bpf/pystack.bpf.h) */
};

struct nccl_probes;
struct bpf_object;

/* Loads the object.  Returns 0 or a negative errno with one line printed. */
int nccl_probes__new(const struct nccl_probes_opts *o, struct nccl_probes **out);
/* Attaches to the libnccl at path (which may go through /proc/PID/root);
 * label names it in messages.  Returns the probes attached (0: this file
 * was attached before), or a negative errno: -ENOEXEC when the file has
 * none of the symbols. */
int nccl_probes__attach_file(struct nccl_probes *p, const char *path, const char *label);
size_t nccl_probes__nfiles(const struct nccl_probes *p);
size_t nccl_probes__nprobes(const struct nccl_probes *p);
/* This object's copy of the Python globals the recorder's pyconf sets
 * (pystack.bpf.h's py_nfiles, py_gen), to mirror the cuda object's; NULL
 * pointers when p is NULL. */
void nccl_probes__py_globals(struct nccl_probes *p, volatile uint32_t **nfiles, volatile uint32_t **gen);
/* The stacks this object could not take or walk (its n_stack_fault,
 * n_py_fault, n_py_code_drop, n_py_nothread, n_py_busy, n_py_slowkey), added into
 * v[0..5]. */
void nccl_probes__stack_counts(const struct nccl_probes *p, uint64_t v[6]);
/* Adds this object's drops and faults into c (p may be NULL). */
void nccl_probes__counters(const struct nccl_probes *p, struct gt_counters *c);
/* The loaded object (the overhead budget's run counts), NULL when none. */
struct bpf_object *nccl_probes__object(const struct nccl_probes *p);
void nccl_probes__free(struct nccl_probes *p);

#endif
