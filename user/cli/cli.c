// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "lib/vec.h"
#include "record/procs/cgroup_target.h"
#include "record/gpum/gpu_metrics.h"
#include "lib/log.h"
#include "lib/path_find.h"

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

int cli__parse_duration(const char *s, double *secs)
{
	static const struct {
		const char *unit;	/* the suffix */
		double secs;		/* seconds in one */
	} units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 }, { "m", 60 }, { "h", 3600 },
	};
	char *end;
	double v;

	/* strtod would also take signs, spaces, "inf", "nan" and hex */
	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s[1] >= '0' && s[1] <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			*secs = v * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}

int cli__choice(const char *s, const char *const *names)
{
	for (int i = 0; names[i]; i++) {
		if (!strcmp(s, names[i]))
			return i;
	}
	return -1;
}

/* Edit distance with transpositions (optimal string alignment) between a
 * and b, both at most 31 bytes; 99 when longer. Written here: a dozen lines
 * for one use, over names of a few letters. */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), i, j;
	unsigned d[32][32];

	if (n > 31 || m > 31)
		return 99;
	for (i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= n; i++) {
		for (j = 1; j <= m; j++) {
			unsigned c = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + c;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[n][m];
}

const char *cli__nearest(const char *w, const char *const *names)
{
	size_t n = strlen(w);
	const char *best = NULL;
	unsigned bd = 99;

	for (size_t i = 0; names[i]; i++) {
		unsigned d = edit_distance(w, names[i]);

		/* a tie goes to the name as long as the word (a swap, not a
		 * letter lost: stauts is status) */
		if (d < bd || (d == bd && best && strlen(names[i]) == n && strlen(best) != n)) {
			bd = d;
			best = names[i];
		}
	}
	/* one edit in a short name, two in a longer one */
	return best && bd <= (n >= 6 ? 2u : 1u) ? best : NULL;
}

int cli__choose(struct argp_state *state, const char *what, const char *s, const char *const *names)
{
	char list[256] = "";
	size_t n = 0;
	int i = cli__choice(s, names);

	if (i >= 0)
		return i;
	for (i = 0; names[i]; i++)
		n += snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
			      !i ? "" : names[i + 1] ? ", " : " or ", names[i]);
	if (cli__nearest(s, names))
		argp_error(state, "unknown %s '%s': did you mean %s? (%s)", what, s, cli__nearest(s, names),
			   list);
	argp_error(state, "unknown %s '%s' (%s)", what, s, list);
	return -1;
}

error_t cli__output_arg(int key, char *arg, struct argp_state *state, bool stream, const char **output,
			bool *force)
{
	switch (key) {
	case 'o':
		if (!arg[0])
			argp_error(state, "empty output name");
		if (!stream && !strcmp(arg, "-"))
			argp_error(state, "a trace cannot be written to standard output (-o -): "
				   "give a file name");
		*output = arg;
		return 0;
	case CLI_OPT_FORCE:
		*force = true;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

void cli__push_str(struct argp_state *state, struct cli_strs *l, const char *s)
{
	if (vec__reserve(&l->v, &l->cap, l->n, 1, 4))
		argp_failure(state, 1, ENOMEM, "out of memory");
	l->v[l->n++] = s;
}

void cli__push_pids(struct argp_state *state, struct cli_pids *l, const char *arg)
{
	const char *p = arg;
	uint64_t v;
	char one[24];

	/* each item of the list on its own: "1,,2" and "1," are errors */
	for (;;) {
		size_t n = strcspn(p, ",");

		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) ? n : sizeof(one) - 1), p);
		if (n >= sizeof(one) || cli__parse_u64(one, &v, false) || v == 0 || v > 4194304)
			argp_error(state, "invalid pid '%s'%s", n ? one : arg,
				   strchr(arg, ',') ? " (a pid or a comma-separated list of pids)" : "");
		if (vec__reserve(&l->v, &l->cap, l->n, 1, 4))
			argp_failure(state, 1, ENOMEM, "out of memory");
		l->v[l->n++] = (pid_t)v;
		if (!p[n])
			return;
		p += n + 1;
	}
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

/* argp knows -? and --help; -h is what people type */
static const struct argp_option cli_options[] = {
	{ NULL, 'h', NULL, 0, "Give this help list (as --help)", -1 },
	{ 0 },
};

/* Every command line goes through here: a parent parser gives argp the
 * one-line error stream before the command's own parser runs. */
static error_t cli_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input;
		state->err_stream = usage_err_stream();
		return 0;
	case 'h':
		argp_state_help(state, state->out_stream, ARGP_HELP_STD_HELP);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int cli__parse(const struct argp *cmd, int argc, char **argv, void *input)
{
	/* the command's usage and doc head the help, its options (and its
	 * children's: the shared recording options) follow */
	struct argp body = { cmd->options, cmd->parser, NULL, NULL, cmd->children, NULL, NULL };
	struct argp_child children[] = { { &body, 0, NULL, 0 }, { 0 } };
	struct argp top = { cli_options, cli_parse, cmd->args_doc, cmd->doc, children, NULL, NULL };

	/* in order: a command to run ends our options at its first word, its
	 * own options are not taken for ours (cli__cmd_arg) */
	return argp_parse(&top, argc, argv, ARGP_IN_ORDER, NULL, input);
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

/* Whether word is a value of the option opt, whose value is optional
 * (--gpu-metrics[=HZ|off], --cupti[=optional]) and so must follow '='. */
static bool optional_value(const char *opt, const char *word)
{
	size_t i;

	if (!strcmp(opt, "--cupti"))
		return !strcmp(word, "optional");
	if (strcmp(opt, "--gpu-metrics"))
		return false;
	if (!strcmp(word, "off"))
		return true;
	for (i = 0; word[i]; i++)
		if (word[i] < '0' || word[i] > '9')
			return false;
	return i > 0;
}

error_t cli__cmd_arg(int key, struct argp_state *state, char ***cmd, bool *after_dashdash)
{
	switch (key) {
	case ARGP_KEY_ARG:
		/* argp took the word already: the command is from it to the end */
		*cmd = state->argv + state->next - 1;
		*after_dashdash = state->quoted && state->next - 1 >= state->quoted;
		/* "--gpu-metrics 5": an optional value goes after '=', and a
		 * program named as a value is no doubt not what was meant */
		if (!*after_dashdash && state->next >= 3 && optional_value(state->argv[state->next - 2], **cmd))
			argp_error(state, "%s %s: write %s=%s (an optional value goes after '='); to run a "
				   "program named %s, write -- %s", state->argv[state->next - 2], **cmd,
				   state->argv[state->next - 2], **cmd, **cmd, **cmd);
		state->next = state->argc;
		return 0;
	case ARGP_KEY_END:
		/* "--" and nothing after it */
		if (!*cmd && state->quoted)
			*after_dashdash = true;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int cli__check_cgroup(const char **path)
{
	static struct cgroup_target t;
	char why[PATH_MAX + 160];

	if (!cgroup_target__resolve(*path, &t, why, sizeof(why))) {
		*path = t.path;
		return 0;
	}
	pr_err("%s", why);
	return 2;
}

int cli__check_cmd(const char *prog, bool after_dashdash)
{
	char full[4096];
	int err = path__find(prog, getenv("PATH"), full, sizeof(full));

	if (!err)
		return 0;
	pr_err("cannot run %s: %s%s", prog, strerror(-err),
		!after_dashdash && !strchr(prog, '/') && err == -ENOENT ?
		" (not a command of gtrace-bpf either: see --help)" : "");
	return err == -ENOENT ? 127 : 126;
}

/* --light-window LEN/PERIOD, or 0 for no windows. */
int cli__parse_window(const char *arg, uint64_t *len, uint64_t *period)
{
	char buf[64];
	const char *slash = strchr(arg, '/');
	double l, p;

	if (!strcmp(arg, "0")) {
		*len = *period = 0;
		return 0;
	}
	if (!slash || (size_t)(slash - arg) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, arg, slash - arg);
	buf[slash - arg] = 0;
	if (cli__parse_duration(buf, &l) || cli__parse_duration(slash + 1, &p) || !(l > 0) ||
	    !(p > l) || p > 1e6)
		return -EINVAL;
	*len = (uint64_t)(l * 1e9);
	*period = (uint64_t)(p * 1e9);
	return 0;
}

void cli__window_arg(struct argp_state *state, const char *arg, uint64_t *len, uint64_t *period)
{
	if (cli__parse_window(arg, len, period))
		argp_error(state, "invalid --light-window '%s' (LEN/PERIOD with LEN < PERIOD, e.g. "
			   "200ms/5s, or 0)", arg);
}

uint64_t cli__buffer_size_arg(struct argp_state *state, const char *arg)
{
	uint64_t v;

	if (cli__parse_u64(arg, &v, true) || v < 4096)
		argp_error(state, "invalid buffer size '%s' (4K..2G, e.g. 64M)", arg);
	/* a BPF ring buffer's size is a u32 power of two */
	if (v > (2ull << 30))
		argp_error(state, "--buffer-size %s: a BPF ring buffer holds at most 2G "
			   "(sizes round up to a power of two)", arg);
	return v;
}

void cli__gpu_metrics_arg(struct argp_state *state, const char *arg, unsigned int *hz)
{
	if (gpu_metrics__parse_rate(arg, hz))
		argp_error(state, "invalid --gpu-metrics=%s (a rate of 1-%d Hz, or off)", arg,
			   GPU_METRICS_HZ_MAX);
}

char *cli__join(const char *const *names, int n, const char *sep)
{
	size_t len = 1;
	char *out;
	int i;

	for (i = 0; n < 0 ? names[i] != NULL : i < n; i++)
		len += strlen(names[i]) + strlen(sep);
	out = calloc(1, len);
	if (!out)
		return NULL;
	for (i = 0; n < 0 ? names[i] != NULL : i < n; i++) {
		if (i)
			strcat(out, sep);
		strcat(out, names[i]);
	}
	return out;
}

char *cli__doc_list(const char *fmt, const char *const *names, int n)
{
	char *list = cli__join(names, n, "\n  "), *doc = NULL;

	if (list && asprintf(&doc, fmt, list) < 0)
		doc = NULL;
	free(list);
	return doc;
}
