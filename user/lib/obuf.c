// SPDX-License-Identifier: MIT
/*
 * The output buffer of the text outputs and its JSON and CSV string
 * writers (obuf.h says why it exists).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/obuf.h"
#include "lib/term_text.h"

#define ESC_CHUNK 1024		/* string bytes escaped per room check */
_Static_assert(ESC_CHUNK * 6 + 16 <= OBUF_ROOM_MAX, "an escaped chunk must fit obuf__room");

int obuf__init(struct obuf *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->b = malloc(OBUF_CAP);
	if (!o->b)
		return -ENOMEM;
	o->f = f;
	return 0;
}

int obuf__flush(struct obuf *o)
{
	if (o->len && !o->err) {
		int saved = errno;

		/* a short fwrite need not set errno: a stale one must not be
		 * taken; a write that went through leaves errno as it was (a
		 * caller writing to the same stream reads it after its own) */
		errno = 0;
		if (fwrite(o->b, 1, o->len, o->f) != o->len)
			o->err = errno ? -errno : -EIO;
		else
			errno = saved;
	}
	o->len = 0;
	return o->err;
}

void obuf__mem_long(struct obuf *o, const char *s, size_t n)
{
	/* what is buffered goes first, then s straight to the file: no copy
	 * and no buffer of s's size */
	int saved;

	if (obuf__flush(o))
		return;
	saved = errno;
	errno = 0;
	if (fwrite(s, 1, n, o->f) != n)
		o->err = errno ? -errno : -EIO;
	else
		errno = saved;
}

void obuf__free(struct obuf *o)
{
	free(o->b);
	o->b = NULL;
}

size_t obuf__utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	/* the second byte rules out overlong forms, surrogates and > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Copies the run of bytes from s[*i] on (up to end) that plain lets
 * through as they are, and moves *i past it: names are mostly plain, so
 * runs are copied at once rather than byte by byte. Returns the end of the
 * copy at p. */
static char *copy_plain(char *p, const unsigned char *s, size_t *i, size_t end, const bool plain[256])
{
	size_t j = *i + 1;

	while (j < end && plain[s[j]])
		j++;
	memcpy(p, s + *i, j - *i);
	p += j - *i;
	*i = j;
	return p;
}

/* Bytes that JSON lets through as they are: printable ASCII but the quote and backslash. */
static const bool json_plain[256] = {
	[' '] = 1, ['!'] = 1, ['#' ... '['] = 1, [']' ... '~'] = 1,
};

void obuf__json_strn(struct obuf *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	OBUF_LIT(o, "\"");
	while (i < n) {
		size_t end = n - i > ESC_CHUNK ? i + ESC_CHUNK : n;
		char *p = obuf__room(o, (end - i) * 6 + 8), *p0 = p;

		while (i < end) {
			unsigned char c = s[i];
			size_t l;

			if (json_plain[c]) {
				p = copy_plain(p, s, &i, end, json_plain);
				continue;
			}
			switch (c) {
			case '"':  *p++ = '\\'; *p++ = '"'; i++; continue;
			case '\\': *p++ = '\\'; *p++ = '\\'; i++; continue;
			case '\n': *p++ = '\\'; *p++ = 'n'; i++; continue;
			case '\r': *p++ = '\\'; *p++ = 'r'; i++; continue;
			case '\t': *p++ = '\\'; *p++ = 't'; i++; continue;
			default: break;
			}
			l = c >= 0x80 ? obuf__utf8_len(s + i, n - i) : 0;
			/* a C1 control (U+0080..U+009F, CSI among them) as its
			 * escape: JSON lines go to terminals too (dump) */
			if (l == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
				memcpy(p, "\\u00", 4);
				p[4] = hex[s[i + 1] >> 4];
				p[5] = hex[s[i + 1] & 0xf];
				p += 6;
				i += 2;
				continue;
			}
			if (l) {
				/* may run past end by up to 3 bytes: the +8 covers it */
				memcpy(p, s + i, l);
				p += l;
				i += l;
				continue;
			}
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 0xf];
			p += 6;
			i++;
		}
		o->len += (size_t)(p - p0);
	}
	OBUF_LIT(o, "\"");
}

/* Bytes a CSV cell takes as they are: printable ASCII but the quote (and
 * the backslash, which is one itself: term_text__class's rule). */
static const bool csv_plain[256] = {
	[' ' ... '!'] = 1, ['#' ... '~'] = 1,
};

/* Whether s[0..n) is a number as a spreadsheet reads one (a sign, digits,
 * a fraction, an exponent): not a formula, even with its sign. */
static bool csv_number(const unsigned char *s, size_t n)
{
	size_t i = 0, d = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		d++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			d++;
	if (d && i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;

		if (++i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			e++;
		if (!e)
			return false;
	}
	return d && i == n;
}

void obuf__csv_strn(struct obuf *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	/* a formula (or what starts one) is text, not a formula: a leading
	 * apostrophe inside a quoted cell, as spreadsheet guidance has it */
	bool neutral = n && memchr("=+-@\t\r", s[0], 6) && !csv_number(s, n);
	/* spaces at either end are the cell's: some readers trim them unquoted */
	bool quote = neutral || (n && (s[0] == ' ' || s[n - 1] == ' '));
	size_t i = 0;

	for (size_t k = 0; k < n && !quote; k++)
		quote = s[k] == ',' || s[k] == '"';
	if (quote)
		OBUF_LIT(o, "\"");
	if (neutral)
		OBUF_LIT(o, "'");
	while (i < n) {
		size_t end = n - i > ESC_CHUNK ? i + ESC_CHUNK : n;
		/* worst case: every byte \xHH; a sequence may run 3 bytes past end */
		char *p = obuf__room(o, (end - i) * 4 + 16), *p0 = p;

		while (i < end) {
			unsigned char c = s[i];
			size_t l;
			char e;

			if (csv_plain[c]) {
				p = copy_plain(p, s, &i, end, csv_plain);
				continue;
			}
			if (c == '"') {
				*p++ = '"';
				*p++ = '"';
				i++;
				continue;
			}
			/* control characters and bytes that are not UTF-8 never
			 * reach a terminal or a spreadsheet raw: written out as
			 * the tables show them */
			e = term_text__class(s, n, i, &l);
			if (!e) {
				memcpy(p, s + i, l);
				p += l;
				i += l;
				continue;
			}
			for (size_t k = 0; k < l; k++, i++) {
				*p++ = '\\';
				*p++ = e;
				if (e == 'x') {
					*p++ = hex[s[i] >> 4];
					*p++ = hex[s[i] & 0xf];
				}
			}
		}
		o->len += (size_t)(p - p0);
	}
	if (quote)
		OBUF_LIT(o, "\"");
}
