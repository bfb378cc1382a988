// SPDX-License-Identifier: MIT
/*
 * Capture control while recording (--mode light, -c, --capture-range-end):
 * light mode's full-capture windows, the hot probes following the capture
 * ranges, and the stop once enough ranges have closed. The ranges
 * themselves are kept in BPF per process (bpf/cuda.bpf.c); this side sees
 * their records and decides what to attach and when to stop.
 *
 * A uprobe hit costs its trap whatever the program does, so light mode
 * keeps the probes of the hot calls (gt_api__hot: launches and the like)
 * detached outside windows and ranges rather than filtering in BPF. The
 * hot_on flag in the object's bss bounds what is recorded exactly: set
 * after the attach and its timestamp, cleared before the detach. The kernel
 * lookups' probes, which serve names only, come off for good once the
 * names are known to come from the driver's structures (lookups_tick).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cuda.skel.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/probes/cuda_probes.h"
#include "record/procs/kname_recovery.h"
#include "record/recorder.h"

static void capture_write(struct recorder *r, uint16_t type, uint32_t kind, uint32_t source,
			  uint32_t index, uint32_t flags, uint64_t ts, uint64_t latency,
			  uint32_t pid, uint32_t tid)
{
	struct gt_capture c;

	memset(&c, 0, sizeof(c));
	c.hdr.ts = ts;
	c.hdr.pid = pid;
	c.hdr.tid = tid;
	c.hdr.type = type;
	c.hdr.size = sizeof(c);
	c.kind = kind;
	c.source = source;
	c.index = index;
	c.flags = flags;
	c.latency_ns = latency;
	recorder__write(r, &c.hdr);
}

static void note_latency(struct capture_lat *l, uint64_t ns)
{
	l->n++;
	l->sum += ns;
	if (ns > l->max)
		l->max = ns;
}

/* Attaches the hot probes and opens their gate. Returns the timestamp from
 * which every hot call is recorded; *latency = the attach time. */
static uint64_t hot_on(struct recorder *r, uint64_t *latency)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), live;
	int err = cuda_probes__set_hot(r->probes, true);

	live = now_ns(CLOCK_MONOTONIC);
	if (err && !r->cap.hot_warned) {
		pr_warn("some hot-call probes could not be attached: those calls are missing from "
			"windows and ranges (-v tells which)");
		r->cap.hot_warned = true;
	}
	/* the timestamp first: a record the gate lets through is later */
	__atomic_store_n(&r->skel->bss->hot_on, 1, __ATOMIC_SEQ_CST);
	*latency = live - t0;
	note_latency(&r->cap.attach, *latency);
	return live;
}

/* The close record of the last detach, once its thread says how long the
 * detach took (wait: block until then). */
static void flush_close(struct recorder *r, bool wait)
{
	struct capture_ctl *c = &r->cap;
	uint64_t ns;

	if (!c->pend_kind || !cuda_probes__detach_done(r->probes, wait, &ns))
		return;
	note_latency(&c->detach, ns);
	capture_write(r, GT_REC_CAPTURE, c->pend_kind, c->pend_source, c->pend_index, 0, c->pend_ts, ns,
		      0, 0);
	c->pend_kind = 0;
}

/* Closes the gate and detaches; the record of kind (at the gate's closing,
 * with the detach time) is written once the detach is done. */
static void hot_off(struct recorder *r, uint32_t kind, uint32_t source, uint32_t index)
{
	struct capture_ctl *c = &r->cap;

	flush_close(r, true);
	__atomic_store_n(&r->skel->bss->hot_on, 0, __ATOMIC_SEQ_CST);
	c->pend_ts = now_ns(CLOCK_MONOTONIC);
	c->pend_kind = kind;
	c->pend_source = source;
	c->pend_index = index;
	cuda_probes__set_hot(r->probes, false);
}

void capture__start(struct recorder *r, uint64_t now)
{
	const struct record_opts *o = r->o;

	r->cap.period_ns = o->period_ns;
	if (o->light && o->capture_range == RECORD_RANGE_NONE && o->period_ns)
		r->cap.next_window = now;	/* the first window at once */
}

void recorder__set_period(struct recorder *r, uint64_t period_ns)
{
	struct capture_ctl *c = &r->cap;

	if (!c->next_window || !period_ns)
		return;
	/* the next window counted from the last one's opening */
	c->next_window = c->last_open + period_ns;
	c->period_ns = period_ns;
}

static void window_open(struct recorder *r)
{
	uint64_t lat, ts = hot_on(r, &lat);

	r->cap.windows++;
	r->cap.last_open = ts;
	r->cap.window_end = ts + r->o->window_ns;
	capture_write(r, GT_REC_CAPTURE, GT_CAP_WINDOW_OPEN, GT_CAPSRC_WINDOW, r->cap.windows, 0, ts,
		      lat, 0, 0);
	pr_debug("window %u open (attach %.3f ms)", r->cap.windows, lat / 1e6);
}

static void window_close(struct recorder *r)
{
	r->cap.window_end = 0;
	hot_off(r, GT_CAP_WINDOW_CLOSE, GT_CAPSRC_WINDOW, r->cap.windows);
}

/* The kernel lookups' probes dropped once LOOKUP_CHECKS names read from
 * the driver's function structures held (kernel_names__checked: matched the
 * programs' own lookups, or were symbol names where the program looked its
 * kernels up before the recording), none failing: from then on names come
 * from those structures alone; the record says when, once the probes are
 * gone (wait: block until then). */
#define LOOKUP_CHECKS 3

static void lookups_tick(struct recorder *r, bool wait)
{
	struct capture_ctl *c = &r->cap;
	uint64_t checked, ns;

	if (!r->probes || r->o->keep_lookups)
		return;
	if (!c->lookups_ts) {
		checked = r->names ? kernel_names__checked(r->names) : 0;
		if (checked < LOOKUP_CHECKS || cuda_probes__drop_lookups(r->probes))
			return;
		c->lookups_ts = now_ns(CLOCK_MONOTONIC);
		c->lookups_checked = checked > UINT32_MAX ? UINT32_MAX : (uint32_t)checked;
	}
	if (c->lookups_written || !cuda_probes__lookups_done(r->probes, wait, &ns))
		return;
	capture_write(r, GT_REC_CAPTURE, GT_CAP_LOOKUPS_OFF, GT_CAPSRC_NONE, c->lookups_checked, 0,
		      c->lookups_ts, ns, 0, 0);
	c->lookups_written = true;
	pr_verbose("kernel lookups no longer recorded: their probes detached in %.2f ms (%u kernel "
		   "names read from the driver's function structures held)", ns / 1e6,
		   c->lookups_checked);
}

uint64_t capture__tick(struct recorder *r, uint64_t now)
{
	struct capture_ctl *c = &r->cap;

	lookups_tick(r, false);
	flush_close(r, false);
	if (c->window_end && now >= c->window_end)
		window_close(r);
	if (c->next_window && now >= c->next_window && !c->window_end) {
		window_open(r);
		c->next_window += c->period_ns;
		if (c->next_window <= now)	/* fell behind: skip, never stack windows */
			c->next_window = now + c->period_ns;
	}
	if (c->window_end)
		return c->window_end;
	return c->next_window;
}

static struct open_range *find_open(struct capture_ctl *c, uint32_t pid)
{
	size_t i;

	for (i = 0; i < c->nopen; i++) {
		if (c->open[i].pid == pid)
			return &c->open[i];
	}
	return NULL;
}

/* A GT_REC_RANGE from BPF (already written to the trace). */
void capture__on_range(struct recorder *r, const struct gt_capture *e)
{
	struct capture_ctl *c = &r->cap;
	struct open_range *o;
	uint64_t lat, ts;

	if (e->kind == GT_CAP_RANGE_OPEN) {
		c->opened++;
		if (e->flags & GT_CAP_F_REFUSED) {
			c->refused++;
			return;
		}
		if (find_open(c, e->hdr.pid) ||
		    vec__reserve(&c->open, &c->open_cap, c->nopen, 1, 4))
			return;
		c->open[c->nopen++] = (struct open_range){ e->hdr.pid, e->hdr.tid, e->index, e->source };
		pr_verbose("range %u opened in pid %u", e->index, e->hdr.pid);
		if (r->o->light && c->nopen == 1) {
			ts = hot_on(r, &lat);
			capture_write(r, GT_REC_CAPTURE, GT_CAP_HOT_LIVE, e->source, e->index, 0, ts, lat,
				      0, 0);
		}
		return;
	}
	if (e->kind != GT_CAP_RANGE_CLOSE || !(o = find_open(c, e->hdr.pid)))
		return;
	*o = c->open[--c->nopen];
	c->closed++;
	pr_verbose("range %u closed in pid %u", e->index, e->hdr.pid);
	if (r->o->light && !c->nopen)
		hot_off(r, GT_CAP_HOT_OFF, e->source, e->index);
	if (r->o->range_max && c->closed >= r->o->range_max && !c->stop) {
		c->stop = true;
		pr_info("capture range %u closed: %s", c->closed,
			r->o->range_max == 1 ? "stopping (--capture-range-end=stop)" :
			"stopping (--capture-range-end=repeat:N reached)");
	}
}

void capture__finish(struct recorder *r)
{
	struct capture_ctl *c = &r->cap;
	uint64_t ts = now_ns(CLOCK_MONOTONIC);
	size_t i;

	if (c->window_end)
		window_close(r);
	/* ranges the recording ends inside: closed here, marked as cut */
	for (i = 0; i < c->nopen; i++)
		capture_write(r, GT_REC_RANGE, GT_CAP_RANGE_CLOSE, c->open[i].source, c->open[i].index,
			      GT_CAP_F_CUT, ts, 0, c->open[i].pid, c->open[i].tid);
	if (r->o->light && c->nopen)
		hot_off(r, GT_CAP_HOT_OFF, c->open[0].source, c->open[0].index);
	flush_close(r, true);
	if (c->lookups_ts)
		lookups_tick(r, true);
	if (r->o->capture_range == RECORD_RANGE_PROFILER && !c->opened)
		pr_info("no capture range opened (cuProfilerStart was never called): the trace holds 0 "
			"ranges");
	else if (r->o->capture_range == RECORD_RANGE_NVTX && !c->opened)
		pr_info("no capture range opened (no NVTX range %s was seen): the trace holds 0 ranges",
			r->o->nvtx_capture);
	else if (r->o->capture_range != RECORD_RANGE_NONE)
		pr_info("%u capture range%s recorded%s%s", c->opened - c->refused,
			c->opened - c->refused == 1 ? "" : "s", c->nopen ? " (the last cut by the stop)" : "",
			c->refused ? "; later ones not (--capture-range-end)" : "");
	if (c->attach.n) {
		uint32_t waits = cuda_probes__detach_waits(r->probes);
		char w[80] = "";

		if (waits)
			snprintf(w, sizeof(w), "; %u attach%s waited for the detach before", waits,
				 waits == 1 ? "" : "es");
		pr_info("light mode: %u window%s; the hot probes attached %llu time%s, in %.2f ms on "
			"average (max %.2f), detached in %.2f ms (max %.2f)%s", c->windows,
			c->windows == 1 ? "" : "s", (unsigned long long)c->attach.n,
			c->attach.n == 1 ? "" : "s", c->attach.sum / 1e6 / c->attach.n, c->attach.max / 1e6,
			c->detach.n ? c->detach.sum / 1e6 / c->detach.n : 0.0, c->detach.max / 1e6, w);
	}
	c->nopen = 0;
	free(c->open);
	c->open = NULL;
}
