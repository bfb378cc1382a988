// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

int cli__parse_u64(const char *s, uint64_t *out, bool size_suffix)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	if (size_suffix && *end) {
		int shift = 0;

		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (v > (~0ull >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* argp follows each usage error with a "Try `... --help'" line; bad input
 * gets one line here, so argp's error stream drops that hint. Lines are
 * reassembled across writes before they are judged. */
static char err_line[1024];
static size_t err_len;
static bool err_hint;	/* the hint began: it is the last thing argp says, and may wrap */

static void err_line_out(void)
{
	if (err_len && !strncmp(err_line, "Try ", 4))
		err_hint = true;
	if (err_len && !err_hint)
		fwrite(err_line, 1, err_len, stderr);
	err_len = 0;
}

static ssize_t one_line_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	for (size_t i = 0; i < n; i++) {
		if (err_len < sizeof(err_line))
			err_line[err_len++] = buf[i];
		if (buf[i] == '\n' || err_len == sizeof(err_line))
			err_line_out();
	}
	return n;
}

static FILE *usage_err_stream(void)
{
	static FILE *f;
	cookie_io_functions_t io = { .write = one_line_write };

	if (!f) {
		f = fopencookie(NULL, "w", io);
		if (!f)
			return stderr;
		setvbuf(f, NULL, _IONBF, 0);
	}
	return f;
}

/* Every command line goes through here: a parent parser gives argp the
 * one-line error stream before the command's own parser runs. */
static error_t cli_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	if (key != ARGP_KEY_INIT)
		return ARGP_ERR_UNKNOWN;
	state->child_inputs[0] = state->input;
	state->err_stream = usage_err_stream();
	return 0;
}

int cli__parse(const struct argp *cmd, int argc, char **argv, void *input)
{
	/* the command's usage and doc head the help, its options follow */
	struct argp body = { cmd->options, cmd->parser, NULL, NULL, NULL, NULL, NULL };
	struct argp_child children[] = { { &body, 0, NULL, 0 }, { 0 } };
	struct argp top = { NULL, cli_parse, cmd->args_doc, cmd->doc, children, NULL, NULL };

	return argp_parse(&top, argc, argv, 0, NULL, input);
}

char *cli__join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* The one trace file argument of dump, export and stats. */
error_t cli__trace_file_arg(int key, char *arg, struct argp_state *state, const char **path)
{
	switch (key) {
	case ARGP_KEY_ARG:
		if (*path)
			argp_error(state, "one trace file at a time");
		*path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!*path)
			argp_error(state, "no trace file given");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int cli__split_cmd(int argc, char **argv, char ***cmd)
{
	int i;

	*cmd = NULL;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			*cmd = argv + i + 1;
			return i;
		}
	}
	return argc;
}
