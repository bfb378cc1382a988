/* SPDX-License-Identifier: MIT */
/*
 * Internal to the recorder (record.c sets up and finishes a recording,
 * loop.c runs it): the state both share and the helpers they call across.
 */
#ifndef GTRACE_RECORDER_H
#define GTRACE_RECORDER_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "format/nv_ioctl.h"
#include "record/record.h"

#define POLL_MS		50	/* consumer latency bound with no wake-ups */
#define TICK_NS		1000000000ull	/* stats, flush, status line */
#define RESCAN_NS	10000000000ull	/* full /proc rescan in --all mode */
#define SCAN_QUEUE	1024

struct recorder {
	const struct record_opts *o;
	struct cuda_bpf *skel;
	struct ring_buffer *rb;
	struct cuda_probes *probes;
	struct kernel_names *names;
	struct trace_writer *w;
	char path[PATH_MAX];
	bool filter;			/* only pids in the BPF pids map */
	struct proc_names *procs;	/* traced processes, their names */
	pid_t scan_queue[SCAN_QUEUE];	/* exec'd processes to look at */
	size_t nscan;
	int write_err;			/* first write error, stops the recording */
	uint64_t nprocs;		/* processes seen making CUDA calls */
	uint64_t bad_records;		/* malformed ring-buffer records */
	uint64_t last_drops;
	uint64_t received;		/* records taken from the ring buffer */
	struct child *child;		/* -- CMD, NULL = none */
	const char *open_probe;		/* which openat probe runs */
	bool multi;			/* uprobe_multi links (else one link per probe) */
	struct kernel_sources *ks;	/* ioctl and scheduler recording */
	uint32_t majors[8];		/* device majors whose ioctls are recorded */
	size_t nmajors;
	uint32_t frontend_major;	/* NVIDIA frontend (RM escapes decoded) */
	struct nv_majors nv;		/* NVIDIA's majors, for naming devices later */
	struct cupti_session *cupti;	/* --cupti, else NULL */
	struct pid_watch *watch;	/* -p: the traced processes, to stop when all have exited */
	bool released;			/* -- CMD runs (already during --delay) */
	bool size_stop;			/* the trace reached --max-size: CMD runs on untraced */
};

/* SIGINT/SIGTERM received: the first stops the recording, a second kills
 * -- CMD if the recorder is waiting for it. */
extern volatile sig_atomic_t stop_requests;

uint64_t now_ns(clockid_t clk);
/* Once a second: counters into the trace, a flush, the status line. */
void tick(struct recorder *r, uint64_t start, uint64_t *last_events, bool tty);
/* In the child of -- CMD before its exec (child__start's setup). */
int child_setup(void *ctx);
/* Attaches libcuda copies the exec'd processes (or, with all, every process) map. */
void rescan(struct recorder *r, bool all);

/* Starts -- CMD held, with its pid in the BPF filter. Returns 0 or -errno
 * after one error line. */
int recorder__start_child(struct recorder *r);
bool recorder__child_done(struct recorder *r);
/* Polls and drains the ring buffer until a stop: a request, -d, --max-size,
 * CMD's exit or the exit of every -p process. */
int recorder__run_loop(struct recorder *r);
/* After a stop with -- CMD still running: CMD's calls are still recorded
 * until it exits; a second request kills it. */
void recorder__wait_child(struct recorder *r);
/* After --max-size with -- CMD still running: it runs on untraced. */
void recorder__wait_child_untraced(struct recorder *r);
/* --delay: starts and releases -- CMD, then waits. */
int recorder__wait_delay(struct recorder *r);

#endif
