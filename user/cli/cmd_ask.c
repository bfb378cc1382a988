// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf snapshot / status / attach: ask the daemon (gtrace-bpf daemon)
 * over its control socket (daemon/control.h).
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
#include "lib/vec.h"

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
	/* an attach holds the process at most 10 s at each of its three steps */
	int ms = !strncmp(req, "snapshot", 8) ? 600000 : !strncmp(req, "attach", 6) ? 60000 : 30000;
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

struct attach_cli {
	long pid;		/* -p */
	double secs;		/* -d */
};

static const struct argp_option attach_options[] = {
	{ "pid", 'p', "PID", 0, "The running process", 0 },
	{ "duration", 'd', "TIME", 0, "For how long (default 10s, at most 1h)", 0 },
	{ 0 },
};

static error_t attach_parse(int key, char *arg, struct argp_state *state)
{
	struct attach_cli *a = state->input;
	uint64_t v;

	switch (key) {
	case 'p':
		if (cli__parse_u64(arg, &v, false) || v == 0 || v > 4194304)
			argp_error(state, "invalid pid '%s'", arg);
		a->pid = (long)v;
		break;
	case 'd':
		if (cli__parse_duration(arg, &a->secs) || !(a->secs >= 0.001) || a->secs > 3600)
			argp_error(state, "invalid -d '%s' (a time from 1ms to 1h, e.g. 10s)", arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!a->pid)
			argp_error(state, "which process? give -p PID");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_attach(int argc, char **argv, const char *cmdline)
{
	static const char doc[] =
		"Ask the daemon (gtrace-bpf daemon --cupti) to load the CUPTI agent into a running process "
		"that was not started with it: its GPU side (kernels, copies, sets, their links to the calls) "
		"goes into the daemon's window for TIME, then the agent detaches and the process runs on as "
		"before. A process that cannot take it (ptrace_scope 3, already traced, static, setuid, "
		"another CUPTI client such as torch.profiler) is refused with one line, status 1.\n\n"
		"EXAMPLES:\n  sudo gtrace-bpf attach -p 4242 -d 10s\n  sudo gtrace-bpf snapshot -p 4242 --last 15s";
	struct argp argp = { attach_options, attach_parse, NULL, doc, NULL, NULL, NULL };
	struct attach_cli a = { .secs = 10 };
	char req[CONTROL_REQ_MAX];

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &a))
		return 2;
	snprintf(req, sizeof(req), "attach pid=%ld ms=%llu", a.pid, (unsigned long long)(a.secs * 1e3 + 0.5));
	return ask(req, stdout);
}

/* The reply's "key value" lines, read once for the summary and --json. */
struct status_kv {
	char **key, **val;
	size_t n, kcap, vcap;
};

static void kv_free(struct status_kv *kv)
{
	for (size_t i = 0; i < kv->n; i++) {
		free(kv->key[i]);
		free(kv->val[i]);
	}
	free(kv->key);
	free(kv->val);
}

/* 0, or -ENOMEM (what was read is kept, for kv_free). */
static int kv_read(FILE *in, struct status_kv *kv)
{
	char line[3 * PATH_MAX + 64], *sp;	/* cgroup: an escaped path */

	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		if (!(sp = strchr(line, ' ')))
			continue;	/* "ok" */
		*sp++ = 0;
		if (vec__reserve(&kv->key, &kv->kcap, kv->n, 1, 128) ||
		    vec__reserve(&kv->val, &kv->vcap, kv->n, 1, 128))
			return -ENOMEM;
		kv->key[kv->n] = strdup(line);
		kv->val[kv->n] = strdup(sp);
		if (!kv->key[kv->n] || !kv->val[kv->n]) {
			free(kv->key[kv->n]);
			free(kv->val[kv->n]);
			return -ENOMEM;
		}
		kv->n++;
	}
	return 0;
}

/* status --json: the fields as one JSON object (numbers as numbers). */
static void status_json(const struct status_kv *kv, FILE *out)
{
	char *end;

	fputc('{', out);
	for (size_t i = 0; i < kv->n; i++) {
		const char *v = kv->val[i];

		strtod(v, &end);
		fprintf(out, "%s\"%s\":", i ? "," : "", kv->key[i]);
		if (*v && !*end)
			fputs(v, out);
		else
			fprintf(out, "\"%s\"", v);	/* mode, cgroup: a word, no quotes or backslashes */
	}
	fputs("}\n", out);
}

static const char *kv_get(const struct status_kv *kv, const char *key)
{
	for (size_t i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

/* key's value as a number; 0 when absent or not a number */
static double kv_num(const struct status_kv *kv, const char *key)
{
	const char *v = kv_get(kv, key);
	char *end;
	double x = v ? strtod(v, &end) : 0;

	return v && *v && !*end ? x : 0;
}

static void put_bytes(FILE *out, double b)
{
	if (b >= 1024.0 * 1024 * 1024)
		fprintf(out, "%.1f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		fprintf(out, "%.1f MiB", b / (1024.0 * 1024));
	else
		fprintf(out, "%.1f KiB", b / 1024.0);
}

/* status: a few lines a person reads, from the reply's key value lines:
 * what is traced, how, what the window holds, drops, the overhead against
 * the budget (estimated, said), snapshots and triggers. */
static void status_summary(const struct status_kv *kv, FILE *out)
{
	const char *mode, *est, *cg;
	double up, drops;

	mode = kv_get(kv, "mode");
	up = kv_num(kv, "uptime_s");
	fprintf(out, "daemon:     pid %.0f, up %.0fh %02.0fm %02.0fs, %s mode", kv_num(kv, "pid"),
		(double)((long)up / 3600), (double)((long)up / 60 % 60), (double)((long)up % 60), mode ? mode : "?");
	if (mode && !strcmp(mode, "light") && kv_get(kv, "light_period_s"))
		fprintf(out, ": %.0f windows, one every %.1f s (probes live %.1f %% of the time)",
			kv_num(kv, "light_windows"), kv_num(kv, "light_period_s"), kv_num(kv, "duty_cycle_pct"));
	fputc('\n', out);
	fprintf(out, "traced:     %.0f process%s seen, %.0f running", kv_num(kv, "processes"),
		kv_num(kv, "processes") == 1 ? "" : "es", kv_num(kv, "processes_alive"));
	cg = kv_get(kv, "cgroup");
	if (cg && strcmp(cg, "-") && strcmp(cg, "none") && *cg)
		fprintf(out, " (cgroup %s)", cg);
	fputc('\n', out);
	drops = kv_num(kv, "dropped");
	fprintf(out, "events:     %.0f recorded, %.0f lost to a full ring buffer%s\n", kv_num(kv, "events"), drops,
		drops > 0 ? " (daemon --buffer-size raises it)" : "");
	fprintf(out, "window:     the last %.1f s in memory, ", kv_num(kv, "window_span_s"));
	put_bytes(out, kv_num(kv, "window_bytes"));
	fputs(" of ", out);
	put_bytes(out, kv_num(kv, "window_limit_bytes"));
	if (kv_num(kv, "window_dropped_chunks") > 0)
		fprintf(out, "; %.0f chunks let go for room", kv_num(kv, "window_dropped_chunks"));
	fputc('\n', out);
	est = kv_get(kv, "overhead_estimate_pct");
	if (!est || !strcmp(est, "unknown"))
		fputs("overhead:   not estimated yet\n", out);
	else if (kv_num(kv, "overhead_budget_pct") > 0)
		fprintf(out, "overhead:   %s %% (estimated) against a budget of %.2f %%: %s; mean %.3f %%, max %.3f %%\n",
			est, kv_num(kv, "overhead_budget_pct"), kv_num(kv, "overhead_over_budget") ? "OVER it" : "under it",
			kv_num(kv, "overhead_mean_estimate_pct"), kv_num(kv, "overhead_max_estimate_pct"));
	else
		fprintf(out, "overhead:   %s %% (estimated; no budget); mean %.3f %%, max %.3f %%\n", est,
			kv_num(kv, "overhead_mean_estimate_pct"), kv_num(kv, "overhead_max_estimate_pct"));
	fprintf(out, "snapshots:  %.0f written, %.0f failed; triggers %.0f fired, %.0f suppressed\n",
		kv_num(kv, "snapshots"), kv_num(kv, "snapshots_failed"), kv_num(kv, "triggers_fired"),
		kv_num(kv, "triggers_suppressed"));
	if (kv_num(kv, "gpu_metrics_hz") > 0)
		fprintf(out, "gpu metrics: %.0f Hz on %.0f GPU%s, %.0f read errors\n", kv_num(kv, "gpu_metrics_hz"),
			kv_num(kv, "gpu_metrics_gpus"), kv_num(kv, "gpu_metrics_gpus") == 1 ? "" : "s",
			kv_num(kv, "gpu_metrics_errors"));
	fputs("(every field: gtrace-bpf status -v, or --json)\n", out);
}

enum status_form { STATUS_SUMMARY, STATUS_FIELDS, STATUS_JSON };

static error_t status_parse(int key, char *arg, struct argp_state *state)
{
	enum status_form *form = state->input;

	(void)arg;
	if (key == 'j') {
		*form = STATUS_JSON;
		return 0;
	}
	if (key == 'v') {
		if (*form != STATUS_JSON)
			*form = STATUS_FIELDS;
		return 0;
	}
	if (key == ARGP_KEY_ARG)
		argp_error(state, "unexpected argument '%s'", arg);
	return ARGP_ERR_UNKNOWN;
}

int cmd_status(int argc, char **argv, const char *cmdline)
{
	static const char doc[] = "Say what the daemon (gtrace-bpf daemon) is doing: a short summary (what "
				  "is traced, the window, drops, the overhead against the budget, snapshots and "
				  "triggers); -v every field as \"key value\" lines, --json as one object.";
	static const struct argp_option opts[] = {
		{ "verbose", 'v', NULL, 0, "Every field, one \"key value\" line each", 0 },
		{ "json", 'j', NULL, 0, "Every field, as one JSON object", 0 },
		{ 0 },
	};
	struct argp argp = { opts, status_parse, NULL, doc, NULL, NULL, NULL };
	enum status_form form = STATUS_SUMMARY;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &form))
		return 2;
	if (form == STATUS_FIELDS)
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
		struct status_kv kv = { 0 };

		if (!in || kv_read(in, &kv)) {
			pr_err("out of memory");
			rc = 1;
		} else if (form == STATUS_JSON) {
			status_json(&kv, stdout);
		} else {
			status_summary(&kv, stdout);
		}
		kv_free(&kv);
		if (in)
			fclose(in);
	}
	free(buf);
	return rc;
}
