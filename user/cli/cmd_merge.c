// SPDX-License-Identifier: MIT
/* gtrace-bpf merge TRACE SPOOL... [-o OUT] [--force] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/log.h"
#include "merge/merge.h"

enum { OPT_FORCE = 0x100 };

static const struct argp_option merge_options[] = {
	{ "output", 'o', "OUT", 0, "Merged trace (default: TRACE with .gtrace replaced by _merged.gtrace)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ "quiet", 'q', NULL, 0, "No summary line", 0 },
	{ 0 },
};

static const char merge_doc[] =
"Merge the GPU-side records of the CUPTI agent into a trace: every kernel,\n"
"copy and set linked to the libcuda call that caused it. `gtrace-bpf --cupti`\n"
"does this by itself; this command is for spool files kept or copied by hand.\n"
"\n"
"SPOOL: a gtrace-cupti.PID.spool file, or a directory (every *.spool in it).\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf merge run.gtrace /tmp/gtrace-cupti.Ab12Cd   # run_merged.gtrace\n"
"  gtrace-bpf merge run.gtrace gtrace-cupti.4242.spool -o run+gpu.gtrace";

struct merge_cli {
	struct merge_opts o;
	const char **spools;
	size_t nspools;
	bool quiet;
};

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_cli *c = state->input;
	void *p;

	switch (key) {
	case 'o':
		if (!arg[0])
			argp_error(state, "empty output name");
		/* a merged trace is a trace: written in place, not streamed */
		if (!strcmp(arg, "-"))
			argp_error(state, "a trace cannot be written to standard output (-o -): "
				   "give a file name");
		c->o.output = arg;
		break;
	case OPT_FORCE:
		c->o.force = true;
		break;
	case 'q':
		c->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (!c->o.trace) {
			c->o.trace = arg;
			break;
		}
		p = realloc(c->spools, (c->nspools + 1) * sizeof(*c->spools));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		c->spools = p;
		c->spools[c->nspools++] = arg;
		break;
	case ARGP_KEY_END:
		if (!c->o.trace)
			argp_error(state, "no trace file given");
		if (!c->nspools)
			argp_error(state, "no spool file or directory given");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_merge(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { merge_options, merge_parse, "TRACE SPOOL...", merge_doc, NULL, NULL, NULL };
	struct merge_cli c = { 0 };
	char *out = NULL;
	int err;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &c)) {
		free(c.spools);
		return 2;
	}
	if (!c.o.output) {
		out = merge__default_output(c.o.trace);
		if (!out) {
			fprintf(stderr, "gtrace-bpf: out of memory\n");
			free(c.spools);
			return 1;
		}
		c.o.output = out;
	}
	c.o.spools = c.spools;
	c.o.nspools = c.nspools;
	if (c.quiet)
		gt_log_level = GT_LOG_WARN;
	err = merge__run(&c.o, NULL);
	free(out);
	free(c.spools);
	return err ? 1 : 0;
}
