// SPDX-License-Identifier: MIT
/*
 * The overhead budget's shedding: an always-on api moved to the window set
 * when stretching the windows cannot hold the budget, and given back later
 * (the decisions: shed_policy.h).
 *
 * A swap, step by step (the probes' side: cuda_probes.c, bpf/cuda.bpf.c):
 *   begin   api's calls are marked from here on, new always-on links are
 *           attached beside the old ones (every always-on probe in the other
 *           generation; shedding, api's window links too if a window is open);
 *   wait    (shedding) until the calls of api that entered before the
 *           marking began have returned, at most WAIT_MAX_NS: their exits
 *           can only be recorded by the old links before the flip;
 *   commit  the generation in force flips, the old links close in a thread;
 *   done    the close has finished: the calls of api still in flight whose
 *           entries the old links recorded lose their exits (the old exit
 *           programs are gone). They are counted (the record's cut, status,
 *           the line), never silent; the decoder shows them unmatched too.
 * Every other api is recorded exactly once throughout: at each hit the new
 * link's program runs first and hands its reading to the old one's.
 *
 * Each swap is an overhead record (GT_OVH_SHED or GT_OVH_RESTORE, api = the
 * api, cut, ts = the flip), a line, and status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/budget/budget.h"
#include "daemon/budget/shed.h"
#include "daemon/budget/shed_policy.h"
#include "bpf/gtrace_events.h"
#include "format/api.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "record/ext.h"

#define WAIT_MAX_NS	1000000000ull	/* a shed waits this long at most for earlier calls */

enum shed_phase { PH_NONE, PH_WAIT, PH_CLOSING };

struct shed {
	struct recorder *r;		/* the recording whose probes it swaps */
	struct budget *b;		/* the budget it sheds for (its records) */
	double budget;			/* ... the fraction kept under */
	bool can;			/* uprobe_multi links: the probes can be swapped */
	uint64_t retry_ns;		/* SHED_RETRY_NS, or GTRACE_BUDGET_RETRY_S (tests) */
	struct shed_entry list[SHED_MAX];
	size_t n;
	uint32_t sheds_of[GT_API__COUNT];	/* times each api was shed */
	struct u64map open;		/* tid -> ts << 8 | api of an always-on call in flight,
					 * 0 once it returned */
	/* the swap in progress */
	enum shed_phase phase;
	unsigned api;
	bool shedding;
	uint64_t t_mark, t_flip, deadline;
	uint64_t settled;		/* the last swap's end: intervals from before it weigh
					 * what it changed */
	double rate;			/* api's calls per second when the swap began */
	struct shed_status st;
};

int shed__start(struct recorder *r, struct budget *b, double budget, struct shed **out)
{
	struct shed *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->r = r;
	s->b = b;
	s->budget = budget;
	s->can = recorder__multi(r);
	s->retry_ns = SHED_RETRY_NS;
	budget__env_seconds("GTRACE_BUDGET_RETRY_S", 0, true, 86400, &s->retry_ns);
	*out = s;
	if (!s->can)
		pr_verbose("budget: one link per probe (no uprobe_multi): always-on calls cannot be "
			   "shed, an estimate over the budget is only warned about");
	return 0;
}

static bool has_exit(unsigned api)
{
	const struct gt_api_info *d = gt_api__info(api);

	return d && d->ret != GT_R_NONE;
}

void shed__on_record(struct shed *s, const struct gt_hdr *h)
{
	uint64_t *v;

	if (!s || !s->can || !h->tid || h->api >= GT_API__COUNT || gt_api__hot(h->api))
		return;
	switch (h->type) {
	case GT_REC_CALL:
	case GT_REC_CALL_STR:
		if (has_exit(h->api))
			u64map__set(&s->open, h->tid, h->ts << 8 | h->api);
		return;
	case GT_REC_RET:
	case GT_REC_RET_STR:
		v = u64map__get(&s->open, h->tid);
		if (v && (*v & 0xff) == h->api)
			*v = 0;
		return;
	default:
		return;
	}
}

/* Calls of api in flight that entered before ts; with clear, forgotten. */
static uint64_t open_before(struct shed *s, unsigned api, uint64_t ts, bool clear)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->open.cap; i++) {
		uint64_t v = s->open.keys && s->open.keys[i] ? s->open.vals[i] : 0;

		if (!v || (v & 0xff) != api || (v >> 8) >= ts)
			continue;
		n++;
		if (clear)
			s->open.vals[i] = 0;
	}
	return n;
}

static int find(const struct shed *s, unsigned api)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->list[i].api == api)
			return (int)i;
	return -1;
}

static void begin(struct shed *s, unsigned api, bool shedding, double rate, uint64_t now)
{
	int err = recorder__swap_begin(s->r, api, shedding);

	if (err) {
		s->st.failed++;
		pr_warn("budget: cannot %s %s: %s", shedding ? "shed" : "give back", gt_api__name(api),
			strerror(-err));
		return;
	}
	s->api = api;
	s->shedding = shedding;
	s->rate = rate;
	s->t_mark = now;
	s->deadline = now + WAIT_MAX_NS;
	s->phase = PH_WAIT;
	s->st.swapping = api;
	s->st.swap_shed = shedding;
	pr_verbose("budget: %s %s: new always-on links attached in %.2f ms", shedding ? "shedding" :
		   "giving back", gt_api__name(api), (clock__ns(CLOCK_MONOTONIC) - now) / 1e6);
	if (!shedding)
		shed__poll(s, now);	/* nothing to wait for: no old call of it was recorded
					 * always-on */
}

void shed__evaluate(struct shed *s, uint64_t now, bool over, bool under, const double *cost_ns,
		    const uint64_t *calls, double interval_ns)
{
	bool eligible[GT_API__COUNT];
	unsigned api;
	int i;

	/* an interval that saw the last swap is no ground for the next one */
	if (!s || !s->can || s->phase != PH_NONE || now - (uint64_t)interval_ns < s->settled)
		return;
	if (over) {
		for (api = 0; api < GT_API__COUNT; api++)
			eligible[api] = api && !gt_api__hot(api) && find(s, api) < 0;
		/* on the H200 a loop's first interval had only cuInit to offer
		 * (1 call/s, 0.000 %), and shedding it swapped every link for nothing */
		api = s->n < SHED_MAX ? shed_policy__pick(cost_ns, eligible, GT_API__COUNT,
							  s->budget * interval_ns * SHED_MIN_SHARE) : 0;
		if (!api)
			return;
		pr_warn("budget %.2f%%: over it even at the longest window period: shedding %s, the "
			"always-on call that costs most (%.0f calls/s, %.3f%% of the time estimated): "
			"recorded only inside light windows from now on", s->budget * 100,
			gt_api__name(api), calls[api] / (interval_ns / 1e9), cost_ns[api] / interval_ns * 100);
		begin(s, api, true, calls[api] / (interval_ns / 1e9), now);
		return;
	}
	i = shed_policy__give_back(s->list, s->n, now, !under, s->retry_ns);
	if (i >= 0) {
		pr_info("budget %.2f%%: under it: giving %s back to the always-on probes (shed %.0f s "
			"ago; shed again if the cost is too high)", s->budget * 100,
			gt_api__name(s->list[i].api), (now - s->list[i].shed_ts) / 1e9);
		begin(s, s->list[i].api, false, 0, now);
	}
}

static void done(struct shed *s, uint64_t ns)
{
	uint64_t cut;
	int i;

	/* exits the old links recorded before they closed are ours */
	recorder__drain(s->r);
	cut = open_before(s, s->api, s->t_flip, true);
	s->st.cut += cut;
	s->st.last_ms = ns / 1e6;
	if (s->st.last_ms > s->st.max_ms)
		s->st.max_ms = s->st.last_ms;
	s->st.handed = recorder__swap_handed(s->r);
	budget__record(s->b, s->shedding ? GT_OVH_SHED : GT_OVH_RESTORE, s->t_flip, s->api,
		       (uint32_t)(cut > UINT32_MAX ? UINT32_MAX : cut));
	if (s->shedding) {
		s->st.sheds++;
	} else {
		s->st.restores++;
		i = find(s, s->api);
		if (i >= 0) {
			memmove(&s->list[i], &s->list[i + 1], (s->n - i - 1) * sizeof(s->list[0]));
			s->n--;
		}
	}
	gt_log(cut ? GT_LOG_WARN : GT_LOG_INFO, "budget: %s %s in %.0f ms (the always-on links "
	       "swapped%s); %llu call%s of it in flight lost %s exit at the swap", gt_api__name(s->api),
	       s->shedding ? "shed to the light windows" : "given back to the always-on probes",
	       ns / 1e6, s->shedding ? "" : ", its window links closed", (unsigned long long)cut,
	       cut == 1 ? "" : "s", cut == 1 ? "its" : "their");
	s->phase = PH_NONE;
	s->settled = clock__ns(CLOCK_MONOTONIC);
	s->st.swapping = 0;
	s->st.n = (unsigned)s->n;
	for (size_t k = 0; k < s->n; k++)
		s->st.apis[k] = (uint16_t)s->list[k].api;
}

void shed__poll(struct shed *s, uint64_t now)
{
	uint64_t ns, early;

	if (!s || s->phase == PH_NONE)
		return;
	if (s->phase == PH_WAIT) {
		/* the records of before the marking taken (a poll later), and
		 * the calls they show in flight returned, or the wait over */
		if (s->shedding && now < s->t_mark + 2 * RECORDER_POLL_MS * 1000000ull)
			return;
		early = s->shedding ? open_before(s, s->api, s->t_mark, false) : 0;
		if (early && now < s->deadline)
			return;
		recorder__swap_commit(s->r);
		s->t_flip = clock__ns(CLOCK_MONOTONIC);
		if (s->shedding && s->n < SHED_MAX) {
			s->list[s->n++] = (struct shed_entry){ .api = s->api, .shed_ts = s->t_flip,
							       .sheds = ++s->sheds_of[s->api] };
			s->st.n = (unsigned)s->n;
			s->st.apis[s->n - 1] = (uint16_t)s->api;
		}
		s->phase = PH_CLOSING;
		if (early)
			pr_verbose("budget: %llu call%s of %s that entered before the swap still in "
				   "flight after %.1f s", (unsigned long long)early, early == 1 ? "" : "s",
				   gt_api__name(s->api), WAIT_MAX_NS / 1e9);
		return;
	}
	if (recorder__swap_done(s->r, false, &ns))
		done(s, ns);
}

bool shed__windowed(const struct shed *s, unsigned api)
{

	return s && find(s, api) >= 0;
}

bool shed__status(const struct shed *s, struct shed_status *st)
{

	if (!s)
		return false;
	*st = s->st;
	st->handed = recorder__swap_handed(s->r);
	return true;
}

void shed__finish(struct shed *s)
{
	uint64_t ns;

	if (!s)
		return;
	if (s->phase == PH_WAIT) {
		recorder__swap_commit(s->r);
		s->t_flip = clock__ns(CLOCK_MONOTONIC);
		s->phase = PH_CLOSING;
	}
	if (s->phase == PH_CLOSING && recorder__swap_done(s->r, true, &ns))
		done(s, ns);
	if (s->st.sheds || s->st.failed)
		pr_info("budget: %llu api%s shed, %llu given back, %u shed at the end; %llu call%s cut "
			"at the swaps", (unsigned long long)s->st.sheds, s->st.sheds == 1 ? "" : "s",
			(unsigned long long)s->st.restores, s->st.n, (unsigned long long)s->st.cut,
			s->st.cut == 1 ? "" : "s");
}

void shed__free(struct shed *s)
{

	if (!s)
		return;
	u64map__free(&s->open);
	free(s);
}
