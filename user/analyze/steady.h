/* SPDX-License-Identifier: MIT */
/*
 * What repeats in a trace, and when it is steady: the iterations of a
 * program found from its whole call stream (no markers needed), and the
 * split of a series of iterations into start-up, steady state and tail.
 * analyze answers for the steady state; diff compares two of them.
 *
 * Iterations from the call stream.  Each thread's CUDA calls become a
 * sequence of tokens: a kernel launch by its kernel, a graph launch by its
 * graph, a synchronization by its API, a copy by its API and direction, a
 * set, an NCCL collective by its operation (other calls, queries among
 * them, are left out: how often a program polls is no structure).  A
 * boundary is a token that recurs; the calls between two of its
 * occurrences are a segment, and a segment's signature is the hash of its
 * tokens.  Where the signatures repeat with a period of k segments
 * (k <= STEADY_MAX_K) for STEADY_MIN_REPS periods or more, every k
 * segments are an iteration; the longest such run is the series of that
 * boundary.  A synchronization or collective is a natural boundary (the
 * host waits once per step); a graph launch or a kernel launch is taken
 * when no synchronization repeats.  Boundaries are chosen from the first
 * STEADY_WINDOW tokens of each thread (the window is kept, then replayed):
 * every synchronization, blocking copy and collective that occurs there
 * STEADY_MIN_REPS times or more, the most frequent graphs, and the kernels
 * that repeat least (once a step) and most.
 * Memory: the window per thread, and per boundary 28 bytes an occurrence up
 * to STEADY_MAX_SEGS; past that two kept segments become one (a series'
 * iterations are then groups of 2, 4, ... of the run's: `group`), so that
 * memory does not follow the trace's length.
 *
 * Phases.  Over the iteration times d_i of a series, M their median and
 * MAD their median absolute deviation: an iteration is near the level when
 * |d_i - M| <= max(4 x 1.4826 MAD, STEADY_EDGE_REL M).  The steady state
 * runs from the first iteration near the level that begins a window of
 * STEADY_HOLD iterations at least 80 % near it, to the last one that ends
 * such a window: a level shift (warm-up, compilation, a slower tail) is
 * where the times leave it for good; an iteration only as far off as the
 * run's own noise is no phase.  What comes before is start-up, after it
 * the tail.  No steady state when fewer than STEADY_MIN_REPS iterations
 * remain, or fewer than 60 % of them are in the band |d_i - M| <=
 * max(4 x 1.4826 MAD, STEADY_BAND_REL M) capped at STEADY_BAND_MAX M
 * (times spread wider are no level).
 */
#ifndef GTRACE_ANALYZE_STEADY_H
#define GTRACE_ANALYZE_STEADY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "decode/decode.h"

#define STEADY_WINDOW 65536	/* tokens per thread the boundaries are chosen in */
#define STEADY_MAX_K 16		/* boundary occurrences per iteration, at most */
#define STEADY_MIN_REPS 3	/* repetitions a period must hold */
#define STEADY_HOLD 5		/* iterations a level must hold to begin or end the steady state */
#define STEADY_BAND_REL 0.10	/* the band's least half-width, of the median */
#define STEADY_BAND_MAX 0.30	/* ... and its widest */
#define STEADY_EDGE_REL 0.50	/* the edges' band's least half-width, of the median */
#define STEADY_MAX_SYNC 6	/* synchronization and collective boundaries per thread */
#define STEADY_MAX_GRAPH 2	/* graph boundaries per thread */
#define STEADY_MAX_SEGS 16384	/* segments kept per boundary: past it, two become one */
#define STEADY_MAX_LAUNCH 8	/* kernel boundaries per thread: half the rarest that repeat, half the most frequent */

/* ---- pure parts --------------------------------------------------------- */

/* The repeating run of a sequence of segment signatures. */
struct steady_run {
	uint32_t k;		/* segments per iteration */
	size_t start;		/* the run's first segment */
	size_t iters;		/* whole periods in the run (>= STEADY_MIN_REPS) */
};

/* The longest run of sig[0..n) in which sig[i] == sig[i - k], over k in
 * 1..STEADY_MAX_K (ties: the smaller k), as whole periods from its start.
 * False when none holds STEADY_MIN_REPS periods. */
bool steady__sig_period(const uint64_t *sig, size_t n, struct steady_run *out);

struct steady_phases {
	bool found;		/* a steady state */
	size_t first, last;	/* its iterations, inclusive */
	uint64_t start_ts;	/* the first one's start */
	uint64_t end_ts;	/* the last one's end */
	uint64_t median_ns;	/* median iteration time in it (exact) */
	size_t in_band;		/* of its iterations, those in the band */
};

/* The phases of n iterations [start[i], end[i]) (sorted by start).
 * Returns 0 or -ENOMEM. */
int steady__phases(const uint64_t *start, const uint64_t *end, size_t n, struct steady_phases *out);

/* The series an NVTX range name belongs to: name[0..n) with every run of
 * digits written as "N" ("step 12" -> "step N"), cut to fit len (> 0)
 * bytes. */
void steady__series_name(const char *name, size_t n, char *out, size_t len);

/* Whether n ranges [start[i], end[i]) sorted by start, of one NVTX
 * series, can be iterations: together they cover at least half the time
 * from the first one's start to the last one's end (a step's range covers
 * the step; a library's ranges around its own work, CUB's sorts, cover a
 * sliver), and the name is none a library gives its own ranges. */
bool steady__ranges_are_iterations(const char *series, const uint64_t *start,
				   const uint64_t *end, size_t n);

/* ---- the scan ----------------------------------------------------------- */

enum steady_kind {
	STEADY_NONE = 0,
	STEADY_SYNC,		/* a synchronization or blocking copy ends each segment */
	STEADY_COLL,		/* an NCCL collective */
	STEADY_GRAPH,		/* a CUDA graph's launch */
	STEADY_LAUNCH,		/* a kernel's launch */
};
/* "sync", "collective", "graph", "kernel", "none" */
const char *steady_kind__name(enum steady_kind k);

/* The iterations one boundary cuts a thread's calls into. */
struct steady_series {
	uint32_t pid, tid;
	enum steady_kind kind;
	char *what;		/* the API, collective or kernel name; graph: its exec (hex) */
	uint32_t k;		/* boundary occurrences per iteration */
	uint32_t tokens;	/* calls per iteration (tokens of its segments) */
	size_t n;		/* iterations */
	uint64_t *start, *end;	/* each one's: a boundary's end to the k-th next one's */
	uint64_t coverage;	/* the time they add up to */
	uint32_t group;		/* each iteration is this many of the run's (1 unless the boundary
				 * recurred more than STEADY_MAX_SEGS times: kept in groups) */
};

struct steady_scan;

struct steady_scan *steady_scan__new(void);
void steady_scan__free(struct steady_scan *s);
/* A decoded call (in each thread's order); returns 0 or -ENOMEM. */
int steady_scan__call(struct steady_scan *s, const struct gt_callrec *c);
/* A decoded NCCL call. */
int steady_scan__nccl(struct steady_scan *s, const struct gt_ncclrec *n);
/* After the last record: cuts every thread's series.  0 or -ENOMEM. */
int steady_scan__finish(struct steady_scan *s);
/* What a series weighs: the GPU time its process launched in [start, end]
 * where the caller knows it (a merged trace), else NULL: the time its
 * iterations cover. */
typedef uint64_t (*steady_weight_fn)(void *ctx, uint32_t pid, uint64_t start, uint64_t end);

/* The best series of process pid (after finish) whose kind is in kinds
 * (a mask of 1 << enum steady_kind; 0: any), NULL when none.  The one that
 * weighs the most (weight, else the time its iterations cover), except
 * that a synchronization or collective is taken over a graph, and a graph
 * over a kernel, unless the other weighs more than STEADY_KIND_OUTWEIGH
 * times as much (a natural boundary, unless it cuts a part of the run
 * only: a start-up's copies); between series of the same kind weighing
 * the same within 10 %, the coarser (fewer iterations).  Its threads all
 * count. */
#define STEADY_KIND_OUTWEIGH 2
const struct steady_series *steady_scan__best(const struct steady_scan *s, uint32_t pid, unsigned kinds,
					      steady_weight_fn weight, void *ctx);

#endif
