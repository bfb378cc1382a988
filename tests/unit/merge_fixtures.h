/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures of the merger's unit tests (test_merge_link.c: the linking
 * core; test_merge_clock.c: the GPU clock's fit; test_merge.c: the file
 * merge): times, the process, the flags of a linked GPU record, the check of
 * the linking counters, and the records the linking core takes.  Include
 * after <cmocka.h> and "merge/link.h".
 */
#ifndef GTRACE_TEST_MERGE_FIXTURES_H
#define GTRACE_TEST_MERGE_FIXTURES_H

#include <stdint.h>

#define US 1000ull
#define MS 1000000ull
#define PID 4242
#define TID 4243
#define T0 (1000ull * MS)	/* a base time far from 0 */

#define LINKED_FLAGS (GT_GPU_LINKED | GT_GPU_API_MATCHED)

static inline void expect_stats(const struct merge_link_stats *st, uint64_t gpu, uint64_t linked,
				uint64_t unmatched, uint64_t unmatched_calls, uint64_t causality,
				uint64_t no_api, uint64_t dups)
{
	assert_int_equal(st->gpu_records, gpu);
	assert_int_equal(st->linked, linked);
	assert_int_equal(st->unmatched_gpu, unmatched);
	assert_int_equal(st->unmatched_calls, unmatched_calls);
	assert_int_equal(st->causality, causality);
	assert_int_equal(st->no_api, no_api);
	assert_int_equal(st->duplicates, dups);
}

/* A call, a CUPTI API record and a GPU record of the process, and the
 * linking core run over them (test_merge_link.c, test_merge_clock.c). */
static inline struct merge_call call_x(uint64_t entry, uint64_t exit, uint32_t tid, uint8_t kind)
{
	return (struct merge_call){ .entry = entry, .exit = exit, .has_exit = 1, .pid = PID,
				    .tid = tid, .kind = kind };
}

static inline struct merge_call call_noexit(uint64_t entry, uint32_t tid, uint8_t kind)
{
	return (struct merge_call){ .entry = entry, .pid = PID, .tid = tid, .kind = kind };
}

static inline struct merge_api api(uint32_t corr, uint32_t tid, uint64_t start, uint64_t dur)
{
	return (struct merge_api){ .start = start, .dur = dur, .pid = PID, .tid = tid,
				   .correlation = corr };
}

static inline struct merge_gpu gpu_rec(uint16_t type, uint32_t corr, uint64_t ts)
{
	return (struct merge_gpu){ .ts = ts, .pid = PID, .correlation = corr, .type = type,
				   .call = 12345 };
}

static inline void link_ok(struct merge_call *c, size_t nc, struct merge_api *a, size_t na,
		    struct merge_gpu *g, size_t ng, struct merge_link_stats *st)
{
	assert_int_equal(merge__link(c, nc, a, na, g, ng, NULL, st), 0);
}

#endif /* GTRACE_TEST_MERGE_FIXTURES_H */
