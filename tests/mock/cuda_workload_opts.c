// SPDX-License-Identifier: MIT
/*
 * cuda_workload's command line: its options, their checks, the help.
 */
#include "cuda_workload.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTION...]\n"
		"A CUDA driver-API workload with countable calls, for testing gtrace-bpf.\n"
		"\n"
		"  --launches N     kernel launches per launch thread (default 100), in groups of 4:\n"
		"                   cuLaunchKernel(vecAdd), cuLaunchKernel_ptsz(scale),\n"
		"                   cuLaunchKernelEx(fill), cuLaunchKernel(fill); with N = 4q + r the\n"
		"                   first r of the group run q + 1 times, the others q times\n"
		"  --copies M       cuMemcpyHtoD_v2 calls (default 10)\n"
		"  --syncs K        cuStreamSynchronize calls (default 5)\n"
		"  --threads T      launch threads, each with its own stream (default 1)\n"
		"  --wait-signal    after initialization and kernel lookups print \"ready PID\"\n"
		"                   and wait for SIGUSR1 before the rest\n"
		"  --fail           also make one failing call (cuMemAlloc_v2 of 0 bytes)\n"
		"  --lookup-each    cuKernelGetFunction(fill) before every fill launch, as the\n"
		"                   CUDA runtime looks a kernel up per launch\n"
		"  --pause-at N     after launch N print \"paused PID\" and wait for SIGUSR1\n"
		"                   (calls after it are counted in calls_after_ready)\n"
		"  --flood SECONDS  launch as fast as possible on every thread for SECONDS\n"
		"  --rate N         with --flood: N launches per second per thread, evenly paced\n"
		"  --until-term     with --flood: SIGTERM ends the flood early, the rest (launch\n"
		"                   log, exit status 0) as when its time is up\n"
		"  --work US        spin US microseconds on the CPU before each launch\n"
		"                   (host work between launches, as a launch-bound program has)\n"
		"  --ranges R       cut the launches into 2R+1 parts, every second one between\n"
		"                   cuProfilerStart and cuProfilerStop (one launch thread only);\n"
		"                   0: no profiler calls at all (default: one empty range at the end)\n"
		"  --gap MS         with --ranges: sleep MS before each part but the first\n"
		"  --hold MS        with --ranges: sleep MS inside each range, before its launches\n"
		"  --gpu-idle MS    sleep MS after the first half of the launches (the GPU idles)\n"
		"  --steps S        S steps instead of --launches (one launch thread): each the group\n"
		"                   of 4 launches, a spin of --step-us, a cuStreamSynchronize; each\n"
		"                   step timed by the program (\"steps\" in the JSON line)\n"
		"  --step-us US     with --steps: spin US microseconds on the CPU in each step\n"
		"  --step-jitter J  with --steps: each step's spin varies by up to +-J %% (a fixed\n"
		"                   sequence, the same in every run)\n"
		"  --nvtx-steps     with --steps: each step an NVTX range \"step <s>\" (the libcuda\n"
		"                   mock's, recorded by the CUPTI agent over the mock libcupti)\n"
		"  --step-groups N  with --steps: N launch groups a step (default 1)\n"
		"  --step-graph     with --steps: each group one cuGraphLaunch (a CUDA graph of it)\n"
		"  --slow-steps N   with --steps: the first N steps spin 10 times --step-us (a warm-up)\n"
		"  --nvtx-lib       with --steps: in each step a 200 us NVTX range\n"
		"                   \"cub::DeviceRadixSort::SortPairs\" (a library's own range)\n"
		"  --launch-log F   write the CLOCK_MONOTONIC times (ns) before and after each launch to F\n"
		"  --fork N         fork N children (32 at a time), each making cuCtxSetCurrent,\n"
		"                   cuLaunchKernel, cuLaunchKernel_ptsz and cuCtxSynchronize\n"
		"  --sync-every N   cuStreamSynchronize after every N launches of a thread\n"
		"  --dtoh-every N   a blocking cuMemcpyDtoH_v2 of 64 KiB after every N launches\n"
		"  --pageable-every N  cuMemcpyHtoDAsync_v2 of 64 KiB from malloc'd memory after\n"
		"                   every N launches\n"
		"  --legacy-every N every N-th launch on the legacy default stream\n"
		"  --grid B         every launch with a grid of B x 1 x 1 blocks (no result check)\n"
		"  --devices D      set up devices 0..D-1 (default 1); launch i of thread t goes to\n"
		"                   device (t + i) %% D, with a cuCtxSetCurrent when that changes\n"
		"  --peer P         with --devices 2+: P rounds of cuMemcpyPeer (1->0),\n"
		"                   cuMemcpyDtoD_v2 (0->1) and cuMemcpy (1->0), n floats each\n"
		"  --nccl R         rank RANK of WORLD_SIZE (environment) on device LOCAL_RANK: R\n"
		"                   rounds of NCCL collectives after the launches (see the source)\n"
		"  --nccl-id FILE   with --nccl: rank 0 writes the unique id there, the others read it\n"
		"  --nccl-late R:MS with --nccl: rank R sleeps MS before each round\n"
		"  --nccl-open-ms MS with --nccl: sleep MS after loading libnccl, before the\n"
		"                   launches (a framework loads it at import, calls it later)\n"
		"  --sync-each      with --flood: cuStreamSynchronize after every launch (one thread)\n"
		"  --steady N       with --flood: N cuCtxSynchronize calls per second\n"
		"                   (both carry their sequence number in a register they do not read:\n"
		"                   rsi of cuStreamSynchronize, rdi of cuCtxSynchronize)\n"
		"  --copy-lib DIR   copy GT_LIBCUDA's file to DIR/libcuda.so.1 at the start (DIR\n"
		"                   made if missing) and dlopen that copy: a libcuda no tracer\n"
		"                   knew of, called at once after its dlopen (cuInit first)\n"
		"  --open-signal    before loading libcuda print \"waiting PID\" and wait for SIGUSR1\n"
		"  -h, --help       this help\n"
		"\n"
		"Environment: GT_LIBCUDA  libcuda to dlopen (default libcuda.so.1)\n"
		"Output: one JSON line on stdout with the calls made per libcuda api.\n"
		"Exit status: 0 success, 1 CUDA error or wrong result, 2 bad usage.\n");
}

static void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	exit(2);
}

static long parse_num(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		char msg[128];

		snprintf(msg, sizeof(msg), "invalid value for %s: '%%s' (expected %ld..%ld)", opt, min, max);
		bad_usage(msg, s);
	}
	return v;
}

void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_LAUNCHES = 256, O_COPIES, O_SYNCS, O_THREADS, O_WAIT, O_FAIL, O_FLOOD, O_RATE,
	       O_RANGES, O_GAP, O_LOG, O_HOLD, O_WORK, O_IDLE, O_FORK, O_SYNC_EVERY, O_DTOH_EVERY,
	       O_PAGEABLE_EVERY, O_LEGACY_EVERY, O_GRID, O_STEPS,
	       O_STEP_US, O_JITTER, O_NVTX_STEPS, O_STEP_GROUPS, O_STEP_GRAPH, O_NVTX_LIB, O_SLOW_STEPS, O_DEVICES, O_PEER, O_NCCL,
	       O_NCCL_ID, O_NCCL_LATE, O_NCCL_OPEN,
	       O_SYNC_EACH, O_STEADY, O_COPY_LIB, O_OPEN_SIGNAL, O_LOOKUP_EACH, O_PAUSE_AT, O_UNTIL_TERM };
	static const struct option longopts[] = {
		{ "launches", required_argument, NULL, O_LAUNCHES },
		{ "copies", required_argument, NULL, O_COPIES },
		{ "syncs", required_argument, NULL, O_SYNCS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "wait-signal", no_argument, NULL, O_WAIT },
		{ "fail", no_argument, NULL, O_FAIL },
		{ "lookup-each", no_argument, NULL, O_LOOKUP_EACH },
		{ "pause-at", required_argument, NULL, O_PAUSE_AT },
		{ "flood", required_argument, NULL, O_FLOOD },
		{ "until-term", no_argument, NULL, O_UNTIL_TERM },
		{ "rate", required_argument, NULL, O_RATE },
		{ "ranges", required_argument, NULL, O_RANGES },
		{ "gap", required_argument, NULL, O_GAP },
		{ "hold", required_argument, NULL, O_HOLD },
		{ "gpu-idle", required_argument, NULL, O_IDLE },
		{ "launch-log", required_argument, NULL, O_LOG },
		{ "work", required_argument, NULL, O_WORK },
		{ "fork", required_argument, NULL, O_FORK },
		{ "sync-every", required_argument, NULL, O_SYNC_EVERY },
		{ "dtoh-every", required_argument, NULL, O_DTOH_EVERY },
		{ "pageable-every", required_argument, NULL, O_PAGEABLE_EVERY },
		{ "legacy-every", required_argument, NULL, O_LEGACY_EVERY },
		{ "grid", required_argument, NULL, O_GRID },
		{ "steps", required_argument, NULL, O_STEPS },
		{ "step-us", required_argument, NULL, O_STEP_US },
		{ "step-jitter", required_argument, NULL, O_JITTER },
		{ "nvtx-steps", no_argument, NULL, O_NVTX_STEPS },
		{ "step-groups", required_argument, NULL, O_STEP_GROUPS },
		{ "step-graph", no_argument, NULL, O_STEP_GRAPH },
		{ "nvtx-lib", no_argument, NULL, O_NVTX_LIB },
		{ "slow-steps", required_argument, NULL, O_SLOW_STEPS },
		{ "devices", required_argument, NULL, O_DEVICES },
		{ "peer", required_argument, NULL, O_PEER },
		{ "nccl", required_argument, NULL, O_NCCL },
		{ "nccl-id", required_argument, NULL, O_NCCL_ID },
		{ "nccl-late", required_argument, NULL, O_NCCL_LATE },
		{ "nccl-open-ms", required_argument, NULL, O_NCCL_OPEN },
		{ "sync-each", no_argument, NULL, O_SYNC_EACH },
		{ "steady", required_argument, NULL, O_STEADY },
		{ "copy-lib", required_argument, NULL, O_COPY_LIB },
		{ "open-signal", no_argument, NULL, O_OPEN_SIGNAL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .launches = 100, .copies = 10, .syncs = 5, .threads = 1, .ranges = -1,
			    .devices = 1, .late_rank = -1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case O_LAUNCHES:
			o->launches = parse_num("--launches", optarg, 0, 1000000000L);
			break;
		case O_COPIES:
			o->copies = parse_num("--copies", optarg, 0, 1000000L);
			break;
		case O_SYNCS:
			o->syncs = parse_num("--syncs", optarg, 0, 1000000L);
			break;
		case O_THREADS:
			o->threads = parse_num("--threads", optarg, 1, MAX_THREADS);
			break;
		case O_FLOOD:
			o->flood_s = parse_num("--flood", optarg, 1, 86400);
			break;
		case O_UNTIL_TERM:
			o->until_term = true;
			break;
		case O_RATE:
			o->rate = parse_num("--rate", optarg, 1, 100000000L);
			break;
		case O_RANGES:
			o->ranges = parse_num("--ranges", optarg, 0, 64);
			break;
		case O_GAP:
			o->gap_ms = parse_num("--gap", optarg, 0, 60000);
			break;
		case O_HOLD:
			o->hold_ms = parse_num("--hold", optarg, 0, 60000);
			break;
		case O_IDLE:
			o->idle_ms = parse_num("--gpu-idle", optarg, 0, 60000);
			break;
		case O_LOG:
			o->launch_log = optarg;
			break;
		case O_WORK:
			o->work_us = parse_num("--work", optarg, 1, 1000000L);
			break;
		case O_FORK:
			o->forks = parse_num("--fork", optarg, 1, 100000);
			break;
		case O_SYNC_EVERY:
		case O_DTOH_EVERY:
		case O_PAGEABLE_EVERY:
		case O_LEGACY_EVERY:
		case O_GRID:
		{
			/* the planted patterns: a count from 1, fields in their ids' order */
			static const char *const names[] = { "--sync-every", "--dtoh-every",
							     "--pageable-every", "--legacy-every",
							     "--grid" };

			*(&o->sync_every + (c - O_SYNC_EVERY)) =
				parse_num(names[c - O_SYNC_EVERY], optarg, 1, 1000000L);
			break;
		}
		case O_STEPS:
			o->steps = parse_num("--steps", optarg, 1, 1000000L);
			break;
		case O_STEP_US:
			o->step_us = parse_num("--step-us", optarg, 0, 10000000L);
			break;
		case O_JITTER:
			o->step_jitter = parse_num("--step-jitter", optarg, 0, 99);
			break;
		case O_NVTX_STEPS:
			o->nvtx_steps = true;
			break;
		case O_STEP_GROUPS:
			o->step_groups = parse_num("--step-groups", optarg, 1, 10000);
			break;
		case O_STEP_GRAPH:
			o->step_graph = true;
			break;
		case O_NVTX_LIB:
			o->nvtx_lib = true;
			break;
		case O_SLOW_STEPS:
			o->slow_steps = parse_num("--slow-steps", optarg, 1, 1000000L);
			break;
		case O_DEVICES:
			o->devices = parse_num("--devices", optarg, 1, MAX_DEV);
			break;
		case O_PEER:
			o->peer = parse_num("--peer", optarg, 0, 1000000L);
			break;
		case O_NCCL:
			o->nccl = parse_num("--nccl", optarg, 1, 1000000L);
			break;
		case O_NCCL_ID:
			o->nccl_id = optarg;
			break;
		case O_NCCL_LATE: {
			char *colon = strchr(optarg, ':');

			if (!colon)
				bad_usage("invalid value for --nccl-late: '%s' (expected RANK:MS)", optarg);
			*colon = 0;
			o->late_rank = parse_num("--nccl-late", optarg, 0, 1 << 20);
			o->late_ms = parse_num("--nccl-late", colon + 1, 0, 60000);
			break;
		}
		case O_NCCL_OPEN:
			o->open_ms = parse_num("--nccl-open-ms", optarg, 0, 60000);
			break;
		case O_WAIT:
			o->wait_signal = true;
			break;
		case O_SYNC_EACH:
			o->sync_each = true;
			break;
		case O_STEADY:
			o->steady = parse_num("--steady", optarg, 1, 100000L);
			break;
		case O_FAIL:
			o->fail = true;
			break;
		case O_LOOKUP_EACH:
			o->lookup_each = true;
			break;
		case O_PAUSE_AT:
			o->pause_at = parse_num("--pause-at", optarg, 1, 1L << 40);
			break;
		case O_COPY_LIB:
			o->copy_lib = optarg;
			break;
		case O_OPEN_SIGNAL:
			o->open_signal = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			bad_usage("option %s needs a value", argv[optind - 1]);
			break;
		default:
			bad_usage("unknown option '%s'", argv[optind - 1]);
			break;
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->rate && !o->flood_s)
		bad_usage("%s needs --flood", "--rate");
	if (o->work_us && (o->rate || o->ranges > 0))
		bad_usage("%s does not go with --rate or --ranges", "--work");
	if (o->ranges > 0 && (o->threads > 1 || o->flood_s))
		bad_usage("%s needs one launch thread and no --flood", "--ranges");
	if ((o->lookup_each || o->pause_at) &&
	    (o->threads > 1 || o->flood_s || o->ranges > 0 || o->steps || o->wait_signal))
		bad_usage("%s needs one launch thread and no --flood, --ranges, --steps or --wait-signal",
			  o->lookup_each ? "--lookup-each" : "--pause-at");
	if (o->sync_each && (!o->flood_s || o->threads > 1))
		bad_usage("%s needs --flood and one launch thread", "--sync-each");
	if (o->until_term && !o->flood_s)
		bad_usage("%s needs --flood", "--until-term");
	if (o->steady && !o->flood_s)
		bad_usage("%s needs --flood", "--steady");
	if (o->idle_ms && (o->ranges > 0 || o->flood_s))
		bad_usage("%s does not go with --ranges or --flood", "--gpu-idle");
	if ((o->sync_every || o->dtoh_every || o->pageable_every || o->legacy_every) &&
	    (o->ranges > 0 || o->flood_s))
		bad_usage("%s does not go with --ranges or --flood", "a planted pattern");
	if (o->steps && (o->threads > 1 || o->flood_s || o->ranges > 0 || o->idle_ms || o->devices > 1))
		bad_usage("%s needs one launch thread and no --flood, --ranges, --gpu-idle or --devices",
			  "--steps");
	if ((o->step_groups || o->step_graph || o->nvtx_lib || o->slow_steps) && !o->steps)
		bad_usage("%s needs --steps", o->step_groups ? "--step-groups" : o->step_graph ? "--step-graph"
											: "--nvtx-lib");
	if ((o->step_us || o->step_jitter || o->nvtx_steps) && !o->steps)
		bad_usage("%s needs --steps", o->step_us ? "--step-us" : o->step_jitter ? "--step-jitter"
										: "--nvtx-steps");
	if (o->peer && o->devices < 2)
		bad_usage("%s needs --devices 2 or more", "--peer");
	if ((o->nccl_id || o->late_rank >= 0 || o->open_ms) && !o->nccl)
		bad_usage("%s needs --nccl", o->nccl_id ? "--nccl-id" : o->open_ms ? "--nccl-open-ms" : "--nccl-late");
	if (o->nccl && (!o->nccl_id || !getenv("RANK") || !getenv("WORLD_SIZE")))
		bad_usage("%s needs --nccl-id FILE and RANK and WORLD_SIZE in the environment", "--nccl");
}
