/* SPDX-License-Identifier: MIT */
/*
 * The processes `-p PID...` traces, and the ones they start: the recording
 * ends by itself once every one has exited, as `perf record -p` does. A
 * pidfd becomes readable when its process exits, zombie or not, which
 * kill(pid, 0) cannot tell for a process that is not our child.
 */
#ifndef GTRACE_PID_WATCH_H
#define GTRACE_PID_WATCH_H

#include <stddef.h>
#include <sys/types.h>

struct pid_watch;

/* Returns NULL when out of memory. */
struct pid_watch *pid_watch__new(void);
/* Watches pid. Returns 0, -ESRCH when it has exited already, or -errno. */
int pid_watch__add(struct pid_watch *w, pid_t pid);
/* How many watched processes are still running (without blocking). */
size_t pid_watch__alive(struct pid_watch *w);
void pid_watch__free(struct pid_watch *w);

#endif
