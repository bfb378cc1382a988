// SPDX-License-Identifier: MIT
/*
 * cuda_workload's launches: the four operations, the launch threads (for a
 * count, flooding, in steps or in profiler ranges, with the planted
 * patterns), the launch log, the numbered syncs and --fork's children.
 */
#include "cuda_workload.h"

/* ------------------------------------------------------------------ */
/* launches                                                             */

const char *const op_names[OP__COUNT] = { "vecAdd", "scale", "fill_ex", "fill" };
const char *const op_apis[OP__COUNT] = {
	"cuLaunchKernel(vecAdd)", "cuLaunchKernel_ptsz(scale)", "cuLaunchKernelEx(fill)",
	"cuLaunchKernel(fill)",
};

/* per device (index 0 .. ndev - 1) */
CUcontext ctxs[MAX_DEV];
CUfunction f_vecadd[MAX_DEV], f_scale[MAX_DEV], f_fill[MAX_DEV];
CUkernel k_fill;
sigset_t usr1_set;
CUdeviceptr d_a[MAX_DEV], d_b[MAX_DEV], d_c[MAX_DEV];
int ndev = 1;
int n_elems = N_ELEMS;
float *h_pinned;		/* the cuMemAllocHost_v2 buffer */
char *h_pageable;		/* --pageable-every's malloc'd buffer */
struct opts *planted;		/* the planted patterns' options */

/* --launch-log: the times before and after each launch, kept until the
 * end; the probe's time of a launch lies between the two. */
uint64_t *log_ts;		/* log_cap pairs: before, after */
size_t log_len, log_cap;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The before time of a new launch; its slot, or SIZE_MAX when not logged. */
static size_t log_launch(void)
{
	uint64_t t;
	size_t i;

	if (!log_ts)
		return SIZE_MAX;
	t = mono_ns();
	i = __atomic_fetch_add(&log_len, 1, __ATOMIC_RELAXED);
	if (i >= log_cap)
		return SIZE_MAX;
	log_ts[2 * i] = t;
	return i;
}

static void log_launch_end(size_t i)
{
	if (i != SIZE_MAX)
		log_ts[2 * i + 1] = mono_ns();
}

static void launch_op(int op, CUstream s, int dv)
{
	float v_ex = FILL_EX_VALUE, v = FILL_VALUE;
	unsigned int n = (unsigned int)n_elems;
	unsigned int g = planted && planted->grid ? (unsigned int)planted->grid : 0;
	size_t slot = log_launch();

	switch (op) {
	case OP_VECADD: {
		void *args[] = { &d_a[dv], &d_b[dv], &d_c[dv], &n_elems };

		CK(cuLaunchKernel, f_vecadd[dv], g ? g : n / 256, 1, 1, 256, 1, 1, 0, s, args, NULL);
		break;
	}
	case OP_SCALE: {
		void *args[] = { &d_c[dv], &n_elems };

		CK(cuLaunchKernel_ptsz, f_scale[dv], g ? g : n / 256, 1, 1, 256, 1, 1, 0, s, args, NULL);
		break;
	}
	case OP_FILL_EX: {
		void *args[] = { &d_a[dv], &n_elems, &v_ex };
		CUlaunchConfig cfg;

		memset(&cfg, 0, sizeof(cfg));
		cfg.gridDimX = g ? g : n / 128;
		cfg.gridDimY = 1;
		cfg.gridDimZ = 1;
		cfg.blockDimX = 128;
		cfg.blockDimY = 1;
		cfg.blockDimZ = 1;
		cfg.sharedMemBytes = 256;
		cfg.hStream = s;
		cfg.attrs = NULL;
		cfg.numAttrs = 0;
		CK(cuLaunchKernelEx, &cfg, f_fill[dv], args, NULL);
		break;
	}
	default: {
		void *args[] = { &d_b[dv], &n_elems, &v };

		CK(cuLaunchKernel, f_fill[dv], g ? g : n / 1024, g ? 1 : 2, g ? 1 : 2, 256, 1, 1, 64, s,
		   args, NULL);
		break;
	}
	}
	log_launch_end(slot);
}

/* Launch i of worker w: operation i % 4, on device (index + i) % ndev,
 * whose context it makes current when its thread has another. */
static void launch_i(struct worker *w, long i, bool legacy)
{
	int dv = (int)((w->index + i) % ndev), op = (int)(i % OP__COUNT);

	if (ndev > 1 && w->cur != dv) {
		CK(cuCtxSetCurrent, ctxs[dv]);
		w->cur = dv;
	}
	launch_op(op, legacy ? NULL : w->streams[dv], dv);
	w->done[op]++;
	w->on_dev[dv]++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --steps: each step the launch group, the spin, the sync; timed. */
static void run_steps(struct worker *w)
{
	uint64_t prev = 0;

	for (long s = 0; s < w->steps; s++) {
		/* the golden-ratio sequence spreads the jitter evenly over [-J, J] % */
		double frac = (double)s * 0.6180339887498949, f;
		uint64_t t0 = mono_ns(), t1, until;

		frac -= (double)(long)frac;
		f = 1.0 + (double)w->step_jitter / 100.0 * (2.0 * frac - 1.0);
		if (s)
			w->period_ns[s - 1] = t0 - prev;
		prev = t0;
		for (long g = 0; g < w->step_groups; g++) {
			if (w->step_graph) {
				/* the group captured once: one launch of its graph */
				CUresult r = p_cuGraphLaunch((CUgraphExec)(uintptr_t)0x6a11, w->stream);

				if (r != CUDA_SUCCESS)
					cuda_fail("cuGraphLaunch", r);
				continue;
			}
			for (int op = 0; op < OP__COUNT; op++) {
				launch_op(op, w->stream, 0);
				w->done[op]++;
			}
		}
		until = t0 + (uint64_t)((double)w->step_us * 1000.0 * f * (s < w->slow_steps ? 10 : 1));
		while (mono_ns() < until)
			;
		if (w->nvtx_lib) {
			uint64_t l0 = mono_ns();

			p_nvtx_range("cub::DeviceRadixSort::SortPairs", l0 - 200000, l0);
		}
		CK(cuStreamSynchronize, w->stream);
		t1 = mono_ns();
		w->step_ns[s] = t1 - t0;
		if (w->nvtx_steps) {
			char name[32];

			snprintf(name, sizeof(name), "step %ld", s);
			p_nvtx_range(name, t0, t1);
		}
	}
}

/* --sync-each and --steady: the calls with their sequence numbers in a
 * register the function does not read (the x86-64 ABI lets a caller pass
 * more arguments than the callee takes). */
static unsigned long seq_sync, seq_ctx;

void sync_numbered(CUstream s)
{
	CUresult (*f)(CUstream, unsigned long) = (CUresult (*)(CUstream, unsigned long))(void *)p_cuStreamSynchronize;
	CUresult r = wl_count(WL_cuStreamSynchronize, f(s, seq_sync++));

	if (r != CUDA_SUCCESS)
		cuda_fail("cuStreamSynchronize", r);
}

void ctx_sync_numbered(void)
{
	CUresult (*f)(unsigned long) = (CUresult (*)(unsigned long))(void *)p_cuCtxSynchronize;
	CUresult r = wl_count(WL_cuCtxSynchronize, f(seq_ctx++));

	if (r != CUDA_SUCCESS)
		cuda_fail("cuCtxSynchronize", r);
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	long i;

	if (w->set_ctx) {
		char name[16];

		w->cur = w->index % ndev;
		CK(cuCtxSetCurrent, ctxs[w->cur]);
		/* named after its first call, as frameworks name their threads:
		 * the tracer must learn the rename, however short the thread lives */
		snprintf(name, sizeof(name), "gtw-%d", w->index);
		pthread_setname_np(pthread_self(), name);
	}
	if (w->flood_s > 0) {
		double start = now_s(), end = start + (double)w->flood_s;

		for (i = 0;; i++) {
			if (w->rate) {
				/* the i-th launch is due i / rate seconds in */
				double due = start + (double)i / (double)w->rate, t;

				while ((t = now_s()) < due)
					;
				if (t >= end || flood_stop)
					break;
			} else if (w->work_us) {
				double until = now_s() + w->work_us / 1e6, t;

				while ((t = now_s()) < until)
					;
				if (t >= end || flood_stop)
					break;
			} else if ((i & 15) == 0 && (now_s() >= end || flood_stop)) {
				break;
			}
			launch_i(w, i, false);
			if (w->sync_each)
				sync_numbered(w->streams[w->cur]);
			if (w->steady && w->index == 0) {
				double t = now_s();

				while (start + (double)seq_ctx / (double)w->steady <= t && t < end)
					ctx_sync_numbered();
			}
		}
	} else if (w->steps) {
		run_steps(w);
	} else if (w->ranges) {
		long parts = 2 * w->ranges + 1, k, done = 0;

		for (k = 0; k < parts; k++) {
			long len = w->launches / parts + (k < w->launches % parts);

			if (k && w->gap_ms)
				usleep((useconds_t)w->gap_ms * 1000);
			if (k % 2) {
				CK(cuProfilerStart);
				if (w->hold_ms)
					usleep((useconds_t)w->hold_ms * 1000);
			}
			for (i = done; i < done + len; i++) {
				launch_i(w, i, false);
			}
			if (k % 2) {
				CK(cuProfilerStop);
				w->in_range[k / 2] = (unsigned long)len;
			}
			done += len;
		}
	} else {
		for (i = 0; i < w->launches; i++) {
			const struct opts *p = planted;
			long k = i + 1;

			if (w->idle_ms && i == w->launches / 2)
				usleep((useconds_t)w->idle_ms * 1000);
			if (w->work_us) {
				double until = now_s() + w->work_us / 1e6;

				while (now_s() < until)
					;
			}
			if (p->lookup_each && i % OP__COUNT >= OP_FILL_EX)
				CK(cuKernelGetFunction, &f_fill[(w->index + i) % ndev], k_fill);
			launch_i(w, i, p->legacy_every && k % p->legacy_every == 0);
			if (p->pause_at && k == p->pause_at) {
				say_and_wait("paused", &usr1_set);
				after_ready = true;
			}
			/* the planted calls on the device of that launch, now current */
			if (p->sync_every && k % p->sync_every == 0)
				CK(cuStreamSynchronize, w->streams[w->cur]);
			if (p->dtoh_every && k % p->dtoh_every == 0)
				CK(cuMemcpyDtoH_v2, h_pinned, d_c[w->cur], PLANT_BYTES);
			if (p->pageable_every && k % p->pageable_every == 0)
				CK(cuMemcpyHtoDAsync_v2, d_a[w->cur], h_pageable, PLANT_BYTES, w->streams[w->cur]);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* --fork                                                               */

/* Forks n children, FORK_BATCH at a time, each making a few calls on s;
 * returns how many did not exit 0. */
#define FORK_BATCH 32
long run_forks(long n, CUstream s)
{
	pid_t batch[FORK_BATCH];
	long started = 0, failed = 0;
	int k, nb, st;

	/* nothing buffered is written twice by the children */
	fflush(stdout);
	fflush(stderr);
	while (started < n) {
		for (nb = 0; nb < FORK_BATCH && started < n; nb++, started++) {
			batch[nb] = fork();
			if (batch[nb] < 0)
				die("fork: %s", strerror(errno));
			if (batch[nb] == 0) {
				CK(cuCtxSetCurrent, ctxs[0]);
				launch_op(OP_VECADD, s, 0);
				launch_op(OP_SCALE, s, 0);
				CK(cuCtxSynchronize);
				_exit(0);
			}
		}
		for (k = 0; k < nb; k++) {
			if (waitpid(batch[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				failed++;
		}
	}
	return failed;
}
