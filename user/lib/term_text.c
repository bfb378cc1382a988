// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/obuf.h"
#include "lib/term_text.h"

char term_text__class(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	unsigned char c = s[i];

	*len = 1;
	switch (c) {
	case '\t': return 't';
	case '\n': return 'n';
	case '\r': return 'r';
	}
	if (c < 0x20 || c == 0x7f)
		return 'x';
	if (c < 0x80)
		return 0;
	*len = obuf__utf8_len(s + i, n - i);
	if (!*len) {
		*len = 1;
		return 'x';
	}
	/* U+0080..U+009F: C1 controls, CSI (U+009B) among them */
	if (c == 0xc2 && s[i + 1] < 0xa0)
		return 'x';
	return 0;
}

size_t term_text__cut(const char *str, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	if (n <= max)
		return n;
	while (i < max) {
		l = s[i] >= 0x80 ? obuf__utf8_len(s + i, n - i) : 1;
		if (!l)
			l = 1;	/* a byte that is not UTF-8 is one on its own */
		if (i + l > max)
			break;
		i += l;
	}
	return i;
}

bool term_text__needs_escape(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i, len;

	for (i = 0; i < n; i += len)
		if (term_text__class(s, n, i, &len))
			return true;
	return false;
}

char *term_text__escape(const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i, k, len, o = 0;
	char *out, e;

	/* worst case: every byte as \xHH */
	if (n > (((size_t)-1) - 1) / 4)
		return NULL;
	out = malloc(4 * n + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i += len) {
		e = term_text__class(s, n, i, &len);
		if (!e) {
			memcpy(out + o, s + i, len);
			o += len;
			continue;
		}
		for (k = 0; k < len; k++) {
			out[o++] = '\\';
			out[o++] = e;
			if (e == 'x') {
				out[o++] = hex[s[i + k] >> 4];
				out[o++] = hex[s[i + k] & 15];
			}
		}
	}
	out[o] = 0;
	return out;
}
