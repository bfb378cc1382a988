// SPDX-License-Identifier: MIT
/*
 * The recorder's side of --gpu-metrics: the sampler (gpu_metrics.c) opened
 * before the header, started with the loop, drained into the trace from
 * the loop only, stopped and summarised at the end.
 */
#include <errno.h>
#include <string.h>
#include "lib/log.h"
#include "record/gpum/gpu_metrics.h"
#include "record/recorder.h"

int recorder__gpum_open(struct recorder *r, char *opts, size_t len)
{
	/* why there are none is said once the output exists: a recording
	 * that cannot create its file says that alone */
	struct gpu_metrics_opts go = { .hz = r->o->gpu_metrics_hz, .why = r->gpum_why,
				       .why_len = sizeof(r->gpum_why) };
	size_t n;
	int err;

	if (!go.hz)
		return 0;
	err = gpu_metrics__open(&go, &r->gpum);
	if (err || !r->gpum)
		return err;
	n = strlen(opts);
	if (n + 1 < len) {
		opts[n] = ' ';
		gpu_metrics__options(r->gpum, opts + n + 1, len - n - 1);
	}
	return 0;
}

int recorder__gpum_start(struct recorder *r)
{
	if (r->gpum_why[0])
		pr_info("%s", r->gpum_why);
	return r->gpum ? gpu_metrics__start(r->gpum) : 0;
}

static int emit(void *ctx, const struct gt_hdr *h)
{
	return recorder__write(ctx, h);
}

void recorder__gpum_drain(struct recorder *r)
{
	if (r->gpum && !r->write_err)
		gpu_metrics__drain(r->gpum, emit, r);
}

void recorder__gpum_finish(struct recorder *r)
{
	struct gpu_metrics_stats s;

	if (!r->gpum)
		return;
	gpu_metrics__stop(r->gpum);
	recorder__gpum_drain(r);
	gpu_metrics__stats(r->gpum, &s);
	pr_info("GPU metrics: %llu samples, %llu missed (the sampler late), %llu records (%llu of process memory), "
		"%llu read errors, %llu dropped, %u GPU%s lost mid-run, %u in MIG mode; the sampler's threads used "
		"%.1f ms of CPU in %.1f s (%.3f%% of one CPU, measured: the recorder's own cost)",
		(unsigned long long)s.samples, (unsigned long long)s.missed, (unsigned long long)s.records,
		(unsigned long long)s.proc_samples, (unsigned long long)s.errors,
		(unsigned long long)s.dropped, s.lost, s.lost == 1 ? "" : "s", s.mig, s.cpu_ns / 1e6,
		s.wall_ns / 1e9, s.wall_ns ? 100.0 * (double)s.cpu_ns / (double)s.wall_ns : 0.0);
}
