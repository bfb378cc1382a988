// SPDX-License-Identifier: MIT
/*
 * The core of `gtrace-bpf analyze` (see analyze.h): the decoder's calls and
 * the other records, routed to the scopes they count in (the process, its
 * capture range open at the time), with the per-thread state the CPU side
 * and the GPU's idle split need.
 *
 * Per call, one lookup of the thread (cached) and one of its scope thread
 * per scope; per launch, one of its stream; per GPU record, a heap push and
 * pop (analyze_gpu.c) and a lookup of its kernel name by address.
 *
 * Time in calls counts top-level calls only (a call made while another of
 * the thread is open is inside it): the entry hook counts a thread's open
 * entries, and hands each entry the thread's off-CPU total so far, which
 * its call gets back as the cookie: the off-CPU time inside a call is the
 * total at its exit minus that.
 *
 * What a call counts in a scope (and the process' allocations, which tell
 * a copy's host memory) is in analyze_calls.c, the names (rule ids,
 * classes) in analyze_names.c, the GPU metric samples in analyze_metric.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "format/api.h"
#include "format/records.h"
#include "lib/vec.h"
#include "lib/cmp.h"

/* ---- scopes, processes, threads ------------------------------------------- */

static struct az_acc *acc_new(struct analyze *a, enum az_scope_kind kind, uint32_t pid,
			      uint32_t number)
{
	struct az_acc *acc = calloc(1, sizeof(*acc));

	if (!acc) {
		a->err = -ENOMEM;
		return NULL;
	}
	acc->kind = kind;
	acc->pid = pid;
	acc->number = number;
	return acc;
}

static void free_map(struct hmap *m, bool values)
{
	if (values)
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->s[i].used)
				free(m->s[i].v);
	free(m->s);
	*m = (struct hmap){ 0 };
}

static void acc_free(struct az_acc *acc)
{
	if (!acc)
		return;
	free_map(&acc->threads, true);
	free_map(&acc->lstreams, false);
	free_map(&acc->knames, true);
	free_map(&acc->gstreams, false);
	free_map(&acc->sites, true);
	loghist__free(&acc->launch_dur);
	loghist__free(&acc->launch_gap);
	loghist__free(&acc->per_wait);
	loghist__free(&acc->kdur);
	az_gpu__free_acc(acc);
	az_nccl__free_acc(acc);
	free(acc);
}

static struct az_proc *proc_get(struct analyze *a, uint32_t pid)
{
	struct az_proc *p = a->last_proc;
	void *old;

	if (p && p->pid == pid)
		return p;
	p = hmap_get(&a->procs, pid, 0);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || hmap_put(&a->procs, pid, 0, p, &old)) {
			free(p);
			a->err = -ENOMEM;
			return NULL;
		}
		p->pid = pid;
		p->whole = acc_new(a, a->o.span ? a->o.span_kind : AZ_SCOPE_PROCESS, pid,
				   a->o.span ? a->o.span_number : 0);
		if (!p->whole)
			return NULL;
		for (size_t i = 0; i < a->nphases; i++) {
			if (a->phase_pids[i] != pid)
				continue;
			p->phases = &a->phases[i];
			p->steady = acc_new(a, AZ_SCOPE_STEADY, pid, 0);
			if (!p->steady)
				return NULL;
			p->steady->start = p->steady->end = p->phases->start_ts;
			p->steady->have_start = true;
			break;
		}
		/* --range: the wall time is the span's */
		if (a->o.span) {
			p->whole->start = a->o.span_start;
			p->whole->end = a->o.span_end;
			p->whole->have_start = true;
		}
	}
	a->last_proc = p;
	return p;
}

static struct az_thread *thread_get(struct analyze *a, uint32_t pid, uint32_t tid)
{
	struct az_thread *t = a->last_thread;
	void *old;

	if (t && t->tid == tid && t->pid == pid)
		return t;
	t = hmap_get(&a->threads, tid, pid);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hmap_put(&a->threads, tid, pid, t, &old)) {
			free(t);
			a->err = -ENOMEM;
			return NULL;
		}
		t->pid = pid;
		t->tid = tid;
	}
	a->last_thread = t;
	return t;
}

struct az_proc *az__proc(struct analyze *a, uint32_t pid)
{
	return proc_get(a, pid);
}

/* Whether records of pid at ts count at all (-p, --range). */
static inline bool wanted(const struct analyze *a, uint32_t pid, uint64_t ts)
{
	if (!pid || (a->o.pid && pid != a->o.pid))
		return false;
	if (!a->o.span)
		return true;
	return (!a->o.span_pid || a->o.span_pid == pid) && ts >= a->o.span_start &&
	       ts <= a->o.span_end;
}

bool az__wanted(const struct analyze *a, uint32_t pid, uint64_t ts)
{
	return wanted(a, pid, ts);
}

/* The scopes a record of p at ts counts in: 1 to 3 of them into acc[]. */
static int scopes_of(struct az_proc *p, uint64_t ts, struct az_acc *acc[3])
{
	int n = 0;

	acc[0] = acc[1] = acc[2] = NULL;
	acc[n++] = p->whole;
	if (p->range && ts >= p->range->start)
		acc[n++] = p->range;
	if (p->steady && ts >= p->phases->start_ts && ts <= p->phases->end_ts)
		acc[n++] = p->steady;
	return n;
}

const char *az_startup__name(enum az_startup k)
{
	static const char *const names[] = { "module_loads", "allocations", "synchronizations", "init",
					     "other" };

	return (unsigned)k < AZ_SU__COUNT ? names[k] : "other";
}

static uint8_t wait_kind_of(const struct gt_api_info *ai);

/* A call of p before its steady state: what start-up spent its time on. */
static void startup_call(struct az_proc *p, const struct gt_callrec *c)
{
	const struct gt_api_info *ai = gt_api__info(c->api);
	enum az_startup k;

	if (!p->phases || c->ts >= p->phases->start_ts)
		return;
	switch (c->type) {
	case GT_T_MODULE:
		k = AZ_SU_MODULE;
		break;
	case GT_T_ALLOC:
	case GT_T_FREE:
		k = AZ_SU_ALLOC;
		break;
	case GT_T_SYNC:
		k = ai && ai->cls == GT_CLS_SYNC ? AZ_SU_SYNC : AZ_SU_OTHER;
		break;
	case GT_T_INIT:
	case GT_T_CONTEXT:
		k = AZ_SU_INIT;
		break;
	default:
		k = wait_kind_of(ai) ? AZ_SU_SYNC : AZ_SU_OTHER;
		break;
	}
	p->phases->startup_calls[k]++;
	if (c->has_exit)
		p->phases->startup_calls_ns[k] += c->dur;
}

static inline void pos_at(struct analyze *a, uint64_t ts)
{
	if (ts > a->pos)
		a->pos = ts;
}

/* ---- calls ------------------------------------------------------------------ */

/* A call that makes the host wait for the GPU, for the GPU's idle split: a
 * synchronize (stream, event, context), or a blocking copy between host and
 * device memory. */
static uint8_t wait_kind_of(const struct gt_api_info *ai)
{
	if (!ai)
		return 0;
	if (ai->cls == GT_CLS_SYNC)
		return AZ_WAIT_SYNC;
	if ((ai->cls == GT_CLS_MEMCPY || ai->cls == GT_CLS_MEMCPY2D || ai->cls == GT_CLS_MEMCPY3D) &&
	    ai->d == GT_NA)
		return AZ_WAIT_COPY;
	return 0;
}

int analyze__entry(void *ctx, const struct gt_hdr *rec, uint64_t *cookie)
{
	struct analyze *a = ctx;
	struct az_thread *t;
	uint8_t kind;

	pos_at(a, rec->ts);
	t = thread_get(a, rec->pid, rec->tid);
	if (!t)
		return -ENOMEM;
	t->depth++;
	*cookie = t->off_cum;
	kind = wait_kind_of(gt_api__info(rec->api));
	if (kind && t->depth == 1 && !t->wait_ts) {
		struct az_proc *p = proc_get(a, rec->pid);

		if (!p)
			return -ENOMEM;
		t->wait_ts = rec->ts;
		t->wait_api = rec->api;
		t->wait_kind = kind;
		p->open_waits++;
	}
	return 0;
}

/* A closed wait, for the GPU's idle split. */
static int wait_push(struct analyze *a, struct az_proc *p, const struct az_wait *w)
{
	if (p->n - p->head >= AZ_WAITS_KEPT) {
		p->head++;
		p->waits_dropped++;
	}
	/* once half the array is dead: moves as many as were dropped since */
	if (p->head && p->head * 2 >= p->n) {
		memmove(p->waits, p->waits + p->head, (p->n - p->head) * sizeof(*p->waits));
		p->n -= p->head;
		p->head = 0;
	}
	if (vec__reserve(&p->waits, &p->cap, p->n, 1, 64)) {
		a->err = -ENOMEM;
		return -ENOMEM;
	}
	p->waits[p->n++] = *w;
	return 0;
}

void analyze__set_end(struct analyze *a, uint64_t end_ts)
{
	a->end_set = end_ts;
}

/* A call the trace ended inside (its thread completed nothing after its
 * entry: in flight, not an exit lost in a light-mode window) as one that
 * lasted up to the end, into *cut. Returns c or cut. */
static const struct gt_callrec *cut_at_end(struct analyze *a, const struct az_thread *t,
					   const struct gt_callrec *c, struct gt_callrec *cut)
{
	uint64_t end = a->end_set > a->pos ? a->end_set : a->pos;

	if (!c->at_end || c->has_exit || c->entry_only || c->ts < t->last_end || end < c->ts)
		return c;
	*cut = *c;
	cut->has_exit = true;
	cut->dur = end - c->ts;
	cut->ret = 0;
	if (!a->cut || c->ts < a->cut0.ts) {
		a->cut0.ts = c->ts;
		a->cut0.pid = c->pid;
		a->cut0.tid = c->tid;
		a->cut0.api = c->api;
	}
	a->cut++;
	return cut;
}

int analyze__call(void *ctx, const struct gt_callrec *c)
{
	struct analyze *a = ctx;
	struct az_thread *t = thread_get(a, c->pid, c->tid);
	struct gt_callrec cut;
	struct az_acc *acc[3];
	struct az_proc *p;
	bool nested, first;
	int n, rc = 0;

	if (!t)
		return -ENOMEM;
	c = cut_at_end(a, t, c, &cut);
	pos_at(a, c->has_exit ? c->ts + c->dur : c->ts);
	if (t->depth)
		t->depth--;
	nested = t->depth > 0;
	if (t->wait_ts && t->wait_ts == c->ts && t->wait_api == c->api) {
		struct az_wait w = { c->ts, c->has_exit ? c->ts + c->dur : a->pos, c->tid, c->api,
				     t->wait_kind };

		t->wait_ts = 0;
		p = proc_get(a, c->pid);
		if (!p)
			return -ENOMEM;
		if (p->open_waits)
			p->open_waits--;
		/* kept for the GPU's idle split: only a trace with GPU records has one */
		if (a->gpu_trace && wanted(a, c->pid, c->ts) && wait_push(a, p, &w))
			return -ENOMEM;
	}
	/* a call without an exit (a launch at entry only) comes out at its
	 * entry, before the GPU records that follow it: it must not count as
	 * the call before them */
	if (c->has_exit && !c->at_end && c->ts + c->dur > t->last_end)
		t->last_end = c->ts + c->dur;
	if (!wanted(a, c->pid, c->ts))
		return 0;
	p = proc_get(a, c->pid);
	if (!p)
		return -ENOMEM;
	first = !p->seen;
	p->seen = true;
	if (!nested)
		startup_call(p, c);
	if (az_calls__track_memory(a, p, c))
		return -ENOMEM;
	n = scopes_of(p, c->ts, acc);
	for (int i = 0; i < n && !rc; i++)
		rc = az_calls__acc(a, acc[i], p, c, nested, t->off_cum);
	if (first)
		az_metric__seen(a, p);
	return rc ? rc : a->err;
}

/* ---- other records ----------------------------------------------------------- */

/* The range of p closes at ts: it is finished once its GPU work is placed. */
static void range_close(struct analyze *a, struct az_proc *p, uint64_t ts)
{
	struct az_acc *r = p->range;

	if (!r)
		return;
	p->range = NULL;
	r->closed = true;
	r->close_ts = ts;
	if (ts > r->end)
		r->end = ts;
	r->next = a->closing;
	a->closing = r;
}

static int on_range(struct analyze *a, const struct gt_capture *cap)
{
	struct az_proc *p;

	if (a->o.no_ranges || a->o.span || !wanted(a, cap->hdr.pid, cap->hdr.ts))
		return 0;
	p = proc_get(a, cap->hdr.pid);
	if (!p)
		return -ENOMEM;
	if (cap->kind == GT_CAP_RANGE_CLOSE) {
		range_close(a, p, cap->hdr.ts);
		return 0;
	}
	if (cap->kind != GT_CAP_RANGE_OPEN || (cap->flags & GT_CAP_F_REFUSED) || !cap->index)
		return 0;
	range_close(a, p, cap->hdr.ts);	/* its close was lost */
	p->range = acc_new(a, AZ_SCOPE_RANGE, p->pid, cap->index);
	if (!p->range)
		return -ENOMEM;
	p->range->start = p->range->end = cap->hdr.ts;
	p->range->have_start = true;
	return 0;
}

/* The launching thread's last call end before L, for the idle split. */
static uint64_t host_end_before(struct analyze *a, uint32_t pid, uint32_t tid)
{
	struct az_thread *t = tid ? hmap_get(&a->threads, tid, pid) : NULL;

	return t ? t->last_end : 0;
}

static int on_gpu(struct analyze *a, const struct gt_hdr *rec)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *cp = (const void *)rec;
	struct az_item it = { .start = rec->ts, .pid = rec->pid, .tid = rec->tid, .kind = rec->type };
	uint16_t flags;
	struct az_proc *p;
	const char *mangled;
	uint64_t at;
	bool first;

	if (rec->type == GT_REC_GPU_KERNEL) {
		it.end = rec->ts + k->dur;
		it.launch = (k->flags & GT_GPU_LINKED) ? k->launch_ts : 0;
		it.device = k->device;
		it.stream = k->stream;
		it.blocks = grid_blocks(k->grid);
		it.name = gt_decoder__gpu_kernel_name(a->d, k, &mangled);
		flags = k->flags;
	} else {
		it.end = rec->ts + cp->dur;
		it.launch = (cp->flags & GT_GPU_LINKED) ? cp->launch_ts : 0;
		it.device = cp->device;
		it.stream = cp->stream;
		it.bytes = cp->bytes;
		it.copy_kind = rec->type == GT_REC_GPU_MEMSET ? GT_COPY__COUNT
			       : cp->kind < GT_COPY__COUNT ? cp->kind : GT_COPY_UNKNOWN;
		flags = cp->flags;
	}
	(void)flags;
	if (rec->type == GT_REC_GPU_KERNEL && it.launch) {
		int rc = az_nccl__gpu(a, rec->pid, rec->tid, it.launch, it.start);

		if (rc)
			return rc;
	}
	/* a linked record counts where its call does, an unlinked one by its start */
	at = it.launch ? it.launch : it.start;
	pos_at(a, at);
	if (!wanted(a, rec->pid, at))
		return 0;
	p = proc_get(a, rec->pid);
	if (!p)
		return -ENOMEM;
	first = !p->seen;
	p->seen = true;
	scopes_of(p, at, it.acc);
	if (it.launch)
		it.host_end = host_end_before(a, rec->pid, rec->tid);
	for (int i = 0; i < 3; i++)
		if (it.acc[i])
			acc_seen(it.acc[i], it.start < at ? it.start : at, it.end);
	if (first)
		az_metric__seen(a, p);
	return az_gpu__push(a, &it);
}

/* A libcuda load: one that left a gap makes the figures incomplete for its
 * process (its calls then were not recorded). The decoder passes on only
 * records long enough for their type. */
static void on_libload(struct analyze *a, const struct gt_libload *l)
{
	uint64_t from, to;
	size_t len = l->hdr.size - sizeof(*l);

	if (!gt_libload__gap(l, UINT64_MAX, &from, &to) || a->gaps++)
		return;
	a->gap0.ts = l->hdr.ts;
	a->gap0.cont_ts = l->cont_ts;
	a->gap0.end_ts = l->end_ts;
	a->gap0.pid = l->hdr.pid;
	a->gap0.outcome = l->outcome;
	if (len > sizeof(a->gap0_path) - 1)
		len = sizeof(a->gap0_path) - 1;
	memcpy(a->gap0_path, l->path, len);
	a->gap0_path[len] = 0;
}

int analyze__other(void *ctx, const struct gt_hdr *rec)
{
	struct analyze *a = ctx;
	const struct gt_offcpu *off = (const void *)rec;
	struct az_acc *acc[3];
	struct az_thread *t;
	struct az_proc *p;
	int rc, n;

	a->records++;
	if ((rec->type == GT_REC_RANGE || rec->type == GT_REC_CAPTURE) && a->spans) {
		rc = capture_spans__feed(a->spans, rec);
		if (rc)
			return rc;
	}
	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		rc = on_gpu(a, rec);
		return rc ? rc : a->err;
	case GT_REC_RANGE:
		pos_at(a, rec->ts);
		return on_range(a, (const struct gt_capture *)rec);
	case GT_REC_OFFCPU:
		pos_at(a, rec->ts + off->dur);
		t = thread_get(a, rec->pid, rec->tid);
		if (!t)
			return -ENOMEM;
		t->off_cum += off->dur;
		a->sched = true;
		break;
	case GT_REC_STATS:
	case GT_REC_OVERHEAD:
	case GT_REC_MERGE_STATS:
	case GT_REC_CUPTI_STATS:
	case GT_REC_NAME:
		/* the recorder's and the tools' own, not the process' activity */
		return 0;
	case GT_REC_LIBLOAD:
		on_libload(a, (const struct gt_libload *)rec);
		return 0;
	case GT_REC_GPU_METRIC: {
		const struct gt_gpu_metric *m = (const void *)rec;

		/* the recorder's, device-wide; written up to a poll interval
		 * after they were taken: no position */
		if (gt_rec__size_ok(rec) && m->metric != GT_GPUM_PROC_MEM)
			az_metric(a, rec->ts, m->device, m->metric, m->value_micro);
		return 0;
	}
	default:
		pos_at(a, rec->ts);
		break;
	}
	if (!wanted(a, rec->pid, rec->ts))
		return 0;
	p = proc_get(a, rec->pid);
	if (!p)
		return -ENOMEM;
	if (rec->type == GT_REC_EXIT) {
		range_close(a, p, rec->ts);
		p->exit_ts = rec->ts;
	}
	/* only what the process did: its GPU API and NVTX records repeat its
	 * calls' times, names and lifecycle records say when it was seen */
	if (rec->type == GT_REC_GPU_API || rec->type == GT_REC_NVTX)
		return 0;
	n = scopes_of(p, rec->ts, acc);
	for (int i = 0; i < n; i++)
		acc_seen(acc[i], rec->ts,
			 rec->type == GT_REC_OFFCPU ? rec->ts + off->dur : rec->ts);
	return 0;
}

/* ---- life ------------------------------------------------------------------- */

struct analyze *analyze__new(const struct analyze_opts *o, const struct gt_file_info *info,
			     const struct capture_spans *spans)
{
	struct analyze *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->o = *o;
	a->given = spans;
	/* --sms, else the smallest GPU of the trace, else the assumption */
	if (!o->sm_count)
		gt_file_info__gpu_sms(info, &a->sms);
	a->sm_count = o->sm_count ? o->sm_count : a->sms.known ? a->sms.min : AZ_SM_ASSUMED;
	a->sm_assumed = !o->sm_count && !a->sms.known;
	a->merged = info && gt_file_info__has_option(info, "cupti", "merged");
	a->gpu_trace = a->merged || (info && gt_file_info__has_option(info, "cupti", "inline"));
	a->slack = info && gt_file_info__has_option(info, "cupti", "inline") ? AZ_SLACK_INLINE_NS
									   : AZ_SLACK_NS;
	a->trace_start = info ? info->start_ts : 0;
	a->gpum_hz = (uint32_t)gt_file_info__option_u64(info, "gpu_metrics");
	/* the scheduler records' absence means no time off-CPU only when
	 * they were recorded */
	if (info) {
		size_t len;
		const char *tr = gt_file_info__option(info, "trace", &len);

		a->sched = tr && memmem(tr, len, "sched", 5);
	}
	a->spans = capture_spans__new(info);
	if (!a->spans) {
		free(a);
		return NULL;
	}
	return a;
}

void analyze__set_decoder(struct analyze *a, struct gt_decoder *d)
{
	a->d = d;
}

static int cmp_scope(const void *pa, const void *pb)
{
	const struct az_scope *x = pa, *y = pb;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* the steady state first, then the whole run, then its ranges */
	if (x->kind != y->kind)
		return x->kind == AZ_SCOPE_STEADY ? -1 : y->kind == AZ_SCOPE_STEADY ? 1 :
		       x->kind == AZ_SCOPE_PROCESS ? -1 : y->kind == AZ_SCOPE_PROCESS ? 1 : 0;
	return x->number < y->number ? -1 : x->number > y->number;
}

/* Turns a finished scope into its result and frees it. */
int az__finish_acc(struct analyze *a, struct az_acc *acc, uint64_t end);
int az__finish_acc(struct analyze *a, struct az_acc *acc, uint64_t end)
{
	struct az_scope *s;
	int rc;

	if (!acc->calls && !acc->work) {
		acc_free(acc);
		return 0;
	}
	rc = az_gpu__finish_acc(a, acc, end);
	if (!rc && vec__reserve(&a->scopes, &a->scap, a->nscopes, 1, 8))
		rc = -ENOMEM;
	if (!rc) {
		s = &a->scopes[a->nscopes];
		memset(s, 0, sizeof(*s));
		rc = az_rules__scope(a, acc, s);
		if (!rc)
			a->nscopes++;
	}
	acc_free(acc);
	return rc;
}

int analyze__finish(struct analyze *a, uint64_t end_ts, struct analyze_result **out)
{
	struct analyze_result *r;
	int rc = a->err;

	*out = NULL;
	if (!rc)
		rc = az_gpu__drain(a, UINT64_MAX);
	az_metric__flush(a);
	capture_spans__finish(a->spans, end_ts > a->pos ? end_ts : a->pos);
	for (uint32_t i = 0; i < a->procs.cap && !rc; i++) {
		struct az_proc *p = a->procs.s[i].v;

		if (!a->procs.s[i].used)
			continue;
		if (p->range)
			range_close(a, p, p->range->end);
		rc = az__finish_acc(a, p->whole, p->whole->end);
		p->whole = NULL;
		if (!rc && p->steady) {
			size_t before = a->nscopes;

			rc = az__finish_acc(a, p->steady, p->steady->end);
			p->steady = NULL;
			if (!rc && a->nscopes > before)
				a->scopes[a->nscopes - 1].phases = *p->phases;
		}
	}
	while (a->closing && !rc) {
		struct az_acc *r0 = a->closing;

		a->closing = r0->next;
		rc = az__finish_acc(a, r0, r0->end);
	}
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (a->nscopes > 1)
		cmp__sort(a->scopes, a->nscopes, sizeof(*a->scopes), cmp_scope);
	rc = az__add_notes(a, r, end_ts > a->pos ? end_ts : a->pos);
	if (rc) {
		free(r);
		return rc;
	}
	r->scopes = a->scopes;
	r->nscopes = a->nscopes;
	r->merged = a->merged;
	r->trace_start_ts = a->trace_start;
	r->records = a->records;
	/* the result takes the scopes and their strings */
	struct az_store *st = malloc(sizeof(*st));

	if (!st) {
		free(r);
		return -ENOMEM;
	}
	*st = a->store;
	r->priv = st;
	a->store = (struct az_store){ 0 };
	a->scopes = NULL;
	a->nscopes = a->scap = 0;
	*out = r;
	return 0;
}

void analyze_result__free(struct analyze_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nscopes; i++)
		free(r->scopes[i].findings);
	free(r->scopes);
	if (r->priv) {
		az_store__free(r->priv);
		free(r->priv);
	}
	free(r);
}

void analyze__free(struct analyze *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->procs.cap; i++) {
		struct az_proc *p = a->procs.s[i].v;

		if (!a->procs.s[i].used)
			continue;
		acc_free(p->whole);
		acc_free(p->range);
		acc_free(p->steady);
		free(p->waits);
		free(p->allocs);
		free(p);
	}
	free(a->procs.s);
	free_map(&a->threads, true);
	while (a->closing) {
		struct az_acc *r = a->closing;

		a->closing = r->next;
		acc_free(r);
	}
	free(a->heap);
	free(a->run);
	free(a->items);
	free(a->free_slots);
	az_nccl__free(a);
	for (size_t i = 0; i < a->nscopes; i++)
		free(a->scopes[i].findings);
	free(a->scopes);
	az_store__free(&a->store);
	capture_spans__free(a->spans);
	free(a->phases);
	free(a->phase_pids);
	free(a);
}
