// SPDX-License-Identifier: MIT
/*
 * The report's page writer and timeline (user/report/report_page.c,
 * report_timeline.c): every marker of the template filled, the data unable
 * to end its script element, the budget of events kept exactly, the bins
 * that stand for the others, GPU utilization as the union of kernels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "report/report_page.h"
#include "report/report_timeline.h"
#include "decode/decode.h"
#include "format/api.h"

/* The page of data, in memory. */
static char *page(const char *title, const char *data, size_t *len, int *rc)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	*rc = report_page__write(f, title, data, strlen(data));
	fclose(f);
	return buf;
}

static void test_every_marker_filled(void **state)
{
	size_t len;
	int rc;
	char *p = page("t", "{}", &len, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_null(strstr(p, "<!--@gt:"));
	/* uPlot and its licence, the page's own script and style are all in */
	assert_non_null(strstr(p, "var uPlot="));
	assert_non_null(strstr(p, "Permission is hereby granted"));
	assert_non_null(strstr(p, "JSON.parse(document.getElementById('gt-data').textContent)"));
	assert_non_null(strstr(p, "--bg: #ffffff"));
	assert_non_null(strstr(p, "Content-Security-Policy\" content=\"default-src 'none'"));
	assert_non_null(strstr(p, "<script type=\"application/json\" id=\"gt-data\">{}</script>"));
	free(p);
}

static void test_data_cannot_end_its_script(void **state)
{
	const char *data = "{\"k\":\"</script><script>alert(1)</script><!--\"}";
	size_t len;
	int rc;
	char *p = page("a <b> & \"c\"", data, &len, &rc), *at;

	(void)state;
	assert_int_equal(rc, 0);
	at = strstr(p, "id=\"gt-data\">");
	assert_non_null(at);
	assert_non_null(strstr(at, "{\"k\":\"\\u003c/script>\\u003cscript>alert(1)\\u003c/script>\\u003c!--\"}</script>"));
	assert_null(strstr(p, "alert(1)</script>"));
	assert_non_null(strstr(p, "<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"));
	free(p);
}

static int no_call(void *ctx, const struct gt_callrec *c)
{
	(void)ctx, (void)c;
	return 0;
}

/* The timeline's JSON, in memory. */
static char *timeline_json(struct report_timeline *tl)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct obuf o;

	assert_non_null(f);
	assert_int_equal(obuf__init(&o, f), 0);
	report_timeline__write_json(tl, &o);
	assert_int_equal(obuf__flush(&o), 0);
	obuf__free(&o);
	fclose(f);
	return buf;
}

static uint64_t member(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	assert_non_null(p);
	return strtoull(p + strlen(k), NULL, 10);
}

static struct gt_callrec call(uint64_t ts, uint64_t dur)
{
	return (struct gt_callrec){ .ts = ts, .dur = dur, .pid = 10, .tid = 11,
				    .api = GT_API_cuStreamSynchronize, .type = GT_T_SYNC,
				    .has_exit = true };
}

/* 10000 calls of 1 to 10000 ns under a budget of 1000: at most 1000 kept,
 * all of them longer than every one left out, and every call counted. */
static void test_budget_keeps_the_longest(void **state)
{
	struct gt_decoder *d = gt_decoder__new(no_call, NULL, NULL);
	struct report_timeline *tl = report_timeline__new(1000000, 1000, d);
	uint64_t t = 1000000;
	char *j;

	(void)state;
	assert_non_null(tl);
	for (uint64_t i = 1; i <= 10000; i++) {
		/* durations in a scrambled order */
		uint64_t dur = (i * 7919) % 10000 + 1;
		struct gt_callrec c = call(t, dur);

		assert_int_equal(report_timeline__call(tl, &c), 0);
		t += dur + 100;
	}
	assert_int_equal(report_timeline__finish(tl, t), 0);
	assert_int_equal(report_timeline__events(tl), 10000);
	assert_true(report_timeline__kept(tl) <= 1000);
	/* buckets an eighth of a power of two wide: 9216 to 10000 are 785
	 * calls, 8192 and up 1809, too many */
	assert_int_equal(report_timeline__kept(tl), 785);
	j = timeline_json(tl);
	assert_int_equal(member(j, "min_kept_ns"), 9216);
	assert_int_equal(member(j, "omitted"), 9215);
	assert_int_equal(member(j, "events"), 10000);
	free(j);
	report_timeline__free(tl);
	gt_decoder__free(d);
}

/* The bins hold every call's time, kept or not: their busy ns add up to
 * the calls' durations. */
static void test_bins_hold_every_event(void **state)
{
	struct gt_decoder *d = gt_decoder__new(no_call, NULL, NULL);
	struct report_timeline *tl = report_timeline__new(0, 10, d);
	uint64_t t = 500, sum = 0, busy = 0;
	const char *p;
	char *j;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		struct gt_callrec c = call(t, 1000 + (uint64_t)i % 97 * 50);

		assert_int_equal(report_timeline__call(tl, &c), 0);
		sum += c.dur;
		t += c.dur * 3;
	}
	assert_int_equal(report_timeline__finish(tl, t), 0);
	j = timeline_json(tl);
	/* the bins' width doubled until the trace fit them */
	assert_true(member(j, "bin_ns") * TL_BINS >= t);
	p = strstr(j, "\"bins\":[");
	assert_non_null(p);
	p += strlen("\"bins\":[");
	for (int k = 0; *p != ']'; k++) {
		char *end;
		uint64_t v = strtoull(p, &end, 10);

		if (k % 3 == 1)
			busy += v;
		p = *end == ',' ? end + 1 : end;
	}
	assert_int_equal(busy, sum);
	free(j);
	report_timeline__free(tl);
	gt_decoder__free(d);
}

/* Two overlapping kernels on a device and one on another: utilization is
 * the union per device. */
static void test_utilization_is_the_union(void **state)
{
	struct gt_decoder *d = gt_decoder__new(no_call, NULL, NULL);
	struct report_timeline *tl = report_timeline__new(0, 0, d);
	_Alignas(8) unsigned char buf[sizeof(struct gt_gpu_kernel) + 8];
	struct gt_gpu_kernel *k = (void *)buf;
	static const struct { uint64_t ts, dur; uint32_t dev, stream; } ks[] = {
		{ 1000, 3000, 0, 7 }, { 2000, 4000, 0, 8 }, { 1500, 100, 1, 7 },
	};
	const char *p;
	char *j;

	(void)state;
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		memset(buf, 0, sizeof(buf));
		k->hdr = (struct gt_hdr){ .ts = ks[i].ts, .pid = 10, .type = GT_REC_GPU_KERNEL,
					  .size = sizeof(buf) };
		k->dur = ks[i].dur;
		k->device = ks[i].dev;
		k->stream = ks[i].stream;
		k->len = 2;
		memcpy(k->name, "k", 2);
		assert_int_equal(report_timeline__other(tl, &k->hdr), 0);
	}
	assert_int_equal(report_timeline__finish(tl, 10000), 0);
	assert_int_equal(report_timeline__gpu_records(tl), 3);
	j = timeline_json(tl);
	for (int dev = 0; dev < 2; dev++) {
		char key[64];
		uint64_t busy = 0;

		snprintf(key, sizeof(key), "{\"device\":%d,", dev);
		p = strstr(j, key);
		assert_non_null(p);
		p = strstr(p, "\"busy\":[") + strlen("\"busy\":[");
		for (int n = 0; *p != ']'; n++) {
			char *end;
			uint64_t v = strtoull(p, &end, 10);

			if (n % 2)
				busy += v;
			p = *end == ',' ? end + 1 : end;
		}
		/* device 0: [1000, 6000) */
		assert_int_equal(busy, dev ? 100 : 5000);
	}
	free(j);
	report_timeline__free(tl);
	gt_decoder__free(d);
}

/* A device whose only kernel took no time has no busy interval: the page shows
 * its lane empty (the fuzzer's case: sorting its empty list was undefined). */
static void test_kernel_without_duration(void **state)
{
	struct gt_decoder *d = gt_decoder__new(no_call, NULL, NULL);
	struct report_timeline *tl = report_timeline__new(0, 0, d);
	_Alignas(8) unsigned char buf[sizeof(struct gt_gpu_kernel) + 8];
	struct gt_gpu_kernel *k = (void *)buf;
	char *j;

	(void)state;
	memset(buf, 0, sizeof(buf));
	k->hdr = (struct gt_hdr){ .ts = 500, .pid = 10, .type = GT_REC_GPU_KERNEL,
				  .size = sizeof(buf) };
	k->device = 3;
	k->len = 2;
	memcpy(k->name, "k", 2);
	assert_int_equal(report_timeline__other(tl, &k->hdr), 0);
	assert_int_equal(report_timeline__finish(tl, 1000), 0);
	assert_int_equal(report_timeline__gpu_records(tl), 1);
	j = timeline_json(tl);
	assert_non_null(strstr(j, "{\"device\":3,"));
	assert_non_null(strstr(strstr(j, "{\"device\":3,"), "\"busy\":[]"));
	free(j);
	report_timeline__free(tl);
	gt_decoder__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_marker_filled),
		cmocka_unit_test(test_data_cannot_end_its_script),
		cmocka_unit_test(test_budget_keeps_the_longest),
		cmocka_unit_test(test_bins_hold_every_event),
		cmocka_unit_test(test_utilization_is_the_union),
		cmocka_unit_test(test_kernel_without_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
