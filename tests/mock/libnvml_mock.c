// SPDX-License-Identifier: MIT
/*
 * A mock libnvidia-ml.so.1 for the GPU-metrics tests (GTRACE_NVML_LIB=path):
 * the functions the sampler calls, with the signatures of NVML 13
 * (user/record/gpum/nvml_abi.h), returning scripted values. Two GPUs: 0 has GPM,
 * 1 has not. The script (docs in tests/integration/test_gpu_metrics.sh):
 *   gpu_util of GPU d, call k of it (the probe is k = 0): 10 * (k % 4 + 1) + d
 *   mem_util 25; mem used (d + 1) GiB of 80 GiB; clocks 1980 / 2619 MHz;
 *   power 350123 mW; temperature 45 + d C; throttle reasons 0x4
 *   GPM (GPU 0): sm 50.5, occupancy 25.25, tensor 87.125, fp16 1.5, fp32 2.5,
 *   fp64 3.5, int 4.5, dram 15.75 %; PCIe tx 100.5 rx 200.25, NVLink tx 300
 *   rx 400 MiB/s
 * GTRACE_MOCK_NVML_FAIL_AFTER=N: nvmlDeviceGetUtilizationRates fails from
 * its (N+1)-th call on (any GPU), as NVML_ERROR_UNKNOWN.
 * GTRACE_MOCK_NVML_GPUS=N: N GPUs (default 2), the odd ones without GPM.
 * GTRACE_MOCK_NVML_LOST=D:K: GPU D falls off at its utilization call K (the
 * probe's is 0): that call and every query of D after it return
 * NVML_ERROR_GPU_IS_LOST.
 * GTRACE_MOCK_NVML_MIG=D: GPU D is in MIG mode: utilization is not
 * supported and GPM samples are refused (its GPM support query still says
 * yes, as it may on a real one).
 * GTRACE_MOCK_NVML_PROCS=FILE: the compute processes, read at every
 * listing: lines "D PID BYTES" (BYTES "-": not available); no file, none.
 * GTRACE_MOCK_NVML_PROCS_DELAY_MS=N: each listing takes N ms more.
 * SM counts (nvmlDeviceGetAttributes_v2): 132 on even GPUs, 114 on odd ones,
 * also in MIG mode; GTRACE_MOCK_NVML_SMS=LIST, comma-separated per GPU from
 * 0: that count, "-" the call fails (NVML_ERROR_NOT_SUPPORTED) on a GPU of
 * the default count, "-N" it fails on a GPU of N SMs (as on driver 580's
 * whole GPUs), an empty entry or one past the list the default.
 * Architecture (nvmlDeviceGetArchitecture): Hopper (9) on every GPU;
 * GTRACE_MOCK_NVML_ARCH=LIST per GPU: that NVML_DEVICE_ARCH_* value, "-" the
 * call fails. CUDA cores (nvmlDeviceGetNumGpuCores, also in MIG mode): the
 * GPU's SMs times its architecture's FP32 cores per SM (64 for Pascal to
 * Ampere, as GP100 and GA100; else 128): 16896 for 132 Hopper SMs;
 * GTRACE_MOCK_NVML_CORES=LIST per GPU: that count, "-" the call fails.
 * (Lists as GTRACE_MOCK_NVML_SMS's: an empty entry, the default.)
 * GTRACE_MOCK_NVML_IDLE=1: the GPUs are idle at their odd utilization calls
 * (utilization 0), and a GPM sample taken after an idle reading gives 0 for
 * the activity metrics (SM, occupancy, tensor, FP, integer, DRAM).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "user/record/gpum/nvml_abi.h"

#define API __attribute__((visibility("default")))
#define MAXDEV 8
#define ERROR_UNKNOWN 999

struct mock_dev {
	int index;
	unsigned long util_calls;
	int lost;
	int idle;		/* its latest utilization read 0 (GTRACE_MOCK_NVML_IDLE) */
};

static struct mock_dev devs[MAXDEV];
static int inited;
static unsigned long util_calls_total;

static struct mock_dev *dev_of(nvmlabi_device_t d)
{
	return d.handle;
}

/* Whether GPU m has fallen off. */
static int lost(const struct mock_dev *m)
{
	return m->lost;
}

/* GTRACE_MOCK_NVML_LOST=D:K: GPU m falls off at its utilization call k = K. */
static void maybe_lose(struct mock_dev *m, unsigned long k)
{
	const char *e = getenv("GTRACE_MOCK_NVML_LOST");
	unsigned long K = 0;
	int d = -1;

	if (e && sscanf(e, "%d:%lu", &d, &K) == 2 && d == m->index && k >= K)
		m->lost = 1;
}

static int mig(const struct mock_dev *m)
{
	const char *e = getenv("GTRACE_MOCK_NVML_MIG");

	return e && *e && atoi(e) == m->index;
}

static unsigned int ngpus(void)
{
	const char *e = getenv("GTRACE_MOCK_NVML_GPUS");
	int n = e ? atoi(e) : 2;

	return n < 0 ? 0 : n > MAXDEV ? MAXDEV : (unsigned int)n;
}

API nvmlabi_return_t nvmlInit_v2(void)
{
	inited = 1;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlShutdown(void)
{
	inited = 0;
	return NVMLABI_SUCCESS;
}

API const char *nvmlErrorString(nvmlabi_return_t r)
{
	return r ? "mock error" : "success";
}

API nvmlabi_return_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!inited)
		return NVMLABI_ERROR_UNINITIALIZED;
	*n = ngpus();
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlabi_device_t *d)
{
	if (i >= ngpus())
		return 2;	/* NVML_ERROR_INVALID_ARGUMENT */
	devs[i].index = (int)i;
	d->handle = &devs[i];
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetName(nvmlabi_device_t d, char *name, unsigned int len)
{
	snprintf(name, len, dev_of(d)->index % 2 ? "Mock T4" : "Mock H200");
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetUUID(nvmlabi_device_t d, char *uuid, unsigned int len)
{
	snprintf(uuid, len, "GPU-mock-%d", dev_of(d)->index);
	return NVMLABI_SUCCESS;
}

/* GPU d's entry of the list in env: 0 none (the default), 1 a number in
 * *v, -1 "-" (the call fails), with a number after it in *v or 0. */
static int scripted(const char *env, int d, unsigned long *v)
{
	const char *p = getenv(env);
	int fails;

	for (int i = 0; p && i < d; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	*v = 0;
	if (!p || !*p || *p == ',')
		return 0;
	fails = *p == '-';
	*v = strtoul(p + fails, NULL, 0);
	return fails ? -1 : 1;
}

/* GPU m's SMs, whether or not nvmlDeviceGetAttributes_v2 says them */
static unsigned long sms_of(const struct mock_dev *m)
{
	unsigned long v;

	scripted("GTRACE_MOCK_NVML_SMS", m->index, &v);
	return v ? v : m->index % 2 ? 114 : 132;
}

API nvmlabi_return_t nvmlDeviceGetAttributes_v2(nvmlabi_device_t d, nvmlabi_device_attributes_t *a)
{
	const struct mock_dev *m = dev_of(d);
	unsigned long v;

	if (lost(m))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (scripted("GTRACE_MOCK_NVML_SMS", m->index, &v) < 0)
		return NVMLABI_ERROR_NOT_SUPPORTED;
	memset(a, 0, sizeof(*a));
	a->multiprocessor_count = (unsigned int)sms_of(m);
	a->shared_copy_engine_count = 4;
	a->memory_size_mb = 80 * 1024;
	return NVMLABI_SUCCESS;
}

/* GPU m's architecture, -1 when the call fails */
static long arch_of(const struct mock_dev *m)
{
	unsigned long v;
	int r = scripted("GTRACE_MOCK_NVML_ARCH", m->index, &v);

	return r < 0 ? -1 : r ? (long)v : NVMLABI_DEVICE_ARCH_HOPPER;
}

API nvmlabi_return_t nvmlDeviceGetArchitecture(nvmlabi_device_t d, nvmlabi_device_arch_t *arch)
{
	const struct mock_dev *m = dev_of(d);
	long a = arch_of(m);

	if (lost(m))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (a < 0)
		return NVMLABI_ERROR_NOT_SUPPORTED;
	*arch = (nvmlabi_device_arch_t)a;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetNumGpuCores(nvmlabi_device_t d, unsigned int *cores)
{
	const struct mock_dev *m = dev_of(d);
	long a = arch_of(m);
	unsigned long v;
	int r = scripted("GTRACE_MOCK_NVML_CORES", m->index, &v);

	if (lost(m))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (r < 0)
		return NVMLABI_ERROR_NOT_SUPPORTED;
	if (!r)
		v = sms_of(m) * (a >= NVMLABI_DEVICE_ARCH_PASCAL && a <= NVMLABI_DEVICE_ARCH_AMPERE ? 64 : 128);
	*cores = (unsigned int)v;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetUtilizationRates(nvmlabi_device_t d, nvmlabi_utilization_t *u)
{
	const char *fail = getenv("GTRACE_MOCK_NVML_FAIL_AFTER");
	struct mock_dev *m = dev_of(d);
	unsigned long k;

	if (mig(m))
		return NVMLABI_ERROR_NOT_SUPPORTED;
	k = m->util_calls++;
	maybe_lose(m, k);
	if (lost(m))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (fail && util_calls_total++ >= strtoul(fail, NULL, 10))
		return ERROR_UNKNOWN;
	u->gpu = 10 * (unsigned int)(k % 4 + 1) + (unsigned int)m->index;
	u->memory = 25;
	m->idle = getenv("GTRACE_MOCK_NVML_IDLE") && k % 2;
	if (m->idle)
		u->gpu = u->memory = 0;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetMemoryInfo(nvmlabi_device_t d, nvmlabi_memory_t *mem)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	mem->total = 80ull << 30;
	mem->used = (unsigned long long)(dev_of(d)->index + 1) << 30;
	mem->free = mem->total - mem->used;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetClockInfo(nvmlabi_device_t d, int type, unsigned int *mhz)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	(void)d;
	if (type == NVMLABI_CLOCK_SM)
		*mhz = 1980;
	else if (type == NVMLABI_CLOCK_MEM)
		*mhz = 2619;
	else
		return NVMLABI_ERROR_NOT_SUPPORTED;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetPowerUsage(nvmlabi_device_t d, unsigned int *mw)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	(void)d;
	*mw = 350123;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetTemperature(nvmlabi_device_t d, int sensor, unsigned int *c)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (sensor != NVMLABI_TEMPERATURE_GPU)
		return NVMLABI_ERROR_NOT_SUPPORTED;
	*c = 45 + (unsigned int)dev_of(d)->index;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetCurrentClocksEventReasons(nvmlabi_device_t d, unsigned long long *r)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	(void)d;
	*r = 0x4;
	return NVMLABI_SUCCESS;
}

/* GPM: a sample is a counter of which call took it; the metrics are fixed */
struct nvmlGpmSample_st {
	int taken;
	int idle;		/* taken while its GPU was idle */
};

API nvmlabi_return_t nvmlGpmQueryDeviceSupport(nvmlabi_device_t d, nvmlabi_gpm_support_t *s)
{
	if (s->version != NVMLABI_GPM_SUPPORT_VERSION)
		return 25;	/* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
	s->is_supported = dev_of(d)->index % 2 == 0;
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlGpmSampleAlloc(nvmlabi_gpm_sample_t *s)
{
	s->handle = calloc(1, sizeof(struct nvmlGpmSample_st));
	return s->handle ? NVMLABI_SUCCESS : 4;	/* NVML_ERROR_NO_MEMORY... */
}

API nvmlabi_return_t nvmlGpmSampleFree(nvmlabi_gpm_sample_t s)
{
	free(s.handle);
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlGpmSampleGet(nvmlabi_device_t d, nvmlabi_gpm_sample_t s)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (dev_of(d)->index % 2 || mig(dev_of(d)))
		return NVMLABI_ERROR_NOT_SUPPORTED;
	((struct nvmlGpmSample_st *)s.handle)->taken = 1;
	((struct nvmlGpmSample_st *)s.handle)->idle = dev_of(d)->idle;
	return NVMLABI_SUCCESS;
}

static double gpm_value(unsigned int id, int *ok)
{
	*ok = 1;
	switch (id) {
	case NVMLABI_GPM_SM_UTIL: return 50.5;
	case NVMLABI_GPM_SM_OCCUPANCY: return 25.25;
	case NVMLABI_GPM_ANY_TENSOR_UTIL: return 87.125;
	case NVMLABI_GPM_FP16_UTIL: return 1.5;
	case NVMLABI_GPM_FP32_UTIL: return 2.5;
	case NVMLABI_GPM_FP64_UTIL: return 3.5;
	case NVMLABI_GPM_INTEGER_UTIL: return 4.5;
	case NVMLABI_GPM_DRAM_BW_UTIL: return 15.75;
	case NVMLABI_GPM_PCIE_TX_PER_SEC: return 100.5;
	case NVMLABI_GPM_PCIE_RX_PER_SEC: return 200.25;
	case NVMLABI_GPM_NVLINK_TOTAL_TX_PER_SEC: return 300;
	case NVMLABI_GPM_NVLINK_TOTAL_RX_PER_SEC: return 400;
	}
	*ok = 0;
	return 0;
}

API nvmlabi_return_t nvmlGpmMetricsGet(nvmlabi_gpm_metrics_get_t *m)
{
	unsigned int i;
	int ok;

	if (m->version != NVMLABI_GPM_METRICS_GET_VERSION || m->num_metrics > NVMLABI_GPM_METRIC_MAX)
		return 25;
	if (!m->sample1.handle || !m->sample2.handle ||
	    !((struct nvmlGpmSample_st *)m->sample1.handle)->taken ||
	    !((struct nvmlGpmSample_st *)m->sample2.handle)->taken || m->sample1.handle == m->sample2.handle)
		return 2;
	for (i = 0; i < m->num_metrics; i++) {
		unsigned int id = m->metrics[i].metric_id;

		m->metrics[i].value = gpm_value(id, &ok);
		/* the activity of an interval that ends idle */
		if (((struct nvmlGpmSample_st *)m->sample2.handle)->idle &&
		    (id == NVMLABI_GPM_SM_UTIL || id == NVMLABI_GPM_SM_OCCUPANCY ||
		     id == NVMLABI_GPM_ANY_TENSOR_UTIL || id == NVMLABI_GPM_FP16_UTIL ||
		     id == NVMLABI_GPM_FP32_UTIL || id == NVMLABI_GPM_FP64_UTIL ||
		     id == NVMLABI_GPM_INTEGER_UTIL || id == NVMLABI_GPM_DRAM_BW_UTIL))
			m->metrics[i].value = 0;
		m->metrics[i].ret = ok ? NVMLABI_SUCCESS : NVMLABI_ERROR_NOT_SUPPORTED;
	}
	return NVMLABI_SUCCESS;
}

API nvmlabi_return_t nvmlDeviceGetMigMode(nvmlabi_device_t d, unsigned int *current, unsigned int *pending)
{
	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	*current = *pending = mig(dev_of(d)) ? NVMLABI_DEVICE_MIG_ENABLE : NVMLABI_DEVICE_MIG_DISABLE;
	return NVMLABI_SUCCESS;
}

/* The processes of GTRACE_MOCK_NVML_PROCS on GPU d, as NVML hands them
 * over: *count in is the room, out the number listed (or needed). */
API nvmlabi_return_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlabi_device_t d, unsigned int *count,
							    nvmlabi_process_info_t *infos)
{
	const char *path = getenv("GTRACE_MOCK_NVML_PROCS"), *delay = getenv("GTRACE_MOCK_NVML_PROCS_DELAY_MS");
	nvmlabi_process_info_t all[256];
	unsigned int n = 0, i;
	char line[128], bytes[32];
	FILE *f;

	if (lost(dev_of(d)))
		return NVMLABI_ERROR_GPU_IS_LOST;
	if (delay && atol(delay) > 0) {
		struct timespec t = { .tv_sec = atol(delay) / 1000, .tv_nsec = atol(delay) % 1000 * 1000000 };

		nanosleep(&t, NULL);
	}
	f = path ? fopen(path, "re") : NULL;
	while (f && n < 256 && fgets(line, sizeof(line), f)) {
		int dev;
		unsigned int pid;

		if (sscanf(line, "%d %u %31s", &dev, &pid, bytes) != 3 || dev != dev_of(d)->index)
			continue;
		all[n] = (nvmlabi_process_info_t){ .pid = pid, .gpu_instance_id = 0xFFFFFFFFu,
						   .compute_instance_id = 0xFFFFFFFFu,
						   .used_gpu_memory = strcmp(bytes, "-") ?
							strtoull(bytes, NULL, 10) : NVMLABI_VALUE_NOT_AVAILABLE };
		n++;
	}
	if (f)
		fclose(f);
	if (*count < n) {
		*count = n;
		return NVMLABI_ERROR_INSUFFICIENT_SIZE;
	}
	for (i = 0; i < n; i++)
		infos[i] = all[i];
	*count = n;
	return NVMLABI_SUCCESS;
}
