// SPDX-License-Identifier: MIT
/* gtrace-bpf dump FILE [--summary] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "export/dump.h"

enum { OPT_SUMMARY = 0x100 };

static const struct argp_option dump_options[] = {
	{ "summary", OPT_SUMMARY, NULL, 0, "Counts per API and the drop counters instead of events", 0 },
	{ 0 },
};

static const char dump_doc[] =
"Print the calls of a trace file, one JSON object per line (docs/FORMAT.md).\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf dump run.gtrace | jq 'select(.type==\"launch\") | .kernel'\n"
"  gtrace-bpf dump --summary run.gtrace";

static error_t dump_parse(int key, char *arg, struct argp_state *state)
{
	struct dump_opts *o = state->input;

	switch (key) {
	case OPT_SUMMARY:
		o->summary = true;
		break;
	default:
		return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

int cmd_dump(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { dump_options, dump_parse, "FILE", dump_doc, NULL, NULL, NULL };
	struct dump_opts o = { .out = stdout, .err = stderr };

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &o))
		return 2;
	return dump__run(&o);
}
