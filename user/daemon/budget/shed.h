/* SPDX-License-Identifier: MIT */
/*
 * The overhead budget's last resort (shed.c): when light mode's windows are
 * as rare as they get and the always-on probes alone still cost more than
 * --budget, the always-on api that costs most is shed: its probes leave the
 * always-on set and join the window set (recorded only inside light
 * windows, like launches). Given back later when the cost allows it. The
 * decisions are shed_policy.c's; the swap of the probes cuda_probes.c's.
 */
#ifndef GTRACE_SHED_H
#define GTRACE_SHED_H

#include <stdbool.h>
#include <stdint.h>

struct recorder;
struct budget;
struct shed;
struct gt_hdr;

#define SHED_MAX	16	/* apis shed at once, at most */
#define SHED_MIN_SHARE	0.1	/* an api is shed only if it costs a tenth of the budget */

struct shed_status {
	unsigned n;			/* apis shed now */
	uint16_t apis[SHED_MAX];	/* ... which, in the order shed */
	unsigned swapping;		/* the api of a swap in progress, 0 = none */
	bool swap_shed;			/* ... shed (else given back) */
	uint64_t sheds, restores;	/* swaps done */
	uint64_t cut;			/* calls whose exit the swaps could not record */
	uint64_t handed;		/* hits whose decision the new program handed on (BPF) */
	uint64_t failed;		/* swaps that could not be made */
	double last_ms, max_ms;		/* how long the swaps took (attach to close done) */
};

/* At the budget's start, in light mode with a budget: whether the probes
 * can be swapped (uprobe_multi links), said at -v; its records written
 * through b, budget the fraction kept under. Returns 0 or -ENOMEM. Every function below takes s NULL. */
int shed__start(struct recorder *r, struct budget *b, double budget, struct shed **out);
/* Every record from BPF: the calls in flight of the always-on apis. */
void shed__on_record(struct shed *s, const struct gt_hdr *h);
/* From the budget's evaluation: over (at the longest window period),
 * under (the estimate under the budget), the always-on apis' cost and calls
 * in the interval of interval_ns. Sheds the costliest when over, may give
 * one back when under (shed_policy.h). */
void shed__evaluate(struct shed *s, uint64_t now, bool over, bool under, const double *cost_ns,
		    const uint64_t *calls, double interval_ns);
/* From the loop at every poll: the swap in progress, step by step. */
void shed__poll(struct shed *s, uint64_t now);
/* True when api's calls are recorded only inside windows now. */
bool shed__windowed(const struct shed *s, unsigned api);
bool shed__status(const struct shed *s, struct shed_status *st);
/* A swap in progress finished (its record written), one summary line. */
void shed__finish(struct shed *s);
void shed__free(struct shed *s);

#endif
