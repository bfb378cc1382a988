// SPDX-License-Identifier: MIT
/*
 * The merger's linking core (merge_link.h): GPU-side records of the CUPTI
 * agent to the eBPF calls that caused them, over compact arrays; the file
 * merge (user/merge.c) feeds it.
 *
 * Linking.  CUPTI tells, for each kernel, copy and set, the correlation id
 * of the driver call that caused it; a GT_REC_GPU_API record of the agent
 * gives that call's thread and CPU interval.  The eBPF call on the same
 * thread whose interval holds the API start is the one (the CUPTI callback
 * runs inside the driver function, so its interval lies inside the uprobe's
 * [entry, exit]; the tolerance absorbs the two sides' clock reads).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "merge_link.h"

#define MAX_WALK	256		/* calls looked at per GPU record, at most */

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

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->correlation != y->correlation)
		return x->correlation < y->correlation ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
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

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	return i < j ? -1 : i > j;
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
			  uint64_t win)
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
			if (c->entry + win < s)
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
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		uint32_t *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = pid;
	s->n++;
	return 0;
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

int merge__link(struct merge_call *calls, size_t ncalls, struct merge_api *apis, size_t napis,
		struct merge_gpu *gpu, size_t ngpu, const struct merge_link_opts *opts,
		struct merge_link_stats *st)
{
	uint64_t tol = opts && opts->tolerance_ns ? opts->tolerance_ns : MERGE_TOLERANCE_NS;
	uint64_t win = opts && opts->no_exit_window_ns ? opts->no_exit_window_ns :
		       MERGE_NO_EXIT_WINDOW_NS;
	struct pid_set pids = { 0 };
	struct pid_end *ends = NULL;
	uint32_t *perm = NULL;
	size_t nperm = 0, nends = 0, i;
	int err = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (ncalls >= MERGE_NO_CALL)
		return -E2BIG;
	perm = malloc((ncalls ? ncalls : 1) * sizeof(*perm));
	if (!perm)
		goto out;
	for (i = 0; i < ncalls; i++) {
		calls[i].nlinked = 0;
		if (calls[i].kind != MERGE_CALL_NONE)
			perm[nperm++] = i;
	}
	qsort_r(perm, nperm, sizeof(*perm), call_perm_cmp, calls);
	qsort(apis, napis, sizeof(*apis), api_cmp);

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
		g->flags &= ~(GT_GPU_LINKED | GT_GPU_CAUSALITY | GT_GPU_API_MATCHED);
		a = find_api(apis, napis, g->pid, g->correlation);
		if (!a) {
			st->no_api++;
			st->unmatched_gpu++;
			continue;
		}
		g->flags |= GT_GPU_API_MATCHED;
		c = find_call(calls, perm, nperm, a->pid, a->tid, a->start, g->type, tol, win);
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

	for (i = 0; i < ncalls; i++) {
		const struct merge_call *c = &calls[i];
		const struct pid_end *e;

		if (c->kind == MERGE_CALL_NONE)
			continue;
		/* a launch makes exactly one kernel; a graph any number */
		if (c->kind == MERGE_CALL_LAUNCH && c->nlinked > 1)
			st->duplicates += c->nlinked - 1;
		if (c->nlinked || c->failed)
			continue;
		e = find_pid_end(ends, nends, c->pid);
		if (e && c->entry <= e->end + tol)
			st->unmatched_calls++;
	}

	st->processes = pids.n;
	err = 0;
out:
	free(perm);
	free(ends);
	free(pids.v);
	return err;
}
