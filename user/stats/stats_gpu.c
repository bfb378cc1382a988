// SPDX-License-Identifier: MIT
/*
 * The reports of `gtrace-bpf stats` on the GPU side of a merged trace (the
 * CUPTI agent's records): cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum and gpu_launch_latency; stats.c runs
 * them and documents their columns with the others'.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"

/* ---- reports of the GPU side (merged traces) ---------------------------- */

/* The eight columns of a GPU duration report: TIME_COLS with the count
 * named as nsys names it there. */
#define GPU_TIME_COLS(count, count_key)						\
	{ "Time (%)", "time_pct", SK_PCT },					\
	{ "Total Time", "total_time", SK_TIME },				\
	{ count, count_key, SK_INT },						\
	{ "Avg", "avg", SK_TIMEF },						\
	{ "Med", "med", SK_TIMEF },						\
	{ "Min", "min", SK_TIME },						\
	{ "Max", "max", SK_TIME },						\
	{ "StdDev", "stddev", SK_TIMEF },

/* A row of a GPU duration report: Time (%) of whole, the time columns, the
 * count and the name in the ninth column (the tenth after a device's, when
 * dev is not NULL). */
static int gpu_time_row(struct stats_report *r, struct dur_acc *a, uint64_t whole,
			const char *name, const char *dev)
{
	struct stats_cell *c = stats_report__row(r);

	if (!c)
		return -ENOMEM;
	time_cells(c, a, whole);
	c[8 + !!dev] = (struct stats_cell){ .s = name };
	if (dev)
		c[8] = (struct stats_cell){ .s = dev };
	return 0;
}

const struct stats_col stats_gpu_kern_cols[] = {
	GPU_TIME_COLS("Instances", "instances")
	{ "Name", "name", SK_STR },
};

const char *const stats_gpu_kern_notes[] = {
	"Kernels as the GPU ran them (CUPTI records of a merged trace), by demangled name: "
	"time from start to end on the GPU.",
	NULL,
};

const struct stats_col stats_nvtx_cols[] = {
	GPU_TIME_COLS("Instances", "instances")
	{ "Range", "range", SK_STR },
};

const char *const stats_nvtx_notes[] = {
	"NVTX ranges by message (marks, which have no duration, left out).",
	NULL,
};

static int cmp_named(const void *pa, const void *pb, void *ctx)
{
	const struct named_durs *n = ctx;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;

	if (n->d[ia].total != n->d[ib].total)
		return n->d[ia].total > n->d[ib].total ? -1 : 1;
	if (n->d[ia].calls != n->d[ib].calls)
		return n->d[ia].calls > n->d[ib].calls ? -1 : 1;
	if (strcmp(n->names.v[ia].name, n->names.v[ib].name))
		return strcmp(n->names.v[ia].name, n->names.v[ib].name);
	return (uint32_t)n->names.v[ia].device < (uint32_t)n->names.v[ib].device ? -1 :
	       (uint32_t)n->names.v[ia].device > (uint32_t)n->names.v[ib].device;
}

int stats_gpu__named_sum(struct named_durs *n, struct stats_report *r, struct stats_acc *by_device)
{
	uint32_t cnt = n->names.n, *order = malloc((cnt ? cnt : 1) * sizeof(*order));
	uint64_t whole = 0;
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < cnt; i++) {
		order[i] = i;
		whole += n->d[i].total;
	}
	qsort_r(order, cnt, sizeof(order[0]), cmp_named, n);
	for (uint32_t i = 0; i < cnt && !err; i++) {
		const struct kern_acc *k = &n->names.v[order[i]];
		const char *dev = NULL;

		if (by_device && !(dev = stats_dev__name(by_device, k->device))) {
			err = -ENOMEM;
			break;
		}
		err = gpu_time_row(r, &n->d[order[i]], whole, k->name, dev);
	}
	free(order);
	return err;
}

const struct stats_col stats_gpu_mem_time_cols[] = {
	GPU_TIME_COLS("Count", "count")
	{ "Operation", "operation", SK_STR },
};

const char *const stats_gpu_mem_time_notes[] = {
	"Copies and sets as the GPU ran them (CUPTI records of a merged trace), by direction "
	"(as dump's \"kind\") and \"memset\": time from start to end on the GPU.",
	NULL,
};

const char *const stats_gpu_mem_size_notes[] = {
	"Bytes of the copies and sets the GPU ran (CUPTI records of a merged trace), by "
	"direction (as dump's \"kind\") and \"memset\".",
	NULL,
};

static int cmp_kind(const void *pa, const void *pb, void *ctx)
{
	const struct dur_acc *a = ctx;
	int ia = *(const int *)pa, ib = *(const int *)pb;

	if (a[ia].total != a[ib].total)
		return a[ia].total > a[ib].total ? -1 : 1;
	if (a[ia].calls != a[ib].calls)
		return a[ia].calls > a[ib].calls ? -1 : 1;
	return strcmp(stats_acc__mem_name(ia), stats_acc__mem_name(ib));
}

/* Indices of the kinds of a[] with a record, by total, highest first. */
static int kinds_sorted(struct dur_acc *a, int order[MEM_KINDS])
{
	int n = 0;

	for (int i = 0; i < MEM_KINDS; i++)
		if (a[i].calls)
			order[n++] = i;
	qsort_r(order, n, sizeof(order[0]), cmp_kind, a);
	return n;
}

int stats_gpu__mem_time_sum(struct stats_acc *s, struct stats_report *r)
{
	int order[MEM_KINDS], n = kinds_sorted(s->gmem_time, order), err = 0;
	uint64_t whole = 0;

	for (int i = 0; i < n; i++)
		whole += s->gmem_time[order[i]].total;
	for (int i = 0; i < n && !err; i++)
		err = gpu_time_row(r, &s->gmem_time[order[i]], whole, stats_acc__mem_name(order[i]), NULL);
	return err;
}

/* Rows as cuda_mem_size_sum's (stats_mem_cols) of the sizes in a[]. */
int stats_gpu__size_rows(struct dur_acc *a, struct stats_report *r)
{
	int order[MEM_KINDS], n = kinds_sorted(a, order);

	for (int i = 0; i < n; i++) {
		struct dur_acc *k = &a[order[i]];
		struct stats_cell *c = stats_report__row(r);
		struct dvec_summary sm;

		if (!c)
			return -ENOMEM;
		dvec__summarize(&k->dur, k->total, &sm);
		c[0] = (struct stats_cell){ .u = k->total };
		c[1] = (struct stats_cell){ .u = k->calls };
		c[2] = (struct stats_cell){ .d = sm.mean };
		c[3] = (struct stats_cell){ .d = sm.median };
		c[4] = (struct stats_cell){ .u = k->min };
		c[5] = (struct stats_cell){ .u = k->max };
		c[6] = (struct stats_cell){ .d = sm.stddev };
		c[7] = (struct stats_cell){ .s = stats_acc__mem_name(order[i]) };
	}
	return 0;
}

const struct stats_col stats_latency_cols[] = {
	{ "Count", "count", SK_INT },
	{ "Min", "min", SK_TIME },
	{ "P50", "p50", SK_TIME },
	{ "P90", "p90", SK_TIME },
	{ "P99", "p99", SK_TIME },
	{ "Max", "max", SK_TIME },
	{ "Causality", "causality", SK_INT },
	{ "PID", "pid", SK_ID },
};

const char *const stats_latency_notes[] = {
	"Latency: from the entry of the launch call to the kernel's start on the GPU, of the "
	"kernels linked to their launch; it includes the time queued behind earlier work.",
	"Pnn: nearest-rank percentiles. Causality: linked kernels that started before their "
	"launch call (a clock or linking error), left out of the latencies.",
	NULL,
};

static int cmp_lat(const void *pa, const void *pb)
{
	const struct lat_acc *a = *(struct lat_acc *const *)pa, *b = *(struct lat_acc *const *)pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

int stats_gpu__latency(struct stats_acc *s, struct stats_report *r)
{
	size_t n;
	struct lat_acc **order = (struct lat_acc **)sorted_values(&s->lat, cmp_lat, &n);

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lat_acc *a = order[i];
		struct stats_cell *c = stats_report__row(r);

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		c[0] = (struct stats_cell){ .u = a->v.n };
		if (a->v.n) {
			c[1] = (struct stats_cell){ .u = a->min };
			c[2] = (struct stats_cell){ .u = dvec__percentile(&a->v, 50) };
			c[3] = (struct stats_cell){ .u = dvec__percentile(&a->v, 90) };
			c[4] = (struct stats_cell){ .u = dvec__percentile(&a->v, 99) };
			c[5] = (struct stats_cell){ .u = a->max };
		}
		c[6] = (struct stats_cell){ .u = a->causality };
		c[7] = (struct stats_cell){ .u = a->pid };
	}
	free(order);
	return 0;
}
