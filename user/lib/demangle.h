/* SPDX-License-Identifier: MIT */
/*
 * C++ symbol names: demangling through libiberty, and the check that a
 * string read from a driver's memory looks like a symbol at all.  A leaf:
 * the kernel names of the decoder and the recorder's recovered names both
 * come here, so that they demangle and reject alike.
 */
#ifndef GTRACE_DEMANGLE_H
#define GTRACE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest symbol name accepted, NUL included: the longest string a trace
 * record carries (GT_STR_MAX, asserted where both are known). */
#define GT_SYMBOL_NAME_MAX 4096

/* Demangles an Itanium C++ name into buf; copies it unchanged when it is not
 * mangled or cannot be demangled. Returns buf. */
const char *gt_demangle(const char *mangled, char *buf, size_t len);
/* The demangled form of an Itanium name in a new malloc'd string; NULL when
 * the name is not an Itanium name, does not demangle or memory ran out (the
 * caller then uses the name as it is). */
char *gt_demangle__dup(const char *mangled);
/* True when s looks like a symbol name a driver would store: printable,
 * identifier characters and the few a mangled name uses, 1..4095 bytes. */
bool gt_symbol_name_valid(const char *s, size_t maxlen);

#endif
