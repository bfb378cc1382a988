// SPDX-License-Identifier: MIT
/*
 * The three answers of an analyze scope in words (is the GPU busy, what
 * bounds it, how parallel is it), from its figures (analyze_rules.c), and
 * the numbers in words both use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "analyze/words.h"
#include "format/api.h"
#include "lib/term_text.h"

/* ---- numbers in words ---------------------------------------------------------- */

/* "12.1 s", "4.80 us", "230 ms", "850 ns": three significant digits. */
const char *az__dur_str(char *buf, size_t len, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } u[] = {
		{ 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" },
	};

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (ns >= u[i].div) {
			double v = (double)ns / (double)u[i].div;

			snprintf(buf, len, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v,
				 u[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

/* "23 %", "4.5 %", "0.3 %" of part in whole. */
const char *az__pct_str(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	double p = whole ? 100.0 * (double)part / (double)whole : 0.0;

	snprintf(buf, len, p >= 10 || p == 0 ? "%.0f %%" : "%.1f %%", p);
	return buf;
}

/* "8,985" */
const char *az__num_str(char *buf, size_t len, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;

	for (int i = 0; i < n && o + 2 < (int)len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* The launch cost on the CPU: the median launch call when launches have
 * exits, else the median interval between launches. */
uint64_t az__launch_cost(const struct az_work *w, bool *is_call)
{
	*is_call = w->launch_median_ns != 0;
	return w->launch_median_ns ? w->launch_median_ns : w->launch_gap_median_ns;
}

/* ---- the answers --------------------------------------------------------------- */

static const char *idle_phrase[AZ_IDLE__COUNT] = {
	[AZ_IDLE_SUBMIT] = "waiting for the host to submit",
	[AZ_IDLE_LAUNCH] = "launch overhead between back-to-back work",
	[AZ_IDLE_SYNC] = "behind synchronization or blocking copies",
	[AZ_IDLE_OTHER] = "submitted work waiting on a dependency, or work with no launch call",
};

static const char *cpu_clause(struct az_store *st, const struct az_cpu *c)
{
	if (!c->threads)
		return "no thread of it made a CUDA call with an exit";
	if (!c->sched)
		return az_store__printf(st, "on the CPU, %s thread%s spent %s in CUDA calls (%s "
					"waiting in syncs) and %s outside CUDA (no scheduler records: "
					"on or off CPU unknown)", N(c->threads),
					c->threads == 1 ? "" : "s",
					P(c->calls_ns + c->sync_ns, c->span_ns),
					P(c->sync_ns, c->span_ns), P(c->outside_ns, c->span_ns));
	uint64_t known = c->sync_ns - c->sync_cut_ns;
	const char *cut = c->sync_cut_ns ? az_store__printf(st, ", %s in flight at the end, on or "
							    "off the CPU not known",
							    P(c->sync_cut_ns, c->span_ns)) : "";

	if (!cut)
		return NULL;
	return az_store__printf(st, "on the CPU, %s thread%s spent %s in CUDA calls (%s waiting "
				"in syncs: %s spinning, %s blocked%s), %s off-CPU and %s busy outside "
				"CUDA", N(c->threads), c->threads == 1 ? "" : "s",
				P(c->calls_ns + c->sync_ns, c->span_ns), P(c->sync_ns, c->span_ns),
				P(known > c->sync_blocked_ns ? known - c->sync_blocked_ns : 0, c->span_ns),
				P(c->sync_blocked_ns, c->span_ns), cut, P(c->off_ns, c->span_ns),
				P(c->outside_ns > c->off_ns ? c->outside_ns - c->off_ns : 0, c->span_ns));
}

static const char *answer_busy(struct az_store *st, const struct az_scope *s)
{
	const struct az_gpu *g = &s->gpu;
	uint64_t wall = s->end_ts > s->start_ts ? s->end_ts - s->start_ts : 0, idle_in = 0, top = 0;
	const char *cpu = cpu_clause(st, &s->cpu);
	char devs[48] = "";
	int best = -1;

	if (!cpu)
		return NULL;
	switch (g->source) {
	case AZ_BUSY_GPU_RECORDS:
		for (int k = AZ_IDLE_SUBMIT; k <= AZ_IDLE_OTHER; k++) {
			idle_in += g->idle_ns[k];
			if (g->idle_ns[k] > top) {
				top = g->idle_ns[k];
				best = k;
			}
		}
		if (g->devices > 1)
			snprintf(devs, sizeof(devs), " (summed over its %u GPUs)", g->devices);
		if (best < 0)
			return az_store__printf(st, "GPU busy %s of %s%s, never idle between its first "
						"and last GPU work; %s.", P(g->busy_ns, g->wall_ns),
						D(wall), devs, cpu);
		return az_store__printf(st, "GPU busy %s of %s%s (%s of the %s from its first to its "
					"last GPU work); %s of the idle time between is %s; %s.",
					P(g->busy_ns, g->wall_ns), D(wall), devs,
					P(g->busy_ns, g->active_ns), D(g->active_ns),
					P(top, idle_in), idle_phrase[best], cpu);
	case AZ_BUSY_GPU_METRICS:
		return az_store__printf(st, "GPU busy %s of %s (device-wide GPU utilization, the mean "
					"of %s GPU metric samples); %s.", P(g->busy_ns, wall), D(wall),
					N(g->util_samples), cpu);
	case AZ_BUSY_SYNC_ESTIMATE:
		return az_store__printf(st, "GPU busy at least %s of %s (an estimate: the host waited "
					"%s for it in %s synchronize call%s; record with --cupti to "
					"measure it); %s.", P(g->busy_ns, wall), D(wall), D(g->busy_ns),
					N(g->waits), g->waits == 1 ? "" : "s", cpu);
	default:
		return az_store__printf(st, "No GPU work measured or waited for in %s (no GPU records, "
					"no synchronize call with an exit); %s.", D(wall), cpu);
	}
}

/* "; GPU metrics over ..." for the answer of question 2: what the means
 * are over and how often they were sampled; "" without GPM samples. */
static void metrics_phrase(struct az_store *st, const struct az_work *w, char *buf, size_t len)
{
	char rate[48] = "";

	buf[0] = '\0';
	if (!w->metric_samples && !w->metric_idle)
		return;
	if (w->metric_samples < AZ_METRIC_MIN) {
		snprintf(buf, len, "; GPU metrics: too few samples %s(%s) to say",
			 w->metric_all ? "" : "while the GPU was busy ", N(w->metric_samples));
		return;
	}
	/* the GPM figures come at about 10 Hz at most (NVML wants ~100 ms
	 * between its samples: docs/FORMAT.md) */
	if (w->metric_hz > 10)
		snprintf(rate, sizeof(rate), " at about 10 Hz");
	else if (w->metric_hz)
		snprintf(rate, sizeof(rate), " at %u Hz", w->metric_hz);
	snprintf(buf, len, "; GPU metrics over %s%s samples%s: tensor pipes active %s, DRAM "
		 "bandwidth %s of its peak (device-wide, sampled%s)",
		 w->metric_all ? "all " : "the ", N(w->metric_samples),
		 w->metric_all ? " (no GPU utilization in the trace to tell busy samples from idle "
				 "ones)" : " in which the GPU was busy",
		 w->tensor_micro >= 0 ? az_store__printf(st, "%.1f %%", w->tensor_micro / 1e6) : "-",
		 w->dram_micro >= 0 ? az_store__printf(st, "%.1f %%", w->dram_micro / 1e6) : "-", rate);
}

static const char *answer_bound(struct az_store *st, const struct az_scope *s)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_work *w = &s->work;
	const struct az_cpu *c = &s->cpu;
	uint64_t idle_in = 0, copy = 0, work;
	char topk[320] = "", metrics[320] = "";
	bool is_call = false;

	for (int k = AZ_IDLE_SUBMIT; k <= AZ_IDLE_OTHER; k++)
		idle_in += g->idle_ns[k];
	for (int k = 0; k < AZ_MEM_KINDS; k++)
		copy += w->copy_ns[k];
	/* shares of the work summed over kernels, copies and sets (which
	 * overlap: their sum is not the busy time) */
	work = w->kernel_ns + copy;
	if (w->nkernels)
		snprintf(topk, sizeof(topk), " (top: %.*s, %s)",	/* cut between characters */
			 (int)term_text__cut(w->top[0].name, strlen(w->top[0].name), 200),
			 w->top[0].name, P(w->top[0].total_ns, work));
	metrics_phrase(st, w, metrics, sizeof(metrics));
	if (g->source == AZ_BUSY_GPU_METRICS) {
		static const char *const what[] = {
			[AZ_BOUND_HOST] = "Bound by the host, as far as the GPU metrics show: the GPU "
				"was busy less than half the time",
			[AZ_BOUND_COMPUTE] = "Compute-bound, as far as the GPU metrics show",
			[AZ_BOUND_MEMORY] = "Memory-bound, as far as the GPU metrics show",
			[AZ_BOUND_KERNELS] = "GPU-bound, as far as the GPU metrics show (neither the "
				"tensor pipes nor DRAM near their peak)",
		};

		const char *b = what[w->bound] ? what[w->bound] : "?";

		if (w->bound == AZ_BOUND_KERNELS && w->tensor_micro < 0 && w->dram_micro < 0)
			b = "GPU-bound, as far as the GPU metrics show (no tensor or DRAM figures to "
			    "tell compute from memory)";
		return az_store__printf(st, "%s: utilization %s%s (no GPU records: record with "
					"--cupti for what ran).", b, P(g->busy_ns, g->wall_ns), metrics);
	}
	/* kernels that say nothing of their class, judged by the GPU metrics */
	if ((w->bound == AZ_BOUND_COMPUTE || w->bound == AZ_BOUND_MEMORY) &&
	    w->class_ns[AZ_KC_OTHER] > w->class_ns[AZ_KC_GEMM] + w->class_ns[AZ_KC_CONV] +
				       w->class_ns[AZ_KC_ATTENTION] + w->class_ns[AZ_KC_ELEMENTWISE] +
				       w->class_ns[AZ_KC_REDUCTION])
		return az_store__printf(st, "%s, as far as the GPU metrics show: kernels whose names "
					"do not tell their class take %s of the GPU's work (%s, kernels, "
					"copies and sets summed)%s%s.", w->bound == AZ_BOUND_COMPUTE ?
					"Compute-bound" : "Memory-bound",
					P(w->class_ns[AZ_KC_OTHER], work), D(work), topk, metrics);
	switch (w->bound) {
	case AZ_BOUND_LAUNCH:
		return az_store__printf(st, "Launch-bound: %s kernels, median %s on the GPU, %s per "
					"launch on the CPU (%s); %s of the GPU's idle time was waiting "
					"for launches.", N(w->kernels), D(w->kernel_median_ns),
					D(az__launch_cost(w, &is_call)),
					is_call ? "median launch call" : "median interval between launches",
					P(g->idle_ns[AZ_IDLE_SUBMIT] + g->idle_ns[AZ_IDLE_LAUNCH], idle_in));
	case AZ_BOUND_HOST:
		if (g->source != AZ_BUSY_GPU_RECORDS)
			return az_store__printf(st, "Bound by the host, as far as the calls show: its "
						"threads spent %s of their time outside CUDA (no GPU "
						"records: record with --cupti for what the GPU did).",
						P(c->outside_ns, c->span_ns));
		return az_store__printf(st, "Bound by the host: the GPU idled %s behind waits and "
					"blocking copies and %s waiting for submissions (%s of its idle "
					"time); %s host gaps of 1 ms or more outside CUDA (%s).",
					D(g->idle_ns[AZ_IDLE_SYNC]), D(g->idle_ns[AZ_IDLE_SUBMIT]),
					P(g->idle_ns[AZ_IDLE_SYNC] + g->idle_ns[AZ_IDLE_SUBMIT], idle_in),
					N(s->par.host_gaps), D(s->par.host_gap_ns));
	case AZ_BOUND_COMPUTE:
		return az_store__printf(st, "Compute-bound: GEMM, convolution and attention kernels "
					"take %s of the GPU's work (%s, kernels, copies and sets "
					"summed)%s%s.",
					P(w->class_ns[AZ_KC_GEMM] + w->class_ns[AZ_KC_CONV] +
					  w->class_ns[AZ_KC_ATTENTION], work), D(work), topk, metrics);
	case AZ_BOUND_MEMORY:
		return az_store__printf(st, "Memory-bound: elementwise and reduction kernels take %s "
					"of the GPU's work (%s, kernels, copies and sets summed)%s%s.",
					P(w->class_ns[AZ_KC_ELEMENTWISE] + w->class_ns[AZ_KC_REDUCTION],
					  work), D(work), topk, metrics);
	case AZ_BOUND_COMMUNICATION:
		return az_store__printf(st, "Communication-bound: NCCL kernels take %s of the GPU's "
					"work (%s, kernels, copies and sets summed)%s.",
					P(w->class_ns[AZ_KC_NCCL], work), D(work), topk);
	case AZ_BOUND_TRANSFERS:
		return az_store__printf(st, "Bound by transfers: copies and sets take %s of the GPU's "
					"work (%s, kernels, copies and sets summed; HtoD %s, DtoH %s, "
					"DtoD %s).", P(copy, work), D(work), D(w->copy_ns[GT_COPY_HTOD]),
					D(w->copy_ns[GT_COPY_DTOH]), D(w->copy_ns[GT_COPY_DTOD]));
	case AZ_BOUND_KERNELS:
		if (g->source != AZ_BUSY_GPU_RECORDS)
			return az_store__printf(st, "GPU-bound, as far as the calls show: its threads "
						"waited for the GPU %s of their time (no GPU records: "
						"record with --cupti for what ran).",
						P(c->sync_ns, c->span_ns));
		return az_store__printf(st, "GPU-bound by kernels whose names do not tell compute "
					"from memory: %s of the GPU's work (%s, kernels, copies and sets "
					"summed)%s%s.", P(w->class_ns[AZ_KC_OTHER], work), D(work), topk,
					metrics);
	default:
		return az_store__printf(st, "Cannot tell: %s.", g->source == AZ_BUSY_GPU_RECORDS ?
					"too little GPU work" :
					"no GPU records and no clear share of host or wait time "
					"(record with --cupti for what the GPU did)");
	}
}

static const char *answer_parallel(struct az_store *st, const struct az_scope *s)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_work *w = &s->work;
	const struct az_parallel *p = &s->par;
	bool gpu = g->source == AZ_BUSY_GPU_RECORDS;
	char overlap[96], grids[192], waits[128], copies[96] = "", legacy[96] = "", gaps[96];

	if (gpu)
		snprintf(overlap, sizeof(overlap), g->concurrent_ns ? ", %s of the GPU busy time with "
			 "two or more pieces of work running at once" : ", none of its work "
			 "overlapping", P(g->concurrent_ns, g->busy_ns));
	else
		snprintf(overlap, sizeof(overlap), " (of its launch calls: no GPU records)");
	snprintf(grids, sizeof(grids), "%s of %s %s had grids of fewer blocks than %s %s SMs",
		 N(p->small_kernels), N(gpu ? w->kernels : w->launches), gpu ? "kernels" : "launches",
		 p->sm_assumed ? "the" : "the GPU's",
		 p->sm_assumed ? az_store__printf(st, "%u assumed", p->sm_count) :
				 N(p->sm_count));
	if (p->waits && p->launches_per_wait == 1)
		snprintf(waits, sizeof(waits), "a synchronize call after every launch (median, %s "
			 "call%s)", N(p->waits), p->waits == 1 ? "" : "s");
	else if (p->waits && p->launches_per_wait)
		snprintf(waits, sizeof(waits), "a synchronize call every %s launches (median, %s "
			 "call%s)", N(p->launches_per_wait), N(p->waits), p->waits == 1 ? "" : "s");
	else
		snprintf(waits, sizeof(waits), "%s synchronize call%s, none between launches",
			 N(p->waits), p->waits == 1 ? "" : "s");
	if (p->blocking_copies)
		snprintf(copies, sizeof(copies), "; %s blocking copies among the launches",
			 N(p->blocking_copies));
	if (p->legacy_launches)
		snprintf(legacy, sizeof(legacy), "; %s launches on the legacy default stream",
			 N(p->legacy_launches));
	if (p->host_gaps)
		snprintf(gaps, sizeof(gaps), "%s host gaps of 1 ms or more (%s)", N(p->host_gaps),
			 D(p->host_gap_ns));
	else
		snprintf(gaps, sizeof(gaps), "no host gaps of 1 ms or more");
	return az_store__printf(st, "%s stream%s%s; %s; %s%s%s; %s.", N(p->streams),
				p->streams == 1 ? "" : "s", overlap, grids, waits, copies, legacy, gaps);
}

int az_answers__write(struct az_store *st, struct az_scope *s)
{
	s->answer[AZ_Q_BUSY] = answer_busy(st, s);
	/* a trace cut inside calls: the figures above are lower bounds */
	if (s->answer[AZ_Q_BUSY] && s->cpu.cut)
		s->answer[AZ_Q_BUSY] = az_store__printf(st, "%s The trace ends inside %s call%s, "
							"counted up to its end: at least that long.",
							s->answer[AZ_Q_BUSY], N(s->cpu.cut),
							s->cpu.cut == 1 ? "" : "s");
	s->answer[AZ_Q_BOUND] = answer_bound(st, s);
	s->answer[AZ_Q_PARALLEL] = answer_parallel(st, s);
	if (!s->answer[AZ_Q_BUSY] || !s->answer[AZ_Q_BOUND] || !s->answer[AZ_Q_PARALLEL])
		return -ENOMEM;
	return 0;
}
