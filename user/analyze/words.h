/* SPDX-License-Identifier: MIT */
/*
 * Internal to analyze's findings and answers (analyze_rules.c,
 * analyze_answers.c): numbers in words, the launch cost, the answers.
 */
#ifndef GTRACE_ANALYZE_WORDS_H
#define GTRACE_ANALYZE_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct az_store;
struct az_scope;
struct az_work;

/* "12.1 s", "4.80 us", "230 ms", "850 ns": three significant digits. */
const char *az__dur_str(char *buf, size_t len, uint64_t ns);
/* "23 %", "4.5 %", "0.3 %" of part in whole. */
const char *az__pct_str(char *buf, size_t len, uint64_t part, uint64_t whole);
/* "8,985" */
const char *az__num_str(char *buf, size_t len, uint64_t v);

#define D(ns) az__dur_str((char[24]){ 0 }, 24, (ns))
#define P(part, whole) az__pct_str((char[16]){ 0 }, 16, (part), (whole))
#define N(v) az__num_str((char[32]){ 0 }, 32, (v))

/* The launch cost on the CPU: the median launch call when launches have
 * exits (*is_call), else the median interval between launches. */
uint64_t az__launch_cost(const struct az_work *w, bool *is_call);

/* The three answers of s into s->answer, kept in st. Returns 0 or -ENOMEM. */
int az_answers__write(struct az_store *st, struct az_scope *s);

#endif
