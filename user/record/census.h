/* SPDX-License-Identifier: MIT */
/* `gtrace-bpf census -- CMD`: counts every exported cu* function of libcuda
 * that CMD calls, and says which of them the recorder does not probe. For
 * checking the probe list against a driver and a framework. */
#ifndef GTRACE_CENSUS_H
#define GTRACE_CENSUS_H

#include <stddef.h>

struct census_opts {
	const char **libcuda;	/* extra libcuda files */
	size_t nlibcuda;
	char **cmd;		/* command to run, NULL-terminated */
	const char *functions;	/* comma-separated names to count, NULL = every cu* export */
};

/* Returns the exit status: CMD's, or 1 on error. */
int census__run(const struct census_opts *o);

#endif
