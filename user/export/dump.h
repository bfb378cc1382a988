/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf dump`: a trace file as JSON lines, or a summary table. */
#ifndef GTRACE_DUMP_H
#define GTRACE_DUMP_H

#include <stdbool.h>
#include <stdio.h>

struct dump_opts {
	const char *path;	/* the .gtrace file to read */
	bool summary;		/* a per-api table and the counters instead of JSON lines */
	FILE *out;		/* data (JSON lines or the table), NULL = stdout */
	FILE *err;		/* the error or damage warning line, NULL = stderr */
};

/* Returns 0 (also for a truncated file: what could be read is shown and a
 * warning printed), or 1 after printing one error line on err. */
int dump__run(const struct dump_opts *o);

#endif
