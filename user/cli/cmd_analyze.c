// SPDX-License-Identifier: MIT
/* gtrace-bpf analyze FILE [-p PID] [--range N] [--sms N] [--format table|json|md]
 *                   [-o OUT] [--force] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "analyze/analyze.h"
#include "stats/stats.h"
#include "lib/log.h"

enum { OPT_FORMAT = 0x100, OPT_RANGE, OPT_SMS, OPT_RULES };

static const struct argp_option analyze_options[] = {
	{ "pid", 'p', "PID", 0, "Only this process", 0 },
	{ "range", OPT_RANGE, "N", 0, "Only capture range N (its process, its start to its end); "
	  "wN: light-mode window N (every process); N is window N in a trace of windows and no "
	  "ranges", 0 },
	{ "sms", OPT_SMS, "N", 0, "The GPU's number of SMs, for small_grid (default: the trace's, "
	  "from NVML at recording, the smallest GPU's when they differ; else assumed 40)", 0 },
	{ "rules", OPT_RULES, "LIST", 0, "The findings of these rules only (comma-separated ids, "
	  "RULES below); the answers stay whole", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "table (default), json or md", 0 },
	{ "output", 'o', "OUT", 0, "Write to OUT (default: stdout, also -)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace an output file that exists", 0 },
	{ 0 },
};

/* "%s" is the list of rules, from the rule table (analyze/rule_table.h) */
static const char analyze_doc_fmt[] =
"Answers three questions of a trace, per process and capture range: is the GPU\n"
"busy or waiting (and what for), what bounds the program (compute, memory,\n"
"communication, transfers, launch overhead, the host), and is there enough\n"
"parallelism; then findings: rules with stable ids, each with a severity, what\n"
"it costs, examples and a fix.\n"
"\n"
"RULES:\n"
"  %s\n"
"\n"
"GPU busy time comes from the GPU records of a merged trace (record with\n"
"--cupti); without them it is estimated from the host's waits, and says so.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf analyze run.gtrace\n"
"  gtrace-bpf analyze run.gtrace -p 4242 --format json > findings.json\n"
"  gtrace-bpf analyze run.gtrace --range 2 --sms 132\n"
"  gtrace-bpf analyze run.gtrace --rules sync_in_loop,cuda_api_sync\n"
"  gtrace-bpf analyze run.gtrace --format md -o analysis.md";

static error_t analyze_parse(int key, char *arg, struct argp_state *state)
{
	struct analyze_run_opts *o = state->input;
	uint64_t v;

	switch (key) {
	case 'p':
		if (cli__parse_u64(arg, &v, false) || !v || v > UINT32_MAX)
			argp_error(state, "bad pid '%s'", arg);
		o->core.pid = (uint32_t)v;
		break;
	case OPT_SMS:
		if (cli__parse_u64(arg, &v, false) || !v || v > 100000)
			argp_error(state, "bad SM count '%s': give a number from 1", arg);
		o->core.sm_count = (uint32_t)v;
		break;
	case OPT_RULES: {
		char *copy = strdup(arg), *tok, *save = NULL;

		if (!copy)
			argp_failure(state, 1, ENOMEM, "out of memory");
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int r = az_rule__by_id(tok);

			if (r < 0) {
				const char *ids[AZ_RULE__COUNT + 1], *near;

				for (int i = 0; i < AZ_RULE__COUNT; i++)
					ids[i] = az_rule__id(i);
				ids[AZ_RULE__COUNT] = NULL;
				near = cli__nearest(tok, ids);
				argp_error(state, "unknown rule '%s' in --rules%s%s%s", tok,
					   near ? ": did you mean " : " (analyze --help lists them)",
					   near ? near : "", near ? "?" : "");
			}
			o->core.rules |= 1u << r;
		}
		free(copy);
		if (!o->core.rules)
			argp_error(state, "--rules needs at least one rule (analyze --help lists them)");
		break;
	}
	case OPT_RANGE:
		if (stats__check_range(arg))
			argp_error(state, "bad range '%s': give the number of a capture range (1, 2, ...) "
				   "or of a light-mode window (w1, w2, ...)", arg);
		o->range = arg;
		break;
	case OPT_FORMAT: {
		static const char *const names[] = { "table", "json", "md", NULL };
		static const enum analyze_format formats[] = { ANALYZE_TABLE, ANALYZE_JSON, ANALYZE_MD };

		o->format = formats[cli__choose(state, "format", arg, names)];
		break;
	}
	default:
		if (cli__output_arg(key, arg, state, true, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

/* The doc with every rule of the table, one a line; NULL when out of memory. */
static char *analyze_doc(void)
{
	const char *ids[AZ_RULE__COUNT];

	for (int i = 0; i < AZ_RULE__COUNT; i++)
		ids[i] = az_rule__id(i);
	return cli__doc_list(analyze_doc_fmt, ids, AZ_RULE__COUNT);
}

int cmd_analyze(int argc, char **argv, const char *cmdline)
{
	char *doc = analyze_doc();
	struct argp argp = { analyze_options, analyze_parse, "FILE", doc, NULL, NULL, NULL };
	struct analyze_run_opts o = { .format = ANALYZE_TABLE, .out = stdout, .err = stderr,
				      .core = { .steady = true } };
	int status;

	(void)cmdline;
	if (!doc) {
		pr_err("out of memory");
		return 1;
	}
	status = cli__parse(&argp, argc, argv, &o) ? 2 : analyze__run(&o);
	free(doc);
	return status;
}
