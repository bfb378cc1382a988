// SPDX-License-Identifier: MIT
/*
 * The GPU-metrics sampler (--gpu-metrics): NVML through dlopen, probed once
 * per GPU, read at a fixed rate on CLOCK_MONOTONIC by a thread of its own;
 * the processes each GPU lists and their memory about once a second by a
 * second thread, so that a slow listing never delays the rate's rounds.
 * The threads never write the trace: they queue records (the queue is
 * gpu_metrics_queue.c), the loop drains.
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
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/log.h"
#include "record/gpu_metrics.h"
#include "record/nvml_abi.h"

#define QUEUE_DEFAULT	65536
#define MAX_DEVICES	64
#define MAX_PER_SAMPLE	64	/* records one device gives per round, at most */
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

/* --- NVML --- */

struct nvml {
	void *dl;
	nvmlabi_init_v2_fn init;
	nvmlabi_shutdown_fn shutdown;
	nvmlabi_device_get_count_v2_fn count;
	nvmlabi_device_get_handle_by_index_v2_fn handle;
	nvmlabi_device_get_name_fn name;
	nvmlabi_device_get_uuid_fn uuid;
	nvmlabi_device_get_utilization_rates_fn util;
	nvmlabi_device_get_memory_info_fn mem;
	nvmlabi_device_get_clock_info_fn clock;
	nvmlabi_device_get_power_usage_fn power;
	nvmlabi_device_get_temperature_fn temp;
	nvmlabi_device_get_clocks_event_reasons_fn reasons;
	nvmlabi_device_get_compute_processes_fn procs;	/* _v3, else _v2; NULL = neither */
	nvmlabi_device_get_mig_mode_fn mig;
	nvmlabi_device_get_attributes_fn attrs;	/* the SM count; NULL = not exported */
	nvmlabi_device_get_num_gpu_cores_fn cores;	/* with arch, the SM count when attrs
							 * gives none; NULL = not exported */
	nvmlabi_device_get_architecture_fn arch;
	nvmlabi_gpm_query_device_support_fn gpm_support;
	nvmlabi_gpm_sample_alloc_fn gpm_alloc;
	nvmlabi_gpm_sample_free_fn gpm_free;
	nvmlabi_gpm_sample_get_fn gpm_get;
	nvmlabi_gpm_metrics_get_fn gpm_metrics;
};

/* The GPM metrics asked for, ours and NVML's id. */
static const struct {
	uint32_t ours, nvml;
} gpm_ids[] = {
	{ GT_GPUM_SM_ACTIVE, NVMLABI_GPM_SM_UTIL },
	{ GT_GPUM_SM_OCCUPANCY, NVMLABI_GPM_SM_OCCUPANCY },
	{ GT_GPUM_TENSOR_ACTIVE, NVMLABI_GPM_ANY_TENSOR_UTIL },
	{ GT_GPUM_FP16_ACTIVE, NVMLABI_GPM_FP16_UTIL },
	{ GT_GPUM_FP32_ACTIVE, NVMLABI_GPM_FP32_UTIL },
	{ GT_GPUM_FP64_ACTIVE, NVMLABI_GPM_FP64_UTIL },
	{ GT_GPUM_INT_ACTIVE, NVMLABI_GPM_INTEGER_UTIL },
	{ GT_GPUM_DRAM_BW, NVMLABI_GPM_DRAM_BW_UTIL },
	{ GT_GPUM_PCIE_TX, NVMLABI_GPM_PCIE_TX_PER_SEC },
	{ GT_GPUM_PCIE_RX, NVMLABI_GPM_PCIE_RX_PER_SEC },
	{ GT_GPUM_NVLINK_TX, NVMLABI_GPM_NVLINK_TOTAL_TX_PER_SEC },
	{ GT_GPUM_NVLINK_RX, NVMLABI_GPM_NVLINK_TOTAL_RX_PER_SEC },
};
#define NGPM (sizeof(gpm_ids) / sizeof(gpm_ids[0]))

#define BASIC_MASK ((1u << GT_GPUM_GPU_UTIL) | (1u << GT_GPUM_MEM_UTIL) | (1u << GT_GPUM_MEM_USED) | \
		    (1u << GT_GPUM_MEM_TOTAL) | (1u << GT_GPUM_SM_CLOCK) | (1u << GT_GPUM_MEM_CLOCK) | \
		    (1u << GT_GPUM_POWER) | (1u << GT_GPUM_TEMP) | (1u << GT_GPUM_THROTTLE))

struct gpum_dev {
	nvmlabi_device_t h;
	uint32_t index;			/* NVML's */
	uint32_t mask;			/* metrics it gives (bit = enum gt_gpu_metric_id) */
	bool gpm;			/* GPM samples allocated */
	bool mig;			/* in MIG mode at the start */
	uint32_t sms;			/* its SMs as NVML says at the start, 0 = not known */
	const char *sms_from;		/* how sms was obtained: "attributes" or "cores" */
	int lost;			/* fell off: not read any more (atomic: both threads read
					 * it, the first to see it lost sets it) */
	uint32_t *pids;			/* procs thread: the processes listed last time */
	size_t npids;
	nvmlabi_gpm_sample_t s[2];	/* GPM: the previous and the next sample */
	int cur;			/* which of s[] the next sample goes to */
	bool have_prev;			/* s[!cur] holds a sample */
	uint64_t prev_ts;		/* ... taken then */
	char name[NVMLABI_NAME_SIZE];
};

struct gpu_metrics {
	struct nvml n;
	unsigned int hz;
	uint64_t procs_ns;		/* the procs thread's period */
	struct gpum_dev *dev;
	uint32_t ndev;
	struct gpum_queue *q;
	nvmlabi_gpm_metrics_get_t *mg;	/* large (13 KiB): kept, not on the stack */
	pthread_t thread, procs_thread;
	bool running, procs_running;
	pthread_mutex_t lock;		/* stop, with cond */
	pthread_cond_t cond;
	bool stop;
	uint64_t start_ns, stop_ns;	/* when sampling started and stopped (CLOCK_MONOTONIC; 0: not) */
	uint32_t mig;			/* GPUs in MIG mode */
	/* GTRACE_GPUM_BURST=ON_MS/PERIOD_MS, a measuring knob: both threads
	 * sample only in the first ON ms of every PERIOD ms from burst_t0, so
	 * that a benchmark (tools/bench/light_windows.py --gpum) can compare
	 * stretches with and without sampling inside one recording */
	uint64_t burst_on, burst_period, burst_t0;
	/* written by the threads; read after they stopped or as a snapshot */
	uint64_t samples, records, errors, proc_samples;
	uint64_t cpu_ns[2];		/* CPU time of the sampler and of the procs thread */
	uint32_t lost;
};

/* Why there are no metrics: into o->why, or the info line. */
__attribute__((format(printf, 2, 3)))
static void no_metrics(const struct gpu_metrics_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (o->why && o->why_len)
		snprintf(o->why, o->why_len, "no GPU metrics: %s; recording goes on without them", buf);
	else
		pr_info("no GPU metrics: %s; recording goes on without them", buf);
}

static void *sym(struct nvml *n, const char *name, bool *missing)
{
	void *p = dlsym(n->dl, name);

	if (!p)
		*missing = true;
	return p;
}

/* Whether this program is statically linked: its program headers have no
 * interpreter. */
static bool linked_static(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return false;
	return ph != NULL;
}

/* A static build loads NVML (and with it the machine's libc.so.6) with the
 * loader of the glibc it was linked with, which works only where that is
 * the machine's glibc: elsewhere dlopen fails or the loaded libc crashes.
 * So it is tried first in a child: load, nvmlInit_v2, count the GPUs.
 * Returns 0 when that worked, else -ENOENT after saying why. */
static int static_trial(const char *lib, const struct gpu_metrics_opts *o)
{
	pid_t pid = fork();
	int status = 0;

	if (pid < 0)
		return 0;	/* no trial: load it here as a dynamic build would */
	if (pid == 0) {
		void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		nvmlabi_init_v2_fn init;
		nvmlabi_device_get_count_v2_fn count;
		unsigned int n = 0;

		if (!dl)
			_exit(3);
		init = (nvmlabi_init_v2_fn)dlsym(dl, "nvmlInit_v2");
		count = (nvmlabi_device_get_count_v2_fn)dlsym(dl, "nvmlDeviceGetCount_v2");
		_exit(init && count && !init() && !count(&n) ? 0 : 4);
	}
	for (int i = 0; i < 200; i++) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0)
			return 0;
		if (i == 199) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			no_metrics(o, "loading %s into this static build did not finish in 10 s", lib);
			return -ENOENT;
		}
		usleep(50000);
	}
	if (WIFSIGNALED(status)) {
		no_metrics(o, "loading %s into this static build crashed (signal %d; a static build can load "
			   "it only where the machine's glibc is the one it was linked with); a dynamic build "
			   "samples GPU metrics", lib, WTERMSIG(status));
		return -ENOENT;
	}
	/* a library that cannot be loaded, or NVML that does not start, is
	 * said by the load here with NVML's own reason */
	return 0;
}

/* Loads the library and the functions; the GPM ones may be missing (an
 * older driver). Returns 0, or -ENOENT after saying why at info level. */
static int nvml__load(struct nvml *n, const char *lib, const struct gpu_metrics_opts *o)
{
	bool missing = false, gpm_missing = false;

	if (linked_static() && static_trial(lib, o))
		return -ENOENT;
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		no_metrics(o, "cannot load %s (%s)", lib, dlerror());
		return -ENOENT;
	}
	n->init = (nvmlabi_init_v2_fn)sym(n, "nvmlInit_v2", &missing);
	n->shutdown = (nvmlabi_shutdown_fn)sym(n, "nvmlShutdown", &missing);
	n->count = (nvmlabi_device_get_count_v2_fn)sym(n, "nvmlDeviceGetCount_v2", &missing);
	n->handle = (nvmlabi_device_get_handle_by_index_v2_fn)sym(n, "nvmlDeviceGetHandleByIndex_v2", &missing);
	n->name = (nvmlabi_device_get_name_fn)sym(n, "nvmlDeviceGetName", &missing);
	if (missing) {
		no_metrics(o, "%s lacks nvmlInit_v2 or the device queries", lib);
		dlclose(n->dl);
		n->dl = NULL;
		return -ENOENT;
	}
	/* each of these may be absent: the metric is then not probed */
	n->uuid = (nvmlabi_device_get_uuid_fn)dlsym(n->dl, "nvmlDeviceGetUUID");
	n->util = (nvmlabi_device_get_utilization_rates_fn)dlsym(n->dl, "nvmlDeviceGetUtilizationRates");
	n->mem = (nvmlabi_device_get_memory_info_fn)dlsym(n->dl, "nvmlDeviceGetMemoryInfo");
	n->clock = (nvmlabi_device_get_clock_info_fn)dlsym(n->dl, "nvmlDeviceGetClockInfo");
	n->power = (nvmlabi_device_get_power_usage_fn)dlsym(n->dl, "nvmlDeviceGetPowerUsage");
	n->temp = (nvmlabi_device_get_temperature_fn)dlsym(n->dl, "nvmlDeviceGetTemperature");
	n->reasons = (nvmlabi_device_get_clocks_event_reasons_fn)dlsym(n->dl,
								       "nvmlDeviceGetCurrentClocksEventReasons");
	if (!n->reasons)
		n->reasons = (nvmlabi_device_get_clocks_event_reasons_fn)dlsym(
			n->dl, "nvmlDeviceGetCurrentClocksThrottleReasons");
	n->procs = (nvmlabi_device_get_compute_processes_fn)dlsym(n->dl, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->procs)
		n->procs = (nvmlabi_device_get_compute_processes_fn)dlsym(
			n->dl, "nvmlDeviceGetComputeRunningProcesses_v2");
	n->mig = (nvmlabi_device_get_mig_mode_fn)dlsym(n->dl, "nvmlDeviceGetMigMode");
	n->attrs = (nvmlabi_device_get_attributes_fn)dlsym(n->dl, "nvmlDeviceGetAttributes_v2");
	n->cores = (nvmlabi_device_get_num_gpu_cores_fn)dlsym(n->dl, "nvmlDeviceGetNumGpuCores");
	n->arch = (nvmlabi_device_get_architecture_fn)dlsym(n->dl, "nvmlDeviceGetArchitecture");
	n->gpm_support = (nvmlabi_gpm_query_device_support_fn)sym(n, "nvmlGpmQueryDeviceSupport", &gpm_missing);
	n->gpm_alloc = (nvmlabi_gpm_sample_alloc_fn)sym(n, "nvmlGpmSampleAlloc", &gpm_missing);
	n->gpm_free = (nvmlabi_gpm_sample_free_fn)sym(n, "nvmlGpmSampleFree", &gpm_missing);
	n->gpm_get = (nvmlabi_gpm_sample_get_fn)sym(n, "nvmlGpmSampleGet", &gpm_missing);
	n->gpm_metrics = (nvmlabi_gpm_metrics_get_fn)sym(n, "nvmlGpmMetricsGet", &gpm_missing);
	if (gpm_missing)
		n->gpm_support = NULL;
	return 0;
}

/* One round of device d's metrics into out (at most MAX_PER_SAMPLE);
 * want = the metrics to read (the probe reads all and keeps what worked).
 * Returns how many records; *ok = the mask of those read, *lost set when
 * NVML says the GPU fell off. */
static size_t read_dev(struct gpu_metrics *g, struct gpum_dev *d, uint64_t ts, uint32_t want,
		       struct gt_gpu_metric *out, uint32_t *ok, uint64_t *failed, bool *lost)
{
	struct nvml *n = &g->n;
	nvmlabi_utilization_t u;
	nvmlabi_memory_t m;
	unsigned long long reasons;
	unsigned int v;
	size_t k = 0;
	int ret;

	*ok = 0;
	*failed = 0;
	*lost = false;
#define PUT(id, val) do { \
		out[k] = (struct gt_gpu_metric){ .hdr = { .ts = ts, .type = GT_REC_GPU_METRIC, \
			.size = sizeof(struct gt_gpu_metric) }, .device = d->index, .metric = (id), \
			.value_micro = (val) }; \
		k++; *ok |= 1u << (id); \
	} while (0)
#define CHECK(r) do { if ((r) == NVMLABI_ERROR_GPU_IS_LOST) *lost = true; (*failed)++; } while (0)
	if ((want & ((1u << GT_GPUM_GPU_UTIL) | (1u << GT_GPUM_MEM_UTIL))) && n->util) {
		if (!(ret = n->util(d->h, &u))) {
			PUT(GT_GPUM_GPU_UTIL, (int64_t)u.gpu * 1000000);
			PUT(GT_GPUM_MEM_UTIL, (int64_t)u.memory * 1000000);
		} else {
			CHECK(ret);
		}
	}
	if ((want & ((1u << GT_GPUM_MEM_USED) | (1u << GT_GPUM_MEM_TOTAL))) && n->mem) {
		if (!(ret = n->mem(d->h, &m))) {
			PUT(GT_GPUM_MEM_USED, gpu_metrics__micro((double)m.used));
			PUT(GT_GPUM_MEM_TOTAL, gpu_metrics__micro((double)m.total));
		} else {
			CHECK(ret);
		}
	}
	if ((want & (1u << GT_GPUM_SM_CLOCK)) && n->clock) {
		if (!(ret = n->clock(d->h, NVMLABI_CLOCK_SM, &v)))
			PUT(GT_GPUM_SM_CLOCK, (int64_t)v * 1000000);
		else
			CHECK(ret);
	}
	if ((want & (1u << GT_GPUM_MEM_CLOCK)) && n->clock) {
		if (!(ret = n->clock(d->h, NVMLABI_CLOCK_MEM, &v)))
			PUT(GT_GPUM_MEM_CLOCK, (int64_t)v * 1000000);
		else
			CHECK(ret);
	}
	if ((want & (1u << GT_GPUM_POWER)) && n->power) {
		if (!(ret = n->power(d->h, &v)))
			PUT(GT_GPUM_POWER, (int64_t)v * 1000);	/* mW -> W, micro */
		else
			CHECK(ret);
	}
	if ((want & (1u << GT_GPUM_TEMP)) && n->temp) {
		if (!(ret = n->temp(d->h, NVMLABI_TEMPERATURE_GPU, &v)))
			PUT(GT_GPUM_TEMP, (int64_t)v * 1000000);
		else
			CHECK(ret);
	}
	if ((want & (1u << GT_GPUM_THROTTLE)) && n->reasons) {
		/* the defined reasons are the low bits: kept exact in micro-units */
		if (!(ret = n->reasons(d->h, &reasons)))
			PUT(GT_GPUM_THROTTLE, (int64_t)(reasons & ((1ull << 40) - 1)) * 1000000);
		else
			CHECK(ret);
	}
	/* GPM: the metrics between the previous sample and this one */
	if (d->gpm && (!d->have_prev || ts - d->prev_ts >= GPU_METRICS_GPM_MIN_NS)) {
		nvmlabi_gpm_metrics_get_t *mg = g->mg;
		size_t i;

		ret = n->gpm_get(d->h, d->s[d->cur]);
		if (ret) {
			CHECK(ret);
		} else if (d->have_prev) {
			memset(mg, 0, offsetof(nvmlabi_gpm_metrics_get_t, metrics) + NGPM * sizeof(mg->metrics[0]));
			mg->version = NVMLABI_GPM_METRICS_GET_VERSION;
			mg->num_metrics = NGPM;
			mg->sample1 = d->s[!d->cur];
			mg->sample2 = d->s[d->cur];
			for (i = 0; i < NGPM; i++)
				mg->metrics[i].metric_id = gpm_ids[i].nvml;
			ret = n->gpm_metrics(mg);
			if (ret) {
				CHECK(ret);
			} else {
				for (i = 0; i < NGPM; i++) {
					if (!(want & (1u << gpm_ids[i].ours)))
						continue;
					if (mg->metrics[i].ret)
						(*failed)++;
					else
						PUT(gpm_ids[i].ours, gpu_metrics__micro(mg->metrics[i].value));
				}
			}
		}
		if (!ret) {
			d->have_prev = true;
			d->prev_ts = ts;
			d->cur = !d->cur;
		}
	}
#undef PUT
#undef CHECK
	return k;
}

static void nvml__close(struct gpu_metrics *g)
{
	uint32_t i;

	if (!g->n.dl)
		return;
	for (i = 0; i < g->ndev; i++) {
		if (!g->dev[i].gpm)
			continue;
		g->n.gpm_free(g->dev[i].s[0]);
		g->n.gpm_free(g->dev[i].s[1]);
	}
	g->n.shutdown();
	dlclose(g->n.dl);
	g->n.dl = NULL;
}

/* Whether NVML lists device d's processes: a listing into no room works
 * (no process) or asks for room (some). */
static bool procs_listable(const struct gpu_metrics *g, const struct gpum_dev *d)
{
	unsigned int count = 0;
	int ret;

	if (!g->n.procs)
		return false;
	ret = g->n.procs(d->h, &count, NULL);
	return ret == NVMLABI_SUCCESS || ret == NVMLABI_ERROR_INSUFFICIENT_SIZE;
}

/* GPM on device d: supported, two samples allocated and one taken (in MIG
 * mode NVML may say it supports GPM and then refuse the whole GPU's
 * samples). */
static bool gpm_works(struct gpu_metrics *g, struct gpum_dev *d)
{
	nvmlabi_gpm_support_t s = { .version = NVMLABI_GPM_SUPPORT_VERSION };

	if (!g->n.gpm_support || g->n.gpm_support(d->h, &s) || !s.is_supported)
		return false;
	if (g->n.gpm_alloc(&d->s[0]))
		return false;
	if (g->n.gpm_alloc(&d->s[1])) {
		g->n.gpm_free(d->s[0]);
		return false;
	}
	if (g->n.gpm_get(d->h, d->s[0])) {
		g->n.gpm_free(d->s[0]);
		g->n.gpm_free(d->s[1]);
		return false;
	}
	return true;
}

uint32_t gpu_metrics__sms_from_cores(unsigned int arch, unsigned int cores)
{
	unsigned int per_sm;

	/* FP32 cores per SM, only where one figure holds for every chip of
	 * the architecture: not Ampere (GA100 64, GA10x 128), Pascal (GP100
	 * 64, GP10x 128) or anything newer than the table */
	switch (arch) {
	case NVMLABI_DEVICE_ARCH_VOLTA:
	case NVMLABI_DEVICE_ARCH_TURING:
		per_sm = 64;
		break;
	case NVMLABI_DEVICE_ARCH_ADA:
	case NVMLABI_DEVICE_ARCH_HOPPER:
	case NVMLABI_DEVICE_ARCH_BLACKWELL:
		per_sm = 128;
		break;
	default:
		return 0;
	}
	return cores % per_sm ? 0 : cores / per_sm;
}

/* Device d's SMs into d->sms and d->sms_from; none (0) when NVML does not
 * say, or for a GPU in MIG mode, whose programs run on an instance of fewer
 * SMs than the whole GPU's. nvmlDeviceGetAttributes_v2 first; drivers that
 * answer it for MIG device handles only (580 on an H200) leave the whole
 * GPU's CUDA cores over its architecture's cores per SM. */
static void sm_count(const struct gpu_metrics *g, struct gpum_dev *d)
{
	nvmlabi_device_attributes_t at;
	nvmlabi_device_arch_t arch;
	unsigned int cores;

	d->sms = 0;
	d->sms_from = NULL;
	if (d->mig)
		return;
	memset(&at, 0, sizeof(at));
	if (g->n.attrs && !g->n.attrs(d->h, &at) && at.multiprocessor_count) {
		d->sms = at.multiprocessor_count;
		d->sms_from = "attributes";
		return;
	}
	if (!g->n.cores || !g->n.arch || g->n.arch(d->h, &arch) || g->n.cores(d->h, &cores))
		return;
	d->sms = gpu_metrics__sms_from_cores(arch, cores);
	if (d->sms)
		d->sms_from = "cores";
	else
		pr_verbose("GPU %u: %u CUDA cores, architecture %u: no SM count from them (the "
			   "architecture's cores per SM not known, or not a multiple)", d->index, cores, arch);
}

/* Every GPU, once: which metrics it gives (each query tried), whether it
 * is in MIG mode, its SMs. A metric that fails later is counted. */
static void probe(struct gpu_metrics *g)
{
	struct gt_gpu_metric tmp[MAX_PER_SAMPLE];
	uint32_t i, ok;
	uint64_t failed;
	bool lost;

	for (i = 0; i < g->ndev; i++) {
		struct gpum_dev *d = &g->dev[i];
		unsigned int cur = 0, pending = 0;

		read_dev(g, d, clock__ns(CLOCK_MONOTONIC), BASIC_MASK, tmp, &ok, &failed, &lost);
		d->mask = ok;
		if (gpm_works(g, d)) {
			d->gpm = true;
			for (size_t k = 0; k < NGPM; k++)
				d->mask |= 1u << gpm_ids[k].ours;
		}
		if (procs_listable(g, d))
			d->mask |= 1u << GT_GPUM_PROC_MEM;
		if (g->n.mig && !g->n.mig(d->h, &cur, &pending) && cur == NVMLABI_DEVICE_MIG_ENABLE) {
			d->mig = true;
			g->mig++;
		}
		sm_count(g, d);
		pr_verbose("GPU %u (%s): metrics 0x%x%s%s, %u SMs (%s)", d->index, d->name, d->mask,
			   d->gpm ? ", GPM" : ", no GPM", d->mig ? ", MIG mode" : "", d->sms,
			   d->sms_from ? d->sms_from : "not known");
	}
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
		no_metrics(o, "nvmlInit_v2 failed (NVML error %d)", ret);
		dlclose(g->n.dl);
		g->n.dl = NULL;
		gpu_metrics__free(g);
		return 0;
	}
	if ((ret = g->n.count(&count)) || !count) {
		no_metrics(o, "NVML sees no GPU%s", ret ? " (nvmlDeviceGetCount_v2 failed)" : "");
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
	probe(g);
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

static void *sampler(void *arg)
{
	struct gpu_metrics *g = arg;
	struct gt_gpu_metric recs[MAX_PER_SAMPLE];
	uint64_t period = 1000000000ull / g->hz, next = clock__ns(CLOCK_MONOTONIC);

	while (!wait_until(g, next)) {
		uint64_t ts = clock__ns(CLOCK_MONOTONIC), failed;
		uint32_t i, ok;
		bool lost;

		for (i = 0; i < g->ndev; i++) {
			struct gpum_dev *d = &g->dev[i];
			size_t k;

			if (__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
				continue;
			/* the processes are the other thread's */
			k = read_dev(g, d, ts, d->mask & ~(1u << GT_GPUM_PROC_MEM), recs, &ok, &failed, &lost);
			/* a GPU that fell off fails every query: that is one loss, not errors */
			if (!lost)
				__atomic_add_fetch(&g->errors, failed, __ATOMIC_RELAXED);
			__atomic_add_fetch(&g->records, gpum_queue__push(g->q, recs, k), __ATOMIC_RELAXED);
			if (lost)
				mark_lost(g, d, ts);
		}
		__atomic_add_fetch(&g->samples, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&g->cpu_ns[0], clock__ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELAXED);
		next = burst_next(g, next_tick(next, period, ts));
	}
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
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	g->running = false;
	g->stop_ns = clock__ns(CLOCK_MONOTONIC);
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
