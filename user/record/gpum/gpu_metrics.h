/* SPDX-License-Identifier: MIT */
/*
 * --gpu-metrics: a sampler thread that reads NVML (loaded with dlopen, no
 * build-time dependency) at a fixed rate, and a second one that lists each
 * GPU's processes and their memory once a second; both queue
 * GT_REC_GPU_METRIC records, the recording loop drains the queue into the
 * trace, so that the writer is only ever touched from the loop.
 */
#ifndef GTRACE_GPU_METRICS_H
#define GTRACE_GPU_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"

#define GPU_METRICS_HZ_DEFAULT	10
#define GPU_METRICS_HZ_MAX	1000
/* GPM metrics come from sample pairs at least this far apart (NVML asks
 * for more than 100 ms between them; a little jitter is allowed): at rates
 * above 10 Hz they come at about 10 Hz, the basic metrics at the rate. */
#define GPU_METRICS_GPM_MIN_NS	95000000ull

struct gpu_metrics_opts {
	unsigned int hz;		/* samples per second, 1 .. GPU_METRICS_HZ_MAX */
	const char *lib;		/* the NVML library, NULL = $GTRACE_NVML_LIB (tests'
					 * override), else libnvidia-ml.so.1 */
	size_t queue_cap;		/* records the queue holds, 0 = a default */
	uint64_t procs_ns;		/* the processes' memory this often, 0 = once a second
					 * (tests ask for less) */
	char *why;			/* when there are no metrics: why, written here (why_len
					 * bytes) instead of the info line; NULL = the line */
	size_t why_len;
};

/* What the sampler did, for the summary, status and tests. */
struct gpu_metrics_stats {
	unsigned int hz;		/* the rate */
	uint32_t gpus;			/* GPUs read */
	uint32_t mig;			/* of which in MIG mode at the start */
	uint64_t samples;		/* sampling rounds */
	uint64_t missed;		/* rounds not taken: their time passed while the sampler was
					 * late (a stalled machine); counted, never made up */
	uint64_t records;		/* records queued */
	uint64_t proc_samples;		/* of which per-process memory (and the 0 of one gone) */
	uint64_t errors;		/* queries that failed after the probe said they work */
	uint64_t dropped;		/* records the full queue had no room for */
	uint32_t lost;			/* GPUs that fell off (NVML_ERROR_GPU_IS_LOST), no longer read */
	uint64_t cpu_ns;		/* CPU time of the sampler's threads (measured) */
	uint64_t wall_ns;		/* since sampling started */
};

struct gpu_metrics;

/* "off" -> 0; an integer 1 .. GPU_METRICS_HZ_MAX (optionally followed by
 * "Hz") -> it; NULL (--gpu-metrics alone) -> GPU_METRICS_HZ_DEFAULT.
 * Returns 0, or -EINVAL for anything else (0, above the maximum, not a
 * number). */
int gpu_metrics__parse_rate(const char *arg, unsigned int *hz);

/* Loads NVML, initialises it and probes every GPU once for the metrics it
 * gives. Returns 0 with *out set, or 0 with *out NULL after one info line
 * when there is no NVML or no GPU (recording goes on without metrics), or
 * a negative errno (no memory). */
int gpu_metrics__open(const struct gpu_metrics_opts *o, struct gpu_metrics **out);
/* The header's keys: "gpu_metrics=HZ gpu_metrics_devs=N gpu_metrics_devI=MASK
 * [gpu_metrics_devI_mig=1] [gpu_metrics_devI_sms=SMS
 * gpu_metrics_devI_sms_from=attributes|cores] ..." (MASK: bit id of enum
 * gt_gpu_metric_id, hex; SMS when NVML gave the GPU's SM count, with how),
 * NUL-terminated in buf; returns the length written (the keys up to the
 * first that does not fit whole; an SM count and its source go together). */
size_t gpu_metrics__options(const struct gpu_metrics *g, char *buf, size_t len);
/* A GPU's SMs from NVML's count of its CUDA cores (nvmlDeviceGetNumGpuCores)
 * and its architecture (an NVMLABI_DEVICE_ARCH_*): cores over the FP32 cores
 * per SM where the architecture has one figure (Volta, Turing 64; Ada,
 * Hopper, Blackwell 128) and it divides them exactly; else 0 (not known). */
uint32_t gpu_metrics__sms_from_cores(unsigned int arch, unsigned int cores);
/* Starts sampling. Returns 0 or a negative errno. */
int gpu_metrics__start(struct gpu_metrics *g);
/* Hands the queued records to emit, oldest first, from the caller's
 * thread; stops at emit's first error and returns it, else 0. */
int gpu_metrics__drain(struct gpu_metrics *g, int (*emit)(void *ctx, const struct gt_hdr *h), void *ctx);
/* Stops the threads (records queued stay to be drained). */
void gpu_metrics__stop(struct gpu_metrics *g);
/* The CPU time the sampler's threads have used so far (each thread's
 * CLOCK_THREAD_CPUTIME_ID, read after its every round): the recorder's own
 * cost, not the traced programs'. */
uint64_t gpu_metrics__cpu_ns(const struct gpu_metrics *g);
void gpu_metrics__stats(const struct gpu_metrics *g, struct gpu_metrics_stats *s);
/* Stops, shuts NVML down and frees g (NULL is fine). */
void gpu_metrics__free(struct gpu_metrics *g);

/* A bounded FIFO of metric records, safe between producer threads and a
 * consumer (a mutex; records are copied in and out). Exposed for tests. */
struct gpum_queue;
struct gpum_queue *gpum_queue__new(size_t cap);
/* Appends n records; those without room are dropped and counted. Returns
 * how many were kept. */
size_t gpum_queue__push(struct gpum_queue *q, const struct gt_gpu_metric *recs, size_t n);
/* Copies up to max records out, oldest first; returns how many. */
size_t gpum_queue__pop(struct gpum_queue *q, struct gt_gpu_metric *out, size_t max);
uint64_t gpum_queue__dropped(const struct gpum_queue *q);
void gpum_queue__free(struct gpum_queue *q);

/* A metric value in micro-units (struct gt_gpu_metric.value_micro),
 * rounded to the nearest and clamped to the int64 range. */
int64_t gpu_metrics__micro(double v);

#endif
