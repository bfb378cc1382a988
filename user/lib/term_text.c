// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/obuf.h"
#include "lib/term_text.h"

/* How the byte at s[i] prints: 0 as it is (its UTF-8 sequence is *len
 * bytes), else the character of its short escape ('x' for \xHH of *len
 * bytes). */
static char classify(const unsigned char *s, size_t n, size_t i, size_t *len)
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

bool term_text__needs_escape(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i, len;

	for (i = 0; i < n; i += len)
		if (classify(s, n, i, &len))
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
		e = classify(s, n, i, &len);
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
