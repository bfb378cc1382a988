/* SPDX-License-Identifier: MIT */
/*
 * Internal to `gtrace-bpf diff`: one side of a diff as its passes fill it
 * (diff_trace.c reads a trace into it; the unit tests build one directly),
 * and the core that compares two (diff.c).
 *
 * Memory: per distinct name (kernel, copy kind, API) one struct diff_acc
 * with its log histogram (30 KiB once it has a duration); per iteration
 * 24 bytes; the GPU records waiting to be put in
 * order (DIFF_GPU_REORDER at most).  Nothing grows with the number of
 * calls.
 */
#ifndef GTRACE_DIFF_INT_H
#define GTRACE_DIFF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "diff/diff.h"
#include "diff/diff_iter.h"
#include "diff/diff_stat.h"
#include "bpf/gtrace_api.h"
#include "lib/loghist.h"

#define DIFF_RING 4		/* iterations a name's sums are kept open for */
#define DIFF_GPU_REORDER 4096	/* GPU intervals held to be put in order of start
				 * (a power of two: the run's ring) */
#define DIFF_NO_ITER UINT32_MAX

/* One kernel, copy kind or API in one run: the figures of its row. */
struct diff_acc {
	char *name;			/* owned */
	uint64_t hash;			/* of name */
	uint32_t id;			/* its index in its table, in order of first sight */
	uint64_t count;			/* occurrences in the iterations */
	uint64_t timed;			/* of which with a duration */
	uint64_t total;			/* their durations added, ns */
	struct loghist sk;		/* the durations, for the median */
	struct diff_moments call;	/* durations per call */
	struct diff_moments it_t;	/* time per iteration, over the iterations it is in */
	struct diff_moments it_c;	/* count per iteration, likewise */
	uint32_t ring_it[DIFF_RING];	/* iterations whose sums are open, DIFF_NO_ITER free */
	uint64_t ring_t[DIFF_RING];	/* their time so far */
	uint64_t ring_c[DIFF_RING];	/* their count so far */
	uint64_t late;			/* values of an iteration already closed (a GPU record
					 * the merger could not link, at the end of the file) */
	uint64_t late_t;		/* their time: added to the means, not to the spread */
};

/* Names to accumulators: interned by content, with a cache by address for
 * the decoder's names, which come back as the same string. */
#define DIFF_NCACHE 64
struct diff_names {
	struct diff_acc **v;		/* in order of first sight */
	uint32_t n, cap;
	uint32_t *idx;			/* open addressing: index + 1, 0 empty */
	uint32_t idx_cap;		/* power of two */
	struct { const char *s; uint32_t i; } cache[DIFF_NCACHE];
};

/* The accumulator of name, added when new; NULL when out of memory. */
struct diff_acc *diff_names__get(struct diff_names *t, const char *name);
/* The accumulator of name if there is one. */
struct diff_acc *diff_names__find(const struct diff_names *t, const char *name);
void diff_names__free(struct diff_names *t);

/* A GPU interval waiting to be put in order. */
struct diff_gpu_iv {
	uint64_t start, end;
	uint32_t iter;
};

enum diff_tab { DIFF_TAB_GPU, DIFF_TAB_LAUNCH, DIFF_TAB_SITE, DIFF_TAB__COUNT };

/* analyze's figures of one side, over the span of its iterations (totals:
 * diff__compute divides them by the iterations). */
struct diff_az {
	bool valid;			/* analyze ran and found the process */
	char why[200];			/* when not: the line analyze printed */
	double v[DIFF_T__COUNT];	/* the figures */
	bool known[DIFF_T__COUNT];	/* which the trace has (GPU records, sched) */
	const char *bound;		/* az_bound__name (static) */
	const char *busy_source;	/* where GPU busy comes from (static) */
	uint32_t nf;			/* findings */
	struct {
		const char *id;		/* az_rule__id (static) */
		const char *severity;	/* az_severity__name (static) */
		uint64_t cost_ns;	/* over the span */
	} f[AZ_RULE__COUNT];
};

/* One trace, as compared. */
struct diff_side {
	struct diff_side_info info;
	struct diff_az az;		/* what analyze says of the same span */
	bool whole;			/* the whole run is one "iteration" */
	uint32_t n_iter;		/* iterations (1 when whole) */
	uint64_t *iter_ns;		/* each one's time */
	uint64_t *gpu_ns;		/* each one's GPU busy time */
	uint64_t *gpu_end;		/* the end of its busy time so far */
	struct diff_names tab[DIFF_TAB__COUNT];	/* GPU records by name; launch calls by kernel;
						 * calls with a stack by call site */
	struct diff_acc api[GT_API__COUNT];	/* calls by api (names static, not owned) */
	/* the GPU intervals held, DIFF_GPU_REORDER at most in all: those that
	 * came in start order in a FIFO ring (run), the others in a min-heap */
	struct diff_gpu_iv *heap;	/* min-heap by start */
	uint32_t nheap;
	struct diff_gpu_iv *run;	/* a ring of DIFF_GPU_REORDER */
	uint32_t rhead, rlen;
	uint64_t gpu_late;		/* intervals that came after a later-starting one was
					 * taken: their union overlap is approximate */
	uint64_t gpu_last_start;	/* start of the last interval taken from the heap */
};

/* A side of n_iter iterations (whole: one, the whole run); NULL when out of
 * memory.  iter_ns[] is the caller's to fill. */
struct diff_side *diff_side__new(uint32_t n_iter, bool whole);
void diff_side__free(struct diff_side *s);
/* A copy of str kept in the owner's array (*strs, *n, *cap), freed with
 * it; NULL when out of memory (str NULL: NULL). */
const char *diff_strs__keep(char ***strs, size_t *n, size_t *cap, const char *str);
/* The accumulator of api (always there). */
struct diff_acc *diff_side__api(struct diff_side *s, unsigned api);
/* One occurrence in iteration it (< n_iter), with dur when timed.  Returns
 * 0 or -ENOMEM. */
int diff_acc__add(struct diff_acc *a, uint32_t it, bool timed, uint64_t dur);
/* One GPU interval of iteration it, for its busy time.  Returns 0 or
 * -ENOMEM. */
int diff_side__gpu(struct diff_side *s, uint32_t it, uint64_t start, uint64_t end);
/* Closes what is open: the sums per iteration, the GPU intervals held.
 * Once, after the last add. */
void diff_side__finish(struct diff_side *s);

/* The pure core: compares two finished sides into r (zeroed first; r's
 * strings are its own).  partial: the iterations were chosen passing over
 * a source only one side had.  Returns 0 or -ENOMEM. */
int diff__compute(const struct diff_side *b, const struct diff_side *o, bool partial,
		  struct diff_result *r);

/* diff_trace.c: one trace's passes. */
struct diff_scan;

/* Opens path and scans it for iteration candidates of process pid (-p; 0:
 * the one with the most calls and GPU work).  Returns 0, 1 after one line
 * on err (cannot read, not a trace, no CUDA call), 2 after one line when pid
 * made no CUDA call there.  *dmg (when not NULL): what its reader met of
 * damage, also when it fails. */
/* pid: the process compared (0: the busiest, or with rank >= 0 the one of
 * that rank). */
int diff_scan__open(const char *path, uint32_t pid, int32_t rank, struct diff_scan **out, struct trace_damage *dmg,
		    FILE *err);
/* Its candidates (valid while the scan lives). */
const struct diff_cand *diff_scan__cands(const struct diff_scan *s, size_t *n);
/* The command line (or comm) of process pid in the scanned trace, NULL
 * when unknown. */
const char *diff_scan__cmdline(const struct diff_scan *s, uint32_t pid);
/* The candidates of --iter's error message: "NVTX 'step N' (20), capture
 * ranges (3)", "" when none, the names whole and escaped for a terminal;
 * malloc'd, NULL when out of memory. */
char *diff_scan__describe(const struct diff_scan *s);
/* The second pass: the figures of candidate ci (-1: the whole run of the
 * process with the most CUDA work) and analyze's over their span, into a
 * new side.  Returns 0, or 1 after one line on err. */
int diff_scan__side(struct diff_scan *s, ssize_t ci, struct diff_side **out, FILE *err);
void diff_scan__free(struct diff_scan *s);

/* diff_json.c: r as one JSON document.  Returns 0 or -errno. */
int diff__write_json(const struct diff_result *r, FILE *f);

#endif
