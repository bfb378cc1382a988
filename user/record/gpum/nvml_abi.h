/* SPDX-License-Identifier: MIT */
/*
 * The part of NVIDIA's NVML ABI the GPU-metrics sampler calls, declared here
 * because nvml.h is not installed on the build machines and the library is
 * loaded with dlopen (no build-time dependency). Names, signatures, struct
 * layouts and enum values follow the published NVML API version 13
 * (NVML_API_VERSION 13: driver 580, CUDA 13); these are the ABI facts, the
 * declarations are ours and cover only what gpu_metrics.c uses.
 *
 * Types are prefixed nvmlabi_ so that they never clash with a real nvml.h
 * included elsewhere; function types are pointer typedefs for dlsym.
 */
#ifndef GTRACE_NVML_ABI_H
#define GTRACE_NVML_ABI_H

/* nvmlReturn_t: 0 on success, an NVML_ERROR_* otherwise (an int-sized enum). */
typedef int nvmlabi_return_t;
#define NVMLABI_SUCCESS			0
#define NVMLABI_ERROR_UNINITIALIZED	1
#define NVMLABI_ERROR_NOT_SUPPORTED	3
#define NVMLABI_ERROR_INSUFFICIENT_SIZE	7	/* a buffer too small: the count needed is returned */
#define NVMLABI_ERROR_GPU_IS_LOST	15

/* NVML_VALUE_NOT_AVAILABLE: (-1) in an unsigned long long field */
#define NVMLABI_VALUE_NOT_AVAILABLE	(~0ull)

/* nvmlDeviceGetMigMode's modes (NVML_DEVICE_MIG_DISABLE, _ENABLE) */
#define NVMLABI_DEVICE_MIG_DISABLE	0
#define NVMLABI_DEVICE_MIG_ENABLE	1

/* nvmlDeviceArchitecture_t (an unsigned int): NVML_DEVICE_ARCH_*, values as
 * in nvml.h of NVML 13.3.29 (API version 13; 13.0.39, driver 580's, has the
 * same up to Blackwell): Blackwell 10 since NVML 12.6, Rubin 13 since 13.x;
 * 11 was Orin (T23X) in 12.5-12.x headers. */
typedef unsigned int nvmlabi_device_arch_t;
#define NVMLABI_DEVICE_ARCH_KEPLER	2
#define NVMLABI_DEVICE_ARCH_MAXWELL	3
#define NVMLABI_DEVICE_ARCH_PASCAL	4
#define NVMLABI_DEVICE_ARCH_VOLTA	5
#define NVMLABI_DEVICE_ARCH_TURING	6
#define NVMLABI_DEVICE_ARCH_AMPERE	7
#define NVMLABI_DEVICE_ARCH_ADA		8
#define NVMLABI_DEVICE_ARCH_HOPPER	9
#define NVMLABI_DEVICE_ARCH_BLACKWELL	10
#define NVMLABI_DEVICE_ARCH_RUBIN	13
#define NVMLABI_DEVICE_ARCH_UNKNOWN	0xffffffffu

/* nvmlDevice_t: an opaque handle, a struct holding one pointer. */
typedef struct {
	void *handle;
} nvmlabi_device_t;

/* nvmlUtilization_t: percent of the last sample period. */
typedef struct {
	unsigned int gpu;	/* a kernel was executing */
	unsigned int memory;	/* device memory was being read or written */
} nvmlabi_utilization_t;

/* nvmlMemory_t (version 1, what nvmlDeviceGetMemoryInfo fills): bytes. */
typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlabi_memory_t;

/* nvmlClockType_t */
#define NVMLABI_CLOCK_SM		1
#define NVMLABI_CLOCK_MEM		2
/* nvmlTemperatureSensors_t */
#define NVMLABI_TEMPERATURE_GPU		0

/* Buffer sizes NVML asks for (NVML_DEVICE_NAME_V2_BUFFER_SIZE,
 * NVML_DEVICE_UUID_V2_BUFFER_SIZE). */
#define NVMLABI_NAME_SIZE		96
#define NVMLABI_UUID_SIZE		96

/* nvmlGpmMetricId_t: the ids of the GPM metrics sampled. Percentages are
 * 0.0 - 100.0; PCIe and NVLink rates are MiB/s. */
#define NVMLABI_GPM_SM_UTIL		2	/* SMs busy */
#define NVMLABI_GPM_SM_OCCUPANCY	3	/* warps active vs the theoretical maximum */
#define NVMLABI_GPM_INTEGER_UTIL	4	/* SMs doing integer operations */
#define NVMLABI_GPM_ANY_TENSOR_UTIL	5	/* SMs doing any tensor operations */
#define NVMLABI_GPM_DRAM_BW_UTIL	10	/* DRAM bandwidth used vs the theoretical maximum */
#define NVMLABI_GPM_FP64_UTIL		11	/* non-tensor FP64 */
#define NVMLABI_GPM_FP32_UTIL		12	/* non-tensor FP32 */
#define NVMLABI_GPM_FP16_UTIL		13	/* non-tensor FP16 */
#define NVMLABI_GPM_PCIE_TX_PER_SEC	20	/* from this GPU, MiB/s */
#define NVMLABI_GPM_PCIE_RX_PER_SEC	21	/* to this GPU, MiB/s */
#define NVMLABI_GPM_NVLINK_TOTAL_RX_PER_SEC 60	/* every link, MiB/s */
#define NVMLABI_GPM_NVLINK_TOTAL_TX_PER_SEC 61
#define NVMLABI_GPM_METRIC_MAX		333	/* NVML_GPM_METRIC_MAX of version 13: the
						 * size of nvmlGpmMetricsGet_t.metrics */

/* nvmlGpmSample_t: an opaque handle from nvmlGpmSampleAlloc. */
typedef struct {
	void *handle;
} nvmlabi_gpm_sample_t;

/* nvmlGpmMetric_t (40 bytes on LP64). */
typedef struct {
	unsigned int metric_id;		/* IN: an NVMLABI_GPM_* id */
	nvmlabi_return_t ret;		/* OUT: nonzero = value not valid */
	double value;			/* OUT */
	struct {
		char *short_name, *long_name, *unit;	/* OUT, may be NULL */
	} info;
} nvmlabi_gpm_metric_t;

/* nvmlGpmMetricsGet_t: the metrics between two samples. NVML reads only
 * metrics[0 .. num_metrics - 1]. */
#define NVMLABI_GPM_METRICS_GET_VERSION	1
typedef struct {
	unsigned int version;		/* IN: NVMLABI_GPM_METRICS_GET_VERSION */
	unsigned int num_metrics;	/* IN */
	nvmlabi_gpm_sample_t sample1;	/* IN: the earlier sample */
	nvmlabi_gpm_sample_t sample2;	/* IN: the later one */
	nvmlabi_gpm_metric_t metrics[NVMLABI_GPM_METRIC_MAX];
} nvmlabi_gpm_metrics_get_t;

/* nvmlGpmSupport_t */
#define NVMLABI_GPM_SUPPORT_VERSION	1
typedef struct {
	unsigned int version;		/* IN: NVMLABI_GPM_SUPPORT_VERSION */
	unsigned int is_supported;	/* OUT */
} nvmlabi_gpm_support_t;

/* nvmlProcessInfo_t (what nvmlDeviceGetComputeRunningProcesses_v3 fills;
 * _v2's nvmlProcessInfo_v2_t has the same layout): 24 bytes on LP64. */
typedef struct {
	unsigned int pid;			/* as the driver sees it: the host's pid namespace */
	unsigned long long used_gpu_memory;	/* bytes, NVMLABI_VALUE_NOT_AVAILABLE when unknown */
	unsigned int gpu_instance_id;		/* MIG: the GPU instance, else 0xFFFFFFFF */
	unsigned int compute_instance_id;	/* MIG: the compute instance, else 0xFFFFFFFF */
} nvmlabi_process_info_t;

/* nvmlDeviceAttributes_t, what nvmlDeviceGetAttributes_v2 fills (the v1
 * call of NVML before 11.1 had no last three fields; nvml.h maps
 * nvmlDeviceGetAttributes to _v2): 40 bytes on LP64, unchanged in 13. */
typedef struct {
	unsigned int multiprocessor_count;	/* SMs (of the instance, for a MIG device) */
	unsigned int shared_copy_engine_count;
	unsigned int shared_decoder_count;
	unsigned int shared_encoder_count;
	unsigned int shared_jpeg_count;
	unsigned int shared_ofa_count;
	unsigned int gpu_instance_slice_count;
	unsigned int compute_instance_slice_count;
	unsigned long long memory_size_mb;	/* MiB */
} nvmlabi_device_attributes_t;

_Static_assert(sizeof(nvmlabi_process_info_t) == 24, "nvmlProcessInfo_t size");
_Static_assert(sizeof(nvmlabi_device_attributes_t) == 40, "nvmlDeviceAttributes_t size");
_Static_assert(sizeof(nvmlabi_gpm_metric_t) == 40, "nvmlGpmMetric_t size");
_Static_assert(sizeof(nvmlabi_memory_t) == 24, "nvmlMemory_t size");

/* The functions, as dlsym gives them. */
typedef nvmlabi_return_t (*nvmlabi_init_v2_fn)(void);
typedef nvmlabi_return_t (*nvmlabi_shutdown_fn)(void);
typedef const char *(*nvmlabi_error_string_fn)(nvmlabi_return_t result);
typedef nvmlabi_return_t (*nvmlabi_device_get_count_v2_fn)(unsigned int *count);
typedef nvmlabi_return_t (*nvmlabi_device_get_handle_by_index_v2_fn)(unsigned int index,
								     nvmlabi_device_t *device);
typedef nvmlabi_return_t (*nvmlabi_device_get_name_fn)(nvmlabi_device_t device, char *name,
						       unsigned int length);
typedef nvmlabi_return_t (*nvmlabi_device_get_uuid_fn)(nvmlabi_device_t device, char *uuid,
						       unsigned int length);
typedef nvmlabi_return_t (*nvmlabi_device_get_utilization_rates_fn)(nvmlabi_device_t device,
								    nvmlabi_utilization_t *u);
typedef nvmlabi_return_t (*nvmlabi_device_get_memory_info_fn)(nvmlabi_device_t device,
							      nvmlabi_memory_t *m);
typedef nvmlabi_return_t (*nvmlabi_device_get_clock_info_fn)(nvmlabi_device_t device,
							     int type, unsigned int *mhz);
/* milliwatts */
typedef nvmlabi_return_t (*nvmlabi_device_get_power_usage_fn)(nvmlabi_device_t device,
							      unsigned int *mw);
/* degrees C (deprecated in 13.0 for nvmlDeviceGetTemperatureV, still exported) */
typedef nvmlabi_return_t (*nvmlabi_device_get_temperature_fn)(nvmlabi_device_t device,
							      int sensor, unsigned int *c);
/* nvmlDeviceGetCurrentClocksEventReasons (the ...ThrottleReasons name of
 * older versions has the same signature): a bit mask of nvmlClocksEvent* */
typedef nvmlabi_return_t (*nvmlabi_device_get_clocks_event_reasons_fn)(nvmlabi_device_t device,
								       unsigned long long *reasons);
/* nvmlDeviceGetComputeRunningProcesses_v3 (and _v2): in, the room of infos;
 * out, the processes listed (INSUFFICIENT_SIZE: the count needed) */
typedef nvmlabi_return_t (*nvmlabi_device_get_compute_processes_fn)(nvmlabi_device_t device,
								    unsigned int *count,
								    nvmlabi_process_info_t *infos);
/* nvmlDeviceGetAttributes_v2: the SM and engine counts. Older drivers
 * answer it for MIG device handles only (NOT_SUPPORTED for a whole GPU). */
typedef nvmlabi_return_t (*nvmlabi_device_get_attributes_fn)(nvmlabi_device_t device,
							     nvmlabi_device_attributes_t *a);
/* nvmlDeviceGetNumGpuCores: the whole GPU's CUDA cores (NOT_SUPPORTED for a
 * MIG device; exported since driver R495) */
typedef nvmlabi_return_t (*nvmlabi_device_get_num_gpu_cores_fn)(nvmlabi_device_t device,
								 unsigned int *cores);
/* nvmlDeviceGetArchitecture: an NVMLABI_DEVICE_ARCH_* */
typedef nvmlabi_return_t (*nvmlabi_device_get_architecture_fn)(nvmlabi_device_t device,
								nvmlabi_device_arch_t *arch);
/* current and pending MIG mode (NVMLABI_DEVICE_MIG_*) */
typedef nvmlabi_return_t (*nvmlabi_device_get_mig_mode_fn)(nvmlabi_device_t device, unsigned int *current,
							   unsigned int *pending);
typedef nvmlabi_return_t (*nvmlabi_gpm_query_device_support_fn)(nvmlabi_device_t device,
								nvmlabi_gpm_support_t *s);
typedef nvmlabi_return_t (*nvmlabi_gpm_sample_alloc_fn)(nvmlabi_gpm_sample_t *s);
typedef nvmlabi_return_t (*nvmlabi_gpm_sample_free_fn)(nvmlabi_gpm_sample_t s);
typedef nvmlabi_return_t (*nvmlabi_gpm_sample_get_fn)(nvmlabi_device_t device, nvmlabi_gpm_sample_t s);
typedef nvmlabi_return_t (*nvmlabi_gpm_metrics_get_fn)(nvmlabi_gpm_metrics_get_t *m);

#endif
