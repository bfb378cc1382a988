// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf daemon: record every CUDA process into a rolling window in
 * memory (daemon/); gtrace-bpf snapshot / status ask it (cmd_ask.c).
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/record_opts.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "format/records.h"
#include "lib/log.h"
#include "lib/owner.h"

enum { OPT_WINDOW = 0x100, OPT_MEMORY, OPT_DIR, OPT_LOG, OPT_METRICS, OPT_METRICS_REMOTE, OPT_TRIGGER, OPT_POST,
       OPT_BUDGET, OPT_OWNER, OPT_ATTACH_CUPTI };

static const struct argp_option daemon_options[] = {
	{ "window", OPT_WINDOW, "TIME", 0, "Keep the last TIME of recording in memory (default 60s)", 0 },
	{ "memory", OPT_MEMORY, "SIZE", 0,
	  "Keep at most SIZE of compressed chunks (default 256M); the oldest go first, counted", 0 },
	{ "dir", OPT_DIR, "DIR", 0, "Where snapshots are written (default /var/lib/gtrace-bpf)", 0 },
	{ "owner", OPT_OWNER, "USER", 0,
	  "Snapshots belong to USER (a name or uid; still mode 0600) instead of root", 0 },
	{ "budget", OPT_BUDGET, "PCT", 0,
	  "Keep the estimated cost to the traced programs under PCT% of their time (default 1%) by "
	  "spacing light mode's windows; none: estimate only. The estimate is measured: probe hits "
	  "(BPF statistics) x a hit's cost timed at start, plus the programs' run time", 0 },
	{ "log", OPT_LOG, "FILE", 0, "Log to FILE (appended; reopened at SIGHUP) instead of stderr", 0 },
	{ "metrics", OPT_METRICS, "ADDR", 0,
	  "Serve Prometheus metrics on ADDR: HOST:PORT (e.g. 127.0.0.1:9464) or unix:PATH "
	  "(docs/METRICS.md)", 0 },
	{ "trigger", OPT_TRIGGER, "SPEC", 0,
	  "Write a snapshot by itself when: sync>TIME (a synchronization waited longer), error or "
	  "error=CODE (a CUDA call failed), exit (a traced process exited non-zero or by a signal), "
	  "profiler (cuProfilerStart), signal (SIGUSR1), gpu-idle>TIME (with --cupti: the GPU of a "
	  "live process with the agent ran nothing of it for longer, after it had run something). "
	  "Repeatable; one snapshot per --window, later ones counted", 0 },
	{ "post", OPT_POST, "TIME", 0, "A triggered snapshot also holds TIME after the trigger (default 5s)", 0 },
	{ "attach-cupti", OPT_ATTACH_CUPTI, "TIME", 0,
	  "With --cupti: a trigger that names a process (sync, error, profiler, gpu-idle) also loads "
	  "the CUPTI agent into it for TIME (its GPU side: kernels, copies, their links), then detaches "
	  "it; the snapshot waits for that", 0 },
	{ "metrics-remote", OPT_METRICS_REMOTE, NULL, 0,
	  "Allow --metrics on an address other than loopback (it has no authentication)", 0 },
	{ 0 },
};

static const char daemon_doc[] =
"Record every process that uses CUDA, as --all does, into a rolling window kept\n"
"in memory, until SIGTERM or SIGINT. gtrace-bpf snapshot writes the window (or\n"
"its last part, or one process) to a trace file; gtrace-bpf status says what the\n"
"daemon is doing. Control socket: " CONTROL_DIR "/control.sock (root only;\n"
"GTRACE_RUN_DIR=DIR puts it and the pid file in DIR instead).\n"
"\n"
"EXAMPLES:\n"
"  sudo gtrace-bpf daemon --window 120s --memory 512M\n"
"  sudo gtrace-bpf daemon --trigger 'sync>2s' --trigger exit --post 10s\n"
"  sudo gtrace-bpf daemon --cupti --trigger 'gpu-idle>500ms'\n"
"  sudo CUDA_INJECTION64_PATH=/usr/local/lib/gtrace-bpf/libgtrace-cupti.so python train.py\n"
"  sudo gtrace-bpf daemon --cupti --trigger 'sync>2s' --attach-cupti 10s\n"
"  sudo gtrace-bpf attach -p 4242 -d 10s     # the GPU side of a running job\n"
"  sudo gtrace-bpf snapshot --last 30s        # prints the file's path\n"
"  sudo gtrace-bpf status";

struct daemon_cli {
	struct daemon_opts d;
	struct record_common common;	/* the options record and daemon share */
};

/* TIME of sync>TIME, gpu-idle>TIME. Returns 0 or -ERANGE. */
static int parse_threshold(const char *arg, uint32_t kind, struct daemon_trigger *t)
{
	double d;

	if (cli__parse_duration(arg, &d) || !(d > 0) || d > 86400)
		return -ERANGE;
	t->kind = kind;
	t->threshold_ns = (uint64_t)(d * 1e9);
	return 0;
}

/* --trigger SPEC. Returns 0, -ERANGE (a bad TIME) or -EINVAL. */
static int parse_trigger(const char *arg, struct daemon_trigger *t)
{
	static const char *const kinds[] = { [GT_TRIG_ERROR] = "error", [GT_TRIG_EXIT] = "exit",
					     [GT_TRIG_PROFILER] = "profiler", [GT_TRIG_SIGNAL] = "signal" };
	uint64_t v;
	size_t i;

	*t = (struct daemon_trigger){ .code = -1 };
	if (!strncmp(arg, "sync>", 5))
		return parse_threshold(arg + 5, GT_TRIG_SYNC, t);
	if (!strncmp(arg, "gpu-idle>", 9))
		return parse_threshold(arg + 9, GT_TRIG_GPU_IDLE, t);
	if (!strncmp(arg, "error=", 6)) {
		if (cli__parse_u64(arg + 6, &v, false) || v == 0 || v > 0x7fffffff)
			return -EINVAL;
		t->kind = GT_TRIG_ERROR;
		t->code = (int32_t)v;
		return 0;
	}
	for (i = 1; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (kinds[i] && !strcmp(arg, kinds[i])) {
			t->kind = (uint32_t)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct argp_child daemon_children[] = {
	{ &record_common_argp, 0, NULL, 0 },
	{ 0 },
};

static error_t daemon_parse(int key, char *arg, struct argp_state *state)
{
	struct daemon_cli *c = state->input;
	struct daemon_opts *o = &c->d;
	uint64_t v;
	double d;
	int err;

	switch (key) {
	case ARGP_KEY_INIT:
		c->common.o = &o->rec;
		c->common.daemon = true;
		state->child_inputs[0] = &c->common;
		break;
	case OPT_WINDOW:
		if (cli__parse_duration(arg, &d) || !(d >= 1) || d > 86400)
			argp_error(state, "invalid --window '%s' (a time from 1s to 24h, e.g. 60s, 10m)", arg);
		o->window_ns = (uint64_t)(d * 1e9);
		break;
	case OPT_MEMORY:
		if (cli__parse_u64(arg, &v, true) || v < (1u << 20) || v > (64ull << 30))
			argp_error(state, "invalid --memory '%s' (1M..64G, e.g. 256M)", arg);
		o->memory = v;
		break;
	case OPT_OWNER: {
		uid_t uid;
		gid_t gid;

		if (owner__lookup(arg, &uid, &gid))
			argp_error(state, "invalid --owner '%s' (no such user)", arg);
		owner__set(uid, gid);
		break;
	}
	case OPT_DIR:
		if (!arg[0] || arg[0] != '/')
			argp_error(state, "invalid --dir '%s' (an absolute path)", arg);
		o->dir = arg;
		break;
	case OPT_BUDGET: {
		char *end;

		if (!strcmp(arg, "none")) {
			o->budget = 0;
			break;
		}
		d = strtod(arg, &end);
		if (end == arg || (*end && strcmp(end, "%")) || !(d >= 0.01) || d > 50)
			argp_error(state, "invalid --budget '%s' (a percentage from 0.01%% to 50%%, e.g. "
				   "1%%, or none)", arg);
		o->budget = d / 100;
		break;
	}
	case OPT_METRICS:
		if (!arg[0])
			argp_error(state, "empty --metrics address");
		o->metrics = arg;
		break;
	case OPT_TRIGGER:
		if (o->ntriggers == DAEMON_TRIGGERS_MAX)
			argp_error(state, "at most %d --trigger", DAEMON_TRIGGERS_MAX);
		err = parse_trigger(arg, &o->triggers[o->ntriggers]);
		if (err == -ERANGE)
			argp_error(state, "invalid --trigger '%s': TIME is a time > 0 up to 24h, e.g. "
				   "%.*s500ms", arg, (int)(strchr(arg, '>') - arg + 1), arg);
		if (err)
			argp_error(state, "invalid --trigger '%s' (sync>TIME, gpu-idle>TIME, error, "
				   "error=CODE, exit, profiler or signal)", arg);
		o->ntriggers++;
		break;
	case OPT_ATTACH_CUPTI:
		if (cli__parse_duration(arg, &d) || !(d > 0) || d > 3600)
			argp_error(state, "invalid --attach-cupti '%s' (a time from 0 to 1h, e.g. 10s)", arg);
		o->attach_cupti_ns = (uint64_t)(d * 1e9);
		break;
	case OPT_POST:
		if (cli__parse_duration(arg, &d) || !(d >= 0) || d > 3600)
			argp_error(state, "invalid --post '%s' (a time from 0 to 1h, e.g. 5s)", arg);
		o->post_ns = (uint64_t)(d * 1e9);
		break;
	case OPT_METRICS_REMOTE:
		o->metrics_remote = true;
		break;
	case OPT_LOG:
		if (!arg[0])
			argp_error(state, "empty --log");
		o->log = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		for (size_t i = 0; i < o->ntriggers; i++)
			if (o->triggers[i].kind == GT_TRIG_GPU_IDLE && !o->rec.cupti)
				argp_error(state, "--trigger gpu-idle>TIME needs --cupti (the GPU records "
					   "come from the CUPTI agent)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_daemon(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { daemon_options, daemon_parse, NULL, daemon_doc, daemon_children, NULL, NULL };
	struct daemon_cli c;
	int status, err;

	memset(&c, 0, sizeof(c));
	daemon_opts__init(&c.d);
	if (cli__parse(&argp, argc, argv, &c))
		return 2;
	if (!(err = record_common__finish(&c.common)) && c.d.rec.cupti_attach) {
		pr_err("--cupti=attach is record's: the daemon attaches the agent with --attach-cupti TIME "
		       "(on a trigger) or gtrace-bpf attach -p PID (on demand)");
		err = 2;
	}
	if (!err && c.d.attach_cupti_ns && !c.d.rec.cupti) {
		pr_err("--attach-cupti needs --cupti (the agents' run directory)");
		err = 2;
	}
	if (err || (c.d.rec.cgroup && (err = cli__check_cgroup(&c.d.rec.cgroup)))) {
		free(c.common.libcuda.v);
		return err;
	}
	gt_log_level = c.common.quiet ? GT_LOG_WARN : GT_LOG_INFO + c.common.verbose;
	c.d.rec.cmdline = cmdline;
	status = daemon__run(&c.d);
	free(c.common.libcuda.v);
	return status;
}
