/* SPDX-License-Identifier: MIT */
/*
 * Holding a process that opened a libcuda or libnccl file without probes
 * until the recorder has attached them (bpf/gtrace_hold.h has the BPF side
 * and the shared slots).
 *
 * Fail open: a watchdog process, forked at the start with nothing but a
 * pipe from the recorder and the shared slots, continues every process
 * held longer than the bound (1 s), and every held one at once when the
 * recorder is gone (its end of the pipe closed: a crash or a SIGKILL too).
 * A reused pid is never continued (the start time is checked through a
 * pidfd). BPF holds nobody while the recorder's heartbeat is stale, nor
 * while the watchdog is not running.
 */
#ifndef GTRACE_RECORD_HOLD_H
#define GTRACE_RECORD_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/gtrace_events.h"
#include "bpf/gtrace_hold.h"

struct hold;

struct hold_opts {
	int slots_fd;			/* the hold_slots map (BPF_F_MMAPABLE) */
	int files_fd;			/* the probed_files map */
	volatile uint32_t *hold_on;	/* the object's switch (bss), 1 while holding is on */
	volatile __u64 *heartbeat;	/* its heartbeat (bss): the loop's latest time, 0 = ended */
	uint64_t bound_ns;		/* a process held this long is continued, probes or not */
};

/* What holding did, for the summary, status and tests. */
struct hold_stats {
	uint64_t held;			/* processes held until their probes were in place */
	uint64_t hold_ns_max;		/* the longest of those holds (stop to SIGCONT) */
	uint64_t hold_ns_sum;		/* their total */
	uint64_t timeouts;		/* held, continued at the bound before the probes */
	uint64_t not_held;		/* opened a library without probes and were not held */
	uint64_t attach_failed;		/* opened a library whose probes could not be attached */
	uint64_t gaps;			/* loads that left a gap (every outcome but held) */
	bool watchdog;			/* the watchdog runs: holding possible */
	uint32_t first_pid;		/* the first gap's process, 0 = none */
	uint32_t first_outcome;		/* its outcome (enum gt_libload_outcome) */
	char first_path[256];		/* its file as the process named it */
};

/* Maps the slots and forks the watchdog (call it before any thread
 * starts). Holding stays off until hold__enable(); when the watchdog could
 * not be started it stays off for good (one warning) and 0 is returned:
 * recording goes on without holds. -ENOMEM when h cannot be allocated. */
int hold__new(const struct hold_opts *o, struct hold **out);
/* Holding on (the ring buffer's consumer exists and the loop is about to
 * run); its heartbeat is now. */
void hold__enable(struct hold *h, uint64_t now);
/* The loop ran at now (CLOCK_MONOTONIC). */
void hold__heartbeat(struct hold *h, uint64_t now);
/* Once a second: a watchdog that is gone turns holding off (said once). */
void hold__tick(struct hold *h);

/* The file at path, and the one BPF saw (seen, NULL for none), into the
 * files map as kind (enum gt_file_kind), in place since `since`; a key
 * already there as PROBED keeps its time. */
void hold__note_file(struct hold *h, const char *path, const struct gt_file_key *seen, uint32_t kind,
		     uint64_t since);
/* The files map's entry of k; false when there is none. */
bool hold__file_state(struct hold *h, const struct gt_file_key *k, struct gt_file_state *st);

/* A held load's process continued, its probes now in place or not: sets
 * l->cont_ts; the outcome becomes GT_LL_TIMEOUT when the watchdog continued
 * it first, before l->end_ts (the probes' time, 0 = never). A load not held
 * is left as it is. */
void hold__release(struct hold *h, struct gt_libload *l);
/* Counts a finished load. */
void hold__count(struct hold *h, const struct gt_libload *l);
void hold__stats(const struct hold *h, struct hold_stats *s);

/* Sends SIGCONT to pid when it is still the process that started at
 * start_boottime (CLOCK_BOOTTIME ns). Returns 0, -ESRCH when it is gone
 * or another process has its pid, or another negative errno. */
int hold__continue_pid(pid_t pid, uint64_t start_boottime);
/* True when /proc/PID/stat's fields after the command name (procfs.h)
 * give a start time, in clock ticks of tck per second, that is
 * start_boottime's. */
bool hold__same_start(const char *stat_fields, uint64_t start_boottime, long tck);

/* Holding off (the heartbeat 0), every process still held continued, the
 * watchdog told to end (it continues any hold that began meanwhile and
 * exits). NULL is fine. */
void hold__free(struct hold *h);

#endif
