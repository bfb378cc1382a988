// SPDX-License-Identifier: MIT
/*
 * The GPU-metrics queue (--gpu-metrics): a bounded ring under a mutex that
 * the sampler threads push GT_REC_GPU_METRIC records into and the recording
 * loop pops from (gpu_metrics__drain); records that find it full are
 * dropped and counted.
 */
#include <pthread.h>
#include <stdlib.h>
#include "record/gpum/gpu_metrics.h"

struct gpum_queue {
	pthread_mutex_t lock;
	struct gt_gpu_metric *v;
	size_t cap, head, n;		/* ring: the oldest at head */
	uint64_t dropped;
};

struct gpum_queue *gpum_queue__new(size_t cap)
{
	struct gpum_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->cap = cap ? cap : 1;
	q->v = calloc(q->cap, sizeof(*q->v));
	if (!q->v) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	return q;
}

size_t gpum_queue__push(struct gpum_queue *q, const struct gt_gpu_metric *recs, size_t n)
{
	size_t i, kept;

	pthread_mutex_lock(&q->lock);
	kept = q->cap - q->n < n ? q->cap - q->n : n;
	for (i = 0; i < kept; i++)
		q->v[(q->head + q->n + i) % q->cap] = recs[i];
	q->n += kept;
	q->dropped += n - kept;
	pthread_mutex_unlock(&q->lock);
	return kept;
}

size_t gpum_queue__pop(struct gpum_queue *q, struct gt_gpu_metric *out, size_t max)
{
	size_t i, n;

	pthread_mutex_lock(&q->lock);
	n = q->n < max ? q->n : max;
	for (i = 0; i < n; i++)
		out[i] = q->v[(q->head + i) % q->cap];
	q->head = (q->head + n) % q->cap;
	q->n -= n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

uint64_t gpum_queue__dropped(const struct gpum_queue *q)
{
	uint64_t d;

	pthread_mutex_lock((pthread_mutex_t *)&q->lock);
	d = q->dropped;
	pthread_mutex_unlock((pthread_mutex_t *)&q->lock);
	return d;
}

void gpum_queue__free(struct gpum_queue *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	free(q->v);
	free(q);
}
