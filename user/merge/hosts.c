// SPDX-License-Identifier: MIT
/*
 * merge --hosts (merge/hosts.h): one job trace of several hosts' traces.
 *
 * First pass over each trace: its clock pairs (GT_REC_CLOCK; an older trace
 * has only its header's pair), its boot, and the NCCL collectives its
 * processes made, as the decoder pairs them (communicator uid, number on
 * it, rank, entry and exit).  merge/align.c maps each host's clock onto the
 * first's.  Second pass: every record of every trace, each trace's in its
 * own order, the traces interleaved by time, times moved by their host's
 * offset and process and thread ids given the host's bits; the clock pairs
 * and counter snapshots stay behind (the GT_REC_HOST records and the
 * trailer say what they said).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "decode/decode.h"
#include "decode/pass.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/cmp.h"
#include "lib/installer.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "merge/hosts.h"

struct input {
	const char *path;
	struct trace_reader *r;
	struct align_pair *rt;		/* its pairs: CLOCK_REALTIME - CLOCK_MONOTONIC */
	size_t nrt, rt_cap;
	uint8_t boot[16];
	uint64_t max_error;		/* the last pair's, UINT64_MAX unknown */
	const struct gt_hdr *cur;	/* second pass: its next record, NULL at its end */
	bool job;			/* a job trace already */
};

struct hosts {
	struct input *in;
	size_t n;
	size_t cur;			/* first pass: the input being read */
	struct align_part *parts;
	size_t nparts, parts_cap;
	struct align_host *h;
};

static int on_call(void *ctx, const struct gt_callrec *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

/* A collective whose communicator the trace showed, completed: one part. */
static int on_nccl(void *ctx, const struct gt_ncclrec *n)
{
	struct hosts *hs = ctx;

	/* one between ncclGroupStart and ncclGroupEnd returns at once: its
	 * group's end is where the ranks meet */
	if (n->kind != GT_NCCL_K_COLL || !n->has_exit || !n->uid || !n->seq || n->in_group)
		return 0;
	if (vec__reserve(&hs->parts, &hs->parts_cap, hs->nparts, 1, 1024))
		return -ENOMEM;
	hs->parts[hs->nparts++] = (struct align_part){
		.uid = n->uid, .seq = n->seq, .entry = n->ts, .exit = n->ts + n->dur,
		.host = (uint32_t)hs->cur, .pid = n->pid, .rank = n->rank,
	};
	return 0;
}

static int first_record(void *ctx, const struct gt_hdr *h)
{
	struct hosts *hs = ctx;
	struct input *in = &hs->in[hs->cur];
	const struct gt_clock *c = (const void *)h;

	if (h->type != GT_REC_CLOCK || h->size < sizeof(*c))
		return 0;
	if (vec__reserve(&in->rt, &in->rt_cap, in->nrt, 1, 16))
		return -ENOMEM;
	in->rt[in->nrt++] = (struct align_pair){ c->realtime_ns - (int64_t)h->ts, c->half_span_ns };
	memcpy(in->boot, c->boot_id, 16);
	in->max_error = c->max_error_ns;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	return cmp__u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* a += b, every counter (the struct is one of __u64s) */
static void counters_add(struct gt_counters *a, const struct gt_counters *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
}

/* Reads input i's clock pairs and collectives. */
static int first_pass(struct hosts *hs, size_t i)
{
	struct input *in = &hs->in[i];
	struct gt_decoder *d = gt_decoder__new(on_call, NULL, hs);
	enum gt_pass_fail fail;
	int err;

	if (!d)
		return -ENOMEM;
	gt_decoder__set_nccl_cb(d, on_nccl);
	hs->cur = i;
	in->max_error = UINT64_MAX;
	err = gt_pass__run(in->r, d, &(struct gt_pass){ .ctx = hs, .record = first_record }, &fail);
	gt_decoder__free(d);
	if (err < 0) {
		pr_err("cannot read %s: %s", in->path, strerror(-err));
		return err;
	}
	/* an older trace: its header's pair */
	if (!in->nrt) {
		if (vec__reserve(&in->rt, &in->rt_cap, 0, 1, 1))
			return -ENOMEM;
		in->rt[in->nrt++] = (struct align_pair){ trace_reader__info(in->r)->realtime_offset_ns, 0 };
	}
	hs->h[i].rt_offset_ns = align__realtime(in->rt, in->nrt);
	memcpy(hs->h[i].boot_id, in->boot, 16);
	trace_reader__rewind(in->r);
	return 0;
}

/* pid or tid of host h in the job trace */
static uint32_t job_id(uint32_t id, uint32_t h)
{
	return id ? id | h << GT_HOST_SHIFT : 0;
}

static void move_ts(__u64 *ts, int64_t off)
{
	if (*ts)
		*ts = (__u64)((int64_t)*ts + off);
}

/* rec of host h, its times moved by off, its ids given h's bits, into buf
 * (GT_REC_MAX_SIZE bytes).  False for a record that stays behind. */
static bool job_record(const struct gt_hdr *rec, uint32_t h, int64_t off, uint8_t *buf)
{
	struct gt_hdr *o = (void *)buf;

	if (rec->type == GT_REC_CLOCK || rec->type == GT_REC_STATS || rec->type == GT_REC_HOST)
		return false;
	memcpy(buf, rec, rec->size);
	o->ts = (uint64_t)((int64_t)o->ts + off);
	o->pid = job_id(o->pid, h);
	o->tid = job_id(o->tid, h);
	if (!gt_rec__size_ok(o))
		return true;
	switch (o->type) {
	case GT_REC_GPU_KERNEL: {
		struct gt_gpu_kernel *k = (void *)o;
		struct gt_gpu_graph *g = gt_gpu_kernel__graph(k);

		move_ts(&k->launch_ts, off);
		if (g) {
			move_ts(&g->capture_ts, off);
			g->capture_tid = job_id(g->capture_tid, h);
		}
		break;
	}
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		move_ts(&((struct gt_gpu_copy *)o)->launch_ts, off);
		break;
	case GT_REC_LIBLOAD:
		move_ts(&((struct gt_libload *)o)->end_ts, off);
		move_ts(&((struct gt_libload *)o)->cont_ts, off);
		break;
	case GT_REC_EXEC:
	case GT_REC_FORK:
	case GT_REC_EXIT:
	case GT_REC_PROC_INFO:
		((struct gt_proc_evt *)o)->ppid = job_id(((struct gt_proc_evt *)o)->ppid, h);
		break;
	case GT_REC_NAME: {
		struct gt_name *nm = (void *)o;

		if (nm->kind == GT_NAME_PROCESS || nm->kind == GT_NAME_THREAD)
			nm->key = job_id((uint32_t)nm->key, h);
		break;
	}
	default:
		break;
	}
	return true;
}

static int write_host(struct trace_writer *w, const struct hosts *hs, size_t i, uint64_t ts)
{
	const struct gt_file_info *info = trace_reader__info(hs->in[i].r);
	const char *name = info->host && *info->host ? info->host : "?", *base = strrchr(hs->in[i].path, '/');
	size_t n1 = strlen(name) + 1, n2, len, size;
	uint64_t buf[(sizeof(struct gt_host) + 1024) / 8];
	struct gt_host *g = (void *)buf;

	base = base ? base + 1 : hs->in[i].path;
	n1 = n1 > 256 ? 256 : n1;
	n2 = strlen(base) + 1;
	n2 = n2 > 512 ? 512 : n2;
	len = n1 + n2;
	size = GT_REC_ALIGN(sizeof(*g) + len);
	memset(g, 0, size);
	g->hdr.type = GT_REC_HOST;
	g->hdr.size = (uint16_t)size;
	g->hdr.ts = ts;
	g->hdr.pid = (uint32_t)i;
	g->offset_ns = hs->h[i].offset_ns;
	g->realtime_ns = hs->h[i].rt_rel_ns;
	g->residual_ns = hs->h[i].residual_ns;
	g->residual_max_ns = hs->h[i].residual_max_ns;
	g->collectives = hs->h[i].collectives;
	g->method = hs->h[i].method;
	g->max_error_ns = hs->in[i].max_error;
	memcpy(g->boot_id, hs->h[i].boot_id, 16);
	g->len = (uint16_t)len;
	memcpy(g->name, name, n1 - 1);
	memcpy(g->name + n1, base, n2 - 1);
	return trace_writer__append(w, &g->hdr);
}

/* The next record of input i into in->cur (NULL at its end). */
static int advance(struct input *in)
{
	int err = trace_reader__next(in->r, &in->cur);

	if (err <= 0)
		in->cur = NULL;
	return err < 0 ? err : 0;
}

static void say_alignment(const struct hosts *hs, const struct align_stats *st)
{
	static const char *const how[] = {
		[GT_HOST_REFERENCE] = "the reference", [GT_HOST_SAME_BOOT] = "the same boot as an aligned host",
		[GT_HOST_REALTIME] = "its CLOCK_REALTIME pairs only (no NCCL collective shared with the others)",
		[GT_HOST_COLLECTIVES] = "its CLOCK_REALTIME pairs, then",
	};

	for (size_t i = 0; i < hs->n; i++) {
		const struct align_host *h = &hs->h[i];
		const char *name = trace_reader__info(hs->in[i].r)->host;

		if (h->method == GT_HOST_COLLECTIVES)
			pr_info("host %zu (%s, %s): offset %+.3f ms by %s corrected by %+.1f us on the ends of %u "
				"collectives (their spread across hosts after: median %.1f us, largest %.1f us)",
				i, name, hs->in[i].path, h->offset_ns / 1e6, how[h->method],
				(h->offset_ns - h->rt_rel_ns) / 1e3, h->collectives, h->residual_ns / 1e3,
				h->residual_max_ns / 1e3);
		else
			pr_info("host %zu (%s, %s): offset %+.3f ms by %s", i, name, hs->in[i].path,
				h->offset_ns / 1e6, how[h->method <= GT_HOST_COLLECTIVES ? h->method : 0]);
	}
	if (st->collectives)
		pr_info("%llu collectives seen on two hosts or more: %llu ended somewhere before a rank "
			"entered them by the wall clocks alone, %llu after the alignment",
			(unsigned long long)st->collectives, (unsigned long long)st->causality_before,
			(unsigned long long)st->causality_after);
}

/* Who came last to the collectives, and what the others waited for it. */
static void say_stragglers(const struct hosts *hs)
{
	struct align_coll *c = NULL;
	long n = align__collectives(hs->h, hs->parts, hs->nparts, &c);
	uint64_t *skew, total = 0, worst_wait = 0;
	size_t best = 0, nbest = 0;

	if (n <= 0)
		return;
	skew = malloc((size_t)n * sizeof(*skew));
	if (!skew) {
		free(c);
		return;
	}
	/* the (host, pid) most often last */
	for (long i = 0; i < n; i++) {
		size_t k = 0;

		for (long j = 0; j < n; j++)
			k += c[j].last_host == c[i].last_host && c[j].last_pid == c[i].last_pid;
		if (k > nbest)
			nbest = k, best = (size_t)i;
	}
	for (long i = 0; i < n; i++) {
		skew[i] = c[i].skew_ns;
		if (c[i].last_host == c[best].last_host && c[i].last_pid == c[best].last_pid) {
			total += c[i].skew_ns;
			worst_wait = c[i].skew_ns > worst_wait ? c[i].skew_ns : worst_wait;
		}
	}
	qsort(skew, (size_t)n, sizeof(*skew), u64_cmp);
	pr_info("straggler: rank %d (pid %u) on host %u (%s) came last to %zu of %ld collectives; the "
		"first rank waited for it %.3f ms in all, at most %.3f ms; arrival skew median %.1f us",
		c[best].last_rank, c[best].last_pid, c[best].last_host,
		trace_reader__info(hs->in[c[best].last_host].r)->host, nbest, n, total / 1e6, worst_wait / 1e6,
		skew[n / 2] / 1e3);
	free(skew);
	free(c);
}

int merge__hosts(const struct hosts_opts *o, struct hosts_result *res)
{
	struct hosts hs = { 0 };
	struct installer *inst = NULL;
	struct trace_writer *w = NULL;
	struct trace_writer_opts wo = { .force = true };
	struct gt_file_info info;
	struct gt_trailer t = { 0 };
	struct align_stats st;
	uint8_t *buf = NULL;
	char *opts = NULL;
	const char *msg;
	struct stat sb;
	int err = -ENOMEM;

	if (res)
		memset(res, 0, sizeof(*res));
	if (o->n < 2 || o->n > HOSTS_MAX) {
		pr_err("merge --hosts takes 2 to %d traces, one per host (%zu given)", HOSTS_MAX, o->n);
		return -EINVAL;
	}
	hs.n = o->n;
	hs.in = calloc(o->n, sizeof(*hs.in));
	hs.h = calloc(o->n, sizeof(*hs.h));
	buf = malloc(1u << 16);
	if (!hs.in || !hs.h || !buf) {
		pr_err("failed to allocate the job merge: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < o->n; i++) {
		hs.in[i].path = o->traces[i];
		msg = NULL;
		err = trace_reader__open(o->traces[i], &hs.in[i].r, &msg);
		if (err) {
			pr_err("cannot read %s: %s", o->traces[i], msg ? msg : strerror(-err));
			goto out;
		}
		if (gt_file_info__option(trace_reader__info(hs.in[i].r), "hosts", NULL)) {
			err = -EINVAL;
			pr_err("%s is a job trace already (merge --hosts made it): give the hosts' own traces",
			       o->traces[i]);
			goto out;
		}
	}
	if (!lstat(o->output, &sb)) {
		if (installer__refusal(o->output)) {
			err = -EPERM;
			pr_err("refusing to replace %s: %s", o->output, installer__refusal(o->output));
			goto out;
		}
		if (!o->force) {
			err = -EEXIST;
			pr_err("%s exists: use --force to replace it", o->output);
			goto out;
		}
	}
	for (size_t i = 0; i < o->n; i++)
		if ((err = first_pass(&hs, i)))
			goto out;
	if ((err = align__run(hs.h, hs.n, hs.parts, hs.nparts, &st))) {
		pr_err("failed to align the hosts: %s", strerror(-err));
		goto out;
	}

	/* the job's header: the reference's, started at the first host's start */
	info = *trace_reader__info(hs.in[0].r);
	info.start_ts = UINT64_MAX;
	for (size_t i = 0; i < hs.n; i++) {
		uint64_t s = (uint64_t)((int64_t)trace_reader__info(hs.in[i].r)->start_ts + hs.h[i].offset_ns);

		info.start_ts = s < info.start_ts ? s : info.start_ts;
	}
	if (asprintf(&opts, "%s hosts=%zu", info.options ? info.options : "", hs.n) < 0) {
		opts = NULL;
		err = -ENOMEM;
		goto out;
	}
	info.options = opts;
	err = installer__create(o->output, ".hosts", 0600, &inst);
	if (err) {
		if (err == -EPERM && installer__refusal(o->output))
			pr_err("refusing to replace %s: %s", o->output, installer__refusal(o->output));
		else
			pr_err("cannot write %s: %s", o->output, strerror(-err));
		goto out;
	}
	err = trace_writer__create(installer__path(inst), &info, &wo, &w);
	if (err) {
		pr_err("cannot write %s: %s", o->output, strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < hs.n && !err; i++)
		err = write_host(w, &hs, i, info.start_ts);
	for (size_t i = 0; i < hs.n && !err; i++)
		err = advance(&hs.in[i]);
	/* the traces interleaved by time, each in its own order */
	while (!err) {
		size_t best = SIZE_MAX;
		int64_t best_ts = INT64_MAX;

		for (size_t i = 0; i < hs.n; i++) {
			int64_t ts;

			if (!hs.in[i].cur)
				continue;
			ts = (int64_t)hs.in[i].cur->ts + hs.h[i].offset_ns;
			if (ts < best_ts)
				best_ts = ts, best = i;
		}
		if (best == SIZE_MAX)
			break;
		if (job_record(hs.in[best].cur, (uint32_t)best, hs.h[best].offset_ns, buf)) {
			err = trace_writer__append(w, (const struct gt_hdr *)buf);
			t.records++;
		}
		if (!err)
			err = advance(&hs.in[best]);
	}
	if (err) {
		pr_err("cannot write %s: %s", o->output, strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < hs.n; i++) {
		const struct gt_trailer *ti = trace_reader__trailer(hs.in[i].r);
		const struct gt_counters *c = trace_reader__counters(hs.in[i].r);
		uint64_t end = ti ? (uint64_t)((int64_t)ti->end_ts + hs.h[i].offset_ns) : 0;

		t.end_ts = end > t.end_ts ? end : t.end_ts;
		counters_add(&t.counters, c);
	}
	t.records = trace_writer__records(w);
	err = trace_writer__finish(w, &t);
	if (!err)
		err = installer__commit(inst, o->force);
	if (err) {
		pr_err("cannot write %s: %s", o->output, strerror(-err));
		goto out;
	}
	say_alignment(&hs, &st);
	say_stragglers(&hs);
	pr_info("wrote %s: %zu hosts, %llu records", o->output, hs.n, (unsigned long long)t.records);
	if (res) {
		res->hosts = hs.n;
		res->align = st;
		res->records = t.records;
	}
out:
	if (w)
		trace_writer__free(w);
	installer__free(inst);
	for (size_t i = 0; hs.in && i < hs.n; i++) {
		trace_reader__close(hs.in[i].r);
		free(hs.in[i].rt);
	}
	free(hs.in);
	free(hs.h);
	free(hs.parts);
	free(buf);
	free(opts);
	return err;
}
