// SPDX-License-Identifier: MIT
/* gtrace-bpf command line: a table of commands selected over argv[1], record
 * the default; each command's options and doc are in cli/cmd_<family>.c. */
#include <argp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "cli/cli.h"
#include "lib/log.h"
#include "lib/owner.h"

#define GT_VERSION "0.1.0"

const char *argp_program_version = "gtrace-bpf " GT_VERSION;
const char *argp_program_bug_address = NULL;

enum cmd_group { G_RECORD, G_READ, G_ANALYSE, G_DAEMON, G_HELP, G__COUNT };

static const char *const group_names[G__COUNT] = {
	"Record", "Read a trace", "Analyse", "Daemon (always on)", "Help",
};

struct cmd {
	const char *name;	/* argv[1] that selects it */
	int (*fn)(int argc, char **argv, const char *cmdline);
	bool as_program;	/* its messages say argv[0], as the default command's do */
	enum cmd_group group;	/* where the overview lists it */
	const char *what;	/* one line for the overview */
};

static int cmd_help(int argc, char **argv, const char *cmdline);

/* The commands: what selects them and the overview's list (the man page,
 * README and the completion are checked against that list by
 * tests/integration/test_docs.sh). */
static const struct cmd cmds[] = {
	{ "record", cmd_record, true, G_RECORD, "record CUDA calls into a trace (the default command)" },
	{ "census", cmd_census, false, G_RECORD, "which libcuda functions a command calls" },
	{ "dump", cmd_dump, false, G_READ, "a trace's records as JSON lines, or --summary's counts" },
	{ "export", cmd_export, false, G_READ, "a timeline for Perfetto or Chrome (JSON), or a CSV table" },
	{ "stats", cmd_stats, false, G_READ, "nsys-style summary reports" },
	{ "merge", cmd_merge, false, G_READ, "the CUPTI agent's GPU records linked to their calls" },
	{ "analyze", cmd_analyze, false, G_ANALYSE, "what bounds the program, and findings with their fixes" },
	{ "report", cmd_report, false, G_ANALYSE, "one HTML page of a trace (with --compare, of two)" },
	{ "diff", cmd_diff, false, G_ANALYSE, "two traces of a program compared: speedup and what moved" },
	{ "daemon", cmd_daemon, false, G_DAEMON, "record always into a window kept in memory" },
	{ "snapshot", cmd_snapshot, false, G_DAEMON, "the daemon's window written to a trace file" },
	{ "status", cmd_status, false, G_DAEMON, "what the daemon is doing" },
	{ "attach", cmd_attach, false, G_DAEMON, "the daemon records a running process' GPU side for a while" },
	{ "help", cmd_help, false, G_HELP, "this overview, or a command's options (help COMMAND)" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

char *cli__commands_doc(void)
{
	size_t len = 1, i;
	char *doc, *p;
	int g;

	for (i = 0; i < NCMDS; i++)
		len += strlen(cmds[i].what) + 16;
	for (g = 0; g < G__COUNT; g++)
		len += strlen(group_names[g]) + 4;
	doc = malloc(len);
	if (!doc)
		return NULL;
	*doc = '\0';
	p = doc;
	for (g = 0; g < G__COUNT; g++) {
		p += sprintf(p, "%s%s:", g ? "\n" : "", group_names[g]);
		for (i = 0; i < NCMDS; i++)
			if (cmds[i].group == (enum cmd_group)g)
				p += sprintf(p, "\n  %-9s %s", cmds[i].name, cmds[i].what);
	}
	return doc;
}

/* The overview: bare gtrace-bpf and `gtrace-bpf help`. */
static void overview(FILE *f)
{
	char *doc = cli__commands_doc();

	fprintf(f, "gtrace-bpf: the CUDA calls and GPU work of Linux processes, traced with eBPF.\n\n"
		   "Usage: gtrace-bpf [record] [OPTIONS] --all | -p PID[,PID...] | --cgroup PATH\n"
		   "       gtrace-bpf [record] [OPTIONS] [--] CMD [ARGS...]\n"
		   "       gtrace-bpf COMMAND [OPTIONS] ...\n"
		   "       gtrace-bpf help [COMMAND]\n\n%s\n\n"
		   "gtrace-bpf help COMMAND (or gtrace-bpf COMMAND --help) lists a command's\n"
		   "options; gtrace-bpf --help is record's, with examples.\n",
		doc ? doc : "");
	free(doc);
}

static const struct cmd *cmd_named(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* help [COMMAND]: the overview, or COMMAND --help. */
static int cmd_help(int argc, char **argv, const char *cmdline)
{
	const struct cmd *c;
	char prog[64], help[] = "--help", *av[3];

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		overview(stdout);
		return 0;
	}
	if (argc > 2 || !(c = cmd_named(argv[1]))) {
		pr_err("help: '%s' is not a command: gtrace-bpf help lists them", argc > 2 ? argv[2] : argv[1]);
		return 2;
	}
	snprintf(prog, sizeof(prog), c->as_program ? "gtrace-bpf" : "gtrace-bpf %s", c->name);
	av[0] = prog;
	av[1] = help;
	av[2] = NULL;
	return c->fn(2, av, cmdline);
}

/* A first word that is no command, a program to record, unless it looks
 * like a mistyped command or a trace file: then one line and true. */
static bool refused_word(const char *w)
{
	size_t n = strlen(w);
	const char *best;

	if (n > 7 && !strcmp(w + n - 7, ".gtrace")) {
		pr_err("'%s' is a trace, not a command: give the command first, e.g. gtrace-bpf stats %s "
		       "(to run it as a program, write gtrace-bpf -- %s)", w, w, w);
		return true;
	}
	const char *names[NCMDS + 1];

	for (size_t i = 0; i < NCMDS; i++)
		names[i] = cmds[i].name;
	names[NCMDS] = NULL;
	best = cli__nearest(w, names);
	if (best) {
		pr_err("'%s' is not a command: did you mean %s? (to run the program, write gtrace-bpf -- %s ...)",
		       w, best, w);
		return true;
	}
	return false;
}

/* Help text is wrapped to the terminal (80 columns when it is none): argp
 * takes its right margin from ARGP_HELP_FMT, which a user's own setting
 * overrides. */
static void help_width(void)
{
	struct winsize ws;
	unsigned cols = 80;
	char fmt[32];

	if (getenv("ARGP_HELP_FMT"))
		return;
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 80)
		cols = ws.ws_col > 160 ? 160 : ws.ws_col;
	snprintf(fmt, sizeof(fmt), "rmargin=%u", cols);
	setenv("ARGP_HELP_FMT", fmt, 0);
}

int main(int argc, char **argv)
{
	char *cmdline = cli__join_args(argc, argv), prog[64];
	const struct cmd *cmd = NULL;
	int status;

	/* one scheme for every command: 2 for a bad command line (argp's own
	 * default is 64), 1 for a failure while working */
	argp_err_exit_status = 2;
	help_width();
	/* under sudo, what is written is the user's and -- CMD runs as them;
	 * the daemon's files stay root's unless its --owner says */
	if (argc < 2 || strcmp(argv[1], "daemon"))
		owner__from_sudo();

	if (argc < 2) {
		overview(stdout);
		free(cmdline);
		return 0;
	}
	cmd = cmd_named(argv[1]);
	if (cmd) {
		/* the command parses argv + 1: its messages say "gtrace-bpf dump: ..." */
		if (cmd->as_program) {
			argv[1] = argv[0];
		} else {
			snprintf(prog, sizeof(prog), "gtrace-bpf %s", cmd->name);
			argv[1] = prog;
		}
		status = cmd->fn(argc - 1, argv + 1, cmdline);
	} else if (argv[1][0] != '-' && refused_word(argv[1])) {
		status = 2;
	} else {
		status = cmd_record(argc, argv, cmdline);
	}
	free(cmdline);
	return status;
}
