/* SPDX-License-Identifier: MIT */
/* The recorder's output file: -o, or a default name in the current
 * directory that says what was traced, when, and which take it is. */
#ifndef GTRACE_RECORD_OUTPUT_H
#define GTRACE_RECORD_OUTPUT_H

#include <stddef.h>
#include "record/record.h"
#include "format/trace_file.h"

/* Creates the trace file: o->output (replaced with o->force), else
 * NAME_SCENARIO_YYYYMMDD_vN.gtrace, NAME from CMD or the first pid's comm
 * ("system" otherwise), N the first number not taken. Its name goes to path
 * (len bytes). Returns 0 or a negative errno with one error line printed. */
int record_output__create(const struct record_opts *o, const struct gt_file_info *info, char *path,
			  size_t len, struct trace_writer **w);

#endif
