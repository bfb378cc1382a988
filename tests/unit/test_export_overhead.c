// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's overhead records (GT_REC_OVERHEAD) in dump and
 * the exports: a dump line per record with every field of struct
 * gt_overhead, the estimate, budget and duty cycle also as exact
 * percentages; dump --summary counts them by reason; CSV has a row per
 * record and their columns only for a trace that holds some (the CSV of
 * any other trace, a snapshot's too, keeps its columns); the Perfetto
 * export has root counter tracks "overhead estimate (%)", "overhead budget
 * (%)", "full-capture duty cycle (%)" with a value per record, "GPU-metrics
 * sampler CPU (%)" with one per record that has a sampler figure, and an
 * instant per change on "Overhead changes"; the Chrome JSON counter events
 * of the same names and instants for the changes.  A record too short for
 * its type is no line, row, value or event anywhere, and is counted as
 * malformed (the decoder's unknown_records).  A shed or give-back of the
 * budget names its api (and the calls cut at the swap) everywhere, and
 * marks that api's figures sampled in dump --summary.
 *
 * The trace: cx_write_overhead of capture_fixtures.h.
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

#define S CX_S

/* The recorder's process in the Chrome JSON (LANE_BASE of json.c). */
#define RECORDER "1073741824"

static const char *write_overhead(void)
{
	const char *path = tmp_path("overhead.gtrace");

	cx_write_overhead(path);
	return path;
}

/* ------------------------------------------------------------ dump */

static void test_dump_lines(void **state)
{
	struct run r = { 0 };

	(void)state;
	cx_run_dump(write_overhead(), false, &r);
	assert_non_null(strstr(r.out,
		"\n{\"ts\":1000000000,\"pid\":0,\"tid\":0,\"type\":\"overhead\",\"reason\":\"calibrated\","
		"\"interval_ns\":0,\"hits\":0,\"probe_ns\":0,\"total_ns\":0,\"bpf_ns\":0,"
		"\"estimate_ppm\":0,\"estimate_pct\":0,\"budget_ppm\":50000,\"budget_pct\":5,"
		"\"duty_ppm\":250000,\"duty_pct\":25,\"period_ms\":1000,\"hit_ns\":310,\"ret_ns\":420,"
		"\"sampler_ppm\":0,\"sampler_pct\":0}\n"
		"{\"ts\":2000000000,\"pid\":100,\"tid\":101,\"type\":\"overhead\",\"reason\":\"estimate\","
		"\"interval_ns\":1000000000,\"hits\":12000,\"probe_ns\":40760000,\"total_ns\":50000000,"
		"\"bpf_ns\":6000000,\"estimate_ppm\":42500,\"estimate_pct\":4.25,\"budget_ppm\":50000,"
		"\"budget_pct\":5,\"duty_ppm\":250000,\"duty_pct\":25,\"period_ms\":1000,\"hit_ns\":310,"
		"\"ret_ns\":420,\"sampler_ppm\":1234,\"sampler_pct\":0.1234}\n"));
	assert_non_null(strstr(r.out, "\"ts\":3000000001,\"pid\":100,\"tid\":101,\"type\":\"overhead\","
				      "\"reason\":\"duty_down\","));
	assert_non_null(strstr(r.out, "\"estimate_ppm\":79000,\"estimate_pct\":7.9,\"budget_ppm\":50000,"
				      "\"budget_pct\":5,\"duty_ppm\":100000,\"duty_pct\":10,"));
	assert_non_null(strstr(r.out, "\"reason\":\"over_budget\","));
	assert_non_null(strstr(r.out, "\"reason\":\"duty_up\","));
	assert_non_null(strstr(r.out, "\"ts\":6000000000,\"pid\":100,\"tid\":101,\"type\":\"overhead\","
				      "\"reason\":\"unknown\","));
	/* the short one is no line */
	assert_int_equal(cx_count_of(r.out, "\"type\":\"overhead\""), 7);
	assert_null(strstr(r.out, "\"ts\":7000000000"));
	run_free(&r);
}

static void test_dump_summary(void **state)
{
	struct run r = { 0 };

	(void)state;
	cx_run_dump(write_overhead(), true, &r);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "estimate"), 2);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "calibrated"), 1);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "duty_down"), 1);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "duty_up"), 1);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "over_budget"), 1);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "unknown"), 1);
	/* they are no process events; the short one is malformed */
	assert_int_equal(cx_process_events(r.out), 0);
	assert_int_equal(cx_summary_row(r.out, "\ndecoder\n", "unknown_records"), 1);
	run_free(&r);

	/* a trace without them has no section */
	cx_write_light(tmp_path("light.gtrace"));
	cx_run_dump(tmp_path("light.gtrace"), true, &r);
	assert_null(strstr(r.out, "\noverhead records\n"));
	run_free(&r);
}

/* ------------------------------------------------------------ CSV */

static const char overhead_cols[] =
	",suppressed,reason,interval_ns,hits,probe_ns,total_ns,bpf_ns,estimate_ppm,estimate_pct,"
	"budget_ppm,budget_pct,duty_ppm,duty_pct,period_ms,hit_ns,ret_ns,sampler_ppm,sampler_pct,cut\n";

/* The number of cells of the CSV's first line. */
static int header_cells(const char *csv)
{
	int n = 1;

	for (const char *p = csv; *p && *p != '\n'; p++)
		n += *p == ',';
	return n;
}

static void test_csv_rows(void **state)
{
	const char *path;
	char *csv, *plain;
	int ncol;

	(void)state;
	csv = cx_export_text(write_overhead(), export_csv__write);
	/* the overhead columns come last */
	assert_non_null(strstr(csv, overhead_cols));
	assert_true(strstr(csv, overhead_cols) < strchr(csv, '\n'));
	assert_int_equal(cx_count_of(csv, ",overhead,"), 7);
	/* ts,pid,tid,cpu (empty),type, the other cells empty, then its own */
	assert_non_null(strstr(csv, "\n2000000000,100,101,,overhead,"));
	assert_non_null(strstr(csv, ",estimate,1000000000,12000,40760000,50000000,6000000,42500,4.25,"
				    "50000,5,250000,25,1000,310,420,1234,0.1234,\n"));
	assert_non_null(strstr(csv, "\n1000000000,0,0,,overhead,"));
	assert_non_null(strstr(csv, ",calibrated,0,0,0,0,0,0,0,50000,5,250000,25,1000,310,420,0,0,\n"));
	assert_non_null(strstr(csv, ",duty_down,1000000000,12000,40760000,50000000,6000000,79000,7.9,"
				    "50000,5,100000,10,1000,310,420,0,0,\n"));
	/* every row has a cell for every column */
	ncol = header_cells(csv);
	for (size_t i = 0; csv[i]; i++)
		if (csv[i] == '\n' && csv[i + 1])
			assert_int_equal(header_cells(csv + i + 1), ncol);
	/* the other rows of the trace, a call's, have the cells empty */
	assert_non_null(strstr(csv, "\n1000,100,101,1,sync,cuStreamSynchronize,50,"));

	/* a snapshot without overhead records keeps the columns of any other
	 * trace: those of a trace that is no snapshot */
	path = tmp_path("snap-plain.gtrace");
	cx_open(path, "capture=full capture_range=none snapshot=1");
	cx_call(1000, 50, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_close(2000);
	plain = cx_export_text(path, export_csv__write);
	assert_null(strstr(plain, ",reason,"));
	assert_non_null(strstr(plain, ",latency_ns,code,wait_ns,suppressed\n"));
	assert_int_equal(header_cells(plain), ncol - 18);
	free(plain);
	cx_write_light(tmp_path("light.gtrace"));
	plain = cx_export_text(tmp_path("light.gtrace"), export_csv__write);
	assert_int_equal(header_cells(plain), ncol - 18);
	free(plain);
	free(csv);
}

/* ------------------------------------------------------------ JSON */

static void test_json_events(void **state)
{
	char *js;

	(void)state;
	js = cx_export_text(write_overhead(), export_json__write);
	/* counters of the recorder's process, one series each */
	assert_non_null(strstr(js, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" RECORDER ",\"tid\":"
				   RECORDER ",\"args\":{\"name\":\"gtrace-bpf recorder\"}}"));
	assert_int_equal(cx_count_of(js, "\"gtrace-bpf recorder\""), 1);
	assert_non_null(strstr(js, "{\"name\":\"overhead estimate (%)\",\"cat\":\"overhead\",\"ph\":\"C\","
				   "\"ts\":2000000.000,\"pid\":" RECORDER ",\"tid\":" RECORDER
				   ",\"args\":{\"value\":4.25}}"));
	assert_non_null(strstr(js, "{\"name\":\"overhead budget (%)\",\"cat\":\"overhead\",\"ph\":\"C\","
				   "\"ts\":2000000.000,\"pid\":" RECORDER ",\"tid\":" RECORDER
				   ",\"args\":{\"value\":5}}"));
	assert_non_null(strstr(js, "{\"name\":\"full-capture duty cycle (%)\",\"cat\":\"overhead\","
				   "\"ph\":\"C\",\"ts\":3000000.001,\"pid\":" RECORDER ",\"tid\":" RECORDER
				   ",\"args\":{\"value\":10}}"));
	/* an estimate per record over an interval (not the calibration's);
	 * a budget and a duty cycle per record */
	assert_int_equal(cx_count_of(js, "\"name\":\"overhead estimate (%)\""), 6);
	assert_int_equal(cx_count_of(js, "\"name\":\"overhead budget (%)\""), 7);
	assert_int_equal(cx_count_of(js, "\"name\":\"full-capture duty cycle (%)\""), 7);
	/* the GPU-metrics sampler's CPU: one record says it */
	assert_non_null(strstr(js, "{\"name\":\"GPU-metrics sampler CPU (%)\",\"cat\":\"overhead\","
				   "\"ph\":\"C\",\"ts\":2000000.000,\"pid\":" RECORDER ",\"tid\":" RECORDER
				   ",\"args\":{\"value\":0.1234}}"));
	assert_int_equal(cx_count_of(js, "\"name\":\"GPU-metrics sampler CPU (%)\""), 1);
	assert_int_equal(cx_count_of(js, "\"ph\":\"C\""), 21);
	/* the changes: instants of the recorder's process with dump's fields */
	assert_non_null(strstr(js, "{\"name\":\"overhead: duty cycle down to 10 % (estimated 7.9 %, "
				   "budget 5 %)\",\"cat\":\"overhead\",\"ph\":\"i\",\"s\":\"p\","
				   "\"ts\":3000000.001,\"pid\":" RECORDER ",\"tid\":" RECORDER
				   ",\"args\":{\"pid\":100,\"tid\":101,\"reason\":\"duty_down\","
				   "\"interval_ns\":1000000000,"));
	assert_non_null(strstr(js, "{\"name\":\"overhead: probe hit calibrated (entry 310 ns, return "
				   "420 ns)\",\"cat\":\"overhead\",\"ph\":\"i\","));
	assert_non_null(strstr(js, "{\"name\":\"overhead: over budget at the lowest duty cycle "
				   "(estimated 6.1 %, budget 5 %)\","));
	assert_non_null(strstr(js, "{\"name\":\"overhead: duty cycle up to 25 % (estimated 2.1 %, "
				   "budget 5 %)\","));
	assert_non_null(strstr(js, "{\"name\":\"overhead: unknown\","));
	assert_int_equal(cx_count_of(js, "\"cat\":\"overhead\",\"ph\":\"i\""), 5);
	/* the short one: counted, nothing else */
	assert_non_null(strstr(js, "\"unknown_records\":1}"));
	assert_null(strstr(js, "\"ts\":7000000.000"));
	free(js);
}

/* ------------------------------------------------------------ Perfetto */

enum { EV_INSTANT = 3, EV_COUNTER = 4 };

static double ann_double(const struct ann *a)
{
	double d;

	assert_non_null(a);
	assert_int_equal(a->field, 5);		/* DebugAnnotation.double_value */
	memcpy(&d, &a->v, sizeof(d));
	return d;
}

static void test_perfetto_tracks(void **state)
{
	const char *why = NULL;
	const struct trk *est, *bud, *duty, *ch, *smp;
	const struct ev *e;
	uint64_t ts[16];
	double v[16];
	struct model m;
	int n = 0;

	(void)state;
	assert_int_equal(export_file(write_overhead(), &m, &why), 0);
	est = find_named_track(&m, "overhead estimate (%)");
	bud = find_named_track(&m, "overhead budget (%)");
	duty = find_named_track(&m, "full-capture duty cycle (%)");
	ch = find_named_track(&m, "Overhead changes");
	smp = find_named_track(&m, "GPU-metrics sampler CPU (%)");
	assert_int_equal(smp->parent, 0);
	assert_true(smp->counter);
	assert_int_equal(pf_counter_values(&m, smp, ts, v, 16), 1);
	assert_int_equal(ts[0], 2 * S);
	assert_true(v[0] == 0.1234);
	/* root tracks, as the windows' and the triggers'; three of counters */
	assert_int_equal(est->parent, 0);
	assert_int_equal(bud->parent, 0);
	assert_int_equal(duty->parent, 0);
	assert_int_equal(ch->parent, 0);
	assert_true(est->counter && bud->counter && duty->counter);
	assert_false(ch->counter);
	assert_int_equal(est->unit, 0);

	assert_int_equal(pf_counter_values(&m, est, ts, v, 16), 6);
	assert_int_equal(ts[0], 2 * S);
	assert_true(v[0] == 4.25);
	assert_int_equal(ts[1], 3 * S);
	assert_true(v[1] == 7.9);
	assert_int_equal(ts[4], 5 * S);
	assert_true(v[4] == 2.1);
	assert_int_equal(pf_counter_values(&m, bud, ts, v, 16), 7);
	assert_int_equal(ts[0], 1 * S);
	assert_true(v[0] == 5.0);
	assert_int_equal(pf_counter_values(&m, duty, ts, v, 16), 7);
	assert_true(v[0] == 25.0);
	assert_int_equal(ts[3], 3 * S + 1);
	assert_true(v[3] == 10.0);
	assert_true(v[5] == 25.0);

	for (int i = 0; i < m.nev; i++)
		n += m.ev[i].track == ch->uuid;
	assert_int_equal(n, 5);
	e = event_at(&m, ch->uuid, 3 * S + 1, EV_INSTANT);
	assert_string_equal(e->name, "overhead: duty cycle down to 10 % (estimated 7.9 %, budget 5 %)");
	assert_string_equal(e->cat, "overhead");
	assert_string_equal(find_ann(e, "reason")->str, "duty_down");
	assert_int_equal(find_ann(e, "pid")->v, 100);
	assert_int_equal(find_ann(e, "tid")->v, 101);
	assert_int_equal(find_ann(e, "estimate_ppm")->v, 79000);
	assert_true(ann_double(find_ann(e, "estimate_pct")) == 7.9);
	assert_true(ann_double(find_ann(e, "duty_pct")) == 10.0);
	assert_int_equal(find_ann(e, "period_ms")->v, 1000);
	e = event_at(&m, ch->uuid, 1 * S, EV_INSTANT);
	assert_string_equal(e->name, "overhead: probe hit calibrated (entry 310 ns, return 420 ns)");
	assert_int_equal(find_ann(e, "hit_ns")->v, 310);
	assert_int_equal(find_ann(e, "ret_ns")->v, 420);
	e = event_at(&m, ch->uuid, 4 * S, EV_INSTANT);
	assert_string_equal(e->name, "overhead: over budget at the lowest duty cycle (estimated 6.1 %, "
				     "budget 5 %)");
	e = event_at(&m, ch->uuid, 6 * S, EV_INSTANT);
	assert_string_equal(e->name, "overhead: unknown");
	/* no value of the short one */
	for (int i = 0; i < m.nev; i++)
		assert_int_not_equal(m.ev[i].ts, 7 * S);
	model_free(&m);

	/* no such tracks for a trace without overhead records */
	cx_write_light(tmp_path("light.gtrace"));
	assert_int_equal(export_file(tmp_path("light.gtrace"), &m, &why), 0);
	for (int i = 0; i < m.ntrk; i++) {
		assert_false(m.trk[i].counter);
		assert_null(strstr(m.trk[i].name, "verhead"));
	}
	assert_int_equal(count_type(&m, EV_COUNTER), 0);
	model_free(&m);
}

/* Without a budget: no budget track, and the changes say so. */
static void test_perfetto_no_budget(void **state)
{
	const char *path = tmp_path("nobudget.gtrace"), *why = NULL;
	struct gt_overhead o = cx_interval(42500, 1000000, GT_OVH_ESTIMATE);
	const struct trk *ch;
	struct model m;

	(void)state;
	o.budget_ppm = 0;
	o.period_ms = 0;	/* full mode */
	cx_open(path, "capture=full capture_range=none snapshot=1");
	cx_overhead(2 * S, 100, &o, sizeof(o));
	o.reason = GT_OVH_CALIBRATED;
	cx_overhead(3 * S, 100, &o, sizeof(o));
	cx_close(4 * S);
	assert_int_equal(export_file(path, &m, &why), 0);
	for (int i = 0; i < m.ntrk; i++)
		assert_string_not_equal(m.trk[i].name, "overhead budget (%)");
	find_named_track(&m, "overhead estimate (%)");
	find_named_track(&m, "full-capture duty cycle (%)");
	ch = find_named_track(&m, "Overhead changes");
	assert_int_equal(count_type(&m, EV_COUNTER), 4);
	assert_string_equal(event_at(&m, ch->uuid, 3 * S, EV_INSTANT)->name,
			    "overhead: probe hit calibrated (entry 310 ns, return 420 ns)");
	model_free(&m);
}

/* ------------------------------------------------------------ sheds */

/* A shed and a give-back of the budget (cx_write_shed): dump's lines name
 * the api and the calls cut; dump --summary counts them and marks the shed
 * api's row sampled, with a note saying when; CSV fills its api and cut
 * cells; the Perfetto instants name the api. */
static void test_shed_records(void **state)
{
	const char *path = tmp_path("shed.gtrace"), *why = NULL;
	const struct trk *ch;
	const struct ev *e;
	struct run r = { 0 };
	struct model m;
	char *csv;

	(void)state;
	cx_write_shed(path);
	cx_run_dump(path, false, &r);
	assert_non_null(strstr(r.out, "{\"ts\":5000,\"pid\":100,\"tid\":101,\"type\":\"overhead\","
				      "\"reason\":\"shed\",\"interval_ns\":1000000000,"));
	assert_non_null(strstr(r.out, "\"hit_ns\":310,\"ret_ns\":420,\"sampler_ppm\":0,\"sampler_pct\":0,"
				      "\"api\":\"cuStreamSynchronize\",\"cut\":2}\n"));
	assert_non_null(strstr(r.out, "\"reason\":\"restore\","));
	assert_non_null(strstr(r.out, "\"api\":\"cuStreamSynchronize\",\"cut\":0}\n"));
	/* the other overhead records have neither */
	assert_int_equal(cx_count_of(r.out, ",\"cut\":"), 2);
	run_free(&r);

	cx_run_dump(path, true, &r);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "shed"), 1);
	assert_int_equal(cx_summary_row(r.out, "\noverhead records\n", "restore"), 1);
	assert_non_null(strstr(r.out, "\ncuStreamSynchronize *  "));
	assert_non_null(strstr(r.out, "\ncuCtxSynchronize  "));
	assert_non_null(strstr(r.out, "\n* shed by the overhead budget (recorded only inside light "
				      "windows from then on, sampled like hot calls): cuStreamSynchronize "
				      "shed at +4.5 us; cuStreamSynchronize given back at +8.5 us.\n"));
	run_free(&r);

	csv = cx_export_text(path, export_csv__write);
	assert_non_null(strstr(csv, "\n5000,100,101,,overhead,cuStreamSynchronize,"));
	assert_non_null(strstr(csv, ",shed,1000000000,12000,40760000,50000000,6000000,79000,7.9,"
				    "50000,5,100000,10,1000,310,420,0,0,2\n"));
	free(csv);

	assert_int_equal(export_file(path, &m, &why), 0);
	ch = find_named_track(&m, "Overhead changes");
	e = event_at(&m, ch->uuid, 5000, EV_INSTANT);
	assert_string_equal(e->name, "overhead: cuStreamSynchronize shed: recorded only inside light "
				     "windows (estimated 7.9 %, budget 5 %)");
	assert_string_equal(find_ann(e, "api")->str, "cuStreamSynchronize");
	assert_int_equal(find_ann(e, "cut")->v, 2);
	e = event_at(&m, ch->uuid, 9000, EV_INSTANT);
	assert_string_equal(e->name, "overhead: cuStreamSynchronize given back: recorded always-on "
				     "again (estimated 2.1 %, budget 5 %)");
	model_free(&m);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_overhead");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_lines),
		cmocka_unit_test(test_dump_summary),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_json_events),
		cmocka_unit_test(test_perfetto_tracks),
		cmocka_unit_test(test_perfetto_no_budget),
		cmocka_unit_test(test_shed_records),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
