// SPDX-License-Identifier: MIT
/*
 * The notes of an analyze result: what its figures rest on (GPU records,
 * metrics or the host's waits), what they lack (calls before the probes,
 * launches timed at entry only, scheduler records, SM counts, late or
 * dropped records, NCCL ranks not in the trace) and which scopes are
 * sampled.  The table, Markdown and JSON print them before the scopes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "analyze/analyze_int.h"
#include "decode/capture_spans.h"
#include "format/api.h"
#include "lib/term_text.h"

/* "pid 1234 ran /x/libcuda.so.1 from +0.120 s to +0.130 s before its
 * probes were attached (not held: ...)" of the first gap. */
static const char *gap_note(struct analyze *a, uint64_t end)
{
	char *path = term_text__escape(a->gap0_path);
	uint64_t from = a->gap0.cont_ts ? a->gap0.cont_ts : a->gap0.ts, t0 = a->trace_start;
	/* never probed: to the end, which a trace cut short may put before it */
	uint64_t to = a->gap0.end_ts ? a->gap0.end_ts : end > from ? end : from;
	const char *s;

	if (from < t0)
		t0 = from;
	if (a->gaps == 1)
		s = az_store__printf(&a->store, "pid %u ran %s from +%.3f s to %s+%.3f s before its probes "
				     "were attached (%s): its calls then were not recorded, and the "
				     "figures of that process lack them", a->gap0.pid, path ? path : "?",
				     (from - t0) / 1e9, a->gap0.end_ts ? "" : "the end, ", (to - t0) / 1e9,
				     gt_libload_outcome__text(a->gap0.outcome));
	else
		s = az_store__printf(&a->store, "%llu processes ran a libcuda or libnccl before its probes "
				     "were attached: their calls then were not recorded, and the figures "
				     "of those processes lack them (the first: pid %u, %s, from +%.3f s to "
				     "%s+%.3f s, %s; dump --summary lists them)", (unsigned long long)a->gaps,
				     a->gap0.pid, path ? path : "?", (from - t0) / 1e9,
				     a->gap0.end_ts ? "" : "the end, ", (to - t0) / 1e9,
				     gt_libload_outcome__text(a->gap0.outcome));
	free(path);
	return s;
}

/* "the trace ends inside 1 call: cuStreamSynchronize of pid 12 tid 12 from
 * +1.200 s, counted up to the end at +4.000 s ..." */
static const char *cut_note(struct analyze *a, uint64_t end)
{
	uint64_t t0 = a->trace_start && a->trace_start <= a->cut0.ts ? a->trace_start : a->cut0.ts;

	if (a->end_set > end)
		end = a->end_set;
	return az_store__printf(&a->store, "the trace ends inside %llu call%s in flight (%s%s of pid %u "
				"tid %u from +%.3f s): counted up to its end at +%.3f s, so %s at "
				"least that", (unsigned long long)a->cut,
				a->cut == 1 ? "" : "s", a->cut == 1 ? "" : "the first: ",
				gt_api__name(a->cut0.api), a->cut0.pid, a->cut0.tid,
				(a->cut0.ts - t0) / 1e9, (end - t0) / 1e9,
				a->cut == 1 ? "its time is" : "their times are");
}

/* The trace's GPUs differ in SMs, or not all of theirs are known: which
 * count small_grid used. NULL when out of memory. */
static const char *sms_note(struct analyze *a)
{
	const struct gt_gpu_sms *g = &a->sms;
	uint32_t unknown = g->gpus - g->known;
	char list[GT_GPU_SMS_MAX * 12 + 32] = "";
	size_t n = 0;

	if (g->ndistinct == 1)
		return az_store__printf(&a->store, "the SM count of %u of %u GPUs is not known: "
					"small_grid uses the others' %u; give --sms N", unknown, g->gpus,
					g->min);
	for (uint32_t i = 0; i < g->ndistinct; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%u", i ? ", " : "", g->distinct[i]);
	if (unknown)
		snprintf(list + n, sizeof(list) - n, "; %u GPU%s not known", unknown,
			 unknown == 1 ? "" : "s");
	return az_store__printf(&a->store, "GPUs of different SM counts (%s): small_grid uses %u; "
				"give --sms N", list, g->min);
}

/* What the figures of the result rest on, and the sampled flags; end is
 * the end of the trace (a gap that never closed lasts until it). */
int az__add_notes(struct analyze *a, struct analyze_result *r, uint64_t end)
{
	uint64_t late = 0, dropped = 0;
	bool gpu = false, metrics = false, entry_only = false, launches = false;
	const char *sampled = NULL;
	char note[320];
	int n = 0;

	for (size_t i = 0; i < a->nscopes; i++) {
		struct az_scope *s = &a->scopes[i];
		const struct capspan *sp = NULL;

		if (s->kind == AZ_SCOPE_RANGE)
			sp = capture_spans__find(a->spans, CAPSPAN_RANGE, s->number);
		else if (s->kind == AZ_SCOPE_WINDOW)
			sp = capture_spans__find(a->spans, CAPSPAN_WINDOW, s->number);
		s->sampled = capture_spans__sampled(a->spans, sp, note, sizeof(note));
		if (s->sampled && !sampled && !(sampled = az_store__keep(&a->store, note)))
			return -ENOMEM;
		gpu |= s->gpu.source == AZ_BUSY_GPU_RECORDS;
		metrics |= s->gpu.source == AZ_BUSY_GPU_METRICS;
		late += s->gpu.late;
		launches |= s->work.launches > 0;
		entry_only |= s->work.launches && !s->work.launch_median_ns;
	}
	for (uint32_t i = 0; i < a->procs.cap; i++)
		if (a->procs.s[i].used)
			dropped += ((struct az_proc *)a->procs.s[i].v)->waits_dropped;
	r->notes[n++] = gpu ? "GPU busy and idle time from the GPU records (CUPTI) of a merged trace"
			    : metrics ? "no GPU records: GPU busy time is the mean GPU utilization of "
					"the GPU metric samples (device-wide, sampled), else estimated "
					"from the host's waits (record with --cupti to measure it)"
			    : "no GPU records: GPU busy time is estimated from the host's waits "
			      "(record with --cupti to measure it)";
	/* calls missing from the start of a process come before the rest */
	if (a->gaps)
		r->notes[n++] = gap_note(a, end);
	if (a->cut)
		r->notes[n++] = cut_note(a, end);
	if (entry_only)
		r->notes[n++] = "launches recorded at entry only: their CPU time counts as outside "
				"CUDA and the launch cost is the interval between launches (record "
				"with --launch-exit to time the calls)";
	if (launches && a->sm_assumed)
		r->notes[n++] = az_store__printf(&a->store, "the trace does not say how many SMs the "
						 "GPU has: small_grid assumes %u (give --sms N)",
						 AZ_SM_ASSUMED);
	else if (launches && (a->sms.ndistinct > 1 || a->sms.known < a->sms.gpus))
		r->notes[n++] = sms_note(a);
	if (!a->sched)
		r->notes[n++] = "no scheduler records: time outside CUDA is not split into on- and "
				"off-CPU (record with --trace including sched)";
	if (late)
		r->notes[n++] = az_store__printf(&a->store, "%llu GPU records came after the timeline "
						 "had passed their start: placed from there on",
						 (unsigned long long)late);
	if (dropped)
		r->notes[n++] = az_store__printf(&a->store, "%llu waits of a process were too old to "
						 "keep for the GPU's idle split",
						 (unsigned long long)dropped);
	if (az_nccl__unmatched(a) && n < 7)
		r->notes[n++] = az_store__printf(&a->store, "%llu NCCL collectives were not seen on "
						 "every rank of their communicator (ranks not in the "
						 "trace): no straggler or wait for them",
						 (unsigned long long)az_nccl__unmatched(a));
	if (sampled && n < 8)
		r->notes[n++] = sampled;
	if (a->msamp_over && n < 8)
		r->notes[n++] = az_store__printf(&a->store, "%llu GPU metric records of GPUs beyond "
						 "the first %u were left out",
						 (unsigned long long)a->msamp_over, AZ_METRIC_DEVS);
	for (int i = 0; i < n; i++)
		if (!r->notes[i])
			return -ENOMEM;
	r->notes[n] = NULL;
	return 0;
}
