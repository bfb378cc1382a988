// SPDX-License-Identifier: MIT
/*
 * gen_trace -S SHAPE: the trace of one process that runs STEPS iterations
 * of a known shape with exact times, for the steady-state answers of
 * analyze and diff (what each must find is known to the nanosecond):
 *
 *   eager:P   each step 24 launches of 4 kernels, a cuCtxSynchronize, host
 *             work to fill the step to P us;
 *   graph:P   each step one cuGraphLaunch of the same 24 kernels, a
 *             cuCtxSynchronize, host work to P us;
 *   host:P    each step 20 launches of one kernel, a cuCtxSynchronize and
 *             host work to P us (the host decides the step);
 *   gemm:P    after a start-up of 84 ms in a module load and 20 ms in an
 *             allocation, STEPS launches of one GEMM of P us, back to back
 *             (a launch waits while 8 are queued) and a synchronize at the end;
 *   burst:P   the same GEMMs launched without waiting (a deep queue, as
 *             PyTorch's), after 16 launches of a fill and a synchronize in the
 *             start-up: on the CPU the loop takes microseconds, its work is
 *             waited for at the synchronize after it.
 *
 * -W WARM makes the GPU work of the first WARM steps (GEMMs) three times as
 * long (host: a step longer; first-call compilation, clocks ramping up); the
 * host work stays as it is.  With -g the kernels run on the GPU as a merged --cupti trace
 * holds them, linked to their launches.  The process' command line is
 * "python3 bench.py --shape SHAPE" (one program whatever the shape; -P
 * names another program than python3).  -I IDLE adds as many threads that
 * make no CUDA call (a pool's), each off the CPU for most of every step.
 *
 * A synchronization closes each step: the iterations of a sync series run
 * from one synchronize's exit to the next's, so step j's host work and step
 * j+1's work make an iteration; with WARM slow steps, the first WARM - 1
 * iterations are the start-up.  It prints, after the record count, a line
 * "steady_start_ns T iterations N period_ns P startup_iterations S" with
 * what analyze must find.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen_trace_int.h"

#define NK 4		/* kernels of the eager and graph steps */
#define STEP_LAUNCHES 24
#define HOST_LAUNCHES 20
#define QUEUE 8		/* gemm: launches in flight before a launch waits */

enum shape { SH_EAGER, SH_GRAPH, SH_HOST, SH_GEMM, SH_BURST };

static const char *const knames[NK] = {
	"_Z11mlp_forwardPKfS0_Pfi",
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BUnaryFunctorIfEEEEviT0_",
	"ampere_sgemm_64x32_sliced1x4_tn",
	"_Z11adam_updatePfS_S_S_ffffi",
};
static const char gemm_name[] = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_execute_kernel";
#define HOST_KERNEL 1	/* host's one kernel: knames[1] */

struct shape_run {
	struct gen *g;
	enum shape sh;
	uint32_t pid;
	uint64_t period;	/* ns of a steady step */
	uint64_t func[NK + 1];	/* [NK]: the GEMM */
	uint64_t gpu_free;	/* when the stream's last kernel ends */
	uint64_t stream;
	uint32_t corr;
	uint64_t kernels;	/* GPU records written */
	bool dry;		/* times only, nothing written */
};

static int put(struct shape_run *s, void *rec)
{
	return s->dry ? 0 : gen__put(s->g, rec);
}

static int w_call(struct shape_run *s, uint64_t ts, uint16_t api, uint64_t a0, uint64_t a1)
{
	return s->dry ? 0 : gen__w_call(s->g, ts, s->pid, s->pid, api, a0, a1, 0, 0, 0, 0);
}

static int w_ret(struct shape_run *s, uint64_t ts, uint16_t api)
{
	return s->dry ? 0 : gen__w_ret(s->g, ts, s->pid, s->pid, api, 0, false, 0);
}

static int w_kernel(struct shape_run *s, int k, uint64_t launch_ts, uint64_t start, uint64_t dur)
{
	const char *name = k == NK ? gemm_name : knames[k];
	size_t n = strlen(name) + 1;
	struct gt_gpu_kernel *r;

	if (!s->g->gpu || s->dry)
		return 0;
	r = gen__rec_init(s->g, GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*r) + n), start, s->pid, s->pid, 0);
	r->dur = dur;
	r->launch_ts = launch_ts;
	r->correlation = ++s->corr;
	r->context = 1;
	r->stream = 13;
	r->grid[0] = 1024;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = 256;
	r->block[1] = r->block[2] = 1;
	r->flags = GT_GPU_LINKED | GT_GPU_API_MATCHED;
	r->len = (uint16_t)n;
	memcpy(r->name, name, n);
	s->kernels++;
	return put(s, r);
}

/* -I: each idle thread off the CPU from ts for dur, sleeping. */
static int w_idle(struct shape_run *s, uint64_t ts, uint64_t dur)
{
	for (int i = 1; i <= s->g->idle_threads && !s->dry; i++) {
		struct gt_offcpu *o = gen__rec_init(s->g, GT_REC_OFFCPU, sizeof(*o), ts, s->pid,
						    s->pid + (uint32_t)i, 0);
		int err;

		o->dur = dur;
		o->state = 1;
		if ((err = gen__put(s->g, o)))
			return err;
	}
	return 0;
}

/* A launch of kernel k entered at ts (its exit 4 us later), its kernel of
 * dur on the GPU after the stream's previous work. */
static int w_launch(struct shape_run *s, int k, uint64_t ts, uint64_t dur)
{
	struct gt_launch *l = gen__rec_init(s->g, GT_REC_LAUNCH, sizeof(*l), ts, s->pid, s->pid,
					    API(cuLaunchKernel));
	uint64_t start = ts + 3000 > s->gpu_free ? ts + 3000 : s->gpu_free + 1000;
	int err;

	l->func = s->func[k];
	l->stream = s->stream;
	l->grid[0] = 1024;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = 256;
	l->block[1] = l->block[2] = 1;
	err = put(s, l);
	if (!err)
		err = w_kernel(s, k, ts, start, dur);
	s->gpu_free = start + dur;
	if (!err)
		err = w_ret(s, ts + 4000, API(cuLaunchKernel));
	return err;
}

/* A synchronize entered at ts: it returns 3 us after the GPU's work.
 * Its exit time. */
static int w_sync(struct shape_run *s, uint64_t ts, uint64_t *exit_ts)
{
	uint64_t end = (s->gpu_free > ts + 2000 ? s->gpu_free : ts + 2000) + 3000;
	int err = w_call(s, ts, API(cuCtxSynchronize), 0, 0);

	if (!err)
		err = w_ret(s, end, API(cuCtxSynchronize));
	*exit_ts = end;
	return err;
}

/* One step of eager, graph or host from t0, its GPU work times slow; the
 * exit of its synchronize. */
static int w_step(struct shape_run *s, uint64_t t0, uint64_t slow, uint64_t *sync_exit)
{
	uint64_t ts = t0, kdur = s->period / 48 * slow;
	int err = w_idle(s, t0, s->period - s->period / 10), i;

	switch (s->sh) {
	case SH_EAGER:
		for (i = 0; i < STEP_LAUNCHES && !err; i++, ts += 6000)
			err = w_launch(s, i % NK, ts, kdur);
		break;
	case SH_GRAPH: {
		uint64_t start = ts + 5000;

		if (!err)
			err = w_call(s, ts, API(cuGraphLaunch), 0x5b00000000ull, s->stream);
		/* the graph's kernels, one after the other, as a replay runs them */
		for (i = 0; i < STEP_LAUNCHES && !err; i++, start += kdur + 500)
			err = w_kernel(s, i % NK, ts, start, kdur);
		s->gpu_free = start;
		if (!err)
			err = w_ret(s, ts + 8000, API(cuGraphLaunch));
		ts += 9000;
		break;
	}
	case SH_HOST:
		for (i = 0; i < HOST_LAUNCHES && !err; i++, ts += 6000)
			err = w_launch(s, HOST_KERNEL, ts, 10000 + (slow > 1 ? s->period / HOST_LAUNCHES : 0));
		break;
	default:
		return -EINVAL;
	}
	if (!err)
		err = w_sync(s, ts, sync_exit);
	return err;
}

static int set_up(struct shape_run *s, uint64_t *ts, const char *shape)
{
	struct gen *g = s->g;
	uint64_t module = 0x5600000000ull;
	char cmd[96];
	int err, k;

	snprintf(cmd, sizeof(cmd), "%.40s bench.py --shape %s", g->prog ? g->prog : "python3", shape);
	err = gen__w_proc(g, GT_REC_EXEC, *ts, s->pid, g->prog ? g->prog : "python3");
	if (!err)
		err = gen__w_str(g, GT_REC_NAME, *ts + 10, s->pid, 0, 0, s->pid, GT_NAME_PROCESS, cmd);
	if (!err)
		err = gen__w_str(g, GT_REC_NAME, *ts + 20, s->pid, 0, 0, s->pid, GT_NAME_THREAD, "python3");
	for (int i = 1; i <= g->idle_threads && !err; i++) {
		snprintf(cmd, sizeof(cmd), "pt_worker%d", i);
		err = gen__w_str(g, GT_REC_NAME, *ts + 30, s->pid, 0, 0, s->pid + (uint32_t)i, GT_NAME_THREAD, cmd);
	}
	*ts += 1000;
	if (!err)
		err = gen__w_call_ret(g, ts, s->pid, API(cuInit), 0, 0, 0, false, 0);
	if (!err)
		err = gen__w_call_ret(g, ts, s->pid, API(cuDevicePrimaryCtxRetain), 0x7ffc1000, 0, 0, true,
				      0x5700000000ull);
	/* gemm: the library's loading and a large allocation make the start-up */
	if (!err)
		err = gen__w_call(g, *ts, s->pid, s->pid, API(cuModuleLoadData), 0x7ffc1008, 0x5800000000ull,
				  0, 0, 0, 0);
	*ts += s->sh >= SH_GEMM ? 84000000 : 2000000;
	if (!err)
		err = gen__w_ret(g, *ts, s->pid, s->pid, API(cuModuleLoadData), 0, true, module);
	for (k = 0; k <= NK && !err; k++) {
		s->func[k] = 0x5c00000000ull + (uint64_t)k * 0x100;
		*ts += 1000;
		err = gen__w_str(g, GT_REC_CALL_STR, *ts, s->pid, s->pid, API(cuModuleGetFunction), module, 0,
				 k == NK ? gemm_name : knames[k]);
		*ts += 2000;
		if (!err)
			err = gen__w_ret(g, *ts, s->pid, s->pid, API(cuModuleGetFunction), 0, true, s->func[k]);
	}
	if (!err)
		err = gen__w_call(g, *ts += 1000, s->pid, s->pid, API(cuMemAlloc_v2), 0x7ffc2000, 1ull << 34,
				  0, 0, 0, 0);
	*ts += s->sh >= SH_GEMM ? 20000000 : 50000;
	if (!err)
		err = gen__w_ret(g, *ts, s->pid, s->pid, API(cuMemAlloc_v2), 0, true, 0x7f1000000000ull);
	*ts += 100000;
	return err;
}

/* gemm: STEPS launches, each once fewer than QUEUE are ahead of it on the
 * GPU, and a synchronize at the end. */
static int gemm_loop(struct shape_run *s, uint64_t *ts, long steps, long warm, uint64_t *steady_start)
{
	uint64_t *end = calloc((size_t)steps, sizeof(*end)), x = *ts;
	int err = 0;

	if (!end)
		return -ENOMEM;
	for (long i = 0; i < steps && !err; i++) {
		uint64_t dur = s->period * (i < warm ? 3 : 1);

		if (i >= QUEUE && end[i - QUEUE] > *ts)
			*ts = end[i - QUEUE];	/* the launch waits for room in the queue */
		/* launch i + 1 waits for GEMM i + 1 - QUEUE to end: from launch
		 * warm + QUEUE - 1 on, launches are a steady GEMM apart */
		if (i == warm + QUEUE - 1)
			*steady_start = *ts;
		err = w_launch(s, NK, *ts, dur);
		end[i] = s->gpu_free;
		*ts += 6000;
	}
	if (!err)
		err = w_sync(s, *ts, &x);
	*ts = x;
	free(end);
	return err;
}

int gen__shape(struct gen *g, const char *arg, long steps, long warm)
{
	struct shape_run s = { .g = g, .pid = PID_BASE, .stream = 0x5900000000ull };
	char shape[16];
	const char *colon = strchr(arg, ':');
	uint64_t ts = 1000000000ull, start, busy = 0, sync_exit = 0, steady_start = 0;
	long startup = 0, iters = 0;
	unsigned long long p_us;
	char *end;
	int err;

	if (!colon || (size_t)(colon - arg) >= sizeof(shape))
		return -EINVAL;
	memcpy(shape, arg, (size_t)(colon - arg));
	shape[colon - arg] = '\0';
	errno = 0;
	p_us = strtoull(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p_us < 500 || p_us > 10000000 || warm >= steps)
		return -EINVAL;
	s.period = p_us * 1000;
	if (!strcmp(shape, "eager"))
		s.sh = SH_EAGER;
	else if (!strcmp(shape, "graph"))
		s.sh = SH_GRAPH;
	else if (!strcmp(shape, "host"))
		s.sh = SH_HOST;
	else if (!strcmp(shape, "gemm"))
		s.sh = SH_GEMM;
	else if (!strcmp(shape, "burst"))
		s.sh = SH_BURST;
	else
		return -EINVAL;
	err = set_up(&s, &ts, shape);
	if (!err && s.sh == SH_BURST) {
		uint64_t x = ts;

		/* the start-up's fill, in 16 launches, and its synchronize */
		for (int i = 0; i < 16 && !err; i++, ts += 6000)
			err = w_launch(&s, HOST_KERNEL, ts, 300000);
		if (!err)
			err = w_sync(&s, ts, &x);
		ts = x + 5000000;
		for (long i = 0; i < steps && !err; i++, ts += 6000)
			err = w_launch(&s, NK, ts, s.period * (i < warm ? 3 : 1));
		if (!err)
			err = w_sync(&s, ts, &x);
		steady_start = x;	/* here: the end, where the synchronize returns */
		ts = x;
		startup = 0;
		iters = steps - 1;
	} else if (!err && s.sh == SH_GEMM) {
		err = gemm_loop(&s, &ts, steps, warm, &steady_start);
		startup = warm + QUEUE - 1;
		/* a queued GEMM starts 1 us after the one before */
		s.period += 1000;
		iters = steps - 1 - startup;
	} else if (!err) {
		/* a steady step's busy part (its launches, the GPU's work and
		 * the synchronize): a dry run of one from 0; the rest of its
		 * period is host work, the same after a slow step */
		s.dry = true;
		s.gpu_free = 0;
		err = w_step(&s, 0, 1, &busy);
		s.dry = false;
		if (!err && busy + s.period / 10 > s.period)
			err = -ERANGE;	/* host work: at least a tenth of the step */
		for (long i = 0; i < steps && !err; i++) {
			start = ts;
			s.gpu_free = start;
			err = w_step(&s, start, i < warm ? 3 : 1, &sync_exit);
			/* the first steady iteration begins at the exit of the
			 * last slow step's synchronize (of the first step's) */
			if (i == (warm ? warm - 1 : 0))
				steady_start = sync_exit;
			ts = sync_exit + (s.period - busy);
		}
		startup = warm ? warm - 1 : 0;
		iters = steps - 1 - startup;
	}
	if (!err)
		err = gen__w_proc(g, GT_REC_EXIT, ts + 1000, s.pid, "python3");
	if (!err)
		err = gen__w_end(g, ts, s.kernels, 0);
	if (!err && s.sh == SH_BURST)
		printf("steady_end_ns %llu launches %ld\n", (unsigned long long)steady_start, steps);
	else if (!err)
		printf("steady_start_ns %llu iterations %ld period_ns %llu startup_iterations %ld\n",
		       (unsigned long long)steady_start, iters, (unsigned long long)s.period, startup);
	return err;
}
