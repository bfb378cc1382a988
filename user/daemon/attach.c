// SPDX-License-Identifier: MIT
/*
 * The daemon's CUPTI attach (daemon --cupti): the agent loaded into a
 * running process for a while, on demand (`gtrace-bpf attach -p PID -d
 * TIME`, the control socket's "attach") or when a trigger fires for a
 * process (--attach-cupti TIME).  The load holds the process for a moment
 * (its system call, dlopen, CUPTI's start), so it runs on a thread of its
 * own, one at a time, never in the recording loop; the loop takes its
 * outcome (the GT_REC_CUPTI_ATTACH record, the client's reply) and, when the
 * time is up, asks the agent to detach (its detach file: the daemon's
 * session goes on).  The agent's records reach the window as every armed
 * agent's do (daemon_cupti.c); it detaches at the daemon's end too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "format/records.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "record/cupti_session.h"
#include "daemon/control.h"
#include "daemon/daemon_int.h"

#define ATTACH_MAX	16		/* processes attached at once, at most */
#define SETTLE_NS	1500000000ull	/* after a detach: the agent hands over (a poll, a
					 * flush, its counters) before a snapshot of it */

struct attached {
	pid_t pid;
	uint64_t until;			/* when it is asked to detach */
};

struct daemon_attach {
	pthread_t th;
	bool running;			/* th runs (or ended, not joined) */
	_Atomic int done;		/* th ended: job.out holds the outcome */
	struct {
		pid_t pid;
		uint64_t dur_ns;
		uint64_t client;	/* 0: a trigger's */
		struct cupti_attach_out out;
	} job;
	struct attached on[ATTACH_MAX];
	size_t non;
	uint64_t settle_until;		/* the last detach's agent has handed over by then */
	uint64_t attached, refused;	/* attaches that took, that did not */
};

static void *attach_main(void *arg)
{
	struct daemon *d = arg;

	recorder__cupti_attach_pid(d->r, d->att->job.pid, &d->att->job.out);
	atomic_store(&d->att->done, 1);
	return NULL;
}

static struct attached *find(struct daemon_attach *a, pid_t pid)
{
	for (size_t i = 0; i < a->non; i++)
		if (a->on[i].pid == pid)
			return &a->on[i];
	return NULL;
}

int attach__request(struct daemon *d, pid_t pid, uint64_t dur_ns, uint64_t client, char *why, size_t len)
{
	struct cupti_session *s = recorder__cupti(d->r);
	struct daemon_attach *a = d->att;
	struct attached *on;
	sigset_t all, old;
	int err;

	if (!s || !cupti_session__dir(s)) {
		snprintf(why, len, "the daemon runs without --cupti: no agent to attach");
		return -ENOTSUP;
	}
	if (!a && !(a = d->att = calloc(1, sizeof(*a)))) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	if (pid <= 0 || kill(pid, 0)) {
		snprintf(why, len, "no process %d", (int)pid);
		return -ESRCH;
	}
	if ((on = find(a, pid))) {
		/* attached already: for longer if asked */
		uint64_t until = clock__mono_ns() + dur_ns;

		if (until > on->until)
			on->until = until;
		snprintf(why, len, "pid %d is attached already: until %.1f s from now", (int)pid,
			 (on->until - clock__mono_ns()) / 1e9);
		return -EALREADY;
	}
	if (a->running) {
		snprintf(why, len, "an attach to pid %d is under way; try again in a moment", (int)a->job.pid);
		return -EBUSY;
	}
	if (a->non == ATTACH_MAX) {
		snprintf(why, len, "%d processes are attached already", ATTACH_MAX);
		return -EBUSY;
	}
	/* a detach file of an earlier attach would detach it at once */
	cupti_session__detach(s, pid, false);
	a->job.pid = pid;
	a->job.dur_ns = dur_ns;
	a->job.client = client;
	atomic_store(&a->done, 0);
	/* signals stay with the recording loop */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&a->th, NULL, attach_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		snprintf(why, len, "cannot start a thread: %s", strerror(err));
		return -err;
	}
	a->running = true;
	return 0;
}

/* The thread's outcome: into the window, the log, the client. */
static void finish_job(struct daemon *d)
{
	struct daemon_attach *a = d->att;
	const struct cupti_attach_out *o = &a->job.out;
	char reply[512];
	size_t n;

	pthread_join(a->th, NULL);
	a->running = false;
	recorder__write_attach(d->r, a->job.pid, o);
	if (o->result == GT_ATTACH_OK && a->non < ATTACH_MAX) {
		a->attached++;
		a->on[a->non++] = (struct attached){ .pid = a->job.pid, .until = clock__mono_ns() + a->job.dur_ns };
		const char *note = recorder__attach_note(o);
		char th[160];

		pr_info("attach: the agent is in pid %d (held %.1f ms, %s): its GPU side is recorded for %.1f s%s%s",
			(int)a->job.pid, o->held_ns / 1e6, recorder__attach_thread(o, th, sizeof(th)),
			a->job.dur_ns / 1e9, note ? "; " : "", note ? note : "");
		n = daemon__reply(reply, sizeof(reply), "ok\npid %d attached (held %.1f ms): its GPU side goes "
				  "into the window for %.1f s, then it detaches\n", (int)a->job.pid,
				  o->held_ns / 1e6, a->job.dur_ns / 1e9);
	} else {
		a->refused++;
		pr_warn("attach: %s%s", o->why, recorder__attach_failed_tail(o));
		n = daemon__reply(reply, sizeof(reply), "error: %s\n", o->why);
	}
	if (a->job.client && control__reply(d->ctl, a->job.client, reply, n))
		pr_verbose("attach: its client hung up before the reply");
}

void attach__poll(struct daemon *d)
{
	struct daemon_attach *a = d->att;
	uint64_t now;

	if (!a)
		return;
	if (a->running && atomic_load(&a->done))
		finish_job(d);
	now = clock__mono_ns();
	for (size_t i = 0; i < a->non;) {
		if (now < a->on[i].until && !kill(a->on[i].pid, 0)) {
			i++;
			continue;
		}
		if (!kill(a->on[i].pid, 0)) {
			cupti_session__detach(recorder__cupti(d->r), a->on[i].pid, true);
			a->settle_until = now + SETTLE_NS;
			pr_info("attach: pid %d detaches", (int)a->on[i].pid);
		}
		a->on[i] = a->on[--a->non];
	}
}

bool attach__busy(const struct daemon *d, pid_t pid)
{
	const struct daemon_attach *a = d->att;

	if (!a)
		return false;
	if (a->running && a->job.pid == pid)
		return true;
	for (size_t i = 0; i < a->non; i++)
		if (a->on[i].pid == pid)
			return true;
	return clock__mono_ns() < a->settle_until;
}

size_t attach__status(const struct daemon *d, char *buf, size_t len)
{
	const struct daemon_attach *a = d->att;

	if (!a)
		return 0;
	return daemon__reply(buf, len, "attach_attached %llu\nattach_refused %llu\nattach_now %zu\n",
			     (unsigned long long)a->attached, (unsigned long long)a->refused, a->non);
}

void attach__free(struct daemon *d)
{
	struct daemon_attach *a = d->att;

	if (!a)
		return;
	/* an attach under way ends within its bounds (10 s a step) */
	if (a->running)
		finish_job(d);
	/* the session's end detaches every attached agent too; the files say
	 * it at once */
	for (size_t i = 0; i < a->non; i++)
		cupti_session__detach(recorder__cupti(d->r), a->on[i].pid, true);
	free(a);
	d->att = NULL;
}
