/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of --cupti: finds the agent library, owns the spool
 * directory its agents write to (a private one for -- CMD, named in the
 * child's environment; GTRACE_CUPTI_RUN_DIR, locked, for --all and -p), asks
 * the agents to stop, waits for them, and lists this recording's spool
 * files for the merge, which is the caller's: record/ does not merge
 * (contract: cupti/gtrace_cupti.h).  For the daemon (live) the run directory
 * asks the agents for live spooling, and its spool files are the daemon's to
 * read as they grow (record/daemon_cupti.c).
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
				 * else GTRACE_CUPTI_RUN_DIR where any program can join */
	const char *nvtx_capture;	/* --nvtx-capture NAME[@DOMAIN] for the agents
					 * (GTRACE_NVTX_CAPTURE), NULL = none; the caller's,
					 * kept for the session */
	bool live;			/* gtrace-bpf daemon: the run directory holds
					 * GT_CUPTI_LIVE_FILE while it is ours, and spool
					 * files found in it are taken over, not left out */
};

/* Finds the agent library. Returns 0 or a negative errno with one error
 * line printed. */
int cupti_session__new(const struct cupti_session_opts *o, struct cupti_session **out);
/* Creates (private) or opens and locks (run directory) the spool directory.
 * Returns 0 or a negative errno with one error line printed. */
int cupti_session__open_dir(struct cupti_session *s);
/* The spool directory; NULL while none (or s is NULL). */
const char *cupti_session__dir(const struct cupti_session *s);
/* In the child of -- CMD: the agent's environment (nothing while no spool
 * directory), GTRACE_NVTX_CAPTURE too when asked for. Returns 0 or a
 * negative errno. */
int cupti_session__setenv(const struct cupti_session *s);
/* Asks the agents to flush and stop (once; nothing when s is NULL). */
void cupti_session__stop(struct cupti_session *s);
/* After the recording: stops and waits for the agents, then lists what the
 * merge takes in *files (malloc'd paths, *nfiles of them; free each and the
 * array): a private directory itself, else this recording's spool files in
 * the run directory. Returns 0 or a negative errno with one error line. */
int cupti_session__spools(struct cupti_session *s, char ***files, size_t *nfiles);
/* How many spool files this recording's agents wrote (after
 * cupti_session__spools()): 0 means no agent ever loaded. */
size_t cupti_session__nspools(const struct cupti_session *s);
/* The agent library programs load (CUDA_INJECTION64_PATH). */
const char *cupti_session__lib(const struct cupti_session *s);
/* True when the spool directory is private to -- CMD (every spool record in
 * it is the recording's). */
bool cupti_session__private(const struct cupti_session *s);
/* Empties and removes the spool directory. */
void cupti_session__remove_dir(struct cupti_session *s);
/* The pid a spool file's name (gtrace-cupti.PID.spool) gives; 0 when name
 * is no spool file's. */
pid_t cupti_session__spool_pid(const char *name);
/* Closes the run directory (unlocks it); the spool directory stays. */
void cupti_session__free(struct cupti_session *s);

#endif
