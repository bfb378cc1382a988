/* SPDX-License-Identifier: MIT */
/*
 * Internal to the file merge of `gtrace-bpf merge` (merge.h): the state its
 * files share.  merge.c runs the merge and indexes the trace's calls (first
 * pass); merge_spool.c lists, maps and indexes the spool files and the
 * agent records a cupti=inline trace holds itself; merge_write.c writes the
 * merged trace (second pass).
 */
#ifndef GTRACE_MERGE_INT_H
#define GTRACE_MERGE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "merge/merge.h"

struct capture_spans;
struct gt_decoder;
struct trace_writer;

#define LOC_OFF_BITS	48
#define LOC_OFF_MASK	((1ull << LOC_OFF_BITS) - 1)
#define LOC_GPU		(1ull << 63)	/* tail entry: the value is an index into gpu[] */
#define MAX_SPOOLS	32767		/* file index in bits 48..62 of a loc */

/* ------------------------------------------------------------ growable arrays */

/* The merge's arrays grow from 1024 entries: a trace has thousands of calls. */
#define VEC_MIN 1024

#define VEC_PUSH(vec, n, cap, val) \
	(vec__reserve(&(vec), &(cap), (n), 1, VEC_MIN) ? -ENOMEM : ((vec)[(n)++] = (val), 0))

/* ------------------------------------------------------------ the merger */

struct spool {
	char *path;
	const uint8_t *map;	/* the whole file as it was when opened */
	size_t len;
	bool owned;		/* map is malloc'd (the trace's own GPU records), not mapped */
};

/* A record placed after the main records: by ts, then by where it is. */
struct tail_ent {
	uint64_t ts;
	uint64_t loc;		/* file << 48 | offset, or LOC_GPU | index into gpu[] */
};

struct merger {
	const struct merge_opts *o;
	struct merge_result res;
	struct spool *spools;
	size_t nspools, spools_cap;
	struct merge_call *calls;
	size_t ncalls, calls_cap;
	struct merge_api *apis;
	size_t napis, apis_cap;
	struct merge_gpu *gpu;
	size_t ngpu, gpu_cap;
	struct merge_node *nodes;	/* CUDA graphs' kernel nodes made and cloned */
	size_t nnodes, nodes_cap;
	struct tail_ent *tail;
	size_t ntail, tail_cap;
	uint64_t *stats;	/* locs of GT_REC_CUPTI_STATS */
	size_t nstats, stats_cap;
	struct gt_decoder *dec;	/* pairs the first pass's entries with their exits */
	uint64_t max_ts;	/* highest ts of the trace's records */
	uint64_t end_ts;	/* the trace's trailer end_ts, else max_ts */
	bool whole;		/* a trailer says no event was dropped: every call the probes
				 * saw is in the trace */
	struct gt_counters counters;	/* the trace's final counters (first pass) */
	struct capture_spans *spans;	/* the trace's capture ranges (first pass) */
	bool inline_gpu;		/* the trace holds the agent's records (cupti=inline) */
	uint8_t *inl;			/* ... copied here by the first pass, back to back */
	size_t inl_len, inl_cap;
	int inl_fd;			/* ... and written from there to this unnamed file
					 * (mapped after the pass), -1 = kept in memory */
	size_t inl_spilled;		/* bytes written to it */
	struct u64map first, last;	/* pid -> its first and last recorded record's ts */
	bool ranged;			/* recorded with -c: GPU-side records outside ranges go */
	uint64_t outside_gpu;		/* unlinked GPU records left out for it */
	union {
		uint64_t align;
		uint8_t b[65536];
	} buf;			/* one record being rewritten */
};

static inline const struct gt_hdr *spool_rec(const struct merger *m, uint64_t loc)
{
	const struct spool *s = &m->spools[loc >> LOC_OFF_BITS];

	return (const struct gt_hdr *)(s->map + (loc & LOC_OFF_MASK));
}

/* ------------------------------------------------------------ merge.c */

/* What an entry record can cause on the GPU (MERGE_CALL_NONE: not indexed). */
enum merge_call_kind mg__entry_kind(const struct gt_hdr *h);

/* ------------------------------------------------------------ merge_spool.c */

/* One spool file to the list (at most MAX_SPOOLS). */
int mg__add_spool_file(struct merger *m, const char *path);
/* Every *.spool of a directory, in name order (a stable merge order). */
int mg__add_spool_dir(struct merger *m, const char *dir);
/* Maps and indexes one spool file. */
int mg__index_spool(struct merger *m, size_t fi);
/* The agent's records (what a spool file holds), as a trace of cupti=inline
 * holds them too. */
bool mg__agent_rec(const struct gt_hdr *h);
/* First pass of a cupti=inline trace: one of its agent records, kept. */
int mg__keep_inline(struct merger *m, const struct gt_hdr *h);
/* After the first pass: what mg__keep_inline kept, indexed as one more spool. */
int mg__index_inline(struct merger *m);

/* ------------------------------------------------------------ merge_write.c */

/* Second pass and the rest: writes the merged trace into w. */
int mg__write_merged(struct merger *m, struct trace_writer *w, uint32_t *linked,
		     size_t nlinked, const char *out);

#endif
