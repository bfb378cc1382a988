// SPDX-License-Identifier: MIT
/* gtrace-bpf export FILE [-f perfetto|json|csv] [-o OUT] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "export/export.h"

static const struct argp_option export_options[] = {
	{ "format", 'f', "FORMAT", 0, "perfetto (default), json or csv", 0 },
	{ "output", 'o', "OUT", 0, "Output file (default: FILE with .pftrace/.json/.csv; - for stdout)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ 0 },
};

static const char export_doc[] =
"Export a trace as a timeline or a table.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf export run.gtrace                 # run.pftrace: open it in ui.perfetto.dev\n"
"  gtrace-bpf export run.gtrace -f json -o -    # Chrome trace JSON on stdout\n"
"  gtrace-bpf export run.gtrace -f csv -o run.csv";

static error_t export_parse(int key, char *arg, struct argp_state *state)
{
	struct export_opts *o = state->input;

	switch (key) {
	case 'f': {
		static const char *const names[] = { "perfetto", "json", "csv", NULL };
		static const enum export_format formats[] = { EXPORT_PERFETTO, EXPORT_JSON, EXPORT_CSV };

		o->format = formats[cli__choose(state, "format", arg, names)];
		break;
	}
	default:
		if (cli__output_arg(key, arg, state, true, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

int cmd_export(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { export_options, export_parse, "FILE", export_doc, NULL, NULL, NULL };
	struct export_opts o = { .format = EXPORT_PERFETTO, .err = stderr };

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &o))
		return 2;
	return export__run(&o);
}
