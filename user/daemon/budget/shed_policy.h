/* SPDX-License-Identifier: MIT */
/*
 * The overhead budget's shedding decisions (daemon/budget/shed.c carries them out),
 * pure: no clock, no BPF, what the budget measured passed in.
 *
 * Shed: when the estimate is still over the budget at the longest window
 * period (the always-on probes alone cost more than it), the always-on api
 * that cost most in the interval, its calls times the cost of one hit of
 * its probes (budget.c's calibrated class cost plus the programs' mean run
 * time), leaves the always-on set for the window set; one api per
 * evaluation, until the estimate is under the budget.
 *
 * Give back: a shed api is tried always-on again once its retry time has
 * come, RETRY after its shed, doubled for each earlier shed of the same api
 * (RETRY, 2x, 4x, at most 16x), and only from an evaluation under the
 * budget, one api at a time, the one shed longest ago first.  If the cost is
 * too high with it, the next evaluation over the budget sheds the costliest
 * api again (usually the same one), whose next retry then waits longer.
 */
#ifndef GTRACE_SHED_POLICY_H
#define GTRACE_SHED_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHED_RETRY_NS		600000000000ull	/* a shed api tried again after this long */
#define SHED_RETRY_MAX_SHIFT	4		/* ... doubled per earlier shed, up to 16x */

/* An api in the window set. */
struct shed_entry {
	unsigned api;		/* enum gt_api */
	uint64_t shed_ts;	/* when its probes left the always-on set */
	uint32_t sheds;		/* how often this api was shed, this time included */
};

/* The api to shed: of apis 1..n-1, the one with the highest cost_ns (its
 * calls times the cost of one, this interval) among those eligible (always-
 * on now); 0 when none costs at least min_ns (and more than 0): a shed
 * swaps every always-on link, which is not worth it for a call whose cost
 * would hardly move the estimate (the daemon passes a tenth of the
 * budget's share of the interval, SHED_MIN_SHARE). */
unsigned shed_policy__pick(const double *cost_ns, const bool *eligible, size_t n, double min_ns);
/* When e is tried always-on again: retry_ns after its shed, doubled per
 * earlier shed (UINT64_MAX when that would overflow). */
uint64_t shed_policy__retry_at(const struct shed_entry *e, uint64_t retry_ns);
/* Of the n shed apis, the index of the one to give back at now (an
 * evaluation under the budget when !over), -1 when none: only under the
 * budget, only one whose retry time has come, the one shed longest ago. */
int shed_policy__give_back(const struct shed_entry *e, size_t n, uint64_t now, bool over,
			   uint64_t retry_ns);

#endif
