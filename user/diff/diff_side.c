// SPDX-License-Identifier: MIT
/*
 * One side of `gtrace-bpf diff` (see diff_int.h): the accumulators of its
 * names, their sums per iteration, and the GPU busy time per iteration.
 * The per-record path: a lookup (by address first), a histogram bucket,
 * two moment updates and a ring slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "diff/diff_int.h"
#include "format/api.h"
#include "lib/hash.h"
#include "lib/vec.h"

/* ---- names -------------------------------------------------------------- */

static void acc_init(struct diff_acc *a)
{
	for (int i = 0; i < DIFF_RING; i++)
		a->ring_it[i] = DIFF_NO_ITER;
}

static int names_index(struct diff_names *t)
{
	uint32_t cap = t->idx_cap ? t->idx_cap * 2 : 64, *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = (uint32_t)t->v[i]->hash & (cap - 1);

		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = i + 1;
	}
	free(t->idx);
	t->idx = idx;
	t->idx_cap = cap;
	return 0;
}

/* The slot of name in the index: its entry, or the empty one it goes in. */
static uint32_t *names_slot(const struct diff_names *t, const char *name, uint64_t h)
{
	uint32_t mask = t->idx_cap - 1, j = (uint32_t)h & mask;

	for (; t->idx[j]; j = (j + 1) & mask) {
		const struct diff_acc *a = t->v[t->idx[j] - 1];

		if (a->hash == h && !strcmp(a->name, name))
			break;
	}
	return &t->idx[j];
}

struct diff_acc *diff_names__find(const struct diff_names *t, const char *name)
{
	uint32_t *slot;

	if (!t->idx_cap)
		return NULL;
	slot = names_slot(t, name, hash__bytes(name, strlen(name)));
	return *slot ? t->v[*slot - 1] : NULL;
}

struct diff_acc *diff_names__get(struct diff_names *t, const char *name)
{
	unsigned c = (unsigned)(((uintptr_t)name >> 3) % DIFF_NCACHE);
	size_t len;
	uint64_t h;
	uint32_t *slot;
	struct diff_acc *a;

	/* an address can come back with another name (a buffer rewritten, a
	 * name freed and its memory reused): confirmed by content */
	if (t->cache[c].s == name && !strcmp(t->v[t->cache[c].i]->name, name))
		return t->v[t->cache[c].i];
	len = strlen(name);
	h = hash__bytes(name, len);
	if ((t->n + 1) * 2 > t->idx_cap && names_index(t))
		return NULL;
	slot = names_slot(t, name, h);
	if (!*slot) {
		if (vec__reserve(&t->v, &t->cap, t->n, 1, 64))
			return NULL;
		a = calloc(1, sizeof(*a));
		if (!a || !(a->name = malloc(len + 1))) {
			free(a);
			return NULL;
		}
		memcpy(a->name, name, len + 1);
		a->hash = h;
		a->id = t->n;
		acc_init(a);
		t->v[t->n++] = a;
		*slot = t->n;
	}
	t->cache[c].s = name;
	t->cache[c].i = *slot - 1;
	return t->v[*slot - 1];
}

static void acc_free(struct diff_acc *a)
{
	loghist__free(&a->sk);
}

void diff_names__free(struct diff_names *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		acc_free(t->v[i]);
		free(t->v[i]->name);
		free(t->v[i]);
	}
	free(t->v);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}

/* ---- sums per iteration ------------------------------------------------- */

static void ring_fold(struct diff_acc *a, int i)
{
	diff_moments__add(&a->it_t, (double)a->ring_t[i]);
	diff_moments__add(&a->it_c, (double)a->ring_c[i]);
	a->ring_it[i] = DIFF_NO_ITER;
}

int diff_acc__add(struct diff_acc *a, uint32_t it, bool timed, uint64_t dur)
{
	int i = (int)(it % DIFF_RING);
	uint64_t t = timed ? dur : 0;

	a->count++;
	if (timed) {
		a->timed++;
		a->total += dur;
		diff_moments__add(&a->call, (double)dur);
		if (loghist__add(&a->sk, dur))
			return -ENOMEM;
	}
	if (a->ring_it[i] == it) {
		a->ring_t[i] += t;
		a->ring_c[i]++;
		return 0;
	}
	if (a->ring_it[i] != DIFF_NO_ITER && a->ring_it[i] > it) {
		/* its iteration was closed when a later one took the slot: in
		 * the means, not in the spread */
		a->late++;
		a->late_t += t;
		return 0;
	}
	if (a->ring_it[i] != DIFF_NO_ITER)
		ring_fold(a, i);
	a->ring_it[i] = it;
	a->ring_t[i] = t;
	a->ring_c[i] = 1;
	return 0;
}

static void acc_finish(struct diff_acc *a, uint32_t n_iter)
{
	for (int i = 0; i < DIFF_RING; i++)
		if (a->ring_it[i] != DIFF_NO_ITER)
			ring_fold(a, i);
	/* the iterations it was not in count as zeros */
	diff_moments__pad(&a->it_t, n_iter);
	diff_moments__pad(&a->it_c, n_iter);
	a->it_t.mean += (double)a->late_t / (double)a->it_t.n;
	a->it_c.mean += (double)a->late / (double)a->it_c.n;
}

/* ---- GPU busy time ------------------------------------------------------ */

static void busy_take(struct diff_side *s, const struct diff_gpu_iv *v)
{
	uint64_t *end = &s->gpu_end[v->iter];

	if (v->start < s->gpu_last_start)
		s->gpu_late++;
	s->gpu_last_start = v->start;
	if (v->start >= *end) {
		s->gpu_ns[v->iter] += v->end - v->start;
		*end = v->end;
	} else if (v->end > *end) {
		s->gpu_ns[v->iter] += v->end - *end;
		*end = v->end;
	}
}

static void heap_swap(struct diff_gpu_iv *h, uint32_t i, uint32_t j)
{
	struct diff_gpu_iv t = h[i];

	h[i] = h[j];
	h[j] = t;
}

/* Takes the earliest-starting interval held, the earlier of the run's head
 * and the heap's top, into the busy time. */
static void held_pop(struct diff_side *s)
{
	struct diff_gpu_iv *h = s->heap;
	uint32_t i = 0;

	if (s->rlen && (!s->nheap || s->run[s->rhead].start <= h[0].start)) {
		busy_take(s, &s->run[s->rhead]);
		s->rhead = (s->rhead + 1) & (DIFF_GPU_REORDER - 1);
		s->rlen--;
		return;
	}
	busy_take(s, &h[0]);
	h[0] = h[--s->nheap];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < s->nheap && h[l].start < h[m].start)
			m = l;
		if (r < s->nheap && h[r].start < h[m].start)
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
}

int diff_side__gpu(struct diff_side *s, uint32_t it, uint64_t start, uint64_t end)
{
	struct diff_gpu_iv *h;
	uint32_t i;

	if (it >= s->n_iter || end < start)
		return 0;
	_Static_assert((DIFF_GPU_REORDER & (DIFF_GPU_REORDER - 1)) == 0, "the run's ring");
	if (!s->heap) {
		s->heap = malloc(DIFF_GPU_REORDER * sizeof(*s->heap));
		s->run = malloc(DIFF_GPU_REORDER * sizeof(*s->run));
		if (!s->heap || !s->run)
			return -ENOMEM;
	}
	if (s->nheap + s->rlen == DIFF_GPU_REORDER)
		held_pop(s);
	if (!s->rlen || start >= s->run[(s->rhead + s->rlen - 1) & (DIFF_GPU_REORDER - 1)].start) {
		s->run[(s->rhead + s->rlen++) & (DIFF_GPU_REORDER - 1)] =
			(struct diff_gpu_iv){ .start = start, .end = end, .iter = it };
		return 0;
	}
	h = s->heap;
	i = s->nheap++;
	h[i] = (struct diff_gpu_iv){ .start = start, .end = end, .iter = it };
	while (i && h[(i - 1) / 2].start > h[i].start) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

/* ---- the side ----------------------------------------------------------- */

struct diff_side *diff_side__new(uint32_t n_iter, bool whole)
{
	struct diff_side *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->whole = whole;
	s->n_iter = n_iter ? n_iter : 1;
	s->iter_ns = calloc(s->n_iter, sizeof(*s->iter_ns));
	s->gpu_ns = calloc(s->n_iter, sizeof(*s->gpu_ns));
	s->gpu_end = calloc(s->n_iter, sizeof(*s->gpu_end));
	if (!s->iter_ns || !s->gpu_ns || !s->gpu_end) {
		diff_side__free(s);
		return NULL;
	}
	for (unsigned i = 0; i < GT_API__COUNT; i++) {
		acc_init(&s->api[i]);
		s->api[i].name = (char *)gt_api__name(i);
	}
	return s;
}

struct diff_acc *diff_side__api(struct diff_side *s, unsigned api)
{
	return &s->api[api < GT_API__COUNT ? api : 0];
}

const char *diff_strs__keep(char ***strs, size_t *n, size_t *cap, const char *str)
{
	char *copy;

	if (!str || vec__reserve(strs, cap, *n, 1, 16))
		return NULL;
	copy = strdup(str);
	if (copy)
		(*strs)[(*n)++] = copy;
	return copy;
}

void diff_side__finish(struct diff_side *s)
{
	while (s->nheap || s->rlen)
		held_pop(s);
	s->info.it.gpu_unordered = s->gpu_late;
	/* each record once: GPU records by name, calls by api */
	for (int t = 0; t < DIFF_TAB__COUNT; t++)
		for (uint32_t i = 0; i < s->tab[t].n; i++) {
			acc_finish(s->tab[t].v[i], s->n_iter);
			s->info.it.late += t == DIFF_TAB_GPU ? s->tab[t].v[i]->late : 0;
		}
	for (unsigned i = 0; i < GT_API__COUNT; i++) {
		acc_finish(&s->api[i], s->n_iter);
		s->info.it.late += s->api[i].late;
	}
}

void diff_side__free(struct diff_side *s)
{
	if (!s)
		return;
	for (int t = 0; t < DIFF_TAB__COUNT; t++)
		diff_names__free(&s->tab[t]);
	for (unsigned i = 0; i < GT_API__COUNT; i++)
		acc_free(&s->api[i]);
	free(s->iter_ns);
	free(s->gpu_ns);
	free(s->gpu_end);
	free(s->heap);
	free(s->run);
	free(s);
}
