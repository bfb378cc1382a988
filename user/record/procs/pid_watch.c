// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/vec.h"
#include "record/procs/pid_watch.h"
#include "record/procs/procfs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434	/* the same number on every architecture */
#endif

struct watched {
	pid_t pid;		/* the process */
	int fd;			/* its pidfd; -1 without pidfds (before Linux 5.3) */
};

struct pid_watch {
	struct watched *v;	/* the processes still running at the last look */
	size_t n;		/* entries of v */
	size_t cap;		/* entries allocated */
};

struct pid_watch *pid_watch__new(void)
{
	return calloc(1, sizeof(struct pid_watch));
}

/* Without pidfds: /proc/PID/stat's state, where Z and X are an exit. */
static bool proc_alive(pid_t pid)
{
	char buf[512];
	const char *p = procfs__stat_fields(pid, buf, sizeof(buf));

	return p && p[1] != 'Z' && p[1] != 'X';
}

int pid_watch__add(struct pid_watch *w, pid_t pid)
{
	struct watched e = { .pid = pid, .fd = -1 };
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->v[i].pid == pid)
			return 0;
	}
	e.fd = syscall(SYS_pidfd_open, pid, 0);
	if (e.fd < 0) {
		if (errno != ENOSYS)	/* ESRCH: gone; EINVAL: a thread, not a process */
			return -errno;
		if (!proc_alive(pid))
			return -ESRCH;
	}
	if (vec__reserve(&w->v, &w->cap, w->n, 1, 8)) {
		if (e.fd >= 0)
			close(e.fd);
		return -ENOMEM;
	}
	w->v[w->n++] = e;
	return 0;
}

size_t pid_watch__alive(struct pid_watch *w)
{
	size_t i = 0;

	while (i < w->n) {
		struct watched *e = &w->v[i];
		struct pollfd p = { .fd = e->fd, .events = POLLIN };
		/* an interrupted poll says nothing: still running */
		bool alive = e->fd >= 0 ? poll(&p, 1, 0) != 1 : proc_alive(e->pid);

		if (alive) {
			i++;
			continue;
		}
		if (e->fd >= 0)
			close(e->fd);
		w->v[i] = w->v[--w->n];
	}
	return w->n;
}

void pid_watch__free(struct pid_watch *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n; i++) {
		if (w->v[i].fd >= 0)
			close(w->v[i].fd);
	}
	free(w->v);
	free(w);
}
