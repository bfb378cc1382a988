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
};

static const struct cmd cmds[] = {
	{ "record", cmd_record, true },
	{ "dump", cmd_dump, false },
	{ "export", cmd_export, false },
	{ "stats", cmd_stats, false },
	{ "analyze", cmd_analyze, false },
	{ "report", cmd_report, false },
	{ "diff", cmd_diff, false },
	{ "merge", cmd_merge, false },
	{ "census", cmd_census, false },
	{ "daemon", cmd_daemon, false },
	{ "snapshot", cmd_snapshot, false },
	{ "status", cmd_status, false },
};

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
