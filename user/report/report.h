/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf report FILE [--compare BASELINE] [-o OUT]`: one HTML file with
 * the timeline, the charts and the tables of a trace (report.c). */
#ifndef GTRACE_REPORT_H
#define GTRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct report_opts {
	const char *path;	/* the trace */
	const char *compare;	/* --compare: the baseline trace, NULL none */
	const char *output;	/* NULL: the trace's name with .html for .gtrace */
	bool force;		/* replace an output that exists */
	size_t budget;		/* events drawn exactly, 0: the default (report_timeline.h) */
	FILE *err;		/* diagnostics: one line on failure, warnings */
	FILE *said;		/* where the path written is said, NULL: nowhere */
};

/* Returns the exit status: 0 (warnings for a cut trace, a baseline that
 * does not compare), or 1 after one line on o->err: an unreadable trace or
 * baseline, an output that exists (without force) or cannot be written. */
int report__run(const struct report_opts *o);

#endif
