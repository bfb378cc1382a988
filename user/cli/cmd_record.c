// SPDX-License-Identifier: MIT
/* gtrace-bpf [record]: the default command. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/log.h"
#include "merge/merge.h"
#include "record/record.h"

static const char record_doc[] =
"Record the CUDA driver API calls of processes into a trace file.\n"
"\n"
"USAGE: gtrace-bpf [record] --all | -p PID [-p PID...] | -- CMD [ARGS...]  [OPTIONS]\n"
"       gtrace-bpf dump FILE [--summary]\n"
"       gtrace-bpf export FILE [-f perfetto|json|csv] [-o OUT]\n"
"       gtrace-bpf stats FILE [-r REPORT[,...]] [--format table|csv|json] [--timeunit ns|us|ms|s]\n"
"       gtrace-bpf merge TRACE SPOOL... [-o OUT] [--force]\n"
"       gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...]\n"
"\n"
"EXAMPLES:\n"
"  sudo gtrace-bpf --all                      # every CUDA process, until Ctrl-C\n"
"  sudo gtrace-bpf --all -d 30 -o run.gtrace  # 30 seconds into run.gtrace\n"
"  sudo gtrace-bpf -p 4242                    # one running process, until it exits\n"
"  sudo gtrace-bpf -- python train.py         # start a command and trace it\n"
"  sudo gtrace-bpf --all --trace cuda         # libcuda calls only, no ioctls or scheduling\n"
"  sudo gtrace-bpf --cupti -- ./train         # the GPU side too (CUPTI agent)\n"
"  gtrace-bpf dump run.gtrace | head          # one JSON object per call\n"
"  gtrace-bpf dump --summary run.gtrace       # counts per API and drops\n"
"  sudo gtrace-bpf census -- ./train          # which libcuda functions a program calls\n"
"\v"
"Without -o the file is named {name}_{scenario}_{YYYYMMDD}_v{N}.gtrace in the\n"
"current directory (name: the command, or 'system' for --all). Needs root, or\n"
"CAP_BPF and CAP_PERFMON, and a kernel with BTF and uprobes.\n"
"\n"
"EXIT STATUS (every command): 0 done; 1 failed while working (unreadable or\n"
"damaged input, cannot write, cannot load or attach); 2 bad command line. With\n"
"-- CMD (record, census) the command's own status, 128+N if signal N ended it.";

enum {
	OPT_FORCE = 0x100, OPT_SCENARIO, OPT_BUFSIZE, OPT_LIBCUDA, OPT_NO_LAUNCH_EXIT, OPT_LAUNCH_EXIT,
	OPT_TRACE, OPT_IOCTL_MAJORS, OPT_CUPTI, OPT_CUPTI_LIB,
};

static const struct argp_option record_options[] = {
	{ "all", 'a', NULL, 0, "Trace every process that uses CUDA, also ones started later", 0 },
	{ "pid", 'p', "PID", 0, "Trace only this process (repeatable)", 0 },
	{ "output", 'o', "FILE", 0, "Write the trace to FILE", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace FILE if it exists", 0 },
	{ "scenario", OPT_SCENARIO, "NAME", 0, "Scenario part of the default file name (default: trace)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "buffer-size", OPT_BUFSIZE, "SIZE", 0, "Ring buffer size, a power of two up to 2G, e.g. 64M (default), 1G", 0 },
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "Also trace this libcuda file (repeatable)", 0 },
	{ "launch-exit", OPT_LAUNCH_EXIT, NULL, 0,
	  "Also probe launch returns: launches get their CPU duration and result, at the "
	  "cost of a second probe per launch (default: launches are recorded at entry only)", 0 },
	{ "no-launch-exit", OPT_NO_LAUNCH_EXIT, NULL, OPTION_HIDDEN, "", 0 },
	{ "trace", OPT_TRACE, "LIST", 0,
	  "Sources to record: cuda,ioctl,sched (default: all three); cupti adds --cupti", 0 },
	{ "cupti", OPT_CUPTI, "optional", OPTION_ARG_OPTIONAL,
	  "Also record the GPU side (kernels, copies, sets, NVTX ranges) with the CUPTI agent and "
	  "merge it into the trace. -- CMD: loaded into CMD; --all/-p: programs started with "
	  "CUDA_INJECTION64_PATH=<agent> join. An agent that never loads is a failure (status 1) "
	  "unless --cupti=optional", 0 },
	{ "cupti-lib", OPT_CUPTI_LIB, "PATH", 0,
	  "The CUPTI agent library (default: libgtrace-cupti.so next to gtrace-bpf, in "
	  "../lib/gtrace-bpf or .output)", 0 },
	{ "ioctl-majors", OPT_IOCTL_MAJORS, "LIST", 0,
	  "Debugging: record ioctls on these device majors instead of NVIDIA's (/proc/devices)", 0 },
	{ "quiet", 'q', NULL, 0, "No status line or summary", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (-v: libbpf's warnings too, -vv: all of libbpf's log)", 0 },
	{ 0 },
};

struct record_cli {
	struct record_opts rec;	/* what record__run() takes */
	int verbose;		/* -v count: the log tier above info */
	bool quiet;		/* -q: warnings and errors only */
};

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_cli *c = state->input;
	struct record_opts *o = &c->rec;
	uint64_t v;
	char *end;
	void *p;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (cli__parse_u64(arg, &v, false) || v == 0 || v > 4194304)
			argp_error(state, "invalid pid '%s'", arg);
		p = realloc(o->pids, (o->npids + 1) * sizeof(*o->pids));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->pids = p;
		o->pids[o->npids++] = (pid_t)v;
		break;
	case 'o':
		/* chunks go where the last one ended and a damaged tail is
		 * cut off: a pipe cannot take a trace */
		if (!strcmp(arg, "-"))
			argp_error(state, "a trace cannot be written to standard output (-o -): "
				   "give a file name");
		if (!arg[0])
			argp_error(state, "empty output name");
		o->output = arg;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_SCENARIO:
		if (!arg[0])
			argp_error(state, "empty scenario name");
		o->scenario = arg;
		break;
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->duration > 0) || o->duration > 1e7)
			argp_error(state, "invalid duration '%s' (seconds > 0)", arg);
		break;
	case OPT_BUFSIZE:
		if (cli__parse_u64(arg, &v, true) || v < 4096)
			argp_error(state, "invalid buffer size '%s' (4K..2G, e.g. 64M)", arg);
		/* a BPF ring buffer's size is a u32 power of two */
		if (v > (2ull << 30))
			argp_error(state, "--buffer-size %s: a BPF ring buffer holds at most 2G "
				   "(sizes round up to a power of two)", arg);
		o->buffer_size = v;
		break;
	case OPT_LIBCUDA:
		p = realloc(o->libcuda, (o->nlibcuda + 1) * sizeof(*o->libcuda));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->libcuda = p;
		o->libcuda[o->nlibcuda++] = arg;
		break;
	case OPT_LAUNCH_EXIT:
		o->launch_exit = true;
		break;
	case OPT_NO_LAUNCH_EXIT:	/* the default; kept for scripts written before it was */
		o->launch_exit = false;
		break;
	case OPT_TRACE: {
		char *copy = strdup(arg), *tok, *save = NULL;

		if (!copy)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->trace_cuda = o->trace_ioctl = o->trace_sched = false;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "cuda"))
				o->trace_cuda = true;
			else if (!strcmp(tok, "ioctl"))
				o->trace_ioctl = true;
			else if (!strcmp(tok, "sched"))
				o->trace_sched = true;
			else if (!strcmp(tok, "cupti"))
				o->cupti = true;
			else
				argp_error(state, "unknown source '%s' in --trace (cuda, ioctl, sched, cupti)",
					   tok);
		}
		free(copy);
		if (!o->trace_cuda && !o->trace_ioctl && !o->trace_sched)
			argp_error(state, "--trace needs at least one of cuda, ioctl, sched%s",
				   o->cupti ? " (cupti adds to them)" : "");
		break;
	}
	case OPT_CUPTI:
		if (arg && strcmp(arg, "optional"))
			argp_error(state, "invalid --cupti=%s (only --cupti=optional)", arg);
		o->cupti = true;
		o->cupti_optional = arg != NULL;
		break;
	case OPT_CUPTI_LIB:
		if (!arg[0])
			argp_error(state, "empty --cupti-lib path");
		o->cupti_lib = arg;
		break;
	case OPT_IOCTL_MAJORS:
		o->ioctl_majors = arg;
		break;
	case 'q':
		c->quiet = true;
		break;
	case 'v':
		c->verbose++;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (to trace a command, put it after --)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* --cupti: the agents' spool files into the trace, written to a temporary
 * file beside it and renamed over it. Returns 0 or a negative errno. */
static int merge_spools(const struct record_spools *s)
{
	struct merge_opts mo = {
		.trace = s->trace,
		.output = s->trace,
		.force = true,
		.spools = (const char *const *)s->files,
		.nspools = s->nfiles,
		.want_pid = s->want_pid,
		.want_ctx = s->want_ctx,
	};

	return merge__run(&mo, NULL);
}

int cmd_record(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { record_options, record_parse, NULL, record_doc, NULL, NULL, NULL };
	struct record_cli c = { .rec = { .buffer_size = 64ull << 20, .scenario = "trace", .trace_cuda = true,
				  .trace_ioctl = true, .trace_sched = true } };
	int nopt = cli__split_cmd(argc, argv, &c.rec.cmd), status, modes;
	struct record_spools *spools;

	/* a bad command line (2) still frees the -p and --libcuda lists */
	status = 2;
	if (cli__parse(&argp, nopt, argv, &c))
		goto out;
	if (c.rec.cmd && !c.rec.cmd[0]) {
		fprintf(stderr, "gtrace-bpf: nothing after --: give the command to trace\n");
		goto out;
	}
	if (c.rec.cupti_lib && !c.rec.cupti) {
		fprintf(stderr, "gtrace-bpf: --cupti-lib needs --cupti\n");
		goto out;
	}
	modes = c.rec.all + (c.rec.npids > 0) + (c.rec.cmd != NULL);
	if (modes != 1) {
		fprintf(stderr, "gtrace-bpf: %s\n", modes ? "choose one of --all, -p PID and -- CMD" :
			"nothing to trace: give --all, -p PID or -- CMD (see --help)");
		goto out;
	}
	gt_log_level = c.quiet ? GT_LOG_WARN : GT_LOG_INFO + c.verbose;
	c.rec.quiet = c.quiet;
	c.rec.cmdline = cmdline;
	/* record, then merge what the CUPTI agents wrote */
	status = record__run(&c.rec, &spools);
	if (spools) {
		bool merged = !merge_spools(spools);

		if (!merged && status == 0)
			status = 1;
		record_spools__done(spools, merged);
	}
out:
	free(c.rec.pids);
	free(c.rec.libcuda);
	return status;
}
