// SPDX-License-Identifier: MIT
/*
 * The GPU metric samples of `gtrace-bpf analyze` (GT_REC_GPU_METRIC,
 * --gpu-metrics): a GPU's sampling round held until it is complete, then
 * applied to the processes whose time it falls in (utilization, tensor,
 * DRAM and SM activity means).
 */
#include "analyze/analyze_int.h"
#include "format/records.h"

/* GPU metrics (GT_REC_GPU_METRIC, --gpu-metrics): the means of question 1
 * (utilization) and 2 (tensor, DRAM, SM activity).  Device-wide: every
 * process seen takes the samples from its first record to its exit (and
 * AZ_SLACK_NS after, or to the trace's end when it did not exit).
 *
 * A sample is one GPU's sampling round.  The sampler reads a GPU's
 * utilization, its other basic metrics, then its GPM metrics, gives them
 * all the round's time and queues them at once (user/record/gpum/gpu_metrics.c,
 * read_dev); the recorder writes the queue in order from its loop, a merged
 * trace keeps the recording's order and analyze_read feeds it in file
 * order.  So a GPU's round is a run of records of one time, among other
 * GPUs' rounds and the other thread's process-memory records: a GPU's
 * sample is complete when a record of that GPU with another time comes (or
 * the end), whatever the order within the round.  One sample per GPU is
 * held, nothing more.
 *
 * Every sample's utilization counts (the busy fraction counts the idle
 * time); the activity only of the samples in which the GPU was busy (its
 * utilization above 0), as a short program's samples are mostly of idle
 * time, whose zeros say nothing of its work.  Samples without a
 * utilization are kept apart: they stand in when the scope has no
 * utilization at all (a GPU or NVML without it). */
static void msample_to(struct analyze *a, struct az_proc *p, const struct az_msample *m)
{
	const uint32_t act = (1u << AZ_M_SM) | (1u << AZ_M_TENSOR) | (1u << AZ_M_DRAM);
	bool util = m->have & (1u << AZ_M_UTIL);
	struct az_acc *acc = p->whole;
	struct az_msum *sum;

	/* from its first record to its exit (samples of the time before it
	 * come after it, up to a poll interval late; those of its time may
	 * come before it: az_metric__seen) */
	if (m->ts < acc->start || (p->exit_ts && m->ts > p->exit_ts + a->slack))
		return;
	if (util) {
		acc->m_util += m->v[AZ_M_UTIL];
		acc->m_util_n++;
	}
	if (!(m->have & act))
		return;
	if (util && m->v[AZ_M_UTIL] <= 0) {
		acc->m_idle++;
		return;
	}
	sum = util ? &acc->m_busy : &acc->m_nogate;
	sum->samples++;
	for (int k = AZ_M_SM; k < AZ_M__COUNT; k++)
		if (m->have & (1u << k)) {
			sum->sum[k] += m->v[k];
			sum->n[k]++;
		}
}

static void msample_apply(struct analyze *a, const struct az_msample *m)
{
	if (!m->have)
		return;
	for (uint32_t i = 0; i < a->procs.cap; i++) {
		struct az_proc *p = a->procs.s[i].v;

		if (a->procs.s[i].used && p->seen)
			msample_to(a, p, m);
	}
	a->mrecent[a->nrecent++ % AZ_MRECENT] = *m;
}

void az_metric__seen(struct analyze *a, struct az_proc *p)
{
	uint32_t n = a->nrecent < AZ_MRECENT ? a->nrecent : AZ_MRECENT;

	for (uint32_t i = a->nrecent - n; i != a->nrecent; i++)
		msample_to(a, p, &a->mrecent[i % AZ_MRECENT]);
}

void az_metric(struct analyze *a, uint64_t ts, uint32_t device, uint32_t metric, int64_t micro)
{
	struct az_msample *m;
	uint32_t i;
	int k;

	for (i = 0; i < a->nmsamp && a->msamp[i].device != device; i++)
		;
	if (i == a->nmsamp) {
		if (i == AZ_METRIC_DEVS) {
			a->msamp_over++;
			return;
		}
		a->msamp[a->nmsamp++] = (struct az_msample){ .device = device, .ts = ts };
	}
	m = &a->msamp[i];
	/* any record of the GPU at another time begins its next round */
	if (m->ts != ts) {
		msample_apply(a, m);
		*m = (struct az_msample){ .device = device, .ts = ts };
	}
	switch (metric) {
	case GT_GPUM_GPU_UTIL: k = AZ_M_UTIL; break;
	case GT_GPUM_SM_ACTIVE: k = AZ_M_SM; break;
	case GT_GPUM_TENSOR_ACTIVE: k = AZ_M_TENSOR; break;
	case GT_GPUM_DRAM_BW: k = AZ_M_DRAM; break;
	default: return;
	}
	m->v[k] = micro;
	m->have |= 1u << k;
}

void az_metric__flush(struct analyze *a)
{
	for (uint32_t i = 0; i < a->nmsamp; i++) {
		msample_apply(a, &a->msamp[i]);
		a->msamp[i].have = 0;
	}
}
