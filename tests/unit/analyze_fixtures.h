/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the unit tests of the core of `gtrace-bpf analyze`
 * (test_analyze.c, test_analyze_gpum.c): a run of analyze fed through a
 * decoder (from the scenarios of tests/fixtures/az_scenarios.h or record
 * by record), and lookups of its notes and findings.  Each test is one .c
 * file compiled alone, so everything here is static inline and each test
 * takes what it uses.
 */
#ifndef GTRACE_TEST_ANALYZE_FIXTURES_H
#define GTRACE_TEST_ANALYZE_FIXTURES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyze/analyze.h"
#include "decode/decode.h"
#include "format/trace_file.h"
#include "tests/fixtures/az_scenarios.h"

#define US 1000ull
#define MS 1000000ull

static inline void put_dec(void *ctx, const struct gt_hdr *rec)
{
	assert_int_equal(gt_decoder__feed(ctx, rec), 0);
}

struct run {
	struct analyze *a;
	struct gt_decoder *d;
	struct azs s;
	struct analyze_result *r;
};

/* run_begin for a trace whose header has options (NULL: the usual ones). */
static inline void run_begin_opts(struct run *x, const struct analyze_opts *o, bool gpu, bool launch_exit,
				  const char *options)
{
	static const struct analyze_opts none;
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = AZS_T0 - 1000,
		.options = options ? options : gpu ? "trace=cuda,sched cupti=merged" : "trace=cuda,sched",
	};

	memset(x, 0, sizeof(*x));
	x->a = analyze__new(o ? o : &none, &info, NULL);
	assert_non_null(x->a);
	x->d = gt_decoder__new(analyze__call, analyze__other, x->a);
	assert_non_null(x->d);
	gt_decoder__set_entry_cb(x->d, analyze__entry);
	analyze__set_decoder(x->a, x->d);
	azs_init(&x->s, put_dec, x->d, gpu, launch_exit);
}

static inline void run_begin(struct run *x, const struct analyze_opts *o, bool gpu, bool launch_exit)
{
	run_begin_opts(x, o, gpu, launch_exit, NULL);
}

static inline void run_end(struct run *x)
{
	assert_int_equal(gt_decoder__finish(x->d), 0);
	assert_int_equal(analyze__finish(x->a, x->s.t, &x->r), 0);
	assert_non_null(x->r);
}

static inline void run_free(struct run *x)
{
	analyze_result__free(x->r);
	gt_decoder__free(x->d);
	analyze__free(x->a);
}

/* A scenario of az_scenarios.h, analyzed. */
static inline void run_scenario(struct run *x, const char *name, bool gpu)
{
	run_begin(x, NULL, gpu, false);
	assert_true(azs_run(&x->s, name));
	run_end(x);
	assert_int_equal(x->r->nscopes, 1);
}

/* The note of r that is text, NULL when there is none. */
static inline const char *note(const struct analyze_result *r, const char *text)
{
	for (int i = 0; r->notes[i]; i++)
		if (!strcmp(r->notes[i], text))
			return r->notes[i];
	return NULL;
}

/* The findings' ids, sorted, comma-separated. */
static inline const char *ids(const struct az_scope *s)
{
	static char buf[512];
	const char *v[AZ_RULE__COUNT];
	size_t n = 0, len = 0;

	for (size_t i = 0; i < s->nfindings && n < AZ_RULE__COUNT; i++)
		v[n++] = s->findings[i].id;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(v[j], v[i]) < 0) {
				const char *t = v[i];

				v[i] = v[j];
				v[j] = t;
			}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", v[i]);
	return buf;
}

static inline const struct az_finding *finding(const struct az_scope *s, const char *id)
{
	for (size_t i = 0; i < s->nfindings; i++)
		if (!strcmp(s->findings[i].id, id))
			return &s->findings[i];
	fail_msg("no finding %s (have %s)", id, ids(s));
	return NULL;
}

#endif /* GTRACE_TEST_ANALYZE_FIXTURES_H */
