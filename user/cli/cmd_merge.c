// SPDX-License-Identifier: MIT
/* gtrace-bpf merge TRACE [SPOOL...] [-o OUT] [--force]
 * gtrace-bpf merge --hosts TRACE TRACE... -o OUT [--force] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/log.h"
#include "format/trace_file.h"
#include "merge/merge.h"
#include "merge/hosts.h"

enum { OPT_HOSTS = 0x100 };

static const struct argp_option merge_options[] = {
	{ "output", 'o', "OUT", 0, "Merged trace (default: TRACE with .gtrace replaced by _merged.gtrace)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ "quiet", 'q', NULL, 0, "No summary line", 0 },
	{ "hosts", OPT_HOSTS, NULL, 0,
	  "The TRACEs are one job's hosts' (each host's recording): one job trace of them on one clock, "
	  "each host's aligned by its wall-clock pairs, then on the ends of the NCCL collectives they "
	  "share (-o needed)", 0 },
	{ 0 },
};

static const char merge_doc[] =
"Merge the GPU-side records of the CUPTI agent into a trace: every kernel,\n"
"copy and set linked to the libcuda call that caused it. `gtrace-bpf --cupti`\n"
"does this by itself; this command is for spool files kept or copied by hand.\n"
"\n"
"SPOOL: a gtrace-cupti.PID.spool file, or a directory (every *.spool in it);\n"
"none for a snapshot of gtrace-bpf daemon --cupti that was written unmerged\n"
"(its options say cupti=inline: it holds the GPU-side records itself).\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf merge run.gtrace /tmp/gtrace-cupti.Ab12Cd   # run_merged.gtrace\n"
"  gtrace-bpf merge run.gtrace gtrace-cupti.4242.spool -o run+gpu.gtrace\n"
"  gtrace-bpf merge --hosts node0.gtrace node1.gtrace -o job.gtrace";

struct merge_cli {
	struct merge_opts o;	/* what merge__run() takes */
	struct cli_strs spools;	/* the SPOOL arguments, into o.spools */
	bool quiet;		/* -q: no summary line */
	bool hosts;		/* --hosts: the arguments are hosts' traces */
};

/* Whether path is a trace that holds the agent's records itself (a daemon's
 * snapshot left unmerged: cupti=inline), so that it needs no SPOOL. */
static bool holds_gpu_records(const char *path)
{
	struct trace_reader *r;
	const char *msg;
	bool inl;

	if (trace_reader__open(path, &r, &msg))
		return false;
	inl = gt_file_info__has_option(trace_reader__info(r), "cupti", "inline");
	trace_reader__close(r);
	return inl;
}

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_cli *c = state->input;

	switch (key) {
	case 'q':
		c->quiet = true;
		break;
	case OPT_HOSTS:
		c->hosts = true;
		break;
	case ARGP_KEY_ARG:
		if (!c->o.trace) {
			c->o.trace = arg;
			break;
		}
		cli__push_str(state, &c->spools, arg);
		break;
	case ARGP_KEY_END:
		if (!c->o.trace)
			argp_error(state, "no trace file given");
		if (c->hosts && (!c->spools.n || !c->o.output))
			argp_error(state, "--hosts: give two traces or more, one per host, and -o OUT");
		if (!c->hosts && !c->spools.n && !holds_gpu_records(c->o.trace))
			argp_error(state, "no spool file or directory given (only a daemon's snapshot left "
				   "unmerged, cupti=inline, holds its GPU records itself)");
		break;
	default:
		return cli__output_arg(key, arg, state, false, &c->o.output, &c->o.force);
	}
	return 0;
}

int cmd_merge(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { merge_options, merge_parse, "TRACE [SPOOL...]\n--hosts TRACE TRACE... -o OUT", merge_doc, NULL, NULL, NULL };
	struct merge_cli c = { 0 };
	struct merge_result res;
	char *out = NULL;
	int status = 1, err;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &c)) {
		status = 2;
		goto out;
	}
	if (!c.o.output && !(c.o.output = out = merge__default_output(c.o.trace))) {
		pr_err("out of memory");
		goto out;
	}
	c.o.spools = c.spools.v;
	c.o.nspools = c.spools.n;
	if (c.quiet)
		gt_log_level = GT_LOG_WARN;
	if (c.hosts) {
		const char **all = calloc(c.spools.n + 1, sizeof(*all));
		struct hosts_opts ho = { .traces = all, .n = c.spools.n + 1, .output = c.o.output,
					 .force = c.o.force };

		if (!all) {
			pr_err("out of memory");
			goto out;
		}
		all[0] = c.o.trace;
		for (size_t i = 0; i < c.spools.n; i++)
			all[i + 1] = c.spools.v[i];
		status = merge__hosts(&ho, NULL) ? 1 : 0;
		free(all);
		goto out;
	}
	err = merge__run(&c.o, &res);
	/* the readers' rule: what was read is merged, a damaged input (the
	 * trace, a spool cut short or with bad records) still exits 1 */
	status = err || res.trace_damaged || res.spool_cut || res.spool_bad ? 1 : 0;
out:
	free(out);
	free(c.spools.v);
	return status;
}
