// SPDX-License-Identifier: MIT
/* The overhead budget's shedding decisions: see shed_policy.h. */
#include "daemon/budget/shed_policy.h"

unsigned shed_policy__pick(const double *cost_ns, const bool *eligible, size_t n, double min_ns)
{
	unsigned best = 0;

	for (size_t i = 1; i < n; i++) {
		if (!eligible[i] || !(cost_ns[i] > 0) || !(cost_ns[i] >= min_ns))
			continue;
		if (!best || cost_ns[i] > cost_ns[best])
			best = (unsigned)i;
	}
	return best;
}

uint64_t shed_policy__retry_at(const struct shed_entry *e, uint64_t retry_ns)
{
	unsigned shift = e->sheds > 1 ? e->sheds - 1 : 0;
	uint64_t wait;

	if (shift > SHED_RETRY_MAX_SHIFT)
		shift = SHED_RETRY_MAX_SHIFT;
	if (retry_ns > (UINT64_MAX >> shift))
		return UINT64_MAX;
	wait = retry_ns << shift;
	return e->shed_ts > UINT64_MAX - wait ? UINT64_MAX : e->shed_ts + wait;
}

int shed_policy__give_back(const struct shed_entry *e, size_t n, uint64_t now, bool over,
			   uint64_t retry_ns)
{
	int best = -1;

	if (over)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (now < shed_policy__retry_at(&e[i], retry_ns))
			continue;
		if (best < 0 || e[i].shed_ts < e[best].shed_ts)
			best = (int)i;
	}
	return best;
}
