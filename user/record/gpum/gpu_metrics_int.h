/* SPDX-License-Identifier: MIT */
/*
 * Internal to --gpu-metrics (gpu_metrics.h): the state its files share.
 * gpu_metrics.c opens the sampler, runs its threads and drains their
 * records; gpu_metrics_nvml.c loads NVML, probes every GPU and reads one
 * device's round.
 */
#ifndef GTRACE_GPU_METRICS_INT_H
#define GTRACE_GPU_METRICS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "record/gpum/gpu_metrics.h"
#include "record/gpum/nvml_abi.h"

#define MAX_PER_SAMPLE	64	/* records one device gives per round, at most */

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
	uint64_t missed;		/* rounds whose time passed while the sampler was late */
	uint64_t cpu_ns[2];		/* CPU time of the sampler and of the procs thread */
	uint32_t lost;
};

/* gpu_metrics_nvml.c */

/* Why there are no metrics: into o->why, or the info line. */
__attribute__((format(printf, 2, 3)))
void gpum__no_metrics(const struct gpu_metrics_opts *o, const char *fmt, ...);
/* Loads the library and the functions; the GPM ones may be missing (an
 * older driver). Returns 0, or -ENOENT after saying why at info level. */
int nvml__load(struct nvml *n, const char *lib, const struct gpu_metrics_opts *o);
/* One round of device d's metrics into out (at most MAX_PER_SAMPLE);
 * want = the metrics to read (the probe reads all and keeps what worked).
 * Returns how many records; *ok = the mask of those read, *lost set when
 * NVML says the GPU fell off. */
size_t gpum__read_dev(struct gpu_metrics *g, struct gpum_dev *d, uint64_t ts, uint32_t want,
		      struct gt_gpu_metric *out, uint32_t *ok, uint64_t *failed, bool *lost);
/* The GPM samples freed, NVML shut down and unloaded (when it is loaded). */
void nvml__close(struct gpu_metrics *g);
/* Every GPU, once: which metrics it gives (each query tried), whether it
 * is in MIG mode, its SMs. A metric that fails later is counted. */
void gpum__probe(struct gpu_metrics *g);

#endif
