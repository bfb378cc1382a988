// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf snapshot / status: ask the daemon (gtrace-bpf daemon) over its
 * control socket (daemon/control.h).
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "daemon/control.h"
#include "lib/log.h"

enum { OPT_LAST = 0x100 };


struct snap_cli {
	double last;		/* --last seconds, 0 = the whole window */
	long pid;		/* -p, 0 = every process */
	const char *output;	/* -o */
};

static const struct argp_option snapshot_options[] = {
	{ "last", OPT_LAST, "TIME", 0, "Only the last TIME of the window (chunk granularity)", 0 },
	{ "pid", 'p', "PID", 0, "Only this process' records", 0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE (default: system_snapshot_{date}_v{N}.gtrace in the daemon's snapshot directory)", 0 },
	{ 0 },
};

static error_t snapshot_parse(int key, char *arg, struct argp_state *state)
{
	struct snap_cli *s = state->input;
	uint64_t v;

	switch (key) {
	case OPT_LAST:
		if (cli__parse_duration(arg, &s->last) || !(s->last > 0) || s->last > 86400)
			argp_error(state, "invalid --last '%s' (a time > 0, e.g. 30s)", arg);
		break;
	case 'p':
		if (cli__parse_u64(arg, &v, false) || v == 0 || v > 4194304)
			argp_error(state, "invalid pid '%s'", arg);
		s->pid = (long)v;
		break;
	case 'o':
		if (!arg[0])
			argp_error(state, "empty -o");
		s->output = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Sends req, the reply's text to out; 0, 1 (the daemon said no) or 1
 * after a line saying why not. A snapshot's reply comes when its file is
 * written: it may take minutes (a large window, a slow disk). */
static int ask(const char *req, FILE *out)
{
	int ms = strncmp(req, "snapshot", 8) ? 30000 : 600000;
	int err = control__request(control__dir(), req, ms, out, stderr);

	if (err < 0) {
		if (err == -ENOENT || err == -ECONNREFUSED)
			pr_err("no daemon is running (no %s/control.sock)", control__dir());
		else
			pr_err("cannot reach the daemon: %s", strerror(-err));
		return 1;
	}
	return err ? 1 : 0;
}

int cmd_snapshot(int argc, char **argv, const char *cmdline)
{
	static const char doc[] =
		"Ask the daemon (gtrace-bpf daemon) to write its window to a trace file; prints the "
		"file's path.\n\nEXAMPLES:\n  sudo gtrace-bpf snapshot\n  sudo gtrace-bpf snapshot "
		"--last 30s -p 4242 -o slow.gtrace";
	struct argp argp = { snapshot_options, snapshot_parse, NULL, doc, NULL, NULL, NULL };
	struct snap_cli s = { 0 };
	char req[CONTROL_REQ_MAX], abs[PATH_MAX];
	int n;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &s))
		return 2;
	/* the daemon's working directory is not ours: a relative -o is made absolute here */
	if (s.output && s.output[0] != '/') {
		if (!getcwd(abs, sizeof(abs)) || strlen(abs) + strlen(s.output) + 2 > sizeof(abs)) {
			pr_err("cannot make -o %s absolute", s.output);
			return 2;
		}
		strcat(abs, "/");
		strcat(abs, s.output);
		s.output = abs;
	}
	if (s.output && strpbrk(s.output, "\n ")) {
		pr_err("-o: a path without spaces or newlines, please");
		return 2;
	}
	n = snprintf(req, sizeof(req), "snapshot last_ns=%llu pid=%ld%s%s",
		     (unsigned long long)(s.last * 1e9), s.pid, s.output ? " out=" : "",
		     s.output ? s.output : "");
	if (n < 0 || (size_t)n >= sizeof(req)) {
		pr_err("-o path too long");
		return 2;
	}
	return ask(req, stdout);
}

/* status --json: the reply's "key value" lines as one JSON object. */
static int status_json(FILE *in, FILE *out)
{
	char line[3 * PATH_MAX + 64], *sp, *end;	/* cgroup: an escaped path */
	bool first = true;

	fputc('{', out);
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		if (!(sp = strchr(line, ' ')))
			continue;
		*sp++ = 0;
		strtod(sp, &end);
		fprintf(out, "%s\"%s\":", first ? "" : ",", line);
		if (*sp && !*end)
			fputs(sp, out);
		else
			fprintf(out, "\"%s\"", sp);	/* mode, cgroup: a word, no quotes or backslashes */
		first = false;
	}
	fputs("}\n", out);
	return 0;
}

static error_t status_parse(int key, char *arg, struct argp_state *state)
{
	bool *json = state->input;

	(void)arg;
	if (key == 'j') {
		*json = true;
		return 0;
	}
	if (key == ARGP_KEY_ARG)
		argp_error(state, "unexpected argument '%s'", arg);
	return ARGP_ERR_UNKNOWN;
}

int cmd_status(int argc, char **argv, const char *cmdline)
{
	static const char doc[] = "Say what the daemon (gtrace-bpf daemon) is doing: one \"key value\" "
				  "line each, or --json.";
	static const struct argp_option opts[] = {
		{ "json", 'j', NULL, 0, "One JSON object instead of key value lines", 0 },
		{ 0 },
	};
	struct argp argp = { opts, status_parse, NULL, doc, NULL, NULL, NULL };
	bool json = false;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &json))
		return 2;
	if (!json)
		return ask("status", stdout);
	mem = open_memstream(&buf, &len);
	if (!mem) {
		pr_err("out of memory");
		return 1;
	}
	rc = ask("status", mem);
	fclose(mem);
	if (!rc) {
		FILE *in = fmemopen(buf, len, "r");

		rc = in ? status_json(in, stdout) : 1;
		if (in)
			fclose(in);
	}
	free(buf);
	return rc;
}
