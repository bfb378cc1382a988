// SPDX-License-Identifier: MIT
/*
 * gen_trace -c: the schedule of capture ranges (-c range) or light-mode
 * windows (-c light), their records, and which calls they let through.
 */
#include <stdbool.h>
#include <stdint.h>
#include "gen_trace_int.h"

/* -c: a capture record, written as the recorder or BPF would. */
int gen__w_capture(struct gen *g, uint64_t ts, uint32_t pid, uint32_t kind, uint32_t index,
	      uint32_t flags)
{
	struct gt_capture c = {
		.hdr = { .ts = ts, .pid = pid, .tid = pid, .size = sizeof(c),
			 .type = g->cap == CAP_RANGE ? GT_REC_RANGE : GT_REC_CAPTURE,
			 .cpu = (uint16_t)(pid % 16) },
		.kind = kind, .index = index, .flags = flags,
		.source = g->cap == CAP_RANGE ? GT_CAPSRC_PROFILER : GT_CAPSRC_WINDOW,
		/* the hot probes' attach and detach times */
		.latency_ns = kind == GT_CAP_WINDOW_OPEN ? 50000 : kind == GT_CAP_WINDOW_CLOSE ? 30000 : 0,
	};

	return gen__append(g, &c.hdr);
}

/* The start of range k of process p (-c range). */
static uint64_t range_start(const struct gen *g, int p, uint64_t k)
{
	return g->cap_t0 + k * CAP_PERIOD + (uint64_t)p * g->cap_gap;
}

/* -c: writes the capture records due by ts (opens and closes of ranges or
 * windows), in time order. */
int gen__cap_due(struct gen *g, uint64_t ts)
{
	int err = 0;

	while (g->cap_started && !err) {
		uint64_t best = UINT64_MAX;
		int bp = -1;

		if (g->cap == CAP_LIGHT) {
			uint64_t at = g->cap_t0 + g->next_window * CAP_PERIOD +
				      (g->window_open ? CAP_WINDOW : 0);

			if (at > ts)
				return 0;
			if (g->window_open) {
				g->next_window++;
				err = gen__w_capture(g, at, 0, GT_CAP_WINDOW_CLOSE, (uint32_t)g->next_window, 0);
			} else {
				err = gen__w_capture(g, at, 0, GT_CAP_WINDOW_OPEN, (uint32_t)g->next_window + 1, 0);
			}
			g->window_open = !g->window_open;
			continue;
		}
		for (int p = 0; p < g->nprocs; p++) {
			uint64_t at = range_start(g, p, g->pr[p].k) +
				      (g->pr[p].open ? g->cap_gap * 3 / 2 : 0);

			if (at < best) {
				best = at;
				bp = p;
			}
		}
		if (bp < 0 || best > ts)
			return 0;
		if (g->pr[bp].open) {
			err = gen__w_capture(g, best, PID_BASE + (uint32_t)bp * PID_STEP, GT_CAP_RANGE_CLOSE,
					g->pr[bp].index, 0);
			g->pr[bp].k++;
		} else {
			g->pr[bp].index = ++g->nranges;
			err = gen__w_capture(g, best, PID_BASE + (uint32_t)bp * PID_STEP, GT_CAP_RANGE_OPEN,
					g->pr[bp].index, 0);
		}
		g->pr[bp].open = !g->pr[bp].open;
	}
	return err;
}

/* -c: whether a call of pid that begins at ts is recorded. */
bool gen__captured(const struct gen *g, uint32_t pid, uint16_t api, uint64_t ts)
{
	int p = (int)((pid - PID_BASE) / PID_STEP);

	if (g->cap == CAP_NONE || !g->cap_started)
		return true;
	if (g->cap == CAP_LIGHT)
		return !gt_api__hot(api) || (ts - g->cap_t0) % CAP_PERIOD < CAP_WINDOW;
	if (ts < range_start(g, p, 0))
		return false;
	return (ts - range_start(g, p, 0)) % CAP_PERIOD < g->cap_gap * 3 / 2;
}
