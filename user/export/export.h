/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf export FILE -f perfetto|json|csv [-o OUT]`: timelines and tables
 * from a trace file, streamed (memory bounded apart from name tables). */
#ifndef GTRACE_EXPORT_H
#define GTRACE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_reader;

/* The formats (export/format_table.h). */
enum export_format {
#define EXPORT_FORMAT(name, id, ext, writer, what) EXPORT_##name,
#include "export/format_table.h"
#undef EXPORT_FORMAT
};

/* The formats' names by enum export_format ("perfetto", ...), NULL-ended. */
const char *const *export__format_names(void);
/* The default output's extension of format f (".pftrace", ...), NULL for none. */
const char *export__format_ext(enum export_format f);

struct export_opts {
	const char *path;		/* input trace */
	const char *output;		/* NULL: input name with the format's extension; "-": stdout */
	enum export_format format;
	bool force;			/* replace an existing output */
	uint64_t split;			/* -f perfetto: parts of at most this many bytes, 0: one file */
	FILE *err;			/* diagnostics (one line on failure) */
	FILE *said;			/* where the path written is said, NULL: nowhere */
};

/* The format an output name's extension says (.pftrace, .perfetto-trace,
 * .json, .csv), or -1 when it says none. */
int export__format_of_name(const char *name);

/* An example of a finding of `gtrace-bpf analyze`, for `export --findings`:
 * the command line turns the analysis' findings into these (export does not
 * include the analysis).  The Perfetto and JSON writers draw them, after the
 * trace's own events, on a lane per (pid, rule) under the process, "Findings:
 * RULE": a slice per example (an instant when it has no duration or would
 * overlap the one before), named "RULE: WHAT", with the category "finding"
 * and the finding's severity, summary, fix and cost as arguments. */
struct export_finding {
	uint32_t pid, tid;	/* the process; the example's thread (0: none) */
	uint64_t ts, dur;	/* CLOCK_MONOTONIC ns; dur 0: an instant */
	const char *rule;	/* "launch_bound" */
	const char *severity;	/* "low", "medium", "high" */
	const char *summary;	/* the finding's line */
	const char *fix;	/* its suggested fix */
	const char *what;	/* the example: a kernel or api name, "host gap" */
	uint64_t cost_ns;	/* what the finding costs */
};

/* The findings the next export draws; v[0..n) sorted by pid, rule, then
 * ts, alive until the export is done.  NULL, 0: none (the default). */
void export__set_findings(const struct export_finding *v, size_t n);
/* What export__set_findings set. */
const struct export_finding *export__findings(size_t *n);

/* Returns the exit status: 0, or 1 after one line on o->err. Output goes to
 * a temporary file renamed into place only when complete, so a failed
 * export leaves no partial file that looks finished. */
int export__run(const struct export_opts *o);

/* The format writers: read every record of r, write the whole output to
 * out. Return 0 or a negative errno with *why set to a one-line reason. */
#define EXPORT_FORMAT(name, id, ext, writer, what) \
	int writer(struct trace_reader *r, FILE *out, const char **why);
#include "export/format_table.h"
#undef EXPORT_FORMAT

/* The smallest --split: a part repeats every track's descriptor. */
#define EXPORT_SPLIT_MIN	(1ull << 20)

/* A Perfetto timeline in parts (export --split): each part a trace of its
 * own, time-contiguous, with the clock, the tracks and the names it needs.
 * next closes the part written to *f (complete) and opens the next in *f;
 * returns 0 or a negative errno with *why set. */
struct export_parts {
	uint64_t size;			/* a part's bytes at most */
	int (*next)(void *ctx, FILE **f, const char **why);
	void *ctx;
	uint64_t flows_cut;		/* out: arrows whose ends fell in two parts */
};
/* export_perfetto__write in parts: the first part is out. */
int export_perfetto__write_parts(struct trace_reader *r, FILE *out, struct export_parts *parts,
				 const char **why);

#endif
