/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures of the merger's unit tests (test_merge_link.c: the linking
 * core; test_merge.c: the file merge): times, the process, the flags of a
 * linked GPU record, and the check of the linking counters.  Include after
 * <cmocka.h> and "merge/link.h".
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

static void expect_stats(const struct merge_link_stats *st, uint64_t gpu, uint64_t linked,
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

#endif /* GTRACE_TEST_MERGE_FIXTURES_H */
