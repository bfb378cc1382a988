/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf stats FILE`: nsys-style summary reports. */
#ifndef GTRACE_STATS_H
#define GTRACE_STATS_H

#include <stdio.h>

enum stats_format { STATS_TABLE, STATS_CSV, STATS_JSON };

struct stats_opts {
	const char *path;		/* input trace */
	const char *reports;		/* comma-separated report names, NULL = all */
	enum stats_format format;
	const char *timeunit;		/* "ns", "us", "ms" or "s" (default ns) */
	FILE *out;			/* the reports */
	FILE *err;			/* diagnostics (one line on failure) */
};

/* Returns the exit status: 0; 2 after one line on o->err for an unknown
 * report or time unit (a bad command line); 1 after one line for an
 * unreadable or damaged file, or a failed write. */
int stats__run(const struct stats_opts *o);
/* 0 when every name of the comma-separated list is a report (NULL: all);
 * else -EINVAL with the first unknown name copied into bad. */
int stats__check_reports(const char *list, char *bad, size_t badlen);
/* Names of the reports, NULL-terminated, in default order. */
extern const char *const stats_report_names[];

#endif
