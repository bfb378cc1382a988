/* SPDX-License-Identifier: MIT */
/*
 * The overhead budget's estimate as a figure (budget.c measures what goes
 * into it): per interval, the costliest thread's probe time p over the
 * rest of the interval, p / (L - p); over the daemon's life, the highest of
 * those and their time-weighted mean, sum(p) / sum(L - p), made of the
 * same (p, L - p) pairs, so that the mean is never above the max (nor
 * below the lowest interval's).
 *
 * p / (L - p) has no value once p reaches L, which the probe time charged
 * to one thread can (the hits no record shows are all charged to it): p is
 * held at L * BUDGET_EST_MAX / (1 + BUDGET_EST_MAX), where the estimate is
 * BUDGET_EST_MAX, so that it is the same increasing function of p up to
 * there and the figures recorded keep estimate = probe / (interval - probe).
 */
#ifndef GTRACE_BUDGET_EST_H
#define GTRACE_BUDGET_EST_H

#include <stdint.h>

#define BUDGET_EST_MAX	100.0	/* the highest estimate: 10000 % */

struct budget_est {
	double sum_probe;	/* over every interval added: the probe time as counted, ns */
	double sum_rest;	/* ... and the rest of the interval, ns */
	double max;		/* the highest interval's estimate */
	double mean;		/* sum_probe / sum_rest (0 before the first interval) */
	uint64_t n;		/* intervals added */
};

/*
 * An interval of interval_ns (> 0) in which the costliest thread was
 * charged probe_ns: returns its estimate and sets *probe to the probe time
 * it counts (probe_ns, or the hold); adds both to e's mean and max.
 */
double budget_est__add(struct budget_est *e, double probe_ns, double interval_ns, double *probe);

#endif
