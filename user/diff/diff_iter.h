/* SPDX-License-Identifier: MIT */
/*
 * The iterations of `gtrace-bpf diff`, pure: NVTX series names, the period
 * of a kernel launch sequence and the matcher that cuts the launches into
 * iterations with it, the choice of one series both traces have, and the
 * lookup of the iteration a time falls in.  diff_trace.c feeds them from a
 * trace; each is tested alone (tests/unit/test_diff_iter.c).
 */
#ifndef GTRACE_DIFF_ITER_H
#define GTRACE_DIFF_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "diff/diff.h"

/* ---- NVTX series -------------------------------------------------------- */

/* The series an NVTX range name belongs to: name[0..n) with every run of
 * digits written as "N" ("step 12" -> "step N"), cut to fit len (> 0)
 * bytes. */
void diff_iter__series_name(const char *name, size_t n, char *out, size_t len);
/* Whether --iter's want names series s: s itself, s without a trailing "N"
 * and the separators before it ("step N" -> "step"), or want's own series
 * name ("step 1" -> "step N"). */
bool diff_iter__name_matches(const char *s, const char *want);

/* ---- kernel sequences --------------------------------------------------- */

#define DIFF_SEQ_WINDOW 65536	/* launches per process the period is sought in */
#define DIFF_SEQ_MIN_REPS 3	/* repetitions the periodic part must hold */

struct diff_period {
	uint32_t period;	/* launches per iteration */
	size_t start;		/* where the periodic part begins: an iteration's first launch */
	size_t len;		/* how long it is (>= DIFF_SEQ_MIN_REPS periods) */
};

/*
 * The repeating part of a launch sequence ids[0..n) (kernel name ids): the
 * sequence from an offset (0, n/16, n/8, n/4, n/2: the first launches may be
 * a warm-up) whose longest prefix with DIFF_SEQ_MIN_REPS repetitions of its
 * smallest period covers the most, at least half of what follows the
 * offset; extended back to the earliest launch from which it repeats.
 * Returns false when no offset gives one (or, the search needing 4 bytes a
 * launch, when out of memory).
 */
bool diff_iter__find_period(const uint32_t *ids, size_t n, struct diff_period *out);

/* Cuts launches into iterations once the period is known: each launch in
 * turn, from the periodic part's start on. */
struct diff_seq {
	uint32_t *pat;		/* the period's ids, from an iteration's first (owned) */
	uint32_t p;		/* its length */
	uint32_t phase;		/* index in pat of the launch expected next */
	uint32_t miss_run;	/* launches off the sequence since the last one on it */
	bool stopped;		/* more than a period off the sequence: no more iterations */
	uint64_t off;		/* launches off the sequence, in all */
	uint64_t *starts;	/* the iterations' starts (owned) */
	size_t n, cap;
	size_t n_at_miss;	/* starts when the current run off the sequence began */
};

/* Takes the period ids[per->start .. + per->period).  Returns 0 or -ENOMEM. */
int diff_seq__init(struct diff_seq *s, const uint32_t *ids, const struct diff_period *per);
/*
 * One launch (name id, entry ts).  On the sequence: the next expected id;
 * the first of the period starts an iteration.  Off it: counted; the
 * period's first id starts an iteration again (a launch was missing); more
 * than a period of launches off it ends the series, the starts made during
 * that run taken back.  Returns 0 or -ENOMEM.
 */
int diff_seq__feed(struct diff_seq *s, uint32_t id, uint64_t ts);
void diff_seq__free(struct diff_seq *s);

/* ---- choosing a series -------------------------------------------------- */

/* One candidate series of iterations in a trace. */
struct diff_cand {
	enum diff_iter_source source;
	uint32_t pid;
	const char *name;	/* NVTX: the series name; else NULL (graphs match any graph) */
	uint32_t count;		/* iterations */
	uint64_t coverage;	/* ns the iterations add up to */
	bool weak;		/* NVTX: a series that is no iteration (a library's, a sliver
				 * of each step): chosen only when --iter names it */
	const char *what;	/* sync: the call that ends each iteration */
};

/* Why no series was chosen. */
enum diff_choice_miss {
	DIFF_CHOICE_OK = 0,
	DIFF_CHOICE_NONE,	/* none in common (or --iter none): the whole run */
	DIFF_CHOICE_NO_BASE,	/* --iter names none of the baseline's */
	DIFF_CHOICE_NO_OPT,	/* the baseline has it, the optimized not */
};

/*
 * The series to compare, *ia in a (the baseline) and *ib in b.  With want
 * (--iter): "none"; "capture", "graph", "kernels" (that source); "nvtx:NAME"
 * or NAME (an NVTX series diff_iter__name_matches); each side's best of
 * those with 2 iterations or more.  Without: the first source, in the
 * order of enum diff_iter_source, in which both have a series of
 * DIFF_MIN_ITERS or more (NVTX: of one name); on each side the best is the
 * one that covers most time, then the one with more iterations, then the
 * first.  *partial is set when a source was passed over because only one
 * side had it.
 */
enum diff_choice_miss diff_iter__choose(const struct diff_cand *a, size_t na,
					const struct diff_cand *b, size_t nb, const char *want,
					size_t *ia, size_t *ib, bool *partial);

/* ---- attribution -------------------------------------------------------- */

/* Iterations sorted by start; end[i] is where iteration i ends. */
struct diff_iterset {
	const uint64_t *start;
	const uint64_t *end;
	size_t n;
	size_t cursor;		/* the last one found: times come mostly in order */
};

/* The iteration t falls in: the last one starting at or before t, if t is
 * before its end; -1 when none. */
static inline ssize_t diff_iterset__find(struct diff_iterset *s, uint64_t t)
{
	size_t lo, hi, c = s->cursor;

	if (!s->n || t < s->start[0])
		return -1;
	if (c < s->n && s->start[c] <= t && (c + 1 == s->n || s->start[c + 1] > t)) {
		hi = c;
	} else if (c + 1 < s->n && s->start[c + 1] <= t && (c + 2 == s->n || s->start[c + 2] > t)) {
		hi = c + 1;
	} else {
		/* the last start <= t */
		lo = 0;
		hi = s->n - 1;
		while (lo < hi) {
			size_t mid = lo + (hi - lo + 1) / 2;

			if (s->start[mid] <= t)
				lo = mid;
			else
				hi = mid - 1;
		}
	}
	s->cursor = hi;
	return t < s->end[hi] ? (ssize_t)hi : -1;
}

#endif
