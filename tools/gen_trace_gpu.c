// SPDX-License-Identifier: MIT
/*
 * gen_trace -g, -u and -i: what a merged trace holds besides the calls:
 * the GPU records linked to their calls (-u: some unlinked, in the tail),
 * off-CPU intervals, the NVTX ranges of the steps, GPU metric samples;
 * -i's step ranges in the tail.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "gen_trace_int.h"
#include "format/records.h"

/* -g: a GPU record made (r), linked, or with -u unlinked into the tail. */
static int w_gpu_put(struct gen *g, struct gt_hdr *r, __u64 *launch_ts, __u16 *flags)
{
	if (!g->unlink || g->gpu_records % g->unlink)
		return gen__append(g, r);
	r->tid = 0;
	*launch_ts = 0;
	*flags = 0;
	g->unlinked++;
	return gen__tail_put(g, r);
}

/* -g: the GPU record of the call t just entered (a launch of k, or an
 * async copy or set of bytes), linked to it. */
int gen__w_gpu(struct gen *g, struct thr *t, const struct kernel *k, const struct gt_launch *l,
	  uint16_t api, uint64_t bytes)
{
	uint64_t start = t->entry_ts + gen__rnd_range(g, 3000, 9000);
	uint32_t stream = 7 + (uint32_t)(t->tid - t->pid), device = (uint32_t)t->proc % 2;
	uint64_t dur;

	if (start < t->gpu_free)
		start = t->gpu_free + gen__rnd_range(g, 500, 2000);
	g->gpu_records++;
	if (k) {
		size_t n = strlen(k->name) + 1;
		struct gt_gpu_kernel *r = gen__rec_init(g, GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*r) + n),
						   start, t->pid, t->tid, 0);

		dur = gen__rnd_skew(g, 1500, 80000);
		r->dur = dur;
		r->launch_ts = t->entry_ts;
		r->correlation = ++g->correlation;
		r->device = device;
		r->context = 1;
		r->stream = stream;
		memcpy(r->grid, l->grid, sizeof(r->grid));
		memcpy(r->block, l->block, sizeof(r->block));
		r->shmem = l->shmem;
		r->flags = GT_GPU_LINKED | GT_GPU_API_MATCHED;
		r->len = (uint16_t)n;
		memcpy(r->name, k->name, n);
		t->gpu_free = start + dur;
		r->hdr.cpu = 0;
		return w_gpu_put(g, &r->hdr, &r->launch_ts, &r->flags);
	} else {
		bool set = api == API(cuMemsetD32Async);
		struct gt_gpu_copy *r = gen__rec_init(g, set ? GT_REC_GPU_MEMSET : GT_REC_GPU_MEMCPY,
						 sizeof(*r), start, t->pid, t->tid, 0);

		dur = bytes / 20 + gen__rnd_range(g, 1000, 3000);	/* about 20 GB/s */
		r->dur = dur;
		r->launch_ts = t->entry_ts;
		r->bytes = bytes;
		r->correlation = ++g->correlation;
		r->device = device;
		r->context = 1;
		r->stream = stream;
		r->kind = set ? 0 : (uint16_t)gt_api__info(api)->kind;
		r->flags = GT_GPU_LINKED | GT_GPU_API_MATCHED;
		t->gpu_free = start + dur;
		return w_gpu_put(g, &r->hdr, &r->launch_ts, &r->flags);
	}
}

/* -g: what a call's exit adds: an off-CPU interval inside a long wait, and
 * the NVTX ranges of a step that ends. */
int gen__w_after(struct gen *g, struct thr *t, uint64_t exit_ts)
{
	int err = 0;

	if ((t->api == API(cuStreamSynchronize) || t->api == API(cuEventSynchronize)) &&
	    exit_ts - t->entry_ts > 50000) {
		struct gt_offcpu *o = gen__rec_init(g, GT_REC_OFFCPU, sizeof(*o), t->entry_ts + 8000, t->pid,
					       t->tid, 0);

		o->dur = exit_ts - t->entry_ts - 12000;
		o->state = 1;
		o->next_cpu = t->tid % 16;
		err = gen__append(g, &o->hdr);
	}
	if (!err && ++t->calls % STEP_CALLS == 0) {
		static const char *const names[] = { "step", "forward" };

		for (int i = 0; i < 2 && !err; i++) {
			const char *name = g->hostile ? gen__hostile_nvtx(i) : names[i];
			size_t n = strlen(name) + 1;
			uint64_t d = exit_ts - t->step_ts;
			struct gt_nvtx *nv = gen__rec_init(g, GT_REC_NVTX, GT_REC_ALIGN(sizeof(*nv) + n),
						      t->step_ts + (i ? d / 20 : 0), t->pid, t->tid, 0);

			nv->dur = i ? d * 2 / 5 : d;
			nv->id = (uint32_t)++g->nvtx_id;
			nv->len = (uint16_t)n;
			memcpy(nv->name, name, n);
			err = gen__append(g, &nv->hdr);
		}
		t->step_ts = exit_ts + 1;
	}
	return err;
}

/* -g: the GPU metric samples of every device at g->next_metric. */
int gen__w_metrics(struct gen *g)
{
	static const uint32_t ids[] = { GT_GPUM_GPU_UTIL, GT_GPUM_SM_ACTIVE };
	int devices = g->nprocs < 2 ? 1 : 2, err = 0;
	/* -M: every metric the format knows, as NVML with GPM samples them */
	size_t n = g->all_metrics ? GT_GPUM_MAX : sizeof(ids) / sizeof(ids[0]);

	for (int d = 0; d < devices && !err; d++)
		for (size_t i = 0; i < n && !err; i++) {
			uint32_t id = g->all_metrics ? (uint32_t)i : ids[i];
			struct gt_gpu_metric *m;

			if (!gt_gpu_metric__name(id))
				continue;
			m = gen__rec_init(g, GT_REC_GPU_METRIC, sizeof(*m), g->next_metric, 0, 0, 0);
			m->device = (uint32_t)d;
			m->metric = id;
			/* percent, times 10^6 */
			m->value_micro = (int64_t)gen__rnd_range(g, id == GT_GPUM_SM_ACTIVE ? 20 : 50,
								 id == GT_GPUM_SM_ACTIVE ? 70 : 100) * 1000000;
			err = gen__append(g, &m->hdr);
		}
	g->next_metric += METRIC_NS;
	return err;
}

/* -i: the step ranges of every process from t0 to end. */
int gen__w_steps(struct gen *g, uint64_t t0, uint64_t end)
{
	int err = 0;

	for (int p = 0; p < g->nprocs && !err; p++) {
		uint32_t pid = PID_BASE + (uint32_t)p * PID_STEP;

		for (uint64_t k = 0; !err && t0 + (k + 1) * g->step_ns <= end; k++) {
			struct gt_nvtx *v = (void *)g->buf;
			int n = snprintf(v->name, sizeof(g->buf) - sizeof(*v), "%s %llu",
					 g->hostile ? "st\x1b[31mep\xe2\x82\xac </script>" : "step",
					 (unsigned long long)k) + 1;

			memset(v, 0, sizeof(*v));
			v->hdr = (struct gt_hdr){ .ts = t0 + k * g->step_ns, .pid = pid, .tid = pid,
						  .type = GT_REC_NVTX,
						  .size = (uint16_t)GT_REC_ALIGN(sizeof(*v) + (size_t)n),
						  .cpu = (uint16_t)(pid % 16) };
			v->dur = g->step_ns;
			v->id = (uint32_t)k + 1;
			v->len = (uint16_t)n;
			err = gen__tail_put(g, &v->hdr);
		}
	}
	return err;
}
