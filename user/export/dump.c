// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf dump`: every decoded call, process event, capture record,
 * flight-recorder trigger and overhead record of a trace as one JSON object
 * per line, or with --summary a per-api table, the counters, the capture
 * ranges and windows, the triggers by kind and the overhead records by
 * reason.
 *
 * Dumps of large traces are piped into jq or scripts: lines are built in
 * lib/obuf's buffer, from the same field list the exports use.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "export/dump.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/term_text.h"
#include "lib/vec.h"

/* Per-api totals of --summary. */
struct api_sum {
	uint64_t calls;		/* calls emitted, incomplete ones included */
	uint64_t failed;	/* calls that returned non-zero */
	uint64_t incomplete;	/* calls whose exit was not recorded */
	uint64_t entry_only;	/* launches recorded at entry only (no exit by design) */
	uint64_t dur;		/* sum of dur of calls with an exit, ns */
};

/* The calls of one device, for --summary (decode/devices.c says how a
 * call's device is known); index 0 of struct dump's array is for the calls
 * whose device the trace did not show. */
struct dev_sum {
	uint64_t launches;	/* launch calls */
	uint64_t copies;	/* copy calls */
	uint64_t copy_bytes;	/* their bytes */
	uint64_t peer;		/* of which peer copies (kind PtoP) issued on this device */
	uint64_t peer_bytes;	/* their bytes */
	uint64_t sets, syncs, allocs;	/* memset, sync and alloc/free calls */
};

/* Per NCCL api totals of --summary. */
struct nccl_sum {
	uint64_t calls, failed, incomplete;
	uint64_t dur;		/* of the calls with an exit that did not fail, ns */
	uint64_t bytes;		/* what the data calls named (count x element size) */
};

/* One process' CUPTI agent counters (GT_REC_CUPTI_STATS), for --summary. */
struct cupti_sum {
	uint32_t pid;
	struct gt_cupti_stats st;	/* the latest record of the pid */
};

/* GPU records of a merged trace, for --summary. */
struct gpu_sum {
	uint64_t n[3];		/* kernels, copies, sets */
	uint64_t dur[3];	/* their total duration on the GPU, ns */
	uint64_t linked;	/* of all three, linked to their call */
	uint64_t causality;	/* linked, started before their call */
	uint64_t nvtx;		/* NVTX ranges and marks */
	uint64_t nvtx_dur;	/* their total duration, ns */
	uint64_t api;		/* GT_REC_GPU_API records (merger input) */
	bool merged;		/* a GT_REC_MERGE_STATS was seen: merge holds the last */
	struct gt_merge_stats merge;
	struct cupti_sum *cupti;	/* per process, in order of first record */
	size_t ncupti, capcupti;
};

/* The libcuda loads of --summary (GT_REC_LIBLOAD): every one counted, the
 * first LOADS_KEPT listed. */
#define LOADS_KEPT 32

struct load_kept {
	/* the record's fixed part (a struct with a flexible array cannot be
	 * a member), then its path (BPF reports at most 256 bytes) */
	_Alignas(8) unsigned char rec[sizeof(struct gt_libload)];
	char path[256];
};

struct load_sum {
	uint64_t n[GT_LL__COUNT + 1];	/* by outcome, the last unknown ones */
	uint64_t held_ns_sum, held_ns_max;	/* the holds' stop to continuation */
	struct load_kept kept[LOADS_KEPT];
	size_t nkept;
	uint64_t all;			/* loads in all */
	uint64_t gaps;			/* of them, those that left a gap */
};

struct dump {
	const struct dump_opts *o;
	struct gt_decoder *d;	/* names of GPU kernels */
	struct obuf ob;
	struct gpu_sum gpu;
	struct api_sum sums[GT_API__COUNT];
	uint64_t proc_events;	/* exec/fork/exit/seen records (summary) */
	uint64_t ioctls;	/* ioctl records (summary) */
	uint64_t ioctls_failed;	/* of which returned an error */
	uint64_t ioctl_dur;	/* their total duration, ns */
	uint64_t offcpu;	/* off-CPU intervals (summary) */
	uint64_t offcpu_dur;	/* their total duration, ns */
	struct capture_spans *cap;	/* capture ranges and windows (summary) */
	uint64_t capture_records;	/* GT_REC_RANGE and GT_REC_CAPTURE records (summary) */
	uint64_t triggers[GT_TRIG_LAST + 2];	/* GT_REC_TRIGGER by kind, the last unknown ones (summary) */
	uint64_t overhead[GT_OVH__COUNT + 1];	/* GT_REC_OVERHEAD by reason, the last unknown ones (summary) */
	uint64_t gpu_metrics[GT_GPUM_MAX + 1];	/* GT_REC_GPU_METRIC by metric, the last unknown ones (summary) */
	struct dev_sum *devs;	/* [0] device unknown, [1 + N] device N (summary) */
	struct nccl_sum nccl[GT_NCCL_API__COUNT];	/* by enum gt_nccl_api (summary) */
	size_t ndevs, capdevs;
	struct load_sum *loads;	/* libcuda loads (summary), NULL until the first */
	uint64_t stacks;	/* GT_REC_STACK records (summary) */
};

/* One JSON object per line: the fields of export/fields.h in their order. */
static void put_fields(struct obuf *o, const struct cf_val *v, unsigned n)
{
	OBUF_LIT(o, "{");
	fields__json(o, v, n, 0);
	OBUF_LIT(o, "}\n");
}

static int dev_count(struct dump *dp, const struct gt_callrec *c)
{
	size_t i = c->device >= 0 ? (size_t)c->device + 1 : 0;
	struct dev_sum *d;

	if (i >= dp->ndevs) {
		if (vec__reserve(&dp->devs, &dp->capdevs, dp->ndevs, i + 1 - dp->ndevs, 8))
			return -ENOMEM;
		memset(&dp->devs[dp->ndevs], 0, (i + 1 - dp->ndevs) * sizeof(*d));
		dp->ndevs = i + 1;
	}
	d = &dp->devs[i];
	switch (c->type) {
	case GT_T_LAUNCH:
		d->launches++;
		break;
	case GT_T_MEMCPY:
		d->copies++;
		d->copy_bytes += c->bytes;
		if (c->kind == GT_COPY_PTOP) {
			d->peer++;
			d->peer_bytes += c->bytes;
		}
		break;
	case GT_T_MEMSET:
		d->sets++;
		break;
	case GT_T_SYNC:
		d->syncs++;
		break;
	default:
		d->allocs++;
		break;
	}
	return 0;
}

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct dump *dp = ctx;
	struct cf_val v[CF_MAX];

	if (dp->o->summary) {
		struct api_sum *s = &dp->sums[c->api < GT_API__COUNT ? c->api : 0];
		int err = gt_callrec__on_device(c) ? dev_count(dp, c) : 0;

		if (err)
			return err;

		s->calls++;
		if (!c->has_exit) {
			s->incomplete += !c->entry_only;
			s->entry_only += c->entry_only;
		} else {
			s->dur += c->dur;
			if (c->ret)
				s->failed++;
		}
		return 0;
	}
	put_fields(&dp->ob, v, fields__call(c, v));
	return dp->ob.err;
}

static int on_nccl(void *ctx, const struct gt_ncclrec *nc)
{
	struct dump *dp = ctx;
	struct cf_val v[CF_MAX];

	if (dp->o->summary) {
		struct nccl_sum *s = &dp->nccl[nc->api < GT_NCCL_API__COUNT ? nc->api : 0];

		s->calls++;
		s->bytes += nc->bytes;
		if (!nc->has_exit)
			s->incomplete++;
		else if (nc->ret && nc->ret != 7)
			s->failed++;
		else
			s->dur += nc->dur;
		return 0;
	}
	put_fields(&dp->ob, v, fields__nccl(nc, v));
	return dp->ob.err;
}

static int cupti_add(struct gpu_sum *g, const struct gt_cupti_stats *cs)
{
	struct cupti_sum *c = NULL;

	for (size_t i = 0; i < g->ncupti; i++)
		if (g->cupti[i].pid == cs->hdr.pid)
			c = &g->cupti[i];
	if (!c) {
		if (vec__reserve(&g->cupti, &g->capcupti, g->ncupti, 1, 8))
			return -ENOMEM;
		c = &g->cupti[g->ncupti++];
		c->pid = cs->hdr.pid;
	}
	/* an older agent's record ends before flags */
	memset(&c->st, 0, sizeof(c->st));
	memcpy(&c->st, cs, cs->hdr.size < sizeof(c->st) ? cs->hdr.size : sizeof(c->st));
	return 0;
}

/* Counts a record of the GPU side; true when rec was one. */
static bool gpu_count(struct gpu_sum *g, const struct gt_hdr *rec, int *err)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *c = (const void *)rec;
	uint16_t flags;
	int i;

	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
		i = 0;
		flags = k->flags;
		g->dur[i] += k->dur;
		break;
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		i = rec->type == GT_REC_GPU_MEMCPY ? 1 : 2;
		flags = c->flags;
		g->dur[i] += c->dur;
		break;
	case GT_REC_NVTX:
		g->nvtx++;
		g->nvtx_dur += ((const struct gt_nvtx *)rec)->dur;
		return true;
	case GT_REC_GPU_API:
		g->api++;
		return true;
	case GT_REC_MERGE_STATS:
		g->merged = true;
		g->merge = *(const struct gt_merge_stats *)rec;
		return true;
	case GT_REC_CUPTI_STATS:
		*err = cupti_add(g, (const struct gt_cupti_stats *)rec);
		return true;
	default:
		return false;
	}
	g->n[i]++;
	g->linked += !!(flags & GT_GPU_LINKED);
	g->causality += !!(flags & GT_GPU_CAUSALITY);
	return true;
}

/* A libcuda load for the summary (the decoder passes on only records long
 * enough for their type). */
static int load_count(struct dump *dp, const struct gt_libload *l)
{
	struct load_sum *ls = dp->loads;
	size_t len = l->hdr.size - sizeof(*l);
	uint64_t from, to;

	if (!ls && !(ls = dp->loads = calloc(1, sizeof(*ls))))
		return -ENOMEM;
	ls->all++;
	ls->gaps += gt_libload__gap(l, UINT64_MAX, &from, &to);
	ls->n[l->outcome < GT_LL__COUNT ? l->outcome : GT_LL__COUNT]++;
	if (l->outcome == GT_LL_HELD && l->cont_ts > l->hdr.ts) {
		ls->held_ns_sum += l->cont_ts - l->hdr.ts;
		if (l->cont_ts - l->hdr.ts > ls->held_ns_max)
			ls->held_ns_max = l->cont_ts - l->hdr.ts;
	}
	if (ls->nkept < LOADS_KEPT) {
		struct load_kept *k = &ls->kept[ls->nkept++];

		memcpy(k->rec, l, sizeof(k->rec));
		if (len > sizeof(k->path) - 1)
			len = sizeof(k->path) - 1;
		memcpy(k->path, l->path, len);
		k->path[len] = 0;
	}
	return 0;
}

/* A stack's flags as dump writes them, in this order. */
static const struct {
	uint16_t flag;
	const char *json;
} stack_flags[] = {
	{ GT_STACK_CUT, ",\"cut\":true" },
	{ GT_STACK_FAULT, ",\"unwound\":false" },
	{ GT_STACK_PYTHON, ",\"python\":true" },
	{ GT_STACK_PY_CUT, ",\"python_cut\":true" },
	{ GT_STACK_PY_FAULT, ",\"python_unreadable\":true" },
	{ GT_STACK_PY_AFTER, ",\"python_after_native\":true" },
	{ GT_STACK_PY_SKIPPED, ",\"python_frame_unread\":true" },
	{ GT_STACK_AT_EXIT, ",\"at_exit\":true" },
	{ GT_STACK_PY_MAIN, ",\"python_of_main_thread\":true" },
};

/* A stack of the table (the calls carry its id): its frames as names,
 * innermost first: {"ts","pid","type":"stack","id","cut","frames":[...]};
 * a Python frame reads "function (file:line)". */
static int dump_stack(struct dump *dp, const struct gt_hdr *rec)
{
	const struct gt_stack *s = (const void *)rec;
	struct obuf *o = &dp->ob;
	uint16_t flags;

	gt_decoder__stack(dp->d, s->id, &flags);

	OBUF_LIT(o, "{\"ts\":");
	obuf__u64(o, rec->ts);
	OBUF_LIT(o, ",\"pid\":");
	obuf__u64(o, rec->pid);
	OBUF_LIT(o, ",\"type\":\"stack\",\"id\":");
	obuf__u64(o, s->id);
	for (size_t i = 0; i < sizeof(stack_flags) / sizeof(stack_flags[0]); i++)
		if (flags & stack_flags[i].flag)
			obuf__mem(o, stack_flags[i].json, strlen(stack_flags[i].json));
	OBUF_LIT(o, ",\"frames\":");
	fields__json_frames(o, dp->d, s->id);
	OBUF_LIT(o, "}\n");
	return o->err;
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct dump *dp = ctx;
	struct cf_val v[CF_MAX];
	unsigned n;
	int err = 0;

	if (dp->o->summary && gpu_count(&dp->gpu, rec, &err))
		return err;
	if (rec->type == GT_REC_STACK) {
		dp->stacks++;
		return dp->o->summary ? 0 : dump_stack(dp, rec);
	}
	if (dp->o->summary && (rec->type == GT_REC_RANGE || rec->type == GT_REC_CAPTURE)) {
		dp->capture_records++;
		return capture_spans__feed(dp->cap, rec);
	}
	if (dp->o->summary && rec->type == GT_REC_TRIGGER) {
		uint32_t kind = ((const struct gt_trigger *)rec)->kind;

		/* the decoder passes on only records long enough for their type */
		dp->triggers[kind >= GT_TRIG_SYNC && kind <= GT_TRIG_LAST ? kind : GT_TRIG_LAST + 1]++;
		return 0;
	}
	if (dp->o->summary && rec->type == GT_REC_OVERHEAD) {
		uint32_t reason = ((const struct gt_overhead *)rec)->reason;

		dp->overhead[reason < GT_OVH__COUNT ? reason : GT_OVH__COUNT]++;
		return capture_spans__feed(dp->cap, rec);	/* sheds label rows */
	}
	if (dp->o->summary && rec->type == GT_REC_LIBLOAD)
		return load_count(dp, (const struct gt_libload *)rec);
	if (dp->o->summary && rec->type == GT_REC_GPU_METRIC) {
		uint32_t id = ((const struct gt_gpu_metric *)rec)->metric;

		dp->gpu_metrics[gt_gpu_metric__name(id) ? id : GT_GPUM_MAX]++;
		return 0;
	}
	n = fields__record(dp->d, rec, v);
	if (!n)
		return 0;
	if (dp->o->summary) {
		if (rec->type == GT_REC_IOCTL) {
			const struct gt_ioctl *io = (const void *)rec;

			dp->ioctls++;
			dp->ioctls_failed += io->ret < 0;
			dp->ioctl_dur += io->dur;
		} else if (rec->type == GT_REC_OFFCPU) {
			dp->offcpu++;
			dp->offcpu_dur += ((const struct gt_offcpu *)rec)->dur;
		} else {
			dp->proc_events++;
		}
		return 0;
	}
	put_fields(&dp->ob, v, n);
	return dp->ob.err;
}

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
		fprintf(f, "  %-34s %12s\n", "ended", c->flags & GT_CUPTI_ST_FINAL ? "final" :
			c->flags & GT_CUPTI_ST_PAUSED ? "paused" : "-");
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

static void print_summary(struct dump *dp, struct trace_reader *r, const struct gt_decoder *d)
{
	const struct gt_decoder_stats *st = gt_decoder__stats(d);
	const struct gt_counters *cn = trace_reader__counters(r);
	struct api_sum tot = { 0 };
	FILE *f = dp->o->out ? dp->o->out : stdout;
	struct trace_damage dmg;

	const struct gt_file_info *info = trace_reader__info(r);
	const struct gt_trailer *t = trace_reader__trailer(r);
	uint64_t last = gt_decoder__last_ts(d);
	char note[320], shed[384];
	bool sampled, sheds;

	capture_spans__finish(dp->cap, t && t->end_ts > last ? t->end_ts : last);
	sampled = capture_spans__sampled(dp->cap, NULL, note, sizeof(note));
	sheds = sampled && capture_spans__shed_note(dp->cap, NULL, shed, sizeof(shed));
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
		/* the fields of struct gt_counters in order, _reserved left out */
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

int dump__run(const struct dump_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct trace_reader *r = NULL;
	struct gt_decoder *d = NULL;
	enum gt_pass_fail fail;
	const char *msg = NULL;
	struct dump *dp;
	int rc, ret = 1;

	dp = calloc(1, sizeof(*dp));
	if (!dp || obuf__init(&dp->ob, o->out ? o->out : stdout)) {
		fprintf(err, "gtrace-bpf: failed to allocate output buffer: %s\n", strerror(ENOMEM));
		goto out;
	}
	dp->o = o;

	rc = trace_reader__open(o->path, &r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path,
			msg ? msg : strerror(-rc));
		goto out;
	}
	fields__set_trace_info(trace_reader__info(r));
	d = gt_decoder__new(on_call, on_other, dp);
	if (d)
		gt_decoder__set_nccl_cb(d, on_nccl);
	dp->cap = o->summary ? capture_spans__new(trace_reader__info(r)) : NULL;
	if (!d || (o->summary && !dp->cap)) {
		fprintf(err, "gtrace-bpf: failed to create decoder: %s\n", strerror(ENOMEM));
		goto out;
	}
	dp->d = d;
	rc = gt_pass__run(r, d, NULL, &fail);
	if (rc && fail == GT_PASS_READ) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, strerror(-rc));
		goto out;
	}
	if (rc && !dp->ob.err) {
		fprintf(err, "gtrace-bpf: failed to decode %s: %s\n", o->path, strerror(-rc));
		goto out;
	}
	if (!rc && !o->summary)
		rc = obuf__flush(&dp->ob);
	if (!rc && o->summary)
		print_summary(dp, r, d);
	if (!rc && fflush(dp->ob.f))
		rc = -errno;
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to write output: %s\n", strerror(-rc));
		goto out;
	}
	/* what was read is shown; a damaged input still exits 1 */
	ret = trace_reader__report_damage(r, o->path, o->summary ? "the summary covers the records read"
								    : "showing the records read", err);
out:
	gt_decoder__free(d);
	trace_reader__close(r);
	if (dp) {
		obuf__free(&dp->ob);
		free(dp->gpu.cupti);
		free(dp->devs);
		free(dp->loads);
		capture_spans__free(dp->cap);
	}
	free(dp);
	return ret;
}
