/* SPDX-License-Identifier: MIT */
/*
 * The command line: main.c selects a command over argv[1] (record when none
 * is named), one cmd_<family>.c per command family parses its options with
 * argp and calls into its stage. Here is the argp plumbing they share: one
 * error stream, one exit-status scheme (gtrace-bpf --help, EXIT STATUS),
 * the number and argument parsers.
 */
#ifndef GTRACE_CLI_H
#define GTRACE_CLI_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The commands, argv[0] their own name ("gtrace-bpf dump"; for record the
 * program's). cmdline: our whole command line, for the trace header.
 * Return the exit status. */
int cmd_record(int argc, char **argv, const char *cmdline);
int cmd_dump(int argc, char **argv, const char *cmdline);
int cmd_export(int argc, char **argv, const char *cmdline);
int cmd_stats(int argc, char **argv, const char *cmdline);
int cmd_analyze(int argc, char **argv, const char *cmdline);
int cmd_report(int argc, char **argv, const char *cmdline);
int cmd_diff(int argc, char **argv, const char *cmdline);
int cmd_merge(int argc, char **argv, const char *cmdline);
int cmd_census(int argc, char **argv, const char *cmdline);
int cmd_daemon(int argc, char **argv, const char *cmdline);
int cmd_snapshot(int argc, char **argv, const char *cmdline);
int cmd_status(int argc, char **argv, const char *cmdline);
int cmd_attach(int argc, char **argv, const char *cmdline);

/* Parses argv with the command's argp (options, parser, args_doc, doc) and
 * argp's usage errors as one line on stderr, without the "Try --help" hint.
 * Returns argp_parse's result: non-zero is a bad command line (status 2). */
int cli__parse(const struct argp *cmd, int argc, char **argv, void *input);
/* A decimal number; with size_suffix also 64K, 64M, 1G, 1GiB, 1gb. Returns
 * 0, -EINVAL or -ERANGE. */
int cli__parse_u64(const char *s, uint64_t *out, bool size_suffix);
/* A time: a decimal number with a unit, ns, us, ms, s, m or h; a plain
 * number is seconds. Returns 0 or -EINVAL. */
int cli__parse_duration(const char *s, double *secs);
/* Light mode's windows: LEN/PERIOD (times, LEN < PERIOD), or 0 for none.
 * Returns 0 or -EINVAL. */
int cli__parse_window(const char *arg, uint64_t *len, uint64_t *period);
/* --light-window and --buffer-size as argp steps: a bad value is a usage
 * error. */
void cli__window_arg(struct argp_state *state, const char *arg, uint64_t *len, uint64_t *period);
uint64_t cli__buffer_size_arg(struct argp_state *state, const char *arg);
/* The index of s in names (NULL-terminated), -1 when it is not there: for
 * options that take one of a few words. */
int cli__choice(const char *s, const char *const *names);
/* The name of names (NULL-terminated) a typo away from w: one edit
 * (a letter changed, added, lost, or two swapped) in a name of up to 5
 * letters, two in a longer one; NULL when none is. */
const char *cli__nearest(const char *w, const char *const *names);
/* cli__choice() where a word not in names is a usage error, "unknown WHAT
 * 'S' (a, b or c)". */
int cli__choose(struct argp_state *state, const char *what, const char *s, const char *const *names);

/* --force's key, the same in every command that writes a file */
#define CLI_OPT_FORCE 0xff00
/* -o FILE (not empty) and --force as an argp parser step; ARGP_ERR_UNKNOWN
 * for other keys. With stream, "-" is standard output; without (a trace:
 * its chunks are written where the last one ended and a damaged tail is
 * cut off, which a pipe cannot take), "-" is a usage error. */
error_t cli__output_arg(int key, char *arg, struct argp_state *state, bool stream, const char **output,
			bool *force);

/* A growable list for a repeatable option or argument. */
struct cli_strs {
	const char **v;		/* the strings (argv's own, not copied) */
	size_t n;		/* how many */
	size_t cap;		/* room in v */
};
struct cli_pids {
	pid_t *v;		/* the pids, in the order given */
	size_t n;		/* how many */
	size_t cap;		/* room in v */
};
/* Appends s; out of memory ends the program with argp_failure (status 1). */
void cli__push_str(struct argp_state *state, struct cli_strs *l, const char *s);
/* Appends the pids of -p's argument, one or a comma-separated list; a bad
 * one is a usage error (argp_error: status 2). */
void cli__push_pids(struct argp_state *state, struct cli_pids *l, const char *arg);

/* The one trace file argument of dump, export and stats, as an argp parser
 * step for ARGP_KEY_ARG and ARGP_KEY_END; ARGP_ERR_UNKNOWN for other keys. */
error_t cli__trace_file_arg(int key, char *arg, struct argp_state *state, const char **path);
/* The command to run of record and census, as an argp parser step for
 * ARGP_KEY_ARG and ARGP_KEY_END (ARGP_ERR_UNKNOWN for other keys): the
 * first word that is not an option, with everything after it, untouched by
 * our parser (perf record's way), whether or not "--" comes before it.
 * Sets *cmd (NULL-terminated, argv's own) and *after_dashdash when "--"
 * was given, also with nothing after it. */
error_t cli__cmd_arg(int key, struct argp_state *state, char ***cmd, bool *after_dashdash);
/* Where CMD's program is, as execvp would find it: 0, or 127 (not found)
 * or 126 (not executable), a shell's statuses, after one line saying
 * why. Checked before anything is recorded, so that nothing is left behind. */
int cli__check_cmd(const char *prog, bool after_dashdash);
/* --cgroup PATH: 0 when it is a cgroup v2 directory, *path then the
 * directory itself (absolute, links resolved; static storage), else 2 (a
 * usage error) after one line saying why. */
int cli__check_cgroup(const char **path);
/* argv joined with spaces; malloc'd, NULL on ENOMEM. */
char *cli__join_args(int argc, char **argv);
/* names[0..n) joined with sep (n = -1: up to a NULL); NULL when out of memory. */
char *cli__join(const char *const *names, int n, const char *sep);
/* A command's doc: fmt with the items of names (n as cli__join) put at its
 * %s, one a line, indented; NULL when out of memory. */
char *cli__doc_list(const char *fmt, const char *const *names, int n);
/* The commands, one "  NAME  what it does" line each, from main.c's table
 * (the top-level --help); NULL when out of memory. */
char *cli__commands_doc(void);

/* --gpu-metrics[=HZ|off] into *hz (0 = off); a bad value is a usage
 * error naming the range. */
void cli__gpu_metrics_arg(struct argp_state *state, const char *arg, unsigned int *hz);

#endif
