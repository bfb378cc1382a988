/* SPDX-License-Identifier: MIT */
/*
 * `-- CMD` of record and census: CMD is forked at once but held before its
 * exec until the caller has its probes in place and its pid in the filter,
 * so that none of its calls are missed; then released, polled or waited for.
 */
#ifndef GTRACE_CHILD_H
#define GTRACE_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child;

/* Runs in the child just before the exec (e.g. the CUPTI agent's
 * environment); non-zero: the child exits 127 without running CMD (the
 * function prints why). */
typedef int (*child_setup_fn)(void *ctx);

/* Forks cmd (NULL-terminated, found on PATH), held until child__release().
 * setup may be NULL. Returns 0 or a negative errno (nothing started). */
int child__start(char *const *cmd, child_setup_fn setup, void *ctx, struct child **out);
pid_t child__pid(const struct child *c);
/* Lets CMD run. Returns 0 or a negative errno. */
int child__release(struct child *c);
/* True once CMD has exited (without blocking). */
bool child__poll(struct child *c);
/* Waits for CMD to exit; returns its status (child__status). */
int child__wait(struct child *c);
/* CMD's exit status, 128+N if signal N ended it; valid once it exited. */
int child__status(const struct child *c);
/* A child never released exits 127 without running CMD and is reaped; a
 * released one is left to run. */
void child__free(struct child *c);

#endif
