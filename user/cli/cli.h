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

/* The commands, argv[0] their own name ("gtrace-bpf dump"; for record the
 * program's). cmdline: our whole command line, for the trace header.
 * Return the exit status. */
int cmd_record(int argc, char **argv, const char *cmdline);
int cmd_dump(int argc, char **argv, const char *cmdline);
int cmd_export(int argc, char **argv, const char *cmdline);
int cmd_stats(int argc, char **argv, const char *cmdline);
int cmd_merge(int argc, char **argv, const char *cmdline);
int cmd_census(int argc, char **argv, const char *cmdline);

/* Parses argv with the command's argp (options, parser, args_doc, doc) and
 * argp's usage errors as one line on stderr, without the "Try --help" hint.
 * Returns argp_parse's result: non-zero is a bad command line (status 2). */
int cli__parse(const struct argp *cmd, int argc, char **argv, void *input);
/* A decimal number; with size_suffix also 64K, 64M, 1G, 1GiB, 1gb. Returns
 * 0, -EINVAL or -ERANGE. */
int cli__parse_u64(const char *s, uint64_t *out, bool size_suffix);
/* The one trace file argument of dump, export and stats, as an argp parser
 * step for ARGP_KEY_ARG and ARGP_KEY_END; ARGP_ERR_UNKNOWN for other keys. */
error_t cli__trace_file_arg(int key, char *arg, struct argp_state *state, const char **path);
/* Where "--" is in argv (everything after it is the command to run,
 * untouched by our parser): returns the number of arguments before it
 * (argc when none) and sets *cmd to what follows it (NULL when none). */
int cli__split_cmd(int argc, char **argv, char ***cmd);
/* argv joined with spaces; malloc'd, NULL on ENOMEM. */
char *cli__join_args(int argc, char **argv);

#endif
