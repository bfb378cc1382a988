// SPDX-License-Identifier: MIT
/*
 * A finished scope of `gtrace-bpf analyze`: its figures and the findings
 * (the three answers in words: analyze_answers.c).
 *
 * The rules (thresholds in the table below, definitions in analyze.h and
 * user/analyze/README.md).  A rule fires only past its thresholds, so that
 * a trace of a program that keeps its GPU busy has none.  Severity is the
 * cost's share of the scope's wall time (times its devices): high from
 * 20 %, medium from 5 %, low below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "analyze/words.h"
#include "decode/capture_spans.h"
#include "format/api.h"
#include "lib/term_text.h"
#include "lib/vec.h"
#include "lib/cmp.h"

#define MIN_ACTIVE_NS	1000000ull	/* gpu_time_util: at least 1 ms of GPU activity */
#define MIN_KERNELS	100		/* launch_bound */
#define MIN_REPEATS	10		/* sync_in_loop, cuda_api_sync, memcpy/memset_sync, small_grid */
#define MIN_NCCL_WAIT_NS	1000000ull	/* nccl_wait, nccl_straggler: 1 ms or more in all */
#define MAX_PER_WAIT	3		/* sync_in_loop: a wait every this many launches or fewer */

/* ---- the result's strings --------------------------------------------------- */

const char *az_store__keep(struct az_store *st, const char *str)
{
	char *copy;

	if (!str)
		return NULL;
	if (vec__reserve(&st->strs, &st->cap, st->n, 1, 64))
		return NULL;
	copy = strdup(str);
	if (copy)
		st->strs[st->n++] = copy;
	return copy;
}

const char *az_store__printf(struct az_store *st, const char *fmt, ...)
{
	char *s;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if (vec__reserve(&st->strs, &st->cap, st->n, 1, 64)) {
		free(s);
		return NULL;
	}
	st->strs[st->n++] = s;
	return s;
}

void az_store__free(struct az_store *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->strs[i]);
	free(st->strs);
	*st = (struct az_store){ 0 };
}

/* ---- figures ------------------------------------------------------------------- */

static int cmp_kname(const void *pa, const void *pb)
{
	const struct az_kname *x = *(struct az_kname *const *)pa, *y = *(struct az_kname *const *)pb;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int top_kernels(struct analyze *a, struct az_acc *acc, struct az_work *w)
{
	struct az_kname **v = malloc((acc->knames.n ? acc->knames.n : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < acc->knames.cap; i++)
		if (acc->knames.s[i].used)
			v[n++] = acc->knames.s[i].v;
	cmp__sort(v, n, sizeof(*v), cmp_kname);
	for (size_t i = 0; i < n && w->nkernels < AZ_TOP_KERNELS; i++) {
		struct az_kernel *k = &w->top[w->nkernels];

		k->name = az_store__keep(&a->store, v[i]->name);
		if (!k->name) {
			free(v);
			return -ENOMEM;
		}
		k->kclass = v[i]->kclass;
		k->count = v[i]->count;
		k->total_ns = v[i]->ns;
		w->nkernels++;
	}
	free(v);
	return 0;
}

static int64_t mean_micro(int64_t sum, uint64_t n)
{
	return n ? sum / (int64_t)n : -1;
}

static void fill_gpu(struct analyze *a, struct az_acc *acc, struct az_scope *s)
{
	struct az_gpu *g = &s->gpu;
	uint64_t wall = s->end_ts > s->start_ts ? s->end_ts - s->start_ts : 0;

	(void)a;
	g->devices = acc->ndevs;
	for (uint32_t i = 0; i < acc->ndevs; i++) {
		g->busy_ns += acc->devs[i].busy;
		g->concurrent_ns += acc->devs[i].conc;
		g->active_ns += acc->devs[i].last_end - acc->devs[i].first;
	}
	g->wall_ns = wall * (acc->ndevs ? acc->ndevs : 1);
	memcpy(g->idle_ns, acc->idle, sizeof(g->idle_ns));
	memcpy(g->idle_gaps, acc->gaps, sizeof(g->idle_gaps));
	g->submit_in_cuda_ns = acc->submit_in_cuda;
	g->work = acc->work;
	g->late = acc->late;
	g->unlinked = acc->unlinked;
	g->waits = acc->waits;
	g->util_micro = mean_micro(acc->m_util, acc->m_util_n);
	g->util_samples = acc->m_util_n;
	if (acc->ndevs) {
		g->source = AZ_BUSY_GPU_RECORDS;
	} else if (acc->m_util_n) {
		g->source = AZ_BUSY_GPU_METRICS;
		g->busy_ns = (uint64_t)((double)wall * (double)g->util_micro / 1e8);
	} else if (acc->est_ns) {
		g->source = AZ_BUSY_SYNC_ESTIMATE;
		g->busy_ns = acc->est_ns;
	}
}

/* The activity means: over the busy samples, or every sample when the
 * scope has no utilization; none from fewer than AZ_METRIC_MIN. */
static void fill_metrics(const struct analyze *a, const struct az_acc *acc, struct az_work *w)
{
	const struct az_msum *m = acc->m_util_n ? &acc->m_busy : &acc->m_nogate;
	bool enough = m->samples >= AZ_METRIC_MIN;

	w->metric_samples = m->samples;
	w->metric_idle = acc->m_idle;
	w->metric_all = !acc->m_util_n && m->samples;
	w->metric_hz = a->gpum_hz;
	w->tensor_micro = enough ? mean_micro(m->sum[AZ_M_TENSOR], m->n[AZ_M_TENSOR]) : -1;
	w->dram_micro = enough ? mean_micro(m->sum[AZ_M_DRAM], m->n[AZ_M_DRAM]) : -1;
	w->sm_micro = enough ? mean_micro(m->sum[AZ_M_SM], m->n[AZ_M_SM]) : -1;
}

static void fill_cpu(struct analyze *a, struct az_acc *acc, struct az_cpu *c)
{
	c->sched = a->sched;
	c->calls = acc->calls;
	c->incomplete = acc->incomplete;
	c->cut = acc->cut;
	for (uint32_t i = 0; i < acc->threads.cap; i++) {
		const struct az_tacc *t = acc->threads.s[i].v;
		uint64_t span, off, in_calls;

		if (!acc->threads.s[i].used || (!t->first && !t->last))
			continue;
		span = t->last > t->first ? t->last - t->first : 0;
		off = t->off_last > t->off_first ? t->off_last - t->off_first : 0;
		in_calls = t->calls_off_ns + t->sync_off_ns;
		c->threads++;
		c->span_ns += span;
		c->calls_ns += t->calls_ns;
		c->sync_ns += t->sync_ns;
		c->sync_blocked_ns += t->sync_off_ns;
		c->sync_cut_ns += t->sync_cut_ns;
		c->off_ns += off > in_calls ? off - in_calls : 0;
		c->outside_ns += span > t->calls_ns + t->sync_ns ? span - t->calls_ns - t->sync_ns : 0;
	}
}

/* The verdict of question 2. */
static enum az_bound verdict(const struct az_scope *s, bool launch_bound)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_work *w = &s->work;
	const struct az_cpu *c = &s->cpu;
	uint64_t share[AZ_BOUND_HOST + 1] = { 0 }, best = 0, copy = 0;
	enum az_bound b = AZ_BOUND_UNKNOWN;

	if (g->source == AZ_BUSY_GPU_METRICS) {
		/* device-wide pipes: the tensor or FP pipes busy is compute, the
		 * DRAM near its bandwidth memory */
		if (g->util_micro < 50000000)
			return AZ_BOUND_HOST;
		if (w->tensor_micro >= 30000000)
			return AZ_BOUND_COMPUTE;
		if (w->dram_micro >= 50000000)
			return AZ_BOUND_MEMORY;
		return AZ_BOUND_KERNELS;
	}
	if (g->source != AZ_BUSY_GPU_RECORDS) {
		/* from the host's side only */
		if (!c->span_ns)
			return AZ_BOUND_UNKNOWN;
		if (c->outside_ns * 2 >= c->span_ns)
			return AZ_BOUND_HOST;
		if (c->sync_ns * 2 >= c->span_ns)
			return AZ_BOUND_KERNELS;
		return AZ_BOUND_UNKNOWN;
	}
	if (g->busy_ns * 2 < g->active_ns) {
		uint64_t sub = g->idle_ns[AZ_IDLE_SUBMIT], lau = g->idle_ns[AZ_IDLE_LAUNCH];

		if (launch_bound || (lau > sub && lau > g->idle_ns[AZ_IDLE_SYNC] &&
				     lau > g->idle_ns[AZ_IDLE_OTHER]))
			return AZ_BOUND_LAUNCH;
		return AZ_BOUND_HOST;
	}
	for (int k = 0; k < AZ_MEM_KINDS; k++)
		copy += w->copy_ns[k];
	share[AZ_BOUND_COMPUTE] = w->class_ns[AZ_KC_GEMM] + w->class_ns[AZ_KC_CONV] +
				  w->class_ns[AZ_KC_ATTENTION];
	share[AZ_BOUND_MEMORY] = w->class_ns[AZ_KC_ELEMENTWISE] + w->class_ns[AZ_KC_REDUCTION];
	share[AZ_BOUND_COMMUNICATION] = w->class_ns[AZ_KC_NCCL];
	share[AZ_BOUND_TRANSFERS] = copy;
	share[AZ_BOUND_KERNELS] = w->class_ns[AZ_KC_OTHER];
	for (int k = AZ_BOUND_COMPUTE; k <= AZ_BOUND_KERNELS; k++)
		if (share[k] > best) {
			best = share[k];
			b = (enum az_bound)k;
		}
	/* kernels whose names say nothing: the GPU metrics may */
	if (b == AZ_BOUND_KERNELS && w->tensor_micro >= 30000000)
		return AZ_BOUND_COMPUTE;
	if (b == AZ_BOUND_KERNELS && w->dram_micro >= 50000000)
		return AZ_BOUND_MEMORY;
	return b;
}

/* ---- findings ------------------------------------------------------------------ */

static const char *const fixes[AZ_RULE__COUNT] = {
#define AZ_RULE(name, id, what, fix) [AZ_RULE_##name] = fix,
#include "analyze/rule_table.h"
#undef AZ_RULE
};

struct rule_ctx {
	struct analyze *a;
	struct az_scope *s;
	uint64_t wall;		/* for severities */
	int err;
};

static void add_finding(struct rule_ctx *rc, enum az_rule rule, uint64_t cost, bool upper,
			uint64_t count, const struct az_top *ex, const char *summary)
{
	struct az_scope *s = rc->s;
	struct az_finding *f;
	double share = rc->wall ? (double)cost / (double)rc->wall : 0;
	struct az_top sorted = ex ? *ex : (struct az_top){ 0 };

	if (rc->err)
		return;
	if (!summary) {
		rc->err = -ENOMEM;
		return;
	}
	if (rc->a->o.rules && !(rc->a->o.rules & (1u << rule)))
		return;		/* --rules left it out */
	f = realloc(s->findings, (s->nfindings + 1) * sizeof(*f));
	if (!f) {
		rc->err = -ENOMEM;
		return;
	}
	s->findings = f;
	f = &s->findings[s->nfindings++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->id = az_rule__id(rule);
	f->severity = share >= 0.20 ? AZ_SEV_HIGH : share >= 0.05 ? AZ_SEV_MEDIUM : AZ_SEV_LOW;
	f->cost_ns = cost;
	f->cost_upper = upper;
	f->count = count;
	f->summary = summary;
	f->fix = fixes[rule];
	/* examples by value, highest first; ties by time */
	for (uint32_t i = 0; i < sorted.n; i++)
		for (uint32_t j = i + 1; j < sorted.n; j++)
			if (sorted.v[j].value > sorted.v[i].value ||
			    (sorted.v[j].value == sorted.v[i].value &&
			     sorted.v[j].ex.ts < sorted.v[i].ex.ts)) {
				struct az_top_ent t = sorted.v[i];

				sorted.v[i] = sorted.v[j];
				sorted.v[j] = t;
			}
	for (uint32_t i = 0; i < sorted.n; i++) {
		const char *what = sorted.v[i].ex.what ? sorted.v[i].ex.what : "";
		struct gt_frame site;
		char buf[1200];

		f->examples[i] = sorted.v[i].ex;
		/* where the program made the call, when its stack was taken */
		if (sorted.v[i].ex.stack && rc->a->d && gt_decoder__call_site(rc->a->d, sorted.v[i].ex.stack, &site))
			f->examples[i].what = az_store__printf(&rc->a->store, "%s from %s", what,
							       gt_frame__str(&site, buf, sizeof(buf)));
		else
			f->examples[i].what = az_store__keep(&rc->a->store, what);
		if (!f->examples[i].what)
			rc->err = -ENOMEM;
	}
	f->nexamples = sorted.n;
}

/* sync_site: the call sites of the scope's synchronize calls (those with a
 * stack) by the host's time waiting there; the finding costs the top one's,
 * its examples are the longest wait of each of the top sites. */
static void sync_sites(struct rule_ctx *rc, const struct az_acc *acc)
{
	struct az_top top = { 0 };
	const struct az_site *best = NULL;
	struct az_store *st = &rc->a->store;
	struct gt_frame f;
	char buf[1200];
	uint64_t nsites = 0;

	for (uint32_t i = 0; i < acc->sites.cap; i++) {
		const struct az_site *s = acc->sites.s[i].v;

		if (!acc->sites.s[i].used)
			continue;
		nsites++;
		if (!best || s->ns > best->ns)
			best = s;
		az_top__add_at(&top, s->ns, s->longest.ex.ts, s->longest.ex.dur, s->longest.ex.pid,
			       s->longest.ex.tid, s->longest.ex.what, s->longest.ex.stack);
	}
	if (!best || !gt_decoder__call_site(rc->a->d, best->longest.ex.stack, &f))
		return;
	add_finding(rc, AZ_RULE_SYNC_SITE, best->ns, false, best->n, &top,
		    az_store__printf(st, "the host waited %s in %s synchronize call%s from %s call site%s; "
				     "most at %s: %s in %s call%s (%s of the waits)",
				     D(acc->site_wait_ns), N(acc->site_waits), acc->site_waits == 1 ? "" : "s", N(nsites),
				     nsites == 1 ? "" : "s", gt_frame__str(&f, buf, sizeof(buf)),
				     D(best->ns), N(best->n), best->n == 1 ? "" : "s", P(best->ns, acc->site_wait_ns)));
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct az_finding *x = pa, *y = pb;

	if (x->cost_ns != y->cost_ns)
		return x->cost_ns > y->cost_ns ? -1 : 1;
	return (int)x->rule - (int)y->rule;
}

static bool launch_bound_holds(const struct az_scope *s)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_work *w = &s->work;
	uint64_t idle_in = g->idle_ns[AZ_IDLE_SUBMIT] + g->idle_ns[AZ_IDLE_LAUNCH] +
			   g->idle_ns[AZ_IDLE_SYNC] + g->idle_ns[AZ_IDLE_OTHER];
	bool is_call = false;
	uint64_t cost = az__launch_cost(w, &is_call);

	return g->source == AZ_BUSY_GPU_RECORDS && w->kernels >= MIN_KERNELS && cost &&
	       w->kernel_median_ns < cost && g->busy_ns * 2 < g->active_ns &&
	       (g->idle_ns[AZ_IDLE_SUBMIT] + g->idle_ns[AZ_IDLE_LAUNCH]) * 2 >= idle_in;
}

static void rules(struct rule_ctx *rc, struct az_acc *acc)
{
	struct az_scope *s = rc->s;
	struct az_store *st = &rc->a->store;
	const struct az_gpu *g = &s->gpu;
	const struct az_work *w = &s->work;
	const struct az_parallel *par = &s->par;
	bool gpu = g->source == AZ_BUSY_GPU_RECORDS, is_call;
	uint64_t wall = s->end_ts > s->start_ts ? s->end_ts - s->start_ts : 0, copy = 0;

	for (int k = 0; k < AZ_MEM_KINDS; k++)
		copy += w->copy_ns[k];
	if (gpu && g->active_ns >= MIN_ACTIVE_NS && g->busy_ns * 2 < g->active_ns)
		add_finding(rc, AZ_RULE_GPU_TIME_UTIL, g->active_ns - g->busy_ns, false, acc->nidle,
			    &acc->gap_top,
			    az_store__printf(st, "GPU busy %s of the %s from its first to its last "
					     "GPU work: %s idle in %s intervals",
					     P(g->busy_ns, g->active_ns), D(g->active_ns),
					     D(g->active_ns - g->busy_ns), N(acc->nidle)));
	if (gpu && acc->long_gaps)
		add_finding(rc, AZ_RULE_GPU_GAPS, acc->long_gap_ns, false, acc->long_gaps,
			    &acc->long_top,
			    az_store__printf(st, "%s GPU idle gaps of 500 ms or more, %s in all",
					     N(acc->long_gaps), D(acc->long_gap_ns)));
	if (launch_bound_holds(s)) {
		uint64_t cost = az__launch_cost(w, &is_call);

		add_finding(rc, AZ_RULE_LAUNCH_BOUND,
			    g->idle_ns[AZ_IDLE_SUBMIT] + g->idle_ns[AZ_IDLE_LAUNCH], false, w->kernels,
			    &acc->submit_top,
			    az_store__printf(st, "%s kernels, median %s on the GPU, %s per launch on "
					     "the CPU (%s); the GPU waited %s for launches",
					     N(w->kernels), D(w->kernel_median_ns), D(cost),
					     is_call ? "median launch call" :
						       "median interval between launches",
					     D(g->idle_ns[AZ_IDLE_SUBMIT] + g->idle_ns[AZ_IDLE_LAUNCH])));
	}
	if (gpu && acc->sync_gaps_wait >= MIN_REPEATS && acc->sync_idle_wait * 20 >= g->active_ns)
		add_finding(rc, AZ_RULE_CUDA_API_SYNC, acc->sync_idle_wait, false, acc->sync_gaps_wait,
			    &acc->sync_top,
			    az_store__printf(st, "the GPU drained and idled %s behind synchronize "
					     "calls, %s times (%s of its active time)",
					     D(acc->sync_idle_wait), N(acc->sync_gaps_wait),
					     P(acc->sync_idle_wait, g->active_ns)));
	if (par->waits >= MIN_REPEATS && acc->per_wait.n >= MIN_REPEATS &&
	    par->launches_per_wait <= MAX_PER_WAIT)
		add_finding(rc, AZ_RULE_SYNC_IN_LOOP, acc->wait_ns, false, par->waits, &acc->wait_top,
			    az_store__printf(st, "%s synchronize calls, one every %s launch%s "
					     "(median); the host waited %s in them",
					     N(par->waits), N(par->launches_per_wait),
					     par->launches_per_wait == 1 ? "" : "es", D(acc->wait_ns)));
	if (acc->site_waits >= MIN_REPEATS)
		sync_sites(rc, acc);
	if (acc->bc_inside >= MIN_REPEATS)
		add_finding(rc, AZ_RULE_MEMCPY_SYNC, acc->bc_inside_ns, false, acc->bc_inside,
			    &acc->bc_top,
			    az_store__printf(st, "%s blocking copies between host and device among "
					     "the launches, %s in the calls", N(acc->bc_inside),
					     D(acc->bc_inside_ns)));
	if (acc->pageable)
		add_finding(rc, AZ_RULE_MEMCPY_ASYNC, acc->pageable_ns, false, acc->pageable,
			    &acc->pageable_top,
			    az_store__printf(st, "%s async copies of pageable host memory (not from "
					     "cuMemAllocHost or cuMemHostAlloc), %s in the calls",
					     N(acc->pageable), D(acc->pageable_ns)));
	if (acc->ms_inside >= MIN_REPEATS)
		add_finding(rc, AZ_RULE_MEMSET_SYNC, acc->ms_inside_ns, false, acc->ms_inside,
			    &acc->ms_top,
			    az_store__printf(st, "%s synchronous sets among the launches, %s in the "
					     "calls", N(acc->ms_inside), D(acc->ms_inside_ns)));
	if (gpu ? (par->small_kernels >= MIN_REPEATS && par->small_ns * 10 >= w->kernel_ns)
		: (par->small_kernels >= MIN_REPEATS && par->small_kernels * 10 >= w->launches))
		add_finding(rc, AZ_RULE_SMALL_GRID, par->small_ns, true, par->small_kernels,
			    gpu ? &acc->small_top : &acc->small_launch_top,
			    az_store__printf(st, "%s of %s %s had grids of fewer blocks than %s %s "
					     "SMs%s%s%s", N(par->small_kernels),
					     N(gpu ? w->kernels : w->launches),
					     gpu ? "kernels" : "launches",
					     par->sm_assumed ? "the assumed" : "the GPU's",
					     N(par->sm_count),
					     par->sm_assumed ? " (the trace does not say; give --sms)" : "",
					     gpu ? ", " : "", gpu ? D(par->small_ns) : ""));
	if (gpu && par->streams == 1 && w->kernels >= MIN_REPEATS) {
		uint64_t overlap = (copy < w->kernel_ns ? copy : w->kernel_ns) + par->small_ns;

		if (overlap > g->busy_ns)
			overlap = g->busy_ns;
		if (overlap * 10 >= g->busy_ns)
			add_finding(rc, AZ_RULE_SINGLE_STREAM, overlap, true, w->kernels,
				    copy >= par->small_ns ? &acc->copy_top : &acc->small_top,
				    az_store__printf(st, "all its GPU work ran on one stream; up to %s "
						     "could have overlapped (%s of copies beside %s of "
						     "kernels, %s of small-grid kernels)",
						     D(overlap), D(copy), D(w->kernel_ns),
						     D(par->small_ns)));
	}
	if (par->legacy_launches && acc->created_stream_launches)
		add_finding(rc, AZ_RULE_DEFAULT_STREAM, 0, false, par->legacy_launches,
			    &acc->legacy_top,
			    az_store__printf(st, "%s launches on the legacy default stream beside %s "
					     "on other streams", N(par->legacy_launches),
					     N(acc->created_stream_launches)));
	if (par->host_gaps && par->host_gap_ns * 50 >= wall)
		add_finding(rc, AZ_RULE_HOST_STALL, par->host_gap_ns, false, par->host_gaps,
			    gpu ? &acc->host_top : &acc->thost_top,
			    az_store__printf(st, "%s %s of 1 ms or more while the host was outside "
					     "CUDA, %s in all (%s of the wall time)", N(par->host_gaps),
					     gpu ? "GPU idle intervals" : "gaps between launches",
					     D(par->host_gap_ns), P(par->host_gap_ns, wall)));
	if (s->comm.waited_ns >= MIN_NCCL_WAIT_NS && s->comm.waited_ns * 50 >= wall) {
		char who[80], pid[40];

		gt_pid_text(pid, sizeof(pid), s->comm.waited_for_pid);
		if (s->comm.waited_for_rank >= 0)
			snprintf(who, sizeof(who), "rank %d (pid %s)", s->comm.waited_for_rank, pid);
		else
			snprintf(who, sizeof(who), "pid %s", pid);
		add_finding(rc, AZ_RULE_NCCL_WAIT, s->comm.waited_ns, false,
			    s->comm.matched - s->comm.last, &acc->nccl_wait_top,
			    az_store__printf(st, "waited %s for later ranks in %s of its %s matched "
					     "collectives (by the calls' entries); %s of it for %s",
					     D(s->comm.waited_ns), N(s->comm.matched - s->comm.last),
					     N(s->comm.matched), D(s->comm.waited_for_ns), who));
	}
	if (s->comm.last && s->comm.caused_ns >= MIN_NCCL_WAIT_NS && s->comm.caused_ns * 50 >= wall)
		add_finding(rc, AZ_RULE_NCCL_STRAGGLER, s->comm.caused_ns, false, s->comm.last,
			    &acc->nccl_last_top,
			    az_store__printf(st, "came last to %s of its %s matched collectives; the "
					     "other ranks waited %s for it in all", N(s->comm.last),
					     N(s->comm.matched), D(s->comm.caused_ns)));
	if (s->nfindings > 1)
		cmp__sort(s->findings, s->nfindings, sizeof(*s->findings), cmp_finding);
}

/* ---- a scope ------------------------------------------------------------------- */

int az_rules__scope(struct analyze *a, struct az_acc *acc, struct az_scope *s)
{
	struct rule_ctx rc = { .a = a, .s = s };
	const char *name = a->d ? gt_decoder__process_name(a->d, acc->pid) : NULL;
	int err;

	s->kind = acc->kind;
	s->pid = acc->pid;
	s->number = acc->number;
	s->start_ts = acc->start;
	s->end_ts = acc->end > acc->start ? acc->end : acc->start;
	if (name && !(s->name = az_store__keep(&a->store, name)))
		return -ENOMEM;
	fill_gpu(a, acc, s);
	fill_cpu(a, acc, &s->cpu);
	s->work.kernels = acc->kernels;
	s->work.kernel_ns = acc->kernel_ns;
	s->work.kernel_median_ns = loghist__median(&acc->kdur);
	memcpy(s->work.class_ns, acc->class_ns, sizeof(acc->class_ns));
	memcpy(s->work.class_count, acc->class_count, sizeof(acc->class_count));
	memcpy(s->work.copy_ns, acc->copy_ns, sizeof(acc->copy_ns));
	memcpy(s->work.copy_bytes, acc->copy_bytes, sizeof(acc->copy_bytes));
	memcpy(s->work.copy_count, acc->copy_count, sizeof(acc->copy_count));
	s->work.launches = acc->launches;
	s->work.launch_median_ns = loghist__median(&acc->launch_dur);
	s->work.launch_gap_median_ns = loghist__median(&acc->launch_gap);
	fill_metrics(a, acc, &s->work);
	err = top_kernels(a, acc, &s->work);
	if (err)
		return err;
	s->par.streams = acc->ndevs ? acc->gstreams.n : acc->lstreams.n;
	s->par.legacy_launches = acc->legacy;
	s->par.sm_count = a->sm_count;
	s->par.sm_assumed = a->sm_assumed;
	s->par.small_kernels = acc->ndevs ? acc->small_kernels : acc->small_launches;
	s->par.small_ns = acc->ndevs ? acc->small_ns : 0;
	s->par.waits = acc->waits;
	s->par.launches_per_wait = loghist__median(&acc->per_wait);
	s->par.blocking_copies = acc->bc_inside;
	s->par.host_gaps = acc->ndevs ? acc->host_gaps : acc->thost_gaps;
	s->par.host_gap_ns = acc->ndevs ? acc->host_gap_ns : acc->thost_gap_ns;
	s->comm = acc->comm;
	if (!s->comm.calls)
		s->comm.rank = s->comm.world = s->comm.waited_for_rank = -1;
	s->work.bound = verdict(s, launch_bound_holds(s));
	rc.wall = s->gpu.wall_ns;
	rules(&rc, acc);
	if (rc.err)
		return rc.err;
	return az_answers__write(&a->store, s);
}
