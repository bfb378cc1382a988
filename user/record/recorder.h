/* SPDX-License-Identifier: MIT */
/*
 * Internal to the recorder (record.c sets up and finishes a recording,
 * loop.c runs it, events.c takes each record from BPF): the state they share
 * and the helpers they call across.
 */
#ifndef GTRACE_RECORDER_H
#define GTRACE_RECORDER_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "bpf/gtrace_events.h"
#include "format/nv_ioctl.h"
#include "format/trace_file.h"
#include "lib/u64map.h"
#include "record/ext.h"
#include "record/record.h"

#define POLL_MS		RECORDER_POLL_MS	/* consumer latency bound with no wake-ups */
#define TICK_NS		1000000000ull	/* stats, flush, status line */
#define RESCAN_NS	10000000000ull	/* full /proc rescan in --all mode */
#define SCAN_QUEUE	1024
#define GT_LIBLOAD_PATH_MAX 256	/* the longest path a GT_REC_LIBLOAD or LIBOPEN from BPF has */

/* Attach or detach times of the hot probes. */
struct capture_lat {
	uint64_t n, sum, max;	/* how many, their total and the longest, ns */
};

/* A capture range open in a process, as its BPF record said. */
struct open_range {
	uint32_t pid, tid;	/* its process, the thread that opened it */
	uint32_t index;		/* its number */
	uint32_t source;	/* enum gt_capture_source */
};

/* Capture control (capture.c). */
struct capture_ctl {
	uint64_t next_window;		/* light mode: when the next window opens, 0 = never */
	uint64_t period_ns;		/* ... every this long (--light-window, or the budget's) */
	uint64_t last_open;		/* when the last window opened */
	uint64_t window_end;		/* the open window's end, 0 = none open */
	uint32_t windows;		/* windows opened */
	uint32_t opened, refused, closed;/* range records seen */
	struct open_range *open;	/* ranges open now */
	size_t nopen, open_cap;
	bool stop;			/* --capture-range-end reached: stop recording */
	bool hot_warned;		/* a hot attach failed, said once */
	uint32_t pend_kind;		/* close record waiting for its detach time, 0 = none */
	uint32_t pend_source, pend_index;/* ... its source and number */
	uint64_t pend_ts;		/* ... and when the gate closed */
	uint64_t lookups_ts;		/* when the kernel lookups' probes were dropped, 0 = not */
	uint32_t lookups_checked;	/* ... the names checked by then */
	bool lookups_written;		/* ... and their record written */
	struct capture_lat attach, detach;
};

/* A process that made CUDA calls, for --cupti. */
struct cupti_pid {
	uint32_t pid;
	uid_t uid;			/* the user it ran as then, (uid_t)-1 = unknown */
};

struct utsname;
struct cupti_follow_opts;

struct recorder {
	const struct record_opts *o;
	struct cuda_bpf *skel;
	struct ring_buffer *rb;
	struct cuda_probes *probes;
	struct nccl_probes *nccl;	/* libnccl's probes, NULL when libcuda's are off */
	struct kernel_names *names;
	struct trace_writer *w;
	char path[PATH_MAX];
	bool filter;			/* only pids in the BPF pids map */
	struct cgroup_target *cgroup;	/* --cgroup, NULL = none */
	struct proc_names *procs;	/* traced processes, their names */
	pid_t scan_queue[SCAN_QUEUE];	/* exec'd processes to look at */
	size_t nscan;
	int write_err;			/* first write error, stops the recording */
	uint64_t nprocs;		/* processes seen making CUDA calls */
	uint64_t cuda_calls;		/* CUDA calls recorded (entries) */
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
	struct cupti_follow *follow;	/* --cupti (unless ext reads them): the spool files read into
					 * the trace as they grow */
	struct cupti_pid *cupti_pids;	/* --cupti: processes that made CUDA calls, to look
					 * for the agent in those that did not join */
	size_t ncupti_pids, cupti_pids_cap;
	uint64_t cupti_unjoined;	/* ... that ran the agent and did not join */
	uint64_t next_clock;		/* when the next clock pair is written (GT_REC_CLOCK) */
	uint8_t *attach_recs;		/* --cupti=attach: a GT_REC_CUPTI_ATTACH per process
					 * tried, written once the trace is open */
	size_t attach_len, attach_cap;
	uint64_t calls_end;		/* --cupti: when the calls stopped being taken (the
					 * trailer's end_ts), 0 = at the trailer */
	bool to_file;			/* the trace is a file (not a stage's sink) */
	struct pid_watch *watch;	/* -p: the traced processes, to stop when all have exited */
	bool released;			/* -- CMD runs (already during --delay) */
	bool untraced_stop;		/* the recording ended by itself (--max-size, -d,
					 * --capture-range-end): CMD runs on untraced */
	struct capture_ctl cap;		/* light mode, capture ranges */
	struct gpu_metrics *gpum;	/* --gpu-metrics' sampler, NULL = off or no NVML */
	char gpum_why[640];		/* why there are no GPU metrics, said at the start */
	struct hold *hold;		/* holding processes until their library's probes are
					 * attached (hold.c), NULL without --trace cuda */
	bool libcuda_waiting;		/* no libcuda attached yet: said once, cleared at the first */
	struct ustacks *stacks;		/* --stacks: raw stacks interned, NULL = off */
	struct pyconf *py;		/* --stacks: the Python interpreters BPF walks */
};

/* SIGINT/SIGTERM received: the first stops the recording, a second kills
 * -- CMD if the recorder is waiting for it. */
extern volatile sig_atomic_t stop_requests;

uint64_t now_ns(clockid_t clk);
/* The stage's hook, when there is a stage and it has that hook; a call of
 * it (nothing without one). */
#define EXT_HOOK(r, hook) ((r)->o->ext && (r)->o->ext->hook ? (r)->o->ext->hook : NULL)
#define EXT_CALL(r, hook, ...)								\
	do {										\
		if (EXT_HOOK(r, hook))							\
			(r)->o->ext->hook((r)->o->ext->ctx, ##__VA_ARGS__);		\
	} while (0)

/* --gpu-metrics (gpu_metrics_hook.c): the sampler opened before the
 * header is written (its probe goes into the header's options, appended to
 * opts of size len), started with the loop, its records drained from the
 * loop, stopped and summarised at the end. */
int recorder__gpum_open(struct recorder *r, char *opts, size_t len);
int recorder__gpum_start(struct recorder *r);
void recorder__gpum_drain(struct recorder *r);
void recorder__gpum_finish(struct recorder *r);

/* Capture control (capture.c). At the start of the run loop: */
void capture__start(struct recorder *r, uint64_t now);
/* Opens and closes light mode's windows. Returns when it wants to be called
 * next (CLOCK_MONOTONIC ns), 0 for never. */
uint64_t capture__tick(struct recorder *r, uint64_t now);
/* A range record from BPF, after it was written. */
void capture__on_range(struct recorder *r, const struct gt_capture *e);
/* Before the trace is finished: closes what is open, says what was captured. */
void capture__finish(struct recorder *r);
/* The ring buffer's callback (events.c; ctx = the recorder): a record from
 * BPF checked, completed and written. 0 or -errno. */
int recorder__on_event(void *ctx, void *data, size_t len);
/* Once a second: counters into the trace, a flush, the status line. */
void tick(struct recorder *r, uint64_t start, uint64_t *last_events, bool tty);
/* In the child of -- CMD before its exec (child__start's setup). */
int child_setup(void *ctx);
/* Attaches libcuda copies the exec'd processes (or, with all, every process) map. */
void rescan(struct recorder *r, bool all);

/* record/discovery.c: a libcuda or libnccl file found (libcuda_found_fn):
 * its probes attached. Returns the probes attached or -errno. */
int recorder__attach_found(void *ctx, const char *path, const char *label);
/* The files of --libcuda/--libnccl, the driver's usual libcuda and those the
 * traced processes map; with none, the recorder waits for one (said once).
 * Returns 0, or -errno after one error line (a --libcuda/--libnccl file). */
int recorder__attach_libcuda(struct recorder *r);
/* A GT_REC_LIBLOAD from BPF (its size checked): the file's probes attached,
 * the process continued when it was held, l completed. Returns 1 when l is
 * to be written (a hold, or a gap), 0 when nothing was missed. */
int recorder__on_libload(struct recorder *r, struct gt_libload *l);
/* A GT_REC_LIBOPEN (the open's exit not probed): the file attached, and a
 * GT_REC_LIBLOAD written for the gap when it was new. Returns 0 or the
 * write's error. */
int recorder__on_libopen(struct recorder *r, const struct gt_path *p);
/* At the end: what holding did, and the loads that left a gap (a warning);
 * that no libcuda was ever found. */
void recorder__hold_summary(struct recorder *r);
/* record/header_info.c: the trace header's fields, the options into opts. */
void recorder__fill_info(struct recorder *r, struct gt_file_info *info, struct utsname *u, char *opts,
			 size_t len);
/* Which device majors' ioctls to record: --ioctl-majors, else NVIDIA's.
 * Returns 0 or -EINVAL after one error line. */
int recorder__choose_majors(struct recorder *r);

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
/* After the recording ended by itself (--max-size, -d, --capture-range-end)
 * with -- CMD still running: it runs on untraced. */
void recorder__wait_child_untraced(struct recorder *r);
/* --delay: starts and releases -- CMD, then waits. */
int recorder__wait_delay(struct recorder *r);

/* --cupti (record_cupti.c): the session (before the probes), the spool
 * files followed into the trace (once the trace exists; unless ext->reads_cupti),
 * each poll, the processes that may run the agent, the end (the agents hand
 * over; false when no agent joined, said) and what is left to free. */
int recorder__cupti_new(struct recorder *r);
int recorder__cupti_start(struct recorder *r);
/* --cupti=attach: the agent into the running processes of -p (record_cupti.c). */
void recorder__cupti_attach(struct recorder *r);
/* When this recording's --cupti=attach put the agent into pid (the
 * attach's start, CLOCK_MONOTONIC ns); 0 when it did not. */
uint64_t recorder__attached_at(const struct recorder *r, uint32_t pid);
/* A clock pair of kind (enum gt_clock_kind) into the trace; the next
 * periodic one is due GT_CLOCK_PERIOD_NS later. */
void recorder__clock(struct recorder *r, uint32_t kind);
void recorder__cupti_poll(struct recorder *r);
void recorder__cupti_note(struct recorder *r, uint32_t pid);
bool recorder__cupti_finish(struct recorder *r);
void recorder__cupti_end(struct recorder *r);
/* Whose GPU side the recording wants: NULL for every process. */
bool (*recorder__cupti_wants(const struct recorder *r))(void *, pid_t);

#endif
