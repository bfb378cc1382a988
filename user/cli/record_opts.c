// SPDX-License-Identifier: MIT
/*
 * The recording options record and daemon share, parsed once: where the
 * probes go (--cgroup, --libcuda), what is recorded (--mode, --light-window,
 * --cupti, --cupti-lib, --gpu-metrics), the ring buffer, -q and -v. Each
 * command keeps only its own options and shows these under one heading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/record_opts.h"
#include "record/gpum/gpu_metrics.h"
#include "lib/log.h"

/* above the parents' keys (0x100 onwards, a few dozen) */
enum {
	RO_CGROUP = 0x180, RO_BUFSIZE, RO_LIBCUDA, RO_MODE, RO_LIGHT_WINDOW, RO_CUPTI, RO_CUPTI_LIB, RO_CUPTI_DETACH,
	RO_GPU_METRICS, RO_STACKS, RO_KEEP_LOOKUPS,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Recording (record and daemon alike):", 1 },
	{ "cgroup", RO_CGROUP, "PATH", 0,
	  "Trace every process that uses CUDA in this cgroup v2 directory or below it (a container, "
	  "a systemd unit, a job), also ones started later: an absolute path or one under the cgroup2 "
	  "mount (system.slice/train.service)", 0 },
	{ "libcuda", RO_LIBCUDA, "PATH", 0, "Also trace this libcuda file (repeatable)", 0 },
	{ "buffer-size", RO_BUFSIZE, "SIZE", 0, "Ring buffer size, a power of two up to 2G, e.g. 16M (default), 1G", 0 },
	{ "mode", RO_MODE, "full|light", 0,
	  "full (record's default): every probed call. light (the daemon's default): for long runs, at "
	  "most ~1 %: waits, allocations, modules, contexts, ioctls and off-CPU all the time; launches "
	  "and the other calls made per kernel only in full-capture windows (--light-window) or capture "
	  "ranges", 0 },
	{ "light-window", RO_LIGHT_WINDOW, "LEN/PERIOD", 0,
	  "Light mode: capture everything for LEN every PERIOD (default 200ms/5s); 0: no windows", 0 },
	{ "cupti", RO_CUPTI, "optional|attach", OPTION_ARG_OPTIONAL,
	  "Also record the GPU side (kernels, copies, sets, NVTX ranges) with the CUPTI agent and "
	  "merge it into the trace: the command of -- CMD loads it, other programs join when started "
	  "with CUDA_INJECTION64_PATH=<agent>; =attach loads it into the running processes of -p "
	  "(ptrace, x86-64; refused, said, where unsafe). An agent that never loads is a failure "
	  "(status 1) unless the option is given as =optional", 0 },
	{ "cupti-detach", RO_CUPTI_DETACH, "finalize|idle", 0,
	  "How an agent loaded into a running process leaves it: finalize (default) tears CUPTI down "
	  "in the program's next CUDA call; idle leaves CUPTI loaded with its activity off and the "
	  "subscriber slot free, as an agent started with the program pauses: a later attach skips "
	  "CUPTI's start (hundreds of ms)", 0 },
	{ "cupti-lib", RO_CUPTI_LIB, "PATH", 0,
	  "The CUPTI agent library (default: libgtrace-cupti.so next to gtrace-bpf, in "
	  "../lib/gtrace-bpf or .output)", 0 },
	{ "gpu-metrics", RO_GPU_METRICS, "HZ|off", OPTION_ARG_OPTIONAL,
	  "Sample GPU metrics through NVML (utilization, memory, clocks, power, temperature; SM, "
	  "tensor, DRAM, PCIe and NVLink activity on GPUs with GPM) HZ times a second, 1-1000 "
	  "(default: 10 in full mode, off in light mode; --gpu-metrics alone: 10)", 0 },
	{ "stacks", RO_STACKS, "none|sync|all", 0,
	  "Call stacks, native (frame pointers) and Python (CPython 3.10-3.13, file:line): sync "
	  "takes the stack of every call the host waits in or that changes memory or modules "
	  "(synchronizations, blocking copies and sets, allocations and frees, module loads, NCCL "
	  "communicators made or destroyed); all of "
	  "every call, launches, NCCL collectives and the other hot calls once per call site of a "
	  "thread; none takes "
	  "none. Default: all in full mode, sync in light mode and the daemon", 0 },
	{ "keep-lookups", RO_KEEP_LOOKUPS, NULL, 0,
	  "Record the kernel lookups (cuKernelGetFunction, which the CUDA runtime makes per launch) "
	  "all through: by default their probes come off once the names of 3 launched kernels read "
	  "from the driver's function structures held (matched the names the programs looked up, or "
	  "were symbol names), none failing", 0 },
	{ "quiet", 'q', NULL, 0, "Warnings and errors only: no status line or summary", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (-v: libbpf's warnings too, -vv: all of libbpf's log)", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	static const char *const modes[] = { "full", "light", NULL };
	struct record_common *c = state->input;
	struct record_opts *o = c ? c->o : NULL;

	if (!o)
		return ARGP_ERR_UNKNOWN;
	switch (key) {
	case RO_CGROUP:
		o->cgroup = arg;
		break;
	case RO_LIBCUDA:
		cli__push_str(state, &c->libcuda, arg);
		break;
	case RO_BUFSIZE:
		o->buffer_size = cli__buffer_size_arg(state, arg);
		break;
	case RO_MODE:
		o->light = cli__choose(state, "mode", arg, modes) == 1;
		break;
	case RO_LIGHT_WINDOW:
		cli__window_arg(state, arg, &o->window_ns, &o->period_ns);
		c->window_set = true;
		break;
	case RO_CUPTI:
		if (arg && strcmp(arg, "optional") && strcmp(arg, "attach"))
			argp_error(state, "invalid --cupti=%s (--cupti, --cupti=optional or --cupti=attach)", arg);
		o->cupti = true;
		o->cupti_optional = arg && !strcmp(arg, "optional");
		o->cupti_attach = arg && !strcmp(arg, "attach");
		break;
	case RO_CUPTI_DETACH: {
		static const char *const how[] = { "finalize", "idle", NULL };

		o->cupti_detach_idle = cli__choose(state, "--cupti-detach", arg, how) == 1;
		c->detach_set = true;
		break;
	}
	case RO_CUPTI_LIB:
		if (!arg[0])
			argp_error(state, "empty --cupti-lib path");
		o->cupti_lib = arg;
		break;
	case RO_GPU_METRICS:
		cli__gpu_metrics_arg(state, arg, &o->gpu_metrics_hz);
		c->gpum_set = true;
		break;
	case RO_STACKS: {
		static const char *const stacks[] = { "none", "sync", "all", NULL };
		static const enum record_stacks kinds[] = { RECORD_STACKS_NONE, RECORD_STACKS_SYNC,
							    RECORD_STACKS_ALL };

		o->stacks = kinds[cli__choose(state, "stacks kind", arg, stacks)];
		c->stacks_set = true;
		break;
	}
	case RO_KEEP_LOOKUPS:
		o->keep_lookups = true;
		break;
	case 'q':
		c->quiet = true;
		break;
	case 'v':
		c->verbose++;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp record_common_argp = { options, parse, NULL, NULL, NULL, NULL, NULL };

int record_common__finish(struct record_common *c)
{
	struct record_opts *o = c->o;
	const char *why = NULL;

	o->libcuda = c->libcuda.v;
	o->nlibcuda = c->libcuda.n;
	if (o->cupti_lib && !o->cupti)
		why = "--cupti-lib needs --cupti";
	else if (c->detach_set && !o->cupti)
		why = "--cupti-detach needs --cupti";
	else if (c->window_set && !o->light)
		why = "--light-window needs --mode light";
	if (why) {
		pr_err("%s", why);
		return 2;
	}
	if (!c->gpum_set)
		o->gpu_metrics_hz = o->light ? 0 : GPU_METRICS_HZ_DEFAULT;
	/* launches' stacks cost a lookup a call site (the cache): full mode
	 * takes them; a long run (light mode, the daemon) the waits' only */
	if (!c->stacks_set)
		o->stacks = o->light || c->daemon ? RECORD_STACKS_SYNC : RECORD_STACKS_ALL;
	return 0;
}
