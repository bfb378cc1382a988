// SPDX-License-Identifier: MIT
/*
 * `stats -r gpu_metrics_sum`: the GPU metric samples of a trace recorded
 * with --gpu-metrics (GT_REC_GPU_METRIC), per GPU and metric: Samples, Mean,
 * P50, P95, Max, exact in the metric's unit (Mean rounded to a millionth;
 * percentiles nearest-rank: the smallest value with at least p % of the
 * samples at or below it).  With --range, the samples taken inside the
 * range's or window's time (they are of the whole GPU, not of a process).
 * Rows by GPU, then metric id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/stats_int.h"
#include "format/records.h"

/* The samples of one GPU's metric. */
struct gpum_series {
	uint32_t device, metric;
	int64_t *v;		/* value_micro, in the order read */
	size_t n, cap;
};

struct gpum_acc {
	struct gpum_series *s;
	size_t n, cap;
	size_t last;		/* cache: samples of one round come in order */
};

const struct stats_col stats_gpum_cols[8] = {
	{ "GPU", "gpu", SK_ID },
	{ "Metric", "metric", SK_STR },
	{ "Unit", "unit", SK_STR },
	{ "Samples", "samples", SK_INT },
	{ "Mean", "mean", SK_MICRO },
	{ "P50", "p50", SK_MICRO },
	{ "P95", "p95", SK_MICRO },
	{ "Max", "max", SK_MICRO },
};

const char *const stats_gpum_notes[] = {
	"GPU metrics sampled through NVML by the recorder (--gpu-metrics), in each metric's unit; "
	"Mean rounded to a millionth, P50 and P95 nearest-rank",
	NULL,
};

static struct gpum_series *series_of(struct gpum_acc *a, uint32_t device, uint32_t metric)
{
	struct gpum_series *s;

	if (a->last < a->n && a->s[a->last].device == device && a->s[a->last].metric == metric)
		return &a->s[a->last];
	for (size_t i = 0; i < a->n; i++) {
		if (a->s[i].device == device && a->s[i].metric == metric) {
			a->last = i;
			return &a->s[i];
		}
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;

		s = realloc(a->s, cap * sizeof(*s));
		if (!s)
			return NULL;
		a->s = s;
		a->cap = cap;
	}
	s = &a->s[a->n];
	*s = (struct gpum_series){ .device = device, .metric = metric };
	a->last = a->n++;
	return s;
}

int stats_gpum__add(struct stats_acc *st, const struct gt_gpu_metric *m)
{
	struct gpum_acc *a = st->gpum;
	struct gpum_series *s;

	if (st->scope.on && (m->hdr.ts < st->scope.start || m->hdr.ts > st->scope.end))
		return 0;
	if (!a && !(a = st->gpum = calloc(1, sizeof(*a))))
		return -ENOMEM;
	s = series_of(a, m->device, m->metric);
	if (!s)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		int64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = m->value_micro;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_series(const void *a, const void *b)
{
	const struct gpum_series *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->metric > y->metric) - (x->metric < y->metric);
}

/* Nearest rank of p percent among n sorted values: index ceil(p n / 100) - 1. */
static size_t rank(size_t n, unsigned p)
{
	size_t k = (n * p + 99) / 100;

	return k ? k - 1 : 0;
}

int64_t stats_gpum__mean(const int64_t *v, size_t n)
{
	__int128 sum = 0, q;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	/* to the nearest, halves away from zero */
	q = (sum >= 0 ? sum + (__int128)(n / 2) : sum - (__int128)(n / 2)) / (__int128)n;
	return (int64_t)q;
}

int stats_gpum__sum(struct stats_acc *st, struct stats_report *r)
{
	struct gpum_acc *a = st->gpum;
	char unknown[24];

	if (!a)
		return 0;
	qsort(a->s, a->n, sizeof(*a->s), cmp_series);
	a->last = a->n;
	for (size_t i = 0; i < a->n; i++) {
		struct gpum_series *s = &a->s[i];
		struct stats_cell *c = stats_report__row(r);
		const char *name = gt_gpu_metric__name(s->metric);

		if (!c)
			return -ENOMEM;
		if (!name) {
			snprintf(unknown, sizeof(unknown), "metric_%u", s->metric);
			name = stats_acc__strdup(st, unknown);
			if (!name)
				return -ENOMEM;
		}
		c[0] = (struct stats_cell){ .u = s->device };
		c[1] = (struct stats_cell){ .s = name };
		c[2] = (struct stats_cell){ .s = gt_gpu_metric__unit(s->metric) };
		c[3] = (struct stats_cell){ .u = s->n };
		c[4] = (struct stats_cell){ .u = (uint64_t)stats_gpum__mean(s->v, s->n) };
		qsort(s->v, s->n, sizeof(*s->v), cmp_i64);
		c[5] = (struct stats_cell){ .u = (uint64_t)s->v[rank(s->n, 50)] };
		c[6] = (struct stats_cell){ .u = (uint64_t)s->v[rank(s->n, 95)] };
		c[7] = (struct stats_cell){ .u = (uint64_t)s->v[s->n - 1] };
	}
	return 0;
}

void stats_gpum__free(struct stats_acc *st)
{
	struct gpum_acc *a = st->gpum;

	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->s[i].v);
	free(a->s);
	free(a);
	st->gpum = NULL;
}
