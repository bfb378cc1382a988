// SPDX-License-Identifier: MIT
/* gtrace-bpf report FILE [--compare BASELINE] [-o OUT] [--force] [--max-events N] */
#include <argp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include "cli/cli.h"
#include "report/report.h"

enum { OPT_COMPARE = 0x100, OPT_MAX_EVENTS };

static const struct argp_option report_options[] = {
	{ "compare", OPT_COMPARE, "BASELINE", 0, "Compare with the trace BASELINE as gtrace-bpf diff "
	  "BASELINE FILE does", 0 },
	{ "output", 'o', "OUT", 0, "Output file (default: FILE with .html for .gtrace)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ "max-events", OPT_MAX_EVENTS, "N", 0, "Events drawn one by one on the timeline, the longest "
	  "(default 250000); the others as the share of time they cover", 0 },
	{ 0 },
};

static const char report_doc[] =
"Write one HTML file that shows a trace with no network: the answers and\n"
"findings, a zoomable timeline (threads with their CUDA calls, waits and\n"
"off-CPU time; GPU streams with kernels and copies; NVTX; capture ranges),\n"
"GPU utilization, top kernels, synchronization waits, copies, processes,\n"
"and with --compare what changed since the baseline. Its tables are those\n"
"of gtrace-bpf stats. The file is the owner's only (0600), like the trace.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf report run.gtrace                  # run.html: open it in a browser\n"
"  gtrace-bpf report run_merged.gtrace -o step.html\n"
"  gtrace-bpf report new.gtrace --compare old.gtrace -o change.html";

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;
	uint64_t n;

	switch (key) {
	case OPT_COMPARE:
		o->compare = arg;
		break;
	case OPT_MAX_EVENTS:
		if (cli__parse_u64(arg, &n, false) || n < 1 || n > 100000000)
			argp_error(state, "bad --max-events '%s': give a number of events from 1 to "
				   "100000000", arg);
		o->budget = (size_t)n;
		break;
	default:
		/* a page is a file, not a stream: no "-" */
		if (cli__output_arg(key, arg, state, false, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

int cmd_report(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { report_options, report_parse, "FILE", report_doc, NULL, NULL, NULL };
	struct report_opts o = { .err = stderr, .said = stdout };

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &o))
		return 2;
	return report__run(&o);
}
