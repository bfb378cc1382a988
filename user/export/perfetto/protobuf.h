/* SPDX-License-Identifier: MIT */
/*
 * A small protocol-buffers encoder (wire format only, no schema, no
 * library): varints, fixed64, length-delimited fields and nested messages
 * written into one growable buffer, for the Perfetto exporter.
 *
 * The writers are static inline because an export writes tens of fields per
 * event: each one checks room once and stores bytes, nothing else.  After a
 * failed allocation the buffer keeps err set and ignores further writes, so
 * callers check err once per packet instead of after every field.
 */
#ifndef GTRACE_PROTOBUF_H
#define GTRACE_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum pb_wire {
	PB_VARINT = 0,		/* int32/64, uint32/64, bool, enum */
	PB_I64 = 1,		/* fixed64, sfixed64, double */
	PB_LEN = 2,		/* string, bytes, nested message, packed repeated */
	PB_I32 = 5,		/* fixed32, sfixed32, float */
};

#define PB_VARINT_MAX 10	/* bytes of the longest varint (64 bits) */
#define PB_TAG_MAX 5		/* bytes of the longest tag (29-bit field number) */

struct pb_buf {
	uint8_t *b;		/* cap bytes */
	size_t len;		/* bytes written */
	size_t cap;		/* bytes allocated */
	int err;		/* 0, or -ENOMEM once growing failed (writes are dropped then) */
};

/* Allocates cap bytes (at least 64).  Returns 0 or -ENOMEM. */
int pb_buf__init(struct pb_buf *p, size_t cap);
void pb_buf__free(struct pb_buf *p);
/* Makes room for n more bytes; false (err set) when out of memory.  The
 * slow path of pb_buf__room. */
bool pb_buf__grow(struct pb_buf *p, size_t n);
/* The slow path of pb_buf__end: a body of 128 bytes or more. */
void pb_buf__end_long(struct pb_buf *p, size_t mark);

static inline bool pb_buf__room(struct pb_buf *p, size_t n)
{
	if (__builtin_expect(p->cap - p->len >= n && !p->err, 1))
		return true;
	return pb_buf__grow(p, n);
}

/* Stores v as a varint at d; returns the byte after it.  d must have
 * PB_VARINT_MAX bytes of room. */
static inline uint8_t *pb__put_varint(uint8_t *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*d++ = (uint8_t)v;
	return d;
}

/* Bytes the varint of v takes. */
static inline size_t pb__varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *pb__put_tag(uint8_t *d, uint32_t field, enum pb_wire w)
{
	return pb__put_varint(d, (uint64_t)field << 3 | w);
}

/* A varint field: uint32/64, bool, enum, and int32/64 that are not negative
 * (a negative int takes 10 bytes: use pb_buf__int for those). */
static inline void pb_buf__varint(struct pb_buf *p, uint32_t field, uint64_t v)
{
	uint8_t *d;

	if (!pb_buf__room(p, PB_TAG_MAX + PB_VARINT_MAX))
		return;
	d = pb__put_tag(p->b + p->len, field, PB_VARINT);
	d = pb__put_varint(d, v);
	p->len = (size_t)(d - p->b);
}

/* int32 / int64: two's complement, sign-extended to 64 bits as the wire
 * format wants (so -1 is ten bytes, also for int32). */
static inline void pb_buf__int(struct pb_buf *p, uint32_t field, int64_t v)
{
	pb_buf__varint(p, field, (uint64_t)v);
}

static inline void pb_buf__fixed64(struct pb_buf *p, uint32_t field, uint64_t v)
{
	uint8_t *d;

	if (!pb_buf__room(p, PB_TAG_MAX + 8))
		return;
	d = pb__put_tag(p->b + p->len, field, PB_I64);
	/* little-endian on the wire, as this host is (FORMAT.md) */
	memcpy(d, &v, 8);
	p->len = (size_t)(d + 8 - p->b);
}

static inline void pb_buf__bytes(struct pb_buf *p, uint32_t field, const void *s, size_t n)
{
	uint8_t *d;

	if (!pb_buf__room(p, PB_TAG_MAX + PB_VARINT_MAX + n))
		return;
	d = pb__put_tag(p->b + p->len, field, PB_LEN);
	d = pb__put_varint(d, n);
	memcpy(d, s, n);
	p->len = (size_t)(d + n - p->b);
}

static inline void pb_buf__string(struct pb_buf *p, uint32_t field, const char *s)
{
	pb_buf__bytes(p, field, s, strlen(s));
}

/* Begins a nested message (or any length-delimited field written piece by
 * piece): writes the tag and one byte for the length.  Returns the mark to
 * pass to pb_buf__end.  Marks are offsets, so the buffer may grow between
 * the two calls; messages nest by ending them in reverse order. */
static inline size_t pb_buf__begin(struct pb_buf *p, uint32_t field)
{
	uint8_t *d;

	if (!pb_buf__room(p, PB_TAG_MAX + 1))
		return p->len;
	d = pb__put_tag(p->b + p->len, field, PB_LEN);
	p->len = (size_t)(d + 1 - p->b);
	return p->len - 1;
}

/* Ends the nested message begun at mark (see pb_buf__begin): writes its
 * length, moving the body up when the length needs more than one byte. */
static inline void pb_buf__end(struct pb_buf *p, size_t mark)
{
	size_t body = p->len - mark - 1;

	/* a begin that found no room returned len: nothing to fix (err is set) */
	if (__builtin_expect(body < 0x80 && mark < p->len && !p->err, 1))
		p->b[mark] = (uint8_t)body;
	else
		pb_buf__end_long(p, mark);
}

#endif
