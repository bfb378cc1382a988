// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's flight-recorder triggers (GT_REC_TRIGGER) in
 * dump and the exports: a dump line per trigger with exactly the fields
 * tools parse, api only when the record names a call; dump --summary counts
 * them by kind; CSV has a row per trigger; the Perfetto export an instant
 * per trigger on the root track "Triggers", named for people, with dump's
 * fields as arguments; the Chrome JSON the same as instants of global
 * scope.  A record too short for its type is no line anywhere.
 *
 * The trace (written with the scaffolding of capture_fixtures.h): start
 * 500, end 4000000000; pid 100 (tid 101) calls cuStreamSynchronize from
 * 1000 for 2.5 s, then
 *   2500001000   sync, cuStreamSynchronize, wait_ns 2500000000
 *   3000000000   error 700, cuMemcpyDtoH_v2, suppressed 1
 *   3100000000   profiler, cuProfilerStart
 *   3200000000   exit of pid 200 with status 256
 *   3300000000   signal (pid 0), suppressed 2
 *   3400000000   kind 9, which this build does not know
 *   3450000000   gpu-idle of pid 100 (tid 0), wait_ns 1500000000
 *   3500000000   a sync trigger cut short of its struct
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

#define S 1000000000ull

static void trigger(uint64_t ts, uint32_t pid, uint32_t tid, unsigned api, uint32_t kind,
		    int32_t code, uint64_t wait_ns, uint32_t suppressed, size_t size)
{
	struct gt_trigger *t = tu_hdr(GT_REC_TRIGGER, size, ts, pid, tid, api, 0);

	t->kind = kind;
	t->code = code;
	t->wait_ns = wait_ns;
	t->suppressed = suppressed;
	tu_w_append(t);
}

static const char *write_triggers(void)
{
	const char *path = tmp_path("triggers.gtrace");
	const size_t n = sizeof(struct gt_trigger);

	cx_open(path, "daemon=1");
	cx_call(1000, 2500000000ull, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	trigger(2500001000ull, 100, 101, GT_API_cuStreamSynchronize, GT_TRIG_SYNC, 0,
		2500000000ull, 0, n);
	trigger(3 * S, 100, 101, GT_API_cuMemcpyDtoH_v2, GT_TRIG_ERROR, 700, 0, 1, n);
	trigger(3 * S + S / 10, 100, 101, GT_API_cuProfilerStart, GT_TRIG_PROFILER, 0, 0, 0, n);
	trigger(3 * S + 2 * S / 10, 200, 200, 0, GT_TRIG_EXIT, 256, 0, 0, n);
	trigger(3 * S + 3 * S / 10, 0, 0, 0, GT_TRIG_SIGNAL, 0, 0, 2, n);
	trigger(3 * S + 4 * S / 10, 100, 101, 0, 9, 0, 0, 0, n);
	trigger(3 * S + 45 * S / 100, 100, 0, 0, GT_TRIG_GPU_IDLE, 0, 1500000000ull, 0, n);
	trigger(3 * S + 5 * S / 10, 100, 101, GT_API_cuStreamSynchronize, GT_TRIG_SYNC, 0, 1, 0,
		n - 8);
	cx_close(4 * S);
	return path;
}

/* ------------------------------------------------------------ dump */

static void test_dump_lines(void **state)
{
	struct run r = { 0 };

	(void)state;
	cx_run_dump(write_triggers(), false, &r);
	assert_non_null(strstr(r.out,
		"\n{\"ts\":2500001000,\"pid\":100,\"tid\":101,\"type\":\"trigger\",\"kind\":\"sync\","
		"\"api\":\"cuStreamSynchronize\",\"code\":0,\"wait_ns\":2500000000,\"suppressed\":0}\n"
		"{\"ts\":3000000000,\"pid\":100,\"tid\":101,\"type\":\"trigger\",\"kind\":\"error\","
		"\"api\":\"cuMemcpyDtoH_v2\",\"code\":700,\"wait_ns\":0,\"suppressed\":1}\n"
		"{\"ts\":3100000000,\"pid\":100,\"tid\":101,\"type\":\"trigger\",\"kind\":\"profiler\","
		"\"api\":\"cuProfilerStart\",\"code\":0,\"wait_ns\":0,\"suppressed\":0}\n"
		/* no api: the record names no call */
		"{\"ts\":3200000000,\"pid\":200,\"tid\":200,\"type\":\"trigger\",\"kind\":\"exit\","
		"\"code\":256,\"wait_ns\":0,\"suppressed\":0}\n"
		"{\"ts\":3300000000,\"pid\":0,\"tid\":0,\"type\":\"trigger\",\"kind\":\"signal\","
		"\"code\":0,\"wait_ns\":0,\"suppressed\":2}\n"
		"{\"ts\":3400000000,\"pid\":100,\"tid\":101,\"type\":\"trigger\",\"kind\":\"unknown\","
		"\"code\":0,\"wait_ns\":0,\"suppressed\":0}\n"
		"{\"ts\":3450000000,\"pid\":100,\"tid\":0,\"type\":\"trigger\",\"kind\":\"gpu-idle\","
		"\"code\":0,\"wait_ns\":1500000000,\"suppressed\":0}\n"));
	/* the short one is no line */
	assert_int_equal(cx_count_of(r.out, "\"type\":\"trigger\""), 7);
	run_free(&r);
}

static void test_dump_summary(void **state)
{
	struct run r = { 0 };

	(void)state;
	cx_run_dump(write_triggers(), true, &r);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "sync"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "error"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "exit"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "profiler"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "signal"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "gpu-idle"), 1);
	assert_int_equal(cx_summary_row(r.out, "\ntriggers\n", "unknown"), 1);
	/* triggers are no process events; the short one is an unknown record */
	assert_int_equal(cx_process_events(r.out), 0);
	assert_int_equal(cx_summary_row(r.out, "\ndecoder\n", "unknown_records"), 1);
	run_free(&r);

	/* a trace without triggers has no section */
	cx_write_ranges(tmp_path("ranges.gtrace"));
	cx_run_dump(tmp_path("ranges.gtrace"), true, &r);
	assert_null(strstr(r.out, "\ntriggers\n"));
	run_free(&r);
}

/* ------------------------------------------------------------ CSV, JSON */

static void test_csv_rows(void **state)
{
	char *csv;

	(void)state;
	csv = cx_export_text(write_triggers(), export_csv__write);
	assert_non_null(strstr(csv, ",latency_ns,code,wait_ns,suppressed\n"));
	assert_int_equal(cx_count_of(csv, ",trigger,"), 7);
	/* ts,pid,tid,cpu (empty),type,api, ... kind ..., the last three */
	assert_non_null(strstr(csv, "\n2500001000,100,101,,trigger,cuStreamSynchronize,"));
	assert_non_null(strstr(csv, ",sync,"));
	assert_non_null(strstr(csv, ",0,2500000000,0\n"));
	assert_non_null(strstr(csv, "\n3200000000,200,200,,trigger,,"));
	assert_non_null(strstr(csv, ",256,0,0\n"));
	free(csv);
}

static void test_json_events(void **state)
{
	char *js;

	(void)state;
	js = cx_export_text(write_triggers(), export_json__write);
	assert_non_null(strstr(js, "{\"name\":\"trigger: sync 2.5 s (cuStreamSynchronize)\",\"cat\":\"trigger\",\"ph\":\"i\",\"s\":\"g\",\"ts\":2500001.000,\"pid\":100,\"tid\":101,\"args\":{\"kind\":\"sync\",\"api\":\"cuStreamSynchronize\",\"code\":0,\"wait_ns\":2500000000,\"suppressed\":0}}"));
	assert_non_null(strstr(js, "{\"name\":\"trigger: error 700 (cuMemcpyDtoH_v2)\",\"cat\":\"trigger\",\"ph\":\"i\",\"s\":\"g\",\"ts\":3000000.000,"));
	assert_non_null(strstr(js, "{\"name\":\"trigger: profiler (cuProfilerStart)\","));
	assert_non_null(strstr(js, "{\"name\":\"trigger: exit status 256\",\"cat\":\"trigger\",\"ph\":\"i\",\"s\":\"g\",\"ts\":3200000.000,\"pid\":200,\"tid\":200,\"args\":{\"kind\":\"exit\",\"code\":256,\"wait_ns\":0,\"suppressed\":0}}"));
	assert_non_null(strstr(js, "{\"name\":\"trigger: SIGUSR1\",\"cat\":\"trigger\",\"ph\":\"i\",\"s\":\"g\",\"ts\":3300000.000,\"pid\":0,\"tid\":0,\"args\":{\"kind\":\"signal\",\"code\":0,\"wait_ns\":0,\"suppressed\":2}}"));
	assert_non_null(strstr(js, "{\"name\":\"trigger: unknown\","));
	assert_non_null(strstr(js, "{\"name\":\"trigger: gpu-idle 1.5 s\",\"cat\":\"trigger\",\"ph\":\"i\",\"s\":\"g\",\"ts\":3450000.000,\"pid\":100,\"tid\":0,\"args\":{\"kind\":\"gpu-idle\",\"code\":0,\"wait_ns\":1500000000,\"suppressed\":0}}"));
	assert_int_equal(cx_count_of(js, "\"cat\":\"trigger\""), 7);
	free(js);
}

/* ------------------------------------------------------------ Perfetto */

enum { EV_INSTANT = 3 };	/* TrackEvent.Type */

static void test_perfetto_track(void **state)
{
	const char *why = NULL;
	const struct trk *t;
	const struct ev *e;
	struct model m;
	int n = 0;

	(void)state;
	assert_int_equal(export_file(write_triggers(), &m, &why), 0);
	t = find_named_track(&m, "Triggers");
	assert_int_equal(t->parent, 0);	/* a root track */
	for (int i = 0; i < m.nev; i++)
		n += m.ev[i].track == t->uuid;
	assert_int_equal(n, 7);
	e = event_at(&m, t->uuid, 2500001000ull, EV_INSTANT);
	assert_string_equal(e->name, "trigger: sync 2.5 s (cuStreamSynchronize)");
	assert_string_equal(e->cat, "trigger");
	assert_string_equal(find_ann(e, "kind")->str, "sync");
	assert_string_equal(find_ann(e, "api")->str, "cuStreamSynchronize");
	assert_int_equal(find_ann(e, "wait_ns")->v, 2500000000ull);
	assert_int_equal(find_ann(e, "pid")->v, 100);
	assert_int_equal(find_ann(e, "tid")->v, 101);
	e = event_at(&m, t->uuid, 3 * S, EV_INSTANT);
	assert_string_equal(e->name, "trigger: error 700 (cuMemcpyDtoH_v2)");
	assert_int_equal(find_ann(e, "code")->v, 700);
	assert_int_equal(find_ann(e, "suppressed")->v, 1);
	e = event_at(&m, t->uuid, 3 * S + 2 * S / 10, EV_INSTANT);
	assert_string_equal(e->name, "trigger: exit status 256");
	assert_null(find_ann(e, "api"));
	e = event_at(&m, t->uuid, 3 * S + 3 * S / 10, EV_INSTANT);
	assert_string_equal(e->name, "trigger: SIGUSR1");
	assert_int_equal(find_ann(e, "suppressed")->v, 2);
	e = event_at(&m, t->uuid, 3 * S + 45 * S / 100, EV_INSTANT);
	assert_string_equal(e->name, "trigger: gpu-idle 1.5 s");
	assert_string_equal(find_ann(e, "kind")->str, "gpu-idle");
	assert_int_equal(find_ann(e, "wait_ns")->v, 1500000000ull);
	model_free(&m);

	/* no track for a trace without triggers */
	cx_write_ranges(tmp_path("ranges.gtrace"));
	assert_int_equal(export_file(tmp_path("ranges.gtrace"), &m, &why), 0);
	for (int i = 0; i < m.ntrk; i++)
		assert_string_not_equal(m.trk[i].name, "Triggers");
	model_free(&m);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_trigger");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_lines),
		cmocka_unit_test(test_dump_summary),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_json_events),
		cmocka_unit_test(test_perfetto_track),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
