/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf stats FILE`: nsys-style summary reports. */
#ifndef GTRACE_STATS_H
#define GTRACE_STATS_H

#include <stdbool.h>
#include <stdio.h>

enum stats_format { STATS_TABLE, STATS_CSV, STATS_JSON };

struct stats_opts {
	const char *path;		/* input trace */
	const char *reports;		/* comma-separated report names, NULL = all */
	enum stats_format format;
	const char *timeunit;		/* "ns", "us", "ms" or "s" (default ns) */
	const char *output;		/* NULL or "-": out; else the file (table, json), or
					 * for csv the base of one file per report,
					 * BASE_<report>.csv */
	bool force;			/* replace output files that exist */
	const char *range;		/* --range: "N" (capture range N; window N in a trace
					 * with windows and no range) or "wN" (window N);
					 * NULL: the whole trace */
	FILE *out;			/* the reports when output is NULL or "-" */
	FILE *err;			/* diagnostics (one line on failure) */
};

/* Returns the exit status: 0; 2 after one line on o->err for an unknown
 * report or time unit, a bad range or one the trace does not have (also a
 * trace with no ranges nor windows), or csv of several reports without an
 * output base (a bad command line); 1 after one line for an unreadable or
 * damaged file, an output that exists (without force), or a failed write. */
int stats__run(const struct stats_opts *o);
/* 0 when every name of the comma-separated list is a report (NULL: all);
 * else -EINVAL with the first unknown name copied into bad. */
int stats__check_reports(const char *list, char *bad, size_t badlen);
/* 0 when range is "N" or "wN" with N from 1, else -EINVAL. */
int stats__check_range(const char *range);
/* Names of the reports, NULL-terminated, in default order. */
extern const char *const stats_report_names[];

#endif
