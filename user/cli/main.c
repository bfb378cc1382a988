// SPDX-License-Identifier: MIT
/* gtrace-bpf command line: a table of commands selected over argv[1], record
 * the default; each command's options and doc are in cli/cmd_<family>.c. */
#include <argp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

#define GT_VERSION "0.1.0"

const char *argp_program_version = "gtrace-bpf " GT_VERSION;
const char *argp_program_bug_address = NULL;

struct cmd {
	const char *name;	/* argv[1] that selects it */
	int (*fn)(int argc, char **argv, const char *cmdline);
	bool as_program;	/* its messages say argv[0], as the default command's do */
	const char *what;	/* one line for the top-level --help */
};

/* The commands: what selects them and the top-level --help's list (the man
 * page, README and the completion are checked against that list by
 * tests/integration/test_docs.sh). */
static const struct cmd cmds[] = {
	{ "record", cmd_record, true, "record CUDA calls into a trace (the default command)" },
	{ "dump", cmd_dump, false, "a trace's records as JSON lines, or --summary's counts" },
	{ "export", cmd_export, false, "a timeline for Perfetto or Chrome (JSON), or a CSV table" },
	{ "stats", cmd_stats, false, "nsys-style summary reports" },
	{ "analyze", cmd_analyze, false, "what bounds the program, and findings with their fixes" },
	{ "report", cmd_report, false, "one HTML page of a trace (with --compare, of two)" },
	{ "diff", cmd_diff, false, "two traces of a program compared: speedup and what moved" },
	{ "merge", cmd_merge, false, "the CUPTI agent's GPU records linked to their calls" },
	{ "census", cmd_census, false, "which libcuda functions a command calls" },
	{ "daemon", cmd_daemon, false, "record always into a window kept in memory" },
	{ "snapshot", cmd_snapshot, false, "the daemon's window written to a trace file" },
	{ "status", cmd_status, false, "what the daemon is doing" },
};

char *cli__commands_doc(void)
{
	size_t len = 1, i;
	char *doc, *p;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		len += strlen(cmds[i].what) + 16;
	doc = malloc(len);
	if (!doc)
		return NULL;
	for (i = 0, p = doc, *p = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		p += sprintf(p, "%s  %-9s %s", i ? "\n" : "", cmds[i].name, cmds[i].what);
	return doc;
}

int main(int argc, char **argv)
{
	char *cmdline = cli__join_args(argc, argv), prog[64];
	const struct cmd *cmd = NULL;
	int status;
	size_t i;

	/* one scheme for every command: 2 for a bad command line (argp's own
	 * default is 64), 1 for a failure while working */
	argp_err_exit_status = 2;

	for (i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name))
			cmd = &cmds[i];
	}
	if (cmd) {
		/* the command parses argv + 1: its messages say "gtrace-bpf dump: ..." */
		if (cmd->as_program) {
			argv[1] = argv[0];
		} else {
			snprintf(prog, sizeof(prog), "gtrace-bpf %s", cmd->name);
			argv[1] = prog;
		}
		status = cmd->fn(argc - 1, argv + 1, cmdline);
	} else {
		status = cmd_record(argc, argv, cmdline);
	}
	free(cmdline);
	return status;
}
