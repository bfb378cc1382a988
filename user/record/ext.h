/* SPDX-License-Identifier: MIT */
/*
 * What the recorder offers a stage that drives it (the daemon, user/daemon/):
 * hooks at the points of its loop, a sink for the trace's chunks instead of
 * a file, the probes' swap, and what it knows while it runs. The recorder
 * knows nothing of who drives it: record_opts.ext, NULL for a recording to
 * a file. Every hook may be NULL; all are called on the recording loop's
 * thread.
 */
#ifndef GTRACE_RECORD_EXT_H
#define GTRACE_RECORD_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct recorder;
struct record_opts;
struct trace_writer;
struct gt_file_info;
struct gt_hdr;
struct gt_counters;
struct cupti_session;
struct cupti_follow_opts;
struct gpu_metrics;

struct record_ext {
	void *ctx;
	/* the always-on probes are loaded swappable (recorder__swap_begin) */
	bool swap;
	/* --cupti: the stage follows the agents' spool files itself
	 * (recorder__cupti_follow_opts); the recorder leaves them alone */
	bool reads_cupti;
	/* before the BPF objects are loaded (r exists, nothing is attached):
	 * 0, or a negative errno after one error line */
	int (*open)(void *ctx, struct recorder *r);
	/* the trace goes to *w, made by the stage (trace_writer__create_sink),
	 * instead of a file; the header it would have had; name: what the
	 * messages call it. 0 or a negative errno after one error line. */
	int (*create_sink)(void *ctx, const struct gt_file_info *info, struct trace_writer **w, char *name,
			   size_t len);
	/* the sink exists, the loop is about to start: 0 or -errno (one line) */
	int (*start)(void *ctx);
	/* a record from BPF, its size checked, before it is written */
	void (*on_record)(void *ctx, const struct gt_hdr *h);
	/* a record written to the trace */
	void (*on_written)(void *ctx, const struct gt_hdr *h);
	/* a kernel handle a naming call named (the call may leave the trace
	 * before the name is needed) */
	void (*on_learned)(void *ctx, const struct gt_hdr *at, uint64_t handle, const char *name);
	/* each pass of the loop: before it polls the ring buffer, once it has
	 * drained it, after the other inputs were read (serve), after the stop
	 * checks with the time (tick) */
	void (*before_poll)(void *ctx);
	void (*drained)(void *ctx);
	void (*serve)(void *ctx);
	void (*tick)(void *ctx, uint64_t now);
	/* the loop has ended; nothing more is polled */
	void (*stopped)(void *ctx);
	/* the end of a recording into a sink: what to say (the counters, ", N
	 * probe gaps" or "") instead of a file's summary */
	void (*finished)(void *ctx, const struct gt_counters *c, const char *gaps);
	/* after the probes and the writer are gone: what the stage holds */
	void (*close)(void *ctx);
};

/* The recording's options. */
const struct record_opts *recorder__opts(const struct recorder *r);
/* Appends h to the trace; the first error stops the recording. */
int recorder__write(struct recorder *r, const struct gt_hdr *h);
/* The chunk being filled goes to the sink (or file) now. */
int recorder__flush(struct recorder *r);
/* The counters as they are now (BPF, recorder, writer). */
void recorder__counters(struct recorder *r, struct gt_counters *c);
/* Takes what the BPF side has submitted, now. */
void recorder__drain(struct recorder *r);

/* What the recorder has seen. */
struct recorder_figures {
	uint64_t received;		/* records taken from the ring buffer */
	uint64_t nprocs;		/* processes seen making CUDA calls */
	uint64_t ring_bytes;		/* the BPF ring buffer's size */
	uint32_t windows;		/* light mode's windows opened */
	uint64_t period_ns;		/* their period now, 0 = none */
	uint64_t next_window;		/* when the next one opens, 0 = never */
	uint64_t window_end;		/* the open one's end, 0 = none open */
};
void recorder__figures(const struct recorder *r, struct recorder_figures *f);
/* Light mode's window period from now on (the next window counted from the
 * last one's opening). */
void recorder__set_period(struct recorder *r, uint64_t period_ns);
/* --cgroup's path as one word ("-" without one) into buf. */
void recorder__cgroup_word(const struct recorder *r, char *buf, size_t len);

/* pid was seen making CUDA calls. */
bool recorder__traced(const struct recorder *r, uint32_t pid);
/* pid's records belong in the trace (traced, or a child of a traced one). */
bool recorder__relevant(const struct recorder *r, uint32_t pid);
/* The exit of pid written: it is forgotten, so that the next process with
 * its pid is named and counted anew, and its threads' scheduling is no
 * longer recorded. True when it was a traced process. */
bool recorder__forget(struct recorder *r, uint32_t pid);

/* libcuda discovery and holds, "key value\n" lines into buf. */
size_t recorder__hold_status(struct recorder *r, char *buf, size_t len);
/* --gpu-metrics' sampler, NULL when off or without NVML. */
struct gpu_metrics *recorder__gpum(const struct recorder *r);
/* --cupti: the session (the agents' directory and library), NULL without. */
struct cupti_session *recorder__cupti(const struct recorder *r);
/* The CUPTI agent loaded into a running process and started there in the
 * session's run directory (--cupti=attach, the daemon's attach): what came
 * of it. Blocks while the process is held (bounded: 10 s at each step);
 * touches nothing of r's but its session's names, so that a thread of its
 * own may run it. */
#define GT_CUPTI_ATTACH_REC_MAX	(sizeof(struct gt_cupti_attach) + 328)
struct cupti_attach_out {
	uint64_t ts;		/* when the attach began (CLOCK_MONOTONIC) */
	uint64_t held_ns;	/* how long the process' thread was held, 0 = never */
	uint32_t result;	/* enum gt_attach_result */
	int32_t tid;		/* the thread the agent was started in (0: none) */
	int32_t passed_over;	/* threads found inside the CUDA driver and not borrowed */
	bool stack_maybe;	/* tid's stack held a word pointing into the driver (no thread
				 * without one waited) */
	bool inside;		/* tid was taken in a wait of the driver's (no other waited) */
	bool python;		/* loaded by the interpreter (CPython 3.14's remote debugging):
				 * tid ran it in its own eval loop, no thread was stopped */
	char why[320];		/* not GT_ATTACH_OK: why, one line; GT_ATTACH_OK: what it does not
				 * record (no NVTX ranges), or empty */
};
void recorder__cupti_attach_pid(const struct recorder *r, pid_t pid, struct cupti_attach_out *out);
/* An attach that went in: what its agent cannot record there ("no NVTX
 * ranges (…)"), without the "pid N: " of the record; NULL when nothing. */
const char *recorder__attach_note(const struct cupti_attach_out *a);
/* What follows the reason of an attach that did not go in: that the
 * process' calls are still recorded, unless it died of it. */
const char *recorder__attach_failed_tail(const struct cupti_attach_out *a);
/* "thread T" and, when some were, "; N threads inside the CUDA driver
 * passed over", and how far the thread it took was inside the driver,
 * for the attach's line (buf of len). */
const char *recorder__attach_thread(const struct cupti_attach_out *a, char *buf, size_t len);
/* Its GT_REC_CUPTI_ATTACH into the trace. */
int recorder__write_attach(struct recorder *r, pid_t pid, const struct cupti_attach_out *a);
/* The spool follower's options that come from the recording: its session,
 * whom it wants, the users the processes run as (ctx = r). */
void recorder__cupti_follow_opts(struct recorder *r, struct cupti_follow_opts *fo);

/* The probes' cost, for an estimate of it: how a hit of api's entry probe
 * is taken (enum uprobe_insn, record/probe_cost.h; -1 = not probed), the
 * BPF programs' fds by kind (entry, return, kernel-side: enum
 * recorder_prog_kind) and whether the links are uprobe_multi. */
enum recorder_prog_kind { RECORDER_PROG_ENTRY, RECORDER_PROG_RET, RECORDER_PROG_KERN, RECORDER_PROG__N };
struct recorder_prog {
	int fd;
	enum recorder_prog_kind kind;
};
int recorder__insn_class(const struct recorder *r, unsigned api);
size_t recorder__progs(const struct recorder *r, struct recorder_prog *out, size_t max);
bool recorder__multi(const struct recorder *r);
/* The runs of the kernel-side programs (RECORDER_PROG_KERN) that concerned
 * a traced task, since the recording began: the statistics' run counts
 * include every task on the machine. */
uint64_t recorder__kern_own_runs(const struct recorder *r);
/* Turns the kernel's BPF run-time statistics on for as long as the fd
 * returned stays open; -1 with errno when refused. */
int recorder__bpf_stats(void);

/* The swap of an always-on api's probes to the window set and back
 * (ext->swap): begin, commit, done (wait: until the old links are closed;
 * *ns: how long it took); the hits the new programs handed on. */
int recorder__swap_begin(struct recorder *r, unsigned api, bool shed);
int recorder__swap_commit(struct recorder *r);
bool recorder__swap_done(struct recorder *r, bool wait, uint64_t *ns);
uint64_t recorder__swap_handed(const struct recorder *r);

/* How often the loop polls, at most this long apart (ms). */
#define RECORDER_POLL_MS 50

#endif
