/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf export FILE -f perfetto|json|csv [-o OUT]`: timelines and tables
 * from a trace file, streamed (memory bounded apart from name tables). */
#ifndef GTRACE_EXPORT_H
#define GTRACE_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

struct trace_reader;

enum export_format {
	EXPORT_PERFETTO,	/* native Perfetto protobuf (.pftrace) */
	EXPORT_JSON,		/* Chrome trace event JSON (.json) */
	EXPORT_CSV,		/* one row per event (.csv) */
};

struct export_opts {
	const char *path;		/* input trace */
	const char *output;		/* NULL: input name with the format's extension; "-": stdout */
	enum export_format format;
	bool force;			/* replace an existing output */
	FILE *err;			/* diagnostics (one line on failure) */
};

/* Returns the exit status: 0, or 1 after one line on o->err. Output goes to
 * a temporary file renamed into place only when complete, so a failed
 * export leaves no partial file that looks finished. */
int export__run(const struct export_opts *o);

/* The format writers: read every record of r, write the whole output to
 * out. Return 0 or a negative errno with *why set to a one-line reason. */
int export_perfetto__write(struct trace_reader *r, FILE *out, const char **why);
int export_json__write(struct trace_reader *r, FILE *out, const char **why);
int export_csv__write(struct trace_reader *r, FILE *out, const char **why);

#endif
