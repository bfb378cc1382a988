// SPDX-License-Identifier: MIT
/* gtrace-bpf diff BASELINE OPTIMIZED [--iter NAME] [--format table|json|md] */
#include <argp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "diff/diff.h"

enum { OPT_FORMAT = 0x100, OPT_ITER, OPT_RANK };

static const struct argp_option diff_options[] = {
	{ "iter", OPT_ITER, "NAME", 0, "What an iteration is: an NVTX range name (step: \"step 1\", "
	  "\"step 2\", ...; nvtx:NAME for a name below), capture (capture ranges), graph (launches of "
	  "a CUDA graph), sync (the calls between recurring synchronizations), kernels (a repeating "
	  "kernel sequence), none (the whole run); default: the first of these both traces have "
	  "(a library's NVTX ranges only when named)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "table (default), json or md", 0 },
	{ "rank", OPT_RANK, "R", 0, "The process of rank R in each trace (a job trace of merge --hosts, "
	  "or one host's ranks: RANK from the environment); default: the busiest, said", 0 },
	{ "pid", 'p', "PID[,PID]", 0, "The process compared in a trace of several: the first of the "
	  "baseline, the second of the optimized (one: both); default: the one with the most calls "
	  "and GPU work", 0 },
	{ "output", 'o', "OUT", 0, "Write the diff to OUT (- for stdout, the default)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ 0 },
};

static const char diff_doc[] =
"Compares two traces of a program: the speedup of the optimized run over the\n"
"baseline, with a 95 % interval, and what moved per kernel and per API.\n"
"\n"
"Files named NAME_baseline.gtrace and NAME_optimized.gtrace are taken for what\n"
"they say in either order; otherwise the first is the baseline.\n"
"\n"
"The speedup is the baseline's median iteration time over the optimized one's,\n"
"with a percentile bootstrap interval over the iterations (2000 resamples, seed\n"
"1: the same traces give the same interval); the same for GPU busy time per\n"
"iteration when both traces have GPU records. Without iterations in both, the\n"
"whole runs are compared, without an interval. Kernels and APIs are added,\n"
"removed, faster, slower or unchanged (inside the noise of the iterations),\n"
"sorted by how much they moved the time per iteration.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf diff run_baseline.gtrace run_optimized.gtrace\n"
"  gtrace-bpf diff a.gtrace b.gtrace --iter step\n"
"  gtrace-bpf diff a.gtrace b.gtrace --iter kernels --format json > diff.json\n"
"  gtrace-bpf diff a.gtrace b.gtrace --format md >> REPORT.md\n"
"  gtrace-bpf diff a.gtrace b.gtrace -p 4242,5151 -o diff.txt  # one rank each";

struct diff_args {
	struct diff_opts o;
	int nfiles;
};

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;

	switch (key) {
	case OPT_FORMAT: {
		static const char *const names[] = { "table", "json", "md", NULL };
		static const enum diff_format formats[] = { DIFF_TABLE, DIFF_JSON, DIFF_MD };

		a->o.format = formats[cli__choose(state, "format", arg, names)];
		return 0;
	}
	case OPT_ITER:
		if (diff__check_iter(arg))
			argp_error(state, "bad --iter '%s': give an NVTX range name, capture, graph, "
				   "sync, kernels or none", arg);
		a->o.iter = arg;
		return 0;
	case 'p': {
		uint64_t x, y = 0;
		char *comma = strchr(arg, ',');

		if (comma)
			*comma = '\0';
		if (cli__parse_u64(arg, &x, false) || !x || x > UINT32_MAX ||
		    (comma && (cli__parse_u64(comma + 1, &y, false) || !y || y > UINT32_MAX)))
			argp_error(state, "invalid -p '%s%s%s' (PID, or PID,PID: baseline's, optimized's)", arg,
				   comma ? "," : "", comma ? comma + 1 : "");
		a->o.pid_a = (uint32_t)x;
		a->o.pid_b = comma ? (uint32_t)y : (uint32_t)x;
		return 0;
	}
	case OPT_RANK: {
		uint64_t x;

		if (cli__parse_u64(arg, &x, false) || x > INT32_MAX)
			argp_error(state, "invalid --rank '%s' (a rank: 0, 1, ...)", arg);
		a->o.by_rank = true;
		a->o.rank = (int32_t)x;
		return 0;
	}
	case ARGP_KEY_ARG:
		if (a->nfiles == 2)
			argp_error(state, "two traces to compare, not more");
		if (a->nfiles++)
			a->o.b = arg;
		else
			a->o.a = arg;
		return 0;
	case ARGP_KEY_END:
		if (a->nfiles < 2)
			argp_error(state, a->nfiles ? "one trace given: diff compares two (BASELINE OPTIMIZED)"
						    : "no trace given: diff compares two (BASELINE OPTIMIZED)");
		if (a->o.by_rank && a->o.pid_a)
			argp_error(state, "-p and --rank both say which process: give one");
		return 0;
	default:
		return cli__output_arg(key, arg, state, true, &a->o.output, &a->o.force);
	}
}

int cmd_diff(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { diff_options, diff_parse, "BASELINE OPTIMIZED", diff_doc, NULL, NULL, NULL };
	struct diff_args a = { .o = { .format = DIFF_TABLE, .out = stdout, .err = stderr } };

	(void)cmdline;
	return cli__parse(&argp, argc, argv, &a) ? 2 : diff__run(&a.o);
}
