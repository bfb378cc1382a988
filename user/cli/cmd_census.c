// SPDX-License-Identifier: MIT
/* gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "record/census.h"
#include "lib/log.h"

enum { OPT_LIBCUDA = 0x100, OPT_FUNCTIONS };

static const char census_doc[] =
"Run a command and count every exported cu* function of libcuda it calls,\n"
"marking the ones the recorder does not probe.";

static const struct argp_option census_options[] = {
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "libcuda file to count (default: the driver's)", 0 },
	{ "functions", OPT_FUNCTIONS, "LIST", 0,
	  "Count only these functions (comma-separated): a bare counting uprobe, the floor "
	  "any uprobe tracer pays", 0 },
	{ 0 },
};

struct census_cli {
	struct census_opts o;	/* what census__run() takes */
	struct cli_strs libcuda;/* --libcuda, into o.libcuda */
	bool dashdash;		/* CMD came after "--" */
};

static error_t census_parse(int key, char *arg, struct argp_state *state)
{
	struct census_cli *c = state->input;

	switch (key) {
	case OPT_LIBCUDA:
		cli__push_str(state, &c->libcuda, arg);
		break;
	case OPT_FUNCTIONS:
		c->o.functions = arg;
		break;
	default:
		return cli__cmd_arg(key, state, &c->o.cmd, &c->dashdash);
	}
	return 0;
}

int cmd_census(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { census_options, census_parse, "[--] CMD [ARGS...]", census_doc, NULL, NULL, NULL };
	struct census_cli c = { 0 };
	int status = 2;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &c))
		goto out;
	c.o.libcuda = c.libcuda.v;
	c.o.nlibcuda = c.libcuda.n;
	if (!c.o.cmd)
		pr_err("census needs a command after --");
	else if (!(status = cli__check_cmd(c.o.cmd[0], c.dashdash)))
		status = census__run(&c.o);
out:
	free(c.libcuda.v);
	return status;
}
