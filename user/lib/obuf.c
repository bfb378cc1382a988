// SPDX-License-Identifier: MIT
/*
 * The output buffer of the text outputs and its JSON and CSV string
 * writers (obuf.h says why it exists).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/obuf.h"

#define ESC_CHUNK 1024		/* string bytes escaped per room check */

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
		/* a short fwrite need not set errno: a stale one must not be taken */
		errno = 0;
		if (fwrite(o->b, 1, o->len, o->f) != o->len)
			o->err = errno ? -errno : -EIO;
	}
	o->len = 0;
	return o->err;
}

void obuf__mem_long(struct obuf *o, const char *s, size_t n)
{
	/* what is buffered goes first, then s straight to the file: no copy
	 * and no buffer of s's size */
	if (obuf__flush(o))
		return;
	errno = 0;
	if (fwrite(s, 1, n, o->f) != n)
		o->err = errno ? -errno : -EIO;
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

/* Bytes a CSV cell takes as they are, without quotes: ASCII but the
 * separator, the quote and line breaks. */
static const bool csv_plain[256] = {
	[0x01 ... '\t'] = 1, [0x0b ... 0x0c] = 1, [0x0e ... '!'] = 1, ['#' ... '+'] = 1,
	['-' ... 0x7f] = 1,
};

void obuf__csv_strn(struct obuf *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	bool quote = false;
	size_t i = 0;

	for (size_t k = 0; k < n && !quote; k++)
		quote = s[k] == ',' || s[k] == '"' || s[k] == '\n' || s[k] == '\r';
	if (quote)
		OBUF_LIT(o, "\"");
	while (i < n) {
		size_t end = n - i > ESC_CHUNK ? i + ESC_CHUNK : n;
		/* worst case: every byte doubled (a quote) or two UTF-8 bytes */
		char *p = obuf__room(o, (end - i) * 2 + 8), *p0 = p;

		while (i < end) {
			unsigned char c = s[i];
			size_t l;

			if (csv_plain[c]) {
				p = copy_plain(p, s, &i, end, csv_plain);
				continue;
			}
			if (c < 0x80) {
				/* , " \n \r: inside quotes, only the quote is doubled */
				if (c == '"')
					*p++ = '"';
				*p++ = (char)c;
				i++;
				continue;
			}
			l = obuf__utf8_len(s + i, n - i);
			if (l) {
				memcpy(p, s + i, l);
				p += l;
				i += l;
				continue;
			}
			*p++ = (char)(0xc0 | c >> 6);
			*p++ = (char)(0x80 | (c & 0x3f));
			i++;
		}
		o->len += (size_t)(p - p0);
	}
	if (quote)
		OBUF_LIT(o, "\"");
}
