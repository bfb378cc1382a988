// SPDX-License-Identifier: MIT
/*
 * The iterations of `gtrace-bpf diff` (diff/diff_iter.c): NVTX series
 * names and --iter's matching, the period of launch sequences (with a
 * warm-up before the loop and other work after it, or none at all), the
 * matcher that cuts launches into iterations (extra launches, a missing
 * one, the end of the loop), the choice of a series both traces have, and
 * the lookup of a time's iteration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "diff/diff_iter.h"

static void test_series_name(void **state)
{
	char out[32];

	(void)state;
	diff_iter__series_name("step 12", 7, out, sizeof(out));
	assert_string_equal(out, "step N");
	diff_iter__series_name("layer3.conv10/x", 15, out, sizeof(out));
	assert_string_equal(out, "layerN.convN/x");
	diff_iter__series_name("train", 5, out, sizeof(out));
	assert_string_equal(out, "train");
	/* the length given, not the NUL, ends it; and it fits the buffer */
	diff_iter__series_name("step 1 and more", 6, out, sizeof(out));
	assert_string_equal(out, "step N");
	diff_iter__series_name("abcdefgh", 8, out, 4);
	assert_string_equal(out, "abc");
}

static void test_name_matches(void **state)
{
	(void)state;
	assert_true(diff_iter__name_matches("step N", "step N"));
	assert_true(diff_iter__name_matches("step N", "step"));
	assert_true(diff_iter__name_matches("step N", "step 7"));
	assert_true(diff_iter__name_matches("step_N", "step"));
	assert_true(diff_iter__name_matches("iterN", "iter"));
	assert_true(diff_iter__name_matches("train", "train"));
	assert_false(diff_iter__name_matches("step N", "ste"));
	assert_false(diff_iter__name_matches("step N", "steps"));
	assert_false(diff_iter__name_matches("train", "trai"));
	assert_false(diff_iter__name_matches("N", ""));
}

/* ids: the given prefix, reps repetitions of pat, then the suffix. */
static size_t build(uint32_t *ids, const uint32_t *pre, size_t npre, const uint32_t *pat, size_t np,
		    size_t reps, const uint32_t *suf, size_t nsuf)
{
	size_t n = 0;

	for (size_t i = 0; i < npre; i++)
		ids[n++] = pre[i];
	for (size_t r = 0; r < reps; r++)
		for (size_t i = 0; i < np; i++)
			ids[n++] = pat[i];
	for (size_t i = 0; i < nsuf; i++)
		ids[n++] = suf[i];
	return n;
}

static void test_period(void **state)
{
	static uint32_t ids[4096];
	const uint32_t pat[] = { 1, 2, 3, 3 }, warm[] = { 9, 8, 7, 9, 8 }, tail[] = { 5, 6, 5, 4, 6 };
	struct diff_period p;
	size_t n;

	(void)state;
	/* the loop alone */
	n = build(ids, NULL, 0, pat, 4, 10, NULL, 0);
	assert_true(diff_iter__find_period(ids, n, &p));
	assert_int_equal(p.period, 4);
	assert_int_equal(p.start, 0);
	assert_int_equal(p.len, 40);
	/* a warm-up before it, other work after it */
	n = build(ids, warm, 5, pat, 4, 50, tail, 5);
	assert_true(diff_iter__find_period(ids, n, &p));
	assert_int_equal(p.period, 4);
	assert_int_equal(p.start, 5);
	assert_int_equal(p.len, 200);
	/* one kernel over and over */
	n = build(ids, NULL, 0, pat, 1, 12, NULL, 0);
	assert_true(diff_iter__find_period(ids, n, &p));
	assert_int_equal(p.period, 1);
	/* a loop whose every tenth iteration adds a kernel: ten iterations make the period */
	n = 0;
	for (int r = 0; r < 40; r++) {
		n += build(ids + n, NULL, 0, pat, 4, 1, NULL, 0);
		if (r % 10 == 9)
			ids[n++] = 42;
	}
	assert_true(diff_iter__find_period(ids, n, &p));
	assert_int_equal(p.period, 41);
	/* fewer than three repetitions, and no repetition at all */
	n = build(ids, NULL, 0, pat, 4, 2, NULL, 0);
	assert_false(diff_iter__find_period(ids, n, &p));
	for (n = 0; n < 1000; n++)
		ids[n] = (uint32_t)((n * 2654435761u) >> 7) % 97;
	assert_false(diff_iter__find_period(ids, n, &p));
	/* a periodic stretch that is only a small part of the launches */
	n = build(ids, NULL, 0, pat, 4, 3, NULL, 0);
	for (size_t i = 0; i < 200; i++, n++)
		ids[n] = 100 + (uint32_t)i;
	assert_false(diff_iter__find_period(ids, n, &p));
}

static void feed_all(struct diff_seq *s, const uint32_t *ids, size_t n, uint64_t t0)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(diff_seq__feed(s, ids[i], t0 + i * 10), 0);
}

static void test_seq(void **state)
{
	const uint32_t pat[] = { 1, 2, 3 };
	struct diff_period per = { .period = 3, .start = 0, .len = 3 };
	struct diff_seq s;

	(void)state;
	assert_int_equal(diff_seq__init(&s, pat, &per), 0);
	/* on the sequence: each 1 starts an iteration */
	{
		const uint32_t ids[] = { 1, 2, 3, 1, 2, 3, 1, 2, 3 };

		feed_all(&s, ids, 9, 0);
	}
	assert_int_equal(s.n, 3);
	assert_int_equal(s.starts[0], 0);
	assert_int_equal(s.starts[1], 30);
	assert_int_equal(s.starts[2], 60);
	assert_int_equal(s.off, 0);
	/* an extra launch inside an iteration is counted, the iteration goes on */
	{
		const uint32_t ids[] = { 1, 2, 7, 3 };

		feed_all(&s, ids, 4, 1000);
	}
	assert_int_equal(s.n, 4);
	assert_int_equal(s.starts[3], 1000);
	assert_int_equal(s.off, 1);
	/* a launch missing: the next 1 starts the next iteration all the same */
	{
		const uint32_t ids[] = { 1, 2, 1, 2, 3 };

		feed_all(&s, ids, 5, 2000);
	}
	assert_int_equal(s.n, 6);
	assert_int_equal(s.starts[4], 2000);
	assert_int_equal(s.starts[5], 2020);
	assert_int_equal(s.off, 2);
	/* the loop ends: more than a period off it stops the series, and the
	 * iteration started inside that run (the 1 among them) is taken back */
	{
		const uint32_t ids[] = { 1, 2, 8, 9, 1, 8, 9 };

		feed_all(&s, ids, 7, 3000);
	}
	assert_true(s.stopped);
	assert_int_equal(s.n, 7);
	assert_int_equal(s.starts[6], 3000);
	{
		const uint32_t ids[] = { 1, 2, 3, 1 };

		feed_all(&s, ids, 4, 4000);
	}
	assert_int_equal(s.n, 7);
	diff_seq__free(&s);
}

static void test_choose(void **state)
{
	const struct diff_cand a[] = {
		{ DIFF_ITER_NVTX, 10, "matmul", 20, 900, false, NULL },
		{ DIFF_ITER_NVTX, 10, "step N", 20, 1000, false, NULL },
		{ DIFF_ITER_NVTX, 10, "epoch N", 3, 1100, false, NULL },	/* too few to be chosen alone */
		{ DIFF_ITER_KERNELS, 10, NULL, 50, 990, false, NULL },
		{ DIFF_ITER_GRAPH, 10, NULL, 8, 500, false, NULL },
	};
	const struct diff_cand b[] = {
		{ DIFF_ITER_KERNELS, 20, NULL, 40, 500, false, NULL },
		{ DIFF_ITER_NVTX, 20, "step N", 2, 400, false, NULL },	/* enough when asked for */
		{ DIFF_ITER_NVTX, 21, "step N", 20, 300, false, NULL },
		{ DIFF_ITER_NVTX, 20, "matmul", 20, 280, false, NULL },
	};
	size_t ia, ib;
	bool partial;

	(void)state;
	/* the NVTX series that covers most, the optimized's of that name */
	assert_int_equal(diff_iter__choose(a, 5, b, 4, NULL, &ia, &ib, &partial), DIFF_CHOICE_OK);
	assert_int_equal(ia, 1);
	assert_int_equal(ib, 2);
	assert_false(partial);
	/* --iter by name: the best of that name with two or more, both sides */
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "step", &ia, &ib, &partial), DIFF_CHOICE_OK);
	assert_int_equal(ia, 1);
	assert_int_equal(ib, 1);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "nvtx:matmul", &ia, &ib, &partial), DIFF_CHOICE_OK);
	assert_int_equal(ia, 0);
	assert_int_equal(ib, 3);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "kernels", &ia, &ib, &partial), DIFF_CHOICE_OK);
	assert_int_equal(ia, 3);
	assert_int_equal(ib, 0);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "epoch", &ia, &ib, &partial), DIFF_CHOICE_NO_OPT);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "graph", &ia, &ib, &partial), DIFF_CHOICE_NO_OPT);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "capture", &ia, &ib, &partial), DIFF_CHOICE_NO_BASE);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "fwd", &ia, &ib, &partial), DIFF_CHOICE_NO_BASE);
	assert_int_equal(diff_iter__choose(a, 5, b, 4, "none", &ia, &ib, &partial), DIFF_CHOICE_NONE);
	/* no NVTX series in common: the next source both have, said to be partial */
	assert_int_equal(diff_iter__choose(a, 5, b, 1, NULL, &ia, &ib, &partial), DIFF_CHOICE_OK);
	assert_int_equal(ia, 3);
	assert_int_equal(ib, 0);
	assert_true(partial);
	/* nothing in common at all */
	assert_int_equal(diff_iter__choose(a + 4, 1, b + 1, 1, NULL, &ia, &ib, &partial), DIFF_CHOICE_NONE);
	assert_true(partial);
	assert_int_equal(diff_iter__choose(NULL, 0, NULL, 0, NULL, &ia, &ib, &partial), DIFF_CHOICE_NONE);
	assert_false(partial);
}

static void test_iterset(void **state)
{
	const uint64_t start[] = { 100, 200, 300, 500 }, end[] = { 200, 300, 400, 600 };
	struct diff_iterset s = { .start = start, .end = end, .n = 4 };

	(void)state;
	assert_int_equal(diff_iterset__find(&s, 99), -1);
	assert_int_equal(diff_iterset__find(&s, 100), 0);
	assert_int_equal(diff_iterset__find(&s, 199), 0);
	assert_int_equal(diff_iterset__find(&s, 200), 1);
	assert_int_equal(diff_iterset__find(&s, 399), 2);
	assert_int_equal(diff_iterset__find(&s, 400), -1);	/* between iterations */
	assert_int_equal(diff_iterset__find(&s, 599), 3);
	assert_int_equal(diff_iterset__find(&s, 600), -1);
	/* out of order: the search, not only the cursor */
	assert_int_equal(diff_iterset__find(&s, 150), 0);
	assert_int_equal(diff_iterset__find(&s, 550), 3);
	assert_int_equal(diff_iterset__find(&s, 250), 1);
	s.n = 0;
	assert_int_equal(diff_iterset__find(&s, 150), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_name),
		cmocka_unit_test(test_name_matches),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_seq),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_iterset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
