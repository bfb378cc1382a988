/* SPDX-License-Identifier: MIT */
/*
 * The hashes of the hash tables in user/: one 64-bit mixer, a pair of keys
 * folded through it, and one hash of a byte string.  None is part of a file
 * format.  hash__pair() places the entries of lib/hmap.h, and the Perfetto
 * exporter writes what its maps still hold at the end in slot order: a
 * different hash__pair() would reorder those packets, so it must stay the
 * function it is (tests/unit/test_hash.c pins it).  The other users only
 * place entries and hand out ids in insertion order.
 */
#ifndef GTRACE_HASH_H
#define GTRACE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 2^64 / golden ratio, odd: multiplying by it is a bijection that spreads
 * small and aligned values over the high bits. */
#define HASH_GOLDEN 0x9e3779b97f4a7c15ull

/* The splitmix64 finalizer: a bijection in which every input bit reaches
 * every output bit, so that the low bits used as a table index depend on
 * the high bits of aligned pointers and of keys packed as hi << 32 | lo. */
static inline uint64_t hash__mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Two keys (a handle and a pid, a tid and a pid): for a fixed b a bijection
 * of a, so keys of one process never collide. */
static inline uint64_t hash__pair(uint64_t a, uint64_t b)
{
	return hash__mix64(a ^ b * HASH_GOLDEN);
}

/* n bytes at s, eight at a time: the strings hashed are kernel names, often
 * hundreds of bytes long, where a byte-wise hash costs a multiply per byte. */
static inline uint64_t hash__bytes(const void *s, size_t n)
{
	const unsigned char *p = s;
	uint64_t h = HASH_GOLDEN ^ n, v;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n) {
		v = 0;
		memcpy(&v, p, n);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	}
	return hash__mix64(h);
}

#endif
