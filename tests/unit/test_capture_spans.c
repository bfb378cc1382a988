// SPDX-License-Identifier: MIT
/*
 * Unit tests of capture control as readers see it: the capture mode of a
 * trace's header and the names of struct gt_capture's values
 * (user/format/capture.c), and the span list (user/decode/capture_spans.c):
 * ranges paired per process in order of start, refused ones, closes that
 * say exit or cut, spans open until the end, every kind of anomaly counted
 * and put in words, windows, and when the hot calls of light mode were
 * recorded (a range that opened before its hot probes were live).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "decode/capture_spans.h"
#include "format/capture.h"
#include "format/trace_file.h"
#include "test_util.h"

#define R GT_REC_RANGE
#define C GT_REC_CAPTURE

static struct capture_spans *spans_new(const char *options)
{
	struct gt_file_info info = { .version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 100,
				     .options = options };
	struct capture_spans *c = capture_spans__new(&info);

	assert_non_null(c);
	return c;
}

static struct gt_capture cap(uint16_t type, uint64_t ts, uint32_t pid, uint32_t kind,
			     uint32_t source, uint32_t index, uint32_t flags, uint64_t latency)
{
	struct gt_capture r = {
		.hdr = { .ts = ts, .pid = pid, .tid = pid ? pid + 1 : 0, .type = type,
			 .size = sizeof(r) },
		.kind = kind, .source = source, .index = index, .flags = flags,
		.latency_ns = latency,
	};

	return r;
}

static void feed(struct capture_spans *c, struct gt_capture r)
{
	assert_int_equal(capture_spans__feed(c, &r.hdr), 0);
}

/* A range of pid's: its open and, when end > start, its close. */
static void range(struct capture_spans *c, uint32_t pid, uint32_t index, uint64_t start,
		  uint64_t end, uint32_t close_flags)
{
	feed(c, cap(R, start, pid, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, index, 0, 0));
	if (end > start)
		feed(c, cap(R, end, pid, GT_CAP_RANGE_CLOSE, GT_CAPSRC_PROFILER, index, close_flags, 0));
}

static void window(struct capture_spans *c, uint32_t index, uint64_t start, uint64_t end)
{
	feed(c, cap(C, start, 0, GT_CAP_WINDOW_OPEN, GT_CAPSRC_WINDOW, index, 0, 3000));
	feed(c, cap(C, end, 0, GT_CAP_WINDOW_CLOSE, GT_CAPSRC_WINDOW, index, 0, 2000));
}

static void check_span(const struct capspan *s, enum capspan_kind kind, uint32_t number,
		       uint32_t pid, uint64_t start, uint64_t end, const char *state)
{
	assert_non_null(s);
	assert_int_equal(s->kind, kind);
	assert_int_equal(s->number, number);
	assert_int_equal(s->pid, pid);
	assert_int_equal(s->start_ts, start);
	assert_int_equal(s->end_ts, end);
	assert_string_equal(capspan__state_name(s), state);
}

/* ------------------------------------------------------------ format */

static void test_mode(void **state)
{
	struct gt_file_info info = { .options = "buffer=64M capture=light capture_range=cudaProfilerApi "
						"capture_range_end=repeat:3 light_window_ns=200000000 "
						"light_period_ns=5000000000" };
	struct gt_capture_mode m;

	(void)state;
	gt_capture_mode__from_info(&info, &m);
	assert_true(m.light);
	assert_int_equal(m.range, GT_CAPSRC_PROFILER);
	assert_true(m.repeat);
	assert_int_equal(m.repeat_max, 3);
	assert_int_equal(m.window_ns, 200000000);
	assert_int_equal(m.period_ns, 5000000000ull);

	info.options = "capture=full capture_range=nvtx capture_range_end=repeat";
	gt_capture_mode__from_info(&info, &m);
	assert_false(m.light);
	assert_int_equal(m.range, GT_CAPSRC_NVTX);
	assert_true(m.repeat);
	assert_int_equal(m.repeat_max, 0);

	/* a trace of a recorder without capture modes: full, no ranges */
	info.options = "buffer=64M sources=cuda,ioctl,sched";
	gt_capture_mode__from_info(&info, &m);
	assert_false(m.light);
	assert_int_equal(m.range, GT_CAPSRC_NONE);
	assert_false(m.repeat);
	gt_capture_mode__from_info(NULL, &m);
	assert_false(m.light);

	/* what this build does not know is not light, not a range, not repeat;
	 * window lengths are light mode's only */
	info.options = "capture=lightish capture_range=everything capture_range_end=repeatedly "
		       "light_window_ns=12";
	gt_capture_mode__from_info(&info, &m);
	assert_false(m.light);
	assert_int_equal(m.range, GT_CAPSRC_NONE);
	assert_false(m.repeat);
	assert_int_equal(m.window_ns, 0);
}

static void test_names(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(gt_capture_kind__name(GT_CAP_RANGE_OPEN), "range_open");
	assert_string_equal(gt_capture_kind__name(GT_CAP_RANGE_CLOSE), "range_close");
	assert_string_equal(gt_capture_kind__name(GT_CAP_WINDOW_OPEN), "window_open");
	assert_string_equal(gt_capture_kind__name(GT_CAP_WINDOW_CLOSE), "window_close");
	assert_string_equal(gt_capture_kind__name(GT_CAP_HOT_LIVE), "hot_live");
	assert_string_equal(gt_capture_kind__name(GT_CAP_HOT_OFF), "hot_off");
	assert_null(gt_capture_kind__name(0));
	assert_string_equal(gt_capture_kind__name(GT_CAP_LOOKUPS_OFF), "lookups_off");
	assert_null(gt_capture_kind__name(8));
	assert_string_equal(gt_capture_source__name(GT_CAPSRC_PROFILER), "cudaProfilerApi");
	assert_string_equal(gt_capture_source__name(GT_CAPSRC_NVTX), "nvtx");
	assert_string_equal(gt_capture_source__name(GT_CAPSRC_WINDOW), "window");
	assert_null(gt_capture_source__name(4));
	assert_string_equal(gt_capture_flags__text(GT_CAP_F_REFUSED | GT_CAP_F_EXIT | GT_CAP_F_CUT,
						   "|", buf, sizeof(buf)), "refused|exit|cut");
	assert_string_equal(gt_capture_flags__text(GT_CAP_F_CUT | 0x30, ",", buf, sizeof(buf)),
			    "cut,0x30");
	assert_string_equal(gt_capture_flags__text(0, "|", buf, sizeof(buf)), "");
	assert_string_equal(gt_ns__text(850, buf, sizeof(buf)), "850 ns");
	assert_string_equal(gt_ns__text(12345, buf, sizeof(buf)), "12.3 us");
	assert_string_equal(gt_ns__text(999999, buf, sizeof(buf)), "1.0 ms");
	assert_string_equal(gt_ns__text(2400000000ull, buf, sizeof(buf)), "2.4 s");
	assert_string_equal(gt_ns__text(999, buf, sizeof(buf)), "999 ns");
	/* cut to the room there is */
	assert_string_equal(gt_capture_flags__text(GT_CAP_F_REFUSED | GT_CAP_F_EXIT, "|", buf, 6),
			    "refus");
}

/* ------------------------------------------------------------ spans */

/* Ranges of two processes, paired per process, listed in order of start;
 * closes that say the process exited or the recording ended inside. */
static void test_pairing(void **state)
{
	struct capture_spans *c = spans_new("capture=full capture_range=cudaProfilerApi "
					    "capture_range_end=repeat");
	struct capture_totals t;

	(void)state;
	feed(c, cap(R, 1000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 1, 0, 0));
	/* pid 200 opens while pid 100's is open: one each, both open */
	feed(c, cap(R, 1500, 200, GT_CAP_RANGE_OPEN, GT_CAPSRC_NVTX, 2, 0, 0));
	feed(c, cap(R, 2000, 100, GT_CAP_RANGE_CLOSE, GT_CAPSRC_PROFILER, 1, 0, 0));
	feed(c, cap(R, 2600, 200, GT_CAP_RANGE_CLOSE, GT_CAPSRC_NVTX, 2, GT_CAP_F_EXIT, 0));
	range(c, 100, 3, 3000, 3500, GT_CAP_F_CUT);
	capture_spans__finish(c, 4000);

	assert_int_equal(capture_spans__count(c), 3);
	check_span(capture_spans__at(c, 0), CAPSPAN_RANGE, 1, 100, 1000, 2000, "closed");
	check_span(capture_spans__at(c, 1), CAPSPAN_RANGE, 2, 200, 1500, 2600, "exit");
	check_span(capture_spans__at(c, 2), CAPSPAN_RANGE, 3, 100, 3000, 3500, "cut");
	assert_null(capture_spans__at(c, 3));
	assert_int_equal(capture_spans__at(c, 0)->tid, 101);
	assert_string_equal(capspan__source_name(capture_spans__at(c, 0)), "cudaProfilerApi");
	assert_string_equal(capspan__source_name(capture_spans__at(c, 1)), "nvtx");
	assert_int_equal(capture_spans__at(c, 1)->flags, GT_CAP_F_EXIT);
	/* full capture: hot calls from the start, all the time */
	assert_int_equal(capture_spans__at(c, 1)->live_ts, 1500);
	assert_false(capture_spans__light(c));
	assert_int_equal(capture_spans__hot_ns(c, 1000, 1700), 700);
	assert_ptr_equal(capture_spans__find(c, CAPSPAN_RANGE, 3), capture_spans__at(c, 2));
	assert_null(capture_spans__find(c, CAPSPAN_WINDOW, 3));
	assert_null(capture_spans__find(c, CAPSPAN_RANGE, 4));
	capture_spans__totals(c, &t);
	assert_int_equal(t.ranges, 3);
	assert_int_equal(t.refused, 0);
	assert_int_equal(t.windows, 0);
	/* 1000-2600 (two overlapping ranges once) and 3000-3500 */
	assert_int_equal(t.range_ns, 2100);
	assert_int_equal(t.trace_ns, 3900);
	assert_int_equal(t.hot_ns, 3900);
	assert_int_equal(capture_spans__anomalies(c), 0);
	assert_true(capture_spans__any(c));
	capture_spans__free(c);
}

/* A refused range is a span of its own, nothing in it, no open state: a
 * close after it has nothing to close. */
static void test_refused(void **state)
{
	struct capture_spans *c = spans_new("capture_range=cudaProfilerApi capture_range_end=repeat:1");
	struct capture_totals t;
	char buf[128];

	(void)state;
	range(c, 100, 1, 1000, 2000, 0);
	feed(c, cap(R, 3000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 2, GT_CAP_F_REFUSED, 0));
	feed(c, cap(R, 3500, 100, GT_CAP_RANGE_CLOSE, GT_CAPSRC_PROFILER, 2, 0, 0));
	capture_spans__finish(c, 5000);
	assert_int_equal(capture_spans__count(c), 2);
	check_span(capture_spans__at(c, 1), CAPSPAN_RANGE, 2, 100, 3000, 3000, "refused");
	assert_int_equal(capspan__ns(capture_spans__at(c, 1)), 0);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_CLOSE_WITHOUT_OPEN), 1);
	assert_string_equal(capture_spans__anomalies_text(c, buf, sizeof(buf)),
			    "1 close without an open");
	capture_spans__totals(c, &t);
	assert_int_equal(t.ranges, 2);
	assert_int_equal(t.refused, 1);
	assert_int_equal(t.range_ns, 1000);
	capture_spans__free(c);
}

/* Open until the end: ends where the trace does, or at a later capture
 * record (the recorder's own close of another range). */
static void test_open_at_end(void **state)
{
	struct capture_spans *c = spans_new("capture_range=nvtx");

	(void)state;
	feed(c, cap(R, 1000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_NVTX, 1, 0, 0));
	range(c, 200, 2, 1200, 7000, GT_CAP_F_CUT);
	capture_spans__finish(c, 6000);
	check_span(capture_spans__at(c, 0), CAPSPAN_RANGE, 1, 100, 1000, 7000, "open_at_end");
	check_span(capture_spans__at(c, 1), CAPSPAN_RANGE, 2, 200, 1200, 7000, "cut");
	assert_int_equal(capture_spans__end_ts(c), 7000);
	assert_int_equal(capture_spans__start_ts(c), 100);
	capture_spans__free(c);
}

/* Every anomaly counted, put in words, and the spans kept visible. */
static void test_anomalies(void **state)
{
	struct capture_spans *c = spans_new("capture_range=cudaProfilerApi capture_range_end=repeat");
	struct gt_capture r;
	char buf[512];

	(void)state;
	/* a close whose open was lost */
	feed(c, cap(R, 500, 100, GT_CAP_RANGE_CLOSE, GT_CAPSRC_PROFILER, 1, 0, 0));
	/* an open while pid 100's range 2 is open: 2 ends there */
	feed(c, cap(R, 1000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 2, 0, 0));
	feed(c, cap(R, 2000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 3, 0, 0));
	/* closes 3 with another number */
	feed(c, cap(R, 2500, 100, GT_CAP_RANGE_CLOSE, GT_CAPSRC_PROFILER, 9, 0, 0));
	/* number 3 again, in another process */
	range(c, 200, 3, 2700, 2800, 0);
	/* malformed: a window kind in a range record, a range kind in a
	 * capture record, an unknown kind, index 0, a record cut short */
	feed(c, cap(R, 3000, 100, GT_CAP_WINDOW_OPEN, GT_CAPSRC_WINDOW, 1, 0, 0));
	feed(c, cap(C, 3000, 0, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 5, 0, 0));
	feed(c, cap(C, 3000, 0, 77, GT_CAPSRC_WINDOW, 1, 0, 0));
	feed(c, cap(R, 3000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 0, 0, 0));
	r = cap(R, 3000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 6, 0, 0);
	r.hdr.size = sizeof(struct gt_hdr) + 8;
	feed(c, r);
	/* hot probes off while off, live twice */
	feed(c, cap(C, 3100, 0, GT_CAP_HOT_OFF, GT_CAPSRC_NONE, 0, 0, 0));
	feed(c, cap(C, 3200, 0, GT_CAP_HOT_LIVE, GT_CAPSRC_NONE, 3, 0, 0));
	feed(c, cap(C, 3300, 0, GT_CAP_HOT_LIVE, GT_CAPSRC_NONE, 3, 0, 0));
	/* other records are none of its business */
	r = cap(GT_REC_STATS, 3400, 0, 0, 0, 0, 0, 0);
	feed(c, r);
	capture_spans__finish(c, 4000);

	assert_int_equal(capture_spans__count(c), 3);
	check_span(capture_spans__at(c, 0), CAPSPAN_RANGE, 2, 100, 1000, 2000, "close_lost");
	check_span(capture_spans__at(c, 1), CAPSPAN_RANGE, 3, 100, 2000, 2500, "closed");
	check_span(capture_spans__at(c, 2), CAPSPAN_RANGE, 3, 200, 2700, 2800, "closed");
	/* a number used twice: the first */
	assert_ptr_equal(capture_spans__find(c, CAPSPAN_RANGE, 3), capture_spans__at(c, 1));
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_CLOSE_WITHOUT_OPEN), 1);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_OPEN_IN_OPEN), 1);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_INDEX_MISMATCH), 1);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_DUPLICATE_NUMBER), 1);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_MALFORMED), 5);
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_HOT_UNPAIRED), 2);
	assert_int_equal(capture_spans__anomalies(c), 11);
	assert_string_equal(capture_spans__anomalies_text(c, buf, sizeof(buf)),
			    "1 close without an open, 1 open while one was open (its close lost), "
			    "1 close numbered unlike its open, 1 number used twice, "
			    "2 hot-probe records that changed nothing, 5 malformed capture records");
	assert_string_equal(capture_anomaly__key(CAPTURE_AN_OPEN_IN_OPEN), "open_in_open");
	assert_string_equal(capture_anomaly__key(CAPTURE_AN_MALFORMED), "malformed");
	assert_null(capture_anomaly__key(CAPTURE_AN__COUNT));
	/* the hot-probe records make it light mode: live from 3200 on */
	assert_true(capture_spans__light(c));
	assert_int_equal(capture_spans__hot_count(c), 3);
	assert_int_equal(capture_spans__hot_ns(c, 0, 4000), 800);
	capture_spans__free(c);
}

/* Light mode's windows: every probe live inside them, hot calls nowhere
 * else; the attach and detach times kept. */
static void test_windows(void **state)
{
	struct capture_spans *c = spans_new("capture=light capture_range=none "
					    "light_window_ns=200 light_period_ns=1000");
	struct capture_totals t;

	(void)state;
	window(c, 1, 1000, 1200);
	window(c, 2, 2000, 2200);
	feed(c, cap(C, 3000, 0, GT_CAP_WINDOW_OPEN, GT_CAPSRC_WINDOW, 3, 0, 3000));
	capture_spans__finish(c, 3100);
	assert_int_equal(capture_spans__count(c), 3);
	check_span(capture_spans__at(c, 0), CAPSPAN_WINDOW, 1, 0, 1000, 1200, "closed");
	check_span(capture_spans__at(c, 2), CAPSPAN_WINDOW, 3, 0, 3000, 3100, "open_at_end");
	assert_string_equal(capspan__source_name(capture_spans__at(c, 0)), "window");
	assert_int_equal(capture_spans__at(c, 1)->attach_ns, 3000);
	assert_int_equal(capture_spans__at(c, 1)->detach_ns, 2000);
	assert_int_equal(capture_spans__at(c, 1)->live_ts, 2000);
	assert_true(capture_spans__light(c));
	assert_int_equal(capture_spans__hot_ns(c, 0, 5000), 500);
	assert_int_equal(capture_spans__hot_ns(c, 1100, 2100), 200);
	assert_int_equal(capture_spans__hot_ns(c, 1300, 1900), 0);
	assert_int_equal(capture_spans__hot_ns(c, 2100, 2000), 0);
	capture_spans__totals(c, &t);
	assert_int_equal(t.windows, 3);
	assert_int_equal(t.ranges, 0);
	assert_int_equal(t.window_ns, 500);
	assert_int_equal(t.hot_intervals, 3);
	assert_int_equal(t.hot_ns, 500);
	assert_int_equal(t.trace_ns, 3000);
	capture_spans__free(c);
}

/* Light mode with ranges: the hot probes go live some time after the first
 * range opened, which misses its hot calls until then; a range opened
 * while they were live misses none; one that closed before they were live
 * has none at all. */
static void test_light_ranges(void **state)
{
	struct capture_spans *c = spans_new("capture=light capture_range=cudaProfilerApi "
					    "capture_range_end=repeat");
	struct capture_totals t;
	const struct capture_hot *h;

	(void)state;
	range(c, 100, 1, 1000, 2000, 0);
	feed(c, cap(C, 1300, 0, GT_CAP_HOT_LIVE, GT_CAPSRC_NONE, 1, 0, 250));
	range(c, 200, 2, 1500, 2500, 0);
	feed(c, cap(C, 2500, 0, GT_CAP_HOT_OFF, GT_CAPSRC_NONE, 2, 0, 120));
	range(c, 100, 3, 3000, 3100, 0);
	feed(c, cap(C, 3400, 0, GT_CAP_HOT_LIVE, GT_CAPSRC_NONE, 4, 0, 250));
	range(c, 200, 4, 3200, 3800, 0);
	capture_spans__finish(c, 4000);

	assert_int_equal(capture_spans__at(c, 0)->live_ts, 1300);
	assert_int_equal(capture_spans__at(c, 1)->live_ts, 1500);
	/* never live while open: from its end, that is never */
	assert_int_equal(capture_spans__at(c, 2)->live_ts, 3100);
	assert_int_equal(capture_spans__at(c, 3)->live_ts, 3400);
	/* the second live period lasts to the end of the trace */
	assert_int_equal(capture_spans__hot_ns(c, 0, 4000), 1200 + 600);
	assert_int_equal(capture_spans__hot_ns(c, 3200, 3800), 400);
	capture_spans__totals(c, &t);
	assert_int_equal(t.late, 3);
	assert_int_equal(t.hot_intervals, 2);
	assert_int_equal(capture_spans__hot_count(c), 3);
	h = capture_spans__hot_at(c, 1);
	assert_false(h->live);
	assert_int_equal(h->ts, 2500);
	assert_int_equal(h->range, 2);
	assert_int_equal(h->latency_ns, 120);
	assert_null(capture_spans__hot_at(c, 3));
	assert_int_equal(capture_spans__anomalies(c), 0);
	capture_spans__free(c);
}

/* A trace with nothing of the kind says nothing. */
static void test_none(void **state)
{
	struct capture_spans *c = spans_new("buffer=64M");
	struct capture_totals t;
	char buf[16];

	(void)state;
	capture_spans__finish(c, 900);
	assert_false(capture_spans__any(c));
	assert_int_equal(capture_spans__count(c), 0);
	assert_string_equal(capture_spans__anomalies_text(c, buf, sizeof(buf)), "");
	capture_spans__totals(c, &t);
	assert_int_equal(t.trace_ns, 800);
	assert_int_equal(t.hot_ns, 800);
	capture_spans__free(c);
}

/* The kernel lookups dropped: a note from when, nothing sampled, not light
 * mode; one in a range record or with no names checked is malformed. */
static void test_lookups(void **state)
{
	struct capture_spans *c = spans_new("buffer=64M");
	struct capspan before = { .start_ts = 100, .end_ts = 1500 };
	char note[256];

	(void)state;
	assert_false(capture_spans__lookups_note(c, NULL, note, sizeof(note)));
	feed(c, cap(C, 2100, 0, GT_CAP_LOOKUPS_OFF, GT_CAPSRC_NONE, 4, 0, 900));
	feed(c, cap(R, 2200, 100, GT_CAP_LOOKUPS_OFF, GT_CAPSRC_NONE, 4, 0, 0));
	feed(c, cap(C, 2300, 0, GT_CAP_LOOKUPS_OFF, GT_CAPSRC_NONE, 0, 0, 0));
	capture_spans__finish(c, 5000);
	assert_false(capture_spans__light(c));
	assert_int_equal(capture_spans__anomaly(c, CAPTURE_AN_MALFORMED), 2);
	assert_true(capture_spans__lookups_note(c, NULL, note, sizeof(note)));
	assert_non_null(strstr(note, "kernel lookups (cuKernelGetFunction) recorded only until +2.0 us"));
	assert_non_null(strstr(note, "whose layout held for 4 names"));
	/* a scope that ends before the drop holds every lookup */
	assert_false(capture_spans__lookups_note(c, &before, note, sizeof(note)));
	assert_string_equal(note, "");
	capture_spans__free(c);
}

/* A pass of its own over a file: the trailer's end ends what is open. */
static void test_read(void **state)
{
	const char *path = tmp_path("spans.gtrace");
	struct gt_file_info info = { .version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 100,
				     .host = "h", .kernel = "k", .cmdline = "c",
				     .options = "capture_range=cudaProfilerApi" };
	struct trace_reader *r;
	struct capture_spans *c;
	struct gt_capture rec = cap(R, 1000, 100, GT_CAP_RANGE_OPEN, GT_CAPSRC_PROFILER, 1, 0, 0);
	struct gt_ret ret = { .hdr = { .ts = 8000, .pid = 100, .tid = 101, .type = GT_REC_RET,
				       .size = sizeof(ret), .api = 1 } };

	(void)state;
	tu_w_create(path, &info);
	tu_w_append(&rec);
	tu_w_append(&ret);
	assert_int_equal(trace_writer__finish(W, &(struct gt_trailer){ .end_ts = 9000 }), 0);
	trace_writer__free(W);
	W = NULL;
	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	c = capture_spans__new(trace_reader__info(r));
	assert_non_null(c);
	assert_int_equal(capture_spans__read(c, r), 0);
	check_span(capture_spans__at(c, 0), CAPSPAN_RANGE, 1, 100, 1000, 9000, "open_at_end");
	assert_int_equal(capture_spans__mode(c)->range, GT_CAPSRC_PROFILER);
	capture_spans__free(c);
	trace_reader__close(r);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_capture_spans");
}

static int group_teardown(void **state)
{
	static const char *const files[] = { "spans.gtrace" };

	(void)state;
	return tu_tmpdir_clean(files, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_open_at_end),
		cmocka_unit_test(test_anomalies),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_light_ranges),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
