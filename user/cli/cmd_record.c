// SPDX-License-Identifier: MIT
/* gtrace-bpf [record]: the default command. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "lib/owner.h"
#include "lib/log.h"
#include "merge/merge.h"
#include "record/gpum/gpu_metrics.h"
#include "record/record.h"
#include "stats/stats.h"
#include "cli/record_opts.h"

/* "%s" is the list of commands, from main.c's table */
static const char record_doc_fmt[] =
"Record the CUDA driver API calls of processes into a trace file.\n"
"Other commands: gtrace-bpf COMMAND [OPTIONS] ...  (gtrace-bpf help COMMAND)\n"
"\n"
"%s\n"
"\n"
"EXAMPLES:\n"
"  sudo gtrace-bpf --all                    # every CUDA process, until Ctrl-C\n"
"  sudo gtrace-bpf --all -d 30s -o run.gtrace   # 30 seconds into run.gtrace\n"
"  sudo gtrace-bpf -p 4242,4243             # running processes, until they exit\n"
"  sudo gtrace-bpf --cgroup system.slice/train.service\n"
"                                           # a unit's or container's processes\n"
"  sudo gtrace-bpf -- python train.py       # start a command and trace it\n"
"  sudo gtrace-bpf python train.py          # the same: a first word that is no\n"
"                                           # command of gtrace-bpf starts CMD\n"
"  sudo gtrace-bpf --all --trace cuda       # libcuda calls only (no ioctls,\n"
"                                           # no scheduling)\n"
"  sudo gtrace-bpf --cupti -- ./train       # the GPU side too (CUPTI agent)\n"
"  sudo gtrace-bpf --all --mode light       # long runs: launches sampled\n"
"  sudo gtrace-bpf -c cudaProfilerApi -- ./train\n"
"                                # only between cudaProfilerStart and Stop\n"
"  gtrace-bpf dump run.gtrace | head        # one JSON object per call\n"
"  gtrace-bpf dump --summary run.gtrace     # counts per API and drops\n"
"  sudo gtrace-bpf census -- ./train        # the libcuda functions it calls\n"
"\v"
"Without -o the file is named {name}_{scenario}_{YYYYMMDD}_v{N}.gtrace in the\n"
"current directory (name: the command, or 'system' for --all). CMD's own options\n"
"follow it: gtrace-bpf takes none after CMD's first word. Needs root, or\n"
"CAP_BPF and CAP_PERFMON, and a kernel with BTF and uprobes.\n"
"\n"
"EXIT STATUS (every command): 0 done; 1 failed while working (unreadable or\n"
"damaged input, cannot write, cannot load or attach); 2 bad command line. With\n"
"CMD (record, census) the command's own status, 128+N if signal N ended it, and\n"
"as a shell: 127 when CMD is not found, 126 when it cannot be run (no trace).";

enum {
	OPT_SCENARIO = 0x100, OPT_MAX_SIZE, OPT_BUFSIZE, OPT_LIBCUDA, OPT_NO_LAUNCH_EXIT, OPT_LAUNCH_EXIT,
	OPT_IOCTL_MAJORS, OPT_CUPTI, OPT_CUPTI_LIB, OPT_MODE, OPT_LIGHT_WINDOW, OPT_NVTX_CAPTURE,
	OPT_RANGE_END, OPT_GPU_METRICS, OPT_LIBNCCL, OPT_CGROUP, OPT_AS_ROOT, OPT_STATS,
};

/* --stats: the reports printed at the end, as nsys' --stats=true does */
#define RECORD_STATS "cuda_api_sum,cuda_gpu_kern_sum,cuda_launch_sum,cuda_sync_sum,cuda_mem_size_sum"
#define RECORD_STATS_WORDS "cuda_api_sum, cuda_gpu_kern_sum, cuda_launch_sum, cuda_sync_sum, cuda_mem_size_sum"

static const struct argp_option record_options[] = {
	{ "all", 'a', NULL, 0, "Trace every process that uses CUDA, also ones started later", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "Trace only these processes (repeatable)", 0 },
	{ "output", 'o', "FILE", 0, "Write the trace to FILE (.gtrace is added to a name that has "
	  "not got it and is not there)", 0 },
	{ "stats", OPT_STATS, "LIST", OPTION_ARG_OPTIONAL,
	  "At the end, print stats' reports of the trace (default: " RECORD_STATS_WORDS "; LIST: "
	  "others, comma-separated)", 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace FILE if it exists", 0 },
	{ "as-root", OPT_AS_ROOT, NULL, 0,
	  "Under sudo, run CMD as root (by default it runs as the user who ran sudo, and the files "
	  "written are theirs)", 0 },
	{ "scenario", OPT_SCENARIO, "NAME", 0, "Scenario part of the default file name (default: trace)", 0 },
	{ "duration", 'd', "TIME", 0, "Stop after TIME: 30 or 30s, 500ms, 2m, 1h; -- CMD runs on untraced", 0 },
	{ "delay", 'y', "TIME", 0, "Attach only after TIME (same units as -d); CMD runs untraced meanwhile", 0 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0,
	  "Stop recording once the trace file holds SIZE (e.g. 512M); -- CMD runs on untraced", 0 },
	{ "libnccl", OPT_LIBNCCL, "PATH", 0,
	  "Also trace this libnccl file from the start, not from when a process opens it (repeatable)", 0 },
	{ "launch-exit", OPT_LAUNCH_EXIT, NULL, 0,
	  "Also probe launch returns: launches get their CPU duration and result, at the "
	  "cost of a second probe per launch (default: launches are recorded at entry only)", 0 },
	{ "no-launch-exit", OPT_NO_LAUNCH_EXIT, NULL, OPTION_HIDDEN, "", 0 },
	{ "trace", 't', "LIST", 0,
	  "Sources to record: cuda,ioctl,sched (default: all three); cupti adds --cupti, and so "
	  "does nvtx (NVTX ranges come from the CUPTI agent); none records the GPU side only "
	  "(with --cupti)", 0 },
	{ "capture-range", 'c', "KIND", 0,
	  "Record only inside ranges, per process: none (default); cudaProfilerApi (between "
	  "cuProfilerStart and cuProfilerStop, e.g. cudaProfilerStart or torch.cuda.profiler.start()); "
	  "nvtx (inside the NVTX range of --nvtx-capture; NVTX has no symbols to probe, so this needs "
	  "the CUPTI agent: --cupti -- CMD)", 0 },
	{ "nvtx-capture", OPT_NVTX_CAPTURE, "NAME[@DOMAIN]", 0,
	  "With -c nvtx: the NVTX range (push/pop or start/end message NAME, in DOMAIN or the "
	  "default domain) that opens a capture range", 0 },
	{ "capture-range-end", OPT_RANGE_END, "stop|repeat[:N]", 0,
	  "With -c: stop (default) ends the recording when the first range ends (-- CMD runs on "
	  "untraced); repeat records every range, repeat:N at most N, then stops", 0 },
	{ "ioctl-majors", OPT_IOCTL_MAJORS, "LIST", 0,
	  "Debugging: record ioctls on these device majors instead of NVIDIA's (/proc/devices)", 0 },
	{ 0 },
};

struct record_cli {
	struct record_opts rec;	/* what record__run() takes */
	struct cli_pids pids;	/* -p, into rec.pids */
	struct cli_strs libnccl;/* --libnccl, into rec.libnccl */
	bool dashdash;		/* CMD came after "--" (or "--" ended the line) */
	bool trace_none;	/* --trace none */
	bool range_end_set;	/* --capture-range-end given */
	bool nvtx_source;	/* -t nvtx: said once that it means the agent */
	const char *stats;	/* --stats: the reports, NULL = none */
	char output[PATH_MAX];	/* -o with .gtrace added */
	char written[PATH_MAX];	/* the trace written (record_opts.written) */
	struct record_common common;	/* the options record and daemon share */
};

static const char *const trace_sources[] = { "cuda", "ioctl", "sched", "cupti", "nvtx", "none", NULL };
static const char *const range_kinds[] = { "none", "cudaProfilerApi", "nvtx", NULL };

/* --capture-range-end: stop = 1 range, repeat = no limit, repeat:N. */
static int parse_range_end(const char *arg, uint32_t *max)
{
	uint64_t n;

	if (!strcmp(arg, "stop")) {
		*max = 1;
		return 0;
	}
	if (!strcmp(arg, "repeat")) {
		*max = 0;
		return 0;
	}
	if (strncmp(arg, "repeat:", 7) || cli__parse_u64(arg + 7, &n, false) || n == 0 || n > UINT32_MAX)
		return -EINVAL;
	*max = (uint32_t)n;
	return 0;
}

static const struct argp_child record_children[] = {
	{ &record_common_argp, 0, NULL, 0 },
	{ 0 },
};

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_cli *c = state->input;
	struct record_opts *o = &c->rec;
	uint64_t v;

	switch (key) {
	case ARGP_KEY_INIT:
		c->common.o = o;
		state->child_inputs[0] = &c->common;
		break;
	case 'a':
		o->all = true;
		break;
	case OPT_AS_ROOT:
		owner__cmd_as_root();
		break;
	case 'p':
		cli__push_pids(state, &c->pids, arg);
		break;
	case OPT_SCENARIO:
		if (!arg[0])
			argp_error(state, "empty scenario name");
		o->scenario = arg;
		break;
	case 'd':
		if (cli__parse_duration(arg, &o->duration) || !(o->duration > 0) || o->duration > 1e7)
			argp_error(state, "invalid duration '%s' (a time > 0: 30 or 30s, 500ms, 2m, 1h)", arg);
		break;
	case 'y':
		if (cli__parse_duration(arg, &o->delay) || !(o->delay >= 0) || o->delay > 1e7)
			argp_error(state, "invalid delay '%s' (a time: 30 or 30s, 500ms, 2m, 1h)", arg);
		break;
	case OPT_MAX_SIZE:
		if (cli__parse_u64(arg, &v, true) || v == 0)
			argp_error(state, "invalid --max-size '%s' (a size > 0, e.g. 512M, 1G)", arg);
		o->max_size = v;
		break;
	case OPT_LIBNCCL:
		cli__push_str(state, &c->libnccl, arg);
		break;
	case OPT_LAUNCH_EXIT:
		o->launch_exit = true;
		break;
	case OPT_NO_LAUNCH_EXIT:	/* the default; kept for scripts written before it was */
		o->launch_exit = false;
		break;
	case 't': {
		char *copy = strdup(arg), *tok, *save = NULL;

		if (!copy)
			argp_failure(state, 1, ENOMEM, "out of memory");
		bool none = false;

		o->trace_cuda = o->trace_ioctl = o->trace_sched = false;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			bool *on[] = { &o->trace_cuda, &o->trace_ioctl, &o->trace_sched, &o->cupti,
				       &o->cupti, &none };
			int i = cli__choice(tok, trace_sources);
			const char *near = i < 0 ? cli__nearest(tok, trace_sources) : NULL;

			if (i < 0)
				argp_error(state, "unknown source '%s' in --trace%s%s%s (cuda, ioctl, sched, "
					   "cupti, nvtx, none)", tok, near ? ": did you mean " : "",
					   near ? near : "", near ? "?" : "");
			*on[i] = true;
			c->nvtx_source |= !strcmp(tok, "nvtx");
		}
		free(copy);
		if (none && (o->trace_cuda || o->trace_ioctl || o->trace_sched))
			argp_error(state, "--trace none records no CPU-side source: it takes no other but "
				   "cupti");
		if (!none && !o->trace_cuda && !o->trace_ioctl && !o->trace_sched)
			argp_error(state, "--trace needs at least one of cuda, ioctl, sched%s",
				   o->cupti ? " (cupti adds to them), or none for the GPU side only" : "");
		c->trace_none = none;
		break;
	}
	case 'c': {
		int i;

		for (i = 0; range_kinds[i] && strcasecmp(arg, range_kinds[i]); i++)
			;
		if (!range_kinds[i])
			argp_error(state, "unknown capture range '%s' (none, cudaProfilerApi or nvtx)", arg);
		o->capture_range = (enum record_range)i;
		break;
	}
	case OPT_NVTX_CAPTURE:
		if (!arg[0] || arg[0] == '@')
			argp_error(state, "invalid --nvtx-capture '%s' (NAME or NAME@DOMAIN)", arg);
		o->nvtx_capture = arg;
		break;
	case OPT_RANGE_END:
		if (parse_range_end(arg, &o->range_max))
			argp_error(state, "invalid --capture-range-end '%s' (stop, repeat or repeat:N with "
				   "N > 0)", arg);
		c->range_end_set = true;
		break;
	case OPT_IOCTL_MAJORS:
		o->ioctl_majors = arg;
		break;
	case OPT_STATS: {
		char bad[64];

		if (arg && stats__check_reports(arg, bad, sizeof(bad))) {
			const char *near = cli__nearest(bad, stats_report_names);

			argp_error(state, "unknown report '%s' in --stats%s%s%s", bad,
				   near ? ": did you mean " : " (stats --help lists them)", near ? near : "",
				   near ? "?" : "");
		}
		c->stats = arg ? arg : RECORD_STATS;
		break;
	}
	default:
		if (cli__output_arg(key, arg, state, false, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__cmd_arg(key, state, &o->cmd, &c->dashdash);
	}
	return 0;
}

/* --cupti: the agents' records the trace holds linked to their calls,
 * written to a temporary file beside it and renamed over it. Returns 0 or a
 * negative errno. */
static int merge_spools(const struct record_spools *s)
{
	struct merge_opts mo = {
		.trace = s->trace,
		.output = s->trace,
		.force = true,
	};

	return merge__run(&mo, NULL);
}

/* The capture options together: 0, or 2 after one line on stderr. */
static int check_capture(const struct record_cli *c)
{
	const struct record_opts *o = &c->rec;
	const char *why = NULL;

	if (c->trace_none && !o->cupti)
		why = "--trace none records nothing without the GPU side: add --cupti";
	else if (c->range_end_set && o->capture_range == RECORD_RANGE_NONE)
		why = "--capture-range-end needs -c cudaProfilerApi or -c nvtx";
	else if (o->nvtx_capture && o->capture_range != RECORD_RANGE_NVTX)
		why = "--nvtx-capture needs -c nvtx";
	else if (o->capture_range == RECORD_RANGE_NVTX && !o->nvtx_capture)
		why = "-c nvtx needs --nvtx-capture NAME[@DOMAIN]: the range that opens a capture";
	else if (o->capture_range == RECORD_RANGE_NVTX && !o->cupti)
		why = "-c nvtx needs the CUPTI agent (--cupti): NVTX has no symbols to probe, the agent "
		      "reports the ranges";
	else if (o->capture_range == RECORD_RANGE_NVTX && !o->cmd)
		why = "-c nvtx needs -- CMD: the range's name reaches the agent through CMD's environment";
	else if (o->capture_range == RECORD_RANGE_PROFILER && !o->trace_cuda)
		why = "-c cudaProfilerApi needs --trace cuda: cuProfilerStart is seen through it";
	else if (o->light && !o->trace_cuda)
		why = "--mode light needs --trace cuda: it decides which libcuda calls are probed when";
	else if (o->nlibnccl && !o->trace_cuda)
		why = "--libnccl needs --trace cuda: the NCCL probes come with the libcuda ones";
	if (!why)
		return 0;
	pr_err("%s", why);
	return 2;
}

/* -o NAME: NAME.gtrace when NAME has not got the extension and nothing is
 * at NAME (what is there is refused or replaced as named). 0, or 2 after
 * one line when the name gets too long. */
static int trace_name(struct record_cli *c)
{
	const char *o = c->rec.output;
	size_t n = strlen(o);
	struct stat st;

	if ((n >= 7 && !strcmp(o + n - 7, ".gtrace")) || !strcmp(o, "-") || !lstat(o, &st) || errno != ENOENT)
		return 0;
	if (snprintf(c->output, sizeof(c->output), "%s.gtrace", o) >= (int)sizeof(c->output)) {
		pr_err("-o %s: the name is too long", o);
		return 2;
	}
	c->rec.output = c->output;
	return 0;
}

/* The command line, parsed and checked: 0, or the status to exit with
 * after one line on stderr. */
static int cmd_record_check(const struct argp *argp, int argc, char **argv, struct record_cli *c)
{
	int modes, err;

	if (cli__parse(argp, argc, argv, c))
		return 2;
	if (c->rec.output && (err = trace_name(c)))
		return err;
	if (c->nvtx_source)
		pr_info("-t nvtx: NVTX ranges are recorded by the CUPTI agent, so --cupti is on");
	c->rec.pids = c->pids.v;
	c->rec.npids = c->pids.n;
	c->rec.libnccl = c->libnccl.v;
	c->rec.nlibnccl = c->libnccl.n;
	if (c->dashdash && !c->rec.cmd) {
		pr_err("nothing after --: give the command to trace");
		return 2;
	}
	if ((err = record_common__finish(&c->common)))
		return err;
	if (c->rec.delay > 0 && c->rec.duration > 0 && c->rec.delay >= c->rec.duration) {
		pr_err("--delay %gs leaves nothing of --duration %gs to record "
			"(the duration counts from the start, the delay included)",
			c->rec.delay, c->rec.duration);
		return 2;
	}
	if (c->rec.delay > 0 && c->rec.cupti) {
		pr_err("--delay does not work with --cupti yet");
		return 2;
	}
	if ((err = check_capture(c)))
		return err;
	modes = (c->rec.all || c->rec.cgroup) + (c->rec.npids > 0) + (c->rec.cmd != NULL);
	if (modes != 1) {
		pr_err("%s", modes ? "choose one of --all (or --cgroup), -p PID and -- CMD" :
			"nothing to trace: give --all, --cgroup PATH, -p PID or -- CMD (see --help)");
		return 2;
	}
	if (c->rec.cupti_attach && c->rec.cmd) {
		pr_err("--cupti=attach loads the agent into running processes (-p PID, --all): a command "
		       "started here takes it at its start with --cupti");
		return 2;
	}
	/* --cgroup is --all within the cgroup */
	if (c->rec.cgroup) {
		c->rec.all = true;
		if ((err = cli__check_cgroup(&c->rec.cgroup)))
			return err;
	}
	/* a command that cannot run leaves no trace behind */
	return c->rec.cmd ? cli__check_cmd(c->rec.cmd[0], c->dashdash) : 0;
}

/* The doc with main.c's list of commands; NULL when out of memory. */
static char *record_doc(void)
{
	char *cmds = cli__commands_doc(), *doc = NULL;

	if (cmds && asprintf(&doc, record_doc_fmt, cmds) < 0)
		doc = NULL;
	free(cmds);
	return doc;
}

/* --stats: the reports of the trace written, on stdout after CMD's own
 * output; a trace not written or not readable is one line, the status
 * stays the recording's. */
static void print_stats(const struct record_cli *c)
{
	struct stats_opts so = { .path = c->written, .reports = c->stats, .format = STATS_TABLE,
				 .out = stdout, .err = stderr };

	if (!c->written[0]) {
		pr_warn("--stats: no trace was written");
		return;
	}
	fflush(stdout);
	if (stats__run(&so))
		pr_warn("--stats: the reports of %s could not be printed (gtrace-bpf stats %s)", c->written,
			c->written);
}

int cmd_record(int argc, char **argv, const char *cmdline)
{
	char *doc = record_doc();
	struct argp argp = { record_options, record_parse,
			     "--all | -p PID[,PID...] | --cgroup PATH\n[--] CMD [ARGS...]", doc, record_children,
			     NULL, NULL };
	struct record_cli c = { .rec = { .buffer_size = RECORD_BUFFER_DEFAULT, .scenario = "trace", .trace_cuda = true,
				  .trace_ioctl = true, .trace_sched = true, .range_max = 1,
				  .window_ns = RECORD_WINDOW_DEFAULT_NS, .period_ns = RECORD_PERIOD_DEFAULT_NS } };
	struct record_spools *spools;
	int status = doc ? cmd_record_check(&argp, argc, argv, &c) : 1;

	if (status)
		goto out;
	gt_log_level = c.common.quiet ? GT_LOG_WARN : GT_LOG_INFO + c.common.verbose;
	c.rec.quiet = c.common.quiet;
	c.rec.cmdline = cmdline;
	/* record, then merge what the CUPTI agents wrote */
	if (c.stats)
		c.rec.written = c.written;
	status = record__run(&c.rec, &spools);
	if (spools) {
		bool merged = !merge_spools(spools);

		if (!merged && status == 0)
			status = 1;
		record_spools__done(spools, merged);
	}
	if (c.stats)
		print_stats(&c);
out:
	if (!doc)
		pr_err("out of memory");
	free(doc);
	free(c.pids.v);
	free(c.common.libcuda.v);
	free(c.libnccl.v);
	return status;
}
