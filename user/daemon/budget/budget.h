/* SPDX-License-Identifier: MIT */
/*
 * The daemon's overhead budget (budget.c): what the probes cost the traced
 * programs, estimated from the kernel's BPF statistics, the records and a
 * probe hit's cost measured on this machine; light mode's window period
 * stretched to keep the estimate under --budget.
 */
#ifndef GTRACE_BUDGET_H
#define GTRACE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct recorder;
struct budget;
struct shed;
struct gt_hdr;

/* The last evaluation, for status and the metrics. */
struct budget_status {
	bool known;			/* at least one interval evaluated */
	bool over;			/* the last one was over the budget */
	bool stats;			/* the kernel's BPF statistics are on (else records only) */
	double estimate;		/* probe time / (interval - probe time) of the costliest thread
					 * (the probe time held under the interval: budget_est.h) */
	double max_estimate;		/* the highest so far */
	double mean_estimate;		/* over every interval so far, time-weighted: the sum of
					 * their probe times over the sum of the rests (<= max) */
	double duty;			/* light mode's full-capture duty cycle now (1 full mode) */
	uint64_t period_ns;		/* light mode's window period now, 0 in full mode */
	uint64_t interval_ns, hits, probe_ns, total_ns, bpf_ns;	/* as struct gt_overhead */
	uint32_t pid, tid;		/* the costliest thread */
	double hit_ns;			/* the mean calibrated entry-hit cost of the last interval */
	double hit_insn_ns[3];		/* calibrated entry-hit cost by probed instruction
					 * (enum uprobe_insn: single-stepped, push, nop/branch) */
	double ret_ns;			/* calibrated return-hit cost */
	uint64_t evaluations, changes;	/* intervals evaluated; period changes made */
	double sampler;			/* the GPU-metrics sampler's threads: CPU time / interval in
					 * the last interval (of one CPU; measured, the recorder's own) */
	double mean_sampler;		/* ... over every interval so far */
};

/* After the probes are attached and the window exists: enables the BPF
 * statistics of r's programs, calibrates, writes the calibration record;
 * budget: the fraction to keep under (0 = estimate only). *out: the budget,
 * NULL when a failure to calibrate (said once) leaves none. Returns 0 or
 * -ENOMEM. */
int budget__start(struct recorder *r, double budget, struct budget **out);
/* Every record from BPF: which thread paid for which hits (b may be NULL). */
void budget__on_record(struct budget *b, const struct gt_hdr *h);
/* From the loop: evaluates after each light-mode window, or every 5 s. */
void budget__tick(struct budget *b, uint64_t now);
/* From the loop at every poll: a periodic calibration that has finished
 * in its thread is taken (and recorded); a swap in progress goes on. */
void budget__poll(struct budget *b);
/* Writes an overhead record of reason at ts with the last evaluation's
 * figures; api and cut for a shed or a give-back (GT_OVH_SHED, _RESTORE). */
void budget__record(struct budget *b, uint32_t reason, uint64_t ts, unsigned api, uint32_t cut);
/* False when there is no budget (b NULL). */
bool budget__status(const struct budget *b, struct budget_status *st);
/* Its shedding (shed.h), NULL when it cannot shed. */
struct shed *budget__shed(const struct budget *b);
/* At the end of the recording: the last interval's figures, one summary line. */
void budget__finish(struct budget *b);
void budget__free(struct budget *b);
/* A test knob: the environment variable name in seconds, from lo (lo_open:
 * above lo) to hi, into *ns; unset leaves *ns, a bad value is said and
 * ignored. */
void budget__env_seconds(const char *name, double lo, bool lo_open, double hi, uint64_t *ns);

#endif
