// SPDX-License-Identifier: MIT
/*
 * The recording while it runs: -- CMD's start, the poll loop and its stops,
 * the waits for -- CMD after a stop and before --delay ends. record.c sets
 * up what this runs on and finishes the trace.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "format/trace_file.h"
#include "lib/log.h"
#include "record/child.h"
#include "record/procs/pid_watch.h"
#include "record/probes/hold.h"
#include "record/recorder.h"

int recorder__start_child(struct recorder *r)
{
	uint8_t one = 1;
	uint32_t pid;
	int err;

	err = child__start(r->o->cmd, child_setup, r, &r->child);
	if (err) {
		pr_err("failed to start %s: %s", r->o->cmd[0], strerror(-err));
		return err;
	}
	pid = child__pid(r->child);
	err = bpf_map__update_elem(r->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY);
	if (err)
		pr_err("failed to add pid %u to the filter: %s", pid, strerror(-err));
	return err;
}

/* True once -- CMD has exited. */
bool recorder__child_done(struct recorder *r)
{
	return r->child && child__poll(r->child);
}

/* True once every process -p traces has exited. A process forks before it
 * exits: the ring buffer is drained again before the last look, so that a
 * child it started just before is watched too. */
static bool pids_done(struct recorder *r)
{
	if (!r->watch || pid_watch__alive(r->watch))
		return false;
	ring_buffer__consume(r->rb);
	return !pid_watch__alive(r->watch);
}

int recorder__run_loop(struct recorder *r)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC), next_tick = start + TICK_NS;
	uint64_t next_rescan = start + RESCAN_NS, last_events = 0;
	/* -d counts from the start: the delay was part of it */
	uint64_t end = r->o->duration > 0 ?
		start + (uint64_t)((r->o->duration - r->o->delay) * 1e9) : 0;
	bool tty = isatty(STDERR_FILENO);
	uint64_t wake;
	int err, timeout = POLL_MS;

	capture__start(r, start);
	while (!stop_requests && !r->write_err && !r->cap.stop) {
		EXT_CALL(r, before_poll);
		err = ring_buffer__poll(r->rb, timeout);
		if (err < 0 && err != -EINTR) {
			pr_err("failed to poll the ring buffer: %s", strerror(-err));
			return err;
		}
		ring_buffer__consume(r->rb);
		/* a process is held only while the loop runs to continue it */
		hold__heartbeat(r->hold, now_ns(CLOCK_MONOTONIC));
		EXT_CALL(r, drained);
		recorder__gpum_drain(r);
		recorder__cupti_poll(r);
		EXT_CALL(r, serve);
		if (r->o->max_size && trace_writer__bytes(r->w) >= r->o->max_size) {
			r->untraced_stop = true;
			pr_info("the trace reached --max-size (%llu bytes); stopping",
				(unsigned long long)r->o->max_size);
			break;
		}
		if (recorder__child_done(r))
			break;
		if (pids_done(r)) {
			pr_info("every traced process has exited; stopping");
			break;
		}
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (r->next_clock && now >= r->next_clock)
			recorder__clock(r, GT_CLOCK_PERIODIC);
		if (end && now >= end) {
			/* -d bounds the trace: -- CMD runs on untraced after it */
			r->untraced_stop = true;
			pr_info("--duration reached; stopping");
			break;
		}
		/* the stage (a budget) weighs a window period before the next one opens */
		EXT_CALL(r, tick, now);
		/* light mode's windows open and close on time, not at the next poll */
		wake = capture__tick(r, now);
		timeout = POLL_MS;
		if (wake && wake < now + POLL_MS * 1000000ull)
			timeout = wake > now ? (int)((wake - now) / 1000000ull) + 1 : 0;
		if (now >= next_tick) {
			rescan(r, r->o->all && now >= next_rescan);
			if (now >= next_rescan)
				next_rescan = now + RESCAN_NS;
			tick(r, start, &last_events, tty);
			hold__tick(r->hold);
			next_tick += TICK_NS;
			if (next_tick < now)
				next_tick = now + TICK_NS;
		}
	}
	/* what the BPF side submitted before we stopped is still ours */
	ring_buffer__consume(r->rb);
	r->untraced_stop |= r->cap.stop;
	gt_log_status_clear();
	return 0;
}

/* Waits for -- CMD to exit, draining the ring buffer while it is traced.
 * A second stop request kills it: leaving it running, orphaned (and
 * untraced), with a status of 0 would hide that it never finished. */
static void wait_cmd(struct recorder *r, bool traced)
{
	pid_t pid = child__pid(r->child);

	while (!recorder__child_done(r)) {
		if (stop_requests >= 2) {
			kill(pid, SIGKILL);
			child__wait(r->child);
			pr_warn("stopped again: killed %s (pid %d)", r->o->cmd[0], pid);
			break;
		}
		if (traced) {
			ring_buffer__poll(r->rb, POLL_MS);
			ring_buffer__consume(r->rb);
			recorder__cupti_poll(r);
			hold__heartbeat(r->hold, now_ns(CLOCK_MONOTONIC));
		} else {
			usleep(POLL_MS * 1000);
		}
	}
	if (traced)
		ring_buffer__consume(r->rb);
}

/* -- CMD still runs after a stop request: its calls are still recorded
 * until it exits. */
void recorder__wait_child(struct recorder *r)
{
	pr_info("recording stopped; waiting for %s (pid %d) to exit (Ctrl-C again to kill it)",
		r->o->cmd[0], child__pid(r->child));
	wait_cmd(r, true);
}

/* The recording ended by itself with -- CMD still running: it runs on
 * untraced (out of the pids filter, so nothing more is submitted) and its
 * status is still ours to return. */
void recorder__wait_child_untraced(struct recorder *r)
{
	int fd = bpf_map__fd(r->skel->maps.pids);
	uint32_t key, next;

	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
	pr_info("%s (pid %d) runs on untraced until it exits", r->o->cmd[0], child__pid(r->child));
	wait_cmd(r, false);
}

/* --delay: -- CMD (started and released) runs untraced meanwhile; a stop
 * request or CMD's exit ends the wait early. */
int recorder__wait_delay(struct recorder *r)
{
	uint64_t end = now_ns(CLOCK_MONOTONIC) + (uint64_t)(r->o->delay * 1e9);
	int err;

	if (r->o->cmd) {
		err = recorder__start_child(r);
		if (err)
			return err;
		if ((err = child__release(r->child)))
			pr_warn("failed to start %s: %s", r->o->cmd[0], strerror(-err));
		r->released = true;
	}
	pr_info("waiting %gs before recording (--delay)%s", r->o->delay,
		r->o->cmd ? "; the command runs untraced meanwhile" : "");
	while (!stop_requests && !recorder__child_done(r)) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (now >= end)
			break;
		usleep(end - now > 50000000ull ? 50000 : (end - now) / 1000 + 1);
	}
	return 0;
}

