// SPDX-License-Identifier: MIT
/*
 * The GPU-metrics sampler's NVML side (--gpu-metrics): the library loaded
 * with dlopen and its functions looked up (a static build tries the load
 * in a child first), every GPU probed once for the metrics it gives, its
 * MIG mode and its SM count, and one round of a device's metrics read,
 * GPM included; the threads that call it are gpu_metrics.c.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/log.h"
#include "record/gpum/gpu_metrics.h"
#include "record/gpum/gpu_metrics_int.h"
#include "record/gpum/nvml_abi.h"

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

void gpum__no_metrics(const struct gpu_metrics_opts *o, const char *fmt, ...)
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
			gpum__no_metrics(o, "loading %s into this static build did not finish in 10 s", lib);
			return -ENOENT;
		}
		usleep(50000);
	}
	if (WIFSIGNALED(status)) {
		gpum__no_metrics(o, "loading %s into this static build crashed (signal %d; a static build can load "
			   "it only where the machine's glibc is the one it was linked with); a dynamic build "
			   "samples GPU metrics", lib, WTERMSIG(status));
		return -ENOENT;
	}
	/* a library that cannot be loaded, or NVML that does not start, is
	 * said by the load here with NVML's own reason */
	return 0;
}

int nvml__load(struct nvml *n, const char *lib, const struct gpu_metrics_opts *o)
{
	bool missing = false, gpm_missing = false;

	if (linked_static() && static_trial(lib, o))
		return -ENOENT;
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		gpum__no_metrics(o, "cannot load %s (%s)", lib, dlerror());
		return -ENOENT;
	}
	n->init = (nvmlabi_init_v2_fn)sym(n, "nvmlInit_v2", &missing);
	n->shutdown = (nvmlabi_shutdown_fn)sym(n, "nvmlShutdown", &missing);
	n->count = (nvmlabi_device_get_count_v2_fn)sym(n, "nvmlDeviceGetCount_v2", &missing);
	n->handle = (nvmlabi_device_get_handle_by_index_v2_fn)sym(n, "nvmlDeviceGetHandleByIndex_v2", &missing);
	n->name = (nvmlabi_device_get_name_fn)sym(n, "nvmlDeviceGetName", &missing);
	if (missing) {
		gpum__no_metrics(o, "%s lacks nvmlInit_v2 or the device queries", lib);
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

size_t gpum__read_dev(struct gpu_metrics *g, struct gpum_dev *d, uint64_t ts, uint32_t want,
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

void nvml__close(struct gpu_metrics *g)
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

void gpum__probe(struct gpu_metrics *g)
{
	struct gt_gpu_metric tmp[MAX_PER_SAMPLE];
	uint32_t i, ok;
	uint64_t failed;
	bool lost;

	for (i = 0; i < g->ndev; i++) {
		struct gpum_dev *d = &g->dev[i];
		unsigned int cur = 0, pending = 0;

		gpum__read_dev(g, d, clock__ns(CLOCK_MONOTONIC), BASIC_MASK, tmp, &ok, &failed, &lost);
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
