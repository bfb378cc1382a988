// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf dump --summary` (dump_int.h): the recording's header, the
 * per-api table, the devices, NCCL calls and libcuda loads, the counters,
 * the capture ranges and windows, the triggers by kind, the overhead records
 * by reason, the GPU metric samples, the GPU side of a merged trace and the
 * decoder's counts, from what dump.c counted in its pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "export/dump_int.h"
#include "export/fields.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/term_text.h"


static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

#define ROW(f, name, v) fprintf(f, "  %-34s %12llu\n", name, (unsigned long long)(v))

/* The GPU side of a merged trace: what the records say, what the merger and
 * the agents counted.  Nothing for a trace without any of them. */
static void print_gpu(FILE *f, const struct gpu_sum *g)
{
	uint64_t all = g->n[0] + g->n[1] + g->n[2];

	if (!all && !g->nvtx && !g->api && !g->merged && !g->ncupti)
		return;
	fprintf(f, "\ngpu\n");
	fprintf(f, "  %-34s %12llu %16llu\n", "kernels", (unsigned long long)g->n[0],
		(unsigned long long)g->dur[0]);
	fprintf(f, "  %-34s %12llu %16llu\n", "memcpy", (unsigned long long)g->n[1],
		(unsigned long long)g->dur[1]);
	fprintf(f, "  %-34s %12llu %16llu\n", "memset", (unsigned long long)g->n[2],
		(unsigned long long)g->dur[2]);
	fprintf(f, "  %-34s %12llu %15.1f%%\n", "linked", (unsigned long long)g->linked,
		share(g->linked, all));
	ROW(f, "unlinked", all - g->linked);
	ROW(f, "causality", g->causality);
	fprintf(f, "  %-34s %12llu %16llu\n", "nvtx", (unsigned long long)g->nvtx,
		(unsigned long long)g->nvtx_dur);
	ROW(f, "api records", g->api);
	if (g->merged) {
		const struct gt_merge_stats *m = &g->merge;

		fprintf(f, "\nmerge\n");
		ROW(f, "gpu_records", m->gpu_records);
		ROW(f, "linked", m->linked);
		ROW(f, "unmatched_gpu", m->unmatched_gpu);
		ROW(f, "unmatched_calls", m->unmatched_calls);
		ROW(f, "causality", m->causality);
		ROW(f, "no_api", m->no_api);
	}
	for (size_t i = 0; i < g->ncupti; i++) {
		const struct gt_cupti_stats *c = &g->cupti[i].st;

		fprintf(f, "\ncupti agent (pid %u)\n", g->cupti[i].pid);
		ROW(f, "records", c->records);
		ROW(f, "dropped", c->dropped);
		ROW(f, "buffers", c->buffers);
		ROW(f, "unknown", c->unknown);
		ROW(f, "clock_offset_ns", c->clock_offset_ns);
		if (c->hdr.size < sizeof(*c))
			continue;
		fprintf(f, "  %-34s %12s\n", "ended", c->flags & GT_CUPTI_ST_DETACHED ? "detached" :
			c->flags & GT_CUPTI_ST_FINAL ? "final" : c->flags & GT_CUPTI_ST_PAUSED ? "paused" : "-");
		ROW(f, "lost_disk", c->lost_disk);
		ROW(f, "lost_backlog", c->lost_backlog);
	}
}

/* Capture control: the mode, the ranges and windows and the time they
 * cover, when hot calls were recorded, what did not pair (the spans are
 * finished).  Nothing for a trace that says nothing of it (one of a
 * recorder without capture modes). */
static void print_capture(FILE *f, struct dump *dp)
{
	struct capture_totals tot;
	char mode[160], an[512];

	if (!capture_spans__any(dp->cap))
		return;
	capture_spans__totals(dp->cap, &tot);
	fprintf(f, "\ncapture (%s)\n",
		gt_capture_mode__text(capture_spans__mode(dp->cap), mode, sizeof(mode)));
	ROW(f, "records", dp->capture_records);
	ROW(f, "ranges", tot.ranges);
	ROW(f, "refused ranges", tot.refused);
	ROW(f, "range time (ns)", tot.range_ns);
	ROW(f, "windows", tot.windows);
	ROW(f, "window time (ns)", tot.window_ns);
	if (capture_spans__light(dp->cap)) {
		ROW(f, "hot-call time (ns)", tot.hot_ns);
		ROW(f, "ranges before hot probes live", tot.late);
	}
	ROW(f, "trace time (ns)", tot.trace_ns);
	ROW(f, "anomalies", capture_spans__anomalies(dp->cap));
	if (capture_spans__anomalies(dp->cap))
		fprintf(f, "  %s\n", capture_spans__anomalies_text(dp->cap, an, sizeof(an)));
}

/* The daemon's triggers by kind (unknown kinds only when there are some).
 * Nothing for a trace without any. */
static void print_triggers(FILE *f, const struct dump *dp)
{
	const unsigned unknown = GT_TRIG_LAST + 1;
	uint64_t all = 0;

	for (unsigned k = GT_TRIG_SYNC; k <= unknown; k++)
		all += dp->triggers[k];
	if (!all)
		return;
	fprintf(f, "\ntriggers\n");
	for (unsigned k = GT_TRIG_SYNC; k < unknown; k++)
		ROW(f, gt_trigger_kind__name(k), dp->triggers[k]);
	if (dp->triggers[unknown])
		ROW(f, "unknown", dp->triggers[unknown]);
}

/* The daemon's overhead records by reason (unknown reasons only when there
 * are some).  Nothing for a trace without any. */
static void print_overhead(FILE *f, const struct dump *dp)
{
	const unsigned unknown = GT_OVH__COUNT;
	uint64_t all = 0;

	for (unsigned k = 0; k <= unknown; k++)
		all += dp->overhead[k];
	if (!all)
		return;
	fprintf(f, "\noverhead records\n");
	for (unsigned k = 0; k < unknown; k++)
		ROW(f, gt_overhead_reason__name(k), dp->overhead[k]);
	if (dp->overhead[unknown])
		ROW(f, "unknown", dp->overhead[unknown]);
}

/* The GPU metric samples by metric (stats -r gpu_metrics_sum has their
 * figures).  Nothing for a trace without any. */
static void print_gpu_metrics(FILE *f, const struct dump *dp)
{
	uint64_t all = 0;

	for (unsigned k = 0; k <= GT_GPUM_MAX; k++)
		all += dp->gpu_metrics[k];
	if (!all)
		return;
	fprintf(f, "\ngpu metric records\n");
	for (unsigned k = 0; k < GT_GPUM_MAX; k++)
		if (dp->gpu_metrics[k])
			ROW(f, gt_gpu_metric__name(k), dp->gpu_metrics[k]);
	if (dp->gpu_metrics[GT_GPUM_MAX])
		ROW(f, "unknown", dp->gpu_metrics[GT_GPUM_MAX]);
}

/* The calls per device, and those whose device the trace did not show.
 * Nothing for a trace without calls that run on a device. */
static void print_devices(FILE *f, const struct dump *dp)
{
	if (!dp->ndevs)
		return;
	fprintf(f, "\n%-36s %12s %10s %16s %10s %16s %10s %10s %10s\n", "devices", "launches", "copies",
		"copy_bytes", "peer", "peer_bytes", "sets", "syncs", "allocs");
	for (size_t i = 0; i < dp->ndevs; i++) {
		const struct dev_sum *d = &dp->devs[(i + 1) % dp->ndevs];	/* unknown last */
		char name[40];

		if (!d->launches && !d->copies && !d->sets && !d->syncs && !d->allocs)
			continue;
		if ((i + 1) % dp->ndevs)
			snprintf(name, sizeof(name), "  device %zu", (i + 1) % dp->ndevs - 1);
		else
			snprintf(name, sizeof(name), "  device unknown");
		fprintf(f, "%-36s %12llu %10llu %16llu %10llu %16llu %10llu %10llu %10llu\n", name,
			(unsigned long long)d->launches, (unsigned long long)d->copies,
			(unsigned long long)d->copy_bytes, (unsigned long long)d->peer,
			(unsigned long long)d->peer_bytes, (unsigned long long)d->sets,
			(unsigned long long)d->syncs, (unsigned long long)d->allocs);
	}
	if (dp->devs[0].launches || dp->devs[0].copies || dp->devs[0].sets || dp->devs[0].syncs ||
	    dp->devs[0].allocs)
		fprintf(f, "  device unknown: no context call of their thread (or of their stream's) was "
			"recorded, e.g. the recording began after the process set its device\n");
}

/* The NCCL calls per api.  Nothing for a trace without any. */
static void print_nccl(FILE *f, const struct dump *dp, const struct gt_decoder_stats *st)
{
	if (!st->nccl_calls)
		return;
	fprintf(f, "\n%-36s %12s %10s %10s %16s %16s\n", "nccl", "calls", "failed", "incomplete",
		"total_dur_ns", "bytes");
	for (unsigned i = 1; i < GT_NCCL_API__COUNT; i++) {
		const struct nccl_sum *s = &dp->nccl[i];

		if (!s->calls)
			continue;
		fprintf(f, "  %-34s %12llu %10llu %10llu %16llu %16llu\n", gt_nccl__name(i),
			(unsigned long long)s->calls, (unsigned long long)s->failed,
			(unsigned long long)s->incomplete, (unsigned long long)s->dur,
			(unsigned long long)s->bytes);
	}
	if (st->nccl_comm_unknown)
		fprintf(f, "  %llu calls on a communicator whose init the trace does not hold (made before "
			"the recording began): no uid, rank or collective number\n",
			(unsigned long long)st->nccl_comm_unknown);
}

/* The libcuda and libnccl files processes opened without probes: held
 * until they were attached, or a gap in which their calls may be missing
 * (times from the recording's start). Nothing for a trace without any. */
static void print_loads(FILE *f, const struct dump *dp, uint64_t start, uint64_t end)
{
	const struct load_sum *ls = dp->loads;
	uint64_t from, to;
	size_t i;

	if (!ls)
		return;
	fprintf(f, "\nlibcuda loads (opened before their probes were in place)\n");
	ROW(f, "loads", ls->all);
	ROW(f, "held", ls->n[GT_LL_HELD]);
	ROW(f, "hold time mean (ns)", ls->n[GT_LL_HELD] ? ls->held_ns_sum / ls->n[GT_LL_HELD] : 0);
	ROW(f, "hold time max (ns)", ls->held_ns_max);
	ROW(f, "timed out", ls->n[GT_LL_TIMEOUT]);
	ROW(f, "attach failed", ls->n[GT_LL_ATTACH_FAILED]);
	ROW(f, "not held", ls->all - ls->n[GT_LL_HELD] - ls->n[GT_LL_TIMEOUT] - ls->n[GT_LL_ATTACH_FAILED]);
	/* every load but a hold that ended with the probes in place */
	ROW(f, "gaps", ls->gaps);
	for (i = 0; i < ls->nkept; i++) {
		struct gt_libload rec;
		const struct gt_libload *l = &rec;
		char *path = term_text__escape(ls->kept[i].path);

		memcpy(&rec, ls->kept[i].rec, sizeof(rec));

		if (gt_libload__gap(l, end, &from, &to))
			fprintf(f, "  pid %u gap +%.6f..%s%.6f s (%s): %s\n", l->hdr.pid,
				(double)(from - start) / 1e9, l->end_ts ? "+" : "end +",
				(double)(to - start) / 1e9, gt_libload_outcome__text(l->outcome),
				path ? path : "?");
		else
			fprintf(f, "  pid %u held %llu ns: %s\n", l->hdr.pid,
				(unsigned long long)(l->cont_ts > l->hdr.ts ? l->cont_ts - l->hdr.ts : 0),
				path ? path : "?");
		free(path);
	}
	if (ls->all > ls->nkept)
		fprintf(f, "  ... %llu more\n", (unsigned long long)(ls->all - ls->nkept));
}

/* The header's strings come from the recorded machine and command line:
 * escaped, so that none can drive the terminal it is shown on. */
static void put_header(FILE *f, const struct gt_file_info *info)
{
	const char *raw[4] = { info->host, info->kernel, info->cmdline, info->options };
	char *esc[4];
	int i;

	for (i = 0; i < 4; i++)
		esc[i] = term_text__escape(raw[i] ? raw[i] : "");
	fprintf(f, "recorded on %s (kernel %s) by: %s\noptions: %s\n\n",
		esc[0] ? esc[0] : "?", esc[1] ? esc[1] : "?", esc[2] ? esc[2] : "?",
		esc[3] ? esc[3] : "?");
	for (i = 0; i < 4; i++)
		free(esc[i]);
}

void dump__print_summary(struct dump *dp, struct trace_reader *r, const struct gt_decoder *d)
{
	const struct gt_decoder_stats *st = gt_decoder__stats(d);
	const struct gt_counters *cn = trace_reader__counters(r);
	struct api_sum tot = { 0 };
	FILE *f = dp->o->out ? dp->o->out : stdout;
	struct trace_damage dmg;

	const struct gt_file_info *info = trace_reader__info(r);
	const struct gt_trailer *t = trace_reader__trailer(r);
	uint64_t last = gt_decoder__last_ts(d);
	char note[320], shed[384], lookups[256];
	bool sampled, sheds, lookups_off;

	capture_spans__finish(dp->cap, t && t->end_ts > last ? t->end_ts : last);
	sampled = capture_spans__sampled(dp->cap, NULL, note, sizeof(note));
	sheds = sampled && capture_spans__shed_note(dp->cap, NULL, shed, sizeof(shed));
	lookups_off = capture_spans__lookups_note(dp->cap, NULL, lookups, sizeof(lookups));
	put_header(f, info);
	fprintf(f, "%-36s %12s %10s %10s %16s\n", "api", "calls", "failed", "incomplete",
		"total_dur_ns");
	for (unsigned i = 1; i < GT_API__COUNT; i++) {
		const struct api_sum *s = &dp->sums[i];
		char name[72];

		if (!s->calls)
			continue;
		/* in light mode a hot call's row is of what was recorded */
		if (sampled && (gt_api__hot(i) ||
				capture_spans__shed_in(dp->cap, i, capture_spans__start_ts(dp->cap),
						       capture_spans__end_ts(dp->cap))))
			snprintf(name, sizeof(name), "%s *", gt_api__name(i));
		else if (lookups_off && gt_api__class(i) == GT_CLS_KERNEL_FUNC)
			snprintf(name, sizeof(name), "%s +", gt_api__name(i));
		else
			snprintf(name, sizeof(name), "%s", gt_api__name(i));
		if (s->entry_only == s->calls)	/* no exits: no result, no time */
			fprintf(f, "%-36s %12llu %10s %10llu %16s\n", name,
				(unsigned long long)s->calls, "-", (unsigned long long)s->incomplete, "-");
		else
			fprintf(f, "%-36s %12llu %10llu %10llu %16llu\n", name,
				(unsigned long long)s->calls, (unsigned long long)s->failed,
				(unsigned long long)s->incomplete, (unsigned long long)s->dur);
		tot.calls += s->calls;
		tot.failed += s->failed;
		tot.incomplete += s->incomplete;
		tot.dur += s->dur;
	}
	fprintf(f, "%-36s %12llu %10llu %10llu %16llu\n", "total",
		(unsigned long long)tot.calls, (unsigned long long)tot.failed,
		(unsigned long long)tot.incomplete, (unsigned long long)tot.dur);
	if (sampled)
		fprintf(f, "* %s\n", note);
	if (sheds)
		fprintf(f, "* %s\n", shed);
	if (lookups_off)
		fprintf(f, "+ %s\n", lookups);
	fprintf(f, "%-36s %12llu\n", "process events", (unsigned long long)dp->proc_events);
	fprintf(f, "%-36s %12llu %10llu %10s %16llu\n", "ioctls", (unsigned long long)dp->ioctls,
		(unsigned long long)dp->ioctls_failed, "", (unsigned long long)dp->ioctl_dur);
	fprintf(f, "%-36s %12llu %10s %10s %16llu\n", "off-cpu intervals", (unsigned long long)dp->offcpu,
		"", "", (unsigned long long)dp->offcpu_dur);
	if (dp->stacks)
		fprintf(f, "%-36s %12llu\n", "call stacks (distinct)", (unsigned long long)dp->stacks);
	print_devices(f, dp);
	print_nccl(f, dp, st);
	print_loads(f, dp, info->start_ts, t && t->end_ts > last ? t->end_ts : last);

	fprintf(f, "\ncounters\n");
	if (cn) {
		/* the fields of struct gt_counters in order */
		const __u64 *v = &cn->events;

		for (unsigned i = 0; i < gt_counter_count; i++)
			fprintf(f, "  %-34s %12llu\n", gt_counter_names[i], (unsigned long long)v[i]);
	}
	print_capture(f, dp);
	print_triggers(f, dp);
	print_overhead(f, dp);
	print_gpu_metrics(f, dp);
	print_gpu(f, &dp->gpu);
	fprintf(f, "\ndecoder\n");
	fprintf(f, "  %-34s %12llu\n", "unmatched_exits", (unsigned long long)st->unmatched_exits);
	fprintf(f, "  %-34s %12llu\n", "incomplete", (unsigned long long)st->open_at_end);
	fprintf(f, "  %-34s %12llu\n", "placeholder_names", (unsigned long long)st->placeholder_names);
	fprintf(f, "  %-34s %12llu\n", "unknown_records", (unsigned long long)st->unknown_records);
	fprintf(f, "  %-34s %12llu\n", "device_unknown", (unsigned long long)st->device_unknown);
	fprintf(f, "  %-34s %12llu\n", "nccl_comm_unknown", (unsigned long long)st->nccl_comm_unknown);
	trace_reader__damage_info(r, &dmg);
	if (dmg.why[0])
		fprintf(f, "\ndamage: %s\n", dmg.why);
	if (dmg.bad)
		fprintf(f, "%sdamage: %llu records too short for their type, skipped\n",
			dmg.why[0] ? "" : "\n", (unsigned long long)dmg.bad);
}
