// SPDX-License-Identifier: MIT
/*
 * Iterations from the call stream and the phases of a series of them
 * (analyze/steady.h says what and why).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/steady.h"
#include "format/api.h"
#include "format/nccl.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "lib/cmp.h"

const char *steady_kind__name(enum steady_kind k)
{
	static const char *const names[] = { "none", "sync", "collective", "graph", "kernel" };

	return (unsigned)k < 5 ? names[k] : "none";
}

/* ---- the period of signatures -------------------------------------------- */

bool steady__sig_period(const uint64_t *sig, size_t n, struct steady_run *out)
{
	size_t best_len = 0, best_start = 0;
	uint32_t best_k = 0;

	for (uint32_t k = 1; k <= STEADY_MAX_K && k < n; k++) {
		size_t run = 0, len;

		for (size_t i = k; i <= n; i++) {
			if (i < n && sig[i] == sig[i - k]) {
				run++;
				continue;
			}
			/* segments [i - run - k, i) repeat with period k */
			len = run + k;
			len -= len % k;
			if (run && len / k >= STEADY_MIN_REPS && len > best_len) {
				best_len = len;
				best_start = i - run - k;
				best_k = k;
			}
			run = 0;
		}
	}
	if (!best_k)
		return false;
	*out = (struct steady_run){ .k = best_k, .start = best_start, .iters = best_len / best_k };
	return true;
}

/* ---- phases --------------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0), sorting v. */
static uint64_t median_of(uint64_t *v, size_t n)
{
	cmp__sort(v, n, sizeof(*v), u64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
}

int steady__phases(const uint64_t *start, const uint64_t *end, size_t n, struct steady_phases *out)
{
	uint64_t *v, m, mad, band, edge;
	bool *in, *near;
	size_t first = SIZE_MAX, last = SIZE_MAX, k = 0;

	*out = (struct steady_phases){ 0 };
	if (n < STEADY_MIN_REPS)
		return 0;
	v = malloc(n * sizeof(*v));
	in = malloc(n * sizeof(*in));
	near = malloc(n * sizeof(*near));
	if (!v || !in || !near) {
		free(v);
		free(in);
		free(near);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = end[i] > start[i] ? end[i] - start[i] : 0;
	m = median_of(v, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t d = end[i] > start[i] ? end[i] - start[i] : 0;

		v[i] = d > m ? d - m : m - d;
	}
	mad = median_of(v, n);
	band = (uint64_t)(4 * 1.4826 * (double)mad);
	/* the edges: an iteration as far off as the noise is no phase of its own */
	edge = band > (uint64_t)(STEADY_EDGE_REL * (double)m) ? band : (uint64_t)(STEADY_EDGE_REL * (double)m);
	if (band < (uint64_t)(STEADY_BAND_REL * (double)m))
		band = (uint64_t)(STEADY_BAND_REL * (double)m);
	/* times spread wider than this are no level */
	if (band > (uint64_t)(STEADY_BAND_MAX * (double)m))
		band = (uint64_t)(STEADY_BAND_MAX * (double)m);
	for (size_t i = 0; i < n; i++) {
		uint64_t d = end[i] > start[i] ? end[i] - start[i] : 0, dev = d > m ? d - m : m - d;

		in[i] = dev <= band;
		near[i] = dev <= edge;
	}
	/* the first in the band that begins a window mostly in it, the last
	 * that ends one */
	for (size_t i = 0; i < n && first == SIZE_MAX; i++) {
		size_t w = n - i < STEADY_HOLD ? n - i : STEADY_HOLD, c = 0;

		for (size_t j = i; j < i + w; j++)
			c += near[j];
		if (near[i] && c * 10 >= w * 8)
			first = i;
	}
	for (size_t i = n; i-- > 0 && last == SIZE_MAX;) {
		size_t w = i + 1 < STEADY_HOLD ? i + 1 : STEADY_HOLD, c = 0;

		for (size_t j = i + 1 - w; j <= i; j++)
			c += near[j];
		if (near[i] && c * 10 >= w * 8)
			last = i;
	}
	if (first != SIZE_MAX && last != SIZE_MAX && last >= first &&
	    last - first + 1 >= STEADY_MIN_REPS) {
		for (size_t i = first; i <= last; i++) {
			k += in[i];
			v[i - first] = end[i] > start[i] ? end[i] - start[i] : 0;
		}
		if (k * 10 >= (last - first + 1) * 6) {
			out->found = true;
			out->first = first;
			out->last = last;
			out->in_band = k;
			out->start_ts = start[first];
			out->end_ts = end[last];
			out->median_ns = median_of(v, last - first + 1);
		}
	}
	free(v);
	free(in);
	free(near);
	return 0;
}

/* ---- NVTX series ---------------------------------------------------------- */

void steady__series_name(const char *name, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && name[i] && o + 1 < len; i++) {
		if (name[i] >= '0' && name[i] <= '9') {
			while (i + 1 < n && name[i + 1] >= '0' && name[i + 1] <= '9')
				i++;
			out[o++] = 'N';
		} else {
			out[o++] = name[i];
		}
	}
	out[o] = '\0';
}

bool steady__ranges_are_iterations(const char *series, const uint64_t *start,
				   const uint64_t *end, size_t n)
{
	/* names libraries give the ranges around their own work */
	static const char *const libs[] = { "cub::", "thrust::", "cudnn", "cublas", "cutlass",
					    "nccl", "aten::", "c10::", "triton", NULL };
	uint64_t covered = 0, reach = 0, first, last = 0;

	if (!n)
		return false;
	for (const char *const *l = libs; *l; l++)
		if (!strncasecmp(series, *l, strlen(*l)))
			return false;
	first = start[0];
	for (size_t i = 0; i < n; i++) {
		uint64_t s = start[i] > reach ? start[i] : reach;

		if (end[i] > s)
			covered += end[i] - s;
		if (end[i] > reach)
			reach = end[i];
		if (end[i] > last)
			last = end[i];
	}
	return last > first && covered * 2 >= last - first;
}

/* ---- the scan ------------------------------------------------------------- */

/* A token: its kind in the top byte, what it is below. */
#define TOK(kind, key) (((uint64_t)(kind) << 56) | ((key) & 0x00ffffffffffffffull))
#define TOK_KIND(t) ((enum steady_kind)((t) >> 56))
/* kinds of tokens that are no boundary of their own */
#define TK_COPY 8
#define TK_SET 9

struct bnd {
	uint64_t tok;
	bool open;		/* one occurrence seen: a segment is under way */
	uint64_t h;		/* its signature so far */
	uint32_t ntok;
	uint64_t seg_start;
	uint64_t *sig, *start, *end;
	uint32_t *ntoks;
	size_t n, cap, cap2, cap3, cap4;
	uint32_t fold;		/* segments each kept one stands for (1, 2, 4, ...) */
	uint32_t pend;		/* segments gathered for the next kept one */
	uint64_t pstart;	/* ... the first one's start */
	uint32_t pntok;		/* ... their tokens */
	uint64_t lv[32];	/* ... their signatures merged pairwise, a level each:
				 * the same tree as two kept ones made one */
};

/* Two segments' signatures as one. */
static inline uint64_t sig_pair(uint64_t a, uint64_t b)
{
	return hash__pair(hash__pair(0, a), b);
}

struct sthread {
	uint32_t pid, tid;
	uint64_t *win_tok, *win_at;	/* the window: tokens, and where each ends */
	size_t nwin, cap_tok, cap_at;
	bool decided;
	struct bnd b[STEADY_MAX_SYNC + STEADY_MAX_GRAPH + STEADY_MAX_LAUNCH];
	unsigned nb;
	struct u64map names;		/* token -> its name (char *), for the series' what */
};

struct steady_scan {
	struct hmap threads;		/* (tid, pid) -> struct sthread */
	struct sthread *last;
	struct steady_series *series;	/* after finish: every thread's, every boundary's */
	size_t nseries, cap;
	int err;
};

struct steady_scan *steady_scan__new(void)
{
	return calloc(1, sizeof(struct steady_scan));
}

static struct sthread *thread_of(struct steady_scan *s, uint32_t pid, uint32_t tid)
{
	struct sthread *t = s->last;

	if (t && t->pid == pid && t->tid == tid)
		return t;
	t = hmap_get_or_new(&s->threads, tid, pid, sizeof(*t), NULL);
	if (t) {
		t->pid = pid;
		t->tid = tid;
		s->last = t;
	}
	return t;
}

/* Keeps a segment; past STEADY_MAX_SEGS of them, two kept ones become one
 * (and each later one stands for as many): memory does not follow the
 * trace's length, and a run that repeats is still one (its iterations
 * grouped). */
static int bnd_push(struct bnd *b, uint64_t sig, uint64_t start, uint64_t end, uint32_t ntok)
{
	if (!b->fold)
		b->fold = 1;
	if (b->fold > 1) {
		uint32_t lvl = 0, i = b->pend;

		if (!b->pend) {
			b->pstart = start;
			b->pntok = 0;
		} else {
			b->pntok++;	/* the boundary between them */
		}
		b->pntok += ntok;
		/* a binary counter: the i-th segment merges with the ones
		 * before it as far as its trailing ones go */
		for (; i & 1; i >>= 1, lvl++)
			sig = sig_pair(b->lv[lvl], sig);
		b->lv[lvl] = sig;
		if (++b->pend < b->fold)
			return 0;
		b->pend = 0;
		start = b->pstart;
		ntok = b->pntok;
	}
	if (vec__reserve(&b->sig, &b->cap, b->n, 1, 64) ||
	    vec__reserve(&b->start, &b->cap2, b->n, 1, 64) ||
	    vec__reserve(&b->end, &b->cap3, b->n, 1, 64) ||
	    vec__reserve(&b->ntoks, &b->cap4, b->n, 1, 64))
		return -ENOMEM;
	b->sig[b->n] = sig;
	b->start[b->n] = start;
	b->end[b->n] = end;
	b->ntoks[b->n++] = ntok;
	if (b->n == STEADY_MAX_SEGS) {
		for (size_t i = 0; i < b->n / 2; i++) {
			b->sig[i] = sig_pair(b->sig[2 * i], b->sig[2 * i + 1]);
			b->start[i] = b->start[2 * i];
			b->end[i] = b->end[2 * i + 1];
			b->ntoks[i] = b->ntoks[2 * i] + b->ntoks[2 * i + 1] + 1;
		}
		b->n /= 2;
		b->fold *= 2;
	}
	return 0;
}

/* One token through one thread's boundaries. */
static int feed(struct sthread *t, uint64_t tok, uint64_t at)
{
	for (unsigned i = 0; i < t->nb; i++) {
		struct bnd *b = &t->b[i];

		if (tok == b->tok) {
			if (b->open && bnd_push(b, hash__pair(b->h, b->ntok), b->seg_start, at, b->ntok))
				return -ENOMEM;
			b->open = true;
			b->h = 0;
			b->ntok = 0;
			b->seg_start = at;
		} else if (b->open) {
			b->h = hash__pair(b->h, tok);
			b->ntok++;
		}
	}
	return 0;
}

struct tcount {
	uint64_t tok, n, first;
};

static int tcount_cmp(const void *a, const void *b)
{
	const struct tcount *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return (x->first > y->first) - (x->first < y->first);
}

/* Chooses the thread's boundaries from its window, then replays it. */
static int decide(struct sthread *t)
{
	struct u64map cnt = { 0 };
	struct tcount *v = NULL;
	size_t nv = 0, cap = 0;
	unsigned nsync = 0, ngraph = 0, nlaunch = 0;
	int err = -ENOMEM;

	t->decided = true;
	for (size_t i = 0; i < t->nwin; i++) {
		uint64_t *c = u64map__get(&cnt, t->win_tok[i]);

		if (c) {
			v[*c].n++;
			continue;
		}
		if (vec__reserve(&v, &cap, nv, 1, 64) || u64map__set(&cnt, t->win_tok[i], nv))
			goto out;
		v[nv++] = (struct tcount){ .tok = t->win_tok[i], .n = 1, .first = i };
	}
	if (nv > 1)
		cmp__sort(v, nv, sizeof(*v), tcount_cmp);
	/* kernels: the most frequent, and the rarest that still repeat (a
	 * step's once-a-step kernel, where the frequent ones come many times
	 * a step) */
	for (size_t i = nv, taken = 0; i-- > 0 && taken < STEADY_MAX_LAUNCH / 2;) {
		if (TOK_KIND(v[i].tok) != STEADY_LAUNCH || v[i].n < STEADY_MIN_REPS + 1)
			continue;
		t->b[t->nb++] = (struct bnd){ .tok = v[i].tok };
		v[i].n = 0;	/* taken */
		taken++;
		nlaunch++;
	}
	for (size_t i = 0; i < nv; i++) {
		enum steady_kind k = TOK_KIND(v[i].tok);
		unsigned *used = k == STEADY_SYNC || k == STEADY_COLL ? &nsync :
				 k == STEADY_GRAPH ? &ngraph : k == STEADY_LAUNCH ? &nlaunch : NULL;
		unsigned lim = k == STEADY_SYNC || k == STEADY_COLL ? STEADY_MAX_SYNC :
			       k == STEADY_GRAPH ? STEADY_MAX_GRAPH : STEADY_MAX_LAUNCH;

		if (!used || *used >= lim || v[i].n < STEADY_MIN_REPS + 1)
			continue;
		(*used)++;
		t->b[t->nb++] = (struct bnd){ .tok = v[i].tok };
	}
	err = 0;
	for (size_t i = 0; i < t->nwin && !err; i++)
		err = feed(t, t->win_tok[i], t->win_at[i]);
out:
	u64map__free(&cnt);
	free(v);
	free(t->win_tok);
	free(t->win_at);
	t->win_tok = t->win_at = NULL;
	t->nwin = t->cap_tok = t->cap_at = 0;
	return err;
}

static int name_of(struct sthread *t, uint64_t tok, const char *name)
{
	char *dup;

	if (u64map__get(&t->names, tok))
		return 0;
	dup = strdup(name);
	if (!dup || u64map__set(&t->names, tok, (uint64_t)(uintptr_t)dup)) {
		free(dup);
		return -ENOMEM;
	}
	return 0;
}

static int token(struct steady_scan *s, uint32_t pid, uint32_t tid, uint64_t tok, uint64_t at,
		 const char *name)
{
	struct sthread *t = thread_of(s, pid, tid);
	enum steady_kind k = TOK_KIND(tok);

	if (!t)
		return -ENOMEM;
	/* names of what may be a boundary: few distinct ones */
	if (name && k >= STEADY_SYNC && k <= STEADY_LAUNCH && name_of(t, tok, name))
		return -ENOMEM;
	if (t->decided)
		return feed(t, tok, at);
	if (vec__reserve(&t->win_tok, &t->cap_tok, t->nwin, 1, 256) ||
	    vec__reserve(&t->win_at, &t->cap_at, t->nwin, 1, 256))
		return -ENOMEM;
	t->win_tok[t->nwin] = tok;
	t->win_at[t->nwin++] = at;
	return t->nwin == STEADY_WINDOW ? decide(t) : 0;
}

int steady_scan__call(struct steady_scan *s, const struct gt_callrec *c)
{
	const struct gt_api_info *ai = gt_api__info(c->api);
	uint64_t at = c->has_exit ? c->ts + c->dur : c->ts, key;
	char hex[32];

	if (!ai || c->ret != 0)
		return 0;
	switch (c->type) {
	case GT_T_LAUNCH:
		if (c->graph) {
			snprintf(hex, sizeof(hex), "graph 0x%llx", (unsigned long long)c->handle);
			return token(s, c->pid, c->tid, TOK(STEADY_GRAPH, hash__mix64(c->handle)), c->ts,
				     hex);
		}
		key = c->kernel ? hash__bytes(c->kernel, strlen(c->kernel)) : 0;
		/* a launch's boundary is its entry: launches come at entry only */
		return token(s, c->pid, c->tid, TOK(STEADY_LAUNCH, key), c->ts, c->kernel);
	case GT_T_SYNC:
		if (ai->cls != GT_CLS_SYNC)
			return 0;
		return token(s, c->pid, c->tid, TOK(STEADY_SYNC, c->api), at, ai->name);
	case GT_T_MEMCPY:
		key = hash__pair(c->api, c->kind);
		/* a copy without a stream argument blocks the host: a wait */
		if ((ai->cls == GT_CLS_MEMCPY || ai->cls == GT_CLS_MEMCPY2D ||
		     ai->cls == GT_CLS_MEMCPY3D) && ai->d == GT_NA)
			return token(s, c->pid, c->tid, TOK(STEADY_SYNC, key), at, ai->name);
		return token(s, c->pid, c->tid, TOK(TK_COPY, key), at, NULL);
	case GT_T_MEMSET:
		return token(s, c->pid, c->tid, TOK(TK_SET, c->api), at, NULL);
	default:
		return 0;
	}
}

int steady_scan__nccl(struct steady_scan *s, const struct gt_ncclrec *n)
{
	const char *name = gt_nccl__name(n->api);

	if (n->kind != GT_NCCL_K_COLL || !name)
		return 0;
	return token(s, n->pid, n->tid, TOK(STEADY_COLL, n->api),
		     n->has_exit ? n->ts + n->dur : n->ts, name);
}

/* The series of one boundary, into s->series when it has one. */
static int cut(struct steady_scan *s, struct sthread *t, struct bnd *b)
{
	struct steady_run run;
	struct steady_series *x;
	const uint64_t *nm;

	uint32_t calls = 0;

	if (!steady__sig_period(b->sig, b->n, &run))
		return 0;
	/* synchronizations back to back (a program's clean-up) are no
	 * iterations: one holds other calls than its boundaries (a launch
	 * is work of its own) */
	for (uint32_t i = 0; i < run.k; i++)
		calls += b->ntoks[run.start + i];
	if (!calls && (TOK_KIND(b->tok) == STEADY_SYNC || TOK_KIND(b->tok) == STEADY_COLL))
		return 0;
	if (vec__reserve(&s->series, &s->cap, s->nseries, 1, 16))
		return -ENOMEM;
	x = &s->series[s->nseries];
	*x = (struct steady_series){ .pid = t->pid, .tid = t->tid, .kind = TOK_KIND(b->tok),
				     .k = run.k, .n = run.iters, .group = b->fold ? b->fold : 1 };
	nm = u64map__get(&t->names, b->tok);
	x->what = strdup(nm ? (const char *)(uintptr_t)*nm : "?");
	x->start = malloc(run.iters * sizeof(*x->start));
	x->end = malloc(run.iters * sizeof(*x->end));
	if (!x->what || !x->start || !x->end) {
		free(x->what);
		free(x->start);
		free(x->end);
		return -ENOMEM;
	}
	for (size_t j = 0; j < run.iters; j++) {
		size_t a = run.start + j * run.k;

		x->start[j] = b->start[a];
		x->end[j] = b->end[a + run.k - 1];
		x->coverage += x->end[j] - x->start[j];
	}
	for (uint32_t i = 0; i < run.k; i++)
		x->tokens += b->ntoks[run.start + i] + 1;
	s->nseries++;
	return 0;
}

static int kind_rank(enum steady_kind k)
{
	return k == STEADY_SYNC || k == STEADY_COLL ? 0 : k == STEADY_GRAPH ? 1 : 2;
}

/* Whether x (weighing wx) is a better series of its process than y. */
static bool better(const struct steady_series *x, uint64_t wx, const struct steady_series *y, uint64_t wy)
{
	int rx = kind_rank(x->kind), ry = kind_rank(y->kind);

	if (rx != ry) {
		if (rx < ry)
			return wy <= wx * STEADY_KIND_OUTWEIGH;
		return wx > wy * STEADY_KIND_OUTWEIGH;
	}
	/* weighing the same within 10 %: the coarser */
	if (wx * 10 > wy * 11)
		return true;
	if (wy * 10 > wx * 11)
		return false;
	if (x->n != y->n)
		return x->n < y->n;
	return wx > wy;
}

int steady_scan__finish(struct steady_scan *s)
{
	int err = 0;

	for (uint32_t i = 0; i < s->threads.cap && !err; i++) {
		struct sthread *t = s->threads.s[i].v;

		if (!s->threads.s[i].used)
			continue;
		if (!t->decided)
			err = decide(t);
		for (unsigned j = 0; j < t->nb && !err; j++)
			err = cut(s, t, &t->b[j]);
	}
	return err;
}

const struct steady_series *steady_scan__best(const struct steady_scan *s, uint32_t pid, unsigned kinds,
					      steady_weight_fn weight, void *ctx)
{
	const struct steady_series *best = NULL;
	uint64_t wb = 0;

	for (size_t i = 0; i < s->nseries; i++) {
		const struct steady_series *x = &s->series[i];
		uint64_t w;

		if (x->pid != pid || (kinds && !(kinds & (1u << x->kind))))
			continue;
		w = weight ? weight(ctx, pid, x->start[0], x->end[x->n - 1]) : x->coverage;
		if (!best || better(x, w, best, wb)) {
			best = x;
			wb = w;
		}
	}
	return best;
}

static void thread_free(void *v)
{
	struct sthread *t = v;

	free(t->win_tok);
	free(t->win_at);
	for (unsigned i = 0; i < t->nb; i++) {
		free(t->b[i].sig);
		free(t->b[i].start);
		free(t->b[i].end);
		free(t->b[i].ntoks);
	}
	for (size_t i = 0; i < t->names.cap; i++)
		if (t->names.keys[i])
			free((void *)(uintptr_t)t->names.vals[i]);
	u64map__free(&t->names);
}

void steady_scan__free(struct steady_scan *s)
{
	if (!s)
		return;
	hmap_free_all(&s->threads, thread_free);
	for (size_t i = 0; i < s->nseries; i++) {
		free(s->series[i].what);
		free(s->series[i].start);
		free(s->series[i].end);
	}
	free(s->series);
	free(s);
}
