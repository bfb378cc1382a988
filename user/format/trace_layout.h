/* SPDX-License-Identifier: MIT */
/*
 * The byte layout of docs/FORMAT.md that the writer (trace_writer.c), the
 * reader (trace_file.c) and the chunk ring (chunk_ring.c) share: one place
 * for the magics, the sizes and the little-endian accessors, so that the
 * three cannot disagree.  Internal to format/: other stages go through
 * trace_file.h.
 */
#ifndef GTRACE_TRACE_LAYOUT_H
#define GTRACE_TRACE_LAYOUT_H

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>
#include "bpf/gtrace_events.h"

/* Records go to disk as the BPF side wrote them, in host order; the format
 * defines them as little-endian, so a big-endian build would need swapping. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gtrace files store records in host order, which must be little-endian"
#endif

/* gt_hdr.size is 16 bits, so no record can exceed 64 KiB: the reader's and
 * the writer's size checks rely on that. */
_Static_assert(sizeof(((struct gt_hdr *)0)->size) == 2, "gt_hdr.size is 16 bits");

/* "GTRACE", NUL, then 0x1a (^Z): stops a text viewer early and changes if a
 * transfer mangles bytes, like PNG's signature. */
static const uint8_t file_magic[8] __attribute__((unused)) = {
	'G', 'T', 'R', 'A', 'C', 'E', 0x00, 0x1a
};
static const uint8_t chunk_magic[4] __attribute__((unused)) = { 'G', 'T', 'C', 'K' };

#define HDR_FIXED	40		/* header bytes before the strings */
#define HDR_NSTR	4		/* host, kernel, cmdline, options */
#define HDR_MIN		(HDR_FIXED + HDR_NSTR * 4 + 4)
#define HDR_MAX		(1u << 20)	/* a longer header is corrupt, not a long cmdline */
#define CHUNK_HDR	40		/* bytes of a chunk header */
#define CHUNK_DATA	1
#define CHUNK_TRAILER	2
#define CHUNK_MAX	(64u << 20)	/* largest uncompressed chunk a reader accepts */

static inline void put_u16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void put_u32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void put_u64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint16_t get_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static inline uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

static inline uint32_t crc_of(const void *buf, size_t len)
{
	return crc32(crc32(0L, Z_NULL, 0), buf, len);
}

/* The fields of a chunk header (FORMAT.md "Chunks"). */
struct chunk_head {
	uint16_t kind;		/* CHUNK_DATA or CHUNK_TRAILER */
	uint32_t csize;		/* bytes of the zstd frame after the header */
	uint32_t usize;		/* bytes it decompresses to */
	uint64_t first_ts;	/* lowest and highest hdr.ts of its records */
	uint64_t last_ts;
	uint32_t nrec;		/* records in it */
};

/*
 * Checks that chunk[0..len) is one whole data chunk as a writer produced it
 * (magic, header crc, kind, sizes, the frame filling the rest exactly) and
 * fills *c.  For chunks handed around in memory (a sink writer's, a ring's),
 * which are copied into files verbatim: a bad one must be refused before it
 * makes a file that reads as damaged.  0 or -EBADMSG.
 */
static inline int chunk_head__check(const void *chunk, size_t len, struct chunk_head *c)
{
	const uint8_t *h = chunk;

	if (!chunk || len < CHUNK_HDR || memcmp(h, chunk_magic, 4) ||
	    crc_of(h, 36) != get_u32(h + 36))
		return -EBADMSG;
	c->kind = get_u16(h + 4);
	c->csize = get_u32(h + 8);
	c->usize = get_u32(h + 12);
	c->first_ts = get_u64(h + 16);
	c->last_ts = get_u64(h + 24);
	c->nrec = get_u32(h + 32);
	if (c->kind != CHUNK_DATA || !c->csize || c->csize != len - CHUNK_HDR ||
	    c->usize > CHUNK_MAX || !c->nrec)
		return -EBADMSG;
	return 0;
}

#endif
