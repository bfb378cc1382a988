// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "lib/demangle.h"

static void copy_trunc(char *buf, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

char *gt_demangle__dup(const char *mangled)
{
	/*
	 * Only Itanium names are handed to libiberty: with DMGL_TYPES it would
	 * also "demangle" plain identifiers that happen to spell a type
	 * encoding (a kernel named "i" would become "int").
	 */
	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	return cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
}

const char *gt_demangle(const char *mangled, char *buf, size_t len)
{
	char *dm;

	if (!buf || len == 0)
		return buf;
	if (!mangled) {
		buf[0] = '\0';
		return buf;
	}
	dm = gt_demangle__dup(mangled);
	copy_trunc(buf, len, dm ? dm : mangled);
	free(dm);
	return buf;
}

static bool symbol_char(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '$' || ch == '.';
}

bool gt_symbol_name_valid(const char *s, size_t maxlen)
{
	size_t n;

	if (!s || maxlen == 0)
		return false;
	if (maxlen > GT_SYMBOL_NAME_MAX)
		maxlen = GT_SYMBOL_NAME_MAX;
	/* No NUL within maxlen: the string ran off what was read. */
	n = strnlen(s, maxlen);
	if (n == 0 || n == maxlen)
		return false;
	/*
	 * A stale pointer read as a name mostly yields bytes that fail this:
	 * symbols never start with a digit and use no spaces or punctuation
	 * beyond '_', '$' and '.' (clone suffixes such as ".cold").
	 */
	if (s[0] >= '0' && s[0] <= '9')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!symbol_char((unsigned char)s[i]))
			return false;
	return true;
}
