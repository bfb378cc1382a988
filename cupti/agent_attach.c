// SPDX-License-Identifier: MIT
/*
 * The CUPTI agent in a process it was loaded into while running (record
 * --cupti=attach, the daemon's attach: gt_agent_attach): it starts as at
 * cuInit, armed in the recorder's run directory; when that recording is done
 * with it, it detaches (CUPTI finalized in the exit callback of the
 * program's next CUDA call) and stays inert until a later attach starts it
 * again.  agent.c switches CUPTI on and off and runs the writer; this file
 * decides when the agent detaches and does it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "agent_ctl.h"
#include "agent_int.h"
#include "gtrace_cupti.h"

#define GT_EXPORT __attribute__((visibility("default")))

/* The detach, in the exit callback of a CUDA call of the program's (the
 * driver and runtime domains are enabled only while it is wanted): CUPTI
 * torn down where no other call of this thread is inside it, as CUPTI
 * advises.  One thread does it; the writer waits for it (bounded). */
void finalize_here(const CUpti_CallbackData *cd)
{
	int want = FIN_WANT;

	if (!cd || cd->callbackSite != CUPTI_API_EXIT || atomic_load_explicit(&g.forked, memory_order_relaxed) ||
	    !atomic_compare_exchange_strong(&g.fin, &want, FIN_DOING))
		return;
	cuptiFinalize();
	pthread_mutex_lock(&g.lock);
	atomic_store(&g.fin, FIN_DONE);
	pthread_cond_broadcast(&g.wake);
	pthread_mutex_unlock(&g.lock);
}

/* Attached: the recorder that loaded the agent is done with the process
 * (it ended, paused, or is gone: SIGKILL leaves its lock) or never admitted
 * it: what was recorded is handed over, then CUPTI is finalized in the
 * exit callback of the program's next CUDA call, so that the process runs
 * on as before the attach.  The writer waits FIN_WAIT_MS for that call; a
 * process that makes none by then is left with the one callback armed, at
 * no cost until its next call (finalizing from this thread could tear CUPTI
 * down under a call another thread is blocked in).  The agent's code stays
 * mapped: CUPTI may hold its callbacks until it is finalized. */
void detach(void)
{
	struct timespec until;
	uint64_t end;
	CUptiResult r;

	if (atomic_load(&g.state) == ST_ON)
		end_recording(GT_CUPTI_ST_FINAL | GT_CUPTI_ST_DETACHED);
	if (atomic_load(&g.graphs_seen) || g.ctl.detach_idle) {
		/* the graphs CUPTI instrumented would replay into memory that
		 * cuptiFinalize frees (or the recorder asked for it: a later
		 * attach is then quick): CUPTI stays, its activity off, without
		 * our subscriber (a profiler started later can have it) */
		unsubscribe();
		if (atomic_load(&g.graphs_seen) && !g.graphs_said) {
			say("pid %d ran CUDA graphs while attached: CUPTI is left loaded and idle, not finalized "
			    "(the graphs it instrumented would replay into memory a finalize frees)", (int)g.pid);
			g.graphs_said = true;
		}
		return;
	}
	if (!g.subscribed) {
		/* never recorded (not admitted): CUPTI started all the same
		 * when the attach asked whether another client holds it */
		r = cuptiSubscribe(&g.sub, on_callback, NULL);
		if (r != CUPTI_SUCCESS)
			return;	/* another client holds CUPTI now: it is theirs */
		g.subscribed = true;
	}
	atomic_store(&g.fin, FIN_WANT);
	r = cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API);
	if (r == CUPTI_SUCCESS)
		cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	else
		r = cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	if (r != CUPTI_SUCCESS) {
		int want = FIN_WANT;

		/* no callback to finalize in: CUPTI stays, idle, without us */
		if (atomic_compare_exchange_strong(&g.fin, &want, FIN_NONE))
			unsubscribe();
		say("failed to watch CUDA calls to detach from pid %d: %s; CUPTI stays loaded, idle",
		    (int)g.pid, cupti_err(r));
		return;
	}
	end = mono_ns() + FIN_WAIT_MS * 1000000ull;
	until.tv_sec = (time_t)(end / 1000000000ull);
	until.tv_nsec = (long)(end % 1000000000ull);
	pthread_mutex_lock(&g.lock);
	while (atomic_load(&g.fin) != FIN_DONE && !atomic_load(&g.exiting) &&
	       pthread_cond_timedwait(&g.wake, &g.lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&g.lock);
}

/* Attached: whether the agent detaches now.  want: what the recorder
 * wants.  It does when its detach file appears, when a recorder that had it
 * record wants no more, and when one that loaded it never admits it (it
 * failed, or died first) within ADMIT_MS. */
bool detach_now(enum gt_want want)
{
	if (!g.attached)
		return false;
	/* a daemon's attach for a while: its session goes on */
	if (gt_ctl__detach_asked(&g.ctl))
		return true;
	if (want == GT_WANT_RECORD)
		return false;
	if (g.attach_recorded)
		return want != GT_WANT_WAIT;
	return mono_ns() - g.attach_ns > ADMIT_MS * 1000000ull;
}

static void CUPTIAPI no_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

/* An agent that detached, made ready to start again: its writer joined,
 * CUPTI's finalize done or called off.  False when it cannot be (a
 * finalize under way did not end). */
static bool rearm(void)
{
	int want = FIN_WANT;

	if (g.writer_started) {
		pthread_join(g.writer, NULL);	/* it ended: the state is ST_DONE */
		g.writer_started = false;
	}
	if (atomic_compare_exchange_strong(&g.fin, &want, FIN_NONE)) {
		/* no CUDA call came since: CUPTI still runs with our
		 * subscriber, which records again */
		cuptiEnableDomain(0, g.sub, CUPTI_CB_DOMAIN_DRIVER_API);
		cuptiEnableDomain(0, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	} else {
		for (int i = 0; i < FIN_WAIT_MS && atomic_load(&g.fin) == FIN_DOING; i++)
			usleep(1000);
		if (atomic_load(&g.fin) == FIN_DOING)
			return false;
		if (atomic_load(&g.fin) == FIN_DONE) {
			/* CUPTI is gone: its callbacks and subscriber anew */
			g.subscribed = false;
			g.cupti_ready = false;
		}
		atomic_store(&g.fin, FIN_NONE);
	}
	g.write_failed = g.conflict_said = g.create_said = false;
	g.attach_recorded = false;
	atomic_store(&g.state, ST_OFF);
	return true;
}

/* Called in a running process by the recorder that loaded the agent there
 * (record/inject), dir its run directory's spool directory: the agent
 * starts as at cuInit, armed there, for the recorder to admit, and detaches
 * when that recorder is done (detach()); a later attach starts it again.
 * 1: started (or was already, at cuInit); 0: it cannot (said on stderr);
 * -1: another CUPTI subscriber holds CUPTI (torch.profiler, Kineto, nsys):
 * nothing started; 2: attached for another recording that is not done. */
GT_EXPORT int gt_agent_attach(const char *dir)
{
	CUpti_SubscriberHandle probe;
	struct gt_ctl ctl;
	CUptiResult r;
	bool again = atomic_load(&g.initialized);

	if (again && (!g.attached || atomic_load(&g.forked)))
		return g.writer_started ? 1 : 0;	/* started at cuInit */
	if (again && g.writer_started) {
		/* a detach may be under way (the last recorder just ended):
		 * it takes at most FIN_WAIT_MS */
		for (int i = 0; i < FIN_WAIT_MS + 1000 && atomic_load(&g.state) != ST_DONE; i++)
			usleep(1000);
		if (atomic_load(&g.state) != ST_DONE)
			return 2;
	}
	if (gt_ctl__init_dir(&ctl, getpid(), dir) == GT_CTL_NONE)
		return 0;
	if (!again || atomic_load(&g.fin) == FIN_DONE || !g.subscribed) {
		/* CUPTI takes our clock from its start */
		setup_clock();
		r = cuptiSubscribe(&probe, no_callback, NULL);
		if (is_conflict(r))
			return -1;
		if (r == CUPTI_SUCCESS)
			cuptiUnsubscribe(probe);
	}
	if (again ? !rearm() : atomic_exchange(&g.initialized, 1))
		return 0;
	g.ctl = ctl;
	g.attached = true;
	g.attach_ns = mono_ns();
	start();
	return g.writer_started ? 1 : 0;
}
