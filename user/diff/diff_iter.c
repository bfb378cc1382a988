// SPDX-License-Identifier: MIT
/* The iterations of `gtrace-bpf diff` (see diff_iter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/steady.h"
#include "diff/diff_iter.h"
#include "lib/vec.h"

/* ---- NVTX series -------------------------------------------------------- */

void diff_iter__series_name(const char *name, size_t n, char *out, size_t len)
{
	steady__series_name(name, n, out, len);
}

bool diff_iter__name_matches(const char *s, const char *want)
{
	size_t n = strlen(s), w = strlen(want);
	char *norm;
	bool same;

	if (!strcmp(s, want))
		return true;
	/* a series name is never longer than the name: whole, however long */
	norm = malloc(w + 1);
	if (!norm)
		return false;
	diff_iter__series_name(want, w, norm, w + 1);
	same = !strcmp(s, norm);
	free(norm);
	if (same)
		return true;
	/* "step N", "step_N", "iterN" -> "step", "step", "iter" */
	if (n < 2 || s[n - 1] != 'N')
		return false;
	n--;
	while (n && strchr(" _-:#.", s[n - 1]))
		n--;
	return n && n == w && !memcmp(s, want, n);
}

/* ---- kernel sequences --------------------------------------------------- */

/* The longest prefix of t[0..m) holding DIFF_SEQ_MIN_REPS repetitions of
 * its smallest period (from the prefix function pi, filled here): its
 * length, and the period in *p; 0 when none. */
static size_t periodic_prefix(const uint32_t *t, size_t m, uint32_t *pi, uint32_t *p)
{
	pi[0] = 0;
	for (size_t i = 1; i < m; i++) {
		uint32_t k = pi[i - 1];

		while (k && t[i] != t[k])
			k = pi[k - 1];
		pi[i] = k + (t[i] == t[k]);
	}
	/* the smallest period of a prefix never shrinks as the prefix grows:
	 * the longest that holds the repetitions is found from the end */
	for (size_t len = m; len; len--) {
		size_t per = len - pi[len - 1];

		if (len >= DIFF_SEQ_MIN_REPS * per) {
			*p = (uint32_t)per;
			return len;
		}
	}
	return 0;
}

bool diff_iter__find_period(const uint32_t *ids, size_t n, struct diff_period *out)
{
	const size_t offs[] = { 0, n / 16, n / 8, n / 4, n / 2 };
	size_t best_len = 0, best_off = 0, start;
	uint32_t best_p = 0, *pi;

	if (n < DIFF_SEQ_MIN_REPS)
		return false;
	pi = malloc(n * sizeof(*pi));
	if (!pi)
		return false;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		size_t off = offs[i], m = n - off, len;
		uint32_t p;

		if ((i && off == offs[i - 1]) || m < DIFF_SEQ_MIN_REPS)
			continue;
		len = periodic_prefix(ids + off, m, pi, &p);
		if (len * 2 >= m && len > best_len) {
			best_len = len;
			best_off = off;
			best_p = p;
		}
	}
	free(pi);
	if (!best_len)
		return false;
	start = best_off;
	while (start && ids[start - 1] == ids[start - 1 + best_p])
		start--;
	out->period = best_p;
	out->start = start;
	out->len = best_len + (best_off - start);
	return true;
}

int diff_seq__init(struct diff_seq *s, const uint32_t *ids, const struct diff_period *per)
{
	*s = (struct diff_seq){ .p = per->period };
	s->pat = malloc(per->period * sizeof(*s->pat));
	if (!s->pat)
		return -ENOMEM;
	memcpy(s->pat, ids + per->start, per->period * sizeof(*s->pat));
	return 0;
}

static int seq_start(struct diff_seq *s, uint64_t ts)
{
	if (vec__reserve(&s->starts, &s->cap, s->n, 1, 64))
		return -ENOMEM;
	s->starts[s->n++] = ts;
	return 0;
}

int diff_seq__feed(struct diff_seq *s, uint32_t id, uint64_t ts)
{
	bool first;

	if (s->stopped || !s->p)
		return 0;
	if (id == s->pat[s->phase]) {
		first = !s->phase;
		s->phase = (s->phase + 1) % s->p;
		s->miss_run = 0;
		return first ? seq_start(s, ts) : 0;
	}
	s->off++;
	if (!s->miss_run++)
		s->n_at_miss = s->n;
	if (s->miss_run > s->p) {
		/* the program left its loop: what was started since is no iteration */
		s->stopped = true;
		s->n = s->n_at_miss;
		return 0;
	}
	if (id != s->pat[0])
		return 0;
	s->phase = 1 % s->p;
	return seq_start(s, ts);
}

void diff_seq__free(struct diff_seq *s)
{
	free(s->pat);
	free(s->starts);
	memset(s, 0, sizeof(*s));
}

/* ---- choosing a series -------------------------------------------------- */

/* c is better than the best so far (NULL: none). */
static bool better(const struct diff_cand *c, const struct diff_cand *best)
{
	if (!best)
		return true;
	if (c->coverage != best->coverage)
		return c->coverage > best->coverage;
	return c->count > best->count;
}

/* The best of v[0..n) of source src with at least min iterations (and,
 * for NVTX, whose name is name, or matches want); -1 when none. */
static ssize_t best_of(const struct diff_cand *v, size_t n, enum diff_iter_source src, uint32_t min,
		       const char *name, const char *want, bool weak_ok)
{
	const struct diff_cand *best = NULL;
	ssize_t bi = -1;

	for (size_t i = 0; i < n; i++) {
		const struct diff_cand *c = &v[i];

		if (c->source != src || c->count < min || (c->weak && !weak_ok))
			continue;
		if (src == DIFF_ITER_NVTX) {
			if (name && (!c->name || strcmp(c->name, name)))
				continue;
			if (want && (!c->name || !diff_iter__name_matches(c->name, want)))
				continue;
		}
		if (better(c, best)) {
			best = c;
			bi = (ssize_t)i;
		}
	}
	return bi;
}

/* The source --iter names, DIFF_ITER_NVTX for a range name (*name set to
 * it), DIFF_ITER_NONE for "none". */
static enum diff_iter_source want_source(const char *want, const char **name)
{
	static const char *const words[] = { [DIFF_ITER_CAPTURE] = "capture",
					     [DIFF_ITER_GRAPH] = "graph",
					     [DIFF_ITER_KERNELS] = "kernels",
					     [DIFF_ITER_SYNC] = "sync" };

	*name = NULL;
	if (!strcmp(want, "none"))
		return DIFF_ITER_NONE;
	if (!strncmp(want, "nvtx:", 5)) {
		*name = want + 5;
		return DIFF_ITER_NVTX;
	}
	for (unsigned s = DIFF_ITER_CAPTURE; s <= DIFF_ITER_SYNC; s++)
		if (!strcmp(want, words[s]))
			return (enum diff_iter_source)s;
	*name = want;
	return DIFF_ITER_NVTX;
}

enum diff_choice_miss diff_iter__choose(const struct diff_cand *a, size_t na,
					const struct diff_cand *b, size_t nb, const char *want,
					size_t *ia, size_t *ib, bool *partial)
{
	ssize_t x, y;

	*partial = false;
	if (want) {
		const char *name;
		enum diff_iter_source src = want_source(want, &name);

		if (src == DIFF_ITER_NONE)
			return DIFF_CHOICE_NONE;
		x = best_of(a, na, src, 2, NULL, name, true);
		if (x < 0)
			return DIFF_CHOICE_NO_BASE;
		y = best_of(b, nb, src, 2, src == DIFF_ITER_NVTX ? a[x].name : NULL, NULL, true);
		if (y < 0)
			return DIFF_CHOICE_NO_OPT;
		*ia = (size_t)x;
		*ib = (size_t)y;
		return DIFF_CHOICE_OK;
	}
	/* markers first, then what the calls show, coarsest first */
	static const enum diff_iter_source order[] = { DIFF_ITER_NVTX, DIFF_ITER_CAPTURE, DIFF_ITER_GRAPH,
						       DIFF_ITER_SYNC, DIFF_ITER_KERNELS };

	for (unsigned s = 0; s < sizeof(order) / sizeof(order[0]); s++) {
		enum diff_iter_source src = order[s];

		if (src == DIFF_ITER_NVTX) {
			/* the baseline's series in the order they rank, until the
			 * optimized has one of the name */
			const struct diff_cand *best = NULL;
			bool one_side = best_of(b, nb, src, DIFF_MIN_ITERS, NULL, NULL, false) >= 0;
			ssize_t bx = -1, by = -1;

			for (size_t i = 0; i < na; i++) {
				if (a[i].source != src || a[i].count < DIFF_MIN_ITERS || !a[i].name ||
				    a[i].weak)
					continue;
				y = best_of(b, nb, src, DIFF_MIN_ITERS, a[i].name, NULL, false);
				if (y < 0) {
					one_side = true;
					continue;
				}
				if (better(&a[i], best)) {
					best = &a[i];
					bx = (ssize_t)i;
					by = y;
				}
			}
			if (bx >= 0) {
				*ia = (size_t)bx;
				*ib = (size_t)by;
				return DIFF_CHOICE_OK;
			}
			*partial |= one_side;
			continue;
		}
		x = best_of(a, na, src, DIFF_MIN_ITERS, NULL, NULL, false);
		y = best_of(b, nb, src, DIFF_MIN_ITERS, NULL, NULL, false);
		if (x >= 0 && y >= 0) {
			*ia = (size_t)x;
			*ib = (size_t)y;
			return DIFF_CHOICE_OK;
		}
		*partial |= (x >= 0) != (y >= 0);
	}
	return DIFF_CHOICE_NONE;
}
