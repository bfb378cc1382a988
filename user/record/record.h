/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf record`: attach, capture into a trace file, stop cleanly. */
#ifndef GTRACE_RECORD_H
#define GTRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts {
	bool all;			/* --all: every process */
	pid_t *pids;			/* -p: only these (and their children) */
	size_t npids;
	char **cmd;			/* -- CMD ARGS: start and trace it, NULL-terminated */
	const char *output;		/* -o, NULL = default name in the current directory */
	bool force;			/* replace an existing output */
	const char *scenario;		/* part of the default name */
	double duration;		/* -d seconds, 0 = until stopped */
	uint64_t buffer_size;		/* ring buffer bytes */
	const char **libcuda;		/* --libcuda paths */
	size_t nlibcuda;
	bool quiet;			/* no status line */
	bool launch_exit;		/* uretprobes on launches too */
	bool trace_cuda;		/* --trace: libcuda uprobes */
	bool trace_ioctl;		/* --trace: NVIDIA driver ioctls */
	bool trace_sched;		/* --trace: off-CPU intervals of GPU processes' threads */
	const char *ioctl_majors;	/* --ioctl-majors: device majors instead of NVIDIA's */
	const char *cmdline;		/* our own command line, for the header */
	bool cupti;			/* --cupti: GPU-side records by the CUPTI agent, merged at the end */
	const char *cupti_lib;		/* --cupti-lib: the agent library, NULL = found next to us */
};

/* Returns the process exit status: 0, 1 on error, or CMD's status. */
int record__run(const struct record_opts *o);

#endif
