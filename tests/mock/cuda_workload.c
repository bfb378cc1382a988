// SPDX-License-Identifier: MIT
/*
 * cuda_workload: a CUDA driver-API program with a known, countable sequence
 * of calls, for testing gtrace-bpf against the libcuda mock and the real
 * driver alike.
 *
 * libcuda is loaded with dlopen, as the CUDA runtime does: GT_LIBCUDA names
 * the file (default "libcuda.so.1", so LD_LIBRARY_PATH picks the copy).
 * Every call goes through a pointer from dlsym and is counted; the last line
 * on stdout is one JSON object with the counts, so a test can compare what
 * the tracer recorded with what the program did.
 *
 * Sequence (one launch thread):
 *   cuInit; cuDeviceGet; cuDeviceGetName; cuDevicePrimaryCtxRetain;
 *   cuCtxSetCurrent; cuModuleLoadData (PTX: vecAdd, scale);
 *   cuModuleGetFunction x2; cuLibraryLoadData (PTX: fill);
 *   cuLibraryGetKernel; cuKernelGetFunction;
 *   [--wait-signal: print "ready PID", wait for SIGUSR1]
 *   cuStreamCreate (one per launch thread); cuMemAlloc_v2 x3 (a, b, c:
 *   n floats each, n = 1<<20); cuMemAllocHost_v2 (h, n floats);
 *   cuMemcpyHtoD_v2 x M (h -> a for even copies, h -> b for odd ones);
 *   launches (below); cuMemsetD32_v2 (c, 7.0f, n/2);
 *   cuMemcpyDtoHAsync_v2 (c -> h, n floats, stream 0);
 *   cuStreamSynchronize(stream 0) x K; cuEventCreate;
 *   cuEventRecord(ev, stream 0); cuEventSynchronize; cuCtxSynchronize;
 *   cuProfilerStart; cuProfilerStop (not with --ranges);
 *   [--fail: cuMemAlloc_v2 of 0 bytes];
 *   cuMemFree_v2 x3; cuMemFreeHost; cuEventDestroy_v2;
 *   cuStreamDestroy_v2 (each stream); cuModuleUnload; cuLibraryUnload;
 *   cuDevicePrimaryCtxRelease_v2.
 *
 * Launches: each launch thread makes N launches (--launches, default 100),
 * launch i being operation i % 4 of this group:
 *   0 cuLaunchKernel      vecAdd(a, b, c, n)  grid (n/256,1,1)  block (256,1,1) shmem 0
 *   1 cuLaunchKernel_ptsz scale<float>(c, n)  grid (n/256,1,1)  block (256,1,1) shmem 0
 *   2 cuLaunchKernelEx    fill(a, n, 1.5f)    grid (n/128,1,1)  block (128,1,1) shmem 256
 *   3 cuLaunchKernel      fill(b, n, 2.5f)    grid (n/1024,2,2) block (256,1,1) shmem 64
 * all on the thread's stream.  With N = 4q + r the first r operations of the
 * group run q + 1 times, the others q times: cuLaunchKernel = 2q + (r >= 1),
 * cuLaunchKernel_ptsz = q + (r >= 2), cuLaunchKernelEx = q + (r >= 3).
 *
 * --devices D: the setup (cuDeviceGet .. cuKernelGetFunction) runs for each
 * of devices 0..D-1 (cuLibraryLoadData and cuLibraryGetKernel once), each
 * device gets a stream per launch thread and its own a, b, c, made with its
 * primary context current (cuCtxSetCurrent before each device's, and back
 * to device 0 after); launch i of launch thread t goes to device
 * (t + i) % D, on the thread's stream of that device, with a
 * cuCtxSetCurrent before it when the thread's device changes; after the
 * launches the main thread makes device 0 current again when it launched.
 * The rest runs on device 0; at the end each device's a, b, c are freed,
 * its module unloaded and its primary context released.  The JSON line says
 * how many launches went to each device ("device_launches").
 *
 * --peer P (with --devices 2 or more): after the HtoD copies, P times
 * cuMemcpyPeer(a of device 0, its context, a of device 1, its context),
 * cuMemcpyDtoD_v2(b of device 1, b of device 0) and cuMemcpy(c of device 0,
 * c of device 1), n floats each: peer copies 1->0, 0->1 and 1->0.
 *
 * --nccl R (RANK and WORLD_SIZE in the environment, as torchrun sets them;
 * libnccl loaded with dlopen, GT_LIBNCCL, default libnccl.so.2): the process
 * is rank RANK of WORLD_SIZE, on device LOCAL_RANK (its setup runs on that
 * device instead of 0).  After the launches rank 0 writes an
 * ncclGetUniqueId to --nccl-id FILE (renamed into place), the others wait
 * for it; ncclCommInitRank; then R rounds on the main stream of:
 *   ncclAllReduce(a, a, n, float32, sum);
 *   ncclGroupStart; ncclAllGather(a, b, n / W, float32);
 *   ncclReduceScatter(b, c, n / W, float32, sum); ncclGroupEnd;
 *   ncclBroadcast(c, c, n / 4, bfloat16, root 0);
 *   ncclReduce(a, b, n / 4, float32, max, root 0);
 *   ncclGroupStart; ncclSend(a, n / 8, float32, to (r + 1) % W);
 *   ncclRecv(b, n / 8, float32, from (r + W - 1) % W); ncclGroupEnd;
 * and ncclCommDestroy.  --nccl-late RANK:MS: that rank sleeps MS before
 * every round (the others wait for it in their collectives).  The JSON
 * line's "nccl" has the rank, size and the calls made per api.
 *
 * --sync-each (with --flood, one launch thread): cuStreamSynchronize(stream)
 * after every launch; --steady N (with --flood): N cuCtxSynchronize calls a
 * second, evenly due, on the launch thread.  Each of these calls carries its
 * sequence number (0, 1, ... per api) in a register the function does not
 * read (rsi of cuStreamSynchronize, rdi of cuCtxSynchronize), which the
 * tracer records among the raw arguments: a test can tell exactly which
 * calls were recorded, and count them against "calls" (the sequence's own
 * cuStreamSynchronize x K and cuCtxSynchronize are numbered on, too).
 *
 * --copy-lib DIR: libcuda is a copy of GT_LIBCUDA's file the program makes
 * in DIR (as libcuda.so.1) before its dlopen, a file that did not exist
 * when a tracer started; cuInit follows the dlopen at once.  --open-signal:
 * before that, print "waiting PID" and wait for SIGUSR1.  The JSON line says
 * which file was loaded ("lib") and when the dlopen began and how long it
 * took ("dlopen_start_ns", CLOCK_MONOTONIC; "dlopen_ns"), and when it ended
 * in CLOCK_REALTIME ("dlopen_end_real_ns"): a tracer that holds the
 * process while it attaches shows in them.
 *
 * --gpu-idle MS: each launch thread sleeps MS after the first half of its
 * launches (N / 2 of them), so the GPU idles that long between two launches.
 *
 * Planted patterns, for gtrace-bpf analyze (each every N launches of a
 * thread, after the launch): --sync-every N cuStreamSynchronize(its
 * stream); --dtoh-every N cuMemcpyDtoH_v2(h, c, 64 KiB), a blocking copy;
 * --pageable-every N cuMemcpyHtoDAsync_v2(a, p, 64 KiB, its stream) from
 * malloc'd (pageable) memory; --legacy-every N launches the N-th on the
 * legacy default stream (0) instead of the thread's; --grid B gives every
 * launch a grid of B x 1 x 1 blocks (the kernels then compute only part of
 * their data: no result check).
 * --steps S (one launch thread): S steps instead of --launches, each the
 * group of four launches, a spin of --step-us US on the CPU (each step's
 * spin US * (1 + J/100 * (2 frac(0.618 s) - 1)) with --step-jitter J: the
 * same sequence in every run) and a cuStreamSynchronize of the thread's
 * stream; the program times each step itself (CLOCK_MONOTONIC from before
 * its first launch to after its sync) and the period from one step's start
 * to the next's, and prints both ("steps" in the JSON line).  With
 * --nvtx-steps each step is also an NVTX range "step <s>" handed to the
 * libcuda mock (gt_mock_nvtx_range), which the CUPTI agent records as
 * CUPTI would (GT_MOCK_INJECTION=1).
 *
 * --ranges R (one launch thread): the launches are cut into 2R + 1 parts as
 * equal as they can be (the first N % (2R + 1) parts one longer); parts
 * 1, 3, ... are each between a cuProfilerStart and a cuProfilerStop, with
 * --gap MS of sleep before every part but the first.
 *
 * --fork N: after the copies, N child processes are forked, 32 at a time,
 * each making cuCtxSetCurrent, cuLaunchKernel(vecAdd),
 * cuLaunchKernel_ptsz(scale) and cuCtxSynchronize and exiting 0; the
 * parent waits for them all (their calls are not in its counts; "forks"
 * and "fork_failed" in the JSON line say how many ran and failed) before
 * its own launches.
 *
 * On a real GPU the result is checked: c[i] = 7 for i < n/2 (the memset),
 * and for i >= n/2 the value the launch sequence gives (simulated on the
 * host for a few i).  A wrong value exits 1.
 */
#include "cuda_workload.h"

#define MEMSET_VALUE 0x40e00000u	/* 7.0f */

#define NAME_VECADD "_Z6vecAddPfS_S_i"	/* vecAdd(float*, float*, float*, int) */
#define NAME_SCALE "_Z5scaleIfEvPT_i"	/* void scale<float>(float*, int) */
#define NAME_FILL "_Z4fillPfif"		/* fill(float*, int, float) */

/* ------------------------------------------------------------------ */
/* result check                                                         */

/* Value of one element of c after the whole sequence; false when it is not
 * defined (read before anything wrote it). */
static bool expected_c(long i, long copies, unsigned long launches, float *out)
{
	float a = 0, b = 0, c = 0, h = (float)(i % 1000);
	bool da = false, db = false, dc = false;
	unsigned long k;

	if (i < n_elems / 2) {
		*out = 7.0f;	/* the memset */
		return true;
	}
	if (copies >= 1) {
		a = h;
		da = true;
	}
	if (copies >= 2) {
		b = h;
		db = true;
	}
	for (k = 0; k < launches; k++) {
		switch (k % OP__COUNT) {
		case OP_VECADD:
			c = a + b;
			dc = da && db;
			break;
		case OP_SCALE:
			c *= 2;
			break;
		case OP_FILL_EX:
			a = FILL_EX_VALUE;
			da = true;
			break;
		default:
			b = FILL_VALUE;
			db = true;
			break;
		}
	}
	*out = c;
	return dc;
}

/* ------------------------------------------------------------------ */
/* name layout                                                          */

/* Reads len bytes at addr of this process without faulting on a bad
 * address (the driver's structs are not ours to trust). */
static bool safe_read(uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* True when the 8 bytes at handle + 8 point to the NUL-terminated name: the
 * layout gtrace-bpf falls back on for handles created before it started. */
static bool name_at_8(const void *handle, const char *name)
{
	char buf[64];
	uintptr_t p;
	size_t len = strlen(name) + 1;

	if (!handle || len > sizeof(buf) || !safe_read((uintptr_t)handle + 8, &p, sizeof(p)))
		return false;
	return safe_read(p, buf, len) && !memcmp(buf, name, len);
}

/* ------------------------------------------------------------------ */
/* output                                                               */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (the mean of the middle two for an even n); sorts v. */
static double median_u64(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

/* "steps": each step's time and period as measured here, and their medians. */
static void json_steps(struct worker *w, long n)
{
	uint64_t *tmp = malloc((size_t)n * sizeof(*tmp));
	long i;

	if (!tmp)
		die("out of memory");
	printf(",\"steps\":{\"n\":%ld,\"step_ns\":[", n);
	for (i = 0; i < n; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)w->step_ns[i]);
	printf("],\"period_ns\":[");
	for (i = 0; i + 1 < n; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)w->period_ns[i]);
	memcpy(tmp, w->step_ns, (size_t)n * sizeof(*tmp));
	printf("],\"step_median_ns\":%.1f", median_u64(tmp, (size_t)n));
	memcpy(tmp, w->period_ns, (size_t)(n - 1) * sizeof(*tmp));
	printf(",\"period_median_ns\":%.1f}", median_u64(tmp, (size_t)(n - 1)));
	free(tmp);
}

static void on_term(int sig)
{
	(void)sig;
	flood_stop = 1;
}

/* Prints "WORD PID" and waits for SIGUSR1 (blocked in set). */
void say_and_wait(const char *word, const sigset_t *set)
{
	int sig;

	printf("%s %d\n", word, (int)getpid());
	fflush(stdout);
	do {
		errno = sigwait(set, &sig);
	} while (errno == EINTR);
	if (errno)
		die("sigwait: %s", strerror(errno));
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct worker workers[MAX_THREADS];
	struct opts o;
	sigset_t usr1;
	CUdevice dev;
	CUmodule mod[MAX_DEV];
	CUlibrary lib;
	CUevent ev;
	float *h;
	char devname[256];
	size_t bytes = (size_t)N_ELEMS * sizeof(float);
	unsigned long launched[OP__COUNT] = { 0 }, dev_launched[MAX_DEV] = { 0 };
	long fork_failed = 0;
	long nc_rank = -1, nc_world = 0, dev_base = 0;
	unsigned long long nc_comm = 0;
	bool is_mock, verified = false, layout[4];
	long i, t;
	int op;

	parse_opts(argc, argv, &o);
	planted = &o;
	if (o.steps)
		o.launches = o.steps * OP__COUNT;

	/* Block SIGUSR1 before anything can send it: it is taken with sigwait. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	usr1_set = usr1;
	if ((o.wait_signal || o.open_signal || o.pause_at) && pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		die("cannot block SIGUSR1");

	if (o.until_term) {
		struct sigaction sa = { .sa_handler = on_term };

		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTERM, &sa, NULL))
			die("cannot take SIGTERM");
	}
	if (o.open_signal)
		say_and_wait("waiting", &usr1);
	load_libcuda(o.copy_lib);
	if (o.step_graph && !p_cuGraphLaunch) {
		fprintf(stderr, "cuda_workload: --step-graph: the libcuda has no cuGraphLaunch\n");
		return 1;
	}
	if ((o.nvtx_steps || o.nvtx_lib) && !p_nvtx_range)
		die("--nvtx-steps needs the libcuda mock (gt_mock_nvtx_range): GT_LIBCUDA names another");
	if (o.nccl) {
		nccl_load();
		if (o.open_ms)
			usleep((useconds_t)o.open_ms * 1000);
		nc_rank = env_long("RANK", 1 << 20);
		nc_world = env_long("WORLD_SIZE", 1 << 20);
		/* the rank's device: LOCAL_RANK, as torchrun's scripts pick it */
		dev_base = env_long("LOCAL_RANK", 1 << 20);
		if (dev_base < 0)
			dev_base = 0;
		if (nc_world < 1 || nc_rank >= nc_world)
			die("RANK %ld is not below WORLD_SIZE %ld", nc_rank, nc_world);
	}
	if (o.launch_log) {
		/* room for the fastest the flood can go: 2 M/s, or its rate, or one
		 * launch per --work (calloc's pages are touched as used) */
		log_cap = o.flood_s ? (size_t)o.flood_s *
					      (size_t)(o.rate ? o.rate : o.work_us ? 1000000 / o.work_us + 1 : 2000000) *
					      (size_t)o.threads :
				      (size_t)o.launches * (size_t)o.threads;
		log_ts = calloc(log_cap ? 2 * log_cap : 2, sizeof(*log_ts));
		if (!log_ts)
			die("out of memory for --launch-log");
	}

	CK(cuInit, 0);
	ndev = (int)o.devices;
	if (ndev > 1 || dev_base) {
		int count = 0;

		CK(cuDeviceGetCount, &count);
		if (count < ndev + dev_base)
			die("--devices %d from device %ld: the driver has %d device(s)", ndev, dev_base,
			    count);
	}
	for (int dv = 0; dv < ndev; dv++) {
		CK(cuDeviceGet, &dev, (int)dev_base + dv);
		CK(cuDeviceGetName, devname, (int)sizeof(devname), dev);
		CK(cuDevicePrimaryCtxRetain, &ctxs[dv], dev);
		CK(cuCtxSetCurrent, ctxs[dv]);
		CK(cuModuleLoadData, &mod[dv], module_ptx);
		CK(cuModuleGetFunction, &f_vecadd[dv], mod[dv], NAME_VECADD);
		CK(cuModuleGetFunction, &f_scale[dv], mod[dv], NAME_SCALE);
		if (dv == 0) {
			CK(cuLibraryLoadData, &lib, library_ptx, NULL, NULL, 0, NULL, NULL, 0);
			CK(cuLibraryGetKernel, &k_fill, lib, NAME_FILL);
		}
		CK(cuKernelGetFunction, &f_fill[dv], k_fill);
	}
	is_mock = !strcmp(devname, MOCK_DEVICE_NAME);
	layout[0] = name_at_8(f_vecadd[0], NAME_VECADD);
	layout[1] = name_at_8(f_scale[0], NAME_SCALE);
	layout[2] = name_at_8(f_fill[0], NAME_FILL);
	layout[3] = name_at_8(k_fill, NAME_FILL);

	if (o.wait_signal) {
		say_and_wait("ready", &usr1);
		after_ready = true;
	}

	for (t = 0; t < o.threads; t++) {
		memset(&workers[t], 0, sizeof(workers[t]));
		workers[t].launches = o.launches;
		workers[t].flood_s = o.flood_s;
		workers[t].rate = o.rate;
		workers[t].work_us = o.work_us;
		workers[t].set_ctx = o.threads > 1;
		workers[t].index = (int)t;
		workers[t].ranges = o.ranges > 0 ? o.ranges : 0;
		workers[t].gap_ms = o.gap_ms;
		workers[t].hold_ms = o.hold_ms;
		workers[t].idle_ms = o.idle_ms;
		workers[t].steps = o.steps;
		workers[t].step_us = o.step_us;
		workers[t].step_jitter = o.step_jitter;
		workers[t].nvtx_steps = o.nvtx_steps;
		workers[t].step_groups = o.step_groups ? o.step_groups : 1;
		workers[t].step_graph = o.step_graph;
		workers[t].nvtx_lib = o.nvtx_lib;
		workers[t].slow_steps = o.slow_steps;
		if (o.steps) {
			workers[t].step_ns = calloc((size_t)o.steps, sizeof(uint64_t));
			workers[t].period_ns = calloc((size_t)o.steps, sizeof(uint64_t));
			if (!workers[t].step_ns || !workers[t].period_ns)
				die("out of memory for --steps");
		}
		workers[t].cur = 0;	/* the main thread's, after the setup below */
		workers[t].sync_each = o.sync_each;
		workers[t].steady = o.steady;
	}
	for (int dv = 0; dv < ndev; dv++) {
		if (ndev > 1)
			CK(cuCtxSetCurrent, ctxs[dv]);
		for (t = 0; t < o.threads; t++)
			CK(cuStreamCreate, &workers[t].streams[dv], CU_STREAM_DEFAULT);
		CK(cuMemAlloc_v2, &d_a[dv], bytes);
		CK(cuMemAlloc_v2, &d_b[dv], bytes);
		CK(cuMemAlloc_v2, &d_c[dv], bytes);
	}
	if (ndev > 1)
		CK(cuCtxSetCurrent, ctxs[0]);
	for (t = 0; t < o.threads; t++)
		workers[t].stream = workers[t].streams[0];
	CK(cuMemAllocHost_v2, (void **)&h, bytes);
	h_pinned = h;
	if (o.pageable_every && !(h_pageable = calloc(1, PLANT_BYTES)))
		die("out of memory for --pageable-every");
	for (i = 0; i < N_ELEMS; i++)
		h[i] = (float)(i % 1000);
	for (i = 0; i < o.copies; i++)
		CK(cuMemcpyHtoD_v2, (i % 2) ? d_b[0] : d_a[0], h, bytes);
	for (i = 0; i < o.peer; i++) {
		CK(cuMemcpyPeer, d_a[0], ctxs[0], d_a[1], ctxs[1], bytes);
		CK(cuMemcpyDtoD_v2, d_b[1], d_b[0], bytes);
		CK(cuMemcpy, d_c[0], d_c[1], bytes);
	}
	if (o.forks)
		fork_failed = run_forks(o.forks, workers[0].stream);

	if (!o.flood_s) {
		long q = o.launches / OP__COUNT, r = o.launches % OP__COUNT;

		fprintf(stderr, PROG ": %ld launches per thread on %ld thread(s):", o.launches, o.threads);
		for (op = 0; op < OP__COUNT; op++)
			fprintf(stderr, "%s %s x%ld", op ? "," : "", op_apis[op], q + (op < r));
		fputc('\n', stderr);
	}
	if (o.threads == 1) {
		worker_main(&workers[0]);
	} else {
		for (t = 0; t < o.threads; t++) {
			errno = pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
			if (errno)
				die("cannot start a launch thread: %s", strerror(errno));
		}
		for (t = 0; t < o.threads; t++)
			pthread_join(workers[t].thread, NULL);
	}
	for (t = 0; t < o.threads; t++) {
		for (op = 0; op < OP__COUNT; op++)
			launched[op] += workers[t].done[op];
		for (int dv = 0; dv < ndev; dv++)
			dev_launched[dv] += workers[t].on_dev[dv];
	}
	/* the main thread launched itself: back to device 0 */
	if (o.threads == 1 && workers[0].cur != 0)
		CK(cuCtxSetCurrent, ctxs[0]);

	if (o.nccl)
		nccl_phase(&o, nc_rank, nc_world, workers[0].stream, &nc_rank, &nc_comm);
	CK(cuMemsetD32_v2, d_c[0], MEMSET_VALUE, (size_t)N_ELEMS / 2);
	CK(cuMemcpyDtoHAsync_v2, h, d_c[0], bytes, workers[0].stream);
	for (i = 0; i < o.syncs; i++) {
		if (o.sync_each)	/* numbered like the flood's */
			sync_numbered(workers[0].stream);
		else
			CK(cuStreamSynchronize, workers[0].stream);
	}
	CK(cuEventCreate, &ev, CU_EVENT_DEFAULT);
	CK(cuEventRecord, ev, workers[0].stream);
	CK(cuEventSynchronize, ev);
	if (o.steady)
		ctx_sync_numbered();
	else
		CK(cuCtxSynchronize);

	/* Only a real GPU computes; with several threads the kernels race, with
	 * several devices device 0 made only some of the launches. */
	if (!is_mock && o.threads == 1 && ndev == 1 && !o.grid && !o.pageable_every) {
		const long idx[] = { 0, 1, N_ELEMS / 2 - 1, N_ELEMS / 2, N_ELEMS / 2 + 1,
				     3 * (N_ELEMS / 4) + 5, N_ELEMS - 1 };
		unsigned long total = launched[0] + launched[1] + launched[2] + launched[3];

		verified = true;
		for (i = 0; i < (long)(sizeof(idx) / sizeof(idx[0])); i++) {
			float want;

			if (!expected_c(idx[i], o.copies, total, &want)) {
				verified = false;
				continue;
			}
			if (h[idx[i]] != want)
				die("wrong result: c[%ld] = %g, expected %g", idx[i], (double)h[idx[i]],
				    (double)want);
		}
	}

	if (o.ranges < 0) {
		CK(cuProfilerStart);
		CK(cuProfilerStop);
	}
	if (o.launch_log) {
		FILE *f = fopen(o.launch_log, "we");
		size_t k, n = log_len < log_cap ? log_len : log_cap;

		if (!f)
			die("cannot write %s: %s", o.launch_log, strerror(errno));
		for (k = 0; k < n; k++)
			fprintf(f, "%llu %llu\n", (unsigned long long)log_ts[2 * k],
				(unsigned long long)log_ts[2 * k + 1]);
		if (fclose(f))
			die("cannot write %s: %s", o.launch_log, strerror(errno));
	}
	if (o.fail) {
		CUdeviceptr none = 0;
		CUresult r = CU(cuMemAlloc_v2, &none, 0);

		if (r == CUDA_SUCCESS)
			die("cuMemAlloc_v2 of 0 bytes succeeded, expected an error");
	}
	for (int dv = 0; dv < ndev; dv++) {
		CK(cuMemFree_v2, d_a[dv]);
		CK(cuMemFree_v2, d_b[dv]);
		CK(cuMemFree_v2, d_c[dv]);
	}
	CK(cuMemFreeHost, h);
	free(h_pageable);
	CK(cuEventDestroy_v2, ev);
	for (int dv = 0; dv < ndev; dv++)
		for (t = 0; t < o.threads; t++)
			CK(cuStreamDestroy_v2, workers[t].streams[dv]);
	for (int dv = 0; dv < ndev; dv++)
		CK(cuModuleUnload, mod[dv]);
	CK(cuLibraryUnload, lib);
	for (int dv = 0; dv < ndev; dv++)
		CK(cuDevicePrimaryCtxRelease_v2, (CUdevice)dev_base + dv);

	printf("{\"pid\":%d,\"device\":", (int)getpid());
	json_string(devname);
	printf(",\"mock\":%s,\"verified\":%s,\"n\":%d,\"threads\":%ld,\"launches_per_thread\":%ld",
	       is_mock ? "true" : "false", verified ? "true" : "false", N_ELEMS, o.threads,
	       o.flood_s ? -1L : o.launches);
	printf(",\"forks\":%ld,\"fork_failed\":%ld", o.forks, fork_failed);
	printf(",\"launches\":{");
	for (op = 0; op < OP__COUNT; op++)
		printf("%s\"%s\":%lu", op ? "," : "", op_names[op], launched[op]);
	printf("}");
	if (o.steps)
		json_steps(&workers[0], o.steps);
	if (o.ranges > 0) {
		printf(",\"range_launches\":[");
		for (i = 0; i < o.ranges; i++)
			printf("%s%lu", i ? "," : "", workers[0].in_range[i]);
		printf("]");
	}
	printf(",\"devices\":%d,\"device_launches\":[", ndev);
	for (int dv = 0; dv < ndev; dv++)
		printf("%s%lu", dv ? "," : "", dev_launched[dv]);
	printf("],\"peer\":%ld", o.peer);
	if (o.nccl) {
		printf(",\"nccl\":{\"rank\":%ld,\"world\":%ld,\"device\":%ld,\"rounds\":%ld,\"comm\":%llu,"
		       "\"calls\":", nc_rank, nc_world, dev_base, o.nccl, nc_comm);
		nccl_print_calls();
		printf("}");
	}
	printf(",\"handles\":{\"streams\":[");
	for (t = 0; t < o.threads; t++)
		printf("%s%llu", t ? "," : "", (unsigned long long)(uintptr_t)workers[t].stream);
	printf("],\"dptr\":[%llu,%llu,%llu],\"host\":%llu,\"event\":%llu,"
	       "\"vecAdd\":%llu,\"scale\":%llu,\"fill\":%llu,\"fill_kernel\":%llu",
	       (unsigned long long)d_a[0], (unsigned long long)d_b[0], (unsigned long long)d_c[0],
	       (unsigned long long)(uintptr_t)h, (unsigned long long)(uintptr_t)ev,
	       (unsigned long long)(uintptr_t)f_vecadd[0], (unsigned long long)(uintptr_t)f_scale[0],
	       (unsigned long long)(uintptr_t)f_fill[0], (unsigned long long)(uintptr_t)k_fill);
	/* per device: its context and the streams of each thread on it */
	printf(",\"ctx\":[");
	for (int dv = 0; dv < ndev; dv++)
		printf("%s%llu", dv ? "," : "", (unsigned long long)(uintptr_t)ctxs[dv]);
	printf("],\"device_streams\":[");
	for (int dv = 0; dv < ndev; dv++) {
		printf("%s[", dv ? "," : "");
		for (t = 0; t < o.threads; t++)
			printf("%s%llu", t ? "," : "", (unsigned long long)(uintptr_t)workers[t].streams[dv]);
		printf("]");
	}
	printf("]}");
	printf(",\"name_at_8\":{\"vecAdd\":%s,\"scale\":%s,\"fill\":%s,\"fill_kernel\":%s}",
	       layout[0] ? "true" : "false", layout[1] ? "true" : "false",
	       layout[2] ? "true" : "false", layout[3] ? "true" : "false");
	/* "calls": the apis of bpf/gtrace_api.h as this program was built;
	 * "other_calls": the rest (so that a test can apply a newer table) */
	json_load();
	json_counts("calls", C_CALLS, true);
	if (o.wait_signal || o.pause_at)
		json_counts("calls_after_ready", C_AFTER_READY, true);
	json_counts("failed", C_FAILED, true);
	json_counts("other_calls", C_CALLS, false);
	if (o.wait_signal)
		json_counts("other_calls_after_ready", C_AFTER_READY, false);
	printf("}\n");
	fflush(stdout);
	return fork_failed ? 1 : 0;
}
