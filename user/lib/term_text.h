/* SPDX-License-Identifier: MIT */
/*
 * Text from traced programs (command lines, kernel and host names) made safe
 * for a terminal: a program can name itself with escape sequences that move
 * the cursor, rewrite the title or hide lines of a table printed as root.
 */
#ifndef GTRACE_TERM_TEXT_H
#define GTRACE_TERM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* How the character at s[i] (s holds n bytes) prints: 0 as it is (its
 * UTF-8 sequence is *len bytes), else the letter of its escape: 't', 'n',
 * 'r', or 'x' for \xHH of each of its *len bytes (C0, DEL, a C1 control as
 * its two UTF-8 bytes, a byte that is not UTF-8).  The one rule of every
 * text a person reads: tables, Markdown, CSV cells. */
char term_text__class(const unsigned char *s, size_t n, size_t i, size_t *len);

/* Where to cut s (n bytes) to keep at most max bytes without splitting a
 * character: the longest prefix that does not end inside a valid UTF-8
 * sequence (n when n <= max). */
size_t term_text__cut(const char *s, size_t n, size_t max);

/* Whether s would print as something else than its characters: a control
 * character (C0, DEL, C1) or a byte that is not UTF-8. */
bool term_text__needs_escape(const char *s);

/*
 * s with those written out: \t \n \r, and \xHH for the other control
 * characters and for bytes that are not UTF-8 (a C1 control, U+0080 to
 * U+009F, as the \xHH of its two UTF-8 bytes); valid UTF-8 text is kept.
 * A backslash stays one: a name that spells "\x1b" can only look like an
 * escaped one, and command lines with backslashes stay readable.
 * Returns a malloc'd string, NULL when out of memory.
 */
char *term_text__escape(const char *s);

#endif
