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

struct record_ext;

/* --stacks: which calls take their native user stack. */
enum record_stacks { RECORD_STACKS_NONE, RECORD_STACKS_SYNC, RECORD_STACKS_ALL };

/* Defaults that record and the daemon share: the ring buffer (16 MiB: the
 * producer goes round all of it, and a buffer the last-level cache holds
 * saves each record a fetch from memory, docs/PERFORMANCE.md), and light
 * mode's windows. */
#define RECORD_BUFFER_DEFAULT	(16ull << 20)
#define RECORD_WINDOW_DEFAULT_NS	200000000ull	/* 200 ms of full capture ... */
#define RECORD_PERIOD_DEFAULT_NS	5000000000ull	/* ... every 5 s */

struct record_opts {
	bool all;			/* --all: every process */
	const char *cgroup;		/* --cgroup: with all, only the processes of this cgroup v2
					 * directory and those below it (cgroup_target.h) */
	pid_t *pids;			/* -p: only these (and their children) */
	size_t npids;
	char **cmd;			/* -- CMD ARGS: start and trace it, NULL-terminated */
	const char *output;		/* -o, NULL = default name in the current directory */
	enum record_stacks stacks;	/* --stacks */
	bool keep_lookups;		/* --keep-lookups: never drop the kernel lookups' probes */
	char *written;			/* when not NULL: the path of the trace written (PATH_MAX
					 * bytes), "" when none was finished */
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
	bool cupti;			/* --cupti: GPU-side records by the CUPTI agent, left to merge */
	bool cupti_optional;		/* --cupti=optional: no agent loading is not a failure */
	bool cupti_detach_idle;		/* --cupti-detach=idle: CUPTI left loaded and idle at
					 * an attached agent's detach, not finalized */
	bool cupti_attach;		/* --cupti=attach: load the agent into the -p processes
					 * running now (record/inject) */
	const char *cupti_lib;		/* --cupti-lib: the agent library, NULL = found next to us */
	bool light;			/* --mode light: hot calls only in windows or ranges */
	uint64_t window_ns;		/* --light-window: full capture this long ... */
	uint64_t period_ns;		/* ... every this long; 0 = no windows */
	enum record_range capture_range;/* -c */
	const char *nvtx_capture;	/* --nvtx-capture NAME[@DOMAIN] (-c nvtx) */
	uint32_t range_max;		/* --capture-range-end: stop once this many ranges closed
					 * (stop = 1), 0 = repeat without a limit */
	/* a stage that drives the recording (record/ext.h), NULL = none */
	const struct record_ext *ext;
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
