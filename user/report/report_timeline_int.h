/* SPDX-License-Identifier: MIT */
/*
 * Internal to the timeline of `gtrace-bpf report` (report_timeline.h): the
 * state its files share.  report_timeline.c gathers it (lanes, their bins,
 * the events kept exactly under the budget, the GPU kernels);
 * report_timeline_json.c writes it as the page's JSON.
 */
#ifndef GTRACE_REPORT_TIMELINE_INT_H
#define GTRACE_REPORT_TIMELINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "report/report_timeline.h"
#include "format/api.h"
#include "lib/hmap.h"

/* LK_NCCL: a thread's NCCL calls (a rank's collectives: the rank x time view) */
enum lane_kind { LK_CALLS, LK_OFFCPU, LK_NVTX, LK_GPU, LK_COUNTER, LK_NCCL };


/* A GPU metric's samples, or the means of runs of them once there were
 * too many to keep. */
struct sample {
	uint64_t ts;		/* the first sample's */
	double v;		/* the mean value, in the metric's unit */
	uint64_t n;		/* samples it stands for */
};

#define MAX_SAMPLES 8192	/* kept a counter lane: beyond, pairs become their mean */

struct lane {
	uint8_t kind;			/* enum lane_kind */
	uint32_t pid, tid;		/* tid: thread lanes */
	uint32_t device, context, stream;	/* GPU lanes: CUPTI's ids */
	uint64_t events;		/* events counted into the bins */
	uint64_t omitted;		/* of which not kept exactly */
	uint64_t *busy;			/* TL_BINS: ns of events inside each bin */
	uint32_t *count;		/* TL_BINS: events that start in each bin */
	struct sample *smp;		/* counter lanes (device, stream = the metric id) */
	size_t nsmp, smp_cap;
};

#define EV_OPEN 1u	/* a call without an exit: it lasts to the end of the trace */
#define EV_CAUSALITY 2u	/* a GPU record that started before its call */

struct ev {
	uint64_t ts, dur;	/* start (absolute ns), length */
	uint64_t aux;		/* calls: kernel name + 1 (launches) or bytes (copies, sets);
				 * offcpu: state; gpu: bytes (copies, sets) */
	uint64_t link_ts;	/* gpu, linked: its call's entry */
	uint32_t lane;		/* index in lanes */
	uint32_t name;		/* index in strs */
	uint32_t link_lane;	/* gpu, linked: the calls lane of its thread, else UINT32_MAX */
	uint32_t flags;		/* EV_* */
};

struct ival {
	uint64_t s, e;		/* a kernel's start and end */
};

struct gpu_dev {
	uint32_t device;	/* CUPTI device id */
	struct ival *iv;	/* its kernels */
	size_t n, cap;
};

struct trig {
	uint64_t ts, wait_ns;
	uint32_t pid, tid, kind;
	int32_t code;
	uint16_t api;
};

#define MAX_TRIGGERS 100000	/* triggers drawn; one per snapshot, so far more than seen */
#define MAX_DEVICES 64
/* Duration buckets, log-linear: 0 to 7 ns one each, then 8 a power of two
 * (each 1/8 of it wide, so that the threshold falls within 12 % of where
 * the budget puts it), and last the calls still open. */
#define HIST_BUCKETS 497
#define OPEN_BUCKET 496

struct report_timeline {
	struct gt_decoder *d;
	uint64_t origin;	/* time 0, ns */
	uint64_t bin_ns;	/* width of a bin, doubled while the trace grows */
	uint64_t end;		/* latest end seen, then the trace's end */
	size_t budget;
	struct lane *lanes;
	size_t nlanes, lanes_cap;
	struct hmap lane_idx;	/* lane key -> index + 1 */
	struct ev *ev;		/* kept events */
	size_t nev, ev_cap;
	uint64_t hist[HIST_BUCKETS];	/* kept events by duration bucket */
	unsigned thr;		/* events of a bucket below this are not kept */
	uint64_t events, gpu_records;
	char **strs;		/* names, interned */
	size_t nstrs, strs_cap;
	struct hmap str_idx;	/* (hash, length) -> index + 1 */
	struct hmap ptr_idx;	/* (address of a decoder string, 0) -> index + 1 */
	struct gpu_dev dev[MAX_DEVICES];
	size_t ndev;
	int8_t api_type[GT_API__COUNT];	/* enum gt_call_type of the apis called, -1 none */
	struct trig *trig;
	size_t ntrig, trig_cap;
	uint64_t triggers_left_out;
};

static inline uint64_t rel(const struct report_timeline *tl, uint64_t ts)
{
	return ts > tl->origin ? ts - tl->origin : 0;
}

/* The shortest duration of bucket b. */
static inline uint64_t bucket_floor(unsigned b)
{
	if (b < 8)
		return b;
	return (uint64_t)(8 + (b - 8) % 8) << ((b - 8) / 8);
}

#endif
