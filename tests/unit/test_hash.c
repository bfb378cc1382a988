// SPDX-License-Identifier: MIT
/*
 * The hashes of user/lib/hash.h: the mixer is splitmix64's, the pair hash is
 * pinned (the Perfetto exporter's output order depends on it), keys of one
 * process never collide, and the string hash depends on every byte and on
 * the length, not on where the string lies in memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/hash.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_mix64_is_splitmix64(void **state)
{
	(void)state;
	/* splitmix64's first outputs for seed 0: the finalizer of golden, 2·golden */
	assert_true(hash__mix64(HASH_GOLDEN) == 0xe220a8397b1dcdafull);
	assert_true(hash__mix64(2 * HASH_GOLDEN) == 0x6e789e6aa1b965f4ull);
	assert_true(hash__mix64(0) == 0);
}

static void test_pair_is_pinned(void **state)
{
	(void)state;
	/* the values hmap placed entries by before lib/hash.h: a change here
	 * reorders the end of every Perfetto export */
	assert_true(hash__pair(0, 0) == 0);
	assert_true(hash__pair(1, 0) == 0x5692161d100b05e5ull);
	assert_true(hash__pair(0x7f0012345000ull, 4242) == 0x2eb131cefb7ae392ull);
	assert_true(hash__pair(3ull << 32 | 7, 1) == 0xf6f25ff22051915cull);
}

static void test_pair_keys_of_one_process_never_collide(void **state)
{
	enum { N = 1 << 16 };
	uint64_t *h = malloc(N * sizeof(*h));

	(void)state;
	assert_non_null(h);
	/* 64-byte aligned handles of one pid: distinct hashes, and spread
	 * over the low bits a table indexes by */
	for (uint64_t i = 0; i < N; i++)
		h[i] = hash__pair(0x7f0000000000ull + i * 64, 1234);
	qsort(h, N, sizeof(*h), cmp_u64);
	for (size_t i = 1; i < N; i++)
		assert_true(h[i] != h[i - 1]);
	free(h);
}

static void test_pair_low_bits_spread_aligned_handles(void **state)
{
	enum { SLOTS = 1024, N = 4096 };
	unsigned load[SLOTS] = { 0 }, max = 0;

	(void)state;
	for (uint64_t i = 0; i < N; i++) {
		unsigned *l = &load[hash__pair(0x7f0000000000ull + i * 4096, 77) & (SLOTS - 1)];

		if (++*l > max)
			max = *l;
	}
	/* 4 per slot on average; a hash that kept the handles' zero low
	 * bits would put them all in a few slots */
	assert_true(max <= 16);
}

static void test_bytes_depends_on_every_byte_and_length(void **state)
{
	char a[40] = "_Z12vector_add_kernelPKfS0_Pfi_tail";
	uint64_t h = hash__bytes(a, 35);

	(void)state;
	for (size_t i = 0; i < 35; i++) {
		char b[40];

		memcpy(b, a, sizeof(b));
		b[i] ^= 1;
		assert_true(hash__bytes(b, 35) != h);
	}
	/* a prefix, and the same bytes with a NUL more */
	assert_true(hash__bytes(a, 34) != h);
	assert_true(hash__bytes("ab", 2) != hash__bytes("ab", 3));
	assert_true(hash__bytes("", 0) != hash__bytes("", 1));
}

static void test_bytes_ignores_alignment(void **state)
{
	const char *s = "void gemm<float, 128, 64>(float const*, float*, int)";
	size_t n = strlen(s);
	char buf[80];

	(void)state;
	for (size_t off = 0; off < 8; off++) {
		memcpy(buf + off, s, n);
		assert_true(hash__bytes(buf + off, n) == hash__bytes(s, n));
	}
}

static void test_bytes_spreads_similar_names(void **state)
{
	enum { SLOTS = 1024, N = 4096 };
	unsigned load[SLOTS] = { 0 }, max = 0;
	char name[64];

	(void)state;
	for (int i = 0; i < N; i++) {
		int n = snprintf(name, sizeof(name), "_Z6kernelILi%dEEvPf", i);
		unsigned *l = &load[hash__bytes(name, (size_t)n) & (SLOTS - 1)];

		if (++*l > max)
			max = *l;
	}
	assert_true(max <= 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mix64_is_splitmix64),
		cmocka_unit_test(test_pair_is_pinned),
		cmocka_unit_test(test_pair_keys_of_one_process_never_collide),
		cmocka_unit_test(test_pair_low_bits_spread_aligned_handles),
		cmocka_unit_test(test_bytes_depends_on_every_byte_and_length),
		cmocka_unit_test(test_bytes_ignores_alignment),
		cmocka_unit_test(test_bytes_spreads_similar_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
