// SPDX-License-Identifier: MIT
/*
 * Unit tests of merge --hosts' clock alignment (user/merge/align.c) on
 * arrays built here: hosts whose CLOCK_MONOTONIC clocks differ by a known
 * amount and whose wall clocks are off by a known error, collectives whose
 * ends jitter by a known bound; the offsets found, the method, the residual,
 * the causality violations, the straggler.  No root, no GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "bpf/gtrace_events.h"
#include "merge/align.h"

#define MS 1000000ll
#define US 1000ll
#define NCOLL 40

/* A fixed jitter in [0, 100 us) for part k of rank r: ranks wake from the
 * barrier at slightly different times. */
static int64_t jitter(int k, int r)
{
	return (int64_t)((unsigned)(k * 7919 + r * 104729) % 100000u);
}

/* Collectives of nranks ranks, rank r on host hosts[r] whose clock reads
 * true time - base[host]; rank late_rank comes late_ns after the others;
 * every rank ends at the same true time (+ jitter). */
static size_t collectives(struct align_part *p, int nranks, const uint32_t *hosts, const int64_t *base,
			  int late_rank, int64_t late_ns)
{
	size_t n = 0;

	for (int k = 0; k < NCOLL; k++) {
		int64_t t = 10 * MS * (k + 1), end = t + late_ns + 200 * US;

		for (int r = 0; r < nranks; r++) {
			int64_t in = t + (r == late_rank ? late_ns : 3 * US * r);

			p[n++] = (struct align_part){
				.uid = 0xabc, .seq = (uint64_t)k + 1, .host = hosts[r], .pid = 100 + (uint32_t)r,
				.rank = r, .entry = (uint64_t)(in - base[hosts[r]]),
				.exit = (uint64_t)(end + jitter(k, r) - base[hosts[r]]),
			};
		}
	}
	return n;
}

/* Host 1's clock is 1000 s behind host 0's; its wall clock 5 ms ahead: the
 * pairs say 1000 s + 5 ms, the collectives bring it back within 50 us; before,
 * ends came before entries, after, none; rank 1 (1 ms late) is the straggler. */
static void test_two_hosts(void **state)
{
	static const uint32_t hosts[2] = { 0, 1 };
	static const int64_t base[2] = { 0, 1000000 * MS };
	struct align_host h[2] = { 0 };
	struct align_part p[2 * NCOLL];
	struct align_stats st;
	struct align_coll *c = NULL;
	size_t np = collectives(p, 2, hosts, base, 1, 1 * MS);
	long nc;

	(void)state;
	h[0].rt_offset_ns = 1700000000000 * MS;
	h[1].rt_offset_ns = h[0].rt_offset_ns + 1000000 * MS + 5 * MS;
	h[0].boot_id[0] = 1;
	h[1].boot_id[0] = 2;
	assert_int_equal(align__run(h, 2, p, np, &st), 0);
	assert_int_equal(h[0].method, GT_HOST_REFERENCE);
	assert_int_equal(h[0].offset_ns, 0);
	assert_int_equal(h[1].method, GT_HOST_COLLECTIVES);
	assert_int_equal(h[1].collectives, NCOLL);
	assert_true(h[1].rt_rel_ns == 1000000 * MS + 5 * MS);
	assert_true(llabs(h[1].offset_ns - 1000000 * MS) < 50 * US);
	assert_true(h[1].residual_ns < 100 * US);
	assert_int_equal(st.collectives, NCOLL);
	assert_true(st.causality_before > 0);
	assert_int_equal(st.causality_after, 0);
	nc = align__collectives(h, p, np, &c);
	assert_int_equal(nc, NCOLL);
	for (long i = 0; i < nc; i++) {
		assert_int_equal(c[i].last_rank, 1);
		assert_int_equal(c[i].last_host, 1);
		assert_true(llabs((int64_t)c[i].skew_ns - 1 * MS) < 60 * US);
	}
	free(c);
}

/* A host of the reference's boot has its clock; a host without any
 * collective keeps what its pairs say; a second trace of a host aligned by
 * collectives gets its offset. */
static void test_fallbacks(void **state)
{
	static const uint32_t hosts[2] = { 0, 1 };
	static const int64_t base[4] = { 0, 7 * MS, 0, 0 };
	struct align_host h[4] = { 0 };
	struct align_part p[2 * NCOLL];
	struct align_stats st;
	size_t np = collectives(p, 2, hosts, base, -1, 0);

	(void)state;
	h[0].boot_id[0] = 1;
	h[1].boot_id[0] = 2;	/* aligned by its collectives */
	h[2].boot_id[0] = 1;	/* the reference's boot */
	h[3].boot_id[0] = 3;	/* no collective: its pairs */
	h[0].rt_offset_ns = 100 * MS;
	h[1].rt_offset_ns = 100 * MS + 7 * MS - 2 * MS;	/* its wall clock 2 ms behind */
	h[2].rt_offset_ns = 100 * MS + 3 * MS;		/* ignored: the same clock as host 0 */
	h[3].rt_offset_ns = 100 * MS + 42 * MS;
	assert_int_equal(align__run(h, 4, p, np, &st), 0);
	assert_int_equal(h[1].method, GT_HOST_COLLECTIVES);
	assert_true(llabs(h[1].offset_ns - 7 * MS) < 50 * US);
	assert_int_equal(h[2].method, GT_HOST_SAME_BOOT);
	assert_int_equal(h[2].offset_ns, 0);
	assert_int_equal(h[3].method, GT_HOST_REALTIME);
	assert_int_equal(h[3].offset_ns, 42 * MS);
	assert_int_equal(st.causality_after, 0);
}

/* Fewer than ALIGN_MIN_COLLECTIVES shared: no refinement on so little. */
static void test_too_few(void **state)
{
	struct align_host h[2] = { 0 };
	struct align_part p[4] = {
		{ .uid = 1, .seq = 1, .host = 0, .entry = 100, .exit = 200 },
		{ .uid = 1, .seq = 1, .host = 1, .entry = 100, .exit = 900 },
		{ .uid = 1, .seq = 2, .host = 0, .entry = 300, .exit = 400 },
		{ .uid = 1, .seq = 2, .host = 1, .entry = 300, .exit = 1100 },
	};
	struct align_stats st;

	(void)state;
	h[0].boot_id[0] = 1;
	h[1].boot_id[0] = 2;
	assert_int_equal(align__run(h, 2, p, 4, &st), 0);
	assert_int_equal(h[1].method, GT_HOST_REALTIME);
	assert_int_equal(h[1].offset_ns, 0);
	assert_int_equal(st.collectives, 2);
}

/* A host's wall clock from its pairs: a pair whose reads a busy machine
 * split (a wide span) is left out, whichever side of the tight ones it lies;
 * of pairs alike in span, the median; one pair, its own. */
static void test_realtime_pairs(void **state)
{
	/* a recording's start and end: the end's reads 32 us apart, off by 16 */
	struct align_pair two[2] = { { 5 * MS, 30 }, { 5 * MS - 16 * US, 16 * US } };
	struct align_pair late[2] = { { 5 * MS + 16 * US, 16 * US }, { 5 * MS, 40 } };
	/* five alike (within twice the tightest and 2 us): their median */
	struct align_pair five[6] = {
		{ 7 * MS + 3, 100 }, { 7 * MS - 2, 150 }, { 7 * MS + 1, 2100 }, { 7 * MS, 80 },
		{ 7 * MS - 40 * US, 50 * US }, { 7 * MS + 2, 90 },
	};
	struct align_pair one[1] = { { -3 * MS, 900 * US } };

	(void)state;
	assert_int_equal(align__realtime(two, 2), 5 * MS);
	assert_int_equal(align__realtime(late, 2), 5 * MS);
	assert_int_equal(align__realtime(five, 6), 7 * MS + 1);
	assert_int_equal(align__realtime(one, 1), -3 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_realtime_pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
