// SPDX-License-Identifier: MIT
/*
 * The merger: GPU-side records of the CUPTI agent into an eBPF trace.
 *
 * Linking is merge/link.c: this file feeds it from a trace and spool files
 * (merge_spool.c lists, maps and indexes those) and writes the merged trace
 * (the second pass: merge_write.c).
 *
 * Files.  Two passes over the trace, each streaming one chunk at a time:
 * the first indexes the calls that can cause GPU work (32 bytes each), the
 * second copies every record and puts each linked GPU record right after
 * the entry record of its call, so that a reader streaming the file sees the
 * GPU work of a call before the call's exit.  Spool files are mapped, not
 * read into memory: the index holds 32-40 bytes per GPU and API record and
 * the page cache holds the records themselves.
 *
 * A trace that holds the agent's records itself (a daemon's snapshot, whose
 * options say cupti=inline) gives them to the merge as one more spool: the
 * first pass copies them into memory instead of indexing them as calls, the
 * second leaves them out where they were and puts them where a merged trace
 * has them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "lib/cmp.h"
#include "lib/hmap.h"
#include "lib/installer.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "merge/merge.h"
#include "merge/merge_int.h"
#include "format/records.h"
#include "format/trace_file.h"

/* What lets the order linker tell calls apart: a launch's dims and stream,
 * a plain copy's bytes. */
static void call_shape(const struct gt_hdr *h, struct merge_call *c)
{
	const struct gt_api_info *ai = gt_api__info(h->api);

	if (h->type == GT_REC_LAUNCH && gt_rec__size_ok(h)) {
		const struct gt_launch *l = (const void *)h;

		c->stream = l->stream;
		if (!(l->flags & GT_LAUNCH_CFG_FAULT))
			c->shape = merge__shape_known(l->grid, l->block);
	} else if (h->type == GT_REC_CALL && gt_rec__size_ok(h) && ai &&
		   ai->cls == GT_CLS_MEMCPY && ai->c >= 0 && ai->c < GT_CALL_NARGS) {
		c->shape = ((const struct gt_call *)h)->args[ai->c];
	}
}

enum merge_call_kind mg__entry_kind(const struct gt_hdr *h)
{
	enum merge_call_kind k;

	if (!gt_decoder__takes_entry(h))
		return MERGE_CALL_NONE;
	if (h->type == GT_REC_LAUNCH) {
		k = merge__call_kind(h->api);
		return k == MERGE_CALL_NONE ? MERGE_CALL_LAUNCH : k;
	}
	if (h->type == GT_REC_CALL)
		return merge__call_kind(h->api);
	return MERGE_CALL_NONE;
}

/* First pass: the calls that can cause GPU work, in entry order; the
 * decoder pairs them with their exits, as for every reader. */
static int on_entry(void *ctx, const struct gt_hdr *h, uint64_t *cookie)
{
	struct merger *m = ctx;
	enum merge_call_kind k = mg__entry_kind(h);
	struct merge_call c;

	if (k == MERGE_CALL_NONE)
		return 0;
	c = (struct merge_call){ .entry = h->ts, .pid = h->pid, .tid = h->tid, .kind = k };
	call_shape(h, &c);
	if (VEC_PUSH(m->calls, m->ncalls, m->calls_cap, c))
		return -ENOMEM;
	if (m->ncalls >= MERGE_NO_CALL)
		return -E2BIG;
	*cookie = m->ncalls;	/* index + 1 */
	return 0;
}

static int on_call(void *ctx, const struct gt_callrec *rc)
{
	struct merger *m = ctx;
	struct merge_call *c;

	if (!rc->cookie)
		return 0;
	c = &m->calls[rc->cookie - 1];
	c->stack = rc->stack;
	if (!rc->has_exit)
		return 0;
	c->exit = rc->ts + rc->dur;
	c->has_exit = 1;
	c->failed = rc->ret != 0;
	return 0;
}

/* The span of pid's recorded records: GPU work of calls outside it came
 * from before the recording or after it (leave_out_edges). */
static int note_span(struct merger *m, const struct gt_hdr *h)
{
	uint64_t *f;

	if (!h->pid || h->type >= 32)	/* BPF's records (and the recorder's on their behalf) */
		return 0;
	f = u64map__get(&m->first, h->pid);
	if (!f || h->ts < *f) {
		if (u64map__set(&m->first, h->pid, h->ts))
			return -ENOMEM;
	}
	f = u64map__get(&m->last, h->pid);
	if (!f || h->ts > *f) {
		if (u64map__set(&m->last, h->pid, h->ts))
			return -ENOMEM;
	}
	return 0;
}

static int index_trace_rec(struct merger *m, const struct gt_hdr *h)
{
	int err;

	if (h->ts > m->max_ts)
		m->max_ts = h->ts;
	if ((err = note_span(m, h)))
		return err;
	if ((h->type == GT_REC_RANGE || h->type == GT_REC_CAPTURE) &&
	    (err = capture_spans__feed(m->spans, h)))
		return err;
	return gt_decoder__feed(m->dec, h);
}

static int api_cmp(const void *a, const void *b)
{
	const struct merge_api *x = a, *y = b;

	CMP_BY(x->pid, y->pid);
	return cmp__u64(x->correlation, y->correlation);
}

/* Whether [a, b] of pid lies outside the span of its recorded records: from
 * its first to the end of the recording (the trailer's end, or its last
 * record when that is later); a process without any is left as it is (-t
 * none records no calls). */
static bool outside_span(const struct merger *m, uint32_t pid, uint64_t a, uint64_t b)
{
	const uint64_t tol = MERGE_TOLERANCE_NS;
	uint64_t *first = u64map__get(&m->first, pid), *last = u64map__get(&m->last, pid);

	return first && last && (b + tol < *first || a > (*last > m->end_ts ? *last : m->end_ts) + tol);
}

/*
 * GPU work whose call the recording could not see, because the process made
 * it before the recording's first record of it or after its last (a program
 * that ran on from before a recorder started, or past its end: the agent
 * records a little longer than the probes): left out before linking, so that
 * none of it is taken for the work of a call the recording has (a launch
 * just before the end), and counted, not taken for an anomaly.  The call's
 * time is CUPTI's record of it (its API record); without one only a GPU
 * start before the process' first record says so.
 */
static void leave_out_edges(struct merger *m)
{
	size_t i, n = 0;

	/* recorded with -c: its capture ranges are the spans (merge_write.c) */
	if (m->ranged)
		return;
	if (m->napis > 1)
		cmp__sort(m->apis, m->napis, sizeof(*m->apis), api_cmp);
	for (i = 0; i < m->ngpu; i++) {
		const struct merge_gpu *g = &m->gpu[i];
		struct merge_api key = { .pid = g->pid, .correlation = g->correlation };
		const struct merge_api *a =
			m->napis ? bsearch(&key, m->apis, m->napis, sizeof(*m->apis), api_cmp) : NULL;
		bool out = a ? outside_span(m, g->pid, a->start, a->start + a->dur) :
			       outside_span(m, g->pid, g->ts, g->ts) && g->ts < *u64map__get(&m->first, g->pid);

		if (out)
			m->res.outside_recording++;
		else
			m->gpu[n++] = *g;
	}
	m->ngpu = n;
	for (i = n = 0; i < m->napis; i++) {
		const struct merge_api *a = &m->apis[i];

		if (outside_span(m, a->pid, a->start, a->start + a->dur))
			m->res.outside_recording++;
		else
			m->apis[n++] = *a;
	}
	m->napis = n;
}

/*
 * The end edge of a process linked by launch order (no API records say when
 * its calls were made): a GPU record left unlinked whose correlation comes
 * after every linked one of its process (no recorded call could have made
 * it: calls are numbered in entry order) and that started on the GPU after
 * the process' last recorded call (when the trace dropped nothing: the
 * probes saw every call until they went; else after the recording's end) is
 * the work of a call made after the probes were gone, which the agent
 * recorded a little longer: left out and counted with the records outside
 * the recording, as the API records tell for other processes.  One that
 * started before stays unmatched (its call was lost, or not probed).
 */
static int leave_out_late(struct merger *m)
{
	struct u64map maxc = { 0 }, api = { 0 };
	size_t i, n = 0, gone = 0;
	int err = 0;

	if (m->ranged || capture_spans__light(m->spans))
		return 0;
	for (i = 0; i < m->ngpu && !err; i++) {
		const struct merge_gpu *g = &m->gpu[i];
		uint64_t *v = u64map__get(&maxc, g->pid);

		if (g->flags & GT_GPU_API_MATCHED)
			err = u64map__set(&api, g->pid, 1);
		else if (g->call != MERGE_NO_CALL && (!v || *v < g->correlation))
			err = u64map__set(&maxc, g->pid, g->correlation);
	}
	for (i = 0; i < m->ngpu && !err; i++) {
		const struct merge_gpu *g = &m->gpu[i];
		uint64_t *v = u64map__get(&maxc, g->pid);
		uint64_t *last = u64map__get(&m->last, g->pid);

		if (g->call == MERGE_NO_CALL && !u64map__get(&api, g->pid) && v && g->correlation > *v && last &&
		    g->ts > *last + MERGE_TOLERANCE_NS && (m->whole || outside_span(m, g->pid, g->ts, g->ts))) {
			gone++;
			continue;
		}
		m->gpu[n++] = *g;
	}
	if (!err) {
		m->ngpu = n;
		m->res.outside_recording += gone;
		m->res.link.gpu_records -= gone;
		m->res.link.unmatched_gpu -= gone;
	}
	u64map__free(&maxc);
	u64map__free(&api);
	return err;
}

static int linked_cmp(const void *a, const void *b, void *ctx)
{
	const struct merge_gpu *gpu = ctx;
	const struct merge_gpu *x = &gpu[*(const uint32_t *)a], *y = &gpu[*(const uint32_t *)b];

	CMP_BY(x->call, y->call);
	CMP_BY(x->ts, y->ts);
	return cmp__u64(x->loc, y->loc);
}

static int tail_cmp(const void *a, const void *b)
{
	const struct tail_ent *x = a, *y = b;

	CMP_BY(x->ts, y->ts);
	return cmp__u64(x->loc, y->loc);
}

/* "cupti=merged" in place of a "cupti=..." the recorder wrote. */
static char *merged_options(const char *opts)
{
	const char *p = opts ? opts : "";
	size_t n = strlen(p) + sizeof(" cupti=merged");
	char *s = malloc(n), *q = s;

	if (!s)
		return NULL;
	while (*p) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len && strncmp(p, "cupti=", 6)) {
			if (q != s)
				*q++ = ' ';
			memcpy(q, p, len);
			q += len;
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	strcpy(q, q != s ? " cupti=merged" : "cupti=merged");
	return s;
}

char *merge__default_output(const char *trace)
{
	static const char ext[] = ".gtrace";
	size_t n = strlen(trace), e = sizeof(ext) - 1;
	char *out;

	if (n > e && !strcmp(trace + n - e, ext) && trace[n - e - 1] != '/')
		n -= e;
	if (asprintf(&out, "%.*s_merged.gtrace", (int)n, trace) < 0)
		return NULL;
	return out;
}

static void print_summary(const struct merger *m)
{
	const struct merge_link_stats *s = &m->res.link;
	char extra[1024] = "";
	size_t n = 0;

	if (s->duplicates)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu duplicates",
			      (unsigned long long)s->duplicates);
	if (s->no_api)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu without an API record",
			      (unsigned long long)s->no_api);
	if (s->by_order)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu of the links by launch order",
			      (unsigned long long)s->by_order);
	if (m->res.outside_recording)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu GPU-side records of calls before or "
			      "after the recording left out", (unsigned long long)m->res.outside_recording);
	if (m->res.spool_refused)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu spool files left out",
			      (unsigned long long)m->res.spool_refused);
	if (m->res.outside_ranges)
		n += snprintf(extra + n, sizeof(extra) - n, ", %llu GPU-side records outside the capture "
			      "ranges left out", (unsigned long long)m->res.outside_ranges);
	if (s->graph_kernels && n < sizeof(extra))
		n += snprintf(extra + n, sizeof(extra) - n, "; %llu kernels run by CUDA graphs, %llu of them "
			      "(%.1f %%) traced back to the launch that captured them",
			      (unsigned long long)s->graph_kernels, (unsigned long long)s->graph_traced,
			      100.0 * s->graph_traced / s->graph_kernels);
	if (s->captured_calls && n < sizeof(extra))
		n += snprintf(extra + n, sizeof(extra) - n, "; %llu launches captured into CUDA graphs",
			      (unsigned long long)s->captured_calls);
	if (s->clock_fixed && n < sizeof(extra))
		n += snprintf(extra + n, sizeof(extra) - n, "; the GPU clock drifted from the host's in %llu "
			      "process%s, its records moved back onto the host's (estimated from the kernels "
			      "that started right after their launch): pid %u's by %+.2f us a second, moved "
			      "%+.1f us at most", (unsigned long long)s->clock_fixed, s->clock_fixed == 1 ? "" : "es",
			      s->clock_pid, s->clock_rate * 1e6, s->clock_max_shift_ns / 1e3);
	if (s->clock_busy && n < sizeof(extra))
		n += snprintf(extra + n, sizeof(extra) - n, " (%llu of them from the few kernels that started at "
			      "once on a GPU busy most of the time", (unsigned long long)s->clock_busy);
	if (s->clock_scattered && n < sizeof(extra))
		n += snprintf(extra + n, sizeof(extra) - n, "; %llu from quick starts scattered by a GPU shared in "
			      "time slices: placed so that none starts before its launch, good to a few us",
			      (unsigned long long)s->clock_scattered);
	if (s->clock_busy && n < sizeof(extra))
		snprintf(extra + n, sizeof(extra) - n, ")");
	pr_info("merged %llu GPU records from %llu processes: %llu linked (%.1f %%), %llu unmatched, "
		"%llu causality violations, %llu launches without GPU work%s",
		(unsigned long long)s->gpu_records, (unsigned long long)s->processes,
		(unsigned long long)s->linked,
		s->gpu_records ? 100.0 * s->linked / s->gpu_records : 0.0,
		(unsigned long long)s->unmatched_gpu, (unsigned long long)s->causality,
		(unsigned long long)s->unmatched_calls, extra);
}

static void merger_free(struct merger *m)
{
	size_t i;

	for (i = 0; i < m->nspools; i++) {
		if (m->spools[i].owned)
			free((void *)m->spools[i].map);
		else if (m->spools[i].map)
			munmap((void *)m->spools[i].map, m->spools[i].len);
		free(m->spools[i].path);
	}
	free(m->spools);
	free(m->calls);
	free(m->apis);
	free(m->gpu);
	free(m->nodes);
	free(m->tail);
	free(m->stats);
	free(m->inl);
	if (m->inl_fd >= 0)
		close(m->inl_fd);
	u64map__free(&m->first);
	u64map__free(&m->last);
	gt_decoder__free(m->dec);
	capture_spans__free(m->spans);
}

/* The first pass over the trace: the agent's records kept aside (inline),
 * every other one indexed. */
static int first_pass(void *ctx, const struct gt_hdr *h)
{
	struct merger *m = ctx;

	if (m->inline_gpu && mg__agent_rec(h))
		return mg__keep_inline(m, h);
	m->res.main_records++;
	return index_trace_rec(m, h);
}

int merge__run(const struct merge_opts *o, struct merge_result *res)
{
	struct merger *m = calloc(1, sizeof(*m));
	struct trace_reader *r = NULL;
	struct trace_writer *w = NULL;
	struct trace_writer_opts wo = { .force = true };
	struct merge_link_opts lo;
	struct gt_file_info info;
	enum gt_pass_fail fail;
	const char *msg = NULL, *out = o->output;
	char *opts = NULL;
	struct trace_damage dmg;
	struct installer *inst = NULL;
	uint32_t *linked = NULL;
	size_t nlinked = 0, i;
	struct stat out_st;
	int err;

	if (res)
		memset(res, 0, sizeof(*res));
	if (!o->trace || !o->output || (o->nspools && !o->spools)) {
		free(m);
		pr_err("failed to merge: %s", strerror(EINVAL));
		return -EINVAL;
	}
	if (!m) {
		pr_err("failed to allocate the merger: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	m->o = o;
	m->inl_fd = -1;
	m->dec = gt_decoder__new(on_call, NULL, m);
	if (!m->dec) {
		free(m);
		pr_err("failed to allocate the merger: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	gt_decoder__set_entry_cb(m->dec, on_entry);

	/* the inputs: everything is checked before anything is written */
	err = trace_reader__open(o->trace, &r, &msg);
	if (err) {
		pr_err("cannot read %s: %s", o->trace, msg ? msg : strerror(-err));
		goto out;
	}
	m->spans = capture_spans__new(trace_reader__info(r));
	if (!m->spans) {
		err = -ENOMEM;
		pr_err("failed to allocate the merger: %s", strerror(-err));
		goto out;
	}
	if (gt_file_info__has_option(trace_reader__info(r), "cupti", "merged")) {
		err = -EINVAL;
		pr_err("%s is merged already (its options say cupti=merged)", o->trace);
		goto out;
	}
	m->inline_gpu = gt_file_info__has_option(trace_reader__info(r), "cupti", "inline");
	if (!o->nspools && !m->inline_gpu) {
		err = -ENODATA;
		pr_err("%s holds no GPU-side records of its own (a daemon's snapshot does) and no spool "
		       "file was given", o->trace);
		goto out;
	}
	if (!lstat(out, &out_st)) {
		/* --force would not help: say so rather than ask for it */
		if (installer__refusal(out)) {
			err = -EPERM;
			pr_err("refusing to replace %s: %s", out, installer__refusal(out));
			goto out;
		}
		if (!o->force) {
			err = -EEXIST;
			pr_err("%s exists: use --force to replace it", out);
			goto out;
		}
	}
	for (i = 0; i < o->nspools; i++) {
		struct stat st;

		if (stat(o->spools[i], &st)) {
			err = -errno;
			pr_err("cannot read %s: %s", o->spools[i], strerror(-err));
			goto out;
		}
		err = S_ISDIR(st.st_mode) ? mg__add_spool_dir(m, o->spools[i]) :
					    mg__add_spool_file(m, o->spools[i]);
		if (err)
			goto out;
	}
	for (i = 0; i < m->nspools; i++) {
		err = mg__index_spool(m, i);
		if (err == -ENOMEM)
			pr_err("failed to index %s: %s", m->spools[i].path, strerror(-err));
		if (err)
			goto out;
	}

	/* first pass */
	err = gt_pass__run(r, NULL, &(struct gt_pass){ .ctx = m, .record = first_pass }, &fail);
	if (err && fail == GT_PASS_DECODE) {
		pr_err("failed to index %s: %s", o->trace, strerror(-err));
		goto out;
	}
	if (err < 0) {
		pr_err("cannot read %s: %s", o->trace, strerror(-err));
		goto out;
	}
	trace_reader__damage_info(r, &dmg);
	m->res.trace_damaged = trace_damage__any(&dmg);
	err = mg__index_inline(m);
	if (err) {
		if (err == -ENOMEM)
			pr_err("failed to index %s: %s", o->trace, strerror(-err));
		goto out;
	}
	/* the second pass stops at the last record: the trailer is read now */
	m->end_ts = trace_reader__trailer(r) ? trace_reader__trailer(r)->end_ts : m->max_ts;
	m->counters = *trace_reader__counters(r);
	m->whole = trace_reader__trailer(r) && !m->counters.drop_ringbuf && !m->counters.drop_stash &&
		   !m->counters.drop_state;
	capture_spans__finish(m->spans, m->end_ts);
	m->ranged = capture_spans__mode(m->spans)->range != GT_CAPSRC_NONE;
	gt_decoder__free(m->dec);
	m->dec = NULL;
	vec__shrink(&m->calls, &m->calls_cap, m->ncalls);
	vec__shrink(&m->apis, &m->apis_cap, m->napis);
	vec__shrink(&m->gpu, &m->gpu_cap, m->ngpu);

	leave_out_edges(m);
	lo = o->link;
	lo.partial_calls = m->ranged || capture_spans__light(m->spans);
	/* the launches that made CUDA graphs' nodes first: their work is the
	 * graphs' launches', not missing */
	err = merge__link_nodes(m->calls, m->ncalls, m->nodes, m->nnodes, &lo);
	if (!err)
		err = merge__link(m->calls, m->ncalls, m->apis, m->napis, m->gpu, m->ngpu, &lo,
				  &m->res.link);
	if (!err)
		err = leave_out_late(m);
	if (err) {
		pr_err("failed to link GPU records: %s", strerror(-err));
		goto out;
	}
	/* where each GPU record goes: after its call's entry, or by time at the end */
	nlinked = m->res.link.linked;
	linked = malloc((nlinked ? nlinked : 1) * sizeof(*linked));
	if (!linked || vec__reserve(&m->tail, &m->tail_cap, m->ntail,
				     m->napis + (m->ngpu - nlinked), VEC_MIN)) {
		err = -ENOMEM;
		pr_err("failed to allocate the merge index: %s", strerror(-err));
		goto out;
	}
	nlinked = 0;
	for (i = 0; i < m->ngpu; i++) {
		if (m->gpu[i].call != MERGE_NO_CALL)
			linked[nlinked++] = i;
		else
			m->tail[m->ntail++] = (struct tail_ent){ .ts = m->gpu[i].ts, .loc = LOC_GPU | i };
	}
	for (i = 0; i < m->napis; i++)
		m->tail[m->ntail++] = (struct tail_ent){ .ts = m->apis[i].start, .loc = m->apis[i].loc };
	/* the API records are in the tail now */
	free(m->apis);
	m->apis = NULL;
	m->napis = m->apis_cap = 0;
	/* either array is NULL when empty, which qsort does not take */
	if (nlinked > 1)
		qsort_r(linked, nlinked, sizeof(*linked), linked_cmp, m->gpu);
	if (m->ntail > 1)
		cmp__sort(m->tail, m->ntail, sizeof(*m->tail), tail_cmp);

	/* the output, through a temporary file next to it */
	info = *trace_reader__info(r);
	opts = merged_options(info.options);
	/* ".BASE.merge.XXXXXX": a leftover does not pass for a trace */
	err = opts ? installer__create(out, ".merge", 0600, &inst) : -ENOMEM;
	if (err == -ENOMEM) {
		pr_err("failed to allocate the merge index: %s", strerror(-err));
		goto out;
	}
	if (err == -EPERM && installer__refusal(out)) {
		pr_err("refusing to replace %s: %s", out, installer__refusal(out));
		goto out;
	}
	if (err) {
		pr_err("cannot write %s: %s", out, strerror(-err));
		goto out;
	}
	info.options = opts;
	/* the file is ours (mkostemp, 0600): the writer replaces it in place */
	err = trace_writer__create(installer__path(inst), &info, &wo, &w);
	if (err) {
		pr_err("cannot write %s: %s", out, strerror(-err));
		goto out;
	}
	err = mg__write_merged(m, w, linked, nlinked, out);
	if (err)
		goto out;
	trace_writer__free(w);
	w = NULL;
	err = installer__commit(inst, o->force);
	if (err) {
		if (err == -EEXIST)
			pr_err("%s exists: use --force to replace it", out);
		else if (err == -EPERM && installer__refusal(out))
			pr_err("refusing to replace %s: %s", out, installer__refusal(out));
		else
			pr_err("cannot write %s: %s", out, strerror(-err));
		goto out;
	}
	/* the readers' rule (its line; the status is the command's) */
	if (gt_log_level >= GT_LOG_WARN)
		trace_damage__report(&dmg, o->trace, "merged the records read", stderr);
	print_summary(m);
	if (res)
		*res = m->res;
out:
	if (w)
		trace_writer__free(w);
	installer__free(inst);
	trace_reader__close(r);
	free(linked);
	free(opts);
	merger_free(m);
	free(m);
	return err;
}
