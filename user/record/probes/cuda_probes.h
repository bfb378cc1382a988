/* SPDX-License-Identifier: MIT */
/* Attaches the uprobes of bpf/gtrace_api.h to libcuda files, once per
 * distinct file (device + inode), whatever path it was found under. */
#ifndef GTRACE_CUDA_PROBES_H
#define GTRACE_CUDA_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_program;
struct cuda_bpf;
struct cuda_probes;

struct cuda_probes_opts {
	bool launch_exit;	/* also probe launch returns (durations, results; a second probe per launch) */
	bool multi;		/* uprobe_multi links: programs were loaded for them */
	bool hot_detached;	/* light mode: hot calls' probes start detached (cuda_probes__set_hot) */
	bool profiler_ranges;	/* -c cudaProfilerApi: cuProfilerStart/Stop open and close ranges */
	bool swap;		/* the budget may swap always-on links (the object's swap_gate on):
				 * cold probes carry GT_COOKIE_SWAP and their generation */
	bool stacks_sync;	/* --stacks sync: the calls that block the host (syncs, blocking
				 * copies and sets, allocations and frees, module loads) take
				 * their user stack (GT_COOKIE_STACK) */
	bool stacks_all;	/* --stacks all: every call, the hot ones once per call site
				 * (GT_COOKIE_STACK_CACHE) */
};

/* Creates one uprobe_multi link of the loaded program prog_fd at cnt file
 * offsets of path (entry probes, or return probes when ret). Returns the
 * link fd (close it to detach) or a negative errno. */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *cookies, uint32_t cnt, bool ret);
/* Prepares a program, before its object loads, for uprobe_multi links
 * (multi) or for one perf-event link per probe. */
void uprobe_multi__prepare(struct bpf_program *prog, bool multi);
/* Prepares the loaded-to-be programs of skel for uprobe_multi links. */
void cuda_probes__prepare_multi(struct cuda_bpf *skel, bool multi);

struct cuda_probes *cuda_probes__new(struct cuda_bpf *skel, const struct cuda_probes_opts *opts);
/* Attaches to the file at path (which may go through /proc/PID/root).
 * Returns the number of probes attached (0 when this file was attached
 * before), or a negative errno: -ENOENT unreadable, -ENOEXEC not an ELF file
 * or no libcuda symbols in it, other errors from the kernel when no probe at
 * all could be attached. label names the file in messages. */
int cuda_probes__attach_file(struct cuda_probes *p, const char *path, const char *label);
/* True when the file at path (device + inode) is already attached. */
bool cuda_probes__has_file(const struct cuda_probes *p, const char *path);
/* Attaches (on) or detaches the probes of the hot calls (gt_api__hot) in
 * every file, and in files attached later. Returns 0, or -EIO when some
 * could not be attached (the others are). The detach runs in a thread: the
 * kernel's synchronization takes up to hundreds of ms; an attach waits for
 * the last detach to end (never two links of a probe at once). */
int cuda_probes__set_hot(struct cuda_probes *p, bool on);
/* How many attaches waited for the last detach. */
uint32_t cuda_probes__detach_waits(const struct cuda_probes *p);
/* True once, when the last detach has finished (wait: block until it has),
 * with how long it took in *ns. */
bool cuda_probes__detach_done(struct cuda_probes *p, bool wait, uint64_t *ns);
/* -c nvtx: probes gtrace_capture_open/close in the CUPTI agent at path,
 * opening ranges of source (enum gt_capture_source). Returns 0, -ENOEXEC
 * when the agent lacks them, or another negative errno. */
int cuda_probes__attach_ranges(struct cuda_probes *p, const char *path, uint32_t source);
/* How a hit of api's entry probe is taken (enum uprobe_insn, elf_syms.h),
 * in the file attached last that has it; -1 when no file has it. */
int cuda_probes__insn_class(const struct cuda_probes *p, unsigned api);
/* A stage's shedding (record/ext.h, recorder__swap_*): api's probes leave the
 * always-on set for the window set (shed) or come back (!shed).
 * begin: new always-on links (every cold probe in the other generation;
 *   when shedding, api's window links too while a window is open) attached
 *   beside the old ones, api's calls marked, the programs pairing their
 *   decisions. -EOPNOTSUPP without uprobe_multi links or opts.swap, -EBUSY
 *   while a swap is in progress, -EINVAL for a hot api or one already where
 *   asked; other errors when nothing could be attached (nothing changed).
 * commit: the generation in force flipped (the new links record from now
 *   on), the old links closed in a thread.
 * done: true once, when the close has finished (wait: block until then),
 *   with how long the swap took from its beginning in *ns. */
int cuda_probes__swap_begin(struct cuda_probes *p, unsigned api, bool shed);
int cuda_probes__swap_commit(struct cuda_probes *p);
bool cuda_probes__swap_done(struct cuda_probes *p, bool wait, uint64_t *ns);
bool cuda_probes__swapping(const struct cuda_probes *p);
/* True when api was moved to the window set (cuda_probes__swap_begin). */
bool cuda_probes__is_shed(const struct cuda_probes *p, unsigned api);
/* Takes the kernel lookups' probes (cuKernelGetFunction) away for good,
 * in a thread, once their names are not needed (see cuda_probes_lookup.c). */
int cuda_probes__drop_lookups(struct cuda_probes *p);
/* True once, when that detach has finished (wait: block until then), with
 * how long it took in *ns. */
bool cuda_probes__lookups_done(struct cuda_probes *p, bool wait, uint64_t *ns);
bool cuda_probes__lookups_dropped(const struct cuda_probes *p);
size_t cuda_probes__nfiles(const struct cuda_probes *p);
size_t cuda_probes__nprobes(const struct cuda_probes *p);
size_t cuda_probes__nfailed(const struct cuda_probes *p);
/* Path (label) of attached file i, for the trace header. */
const char *cuda_probes__file_label(const struct cuda_probes *p, size_t i);
void cuda_probes__free(struct cuda_probes *p);

#endif
