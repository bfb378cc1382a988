/* SPDX-License-Identifier: MIT */
/* The recording options record and daemon share: one argp child. */
#ifndef GTRACE_CLI_RECORD_OPTS_H
#define GTRACE_CLI_RECORD_OPTS_H

#include <argp.h>
#include <stdbool.h>
#include "cli/cli.h"
#include "record/record.h"

/* What the shared options fill: o (the command's record_opts), and what
 * the command checks or copies into o after parsing. */
struct record_common {
	struct record_opts *o;
	struct cli_strs libcuda;	/* --libcuda, into o->libcuda */
	int verbose;			/* -v count: the log tier above info */
	bool quiet;			/* -q: warnings and errors only */
	bool window_set;		/* --light-window given */
	bool gpum_set;			/* --gpu-metrics given */
	bool detach_set;		/* --cupti-detach given */
	bool stacks_set;		/* --stacks given */
	bool daemon;			/* the daemon's options (set by it before parsing) */
};

/* The child: the parent's parser sets state->child_inputs[i] to its struct
 * record_common at ARGP_KEY_INIT. */
extern const struct argp record_common_argp;

/* After parsing: --libcuda into o, the default of --gpu-metrics (off in
 * light mode, else GPU_METRICS_HZ_DEFAULT) and of --stacks (all in full
 * mode, sync in light mode and the daemon), and the checks of the options
 * together. Returns 0, or 2 after one line on stderr. */
int record_common__finish(struct record_common *c);

#endif
