/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf record`: attach, capture into a trace file, stop cleanly. */
#ifndef GTRACE_RECORD_H
#define GTRACE_RECORD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/gtrace_events.h"

/* -c, --capture-range: what opens and closes the ranges recorded. */
enum record_range {
	RECORD_RANGE_NONE = 0,		/* everything, all the time */
	RECORD_RANGE_PROFILER,		/* cudaProfilerApi: cuProfilerStart .. cuProfilerStop */
	RECORD_RANGE_NVTX,		/* nvtx: the NVTX range of nvtx_capture, via the CUPTI agent */
};

/* What the daemon's owner watches while it records (the metrics endpoint):
 * called from the recording loop, never blocking it. */
struct record_self {
	uint64_t records;		/* records taken from the ring buffer */
	uint64_t ring_bytes;		/* the BPF ring buffer's size */
	uint64_t window_bytes;		/* the in-memory window's bytes (daemon) */
	uint64_t cpu_ns;		/* the recorder's CPU time, user + system */
	double duty_cycle;		/* fraction of time every probe was live: 1 in full mode */
	double overhead;		/* the budget's estimate (budget.c), -1 while unknown */
	double budget;			/* --budget, 0 = none */
	bool has_shed;			/* the budget can shed (light mode with a budget) */
	unsigned shed_apis;		/* always-on apis the budget moved into the windows now */
	uint64_t sheds, restores;	/* its swaps so far, each way */
	bool has_sampler;		/* --gpu-metrics sampling */
	uint64_t sampler_cpu_ns;	/* CPU time of the GPU-metrics sampler's threads */
	uint64_t names_lost;		/* name records the daemon had no room for */
};
struct record_hooks {
	void *ctx;
	/* every record written to the trace or the window */
	void (*on_record)(void *ctx, const struct gt_hdr *h);
	/* once per poll (about every 50 ms), with the counters as they are */
	void (*on_poll)(void *ctx, const struct gt_counters *c, const struct record_self *s);
	/* the daemon with --cupti: a snapshot was written to raw with the GPU-side
	 * records in it as they came (options cupti=inline); writes path from it
	 * (the merge, linking them to their calls) and returns 0, or a negative
	 * errno after one error line, and then the daemon puts raw at path as it
	 * is. NULL: raw goes to path as it is. Called on the daemon's snapshot
	 * writer thread (record/snap_writer.h), while the recording goes on. */
	int (*on_snapshot)(void *ctx, const char *raw, const char *path);
	/* the daemon's status: "key value" lines of the owner's own (the
	 * metrics endpoint's clients) into buf (len bytes); returns their
	 * length. NULL: none. From the recording loop. */
	size_t (*status)(void *ctx, char *buf, size_t len);
};

/* --trigger: a condition that writes a snapshot by itself. */
struct record_trigger {
	uint32_t kind;			/* enum gt_trigger_kind */
	int32_t code;			/* error=CODE: only this CUresult, -1 = any */
	uint64_t threshold_ns;		/* sync>TIME: a wait longer than this */
};

struct record_opts {
	bool all;			/* --all: every process */
	const char *cgroup;		/* --cgroup: with all, only the processes of this cgroup v2
					 * directory and those below it (cgroup_target.h) */
	pid_t *pids;			/* -p: only these (and their children) */
	size_t npids;
	char **cmd;			/* -- CMD ARGS: start and trace it, NULL-terminated */
	const char *output;		/* -o, NULL = default name in the current directory */
	bool force;			/* replace an existing output */
	const char *scenario;		/* part of the default name */
	double duration;		/* -d seconds from the start (the delay included), 0 = until stopped */
	double delay;			/* -y seconds before the probes are attached, 0 = none */
	uint64_t max_size;		/* --max-size: stop once the trace file holds this many bytes, 0 = no limit */
	uint64_t buffer_size;		/* ring buffer bytes */
	const char **libcuda;		/* --libcuda paths */
	size_t nlibcuda;
	const char **libnccl;		/* --libnccl paths */
	size_t nlibnccl;
	bool quiet;			/* no status line */
	bool launch_exit;		/* uretprobes on launches too */
	bool trace_cuda;		/* --trace: libcuda uprobes */
	bool trace_ioctl;		/* --trace: NVIDIA driver ioctls */
	bool trace_sched;		/* --trace: off-CPU intervals of GPU processes' threads */
	const char *ioctl_majors;	/* --ioctl-majors: device majors instead of NVIDIA's */
	const char *cmdline;		/* our own command line, for the header */
	bool cupti;			/* --cupti: GPU-side records by the CUPTI agent, left to merge
					 * (the daemon: read live into its window) */
	bool cupti_optional;		/* --cupti=optional: no agent loading is not a failure */
	const char *cupti_lib;		/* --cupti-lib: the agent library, NULL = found next to us */
	bool light;			/* --mode light: hot calls only in windows or ranges */
	uint64_t window_ns;		/* --light-window: full capture this long ... */
	uint64_t period_ns;		/* ... every this long; 0 = no windows */
	enum record_range capture_range;/* -c */
	const char *nvtx_capture;	/* --nvtx-capture NAME[@DOMAIN] (-c nvtx) */
	uint32_t range_max;		/* --capture-range-end: stop once this many ranges closed
					 * (stop = 1), 0 = repeat without a limit */
	bool daemon;			/* gtrace-bpf daemon: a rolling window in memory, no file */
	uint64_t daemon_window_ns;	/* --window: how much of the recording the window keeps */
	uint64_t daemon_memory;		/* --memory: the window's bound in compressed bytes */
	const char *daemon_dir;		/* --dir: where snapshots go */
	const char *daemon_log;		/* --log: stderr goes there, reopened at SIGHUP */
	const struct record_hooks *hooks;/* NULL = none */
	const struct record_trigger *triggers; /* daemon --trigger */
	size_t ntriggers;
	uint64_t trigger_post_ns;	/* --post: a triggered snapshot waits this long after it */
	double budget;			/* daemon --budget: keep the estimated overhead under this
					 * fraction (light mode), 0 = estimate only */
	unsigned int gpu_metrics_hz;	/* --gpu-metrics: NVML samples per second, 0 = off */
};

/* What a --cupti recording leaves to the caller: its trace holds the
 * agents' records as they came (options cupti=inline); linking them to their
 * calls, the merge, is the caller's (record/ does not merge);
 * record_spools__done() afterwards. */
struct record_spools {
	char trace[PATH_MAX];		/* the trace written, also the merge's output */
};

/* Returns the process exit status: 0, 1 on error, or CMD's status. With
 * --cupti and a finished trace that holds GPU records, *spools says what is
 * left to merge (else NULL); spools may be NULL without --cupti. */
int record__run(const struct record_opts *o, struct record_spools **spools);
/* After the merge of s; when it failed, one line says how to merge later.
 * Frees s. */
void record_spools__done(struct record_spools *s, bool merged);

#endif
