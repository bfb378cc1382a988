// SPDX-License-Identifier: MIT
/*
 * The merger's linking core (merge/link.h): GPU-side records of the CUPTI
 * agent to the eBPF calls that caused them, over compact arrays; the file
 * merge (user/merge/merge.c) feeds it.
 *
 * Linking.  CUPTI tells, for each kernel, copy and set, the correlation id
 * of the driver call that caused it; a GT_REC_GPU_API record of the agent
 * gives that call's thread and CPU interval.  The eBPF call on the same
 * thread whose interval holds the API start is the one (the CUPTI callback
 * runs inside the driver function, so its interval lies inside the uprobe's
 * [entry, exit]; the tolerance absorbs the two sides' clock reads).
 *
 * Without API records (GTRACE_CUPTI_API=none: they cost the program a little
 * per launch), by order: CUPTI numbers the driver calls
 * in the order they are entered, so a process' GPU records in correlation
 * order meet its calls in entry order; the dims of a kernel and of its
 * launch, the bytes of a copy, and the streams pick out the right call where
 * a call made no GPU work (or its record was lost).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode.h"
#include "merge/link.h"
#include "lib/u64map.h"
#include "lib/cmp.h"
#include "lib/vec.h"

#define MAX_WALK	256		/* calls looked at per GPU record, at most */
#define ORDER_WINDOW	4096		/* free calls looked at per correlation, at most */
#define ORDER_KEEP	64		/* free calls looked past the first fit for a known stream */
#define ORDER_RACE_NS	20000ull	/* calls of two threads entered this close may be
					 * numbered by the driver in the other order */

/* ------------------------------------------------------------ call kinds */

enum merge_call_kind merge__call_kind(unsigned api)
{
	switch (gt_api__class(api)) {
	case GT_CLS_LAUNCH:
		return MERGE_CALL_LAUNCH;
	case GT_CLS_GRAPH:
		return MERGE_CALL_GRAPH;
	case GT_CLS_MEMCPY:
	case GT_CLS_MEMCPY2D:
	case GT_CLS_MEMCPY3D:
		return MERGE_CALL_COPY;
	case GT_CLS_MEMSET:
		return MERGE_CALL_SET;
	default:
		return MERGE_CALL_NONE;
	}
}

/* A graph may hold kernels, copies and sets. */
static bool kind_fits(uint16_t type, uint8_t kind)
{
	switch (type) {
	case GT_REC_GPU_KERNEL:
		return kind == MERGE_CALL_LAUNCH || kind == MERGE_CALL_GRAPH;
	case GT_REC_GPU_MEMCPY:
		return kind == MERGE_CALL_COPY || kind == MERGE_CALL_GRAPH;
	case GT_REC_GPU_MEMSET:
		return kind == MERGE_CALL_SET || kind == MERGE_CALL_GRAPH;
	default:
		return false;
	}
}

/* ------------------------------------------------------------ linking core */

static int api_cmp(const void *a, const void *b)
{
	const struct merge_api *x = a, *y = b;

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->correlation, y->correlation);
	CMP_BY(x->start, y->start);
	return 0;
}

static const struct merge_api *find_api(const struct merge_api *apis, size_t n, uint32_t pid,
					uint32_t corr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct merge_api *a = &apis[mid];

		if (a->pid < pid || (a->pid == pid && a->correlation < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && apis[lo].pid == pid && apis[lo].correlation == corr)
		return &apis[lo];
	return NULL;
}

/* Calls by (pid, tid, entry): a thread's calls in time order. */
static int call_perm_cmp(const void *a, const void *b, void *ctx)
{
	const struct merge_call *calls = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct merge_call *x = &calls[i], *y = &calls[j];

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->tid, y->tid);
	CMP_BY(x->entry, y->entry);
	return cmp__u64(i, j);
}

/* The indices of the calls of kind (every kind but none: MERGE_CALL_NONE)
 * in find_call's order, in a new array of *n; NULL when out of memory. */
static uint32_t *sorted_calls(struct merge_call *calls, size_t ncalls, int kind, size_t *n)
{
	uint32_t *perm = malloc((ncalls ? ncalls : 1) * sizeof(*perm));

	*n = 0;
	if (!perm)
		return NULL;
	for (size_t i = 0; i < ncalls; i++)
		if (kind == MERGE_CALL_NONE ? calls[i].kind != MERGE_CALL_NONE : calls[i].kind == kind)
			perm[(*n)++] = (uint32_t)i;
	if (*n > 1)
		qsort_r(perm, *n, sizeof(*perm), call_perm_cmp, calls);
	return perm;
}

/* The call of a compatible kind on (pid, tid) that holds the API start s.
 * Walks back from the latest call entered by s + tol: a thread runs one
 * driver call at a time, so the first call that ended before s - tol ends
 * the search.  Of the calls that hold s within the tolerance the nearest
 * wins (0 inside), ties going to the later entry: two back-to-back
 * launches both hold a start that falls in the gap, the one it is
 * actually inside is the right one. */
static uint32_t find_call(const struct merge_call *calls, const uint32_t *perm, size_t nperm,
			  uint32_t pid, uint32_t tid, uint64_t s, uint16_t type, uint64_t tol,
			  uint64_t win, uint64_t latest)
{
	uint64_t best_d = UINT64_MAX, lim = s + tol;
	uint32_t best = MERGE_NO_CALL;
	size_t lo = 0, hi = nperm, p;
	int steps = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct merge_call *c = &calls[perm[mid]];

		if (c->pid < pid || (c->pid == pid && (c->tid < tid || (c->tid == tid && c->entry <= lim))))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (p = lo; p-- > 0 && steps < MAX_WALK; steps++) {
		const struct merge_call *c = &calls[perm[p]];
		uint64_t d;
		bool ok;

		if (c->pid != pid || c->tid != tid)
			break;
		if (c->has_exit) {
			if (c->exit + tol < s)
				break;
			d = s < c->entry ? c->entry - s : s > c->exit ? s - c->exit : 0;
			ok = d <= tol;
		} else {
			/* the thread's latest call by s is the one it is in at s
			 * however long it was kept off the CPU inside it; an
			 * earlier one ended when the next began */
			if (c->entry + (steps ? win : latest) < s)
				break;
			d = s < c->entry ? c->entry - s : 0;
			ok = d <= tol;
		}
		if (!ok || !kind_fits(type, c->kind))
			continue;
		if (d < best_d) {
			best_d = d;
			best = perm[p];
			if (!d)
				break;
		}
	}
	return best;
}

/* Per process of the agent: the end of its last API record.  Calls after
 * it were made after the agent stopped (a --all recording ends while the
 * program runs on) and are not counted as launches without GPU work. */
struct pid_end {
	uint32_t pid;
	uint64_t end;
};

static const struct pid_end *find_pid_end(const struct pid_end *v, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].pid == pid ? &v[lo] : NULL;
}

/* ------------------------------------------------------------ by order */

/* GPU records without an API record, by (pid, correlation, ts). */
static int gpu_order_cmp(const void *a, const void *b, void *ctx)
{
	const struct merge_gpu *gpu = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct merge_gpu *x = &gpu[i], *y = &gpu[j];

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->correlation, y->correlation);
	CMP_BY(x->ts, y->ts);
	return cmp__u64(i, j);
}

/* Free calls by (pid, entry). */
static int call_order_cmp(const void *a, const void *b, void *ctx)
{
	const struct merge_call *calls = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct merge_call *x = &calls[i], *y = &calls[j];

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->entry, y->entry);
	return cmp__u64(i, j);
}

/* Dims for a kernel, bytes for a copy; graphs and unknowns fit anything. */
static bool shape_fits(const struct merge_gpu *g, const struct merge_call *c)
{
	if (!g->shape || !c->shape || c->kind == MERGE_CALL_GRAPH)
		return true;
	if (g->type == GT_REC_GPU_KERNEL)
		return g->shape == c->shape;
	if (g->type == GT_REC_GPU_MEMCPY)
		return g->shape <= c->shape;	/* a copy may run as several */
	return true;
}

/* 1: the call's stream is known to be g's CUPTI stream, 0: unknown, -1: it
 * is known to be another one. */
static int stream_fits(const struct u64map *streams, const struct merge_gpu *g,
		       const struct merge_call *c)
{
	const uint64_t *v;

	if (c->kind != MERGE_CALL_LAUNCH)
		return 0;
	v = u64map__get(streams, c->stream);
	return !v ? 0 : *v == g->stream ? 1 : -1;
}

/* Links the records of one process' correlations [g0, g1) of order[] to
 * its free calls cs[0 .. nc); *lo is where the search starts.  streams
 * ties stream handles to CUPTI stream ids; last holds, per thread, the
 * entry of its latest linked call: a thread's calls are entered one after
 * the other, so an earlier free call of that thread made no GPU work. */
static int link_process(struct merge_call *calls, const uint32_t *cs, size_t nc, size_t *lo,
			struct merge_gpu *gpu, const uint32_t *order, size_t g0, size_t g1,
			uint64_t tol, struct u64map *streams, struct u64map *last,
			struct merge_link_stats *st)
{
	size_t gi = g0;

	while (gi < g1) {
		struct merge_gpu *g = &gpu[order[gi]];
		size_t gj = gi + 1, k, seen = 0, pick = SIZE_MAX, first = SIZE_MAX;
		struct merge_call *c;
		uint64_t *le;

		while (gj < g1 && gpu[order[gj]].correlation == g->correlation)
			gj++;
		while (*lo < nc && calls[cs[*lo]].nlinked)
			(*lo)++;
		for (k = *lo; k < nc && seen < ORDER_WINDOW; k++) {
			int sf;

			c = &calls[cs[k]];
			if (c->nlinked)
				continue;
			seen++;
			if (c->entry > g->ts + tol)
				break;	/* entered after the GPU started: neither it nor later ones */
			le = u64map__get(last, c->tid);
			if ((le && c->entry < *le) || !kind_fits(g->type, c->kind) || !shape_fits(g, c))
				continue;
			sf = stream_fits(streams, g, c);
			if (sf > 0) {
				pick = k;	/* a known stream wins */
				break;
			}
			if (sf == 0 && first == SIZE_MAX)
				first = k;	/* else the first fit no stream rules out */
			if (first != SIZE_MAX && seen > ORDER_KEEP)
				break;
		}
		if (pick == SIZE_MAX)
			pick = first;
		if (pick == SIZE_MAX) {
			st->unmatched_gpu += gj - gi;
			gi = gj;
			continue;
		}
		c = &calls[cs[pick]];
		if (c->kind == MERGE_CALL_LAUNCH && !u64map__get(streams, c->stream) &&
		    u64map__set(streams, c->stream, g->stream))
			return -ENOMEM;
		le = u64map__get(last, c->tid);
		if ((!le || *le < c->entry) && u64map__set(last, c->tid, c->entry))
			return -ENOMEM;
		for (; gi < gj; gi++) {
			struct merge_gpu *r = &gpu[order[gi]];

			r->call = cs[pick];
			r->flags |= GT_GPU_LINKED | GT_GPU_BY_ORDER;
			c->nlinked++;
			st->linked++;
			st->by_order++;
			if (r->ts < c->entry) {
				r->flags |= GT_GPU_CAUSALITY;
				st->causality++;
			}
		}
		/* calls entered well before this one would have come first in
		 * correlation order: still free, they made no GPU work */
		while (*lo < nc && calls[cs[*lo]].entry + ORDER_RACE_NS < c->entry)
			(*lo)++;
	}
	return 0;
}

/* A process' fit counted in st (the one moved the most named). */
static void clock_count(const struct merge_clock_fit *f, struct merge_link_stats *st)
{
	if (!f->fixed)
		return;
	st->clock_fixed++;
	st->clock_busy += f->low;
	st->clock_scattered += f->scattered;
	if (st->clock_fixed == 1 || llabs(f->max_shift_ns) > llabs(st->clock_max_shift_ns)) {
		st->clock_max_shift_ns = f->max_shift_ns;
		st->clock_rate = f->slope;
		st->clock_pid = f->pid;
	}
}

/* The pairs a clock fit needs, by order, when the GPU clock has drifted
 * past tol: a first pass with this much room (at least CLOCK_EST_NS, or
 * 20 ppm of the process' calls' span), undone after the fit. */
#define CLOCK_EST_NS 200000ull

/* link_process over one process, its GPU clock's drift taken out first
 * when there is a clear one (merge/gpu_clock.c). */
static int link_process_clocked(struct merge_call *calls, const uint32_t *cs, size_t nc, struct merge_gpu *gpu,
				const uint32_t *order, size_t g0, size_t g1, uint64_t tol, struct u64map *streams,
				struct u64map *last, struct merge_link_stats *st)
{
	struct merge_link_stats first = { 0 };
	struct merge_clock_fit f;
	uint64_t room = CLOCK_EST_NS;
	size_t lo = 0;
	int err;

	if (nc > 1 && (calls[cs[nc - 1]].entry - calls[cs[0]].entry) / 50000 > room)
		room = (calls[cs[nc - 1]].entry - calls[cs[0]].entry) / 50000;
	err = link_process(calls, cs, nc, &lo, gpu, order, g0, g1, room > tol ? room : tol, streams, last,
			   &first);
	if (!err)
		err = merge__clock_fit(calls, gpu, order + g0, g1 - g0, &f);
	for (size_t i = g0; i < g1; i++) {
		struct merge_gpu *r = &gpu[order[i]];

		if (r->call != MERGE_NO_CALL)
			calls[r->call].nlinked--;
		r->call = MERGE_NO_CALL;
		r->flags &= ~(GT_GPU_LINKED | GT_GPU_CAUSALITY | GT_GPU_BY_ORDER);
	}
	u64map__free(streams);
	u64map__free(last);
	memset(streams, 0, sizeof(*streams));
	memset(last, 0, sizeof(*last));
	if (err)
		return err;
	merge__clock_apply(gpu, order + g0, g1 - g0, &f);
	clock_count(&f, st);
	lo = 0;
	return link_process(calls, cs, nc, &lo, gpu, order, g0, g1, tol, streams, last, st);
}

static int pid_ts_cmp(const void *a, const void *b, void *ctx)
{
	const struct merge_gpu *gpu = ctx;
	const struct merge_gpu *x = &gpu[*(const uint32_t *)a], *y = &gpu[*(const uint32_t *)b];

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->ts, y->ts);
	return cmp__u64(*(const uint32_t *)a, *(const uint32_t *)b);
}

/* Processes with API records, linked: each one's GPU clock drift taken out
 * where it is clear, the causality of its links judged again. */
static int clock_api_processes(const struct merge_call *calls, struct merge_gpu *gpu, size_t ngpu,
			       const struct pid_end *ends, size_t nends, struct merge_link_stats *st)
{
	uint32_t *idx;
	size_t n = 0;
	int err = 0;

	if (!nends)
		return 0;
	idx = malloc((ngpu ? ngpu : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < ngpu; i++)
		if (find_pid_end(ends, nends, gpu[i].pid))
			idx[n++] = (uint32_t)i;
	if (n > 1)
		qsort_r(idx, n, sizeof(*idx), pid_ts_cmp, gpu);
	for (size_t i = 0, j; i < n && !err; i = j) {
		struct merge_clock_fit f;

		for (j = i; j < n && gpu[idx[j]].pid == gpu[idx[i]].pid; j++)
			;
		err = merge__clock_fit(calls, gpu, idx + i, j - i, &f);
		if (err || !f.fixed)
			continue;
		merge__clock_apply(gpu, idx + i, j - i, &f);
		clock_count(&f, st);
		for (size_t k = i; k < j; k++) {
			struct merge_gpu *g = &gpu[idx[k]];
			bool was = g->flags & GT_GPU_CAUSALITY, is;

			if (g->call == MERGE_NO_CALL)
				continue;
			is = g->ts < calls[g->call].entry;
			g->flags = (uint16_t)((g->flags & ~GT_GPU_CAUSALITY) | (is ? GT_GPU_CAUSALITY : 0));
			st->causality += (uint64_t)is - (uint64_t)was;
		}
	}
	free(idx);
	return err;
}

/* Step 3 of merge__link: the records of processes without API records
 * (ends[] holds one entry per process that has some). */
static int link_by_order(struct merge_call *calls, size_t ncalls, struct merge_gpu *gpu,
			 size_t ngpu, const struct pid_end *ends, size_t nends, uint64_t tol,
			 struct merge_link_stats *st)
{
	uint32_t *order = NULL, *cs = NULL;
	size_t ng = 0, nc = 0, gi, ci = 0;
	struct u64map streams = { 0 }, last = { 0 };
	int err = -ENOMEM;

	for (size_t i = 0; i < ngpu; i++)
		ng += !find_pid_end(ends, nends, gpu[i].pid);
	if (!ng)
		return 0;
	order = malloc(ng * sizeof(*order));
	cs = malloc((ncalls ? ncalls : 1) * sizeof(*cs));
	if (!order || !cs)
		goto out;
	ng = 0;
	for (size_t i = 0; i < ngpu; i++)
		if (!find_pid_end(ends, nends, gpu[i].pid))
			order[ng++] = i;
	for (size_t i = 0; i < ncalls; i++)
		if (calls[i].kind != MERGE_CALL_NONE && !calls[i].nlinked && !calls[i].failed)
			cs[nc++] = i;
	/* qsort's array must not be NULL even when empty (C11 7.22.5) */
	if (ng > 1)
		qsort_r(order, ng, sizeof(*order), gpu_order_cmp, gpu);
	if (nc > 1)
		qsort_r(cs, nc, sizeof(*cs), call_order_cmp, calls);
	for (gi = 0; gi < ng;) {
		uint32_t pid = gpu[order[gi]].pid;
		size_t gj = gi, c0;

		while (gj < ng && gpu[order[gj]].pid == pid)
			gj++;
		while (ci < nc && calls[cs[ci]].pid < pid)
			ci++;
		c0 = ci;
		while (ci < nc && calls[cs[ci]].pid == pid)
			ci++;
		u64map__free(&streams);
		u64map__free(&last);
		memset(&streams, 0, sizeof(streams));
		memset(&last, 0, sizeof(last));
		err = link_process_clocked(calls, cs + c0, ci - c0, gpu, order, gi, gj, tol, &streams, &last,
					   st);
		if (err)
			goto out;
		gi = gj;
	}
	err = 0;
out:
	u64map__free(&streams);
	u64map__free(&last);
	free(order);
	free(cs);
	return err;
}

/* Distinct pids, sorted: processes are few, records many. */
struct pid_set {
	uint32_t *v;
	size_t n, cap;
	uint32_t last;		/* the pid added last: most records repeat it */
};

static int pid_set_add(struct pid_set *s, uint32_t pid)
{
	size_t lo = 0, hi = s->n;

	if (s->n && pid == s->last)
		return 0;
	s->last = pid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->v[lo] == pid)
		return 0;
	if (vec__reserve(&s->v, &s->cap, s->n, 1, 16))
		return -ENOMEM;
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = pid;
	s->n++;
	return 0;
}

int merge__link(struct merge_call *calls, size_t ncalls, struct merge_api *apis, size_t napis,
		struct merge_gpu *gpu, size_t ngpu, const struct merge_link_opts *opts,
		struct merge_link_stats *st)
{
	uint64_t tol = opts && opts->tolerance_ns ? opts->tolerance_ns : MERGE_TOLERANCE_NS;
	uint64_t win = opts && opts->no_exit_window_ns ? opts->no_exit_window_ns :
		       MERGE_NO_EXIT_WINDOW_NS;
	uint64_t latest = opts && opts->partial_calls ? win : MERGE_NO_EXIT_LATEST_NS;
	struct pid_set pids = { 0 };
	struct pid_end *ends = NULL, *oends = NULL;
	uint32_t *perm = NULL;
	size_t nperm = 0, nends = 0, noends = 0, i;
	int err = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (ncalls >= MERGE_NO_CALL)
		return -E2BIG;
	for (i = 0; i < ncalls; i++)
		calls[i].nlinked = 0;
	perm = sorted_calls(calls, ncalls, MERGE_CALL_NONE, &nperm);
	if (!perm)
		goto out;
	/* apis is NULL when there are none, which qsort does not take */
	if (napis > 1)
		cmp__sort(apis, napis, sizeof(*apis), api_cmp);

	for (i = 0; i < napis; i++) {
		if (pid_set_add(&pids, apis[i].pid))
			goto out;
	}
	/* apis are sorted by pid: one end per process */
	ends = malloc((pids.n ? pids.n : 1) * sizeof(*ends));
	if (!ends)
		goto out;
	for (i = 0; i < napis; i++) {
		uint64_t end = apis[i].start + apis[i].dur;

		if (nends && ends[nends - 1].pid == apis[i].pid) {
			if (end > ends[nends - 1].end)
				ends[nends - 1].end = end;
		} else {
			ends[nends++] = (struct pid_end){ .pid = apis[i].pid, .end = end };
		}
	}

	for (i = 0; i < ngpu; i++) {
		struct merge_gpu *g = &gpu[i];
		const struct merge_api *a;
		uint32_t c;

		if (pid_set_add(&pids, g->pid))
			goto out;
		st->gpu_records++;
		g->call = MERGE_NO_CALL;
		g->flags &= ~(GT_GPU_LINKED | GT_GPU_CAUSALITY | GT_GPU_API_MATCHED | GT_GPU_BY_ORDER |
			      GT_GPU_CLOCK_FIXED);
		a = find_api(apis, napis, g->pid, g->correlation);
		if (!a) {
			/* lost from a process with API records; a process without
			 * any is linked by order below */
			if (find_pid_end(ends, nends, g->pid)) {
				st->no_api++;
				st->unmatched_gpu++;
			}
			continue;
		}
		g->flags |= GT_GPU_API_MATCHED;
		c = find_call(calls, perm, nperm, a->pid, a->tid, a->start, g->type, tol, win, latest);
		if (c == MERGE_NO_CALL) {
			st->unmatched_gpu++;
			continue;
		}
		g->call = c;
		g->flags |= GT_GPU_LINKED;
		calls[c].nlinked++;
		st->linked++;
		if (g->ts < calls[c].entry) {
			g->flags |= GT_GPU_CAUSALITY;
			st->causality++;
		}
	}

	err = clock_api_processes(calls, gpu, ngpu, ends, nends, st);
	if (err)
		goto out;
	err = link_by_order(calls, ncalls, gpu, ngpu, ends, nends, tol, st);
	if (err)
		goto out;
	err = -ENOMEM;
	/* a process without API records ends at its last linked call (perm is
	 * by pid: one end per process) */
	oends = malloc((nperm ? nperm : 1) * sizeof(*oends));
	if (!oends)
		goto out;
	for (i = 0; i < nperm; i++) {
		const struct merge_call *c = &calls[perm[i]];

		if (!c->nlinked || find_pid_end(ends, nends, c->pid))
			continue;
		if (noends && oends[noends - 1].pid == c->pid) {
			if (c->entry > oends[noends - 1].end)
				oends[noends - 1].end = c->entry;
		} else {
			oends[noends++] = (struct pid_end){ .pid = c->pid, .end = c->entry };
		}
	}

	for (i = 0; i < ncalls; i++) {
		const struct merge_call *c = &calls[i];
		const struct pid_end *e;

		if (c->kind == MERGE_CALL_NONE)
			continue;
		/* a launch makes exactly one kernel; a graph any number */
		if (c->kind == MERGE_CALL_LAUNCH && c->nlinked > 1)
			st->duplicates += c->nlinked - 1;
		if (c->captured)
			st->captured_calls++;
		if (c->nlinked || c->failed || c->captured)
			continue;
		e = find_pid_end(ends, nends, c->pid);
		if (!e)
			e = find_pid_end(oends, noends, c->pid);
		if (e && c->entry <= e->end + tol)
			st->unmatched_calls++;
	}

	st->processes = pids.n;
	err = 0;
out:
	free(perm);
	free(ends);
	free(oends);
	free(pids.v);
	return err;
}

/* ------------------------------------------------------------ CUDA graphs */

static int node_cmp(const void *a, const void *b)
{
	const struct merge_node *x = a, *y = b;

	CMP_BY(x->pid, y->pid);
	CMP_BY(x->node, y->node);
	return cmp__u64(x->ts, y->ts);
}

int merge__link_nodes(struct merge_call *calls, size_t ncalls, struct merge_node *nodes, size_t nnodes,
		      const struct merge_link_opts *o)
{
	uint64_t tol = o && o->tolerance_ns ? o->tolerance_ns : MERGE_TOLERANCE_NS;
	uint64_t win = o && o->no_exit_window_ns ? o->no_exit_window_ns : MERGE_NO_EXIT_WINDOW_NS;
	uint32_t *perm = NULL;
	size_t nperm = 0, i;

	if (!nnodes)
		return 0;
	cmp__sort(nodes, nnodes, sizeof(*nodes), node_cmp);
	perm = sorted_calls(calls, ncalls, MERGE_CALL_LAUNCH, &nperm);
	if (!perm)
		return -ENOMEM;
	for (i = 0; i < nnodes; i++) {
		struct merge_node *n = &nodes[i];

		n->call = MERGE_NO_CALL;
		if (n->original)
			continue;
		/* a launch makes kernels: the node's kind; a thread's latest
		 * call is the one it is in (no partial-calls question: the
		 * node's call is on the node's own thread, at once) */
		n->call = find_call(calls, perm, nperm, n->pid, n->tid, n->ts, GT_REC_GPU_KERNEL, tol, win,
				    MERGE_NO_EXIT_LATEST_NS);
		if (n->call != MERGE_NO_CALL)
			calls[n->call].captured = 1;
	}
	free(perm);
	return 0;
}

#define CLONE_DEPTH 8	/* clones of clones followed back, at most */

uint32_t merge__node_call(const struct merge_node *nodes, size_t nnodes, uint32_t pid, uint64_t node)
{
	for (int depth = 0; depth <= CLONE_DEPTH && node; depth++) {
		struct merge_node key = { .pid = pid, .node = node };
		size_t lo = 0, hi = nnodes;

		/* the first entry of (pid, node): the ts order puts a node
		 * seen twice (made, later cloned under the same id) by time */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct merge_node *n = &nodes[mid];

			if (n->pid < key.pid || (n->pid == key.pid && n->node < key.node))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nnodes || nodes[lo].pid != pid || nodes[lo].node != node)
			return MERGE_NO_CALL;
		for (size_t j = lo; j < nnodes && nodes[j].pid == pid && nodes[j].node == node; j++)
			if (!nodes[j].original)
				return nodes[j].call;
		node = nodes[lo].original;
	}
	return MERGE_NO_CALL;
}
