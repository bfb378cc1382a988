/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of --cupti: finds and checks the agent library, owns
 * the spool directory its agents write to and the files through which it
 * says what it wants (contract: cupti/gtrace_cupti.h).  -- CMD gets a private
 * directory, named in the child's environment; --all, -p, --cgroup and a
 * stage that drives the recorder use the run directory, where the agents of every program started
 * with CUDA_INJECTION64_PATH wait, armed, for a recorder: this one holds its
 * lock while it records, says which processes it wants (all, or a go file
 * each), and asks them to pause at its end.
 *
 * The directory is opened once and every file in it is reached through that
 * descriptor, never by path again: the private directory's parent may be
 * writable by others (TMPDIR), the run directory lets every user create
 * files in it, and root must not be steered into another directory or
 * through a link.  Reading the spool files is record/cupti_follow.c's.
 */
#ifndef GTRACE_CUPTI_SESSION_H
#define GTRACE_CUPTI_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cupti_session;

struct cupti_session_opts {
	const char *lib;	/* --cupti-lib: the agent library, NULL = found next to us */
	bool private_dir;	/* -- CMD: a private spool directory for its agents,
				 * else the run directory where any program can join */
	bool listed;		/* run directory: only the processes given go files
				 * (-p, --cgroup), else every one (--all) */
	bool detach_idle;	/* --cupti-detach=idle: agents loaded into running processes
				 * leave CUPTI loaded and idle when they detach */
	const char *nvtx_capture;	/* --nvtx-capture NAME[@DOMAIN] for the agents
					 * (GTRACE_NVTX_CAPTURE), NULL = none; the caller's,
					 * kept for the session */
};

/* Finds the agent library and checks it is one (an ELF shared object that
 * exports InitializeInjection). Returns 0 or a negative errno with one error
 * line printed. */
int cupti_session__new(const struct cupti_session_opts *o, struct cupti_session **out);
/* Creates the private directory, or opens and locks the run directory (one
 * recorder at a time) and lets the agents in. Returns 0 or a negative errno
 * with one error line printed. */
int cupti_session__open_dir(struct cupti_session *s);
/* The recording of the calls begins: the agents' records from before are
 * not this recording's (the run directory; a private one holds nothing
 * earlier). First the armed agents get the time to see the session (2 x
 * GT_CUPTI_POLL_GO_MS after it went up; the probes' loading usually took
 * longer), and those of running processes the recording wants (wants NULL:
 * every one) are admitted and waited for until they record (1 s at most),
 * so that no call is recorded before its agent records. Nothing when s is
 * NULL. */
void cupti_session__begin(struct cupti_session *s, bool (*wants)(void *ctx, pid_t pid), void *ctx);
/* The spool directory's path (messages, the agents' environment); NULL
 * while none (or s is NULL). */
const char *cupti_session__dir(const struct cupti_session *s);
/* The spool directory, open; -1 while none. */
int cupti_session__dirfd(const struct cupti_session *s);
/* When the recording of the calls began (CLOCK_MONOTONIC ns,
 * cupti_session__begin): the agents' records from before are not this
 * recording's (0: every record of a private directory is). */
uint64_t cupti_session__start(const struct cupti_session *s);
/* True when the agents record only the processes given go files. */
bool cupti_session__listed(const struct cupti_session *s);
/* Gives pid's agent its go file (listed sessions; nothing otherwise).
 * Returns 0 or a negative errno. */
int cupti_session__admit(struct cupti_session *s, pid_t pid);
/* on: asks pid's agent, loaded into the running process (an attach), to
 * detach (its detach file); off: removes that file, before pid is attached
 * again. Run directory only. Returns 0 or a negative errno. */
int cupti_session__detach(struct cupti_session *s, pid_t pid, bool on);
/* In the child of -- CMD: the agent's environment (nothing while no spool
 * directory), GTRACE_NVTX_CAPTURE too when asked for. Returns 0 or a
 * negative errno. */
int cupti_session__setenv(const struct cupti_session *s);
/* Asks the agents to stop (private) or pause (run directory) after handing
 * over what they hold (once; nothing when s is NULL). */
void cupti_session__stop(struct cupti_session *s);
/* When cupti_session__stop asked, 0 before. */
uint64_t cupti_session__stop_ts(const struct cupti_session *s);
/* The end of the session: a private directory is emptied and removed; of the
 * run directory what said what this recorder wanted goes, and its lock (the
 * agents stay armed, paused, with their spool files). */
void cupti_session__end(struct cupti_session *s);
/* The agent library programs load (CUDA_INJECTION64_PATH). */
const char *cupti_session__lib(const struct cupti_session *s);
/* True when the spool directory is private to -- CMD. */
bool cupti_session__private(const struct cupti_session *s);
/* The pid a spool file's name (gtrace-cupti.PID.spool, or
 * gtrace-cupti.PID.N.spool) gives; 0 when name is no spool file's. */
pid_t cupti_session__spool_pid(const char *name);
/* Ends the session if that was not done, closes what it holds. */
void cupti_session__free(struct cupti_session *s);

#endif
