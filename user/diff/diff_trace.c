// SPDX-License-Identifier: MIT
/*
 * One trace of `gtrace-bpf diff`, read twice through the decoder.
 *
 * The scan (the first pass) finds what could be iterations: per process,
 * NVTX ranges by series name (GT_REC_NVTX, which a merged trace keeps after
 * its other records), capture ranges (decode/capture_spans.c), the launches
 * of each CUDA graph, and the sequence of kernel launches: its first
 * DIFF_SEQ_WINDOW launches are kept to find the period in, then each later
 * launch goes through the matcher (diff_iter.h).  It counts the calls and
 * GPU records of each process, and when each one's CUDA work began and
 * ended.
 *
 * The second pass puts every call and GPU record of the chosen process
 * into the iteration its time falls in (a call: its entry; a GPU record: the
 * entry of the call that launched it when linked, else its start) and adds
 * it to its name's figures and to the iteration's GPU busy time.  It rides
 * on analyze's pass over the span of the iterations (analyze_opts' tap):
 * the decoding is done once for both, and the records come in analyze's
 * time order, a merged trace's tail (unlinked GPU records) interleaved
 * where it happened instead of after everything else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "diff/diff_int.h"
#include "diff/diff_scan.h"
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "format/api.h"
#include "format/records.h"
#include "format/trace_file.h"
#include "lib/hmap.h"
#include "lib/term_text.h"
#include "lib/vec.h"

/* ---- the scan ------------------------------------------------------------ */

static struct scan_proc *proc_of(struct diff_scan *s, uint32_t pid)
{
	struct scan_proc *p = s->last;

	if (p && p->pid == pid)
		return p;
	p = hmap_get_or_new(&s->procs, pid, 0, sizeof(*p), NULL);
	if (p) {
		p->pid = pid;
		s->last = p;
	}
	return p;
}

/* Looks for the period in the launches kept, and if there is one, runs
 * them through the matcher; frees them either way. */
static int seq_decide(struct scan_proc *p)
{
	struct diff_period per;
	int err = 0;

	p->seq_state = SEQ_FAILED;
	if (diff_iter__find_period(p->ids, p->nseq, &per)) {
		err = diff_seq__init(&p->seq, p->ids, &per);
		for (size_t i = per.start; !err && i < p->nseq; i++)
			err = diff_seq__feed(&p->seq, p->ids[i], p->ts[i]);
		if (!err)
			p->seq_state = SEQ_MATCH;
	}
	free(p->ids);
	free(p->ts);
	p->ids = NULL;
	p->ts = NULL;
	p->nseq = p->ids_cap = p->ts_cap = 0;
	return err;
}

static int seq_add(struct scan_proc *p, uint32_t id, uint64_t ts)
{
	if (p->seq_state == SEQ_MATCH)
		return diff_seq__feed(&p->seq, id, ts);
	if (p->seq_state != SEQ_FILL)
		return 0;
	if (vec__reserve(&p->ids, &p->ids_cap, p->nseq, 1, 256) ||
	    vec__reserve(&p->ts, &p->ts_cap, p->nseq, 1, 256))
		return -ENOMEM;
	p->ids[p->nseq] = id;
	p->ts[p->nseq++] = ts;
	return p->nseq == DIFF_SEQ_WINDOW ? seq_decide(p) : 0;
}

static int graph_add(struct diff_scan *s, uint32_t pid, uint64_t exec, uint64_t ts)
{
	struct scan_graph *g = hmap_get_or_new(&s->graphs, exec, pid, sizeof(*g), NULL);

	if (!g)
		return -ENOMEM;
	g->pid = pid;
	g->exec = exec;
	if (vec__reserve(&g->ts, &g->cap, g->n, 1, 64))
		return -ENOMEM;
	g->ts[g->n++] = ts;
	return 0;
}

static int scan_call(void *ctx, const struct gt_callrec *c)
{
	struct diff_scan *s = ctx;
	struct scan_proc *p = proc_of(s, c->pid);
	uint64_t end = c->ts + (c->has_exit ? c->dur : 0);
	struct diff_acc *k;

	if (!p)
		return -ENOMEM;
	if (!p->calls++ || c->ts < p->first_ts)
		p->first_ts = c->ts;
	if (end > p->last_ts)
		p->last_ts = end;
	if (steady_scan__call(s->steady, c))
		return -ENOMEM;
	if (c->type != GT_T_LAUNCH)
		return 0;
	if (c->graph)
		return graph_add(s, c->pid, c->handle, c->ts);
	k = diff_names__get(&s->seq_names, c->kernel ? c->kernel : "unknown_kernel");
	return k ? seq_add(p, k->id, c->ts) : -ENOMEM;
}

static int scan_nccl(void *ctx, const struct gt_ncclrec *n)
{
	struct diff_scan *s = ctx;

	return steady_scan__nccl(s->steady, n);
}

static int nvtx_add(struct diff_scan *s, const struct gt_nvtx *nv)
{
	/* the series name is never longer than the name: whole, however long */
	char raw[GT_STR_MAX], name[GT_STR_MAX];
	size_t n = nv->len ? gt_rec_strlen(&nv->hdr, nv->name, nv->len) : 0;
	struct scan_nvtx *x;
	struct diff_acc *id;

	memcpy(raw, nv->name, n);
	raw[n] = '\0';
	diff_iter__series_name(raw, n, name, sizeof(name));
	id = diff_names__get(&s->nvtx_names, name);
	if (!id)
		return -ENOMEM;
	x = hmap_get_or_new(&s->nvtx, id->id, nv->hdr.pid, sizeof(*x), NULL);
	if (!x)
		return -ENOMEM;
	x->pid = nv->hdr.pid;
	x->series = id->id;
	if (vec__reserve(&x->v, &x->cap, x->n, 1, 64))
		return -ENOMEM;
	x->v[x->n++] = (struct iv){ nv->hdr.ts, nv->hdr.ts + nv->dur };
	return 0;
}

static int scan_other(void *ctx, const struct gt_hdr *rec)
{
	struct diff_scan *s = ctx;
	struct scan_proc *p;

	switch (rec->type) {
	case GT_REC_RANGE:
	case GT_REC_CAPTURE:
		return capture_spans__feed(s->cap, rec);
	case GT_REC_NVTX:
		/* ranges only: a mark (dur 0) is no iteration */
		if (!gt_rec__size_ok(rec) || !((const struct gt_nvtx *)rec)->dur)
			return 0;
		return nvtx_add(s, (const struct gt_nvtx *)rec);
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		if (!rec->pid || !gt_rec__size_ok(rec))
			return 0;
		p = proc_of(s, rec->pid);
		if (!p)
			return -ENOMEM;
		if (!p->gpu++ || rec->ts < p->gpu_first)
			p->gpu_first = rec->ts;
		{
			const struct gt_gpu_kernel *k = (const void *)rec;
			const struct gt_gpu_copy *cp = (const void *)rec;
			uint64_t e = rec->ts + (rec->type == GT_REC_GPU_KERNEL ? k->dur : cp->dur);

			if (e > p->gpu_last)
				p->gpu_last = e;
		}
		return 0;
	default:
		return 0;
	}
}

/* What a series owns (its iterations' times, its NVTX name). */
static void series_free(struct scan_series *x)
{
	free(x->start);
	free(x->end);
	free(x->name);
}

/* After the pass: the kernel sequences not decided yet, the processes, the
 * candidates. */
static int scan_finish(struct diff_scan *s)
{
	uint64_t best = 0;
	int err = 0;

	for (uint32_t i = 0; i < s->procs.cap && !err; i++) {
		struct scan_proc *p = s->procs.s[i].v;

		if (!s->procs.s[i].used)
			continue;
		if (p->seq_state == SEQ_FILL)
			err = seq_decide(p);
		s->nprocs += p->calls > 0;
		if (p->calls + p->gpu > best || (p->calls + p->gpu == best && p->pid < s->main_pid)) {
			best = p->calls + p->gpu;
			s->main_pid = p->pid;
		}
	}
	if (s->want_pid)
		s->main_pid = s->want_pid;
	if (!err)
		err = steady_scan__finish(s->steady);
	if (!err)
		err = diff_cands__find(s);
	/* -p: that process' iterations only */
	if (!err && s->want_pid) {
		size_t k = 0;

		for (size_t i = 0; i < s->nseries; i++) {
			if (s->series[i].c.pid == s->want_pid) {
				s->series[k++] = s->series[i];
				continue;
			}
			series_free(&s->series[i]);
		}
		s->nseries = k;
	}
	if (!err) {
		s->cands = calloc(s->nseries ? s->nseries : 1, sizeof(*s->cands));
		if (!s->cands)
			return -ENOMEM;
		for (size_t i = 0; i < s->nseries; i++)
			s->cands[i] = s->series[i].c;
		s->ncands = s->nseries;
	}
	return err;
}

/* Feeds every record of s->r to a decoder over (on_call, on_other, ctx).
 * Returns 0 or a negative errno; *why says what failed. */
static int read_all(struct diff_scan *s, gt_call_cb on_call, gt_rec_cb on_other, void *ctx,
		    struct gt_decoder **dp, const char **why)
{
	struct gt_decoder *d = gt_decoder__new(on_call, on_other, ctx);
	enum gt_pass_fail fail;
	int rc;

	*dp = d;
	*why = "decode";
	if (!d)
		return -ENOMEM;
	gt_decoder__set_nccl_cb(d, scan_nccl);
	rc = gt_pass__run(s->r, d, NULL, &fail);
	if (fail == GT_PASS_READ)
		*why = "read";
	return rc;
}

static void fail(FILE *err, const char *path, const char *why, int rc)
{
	if (!strcmp(why, "read"))
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, strerror(-rc));
	else
		fprintf(err, "gtrace-bpf: failed to decode %s: %s\n", path, strerror(-rc));
}

/* --rank: the process of that rank that made CUDA calls (the busiest if
 * several say it), 0 when none. */
static uint32_t pid_of_rank(const struct diff_scan *s, const struct gt_decoder *d, int32_t rank)
{
	const struct scan_proc *best = NULL;

	for (uint32_t i = 0; i < s->procs.cap; i++) {
		const struct scan_proc *p = s->procs.s[i].v;
		struct gt_rank_info ri;

		if (s->procs.s[i].used && (p->calls || p->gpu) && gt_decoder__process_rank(d, p->pid, &ri) &&
		    ri.rank == rank && (!best || p->calls + p->gpu > best->calls + best->gpu))
			best = p;
	}
	return best ? best->pid : 0;
}

/* A trace of several ranks compared without -p or --rank: which one, said
 * once (a job trace of merge --hosts, or one host's ranks). */
static void say_rank_chosen(const struct diff_scan *s, const struct gt_decoder *d, FILE *err)
{
	struct gt_rank_info ri;
	uint32_t ranks = 0;
	char pid[48];

	for (uint32_t i = 0; i < s->procs.cap; i++) {
		const struct scan_proc *p = s->procs.s[i].v;

		ranks += s->procs.s[i].used && (p->calls || p->gpu) && gt_decoder__process_rank(d, p->pid, &ri) &&
			 ri.rank >= 0;
	}
	if (ranks < 2 || !gt_decoder__process_rank(d, s->main_pid, &ri) || ri.rank < 0)
		return;
	gt_pid_text(pid, sizeof(pid), s->main_pid);
	fprintf(err, "gtrace-bpf: %s holds %u ranks: rank %d (pid %s) compared, the busiest; --rank R picks "
		"another\n", s->path, ranks, ri.rank, pid);
}

int diff_scan__open(const char *path, uint32_t pid, int32_t rank, struct diff_scan **out, struct trace_damage *dmg,
		    FILE *err)
{
	struct diff_scan *s = calloc(1, sizeof(*s));
	struct gt_decoder *d = NULL;
	const char *msg = NULL, *why = "decode";
	uint64_t calls = 0, gpu = 0;
	int rc;

	*out = NULL;
	if (!s) {
		fprintf(err, "gtrace-bpf: failed to read %s: %s\n", path, strerror(ENOMEM));
		return 1;
	}
	s->path = path;
	s->want_pid = pid;
	rc = trace_reader__open(path, &s->r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, msg ? msg : strerror(-rc));
		diff_scan__free(s);
		return 1;
	}
	s->cap = capture_spans__new(trace_reader__info(s->r));
	s->steady = steady_scan__new();
	rc = s->cap && s->steady ? read_all(s, scan_call, scan_other, s, &d, &why) : -ENOMEM;
	if (!rc && rank >= 0) {
		s->want_pid = pid = pid_of_rank(s, d, rank);
		if (!pid) {
			fprintf(err, "gtrace-bpf: --rank %d: no process of that rank made CUDA calls in %s\n", rank, path);
			gt_decoder__free(d);
			diff_scan__free(s);
			return 2;
		}
	}
	if (!rc) {
		const struct gt_trailer *t = trace_reader__trailer(s->r);
		uint64_t last = gt_decoder__last_ts(d);

		capture_spans__finish(s->cap, t && t->end_ts > last ? t->end_ts : last);
		rc = scan_finish(s);
		if (!rc && !pid)
			say_rank_chosen(s, d, err);
	}
	if (!rc && trace_reader__truncated(s->r) && !(s->damage = strdup(trace_reader__damage(s->r))))
		rc = -ENOMEM;
	trace_reader__damage_info(s->r, &s->dmg);
	if (dmg)
		*dmg = s->dmg;
	s->records = trace_reader__records(s->r);
	for (uint32_t i = 0; !rc && i < s->procs.cap; i++) {
		const struct scan_proc *p = s->procs.s[i].v;

		if (s->procs.s[i].used) {
			calls += p->calls;
			gpu += p->gpu;
		}
	}
	if (!rc && pid && (calls || gpu)) {
		const struct scan_proc *w = NULL;

		for (uint32_t i = 0; i < s->procs.cap && !w; i++)
			if (s->procs.s[i].used && ((const struct scan_proc *)s->procs.s[i].v)->pid == pid)
				w = s->procs.s[i].v;
		if (!w || (!w->calls && !w->gpu)) {
			fprintf(err, "gtrace-bpf: -p %u: that process made no CUDA call in %s\n", pid, path);
			gt_decoder__free(d);
			diff_scan__free(s);
			return 2;
		}
	}
	if (rc) {
		fail(err, path, why, rc);
	} else if (!calls && !gpu) {
		/* one line: of the damage when there is one */
		if (!trace_damage__report(&s->dmg, path, "it holds no CUDA calls", err))
			fprintf(err, "gtrace-bpf: %s holds no CUDA calls\n", path);
		rc = -ENODATA;
	}
	/* the names of the processes, which the side takes from here */
	for (uint32_t i = 0; !rc && i < s->procs.cap; i++) {
		struct scan_proc *p = s->procs.s[i].v;
		const char *name;

		if (!s->procs.s[i].used || !p->calls)
			continue;
		name = gt_decoder__process_name(d, p->pid);
		if (name && !(p->name = strdup(name)))
			rc = -ENOMEM;
	}
	gt_decoder__free(d);
	if (rc) {
		diff_scan__free(s);
		return 1;
	}
	*out = s;
	return 0;
}

const struct diff_cand *diff_scan__cands(const struct diff_scan *s, size_t *n)
{
	*n = s->ncands;
	return s->cands;
}

const char *diff_scan__cmdline(const struct diff_scan *s, uint32_t pid)
{
	const struct scan_proc *p = hmap_get(&s->procs, pid, 0);

	return p && p->name && *p->name ? p->name : NULL;
}

char *diff_scan__describe(const struct diff_scan *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < s->nseries; i++) {
		const struct scan_series *x = &s->series[i];
		const char *sep = i ? ", " : "";
		/* NVTX names whole, escaped: this goes to a terminal */
		char *name = x->name ? term_text__escape(x->name) : NULL;

		switch (x->c.source) {
		case DIFF_ITER_NVTX:
			fprintf(f, "%sNVTX '%s' (%u)", sep, name ? name : "", x->c.count);
			break;
		case DIFF_ITER_CAPTURE:
			fprintf(f, "%scapture ranges (%u)", sep, x->c.count);
			break;
		case DIFF_ITER_GRAPH:
			fprintf(f, "%sgraph %s (%u)", sep, name ? name : "", x->c.count);
			break;
		default:
			fprintf(f, "%skernels, a sequence of %u launches (%u)", sep, x->period,
				x->c.count);
			break;
		}
		free(name);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the second pass ----------------------------------------------------- */

struct agg {
	struct diff_side *side;
	struct gt_decoder *d;
	struct hmap sites;		/* (stack id, 0) -> its call site's row, or &no_site */
	uint32_t pid;
	struct diff_iterset its;	/* n 0: the whole run, iteration 0 */
	uint64_t unattributed;
	int err;
};

/* The iteration of time t, -1 when none (counted). */
static inline ssize_t agg_iter(struct agg *g, uint64_t t)
{
	ssize_t it = g->side->whole ? 0 : diff_iterset__find(&g->its, t);

	g->unattributed += it < 0;
	return it;
}

/* agg.sites' value for a stack that names no call site. */
static struct diff_acc no_site;

/* The row of stack's call site, found once a stack: NULL when out of
 * memory, &no_site when it has none. */
static struct diff_acc *site_row(struct agg *g, uint32_t stack)
{
	struct diff_acc *k = hmap_get(&g->sites, stack, 0);
	struct gt_frame f;
	char site[1200];
	void *old;

	if (k)
		return k;
	k = !gt_decoder__call_site(g->d, stack, &f) ? &no_site :
	    diff_names__get(&g->side->tab[DIFF_TAB_SITE], gt_frame__str(&f, site, sizeof(site)));
	return k && !hmap_put(&g->sites, stack, 0, k, &old) ? k : NULL;
}

static int agg_call(void *ctx, const struct gt_callrec *c)
{
	struct agg *g = ctx;
	bool timed = c->has_exit && !c->entry_only;
	struct diff_acc *k;
	ssize_t it;
	int err;

	if (c->pid != g->pid || c->api >= GT_API__COUNT || (it = agg_iter(g, c->ts)) < 0)
		return 0;
	err = diff_acc__add(diff_side__api(g->side, c->api), (uint32_t)it, timed, c->dur);
	/* a call with a stack: its call site's too (the program's line) */
	if (!err && c->stack && g->d) {
		k = site_row(g, c->stack);
		err = !k ? -ENOMEM : k == &no_site ? 0 : diff_acc__add(k, (uint32_t)it, timed, c->dur);
	}
	if (err || c->type != GT_T_LAUNCH)
		return err;
	k = diff_names__get(&g->side->tab[DIFF_TAB_LAUNCH],
			    c->graph ? GRAPH_NAME : c->kernel ? c->kernel : "unknown_kernel");
	return k ? diff_acc__add(k, (uint32_t)it, timed, c->dur) : -ENOMEM;
}

static int agg_other(void *ctx, const struct gt_hdr *rec)
{
	struct agg *g = ctx;
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *cp = (const void *)rec;
	const char *name, *mangled;
	char buf[64];
	uint64_t at, dur;
	struct diff_acc *a;
	ssize_t it;
	int err;

	if (rec->pid != g->pid || !gt_rec__size_ok(rec))
		return 0;
	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
		name = gt_decoder__gpu_kernel_name(g->d, k, &mangled);
		at = (k->flags & GT_GPU_LINKED) ? k->launch_ts : rec->ts;
		dur = k->dur;
		break;
	case GT_REC_GPU_MEMCPY:
		snprintf(buf, sizeof(buf), "[CUDA memcpy %s]",
			 gt_copy_kind__name(cp->kind < GT_COPY__COUNT ? (enum gt_copy_kind)cp->kind
								     : GT_COPY_UNKNOWN));
		name = buf;
		at = (cp->flags & GT_GPU_LINKED) ? cp->launch_ts : rec->ts;
		dur = cp->dur;
		break;
	case GT_REC_GPU_MEMSET:
		name = "[CUDA memset]";
		at = (cp->flags & GT_GPU_LINKED) ? cp->launch_ts : rec->ts;
		dur = cp->dur;
		break;
	default:
		return 0;
	}
	if ((it = agg_iter(g, at)) < 0)
		return 0;
	a = diff_names__get(&g->side->tab[DIFF_TAB_GPU], name);
	if (!a)
		return -ENOMEM;
	err = diff_acc__add(a, (uint32_t)it, true, dur);
	return err ? err : diff_side__gpu(g->side, (uint32_t)it, rec->ts, rec->ts + dur);
}

/* ---- analyze's view of the same span ------------------------------------ */

static void az_from_scope(const struct az_scope *sc, struct diff_az *az)
{
	static const char *const busy_sources[] = {
		[AZ_BUSY_NONE] = "none", [AZ_BUSY_GPU_RECORDS] = "gpu_records",
		[AZ_BUSY_GPU_METRICS] = "gpu_metrics", [AZ_BUSY_SYNC_ESTIMATE] = "sync_estimate",
	};
	const struct az_gpu *g = &sc->gpu;
	const struct az_cpu *c = &sc->cpu;
	bool rec = g->source == AZ_BUSY_GPU_RECORDS;
	uint64_t copies = 0;

	for (int k = 0; k < AZ_MEM_KINDS; k++)
		copies += sc->work.copy_ns[k];
#define TERM(t, val, when) (az->v[t] = (double)(val), az->known[t] = (when))
	TERM(DIFF_T_WALL, sc->end_ts > sc->start_ts ? sc->end_ts - sc->start_ts : 0, true);
	TERM(DIFF_T_GPU_BUSY, g->busy_ns, g->source != AZ_BUSY_NONE);
	TERM(DIFF_T_IDLE_SUBMIT, g->idle_ns[AZ_IDLE_SUBMIT], rec);
	TERM(DIFF_T_IDLE_LAUNCH, g->idle_ns[AZ_IDLE_LAUNCH], rec);
	TERM(DIFF_T_IDLE_SYNC, g->idle_ns[AZ_IDLE_SYNC], rec);
	TERM(DIFF_T_IDLE_OTHER, g->idle_ns[AZ_IDLE_OTHER], rec);
	TERM(DIFF_T_KERNELS, sc->work.kernel_ns, rec);
	TERM(DIFF_T_COPIES, copies, rec);
	TERM(DIFF_T_CPU_CALLS, c->calls_ns, c->threads > 0);
	TERM(DIFF_T_CPU_SYNC, c->sync_ns, c->threads > 0);
	TERM(DIFF_T_CPU_SYNC_BLOCKED, c->sync_blocked_ns, c->sched);
	TERM(DIFF_T_CPU_OUTSIDE, c->outside_ns, c->threads > 0);
	TERM(DIFF_T_CPU_OFF, c->off_ns, c->sched);
	TERM(DIFF_T_CPU_HOST, c->outside_ns > c->off_ns ? c->outside_ns - c->off_ns : 0, c->sched);
	TERM(DIFF_T_LAUNCHES, sc->work.launches, true);
#undef TERM
	az->bound = az_bound__name(sc->work.bound);
	az->busy_source = (unsigned)g->source < 4 ? busy_sources[g->source] : "none";
	for (size_t i = 0; i < sc->nfindings && az->nf < AZ_RULE__COUNT; i++) {
		const struct az_finding *f = &sc->findings[i];

		az->f[az->nf].id = az_rule__id(f->rule);
		az->f[az->nf].severity = az_severity__name(f->severity);
		az->f[az->nf++].cost_ns = f->cost_ns;
	}
	az->valid = true;
}

/* analyze over process pid, within the span of iterations x (NULL: the
 * whole run), in the same pass as the figures of the iterations (g, by
 * analyze's tap: the trace is read once for both).  What analyze cannot do
 * is said in az->why, not an error of the diff; a pass that could not read
 * or decode the whole trace is: it returns 1 after its line on out_err. */
static int side_analyze(const char *path, const struct scan_series *x, struct agg *g,
			struct diff_az *az, FILE *out_err)
{
	bool fed = false;
	struct analyze_opts o = {
		.pid = g->pid, .no_ranges = true, .tap_call = agg_call, .tap_other = agg_other,
		.tap_ctx = g, .tap_decoder = &g->d, .tap_fed = &fed,
	};
	struct analyze_result *r = NULL;
	uint32_t pid = g->pid;
	char *msg = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&msg, &len);
	int rc, ret = 0;

	if (x) {
		o.span = true;
		o.span_pid = pid;
		o.span_start = x->start[0];
		for (uint32_t i = 0; i < x->c.count; i++)
			if (x->end[i] > o.span_end)
				o.span_end = x->end[i];
		o.span_kind = AZ_SCOPE_RANGE;
	}
	rc = err ? analyze__file(path, &o, NULL, &r, err) : -ENOMEM;
	if (err)
		fclose(err);
	g->d = NULL;	/* analyze's, freed with its pass */
	if (!fed) {
		/* the figures are not whole: analyze's line says why */
		if (msg && *msg)
			fprintf(out_err, "%.*s\n", (int)strcspn(msg, "\n"), msg);
		else
			fprintf(out_err, "gtrace-bpf: failed to read %s: %s\n", path, strerror(ENOMEM));
		ret = 1;
	}
	for (size_t i = 0; !rc && i < r->nscopes; i++)
		if (r->scopes[i].pid == pid) {
			az_from_scope(&r->scopes[i], az);
			break;
		}
	if (!az->valid) {
		const char *m = msg && *msg ? msg : "analyze found no figures of the process";

		if (!strncmp(m, "gtrace-bpf: ", 12))
			m += 12;
		snprintf(az->why, sizeof(az->why), "%.*s", (int)strcspn(m, "\n"), m);
	}
	analyze_result__free(r);
	free(msg);
	return ret;
}

static struct scan_proc *proc_find(const struct diff_scan *s, uint32_t pid)
{
	return hmap_get(&s->procs, pid, 0);
}

int diff_scan__side(struct diff_scan *s, ssize_t ci, struct diff_side **out, FILE *err)
{
	const struct scan_series *x = ci >= 0 ? &s->series[ci] : NULL;
	struct agg g = { .pid = x ? x->c.pid : s->main_pid };
	const struct scan_proc *p = proc_find(s, g.pid);
	struct diff_side_info *info;

	*out = NULL;
	g.side = diff_side__new(x ? x->c.count : 1, !x);
	if (!g.side) {
		fprintf(err, "gtrace-bpf: failed to read %s: %s\n", s->path, strerror(ENOMEM));
		return 1;
	}
	info = &g.side->info;
	*info = (struct diff_side_info){
		.path = s->path, .pid = g.pid, .processes = s->nprocs, .records = s->records,
		.calls = p ? p->calls : 0, .gpu_records = p ? p->gpu : 0,
		.sampled = capture_spans__light(s->cap), .damage = s->damage, .dmg = s->dmg,
		.cmdline = p && p->name ? p->name : "",
	};
	if (x) {
		info->it.source = x->c.source;
		info->it.name = x->name;
		info->it.period = x->period;
		info->it.off_sequence = x->off;
		info->it.found = x->found;
		info->it.startup = x->startup;
		info->it.tail = x->tail;
		info->it.steady = x->steady;
		info->it.steady_start = x->start[0];
		for (uint32_t i = 0; i < x->c.count; i++)
			if (x->end[i] > info->it.steady_end)
				info->it.steady_end = x->end[i];
		g.its = (struct diff_iterset){ .start = x->start, .end = x->end, .n = x->c.count };
		for (uint32_t i = 0; i < x->c.count; i++)
			g.side->iter_ns[i] = x->end[i] - x->start[i];
	} else {
		g.side->iter_ns[0] = p && p->last_ts > p->first_ts ? p->last_ts - p->first_ts : 0;
	}
	if (side_analyze(s->path, x, &g, &g.side->az, err)) {
		free(g.sites.s);
		diff_side__free(g.side);
		return 1;
	}
	free(g.sites.s);	/* values are the side's rows */
	info->it.unattributed = g.unattributed;
	diff_side__finish(g.side);
	*out = g.side;
	return 0;
}

/* What the values of the scan's maps own. */
static void proc_free(void *v)
{
	struct scan_proc *p = v;

	free(p->ids);
	free(p->ts);
	free(p->name);
	diff_seq__free(&p->seq);
}

static void nvtx_free(void *v)
{
	free(((struct scan_nvtx *)v)->v);
}

static void graph_free(void *v)
{
	free(((struct scan_graph *)v)->ts);
}

void diff_scan__free(struct diff_scan *s)
{
	if (!s)
		return;
	hmap_free_all(&s->procs, proc_free);
	hmap_free_all(&s->nvtx, nvtx_free);
	hmap_free_all(&s->graphs, graph_free);
	for (size_t i = 0; i < s->nseries; i++)
		series_free(&s->series[i]);
	free(s->series);
	free(s->cands);
	diff_names__free(&s->seq_names);
	diff_names__free(&s->nvtx_names);
	capture_spans__free(s->cap);
	steady_scan__free(s->steady);
	trace_reader__close(s->r);
	free(s->damage);
	free(s);
}
