// SPDX-License-Identifier: MIT
/*
 * The GPU-metrics sampler (--gpu-metrics): NVML through dlopen, probed once
 * per GPU, read at a fixed rate on CLOCK_MONOTONIC by a thread of its own;
 * the processes each GPU lists and their memory about once a second by a
 * second thread, so that a slow listing never delays the rate's rounds.
 * The threads never write the trace: they queue records (the queue is
 * gpu_metrics_queue.c), the loop drains.  NVML's loading, the probe of
 * each GPU and the reading of one device's round are gpu_metrics_nvml.c.
 *
 * NVML's calls cost from ~2 us (utilization) to ~50 us (a GPM sample) and
 * ~1.7 ms for nvmlGpmMetricsGet of ten metrics (measured on the H200): all
 * of that is paid here, off the recording loop and off the traced programs.
 * What it costs the recorder is measured: each thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), read after every round.
 *
 * A GPU that falls off (NVML_ERROR_GPU_IS_LOST) is said once, gets one
 * gpu_lost record and is not read again; a GPU in MIG mode is said at the
 * start and sampled for what NVML still gives of the whole GPU (the probe
 * tries every query, GPM included, and keeps what works).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/log.h"
#include "record/gpum/gpu_metrics.h"
#include "record/gpum/gpu_metrics_int.h"
#include "record/gpum/nvml_abi.h"

#define QUEUE_DEFAULT	65536
#define MAX_DEVICES	64
#define PROCS_PERIOD_NS	1000000000ull	/* the processes' memory, this often */
#define PROCS_MAX	4096	/* processes listed per GPU, at most */

int gpu_metrics__parse_rate(const char *arg, unsigned int *hz)
{
	unsigned long v;
	char *end;

	if (!arg) {
		*hz = GPU_METRICS_HZ_DEFAULT;
		return 0;
	}
	if (!strcmp(arg, "off")) {
		*hz = 0;
		return 0;
	}
	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg)
		return -EINVAL;
	if (*end && strcmp(end, "Hz") && strcmp(end, "hz"))
		return -EINVAL;
	if (v < 1 || v > GPU_METRICS_HZ_MAX)
		return -EINVAL;
	*hz = (unsigned int)v;
	return 0;
}

int64_t gpu_metrics__micro(double v)
{
	double m = v * 1e6;

	if (m != m)
		return 0;
	if (m >= 9.2e18)
		return INT64_MAX;
	if (m <= -9.2e18)
		return INT64_MIN;
	/* half away from zero, without libm */
	return (int64_t)(m >= 0 ? m + 0.5 : m - 0.5);
}

/* GTRACE_GPUM_BURST's ON_MS/PERIOD_MS, or a warning and none */
static void burst_parse(struct gpu_metrics *g, const char *v)
{
	unsigned long on, period;
	int end = 0;

	if (!v || !v[0])
		return;
	if (sscanf(v, "%lu/%lu%n", &on, &period, &end) != 2 || v[end] || !on || on >= period ||
	    period > 3600000) {
		pr_warn("GTRACE_GPUM_BURST=%s ignored: it takes ON_MS/PERIOD_MS, 0 < ON < PERIOD", v);
		return;
	}
	g->burst_on = on * 1000000ull;
	g->burst_period = period * 1000000ull;
	g->burst_t0 = clock__ns(CLOCK_MONOTONIC);
	pr_info("GPU metrics sampled only in the first %lu ms of every %lu ms (GTRACE_GPUM_BURST)", on, period);
}

int gpu_metrics__open(const struct gpu_metrics_opts *o, struct gpu_metrics **out)
{
	const char *lib = o->lib ? o->lib : getenv("GTRACE_NVML_LIB");
	struct gpu_metrics *g;
	unsigned int count = 0, i;
	int ret, err;

	*out = NULL;
	if (!lib || !lib[0])
		lib = "libnvidia-ml.so.1";
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->hz = o->hz;
	g->procs_ns = o->procs_ns ? o->procs_ns : PROCS_PERIOD_NS;
	burst_parse(g, getenv("GTRACE_GPUM_BURST"));
	pthread_mutex_init(&g->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&g->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (nvml__load(&g->n, lib, o)) {
		gpu_metrics__free(g);
		return 0;
	}
	if ((ret = g->n.init())) {
		gpum__no_metrics(o, "nvmlInit_v2 failed (NVML error %d)", ret);
		dlclose(g->n.dl);
		g->n.dl = NULL;
		gpu_metrics__free(g);
		return 0;
	}
	if ((ret = g->n.count(&count)) || !count) {
		gpum__no_metrics(o, "NVML sees no GPU%s", ret ? " (nvmlDeviceGetCount_v2 failed)" : "");
		nvml__close(g);
		gpu_metrics__free(g);
		return 0;
	}
	if (count > MAX_DEVICES)
		count = MAX_DEVICES;
	g->dev = calloc(count, sizeof(*g->dev));
	g->q = gpum_queue__new(o->queue_cap ? o->queue_cap : QUEUE_DEFAULT);
	g->mg = calloc(1, sizeof(*g->mg));
	if (!g->dev || !g->q || !g->mg) {
		err = -ENOMEM;
		pr_err("failed to allocate the GPU metrics sampler: %s", strerror(-err));
		nvml__close(g);
		gpu_metrics__free(g);
		return err;
	}
	for (i = 0; i < count; i++) {
		struct gpum_dev *d = &g->dev[g->ndev];

		/* one the caller may not read (NO_PERMISSION) is left out */
		if (g->n.handle(i, &d->h))
			continue;
		d->index = i;
		if (g->n.name(d->h, d->name, sizeof(d->name)))
			snprintf(d->name, sizeof(d->name), "GPU %u", i);
		d->name[sizeof(d->name) - 1] = 0;
		g->ndev++;
	}
	gpum__probe(g);
	*out = g;
	return 0;
}

/* The header's keys being written: a key that does not fit whole ends
 * them, so that a header never holds a cut-off value. */
struct optbuf {
	char *buf;
	size_t len, n;
	bool full;
};

__attribute__((format(printf, 2, 3)))
static void put_option(struct optbuf *o, const char *fmt, ...)
{
	char tok[128];
	va_list ap;
	int k;

	if (o->full)
		return;
	va_start(ap, fmt);
	k = vsnprintf(tok, sizeof(tok), fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(tok) || o->n + (o->n > 0) + (size_t)k >= o->len) {
		o->full = true;
		return;
	}
	o->n += (size_t)snprintf(o->buf + o->n, o->len - o->n, "%s%s", o->n ? " " : "", tok);
}

size_t gpu_metrics__options(const struct gpu_metrics *g, char *buf, size_t len)
{
	struct optbuf o = { .buf = buf, .len = len };

	if (!len)
		return 0;
	buf[0] = 0;
	put_option(&o, "gpu_metrics=%u", g->hz);
	put_option(&o, "gpu_metrics_devs=%u", g->ndev);
	for (uint32_t i = 0; i < g->ndev; i++) {
		const struct gpum_dev *d = &g->dev[i];

		put_option(&o, "gpu_metrics_dev%u=0x%x", d->index, d->mask);
		if (d->mig)
			put_option(&o, "gpu_metrics_dev%u_mig=1", d->index);
		/* the count and its source as one: never one without the other */
		if (d->sms)
			put_option(&o, "gpu_metrics_dev%u_sms=%u gpu_metrics_dev%u_sms_from=%s", d->index,
				   d->sms, d->index, d->sms_from);
	}
	return o.n;
}

/* Device d fell off at ts (NVML_ERROR_GPU_IS_LOST): the first thread to
 * see it says so, counts it and queues its gpu_lost record. */
static void mark_lost(struct gpu_metrics *g, struct gpum_dev *d, uint64_t ts)
{
	struct gt_gpu_metric m = { .hdr = { .ts = ts, .type = GT_REC_GPU_METRIC, .size = sizeof(m) },
				   .device = d->index, .metric = GT_GPUM_LOST, .value_micro = 1000000 };

	if (__atomic_exchange_n(&d->lost, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_add_fetch(&g->lost, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g->records, gpum_queue__push(g->q, &m, 1), __ATOMIC_RELAXED);
	pr_warn("GPU %u (%s) fell off the bus (NVML: GPU is lost): its metrics stop here, the recording "
		"goes on", d->index, d->name);
}

/* Waits until next (CLOCK_MONOTONIC ns) or the stop; true when stopped. */
static bool wait_until(struct gpu_metrics *g, uint64_t next)
{
	struct timespec at = { .tv_sec = (time_t)(next / 1000000000ull),
			       .tv_nsec = (long)(next % 1000000000ull) };
	bool stop;

	pthread_mutex_lock(&g->lock);
	while (!g->stop && pthread_cond_timedwait(&g->cond, &g->lock, &at) != ETIMEDOUT)
		;
	stop = g->stop;
	pthread_mutex_unlock(&g->lock);
	return stop;
}

/* The next tick after a round that ended at ts: a round that overran skips
 * the missed ticks rather than bursting. */
static uint64_t next_tick(uint64_t next, uint64_t period, uint64_t ts)
{
	next += period;
	if (next <= ts)
		next = ts + period - (ts - next) % period;
	return next;
}

/* next, moved past the off part of a GTRACE_GPUM_BURST period */
static uint64_t burst_next(const struct gpu_metrics *g, uint64_t next)
{
	uint64_t phase;

	if (!g->burst_period || next < g->burst_t0)
		return next;
	phase = (next - g->burst_t0) % g->burst_period;
	return phase < g->burst_on ? next : next + g->burst_period - phase;
}

/* The rounds of the grid in [from, to) (a period apart) that fell in the
 * sampled part of a GTRACE_GPUM_BURST period: those a late sampler missed.
 * Past 2^16 of them (a stop of minutes) counted without the burst test. */
static uint64_t missed_rounds(const struct gpu_metrics *g, uint64_t from, uint64_t to, uint64_t period)
{
	uint64_t n = 0, t;
	unsigned int i;

	if (to <= from)
		return 0;
	if (!g->burst_period)
		return (to - from + period - 1) / period;
	for (t = from, i = 0; t < to && i < 65536; t += period, i++)
		n += t < g->burst_t0 || (t - g->burst_t0) % g->burst_period < g->burst_on;
	return t < to ? n + (to - t + period - 1) / period : n;
}

/* The sampler's next round after the one due at next, at ts (taken: that
 * one was read): the rounds between that it did not take are counted
 * missed, the one due at next too when it was not read. */
static uint64_t grid_advance(struct gpu_metrics *g, uint64_t next, uint64_t period, uint64_t ts, bool taken)
{
	uint64_t after = next_tick(next, period, ts);

	__atomic_add_fetch(&g->missed, missed_rounds(g, taken ? next + period : next, after, period),
			   __ATOMIC_RELAXED);
	return burst_next(g, after);
}

static void *sampler(void *arg)
{
	struct gpu_metrics *g = arg;
	struct gt_gpu_metric recs[MAX_PER_SAMPLE];
	uint64_t period = 1000000000ull / g->hz, next = clock__ns(CLOCK_MONOTONIC), end;

	while (!wait_until(g, next)) {
		uint64_t ts = clock__ns(CLOCK_MONOTONIC), failed;
		uint32_t i, ok;
		bool lost;

		if (burst_next(g, ts) != ts) {
			/* woken so late that the sampled part of the burst
			 * period is over: this round is missed too, nothing
			 * is read in the part that samples nothing */
			next = grid_advance(g, next, period, ts, false);
			continue;
		}
		for (i = 0; i < g->ndev; i++) {
			struct gpum_dev *d = &g->dev[i];
			size_t k;

			if (__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
				continue;
			/* the processes are the other thread's */
			k = gpum__read_dev(g, d, ts, d->mask & ~(1u << GT_GPUM_PROC_MEM), recs, &ok, &failed, &lost);
			/* a GPU that fell off fails every query: that is one loss, not errors */
			if (!lost)
				__atomic_add_fetch(&g->errors, failed, __ATOMIC_RELAXED);
			__atomic_add_fetch(&g->records, gpum_queue__push(g->q, recs, k), __ATOMIC_RELAXED);
			if (lost)
				mark_lost(g, d, ts);
		}
		__atomic_add_fetch(&g->samples, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&g->cpu_ns[0], clock__ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELAXED);
		next = grid_advance(g, next, period, ts, true);
	}
	/* the rounds due before the stop was asked that a late sampler did
	 * not take */
	pthread_mutex_lock(&g->lock);
	end = g->stop_ns;
	pthread_mutex_unlock(&g->lock);
	__atomic_add_fetch(&g->missed, missed_rounds(g, next, end, period), __ATOMIC_RELAXED);
	return NULL;
}

/* Whether pid is in v[0..n). */
static bool has_pid(const uint32_t *v, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* One listing of device d's processes at ts: a proc_mem_used record per
 * process with a known figure, and a 0 for each process of the previous
 * listing that is gone. *buf (room *cap) grows as NVML asks. Returns 0,
 * -ENOMEM, or the NVML error. */
static int read_procs(struct gpu_metrics *g, struct gpum_dev *d, uint64_t ts, nvmlabi_process_info_t **buf,
		      unsigned int *cap)
{
	struct gt_gpu_metric m = { .hdr = { .ts = ts, .type = GT_REC_GPU_METRIC, .size = sizeof(m) },
				   .device = d->index, .metric = GT_GPUM_PROC_MEM };
	unsigned int count = *cap, i;
	uint32_t *now;
	size_t nnow = 0, kept = 0, pushed = 0;
	int ret;

	ret = g->n.procs(d->h, &count, *buf);
	if (ret == NVMLABI_ERROR_INSUFFICIENT_SIZE && count <= PROCS_MAX) {
		nvmlabi_process_info_t *b = realloc(*buf, (count + 16) * sizeof(**buf));

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = count + 16;
		count = *cap;
		ret = g->n.procs(d->h, &count, *buf);
	}
	if (ret)
		return ret;
	now = malloc((count ? count : 1) * sizeof(*now));
	if (!now)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		const nvmlabi_process_info_t *p = &(*buf)[i];

		if (has_pid(now, nnow, p->pid))
			continue;	/* MIG: one process, several instances */
		now[nnow++] = p->pid;
		if (p->used_gpu_memory == NVMLABI_VALUE_NOT_AVAILABLE)
			continue;
		m.hdr.pid = p->pid;
		m.value_micro = gpu_metrics__micro((double)p->used_gpu_memory);
		kept += gpum_queue__push(g->q, &m, 1);
		pushed++;
	}
	/* one that is gone drops to 0, so that its counter does not stay up */
	m.value_micro = 0;
	for (size_t k = 0; k < d->npids; k++) {
		if (has_pid(now, nnow, d->pids[k]))
			continue;
		m.hdr.pid = d->pids[k];
		kept += gpum_queue__push(g->q, &m, 1);
		pushed++;
	}
	free(d->pids);
	d->pids = now;
	d->npids = nnow;
	__atomic_add_fetch(&g->records, kept, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g->proc_samples, pushed, __ATOMIC_RELAXED);
	return 0;
}

/* The procs thread: every GPU that lists its processes, once a second. */
static void *procs_sampler(void *arg)
{
	struct gpu_metrics *g = arg;
	nvmlabi_process_info_t *buf = NULL;
	unsigned int cap = 0;
	uint64_t next = clock__ns(CLOCK_MONOTONIC);

	buf = calloc(64, sizeof(*buf));
	if (buf)
		cap = 64;
	while (!wait_until(g, next)) {
		uint64_t ts = clock__ns(CLOCK_MONOTONIC);

		for (uint32_t i = 0; i < g->ndev; i++) {
			struct gpum_dev *d = &g->dev[i];
			int ret;

			if (!(d->mask & (1u << GT_GPUM_PROC_MEM)) || __atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
				continue;
			ret = read_procs(g, d, ts, &buf, &cap);
			if (ret == NVMLABI_ERROR_GPU_IS_LOST)
				mark_lost(g, d, ts);
			else if (ret)
				__atomic_add_fetch(&g->errors, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&g->cpu_ns[1], clock__ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELAXED);
		next = burst_next(g, next_tick(next, g->procs_ns, ts));
	}
	free(buf);
	return NULL;
}

int gpu_metrics__start(struct gpu_metrics *g)
{
	sigset_t all, old;
	bool procs = false;
	int err;

	if (!g->hz)
		return -EINVAL;
	for (uint32_t i = 0; i < g->ndev; i++)
		procs |= (g->dev[i].mask >> GT_GPUM_PROC_MEM) & 1;
	g->start_ns = clock__ns(CLOCK_MONOTONIC);
	/* signals (SIGINT, SIGCHLD) are the loop's: the threads take none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&g->thread, NULL, sampler, g);
	if (!err) {
		g->running = true;
		if (procs)
			err = -pthread_create(&g->procs_thread, NULL, procs_sampler, g);
		g->procs_running = procs && !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("failed to start the GPU metrics sampler: %s", strerror(-err));
		gpu_metrics__stop(g);
		return err;
	}
	pr_info("GPU metrics: %u GPU%s at %u Hz%s", g->ndev, g->ndev == 1 ? "" : "s", g->hz,
		procs ? ", each process' memory once a second" : "");
	for (uint32_t i = 0; i < g->ndev; i++) {
		const struct gpum_dev *d = &g->dev[i];

		if (d->mig)
			pr_info("GPU %u (%s) is in MIG mode: sampled for what NVML gives of the whole GPU "
				"(metrics 0x%x%s), not per instance", d->index, d->name, d->mask,
				d->gpm ? "" : ", no GPM");
	}
	return 0;
}

int gpu_metrics__drain(struct gpu_metrics *g, int (*emit)(void *ctx, const struct gt_hdr *h), void *ctx)
{
	struct gt_gpu_metric buf[256];
	size_t n, i;
	int err;

	while ((n = gpum_queue__pop(g->q, buf, sizeof(buf) / sizeof(buf[0])))) {
		for (i = 0; i < n; i++)
			if ((err = emit(ctx, &buf[i].hdr)))
				return err;
	}
	return 0;
}

void gpu_metrics__stop(struct gpu_metrics *g)
{
	if (!g || !g->running)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	/* the sampler's time ends here (its wall time, its last rounds due) */
	g->stop_ns = clock__ns(CLOCK_MONOTONIC);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	g->running = false;
	if (g->procs_running)
		pthread_join(g->procs_thread, NULL);
	g->procs_running = false;
}

uint64_t gpu_metrics__cpu_ns(const struct gpu_metrics *g)
{
	return __atomic_load_n(&g->cpu_ns[0], __ATOMIC_RELAXED) + __atomic_load_n(&g->cpu_ns[1], __ATOMIC_RELAXED);
}

void gpu_metrics__stats(const struct gpu_metrics *g, struct gpu_metrics_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->samples = __atomic_load_n(&g->samples, __ATOMIC_RELAXED);
	s->missed = __atomic_load_n(&g->missed, __ATOMIC_RELAXED);
	s->records = __atomic_load_n(&g->records, __ATOMIC_RELAXED);
	s->errors = __atomic_load_n(&g->errors, __ATOMIC_RELAXED);
	s->lost = __atomic_load_n(&g->lost, __ATOMIC_RELAXED);
	s->dropped = g->q ? gpum_queue__dropped(g->q) : 0;
	s->proc_samples = __atomic_load_n(&g->proc_samples, __ATOMIC_RELAXED);
	s->gpus = g->ndev;
	s->mig = g->mig;
	s->hz = g->hz;
	s->cpu_ns = gpu_metrics__cpu_ns(g);
	s->wall_ns = !g->start_ns ? 0 : (g->stop_ns ? g->stop_ns : clock__ns(CLOCK_MONOTONIC)) - g->start_ns;
}

void gpu_metrics__free(struct gpu_metrics *g)
{
	if (!g)
		return;
	gpu_metrics__stop(g);
	nvml__close(g);
	for (uint32_t i = 0; i < g->ndev; i++)
		free(g->dev[i].pids);
	gpum_queue__free(g->q);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g->mg);
	free(g->dev);
	free(g);
}
