// SPDX-License-Identifier: MIT
/*
 * The flight recorder's triggers (gtrace-bpf daemon --trigger): conditions
 * seen in the records as they arrive — a synchronization that waited too
 * long, a call that failed, a process that died, a profiler range opening,
 * SIGUSR1, a GPU idle too long (found by daemon/daemon_cupti.c) — each
 * write an instant (GT_REC_TRIGGER) into the window, and --post later a
 * snapshot named after it. One snapshot per window: a trigger that fires
 * while one is pending, or within the window after the last, writes none
 * and is counted in the next one's record.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "format/api.h"
#include "format/records.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "daemon/daemon_int.h"

#define CUDA_ERROR_NOT_READY 600	/* what a query returns for "still running": no failure */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

void trigger__start(struct daemon *d)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	size_t i;

	for (i = 0; i < d->o->ntriggers; i++) {
		if (d->o->triggers[i].kind == GT_TRIG_SIGNAL)
			sigaction(SIGUSR1, &sa, NULL);
	}
}

static const struct daemon_trigger *wanted(const struct daemon *d, uint32_t kind)
{
	size_t i;

	for (i = 0; i < d->o->ntriggers; i++) {
		if (d->o->triggers[i].kind == kind)
			return &d->o->triggers[i];
	}
	return NULL;
}

static void fire(struct daemon *d, uint32_t kind, const struct gt_hdr *at, int32_t code, uint64_t wait)
{
	struct trigger_ctl *t = &d->trig;
	uint64_t now = clock__mono_ns();
	struct gt_trigger g;

	t->fired++;
	if (t->pending_kind || (t->last_snap && now - t->last_snap < d->o->window_ns)) {
		t->suppressed++;
		t->since_last++;
		return;
	}
	memset(&g, 0, sizeof(g));
	g.hdr.ts = at ? at->ts : now;
	g.hdr.pid = at ? at->pid : 0;
	g.hdr.tid = at ? at->tid : 0;
	g.hdr.api = at ? at->api : 0;
	g.hdr.type = GT_REC_TRIGGER;
	g.hdr.size = sizeof(g);
	g.kind = kind;
	g.code = code;
	g.wait_ns = wait;
	g.suppressed = t->since_last;
	t->since_last = 0;
	recorder__write(d->r, &g.hdr);
	t->pending_kind = kind;
	t->due = now + d->o->post_ns;
	t->attach_pid = 0;
	pr_info("trigger %s fired (pid %u%s): snapshot in %.1f s", gt_trigger_kind__name(kind),
		g.hdr.pid, kind == GT_TRIG_SYNC ? ", a long wait" : kind == GT_TRIG_ERROR ?
		", a failed call" : kind == GT_TRIG_GPU_IDLE ? ", its GPU idle" : "",
		d->o->post_ns / 1e9);
	/* --attach-cupti: the process' GPU side from now on, the snapshot
	 * once its agent detached */
	if (d->o->attach_cupti_ns && g.hdr.pid && kind != GT_TRIG_EXIT) {
		char why[320];
		int err = attach__request(d, (pid_t)g.hdr.pid, d->o->attach_cupti_ns, 0, why, sizeof(why));

		if (!err || err == -EALREADY)
			t->attach_pid = g.hdr.pid;
		else
			pr_warn("trigger %s: no attach to pid %u: %s", gt_trigger_kind__name(kind), g.hdr.pid, why);
	}
}

uint64_t trigger__gpu_idle_threshold(const struct daemon *d)
{
	const struct daemon_trigger *t = wanted(d, GT_TRIG_GPU_IDLE);

	return t ? t->threshold_ns : 0;
}

void trigger__on_gpu_idle(struct daemon *d, uint32_t pid, uint64_t ts, uint64_t idle_ns)
{
	struct gt_hdr at = { .ts = ts, .pid = pid };

	fire(d, GT_TRIG_GPU_IDLE, &at, 0, idle_ns);
}

/* Entry times of the sync calls in flight, by thread and api. */
static uint64_t sync_key(const struct gt_hdr *h)
{
	return ((uint64_t)h->tid << 16 | h->api) + 1;
}

void trigger__on_record(struct daemon *d, const struct gt_hdr *h)
{
	const struct daemon_trigger *t;
	uint64_t *entry;

	if (!d->o->ntriggers || !gt_rec__size_ok(h))
		return;
	switch (h->type) {
	case GT_REC_CALL:
	case GT_REC_CALL_STR:
		if (gt_api__class(h->api) == GT_CLS_SYNC && wanted(d, GT_TRIG_SYNC))
			u64map__set(&d->trig.sync_entry, sync_key(h), h->ts);
		if (h->api == GT_API_cuProfilerStart && wanted(d, GT_TRIG_PROFILER))
			fire(d, GT_TRIG_PROFILER, h, 0, 0);
		break;
	case GT_REC_RET:
	case GT_REC_RET_STR: {
		int32_t ret = h->type == GT_REC_RET ? ((const struct gt_ret *)h)->ret :
			      ((const struct gt_ret_str *)h)->ret;

		if ((t = wanted(d, GT_TRIG_SYNC)) && (entry = u64map__get(&d->trig.sync_entry, sync_key(h))) &&
		    *entry) {
			uint64_t wait = h->ts > *entry ? h->ts - *entry : 0;

			*entry = 0;
			if (wait > t->threshold_ns)
				fire(d, GT_TRIG_SYNC, h, ret, wait);
		}
		if (ret && !(ret == CUDA_ERROR_NOT_READY && gt_api__class(h->api) == GT_CLS_QUERY) &&
		    (t = wanted(d, GT_TRIG_ERROR)) && (t->code < 0 || t->code == ret))
			fire(d, GT_TRIG_ERROR, h, ret, 0);
		break;
	}
	case GT_REC_EXIT: {
		const struct gt_proc_evt *e = (const void *)h;

		if (e->exit_code && wanted(d, GT_TRIG_EXIT) && recorder__relevant(d->r, h->pid))
			fire(d, GT_TRIG_EXIT, h, e->exit_code, 0);
		break;
	}
	default:
		break;
	}
}

void trigger__poll(struct daemon *d)
{
	struct trigger_ctl *t = &d->trig;
	char name[32];
	uint64_t now;
	int err;

	if (usr1) {
		usr1 = 0;
		fire(d, GT_TRIG_SIGNAL, NULL, 0, 0);
	}
	if (!t->pending_kind || (now = clock__mono_ns()) < t->due)
		return;
	/* its attach: the snapshot holds what the agent recorded */
	if (t->attach_pid && attach__busy(d, (pid_t)t->attach_pid))
		return;
	t->attach_pid = 0;
	snprintf(name, sizeof(name), "%s_trigger", gt_trigger_kind__name(t->pending_kind));
	err = daemon__snapshot(d, name, 0, 0, NULL);
	if (err)
		pr_warn("trigger %s: the snapshot failed: %s", gt_trigger_kind__name(t->pending_kind),
			strerror(-err));
	t->pending_kind = 0;
	t->last_snap = now;
}

void trigger__free(struct daemon *d)
{
	u64map__free(&d->trig.sync_entry);
}
