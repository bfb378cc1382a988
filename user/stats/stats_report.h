/* SPDX-License-Identifier: MIT */
/*
 * One report of `gtrace-bpf stats` as typed rows, and the writer that renders
 * reports as an nsys-style text table, CSV or one JSON document (formats in
 * the header comment of stats.c).  Internal to stats: the accumulation in
 * stats.c builds the rows, this renders them, so that the three formats
 * cannot disagree on a number.
 */
#ifndef GTRACE_STATS_REPORT_H
#define GTRACE_STATS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stats/stats.h"

/* What a column holds, which decides how it is printed. */
enum stats_kind {
	SK_INT,		/* count or bytes, u64 */
	SK_ID,		/* identifier (pid), u64: never grouped with commas */
	SK_TIME,	/* nanoseconds, u64: exact in every time unit */
	SK_TIMEF,	/* nanoseconds, double (average, median, deviation) */
	SK_PCT,		/* percentage, double, one decimal */
	SK_REAL,	/* other double (bytes average), one decimal */
	SK_STR,		/* text, printed as it is (JSON-escaped in JSON) */
	SK_BOOL,	/* u: yes / no in tables, true / false in CSV and JSON */
	SK_MICRO,	/* u: an int64 in millionths, printed as the exact decimal (87.125,
			 * 100, -1.5: at most six decimals, no trailing zeros) */
};

struct stats_col {
	const char *title;	/* table and CSV header; time columns get " (unit)" appended */
	const char *key;	/* JSON member name */
	enum stats_kind kind;
};

struct stats_cell {
	bool none;		/* no value (no completed call): "-", empty, null */
	union {
		uint64_t u;	/* SK_INT, SK_TIME */
		double d;	/* SK_TIMEF, SK_PCT, SK_REAL */
		const char *s;	/* SK_STR: must live until the report is written */
	};
};

struct stats_report {
	const char *name;		/* "cuda_api_sum" */
	const char *title;		/* "CUDA API Summary" */
	const char *empty;		/* what the trace lacks when there is no row: "CUDA API calls" */
	const char *const *notes;	/* table footnotes, NULL-terminated, may be NULL */
	const char *const *empty_notes;	/* the table's footnotes when there is no row (after
					 * the SKIPPED line), NULL-terminated, may be NULL */
	const struct stats_col *cols;
	int ncols;
	struct stats_cell *cells;	/* nrows * ncols, row-major */
	size_t nrows, cap;		/* rows used, rows allocated */
};

/* A new row of r->ncols cells, all none; NULL when out of memory. */
struct stats_cell *stats_report__row(struct stats_report *r);
/* Frees the cells (not the strings they point to). */
void stats_report__free(struct stats_report *r);

struct stats_writer;

/* Time units: 0 and the scale's decimals (ns 0, us 3, ms 6, s 9) for a
 * known name, -EINVAL otherwise. */
int stats_timeunit__decimals(const char *unit);

/* path and damage (NULL when the trace is whole) are written by the JSON
 * format only.  Returns NULL when out of memory. */
struct stats_writer *stats_writer__new(FILE *out, enum stats_format fmt, const char *unit,
				       const char *path, const char *damage);
/* What comes before the reports, both may be NULL: in a table, text (lines,
 * each ending in a newline) before the first report; in JSON, json (members
 * "key":value separated by commas) after "truncated" and "damage".  CSV has
 * neither: a file is one table.  Both must live until the writer is freed. */
void stats_writer__set_head(struct stats_writer *w, const char *text, const char *json);
/* Renders one report.  Returns 0 or a negative errno (write error, ENOMEM). */
int stats_writer__report(struct stats_writer *w, const struct stats_report *r);
/* Ends the output (closes the JSON document) and flushes it.  Returns 0 or
 * the first write error as a negative errno. */
int stats_writer__finish(struct stats_writer *w);
void stats_writer__free(struct stats_writer *w);

#endif
