// SPDX-License-Identifier: MIT
/* gtrace-bpf export FILE [-f perfetto|json|csv] [-o OUT] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "export/export.h"

enum { OPT_FORCE = 0x100 };

static const struct argp_option export_options[] = {
	{ "format", 'f', "FORMAT", 0, "perfetto (default), json or csv", 0 },
	{ "output", 'o', "OUT", 0, "Output file (default: FILE with .pftrace/.json/.csv; - for stdout)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
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
	case 'f':
		if (!strcmp(arg, "perfetto"))
			o->format = EXPORT_PERFETTO;
		else if (!strcmp(arg, "json"))
			o->format = EXPORT_JSON;
		else if (!strcmp(arg, "csv"))
			o->format = EXPORT_CSV;
		else
			argp_error(state, "unknown format '%s' (perfetto, json or csv)", arg);
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	default:
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
