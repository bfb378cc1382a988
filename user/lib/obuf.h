/* SPDX-License-Identifier: MIT */
/*
 * The output buffer the text outputs (dump, JSON, CSV, stats) build their
 * lines in, with JSON and CSV string writers that turn whatever bytes the
 * traced programs passed into valid output.
 *
 * It exists because these outputs run to millions of lines: lines are built
 * with hand-written number and string formatting in one big buffer; stdio
 * per field would cost more than the decoding.
 */
#ifndef GTRACE_OBUF_H
#define GTRACE_OBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OBUF_CAP (256 * 1024)	/* output written in pieces of about this */
/* The most obuf__room gives at once: what one field or one escaped chunk
 * of a string takes (the string writers escape in pieces of 1 KiB), far
 * under OBUF_CAP.  Anything longer goes through obuf__mem, which takes any
 * length. */
#define OBUF_ROOM_MAX (16 * 1024)

struct obuf {
	char *b;		/* OBUF_CAP bytes */
	size_t len;		/* bytes waiting to be written */
	FILE *f;		/* where they go */
	int err;		/* first write error, negative errno; later writes are dropped */
};

/* Returns 0 or -ENOMEM. */
int obuf__init(struct obuf *o, FILE *f);
/* Writes what is buffered. Returns 0 or the first write error. */
int obuf__flush(struct obuf *o);
void obuf__free(struct obuf *o);

/* Makes room for n bytes (n <= OBUF_ROOM_MAX, a bound on one field, not on
 * a document) and returns where they go. */
static inline char *obuf__room(struct obuf *o, size_t n)
{
	if (OBUF_CAP - o->len < n)
		obuf__flush(o);
	return o->b + o->len;
}

/* n bytes of s, of any length: what does not fit the buffer is written
 * through (a document of another command embedded whole can be many MB). */
void obuf__mem_long(struct obuf *o, const char *s, size_t n);

static inline void obuf__mem(struct obuf *o, const char *s, size_t n)
{
	if (n > OBUF_ROOM_MAX) {
		obuf__mem_long(o, s, n);
		return;
	}
	memcpy(obuf__room(o, n), s, n);
	o->len += n;
}

/* Literal strings only: the length is known at compile time. */
#define OBUF_LIT(o, s) obuf__mem((o), "" s, sizeof(s) - 1)	/* s a literal: "" s fails otherwise */

/* Decimal digits of v at p (at most 20); returns the end. For writers that
 * fill a line through a pointer of their own. */
static inline char *obuf__fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static inline void obuf__u64(struct obuf *o, uint64_t v)
{
	char *p = obuf__room(o, 20);

	o->len += (size_t)(obuf__fmt_u64(p, v) - p);
}

static inline void obuf__i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		OBUF_LIT(o, "-");
		obuf__u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		obuf__u64(o, (uint64_t)v);
	}
}

/* A JSON string (quotes included) of n bytes of s.  Bytes that are not
 * UTF-8 come out as \u00XX (their Latin-1 reading) so that the output is
 * valid JSON whatever the traced programs passed; control characters,
 * C1 (U+0080..U+009F) among them, as their \u escapes, so that none reaches
 * a terminal raw. */
void obuf__json_strn(struct obuf *o, const char *s, size_t n);
/* Length of a valid UTF-8 sequence at s (n bytes left), 0 when not one. */
size_t obuf__utf8_len(const unsigned char *s, size_t n);

static inline void obuf__json_str(struct obuf *o, const char *s)
{
	obuf__json_strn(o, s, strlen(s));
}

/* A CSV cell of text (RFC 4180): quoted, with quotes doubled, when it
 * holds a comma or a quote.  Control characters (C0, DEL, C1) and bytes
 * that are not UTF-8 are written out as the tables show them (\t, \n, \r,
 * \xHH: term_text__class), so that no line break or escape sequence comes
 * out raw; a cell that starts with = + - @ (or a tab or CR), a formula to a
 * spreadsheet, is quoted with a leading apostrophe, unless it is a plain
 * number ("-12", "+1.5e3").  Numbers a writer formats itself do not come
 * through here. */
void obuf__csv_strn(struct obuf *o, const char *s, size_t n);

#endif
