// SPDX-License-Identifier: MIT
/*
 * gen_trace: writes a large synthetic trace, for benchmarking the readers
 * (stats, export) without a GPU or a recording run.
 *
 *   gen_trace [-s SEED] [-p PROCS] [-k KERNELS] [-H] [-N LEN] OUT N_RECORDS [THREADS]
 *   gen_trace -S SHAPE:P [-W WARM] [-P PROG] [-I IDLE] [-g] OUT STEPS  (tools/gen_trace_shape.c)
 *
 * The trace looks like what the recorder writes for a few training-style
 * processes: per process a command-line name, an exec, thread names, cuInit,
 * a primary context, a module, KERNELS naming calls (cuModuleGetFunction;
 * every fifth kernel is named by a GT_REC_NAME record instead, as for kernels
 * loaded before recording; one per process stays unnamed), one stream per
 * thread, a few allocations; then THREADS threads per process (default 4)
 * each run a loop of launches (mostly), copies, sets, event records, stream
 * and event syncs, queries and the odd alloc/free, with realistic durations
 * and gaps, interleaved across threads in time order; then the exits.  A
 * GT_REC_STATS snapshot every 2^20 records and a trailer end it.
 *
 * Every call has its exit.  The output depends only on the arguments and
 * the seed (default 1), so two runs give the same file and benchmark
 * numbers can be compared.  N_RECORDS counts every record written; the
 * calls open when it is reached are finished, so the file holds a few more.
 *
 * -c range writes the trace of a recording with capture ranges
 * (capture_range=cudaProfilerApi, repeat): every CAP_PERIOD each process
 * opens a range, one after the other, each open 1.5 times the gap between
 * two processes' opens, so that ranges of different processes overlap; the
 * calls of a process are recorded only when they begin inside one of its
 * ranges; a range open at the end is closed with the cut flag.  -c light
 * writes a light-mode trace: a window of CAP_WINDOW every CAP_PERIOD, the
 * hot calls (gt_api__hot) recorded only when they begin inside one, the
 * others all the time.  The set-up calls of each process come before any of
 * that and are always there.
 *
 * -g writes what a merged trace of a recording with --cupti holds besides:
 * for each launch a kernel on the GPU (device: the process' number modulo
 * 2, a CUPTI stream per thread, starting after its launch and after the
 * stream's previous work), for each async copy and set its GPU record,
 * all linked to their call and written right after its entry as the merger
 * writes them; per thread an NVTX range "step" every STEP_CALLS calls with
 * a "forward" range inside; an off-CPU interval inside each long
 * synchronization; GPU metrics of each device every METRIC_NS (utilization
 * and SM activity, as --gpu-metrics samples them); and the merger's
 * counters.
 *
 * -u N (with -g): every N-th GPU record is unlinked instead, as the merger
 * leaves a record it found no call for (thread 0, no launch_ts, no flags),
 * and goes to the tail of the file, after every other record, by time, as
 * the merger writes its unlinked records; the merger's counters say so.
 * The calls are those of the same run without -u (its unlinked records
 * count towards N_RECORDS where they were made).
 *
 * -n writes a trace in which nothing called libcuda: the header, one
 * process that exec'd and exited, and the trailer (N_RECORDS is ignored).
 *
 * -i STEP_US adds NVTX ranges "step 0", "step 1", ... to every process, one
 * per STEP_US from the end of the set-up to the end of the trace, on its
 * main thread, written after the other records as the merger writes them
 * (a merged trace's tail): iterations for `gtrace-bpf diff`.  They are
 * records beyond N_RECORDS.
 *
 * -E writes the launches as the recorder does without --launch-exit: the
 * entry only, flagged GT_LAUNCH_NO_EXIT (and launch_exit=0 in the header).
 * -L PCT makes PCT percent of the calls launches (default 62), the others
 * drawn in their usual proportions: with -g -k 1 -L 100 -E, a loop of one
 * tiny kernel as a merged trace of PyTorch's elementwise ops holds it.
 *
 * -H gives the kernels, processes, threads and NVTX ranges names a hostile
 * program could give them (hostile_kernels below): markup, spreadsheet
 * formulas, terminal escapes and other control characters, bytes that are
 * not UTF-8, multibyte text placed where a byte cut would split it.  -N LEN
 * makes every kernel name LEN bytes long (told apart at its head), the
 * names of deep C++ templates.  Without them the output is unchanged.
 *
 * The parts (gen_trace_int.h says what they share): this file (the
 * processes' set-up, the threads' calls, the run, the command line),
 * gen_trace_rec.c (the random stream, the records, the tail),
 * gen_trace_capture.c (-c) and gen_trace_gpu.c (-g, -u, -i).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen_trace_int.h"

/* Kernel names as the driver stores them: mangled, templated or plain. */
static const char *const base_names[] = {
	"_Z6vecAddPfS_S_i",
	"_Z5scaleIfEvPT_i",
	"_Z4fillPfif",
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
	"_ZN2at6native13reduce_kernelILi512ELi1EEEvPfi",
	"_Z17layer_norm_kernelIfEvPKT_S2_S2_PS0_ii",
	"_Z15softmax_forwardIfLi1024EEvPT_PKS0_i",
	"ampere_sgemm_128x64_nn",
	"ampere_sgemm_64x32_sliced1x4_tn",
	"_Z11adam_updatePfS_S_S_ffffi",
};

/* -H: kernel names as a hostile program can give them (every 12th kernel
 * keeps a plain one): markup that would end the report's script element,
 * spreadsheet formulas, terminal escapes and other control characters,
 * bytes that are not UTF-8, valid multibyte text, Markdown's table syntax.
 * Each is followed by two-byte characters placed so that byte 60, byte 180
 * and byte 200 fall inside one: where a writer that cuts names by bytes
 * would split one. */
static const char *const hostile_kernels[] = {
	"</script><!--<script>alert(1)</script>\x1b[2J\x1b]0;pwned\x07_k%d",
	"=HYPERLINK(\"http://evil.example/\",\"x\")_k%d",
	"+cmd|' /C calc'!A0_k%d",
	"-1+1_k%d",
	"@SUM(1+1)_k%d",
	"\tTAB_k%d",
	"\rCR_k%d",
	"ctl\001\177\302\23331m\x1b[31mred\x1b[0m_k%d",	/* C0, DEL, C1 (U+009B), ESC */
	"bad\xff\xfe\xc3(_k%d",
	"caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x9a\x80_k%d",
	"md|pipe`tick`*star*<b>_k%d",
};

static void hostile_name(char *buf, size_t len, int i)
{
	size_t n = (size_t)snprintf(buf, len, hostile_kernels[i % 12], i);

	/* an odd length before the two-byte run: every even byte count cuts one */
	if (n % 2 == 0)
		buf[n++] = '_';
	while (n + 3 < len && n < 300) {
		buf[n++] = '\xc3';
		buf[n++] = '\xa9';
	}
	buf[n] = '\0';
}

const char *gen__hostile_nvtx(int i)
{
	static const char *const names[] = {
		"st\x1b[2Jep </script> \xe2\x82\xac=1", "=fwd\xff|x",
	};

	return names[i % 2];
}

static int make_kernels(struct gen *g, int p)
{
	static const uint16_t apis[] = {
		API(cuLaunchKernel), API(cuLaunchKernel), API(cuLaunchKernel),
		API(cuLaunchKernel_ptsz), API(cuLaunchKernelEx),
	};

	for (int i = 0; i < g->nkernels; i++) {
		struct kernel *k = &g->k[p][i];
		const char *b = base_names[i % (sizeof(base_names) / sizeof(base_names[0]))];
		int rep = i / (int)(sizeof(base_names) / sizeof(base_names[0]));
		char name[MAX_NAME + 1];
		size_t n;

		if (g->hostile && i % 12 != 11)
			hostile_name(name, sizeof(name), i);
		else if (rep == 0)
			snprintf(name, sizeof(name), "%s", b);
		else	/* more distinct kernels: variants of a plain C name */
			snprintf(name, sizeof(name), "_Z%zukernel_v%03dPfi",
				 strlen("kernel_v000"), rep * 100 + i % 100);
		/* -N: long names (deep templates), told apart at their head */
		n = strlen(name);
		if (g->name_len && n < (size_t)g->name_len) {
			n += (size_t)snprintf(name + n, sizeof(name) - n, "_%d_", i);
			for (; n < (size_t)g->name_len; n++)
				name[n] = (char)('a' + n % 26);
			name[n] = '\0';
		}
		k->name = strdup(name);
		if (!k->name)
			return -ENOMEM;
		k->func = 0x55aa00000000ull + (uint64_t)p * 0x1000000 + (uint64_t)i * 0x340;
		k->api = apis[gen__rnd(g) % (sizeof(apis) / sizeof(apis[0]))];
		k->nshapes = 1 + (int)(gen__rnd(g) % 3);
		for (int s = 0; s < k->nshapes; s++) {
			k->grid[s][0] = 1u << gen__rnd_range(g, 4, 14);
			k->grid[s][1] = (uint32_t)gen__rnd_range(g, 1, 2);
			k->grid[s][2] = 1;
			k->block[s][0] = 32u << gen__rnd_range(g, 0, 5);
			k->block[s][1] = 1;
			k->block[s][2] = 1;
		}
		k->shmem = (uint32_t)(gen__rnd(g) % 4) * 1024;
	}
	return 0;
}

/* The set-up of one process, from its exec to its streams. */
static int proc_start(struct gen *g, int p, uint64_t *ts)
{
	uint32_t pid = PID_BASE + (uint32_t)p * PID_STEP;
	uint64_t module = 0x5600000000ull + (uint64_t)p * 0x100000;
	char s[128];
	int err;

	if (g->hostile)
		snprintf(s, sizeof(s), "python3 \x1b]0;pwned\x07=cmd|x </script> caf\xc3\xa9 \xff "
			 "train.py --rank %d", p);
	else
		snprintf(s, sizeof(s), "python3 train.py --rank %d --model gpt-small", p);
	/* the recorder reads the command line after the exec: the newer name wins */
	err = gen__w_proc(g, GT_REC_EXEC, *ts, pid, g->hostile ? "py\x1b[2J" : "python3");
	if (!err)
		err = gen__w_str(g, GT_REC_NAME, *ts + 10, pid, 0, 0, pid, GT_NAME_PROCESS, s);
	*ts += 1000;
	for (int i = 0; i < g->nthreads && !err; i++) {
		if (g->hostile)
			snprintf(s, sizeof(s), i ? "=pt\x1b[2Jw\xff%d" : "py\x1b]0;t\x07", i);
		else
			snprintf(s, sizeof(s), i ? "pt_worker%d" : "python3", i);
		err = gen__w_str(g, GT_REC_NAME, *ts, pid, 0, 0, pid + (uint32_t)i, GT_NAME_THREAD, s);
	}
	if (!err)
		err = gen__w_call_ret(g, ts, pid, API(cuInit), 0, 0, 0, false, 0);
	/* -A: more kinds of calls, each once (context, stream and event calls
	 * of the kind a framework makes at start-up): launches among many */
	for (unsigned a = 1, n = 0; a < GT_API__COUNT && n < (unsigned)g->more_apis && !err; a++) {
		const struct gt_api_info *ai = gt_api__info(a);

		if (!ai || ai->prog != GT_P_CALL || ai->ret == GT_R_NONE ||
		    (ai->cls != GT_CLS_CTX && ai->cls != GT_CLS_EVENT && ai->cls != GT_CLS_STREAM &&
		     ai->cls != GT_CLS_MARKER && ai->cls != GT_CLS_MODULE_UNLOAD) ||
		    a == API(cuInit) || a == API(cuDevicePrimaryCtxRetain) || a == API(cuModuleLoadData))
			continue;
		err = gen__w_call_ret(g, ts, pid, (uint16_t)a, 0, 0, 0, false, 0);
		n++;
	}
	if (!err)
		err = gen__w_call_ret(g, ts, pid, API(cuDevicePrimaryCtxRetain), 0x7ffc1000, 0, 0,
				 true, 0x5700000000ull + (uint64_t)p);
	if (!err)
		err = gen__w_call_ret(g, ts, pid, API(cuModuleLoadData), 0x7ffc1008, 0x5800000000ull, 0,
				 true, module);
	if (!err)
		err = make_kernels(g, p);
	for (int i = 0; i < g->nkernels && !err; i++) {
		const struct kernel *k = &g->k[p][i];

		if (i == g->nkernels - 1 && i > 0)
			continue;	/* no name at all: a placeholder */
		if (i % 5 == 4) {
			err = gen__w_str(g, GT_REC_NAME, *ts, pid, 0, 0, k->func, GT_NAME_KERNEL_MEM, k->name);
			continue;
		}
		err = gen__w_str(g, GT_REC_CALL_STR, *ts, pid, pid, API(cuModuleGetFunction), module, 0,
			    k->name);
		*ts += gen__rnd_range(g, 1000, 3000);
		if (!err)
			err = gen__w_ret(g, *ts, pid, pid, API(cuModuleGetFunction), 0, true, k->func);
		*ts += 500;
	}
	for (int i = 0; i < g->nthreads && !err; i++) {
		struct thr *t = &g->t[p * g->nthreads + i];

		*t = (struct thr){
			.pid = pid, .tid = pid + (uint32_t)i, .proc = p,
			.stream = 0x5900000000ull + (uint64_t)p * 0x10000 + (uint64_t)i * 0x100,
			.event = 0x5a00000000ull + (uint64_t)p * 0x10000 + (uint64_t)i * 0x100,
		};
		err = gen__w_call_ret(g, ts, pid, API(cuStreamCreate), 0x7ffc1010, 1, 0, true, t->stream);
		if (!err)
			err = gen__w_call_ret(g, ts, pid, API(cuEventCreate), 0x7ffc1018, 2, 0, true, t->event);
		t->ts = *ts + gen__rnd_range(g, 0, 10000);
		t->step_ts = t->ts;
	}
	return err;
}

static const uint16_t copy_apis[] = {
	API(cuMemcpyHtoDAsync_v2), API(cuMemcpyHtoDAsync_v2), API(cuMemcpyDtoHAsync_v2),
	API(cuMemcpyDtoDAsync_v2), API(cuMemcpyAsync), API(cuMemcpyHtoD_v2),
};

/* Starts the next call of thread t: writes its entry, schedules its exit. */
static int thr_enter(struct gen *g, struct thr *t)
{
	unsigned op = (unsigned)(gen__rnd(g) % 100);
	uint64_t dur;
	int err;

	/* -L: a launch at that rate, else one of the others as they are drawn */
	if (g->launch_pct >= 0)
		op = op < (unsigned)g->launch_pct ? 0 : 62 + (unsigned)(gen__rnd(g) % 38);
	t->ret = 0;
	t->has_out = false;
	t->no_exit = false;
	if (op < 62) {
		const struct kernel *k = &g->k[t->proc][gen__rnd_skew(g, 0, (uint64_t)g->nkernels - 1)];
		int s = (int)(gen__rnd(g) % (uint64_t)k->nshapes);
		struct gt_launch *l = gen__rec_init(g, GT_REC_LAUNCH, sizeof(*l), t->ts, t->pid, t->tid,
					       k->api);

		l->func = k->func;
		l->stream = t->stream;
		memcpy(l->grid, k->grid[s], sizeof(l->grid));
		memcpy(l->block, k->block[s], sizeof(l->block));
		l->shmem = k->shmem;
		if (k->api == API(cuLaunchKernelEx)) {
			l->flags = GT_LAUNCH_EX;
			l->nattrs = 1;
		}
		if (g->entry_launches) {
			l->flags |= GT_LAUNCH_NO_EXIT;
			t->no_exit = true;
		}
		t->api = k->api;
		dur = gen__rnd_skew(g, 1800, 12000);
		t->entry_ts = t->ts;
		err = gen__put(g, l);
		if (!err && g->gpu && !t->skipped)
			err = gen__w_gpu(g, t, k, l, k->api, 0);
	} else if (op < 74) {
		uint16_t api = copy_apis[gen__rnd(g) % (sizeof(copy_apis) / sizeof(copy_apis[0]))];
		uint64_t bytes = 256ull << gen__rnd_range(g, 0, 16);

		t->api = api;
		/* about 12 GB/s plus the call's own cost */
		dur = bytes / 12 + gen__rnd_skew(g, 2000, 9000);
		t->entry_ts = t->ts;
		err = gen__w_call(g, t->ts, t->pid, t->tid, api, 0x7f0000000000ull + t->tid * 0x1000ull,
			     0x7e0000000000ull, bytes, t->stream, 0, 0);
		/* the async ones run on the stream; cuMemcpyHtoD_v2 too, with no
		 * stream argument, on the default one: not drawn here */
		if (!err && g->gpu && !t->skipped && api != API(cuMemcpyHtoD_v2))
			err = gen__w_gpu(g, t, NULL, NULL, api, bytes);
	} else if (op < 77) {
		uint64_t n;

		t->api = API(cuMemsetD32Async);
		dur = gen__rnd_skew(g, 2000, 6000);
		n = gen__rnd_range(g, 1, 1 << 20);
		t->entry_ts = t->ts;
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, 0x7f0000000000ull, 0, n, t->stream, 0, 0);
		if (!err && g->gpu && !t->skipped)
			err = gen__w_gpu(g, t, NULL, NULL, t->api, n * 4);
	} else if (op < 85) {
		t->api = API(cuEventRecord);
		dur = gen__rnd_skew(g, 800, 3000);
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, t->event, t->stream, 0, 0, 0, 0);
	} else if (op < 90) {
		t->api = API(cuStreamSynchronize);
		dur = gen__rnd_skew(g, 5000, 3000000);
		/* -g: it waits for the stream's work */
		if (g->gpu && t->gpu_free > t->ts)
			dur = t->gpu_free - t->ts + gen__rnd_range(g, 2000, 8000);
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, t->stream, 0, 0, 0, 0, 0);
	} else if (op < 92) {
		t->api = API(cuEventSynchronize);
		dur = gen__rnd_skew(g, 3000, 1000000);
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, t->event, 0, 0, 0, 0, 0);
	} else if (op < 98) {
		t->api = API(cuStreamQuery);
		dur = gen__rnd_skew(g, 500, 2000);
		/* CUDA_ERROR_NOT_READY most of the time: still busy */
		t->ret = gen__rnd(g) % 4 ? 600 : 0;
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, t->stream, 0, 0, 0, 0, 0);
	} else if (!t->live_alloc) {
		t->api = API(cuMemAlloc_v2);
		dur = gen__rnd_skew(g, 3000, 200000);
		t->has_out = true;
		t->out = t->live_alloc = 0x7f1000000000ull + (gen__rnd(g) & 0xffffff000ull);
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, 0x7ffc2000, 1ull << gen__rnd_range(g, 12, 30),
			     0, 0, 0, 0);
	} else {
		t->api = API(cuMemFree_v2);
		dur = gen__rnd_skew(g, 2000, 50000);
		err = gen__w_call(g, t->ts, t->pid, t->tid, t->api, t->live_alloc, 0, 0, 0, 0, 0);
		t->live_alloc = 0;
	}
	t->in_call = true;
	t->entry_ts = t->ts;
	t->ts += dur;
	return err;
}

static int thr_exit(struct gen *g, struct thr *t)
{
	int err;

	g->cur = t;
	err = t->no_exit ? 0 : gen__w_ret(g, t->ts, t->pid, t->tid, t->api, t->ret, t->has_out, t->out);
	g->cur = NULL;
	if (!err && g->gpu && !t->skipped)
		err = gen__w_after(g, t, t->ts);
	t->skipped = false;
	t->in_call = false;
	t->ts += gen__rnd_skew(g, 300, 30000);
	return err;
}

static int run(struct gen *g, uint64_t want)
{
	int nt = g->nprocs * g->nthreads;
	uint64_t ts = 1000000000ull;
	bool stopping = false;
	int err = 0;

	for (int p = 0; p < g->nprocs && !err; p++)
		err = proc_start(g, p, &ts);
	/* -c: the schedule of ranges or windows starts once all are set up */
	g->cap_started = g->cap != CAP_NONE;
	g->cap_t0 = ts;
	g->cap_gap = CAP_PERIOD / (uint64_t)(g->nprocs + 1);
	g->next_metric = ts;
	while (!err) {
		struct thr *t = NULL;

		/* the thread whose next record comes first: records in time order */
		for (int i = 0; i < nt; i++)
			if ((!stopping || g->t[i].in_call) && (!t || g->t[i].ts < t->ts))
				t = &g->t[i];
		if (!t)
			break;
		while (g->gpu && g->next_metric <= t->ts && !err)
			err = gen__w_metrics(g);
		if (t->in_call) {
			err = thr_exit(g, t);
		} else {
			g->cur = t;
			err = thr_enter(g, t);
			g->cur = NULL;
		}
		/* -u's unlinked GPU records count where they were made, so that
		 * the same run comes out with and without -u */
		if (g->nrec + g->unlinked >= want)
			stopping = true;	/* only the exits of open calls from now on */
	}
	for (int i = 0; i < nt; i++)
		if (g->t[i].ts > ts)
			ts = g->t[i].ts;
	/* what is due before the end, then what is still open, cut by it */
	if (!err)
		err = gen__cap_due(g, ts);
	g->cap_started = false;
	if (g->window_open && !err)
		err = gen__w_capture(g, ts, 0, GT_CAP_WINDOW_CLOSE, (uint32_t)g->next_window + 1, 0);
	for (int p = 0; p < g->nprocs && !err; p++)
		if (g->cap == CAP_RANGE && g->pr[p].open)
			err = gen__w_capture(g, ts, PID_BASE + (uint32_t)p * PID_STEP, GT_CAP_RANGE_CLOSE,
					g->pr[p].index, GT_CAP_F_CUT);
	for (int p = 0; p < g->nprocs && !err; p++)
		err = gen__w_proc(g, GT_REC_EXIT, ts + 1000 + (uint64_t)p, PID_BASE + (uint32_t)p * PID_STEP,
			     "python3");
	if (g->step_ns && !err)
		err = gen__w_steps(g, g->cap_t0, ts);
	if (!err)
		err = gen__w_tail(g);
	if (!err)
		err = gen__w_end(g, ts, g->gpu_records, g->unlinked);
	return err;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-s SEED] [-p PROCS] [-k KERNELS] [-c range|light] [-g [-u N]] [-n] [-i STEP_US] [-E] [-L PCT] [-H] [-N LEN] [-A N] [-M] "
		   "OUT N_RECORDS [THREADS]\n"
		   "  writes a synthetic trace of about N_RECORDS records to OUT (replaced);\n"
		   "  THREADS per process (default 4), PROCS processes (default 2),\n"
		   "  KERNELS distinct kernels per process (default 40), SEED (default 1);\n"
		   "  -c range: capture ranges, -c light: light-mode windows;\n"
		   "  -g: the GPU side of a merged --cupti trace, NVTX ranges, off-CPU waits;\n"
		   "  -u N: with -g, every N-th GPU record unlinked, in the tail by time;\n"
		   "  -n: no calls at all (a process that did not use the GPU);\n"
		   "  -i STEP_US: NVTX ranges \"step K\" of STEP_US each in every process;\n"
		   "  -E: launches without their exits (the recorder without --launch-exit);\n"
		   "  -L PCT: PCT percent of the calls are launches (default 62);\n"
		   "  -H: hostile kernel, process, thread and NVTX names (markup, formulas,\n"
		   "      escapes, bytes that are not UTF-8);\n"
		   "  -N LEN: every kernel name LEN bytes long (up to %d);\n"
		   "  -S SHAPE:P: one process of N_RECORDS steps of P us of a known shape\n"
		   "      (eager, graph, host, gemm: tools/gen_trace_shape.c), -W WARM of them slow,\n"
		   "      -P PROG the program (default python3), -I IDLE threads without CUDA calls\n"
		   "  -A N: N more kinds of calls, each once at a process' start\n"
		   "  -M: with -g, every GPU metric in each sample (NVML with GPM)\n",
		   MAX_NAME);
}

int main(int argc, char **argv)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 1000000000ull,
		.host = "gen-trace", .kernel = "6.18.0", .cmdline = "gen_trace",
		.options = "synthetic=1",
	};
	struct trace_writer_opts wo = { .force = true };
	long seed = 1, procs = 2, kernels = 40, threads = 4, unlink = 0, n, step_us = 0, launch_pct = -1;
	enum cap_mode cap = CAP_NONE;
	bool g_gpu = false, no_calls = false, entry_launches = false, hostile = false, all_metrics = false;
	long name_len = 0, warm = 0, idle = 0, more_apis = 0;
	const char *shape = NULL, *prog = NULL;
	char options[160], gpu_options[200], exit_options[220];
	struct gen *g;
	int opt, err;

	while ((opt = getopt(argc, argv, "s:p:k:c:gu:ni:EL:HN:S:W:P:I:A:Mh")) != -1) {
		switch (opt) {
		case 'i':
			if (parse_int(optarg, 1, 3600000000L, &step_us))
				goto bad;
			break;
		case 'c':
			if (!strcmp(optarg, "range"))
				cap = CAP_RANGE;
			else if (!strcmp(optarg, "light"))
				cap = CAP_LIGHT;
			else
				goto bad;
			break;
		case 's':
			if (parse_int(optarg, 0, __LONG_MAX__, &seed))
				goto bad;
			break;
		case 'p':
			if (parse_int(optarg, 1, MAX_PROCS, &procs))
				goto bad;
			break;
		case 'k':
			if (parse_int(optarg, 1, MAX_KERNELS, &kernels))
				goto bad;
			break;
		case 'g':
			g_gpu = true;
			break;
		case 'u':
			if (parse_int(optarg, 1, __LONG_MAX__, &unlink))
				goto bad;
			break;
		case 'n':
			no_calls = true;
			break;
		case 'E':
			entry_launches = true;
			break;
		case 'M':
			all_metrics = true;
			break;
		case 'A':
			if (parse_int(optarg, 0, GT_API__COUNT, &more_apis))
				goto bad;
			break;
		case 'L':
			if (parse_int(optarg, 0, 100, &launch_pct))
				goto bad;
			break;
		case 'H':
			hostile = true;
			break;
		case 'N':
			if (parse_int(optarg, 1, MAX_NAME, &name_len))
				goto bad;
			break;
		case 'S':
			shape = optarg;
			break;
		case 'P':
			prog = optarg;
			break;
		case 'I':
			if (parse_int(optarg, 0, MAX_THREADS, &idle))
				goto bad;
			break;
		case 'W':
			if (parse_int(optarg, 0, 1000000, &warm))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (argc - optind < 2 || argc - optind > 3 ||
	    parse_int(argv[optind + 1], 1, __LONG_MAX__, &n) ||
	    (argc - optind == 3 && parse_int(argv[optind + 2], 1, MAX_THREADS, &threads)))
		goto bad;

	g = calloc(1, sizeof(*g));
	if (!g) {
		fprintf(stderr, PROG ": failed to allocate state: %s\n", strerror(ENOMEM));
		return 1;
	}
	g->rng = (uint64_t)seed;
	g->nprocs = (int)procs;
	g->nthreads = (int)threads;
	g->nkernels = (int)kernels;
	g->cap = cap;
	g->gpu = g_gpu;
	g->unlink = (uint64_t)unlink;
	g->step_ns = (uint64_t)step_us * 1000;
	g->entry_launches = entry_launches;
	g->more_apis = (int)more_apis;
	g->all_metrics = all_metrics;
	g->launch_pct = (int)launch_pct;
	g->hostile = hostile;
	g->name_len = (int)name_len;
	g->prog = prog;
	g->idle_threads = (int)idle;
	if (cap == CAP_RANGE)
		info.options = "synthetic=1 capture=full capture_range=cudaProfilerApi "
			       "capture_range_end=repeat";
	if (cap == CAP_LIGHT) {
		snprintf(options, sizeof(options), "synthetic=1 capture=light capture_range=none "
			 "light_window_ns=%llu light_period_ns=%llu", CAP_WINDOW, CAP_PERIOD);
		info.options = options;
	}
	if (g_gpu) {
		/* its GPU metric samples as --gpu-metrics writes them (METRIC_NS apart) */
		snprintf(gpu_options, sizeof(gpu_options), "%s cupti=merged gpu_metrics=%llu gpu_metrics_devs=%d",
			 info.options, 1000000000ull / METRIC_NS, g->nprocs < 2 ? 1 : 2);
		info.options = gpu_options;
	}
	if (entry_launches) {
		snprintf(exit_options, sizeof(exit_options), "%s launch_exit=0", info.options);
		info.options = exit_options;
	}
	err = trace_writer__create(argv[optind], &info, &wo, &g->w);
	if (err) {
		fprintf(stderr, PROG ": failed to create %s: %s\n", argv[optind], strerror(-err));
		free(g);
		return 1;
	}
	if (shape) {
		err = gen__shape(g, shape, n, warm);
		if (err == -EINVAL || err == -ERANGE) {
			fprintf(stderr, PROG ": bad -S %s with %ld steps, -W %ld: eager, graph, host or gemm, "
				":P (500 to 10000000 us, host work a tenth of it), fewer slow steps than steps\n",
				shape, n, warm);
			trace_writer__free(g->w);
			free(g);
			return 2;
		}
	} else if (no_calls) {
		struct gt_trailer tr = { .end_ts = info.start_ts + 50000000 };

		err = gen__w_proc(g, GT_REC_EXEC, info.start_ts + 1000000, PID_BASE, "true");
		if (!err)
			err = gen__w_proc(g, GT_REC_EXIT, info.start_ts + 2000000, PID_BASE, "true");
		tr.counters.events = tr.counters.records_written = g->nrec;
		if (!err)
			err = trace_writer__finish(g->w, &tr);
	} else {
		err = run(g, (uint64_t)n);
	}
	if (err)
		fprintf(stderr, PROG ": failed to write %s: %s\n", argv[optind], strerror(-err));
	else
		printf("%s: %llu records\n", argv[optind], (unsigned long long)g->nrec);
	trace_writer__free(g->w);
	for (int p = 0; p < MAX_PROCS; p++)
		for (int i = 0; i < MAX_KERNELS; i++)
			free(g->k[p][i].name);
	free(g);
	return err ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
