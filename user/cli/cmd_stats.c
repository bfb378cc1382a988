// SPDX-License-Identifier: MIT
/* gtrace-bpf stats FILE [-r REPORT[,...]] [--format table|csv|json] [--timeunit ns|us|ms|s]
 *                 [--range N] [-o OUT] [--force] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "stats/stats.h"
#include "lib/log.h"

enum { OPT_FORMAT = 0x100, OPT_TIMEUNIT, OPT_RANGE };

static const struct argp_option stats_options[] = {
	{ "report", 'r', "REPORT[,...]", 0, "Reports to print (default: all)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "table (default), csv or json", 0 },
	{ "timeunit", OPT_TIMEUNIT, "UNIT", 0, "ns (default), us, ms or s", 0 },
	{ "range", OPT_RANGE, "N", 0, "Reports of capture range N only (its process, its start "
	  "to its end); wN: of light-mode window N (every process); N is window N in a trace of "
	  "windows and no ranges", 0 },
	{ "output", 'o', "OUT", 0, "Write to OUT (default: stdout, also -); csv: one file "
	  "OUT_<report>.csv per report", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace output files that exist", 0 },
	{ 0 },
};

/* "%s" is the list of reports, from the report table */
static const char stats_doc_fmt[] =
"Summary reports of a trace, modelled on nsys stats.\n"
"\n"
"REPORTS (default: all, in this order):\n"
"  %s\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf stats run.gtrace\n"
"  gtrace-bpf stats run.gtrace -r cuda_api_sum --timeunit us\n"
"  gtrace-bpf stats run.gtrace -r cuda_launch_sum --format csv > launches.csv\n"
"  gtrace-bpf stats run.gtrace --format csv -o run   # run_cuda_api_sum.csv ...\n"
"  gtrace-bpf stats run.gtrace -r capture_sum        # capture ranges, windows\n"
"  gtrace-bpf stats run.gtrace --range 2             # capture range 2 only\n"
"\n"
"Capture ranges count from 1 in the order they opened in the recording, across\n"
"processes; light-mode windows from 1 on their own (dump's \"index\"). In light\n"
"mode the figures of launches and other hot calls are of what the windows or\n"
"the live hot probes saw: marked sampled, never scaled up.";

/* The report names joined with sep, from the report table; NULL when out of
 * memory. */
static char *stats_report_list(const char *sep)
{
	return cli__join(stats_report_names, -1, sep);
}

static error_t stats_parse(int key, char *arg, struct argp_state *state)
{
	struct stats_opts *o = state->input;

	switch (key) {
	case 'r': {
		char bad[64];

		if (stats__check_reports(arg, bad, sizeof(bad))) {
			const char *near = cli__nearest(bad, stats_report_names);
			char *list = near ? NULL : stats_report_list(", ");

			if (near)
				argp_error(state, "unknown report '%s': did you mean %s?", bad, near);
			argp_error(state, "unknown report '%s' (%s)", bad, list ? list : "see --help");
			free(list);
		}
		o->reports = arg;
		break;
	}
	case OPT_FORMAT: {
		static const char *const names[] = { "table", "csv", "json", NULL };
		static const enum stats_format formats[] = { STATS_TABLE, STATS_CSV, STATS_JSON };

		o->format = formats[cli__choose(state, "format", arg, names)];
		break;
	}
	case OPT_RANGE:
		if (stats__check_range(arg))
			argp_error(state, "bad range '%s': give the number of a capture range (1, 2, ...) "
				   "or of a light-mode window (w1, w2, ...)", arg);
		o->range = arg;
		break;
	case OPT_TIMEUNIT: {
		static const char *const units[] = { "ns", "us", "ms", "s", NULL };

		o->timeunit = units[cli__choose(state, "time unit", arg, units)];
		break;
	}
	default:
		if (cli__output_arg(key, arg, state, true, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

int cmd_stats(int argc, char **argv, const char *cmdline)
{
	char *doc = cli__doc_list(stats_doc_fmt, stats_report_names, -1);
	struct argp argp = { stats_options, stats_parse, "FILE", doc, NULL, NULL, NULL };
	struct stats_opts o = { .format = STATS_TABLE, .timeunit = "ns", .out = stdout, .err = stderr,
				.said = stdout };
	int status;

	(void)cmdline;
	if (!doc) {
		pr_err("out of memory");
		return 1;
	}
	status = cli__parse(&argp, argc, argv, &o) ? 2 : stats__run(&o);
	free(doc);
	return status;
}
