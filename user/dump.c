// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf dump`: every decoded call and process event of a trace as one
 * JSON object per line, or with --summary a per-api table and the counters.
 *
 * Dumps of large traces are piped into jq or scripts: lines are built in
 * callfmt's buffer, from the same field list the exports use.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "callfmt.h"
#include "decode.h"
#include "dump.h"
#include "trace_file.h"

/* Per-api totals of --summary. */
struct api_sum {
	uint64_t calls;		/* calls emitted, incomplete ones included */
	uint64_t failed;	/* calls that returned non-zero */
	uint64_t incomplete;	/* calls without an exit */
	uint64_t dur;		/* sum of dur of calls with an exit, ns */
};

struct dump {
	const struct dump_opts *o;
	struct obuf ob;
	struct api_sum sums[GT_API__COUNT];
	uint64_t proc_events;	/* exec/fork/exit/seen records (summary) */
	uint64_t ioctls;	/* ioctl records (summary) */
	uint64_t ioctls_failed;	/* of which returned an error */
	uint64_t ioctl_dur;	/* their total duration, ns */
	uint64_t offcpu;	/* off-CPU intervals (summary) */
	uint64_t offcpu_dur;	/* their total duration, ns */
};

/* One JSON object per line: the fields of callfmt in their order. */
static void put_fields(struct obuf *o, const struct cf_val *v, unsigned n)
{
	OBUF_LIT(o, "{");
	callfmt__json(o, v, n, 0);
	OBUF_LIT(o, "}\n");
}

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct dump *dp = ctx;
	struct cf_val v[CF_MAX];

	if (dp->o->summary) {
		struct api_sum *s = &dp->sums[c->api < GT_API__COUNT ? c->api : 0];

		s->calls++;
		if (!c->has_exit) {
			s->incomplete++;
		} else {
			s->dur += c->dur;
			if (c->ret)
				s->failed++;
		}
		return 0;
	}
	put_fields(&dp->ob, v, callfmt__call(c, v));
	return dp->ob.err;
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct dump *dp = ctx;
	struct cf_val v[CF_MAX];
	unsigned n = callfmt__proc(rec, v);

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

static void print_summary(struct dump *dp, struct trace_reader *r, const struct gt_decoder *d)
{
	const struct gt_decoder_stats *st = gt_decoder__stats(d);
	const struct gt_counters *cn = trace_reader__counters(r);
	struct api_sum tot = { 0 };
	FILE *f = dp->o->out ? dp->o->out : stdout;

	const struct gt_file_info *info = trace_reader__info(r);

	fprintf(f, "recorded on %s (kernel %s) by: %s\noptions: %s\n\n", info->host, info->kernel,
		info->cmdline, info->options);
	fprintf(f, "%-36s %12s %10s %10s %16s\n", "api", "calls", "failed", "incomplete",
		"total_dur_ns");
	for (unsigned i = 1; i < GT_API__COUNT; i++) {
		const struct api_sum *s = &dp->sums[i];

		if (!s->calls)
			continue;
		fprintf(f, "%-36s %12llu %10llu %10llu %16llu\n", gt_api__name(i),
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
	fprintf(f, "%-36s %12llu\n", "process events", (unsigned long long)dp->proc_events);
	fprintf(f, "%-36s %12llu %10llu %10s %16llu\n", "ioctls", (unsigned long long)dp->ioctls,
		(unsigned long long)dp->ioctls_failed, "", (unsigned long long)dp->ioctl_dur);
	fprintf(f, "%-36s %12llu %10s %10s %16llu\n", "off-cpu intervals", (unsigned long long)dp->offcpu,
		"", "", (unsigned long long)dp->offcpu_dur);

	fprintf(f, "\ncounters\n");
	if (cn) {
		/* the fields of struct gt_counters in order, _reserved left out */
		const __u64 *v = &cn->events;

		for (unsigned i = 0; i < gt_counter_count; i++)
			fprintf(f, "  %-34s %12llu\n", gt_counter_names[i], (unsigned long long)v[i]);
	}
	fprintf(f, "\ndecoder\n");
	fprintf(f, "  %-34s %12llu\n", "unmatched_exits", (unsigned long long)st->unmatched_exits);
	fprintf(f, "  %-34s %12llu\n", "incomplete", (unsigned long long)st->open_at_end);
	fprintf(f, "  %-34s %12llu\n", "placeholder_names", (unsigned long long)st->placeholder_names);
	fprintf(f, "  %-34s %12llu\n", "unknown_records", (unsigned long long)st->unknown_records);
	if (trace_reader__truncated(r))
		fprintf(f, "\ndamage: %s\n", trace_reader__damage(r));
}

int dump__run(const struct dump_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct trace_reader *r = NULL;
	struct gt_decoder *d = NULL;
	const struct gt_hdr *rec;
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
	callfmt__set_trace_info(trace_reader__info(r));
	d = gt_decoder__new(on_call, on_other, dp);
	if (!d) {
		fprintf(err, "gtrace-bpf: failed to create decoder: %s\n", strerror(ENOMEM));
		goto out;
	}
	for (;;) {
		rc = trace_reader__next(r, &rec);
		if (rc < 0) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, strerror(-rc));
			goto out;
		}
		if (rc == 0)
			break;
		rc = gt_decoder__feed(d, rec);
		if (rc)
			break;
	}
	if (!rc)
		rc = gt_decoder__finish(d);
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
	if (trace_reader__truncated(r))
		fprintf(err, "gtrace-bpf: warning: %s: %s; showing the records before it\n",
			o->path, trace_reader__damage(r));
	ret = 0;
out:
	gt_decoder__free(d);
	trace_reader__close(r);
	if (dp)
		obuf__free(&dp->ob);
	free(dp);
	return ret;
}
