// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf dump`: every decoded call, process event, capture record,
 * flight-recorder trigger and overhead record of a trace as one JSON object
 * per line, or with --summary a per-api table, the counters, the capture
 * ranges and windows, the triggers by kind and the overhead records by
 * reason (counted here, printed by dump_summary.c).
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
#include "export/dump_int.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/vec.h"

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

static void hex16(struct obuf *o, const uint8_t b[16])
{
	char s[33];

	for (int i = 0; i < 16; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	obuf__mem(o, s, 32);
}

/* A clock pair (the recorder's own: pid 0): {"ts","pid","type":"clock","kind","realtime_ns","half_span_ns",
 * "sync","max_error_ns","est_error_ns","sync_offset_ns","boot_id"} (the
 * errors only when known). */
static int dump_clock(struct dump *dp, const struct gt_hdr *rec)
{
	static const char *const kinds[] = { "?", "start", "periodic", "end" };
	static const char *const syncs[] = { "unknown", "synced", "unsynced" };
	const struct gt_clock *c = (const void *)rec;
	struct obuf *o = &dp->ob;

	OBUF_LIT(o, "{\"ts\":");
	obuf__u64(o, rec->ts);
	OBUF_LIT(o, ",\"pid\":0,\"type\":\"clock\",\"kind\":\"");
	obuf__mem(o, kinds[c->kind <= 3 ? c->kind : 0], strlen(kinds[c->kind <= 3 ? c->kind : 0]));
	OBUF_LIT(o, "\",\"realtime_ns\":");
	obuf__i64(o, c->realtime_ns);
	OBUF_LIT(o, ",\"half_span_ns\":");
	obuf__u64(o, c->half_span_ns);
	OBUF_LIT(o, ",\"sync\":\"");
	obuf__mem(o, syncs[c->sync <= 2 ? c->sync : 0], strlen(syncs[c->sync <= 2 ? c->sync : 0]));
	OBUF_LIT(o, "\"");
	if (c->max_error_ns != UINT64_MAX) {
		OBUF_LIT(o, ",\"max_error_ns\":");
		obuf__u64(o, c->max_error_ns);
	}
	if (c->est_error_ns != UINT64_MAX) {
		OBUF_LIT(o, ",\"est_error_ns\":");
		obuf__u64(o, c->est_error_ns);
	}
	OBUF_LIT(o, ",\"sync_offset_ns\":");
	obuf__i64(o, c->sync_offset_ns);
	OBUF_LIT(o, ",\"boot_id\":\"");
	hex16(o, c->boot_id);
	OBUF_LIT(o, "\"}\n");
	return o->err;
}

/* A job trace's host (pid 0): {"ts","pid","type":"host","host","name","file","method",
 * "offset_ns","realtime_offset_ns","collectives","residual_ns",
 * "residual_max_ns","boot_id"}. */
static int dump_host(struct dump *dp, const struct gt_hdr *rec)
{
	static const char *const methods[] = { "reference", "same_boot", "realtime", "collectives" };
	const struct gt_host *h = (const void *)rec;
	struct obuf *o = &dp->ob;
	size_t room = rec->size - sizeof(*h), nlen = h->len <= room ? h->len : room;
	size_t n1 = strnlen(h->name, nlen), n2 = n1 < nlen ? strnlen(h->name + n1 + 1, nlen - n1 - 1) : 0;

	OBUF_LIT(o, "{\"ts\":");
	obuf__u64(o, rec->ts);
	OBUF_LIT(o, ",\"pid\":0,\"type\":\"host\",\"host\":");
	obuf__u64(o, rec->pid);
	OBUF_LIT(o, ",\"name\":");
	obuf__json_strn(o, h->name, n1);
	OBUF_LIT(o, ",\"file\":");
	obuf__json_strn(o, n1 < nlen ? h->name + n1 + 1 : "", n2);
	OBUF_LIT(o, ",\"method\":\"");
	obuf__mem(o, methods[h->method <= 3 ? h->method : 0], strlen(methods[h->method <= 3 ? h->method : 0]));
	OBUF_LIT(o, "\",\"offset_ns\":");
	obuf__i64(o, h->offset_ns);
	OBUF_LIT(o, ",\"realtime_offset_ns\":");
	obuf__i64(o, h->realtime_ns);
	OBUF_LIT(o, ",\"collectives\":");
	obuf__u64(o, h->collectives);
	OBUF_LIT(o, ",\"residual_ns\":");
	obuf__u64(o, h->residual_ns);
	OBUF_LIT(o, ",\"residual_max_ns\":");
	obuf__u64(o, h->residual_max_ns);
	OBUF_LIT(o, ",\"boot_id\":\"");
	hex16(o, h->boot_id);
	OBUF_LIT(o, "\"}\n");
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
	if (rec->type == GT_REC_CLOCK)
		return dp->o->summary ? 0 : dump_clock(dp, rec);
	if (rec->type == GT_REC_HOST)
		return dp->o->summary ? 0 : dump_host(dp, rec);
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
		dump__print_summary(dp, r, d);
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
