// SPDX-License-Identifier: MIT
/*
 * Unit tests of capture control in dump and the exports: every capture
 * record is one dump line (and CSV row) with exactly the fields tools parse;
 * dump --summary counts the ranges, refused ones, windows and the time they
 * cover; the Perfetto export has a "Capture ranges" track per process with a
 * slice per range (an instant for a refused one, the hot start-up a range
 * missed in its name), a recorder-wide "Light-mode windows" track with a
 * slice per window and the hot-probe changes; the Chrome JSON the same as X
 * and i events, and the metadata's capture totals.  Traces: capture_fixtures.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "export/dump.h"
#include "export/export.h"
#include "perfetto_fixtures.h"
#include "capture_fixtures.h"

/* ------------------------------------------------------------ helpers */

/* The lines of text that contain needle, each with its newline. */
static char *lines_with(const char *text, const char *needle)
{
	char *out = calloc(1, strlen(text) + 1);
	size_t n = 0;

	assert_non_null(out);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (memmem(p, len, needle, strlen(needle))) {
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
	}
	return out;
}

/* ------------------------------------------------------------ dump */

static void test_dump_lines(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	struct run r = { 0 };
	char *got;

	(void)state;
	cx_write_ranges(path);
	cx_run_dump(path, false, &r);
	got = lines_with(r.out, "\"type\":\"capture\"");
	assert_string_equal(got,
		"{\"ts\":3000,\"pid\":100,\"tid\":101,\"type\":\"capture\",\"kind\":\"range_open\",\"source\":\"cudaProfilerApi\",\"index\":1,\"flags\":[],\"latency_ns\":0}\n"
		"{\"ts\":3500,\"pid\":200,\"tid\":201,\"type\":\"capture\",\"kind\":\"range_open\",\"source\":\"cudaProfilerApi\",\"index\":2,\"flags\":[],\"latency_ns\":0}\n"
		"{\"ts\":4000,\"pid\":100,\"tid\":101,\"type\":\"capture\",\"kind\":\"range_close\",\"source\":\"cudaProfilerApi\",\"index\":1,\"flags\":[],\"latency_ns\":0}\n"
		"{\"ts\":5000,\"pid\":200,\"tid\":201,\"type\":\"capture\",\"kind\":\"range_close\",\"source\":\"cudaProfilerApi\",\"index\":2,\"flags\":[\"exit\"],\"latency_ns\":0}\n"
		"{\"ts\":6000,\"pid\":100,\"tid\":101,\"type\":\"capture\",\"kind\":\"range_open\",\"source\":\"cudaProfilerApi\",\"index\":3,\"flags\":[\"refused\"],\"latency_ns\":0}\n");
	free(got);
	run_free(&r);

	path = tmp_path("light_ranges.gtrace");
	cx_write_light_ranges(path);
	cx_run_dump(path, false, &r);
	got = lines_with(r.out, "\"type\":\"capture\"");
	assert_non_null(strstr(got, "{\"ts\":1400,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"hot_live\",\"source\":\"none\",\"index\":1,\"flags\":[],\"latency_ns\":400}\n"));
	assert_non_null(strstr(got, "{\"ts\":4000,\"pid\":100,\"tid\":101,\"type\":\"capture\",\"kind\":\"range_close\",\"source\":\"cudaProfilerApi\",\"index\":2,\"flags\":[\"cut\"],\"latency_ns\":0}\n"));
	assert_non_null(strstr(got, "{\"ts\":4000,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"hot_off\",\"source\":\"none\",\"index\":2,\"flags\":[],\"latency_ns\":100}\n"));
	free(got);
	run_free(&r);

	path = tmp_path("light.gtrace");
	cx_write_light(path);
	cx_run_dump(path, false, &r);
	got = lines_with(r.out, "\"type\":\"capture\"");
	assert_string_equal(got,
		"{\"ts\":1000,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"window_open\",\"source\":\"window\",\"index\":1,\"flags\":[],\"latency_ns\":300}\n"
		"{\"ts\":2000,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"window_close\",\"source\":\"window\",\"index\":1,\"flags\":[],\"latency_ns\":200}\n"
		"{\"ts\":6000,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"window_open\",\"source\":\"window\",\"index\":2,\"flags\":[],\"latency_ns\":300}\n"
		"{\"ts\":7000,\"pid\":0,\"tid\":0,\"type\":\"capture\",\"kind\":\"window_close\",\"source\":\"window\",\"index\":2,\"flags\":[],\"latency_ns\":200}\n");
	free(got);
	run_free(&r);
}

/* Values this build has no name for are shown, not dropped. */
static void test_dump_unknown_values(void **state)
{
	const char *path = tmp_path("odd.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_open(path, "");
	cx_capture(GT_REC_RANGE, 1000, 100, 9, 7, 4, GT_CAP_F_EXIT | 0x40, 0);
	cx_close(2000);
	cx_run_dump(path, false, &r);
	assert_string_equal(r.out, "{\"ts\":1000,\"pid\":100,\"tid\":101,\"type\":\"capture\",\"kind\":\"unknown\",\"source\":\"unknown\",\"index\":4,\"flags\":[\"exit\",\"0x40\"],\"latency_ns\":0}\n");
	run_free(&r);
	/* counted as an anomaly, not as a range */
	cx_run_dump(path, true, &r);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "ranges"), 0);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "anomalies"), 1);
	assert_non_null(strstr(r.out, "\n  1 malformed capture record\n"));
	run_free(&r);
}

static void test_dump_summary(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_ranges(path);
	cx_run_dump(path, true, &r);
	assert_non_null(strstr(r.out, "\ncapture (full, capture ranges of cudaProfilerApi, repeat:2)\n"));
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "records"), 5);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "ranges"), 3);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "refused ranges"), 1);
	/* 3000-4000 and 3500-5000 overlap: 2000 ns inside a range */
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "range time (ns)"), 2000);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "windows"), 0);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "trace time (ns)"), 9500);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "anomalies"), 0);
	/* full capture: no hot-call time to report, nothing sampled */
	assert_null(strstr(r.out, "hot-call time"));
	assert_null(strstr(r.out, "sampled"));
	assert_null(strstr(r.out, " *"));
	/* the counters of nested and refused opens, by name */
	assert_int_equal(cx_summary_row(r.out, "\ncounters\n", "ranges_nested"), 0);
	assert_int_equal(cx_summary_row(r.out, "\ncounters\n", "ranges_refused"), 0);
	/* the capture records are no process events: pid 200's exit is */
	{
		const char *row = strstr(r.out, "\nprocess events ");
		unsigned long long n = 0;

		assert_non_null(row);
		assert_int_equal(sscanf(row + strlen("\nprocess events "), "%llu", &n), 1);
		assert_int_equal(n, 1);
	}
	run_free(&r);

	path = tmp_path("light.gtrace");
	cx_write_light(path);
	cx_run_dump(path, true, &r);
	assert_non_null(strstr(r.out, "\ncapture (light, windows of 1.0 us every 5.0 us)\n"));
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "windows"), 2);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "window time (ns)"), 2000);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "hot-call time (ns)"), 2000);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "trace time (ns)"), 9500);
	/* the per-api rows of hot calls say they are sampled, the others not */
	assert_non_null(strstr(r.out, "\ncuLaunchKernel *                                3 "));
	assert_non_null(strstr(r.out, "\ncuMemcpyHtoDAsync_v2 *                          1 "));
	assert_non_null(strstr(r.out, "\ncuStreamSynchronize                             1 "));
	assert_non_null(strstr(r.out, "\n* sampled: launches and other hot calls only inside 2 "
				      "windows, 2.0 us of 9.5 us (21.1 %); cold calls, ioctls and "
				      "off-CPU intervals are complete; nothing is extrapolated.\n"));
	run_free(&r);

	path = tmp_path("light_ranges.gtrace");
	cx_write_light_ranges(path);
	cx_run_dump(path, true, &r);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "hot-call time (ns)"), 1300);
	assert_int_equal(cx_summary_row(r.out, "\ncapture (", "ranges before hot probes live"), 2);
	run_free(&r);

	/* a trace of a recorder without capture modes: no section */
	path = tmp_path("plain.gtrace");
	cx_open(path, "buffer=64M");
	cx_launch(1000, 100);
	cx_close(2000);
	cx_run_dump(path, true, &r);
	assert_null(strstr(r.out, "\ncapture"));
	run_free(&r);
}

/* ------------------------------------------------------------ csv */

/* The cells of a CSV line without quoted commas (the tests' own). */
static int cells(char *line, char **v, int max)
{
	int n = 0;

	for (char *p = line;; p++) {
		v[n++] = p;
		p += strcspn(p, ",\n");
		if (!*p || *p == '\n' || n == max) {
			*p = '\0';
			return n;
		}
		*p = '\0';
	}
}

static void test_csv_rows(void **state)
{
	static const char *const want[][5] = {	/* ts, pid, kind, index, flags */
		{ "3000", "100", "range_open", "1", "" },
		{ "3500", "200", "range_open", "2", "" },
		{ "4000", "100", "range_close", "1", "" },
		{ "5000", "200", "range_close", "2", "exit" },
		{ "6000", "100", "range_open", "3", "refused" },
	};
	const char *path = tmp_path("ranges.gtrace");
	char *csv, *rows, *head, *line, *save = NULL, *col[80], *cell[80];
	int ncol, i = 0;

	(void)state;
	cx_write_ranges(path);
	csv = cx_export_text(path, export_csv__write);
	/* the capture columns come last but the trigger's three */
	head = strndup(csv, strcspn(csv, "\n"));
	ncol = cells(head, col, 80);
	assert_string_equal(col[ncol - 7], "source");
	assert_string_equal(col[ncol - 6], "index");
	assert_string_equal(col[ncol - 5], "flags");
	assert_string_equal(col[ncol - 4], "latency_ns");
	/* one row per capture record, as dump's lines: its fields, the other
	 * cells empty */
	rows = lines_with(csv, ",capture,");
	for (line = strtok_r(rows, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		assert_true(i < 5);
		assert_int_equal(cells(line, cell, 80), ncol);
		for (int c = 0; c < ncol; c++) {
			const char *w = "";

			if (!strcmp(col[c], "ts"))
				w = want[i][0];
			else if (!strcmp(col[c], "pid"))
				w = want[i][1];
			else if (!strcmp(col[c], "tid"))
				w = !strcmp(want[i][1], "100") ? "101" : "201";
			else if (!strcmp(col[c], "type"))
				w = "capture";
			else if (!strcmp(col[c], "kind"))
				w = want[i][2];
			else if (!strcmp(col[c], "source"))
				w = "cudaProfilerApi";
			else if (!strcmp(col[c], "index"))
				w = want[i][3];
			else if (!strcmp(col[c], "flags"))
				w = want[i][4];
			else if (!strcmp(col[c], "latency_ns"))
				w = "0";
			if (strcmp(cell[c], w))
				fail_msg("row %d column %s: '%s', expected '%s'", i, col[c], cell[c], w);
		}
	}
	assert_int_equal(i, 5);
	free(rows);
	free(head);
	free(csv);
}

/* ------------------------------------------------------------ Chrome JSON */

static void test_json_events(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	char *js;

	(void)state;
	cx_write_ranges(path);
	js = cx_export_text(path, export_json__write);
	/* a lane per process with ranges, named so */
	assert_non_null(strstr(js, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":1073741824,\"args\":{\"name\":\"Capture ranges\"}}"));
	assert_non_null(strstr(js, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":200,\"tid\":1073741825,\"args\":{\"name\":\"Capture ranges\"}}"));
	assert_non_null(strstr(js, "{\"name\":\"range 1 (cudaProfilerApi)\",\"cat\":\"capture\",\"ph\":\"X\",\"ts\":3.000,\"dur\":1.000,\"pid\":100,\"tid\":1073741824,\"args\":{\"number\":1,\"source\":\"cudaProfilerApi\",\"state\":\"closed\",\"tid\":101}}"));
	assert_non_null(strstr(js, "{\"name\":\"range 2 (cudaProfilerApi)\",\"cat\":\"capture\",\"ph\":\"X\",\"ts\":3.500,\"dur\":1.500,\"pid\":200,\"tid\":1073741825,\"args\":{\"number\":2,\"source\":\"cudaProfilerApi\",\"state\":\"exit\",\"flags\":[\"exit\"],\"tid\":201}}"));
	assert_non_null(strstr(js, "{\"name\":\"range 3 (cudaProfilerApi, refused)\",\"cat\":\"capture\",\"ph\":\"i\",\"s\":\"t\",\"ts\":6.000,\"pid\":100,\"tid\":1073741824,\"args\":{\"number\":3,\"source\":\"cudaProfilerApi\",\"state\":\"refused\",\"flags\":[\"refused\"],\"tid\":101}}"));
	/* no recorder lane without windows or hot-probe records */
	assert_null(strstr(js, "gtrace-bpf recorder"));
	assert_non_null(strstr(js, ",\"capture\":{\"mode\":\"full\",\"capture_range\":\"cudaProfilerApi\",\"ranges\":3,\"refused\":1,\"windows\":0,\"range_ns\":2000,\"window_ns\":0,\"hot_ns\":9500,\"trace_ns\":9500,\"anomalies\":{\"close_without_open\":0,\"open_in_open\":0,\"index_mismatch\":0,\"duplicate_number\":0,\"hot_unpaired\":0,\"malformed\":0}}"));
	free(js);

	path = tmp_path("light_ranges.gtrace");
	cx_write_light_ranges(path);
	js = cx_export_text(path, export_json__write);
	assert_non_null(strstr(js, "{\"name\":\"range 1 (cudaProfilerApi, hot calls from +400 ns)\",\"cat\":\"capture\",\"ph\":\"X\",\"ts\":1.000,\"dur\":1.000,\"pid\":100,\"tid\":1073741824,\"args\":{\"number\":1,\"source\":\"cudaProfilerApi\",\"state\":\"closed\",\"tid\":101,\"live_ts\":1400,\"hot_missing_ns\":400}}"));
	assert_non_null(strstr(js, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1073741824,\"tid\":1073741824,\"args\":{\"name\":\"gtrace-bpf recorder\"}}"));
	assert_non_null(strstr(js, "{\"name\":\"hot probes live (range 2)\",\"cat\":\"capture\",\"ph\":\"i\",\"s\":\"t\",\"ts\":3.300,\"pid\":1073741824,\"tid\":1073741824,\"args\":{\"latency_ns\":300,\"range\":2}}"));
	assert_non_null(strstr(js, "\"capture\":{\"mode\":\"light\",\"capture_range\":\"cudaProfilerApi\",\"ranges\":2,\"refused\":0,\"windows\":0,\"range_ns\":2000,\"window_ns\":0,\"hot_ns\":1300,\"trace_ns\":3500,"));
	free(js);

	path = tmp_path("light.gtrace");
	cx_write_light(path);
	js = cx_export_text(path, export_json__write);
	assert_non_null(strstr(js, "{\"name\":\"window 2\",\"cat\":\"capture\",\"ph\":\"X\",\"ts\":6.000,\"dur\":1.000,\"pid\":1073741824,\"tid\":1073741824,\"args\":{\"number\":2,\"source\":\"window\",\"state\":\"closed\",\"attach_ns\":300,\"detach_ns\":200}}"));
	free(js);
}

/* ------------------------------------------------------------ Perfetto */

enum { EV_BEGIN = 1, EV_END = 2, EV_INSTANT = 3 };	/* TrackEvent.Type */

/* The "Capture ranges" track under the process track of pid. */
static const struct trk *ranges_track(const struct model *m, uint32_t pid)
{
	const struct trk *p = find_track(m, 'p', pid);

	for (int i = 0; i < m->ntrk; i++)
		if (!m->trk[i].kind && m->trk[i].parent == p->uuid &&
		    !strcmp(m->trk[i].name, "Capture ranges"))
			return &m->trk[i];
	fail_msg("no Capture ranges track under pid %u", pid);
	return NULL;
}

static int count_type_on(const struct model *m, uint64_t track, int type)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		n += m->ev[i].track == track && m->ev[i].type == type;
	return n;
}

static void test_perfetto_ranges(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	const char *why = NULL;
	const struct trk *t100, *t200;
	const struct ev *e;
	struct model m;

	(void)state;
	cx_write_ranges(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	t100 = ranges_track(&m, 100);
	t200 = ranges_track(&m, 200);
	/* pid 100: range 1 a slice, range 3 (refused) an instant */
	assert_int_equal(count_type_on(&m, t100->uuid, EV_BEGIN), 1);
	assert_int_equal(count_type_on(&m, t100->uuid, EV_INSTANT), 1);
	e = event_at(&m, t100->uuid, 3000, EV_BEGIN);
	assert_string_equal(e->name, "range 1 (cudaProfilerApi)");
	assert_string_equal(e->cat, "capture");
	assert_int_equal(find_ann(e, "number")->v, 1);
	assert_string_equal(find_ann(e, "state")->str, "closed");
	assert_int_equal(find_ann(e, "tid")->v, 101);
	assert_null(find_ann(e, "live_ts"));
	event_at(&m, t100->uuid, 4000, EV_END);
	e = event_at(&m, t100->uuid, 6000, EV_INSTANT);
	assert_string_equal(e->name, "range 3 (cudaProfilerApi, refused)");
	assert_string_equal(find_ann(e, "flags")->str, "refused");
	/* pid 200: range 2, closed as the process exited */
	e = event_at(&m, t200->uuid, 3500, EV_BEGIN);
	assert_string_equal(e->name, "range 2 (cudaProfilerApi)");
	assert_string_equal(find_ann(e, "state")->str, "exit");
	event_at(&m, t200->uuid, 5000, EV_END);
	assert_int_equal(count_type_on(&m, t200->uuid, EV_BEGIN), 1);
	/* no windows track in full capture */
	for (int i = 0; i < m.ntrk; i++)
		assert_string_not_equal(m.trk[i].name, "Light-mode windows");
	model_free(&m);
}

static void test_perfetto_light(void **state)
{
	const char *path = tmp_path("light.gtrace");
	const char *why = NULL;
	const struct trk *w;
	const struct ev *e;
	struct model m;

	(void)state;
	cx_write_light(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	w = find_named_track(&m, "Light-mode windows");
	assert_int_equal(w->parent, 0);	/* the recorder's: under no process */
	assert_int_equal(count_type_on(&m, w->uuid, EV_BEGIN), 2);
	e = event_at(&m, w->uuid, 1000, EV_BEGIN);
	assert_string_equal(e->name, "window 1");
	assert_int_equal(find_ann(e, "attach_ns")->v, 300);
	assert_int_equal(find_ann(e, "detach_ns")->v, 200);
	event_at(&m, w->uuid, 2000, EV_END);
	e = event_at(&m, w->uuid, 6000, EV_BEGIN);
	assert_string_equal(e->name, "window 2");
	event_at(&m, w->uuid, 7000, EV_END);
	model_free(&m);

	/* light mode with ranges: the start-up each range missed, the
	 * hot-probe changes on the recorder's track */
	path = tmp_path("light_ranges.gtrace");
	cx_write_light_ranges(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	e = event_at(&m, ranges_track(&m, 100)->uuid, 1000, EV_BEGIN);
	assert_string_equal(e->name, "range 1 (cudaProfilerApi, hot calls from +400 ns)");
	assert_int_equal(find_ann(e, "live_ts")->v, 1400);
	assert_int_equal(find_ann(e, "hot_missing_ns")->v, 400);
	e = event_at(&m, ranges_track(&m, 100)->uuid, 3000, EV_BEGIN);
	assert_string_equal(e->name, "range 2 (cudaProfilerApi, hot calls from +300 ns)");
	assert_string_equal(find_ann(e, "state")->str, "cut");
	w = find_named_track(&m, "Light-mode windows");
	assert_int_equal(count_type_on(&m, w->uuid, EV_INSTANT), 4);
	assert_int_equal(count_type_on(&m, w->uuid, EV_BEGIN), 0);
	e = event_at(&m, w->uuid, 1400, EV_INSTANT);
	assert_string_equal(e->name, "hot probes live (range 1)");
	assert_int_equal(find_ann(e, "latency_ns")->v, 400);
	e = event_at(&m, w->uuid, 2000, EV_INSTANT);
	assert_string_equal(e->name, "hot probes off (range 1)");
	model_free(&m);
}

/* A range that never had its hot probes live, a window left open, and a
 * hot-probe change inside a window: the track still balances, in order. */
static void test_perfetto_edges(void **state)
{
	const char *path = tmp_path("edges.gtrace");
	const char *why = NULL;
	const struct trk *w;
	const struct ev *e;
	struct model m;

	(void)state;
	cx_open(path, "capture=light capture_range=cudaProfilerApi");
	cx_range(1000, 100, GT_CAP_RANGE_OPEN, 1, 0);
	cx_range(1100, 100, GT_CAP_RANGE_CLOSE, 1, 0);
	cx_window(2000, GT_CAP_WINDOW_OPEN, 1, 10);
	cx_hot(2500, true, 0, 5);
	cx_window(3000, GT_CAP_WINDOW_CLOSE, 1, 10);
	cx_window(3000, GT_CAP_WINDOW_OPEN, 2, 10);
	cx_close(5000);
	assert_int_equal(export_file(path, &m, &why), 0);
	e = event_at(&m, ranges_track(&m, 100)->uuid, 1000, EV_BEGIN);
	assert_string_equal(e->name, "range 1 (cudaProfilerApi, no hot calls)");
	w = find_named_track(&m, "Light-mode windows");
	e = event_at(&m, w->uuid, 2500, EV_INSTANT);
	assert_string_equal(e->name, "hot probes live");
	e = event_at(&m, w->uuid, 3000, EV_BEGIN);
	assert_string_equal(e->name, "window 2");
	assert_string_equal(find_ann(e, "state")->str, "open_at_end");
	event_at(&m, w->uuid, 5000, EV_END);
	model_free(&m);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_capture");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_lines),
		cmocka_unit_test(test_dump_unknown_values),
		cmocka_unit_test(test_dump_summary),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_json_events),
		cmocka_unit_test(test_perfetto_ranges),
		cmocka_unit_test(test_perfetto_light),
		cmocka_unit_test(test_perfetto_edges),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
