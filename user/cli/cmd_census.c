// SPDX-License-Identifier: MIT
/* gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "record/census.h"

enum { OPT_LIBCUDA = 0x100, OPT_FUNCTIONS };

static const char census_doc[] =
"Run a command and count every exported cu* function of libcuda it calls,\n"
"marking the ones the recorder does not probe.\n"
"\n"
"USAGE: gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...]";

static const struct argp_option census_options[] = {
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "libcuda file to count (default: the driver's)", 0 },
	{ "functions", OPT_FUNCTIONS, "LIST", 0,
	  "Count only these functions (comma-separated): a bare counting uprobe, the floor "
	  "any uprobe tracer pays", 0 },
	{ 0 },
};

static error_t census_parse(int key, char *arg, struct argp_state *state)
{
	struct census_opts *o = state->input;
	void *p;

	switch (key) {
	case OPT_LIBCUDA:
		p = realloc(o->libcuda, (o->nlibcuda + 1) * sizeof(*o->libcuda));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->libcuda = p;
		o->libcuda[o->nlibcuda++] = arg;
		break;
	case OPT_FUNCTIONS:
		o->functions = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (put the command after --)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_census(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { census_options, census_parse, NULL, census_doc, NULL, NULL, NULL };
	struct census_opts o = { 0 };
	int nopt = cli__split_cmd(argc, argv, &o.cmd), status;

	(void)cmdline;
	/* a bad command line (2) still frees the --libcuda list */
	status = 2;
	if (cli__parse(&argp, nopt, argv, &o))
		goto out;
	if (!o.cmd || !o.cmd[0]) {
		fprintf(stderr, "gtrace-bpf: census needs a command after --\n");
		goto out;
	}
	status = census__run(&o);
out:
	free(o.libcuda);
	return status;
}
