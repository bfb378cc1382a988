// SPDX-License-Identifier: MIT
/* The overhead estimate's arithmetic: see budget_est.h. */
#include "daemon/budget/budget_est.h"

double budget_est__add(struct budget_est *e, double probe_ns, double interval_ns, double *probe)
{
	double hold = interval_ns * (BUDGET_EST_MAX / (1 + BUDGET_EST_MAX)), p, rest, est;

	p = probe_ns > hold ? hold : probe_ns > 0 ? probe_ns : 0;
	rest = interval_ns - p;
	est = rest > 0 ? p / rest : 0;
	*probe = p;
	e->n++;
	if (est > e->max)
		e->max = est;
	e->sum_probe += p;
	e->sum_rest += rest > 0 ? rest : 0;
	e->mean = e->sum_rest > 0 ? e->sum_probe / e->sum_rest : 0;
	/* sum(p) / sum(rest) is at most the largest p / rest: only rounding
	 * can put it above, and it is taken back */
	if (e->mean > e->max)
		e->mean = e->max;
	return est;
}
