// SPDX-License-Identifier: MIT
/*
 * Unit tests of capture control in `gtrace-bpf stats`
 * (user/stats/stats_capture.c): capture_sum lists the ranges and windows;
 * --range N limits every report to range N (its process, its start to its
 * end) or window N (every process), with exact counts; a bad or unknown
 * range, or a trace with none, is one line and status 2; in light mode the
 * figures of hot calls say they are sampled (a note, a Sampled column, the
 * JSON document's "sampled"), and a window, inside which everything was
 * recorded, is not; a daemon snapshot's overhead records are a note of
 * capture_sum, labelled estimated, and the JSON document's "overhead".
 * Traces: capture_fixtures.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "stats/stats.h"
#include "stats_fixtures.h"
#include "capture_fixtures.h"

/* The readers' rule on a fixture with a record too short for its type: the
 * reports all the same, status 1 and one line ending so. */
#define STATS_KEPT "the reports cover the records read"

static void run_range(const char *path, const char *reports, const char *range,
		      enum stats_format fmt, struct run *r)
{
	struct stats_opts o = { .path = path, .reports = reports, .format = fmt, .range = range };

	tu_run_open(r, &o.out, &o.err);
	r->rc = stats__run(&o);
	tu_run_close(o.out, o.err);
}

/* The value of "key": in the JSON row whose "name" is name (first report
 * that has one): the text up to the next comma or brace. */
static char *json_field(const char *doc, const char *name, const char *key)
{
	char want[128], *row, *end, *v;
	const char *p;

	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	p = strstr(doc, want);
	if (!p)
		return NULL;
	while (p > doc && *p != '{')
		p--;
	end = strchr(p, '}');
	row = strndup(p, (size_t)(end - p));
	snprintf(want, sizeof(want), "\"%s\":", key);
	p = strstr(row, want);
	v = p ? strndup(p + strlen(want), strcspn(p + strlen(want), ",}")) : NULL;
	free(row);
	return v;
}

static void check_field(const char *doc, const char *name, const char *key, const char *want)
{
	char *v = json_field(doc, name, key);

	if (!v || strcmp(v, want))
		fail_msg("%s of %s: %s, expected %s", key, name, v ? v : "(none)", want);
	free(v);
}

/* ------------------------------------------------------------ capture_sum */

static void test_capture_sum(void **state)
{
	static const char *const want[] = {
		"",
		" ** Capture Ranges and Windows (capture_sum):",
		"",
		" Number  Kind   Source           PID  TID  Start (ns)  End (ns)  Duration (ns)  Hot From (ns)  State",
		" ------  -----  ---------------  ---  ---  ----------  --------  -------------  -------------  -------",
		"      1  range  cudaProfilerApi  100  101       2,500     3,500          1,000              -  closed",
		"      2  range  cudaProfilerApi  200  201       3,000     4,500          1,500              -  exit",
		"      3  range  cudaProfilerApi  100  101       5,500     5,500              0              -  refused",
		"",
		" Start and End: time since the recording started. Hot From: how long after its start a range's hot calls (launches, async copies and sets, event records, stream waits, queries) began to be recorded, when it opened before the hot probes were live.",
		" 3 capture ranges (1 refused: nothing of it was recorded) cover 2.0 us of the recording's 9.5 us (21.1 %); a range is of one process.",
	};
	const char *path = tmp_path("ranges.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_ranges(path);
	run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_text(r.out, want, N(want));
	run_free(&r);

	/* windows, in CSV and in the unit asked for */
	path = tmp_path("light.gtrace");
	cx_write_light(path);
	{
		struct stats_opts o = { .path = path, .reports = "capture_sum", .format = STATS_CSV,
					.timeunit = "us" };

		tu_run_open(&r, &o.out, &o.err);
		r.rc = stats__run(&o);
		tu_run_close(o.out, o.err);
	}
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
		"Number,Kind,Source,PID,TID,Start (us),End (us),Duration (us),Hot From (us),State\n"
		"1,window,window,,,0.500,1.500,1.000,,closed\n"
		"2,window,window,,,5.500,6.500,1.000,,closed\n");
	run_free(&r);

	/* what does not pair is said under the table */
	path = tmp_path("odd.gtrace");
	cx_open(path, "capture_range=cudaProfilerApi");
	cx_range(1000, 100, GT_CAP_RANGE_CLOSE, 1, 0);
	cx_range(2000, 100, GT_CAP_RANGE_OPEN, 2, 0);
	cx_close(3000);
	run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n      2  range  cudaProfilerApi  100  101       1,500     2,500"
				      "          1,000              -  open_at_end\n"));
	assert_non_null(strstr(r.out, "\n Anomalies: 1 close without an open.\n"));
	run_free(&r);
}

/* ------------------------------------------------------------ --range */

static void test_range_counts(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_ranges(path);
	/* the whole trace: 7 launches of pid 100, 1 of pid 200 */
	run_range(path, "cuda_api_sum", NULL, STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuLaunchKernel", "num_calls", "8");
	run_free(&r);

	/* range 1: pid 100 from 3000 to 4000 */
	run_range(path, "cuda_api_sum,process_sum,cuda_mem_size_sum", "1", STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	check_field(r.out, "cuLaunchKernel", "num_calls", "3");
	check_field(r.out, "cuStreamSynchronize", "num_calls", "1");
	assert_null(strstr(r.out, "cuMemcpyHtoDAsync_v2"));
	/* one process, its records inside: the open and close, 3 launches
	 * and the sync with their exits */
	assert_non_null(strstr(r.out, "{\"pid\":100,\"events\":10,\"calls\":4,"));
	assert_null(strstr(r.out, "{\"pid\":200,"));
	assert_non_null(strstr(r.out, "\"report\":\"cuda_mem_size_sum\",\"title\":\"CUDA Memory "
				      "Operation Summary (by Size)\",\"rows\":[]"));
	assert_non_null(strstr(r.out, ",\"capture\":{\"mode\":\"full\",\"capture_range\":"
				      "\"cudaProfilerApi\"},\"range\":{\"kind\":\"range\",\"number\":1,"
				      "\"source\":\"cudaProfilerApi\",\"pid\":100,\"start\":3000,"
				      "\"end\":4000,\"state\":\"closed\"},\"sampled\":false,\"reports\":["));
	run_free(&r);

	/* range 2: pid 200, its launch and its copy, not pid 100's launches
	 * at the same time */
	run_range(path, "cuda_api_sum,cuda_mem_size_sum,capture_sum", "2", STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuLaunchKernel", "num_calls", "1");
	check_field(r.out, "cuMemcpyHtoDAsync_v2", "num_calls", "1");
	assert_non_null(strstr(r.out, "{\"total\":1000,\"count\":1,"));
	/* capture_sum: that range only */
	assert_non_null(strstr(r.out, "{\"number\":2,\"kind\":\"range\",\"source\":\"cudaProfilerApi\","
				      "\"pid\":200,\"tid\":201,\"start\":3000,\"end\":4500,"
				      "\"duration\":1500,\"hot_from\":null,\"state\":\"exit\"}]}"));
	run_free(&r);

	/* the table says what the reports cover before them */
	run_range(path, "cuda_launch_sum", "2", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_true(!strncmp(r.out, "\n Capture range 2 (cudaProfilerApi), pid 200: +3.0 us to +4.5 us "
				    "of the recording (1.5 us), exit. Every report below is of its "
				    "records only.\n\n ** CUDA Launch Summary", 150));
	assert_non_null(strstr(r.out, "\n        1         100.0       1  64x1x1  256x1x1"));
	run_free(&r);

	/* a refused range: nothing of it was recorded */
	run_range(path, "cuda_api_sum", "3", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n Capture range 3 (cudaProfilerApi), pid 100: refused at +5.5 us "
				      "(beyond --capture-range-end's count): nothing of it was recorded.\n"));
	assert_non_null(strstr(r.out, " SKIPPED: "));
	run_free(&r);
}

/* Windows: every process inside; N is a window in a trace of windows, and
 * wN a window in any. */
static void test_range_windows(void **state)
{
	const char *path = tmp_path("light.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_light(path);
	run_range(path, "cuda_api_sum", "w1", STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuLaunchKernel", "num_calls", "2");
	check_field(r.out, "cuMemcpyHtoDAsync_v2", "num_calls", "1");
	assert_null(strstr(r.out, "cuStreamSynchronize"));
	/* inside a window everything was recorded: not sampled */
	assert_non_null(strstr(r.out, "\"sampled\":false,\"reports\":["));
	assert_null(strstr(r.out, "\"sampled\":true"));
	run_free(&r);

	run_range(path, "cuda_api_sum", "2", STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuLaunchKernel", "num_calls", "1");
	assert_non_null(strstr(r.out, "\"range\":{\"kind\":\"window\",\"number\":2,\"source\":"
				      "\"window\",\"pid\":0,\"start\":6000,\"end\":7000,"));
	run_free(&r);

	run_range(path, "cuda_launch_sum", "w2", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_true(!strncmp(r.out, "\n Light-mode window 2, every process: +5.5 us to +6.5 us of the "
				    "recording (1.0 us), closed.", 80));
	run_free(&r);
}

static void test_range_errors(void **state)
{
	static const char *const bad[] = { "0", "abc", "-1", "", "w", "w0", "1x", " 1", "+1",
					   "4294967296", "x1" };
	const char *absent = tmp_path("absent.gtrace"), *path;
	struct run r = { 0 };
	char want[512];

	(void)state;
	/* refused before the file is read: it does not exist */
	for (size_t i = 0; i < N(bad); i++) {
		run_range(absent, NULL, bad[i], STATS_TABLE, &r);
		assert_int_equal(r.rc, 2);
		snprintf(want, sizeof(want), "gtrace-bpf: bad range '%s': give the number of a capture "
			 "range (1, 2, ...) or of a light-mode window (w1, w2, ...)\n", bad[i]);
		assert_string_equal(r.err, want);
		assert_string_equal(r.out, "");
		run_free(&r);
		assert_int_equal(stats__check_range(bad[i]), -EINVAL);
	}
	assert_int_equal(stats__check_range("1"), 0);
	assert_int_equal(stats__check_range("w12"), 0);
	assert_int_equal(stats__check_range("4294967295"), 0);

	/* an unreadable file is no command-line error */
	run_range(absent, NULL, "1", STATS_TABLE, &r);
	assert_int_equal(r.rc, 1);
	run_free(&r);

	path = tmp_path("ranges.gtrace");
	cx_write_ranges(path);
	run_range(path, NULL, "99", STATS_TABLE, &r);
	assert_int_equal(r.rc, 2);
	snprintf(want, sizeof(want), "gtrace-bpf: %s has no capture range 99 (its ranges: 1 to 3)\n",
		 path);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);
	run_range(path, NULL, "w1", STATS_JSON, &r);
	assert_int_equal(r.rc, 2);
	snprintf(want, sizeof(want), "gtrace-bpf: %s has no light-mode windows (its capture ranges: "
		 "1 to 3)\n", path);
	assert_string_equal(r.err, want);
	run_free(&r);

	path = tmp_path("light.gtrace");
	cx_write_light(path);
	run_range(path, NULL, "3", STATS_TABLE, &r);
	assert_int_equal(r.rc, 2);
	snprintf(want, sizeof(want), "gtrace-bpf: %s has no light-mode window 3 (its windows: 1 to "
		 "2)\n", path);
	assert_string_equal(r.err, want);
	run_free(&r);

	/* a trace with neither */
	path = tmp_path("plain.gtrace");
	cx_open(path, "buffer=64M");
	cx_launch(1000, 100);
	cx_close(2000);
	run_range(path, "cuda_api_sum", "1", STATS_CSV, &r);
	assert_int_equal(r.rc, 2);
	snprintf(want, sizeof(want), "gtrace-bpf: %s has no capture ranges or light-mode windows for "
		 "--range (a trace recorded with -c cudaProfilerApi, -c nvtx or --mode light has)\n",
		 path);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	run_free(&r);
}

/* ------------------------------------------------------------ sampled */

#define NOTE " sampled: launches and other hot calls only inside 2 windows, 2.0 us of 9.5 us " \
	"(21.1 %); cold calls, ioctls and off-CPU intervals are complete; nothing is extrapolated."

static void test_sampled_windows(void **state)
{
	static const char note[] = NOTE;
	static const char *const want[] = {
		"",
		" ** CUDA API Summary (cuda_api_sum):",
		"",
		" Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Incomplete  Name                  Sampled",
		" --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----------  --------------------  -------",
		"     41.7              100          1     100.0     100.0       100       100          0.0           0  cuMemAlloc_v2              no",
		"     41.7              100          1     100.0     100.0       100       100          0.0           0  cuStreamSynchronize        no",
		"     12.5               30          3      10.0      10.0        10        10          0.0           0  cuLaunchKernel            yes",
		"      4.2               10          1      10.0      10.0        10        10          0.0           0  cuMemcpyHtoDAsync_v2      yes",
		"",
		NOTE,
		" Times are those of calls with an exit. Incomplete: calls whose exit was not recorded (recording stopped or the process ended inside the call); they count in Num Calls only. Launches are recorded at entry only unless the recording used --launch-exit: they count in Num Calls with no times.",
		" Med is the exact median; StdDev the sample standard deviation.",
	};
	const char *path = tmp_path("light.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_light(path);
	run_range(path, "cuda_api_sum", NULL, STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	/* each row says whether it is sampled, the note comes first; the
	 * launches are those recorded, 3, not scaled up */
	check_text(r.out, want, N(want));
	run_free(&r);

	/* every report of hot calls has it; capture_sum not */
	{
		static const char *const hot[] = { "cuda_api_sum", "cuda_launch_sum",
						   "cuda_mem_size_sum", "cuda_sync_sum", "process_sum" };

		for (size_t i = 0; i < N(hot); i++) {
			run_range(path, hot[i], NULL, STATS_TABLE, &r);
			assert_int_equal(r.rc, 0);
			if (!strstr(r.out, note))
				fail_msg("%s has no sampled note: %s", hot[i], r.out);
			run_free(&r);
		}
		run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
		assert_null(strstr(r.out, "sampled:"));
		run_free(&r);
	}

	/* csv: a column */
	run_range(path, "cuda_sync_sum", NULL, STATS_CSV, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
		"Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
		"Incomplete,PID,Name,Sampled\n"
		"100.0,100,1,100.0,100.0,100,100,0.0,0,100,cuStreamSynchronize,false\n");
	run_free(&r);
	run_range(path, "process_sum", NULL, STATS_CSV, &r);
	assert_non_null(strstr(r.out, "Command,Sampled\n100,"));
	assert_non_null(strstr(r.out, ",true\n"));
	run_free(&r);

	/* json: the rows and the document */
	run_range(path, "cuda_api_sum,ioctl_sum", NULL, STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuLaunchKernel", "sampled", "true");
	check_field(r.out, "cuMemAlloc_v2", "sampled", "false");
	assert_non_null(strstr(r.out, ",\"capture\":{\"mode\":\"light\",\"capture_range\":\"none\"},"
				      "\"sampled\":true,\"sampled_note\":\"sampled: launches and other "
				      "hot calls only inside 2 windows, 2.0 us of 9.5 us (21.1 %);"));
	run_free(&r);
}

static void test_sampled_ranges(void **state)
{
	const char *path = tmp_path("light_ranges.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_light_ranges(path);
	run_range(path, "cuda_launch_sum", NULL, STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n sampled: launches and other hot calls only while the hot "
				      "probes were live (2 intervals), 1.3 us of 3.5 us (37.1 %);"));
	run_free(&r);

	/* range 1 missed its first 400 ns of hot calls */
	run_range(path, "cuda_api_sum", "1", STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n sampled: launches and other hot calls only from +400 ns of "
				      "range 1 on, when the hot probes were live, 600 ns of 1.0 us "
				      "(60.0 %);"));
	/* the cold sync before the probes were live is there, and the 2 launches */
	assert_non_null(strstr(r.out, "  cuStreamSynchronize       no\n"));
	assert_non_null(strstr(r.out, "  cuLaunchKernel           yes\n"));
	run_free(&r);

	run_range(path, "capture_sum", NULL, STATS_CSV, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
		"Number,Kind,Source,PID,TID,Start (ns),End (ns),Duration (ns),Hot From (ns),State\n"
		"1,range,cudaProfilerApi,100,101,500,1500,1000,400,closed\n"
		"2,range,cudaProfilerApi,100,101,2500,3500,1000,300,cut\n");
	run_free(&r);
}

/* Full capture: nothing is sampled, no column is added; a trace that says
 * nothing of capture control gets no capture members either. */
static void test_not_sampled(void **state)
{
	const char *path = tmp_path("ranges.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_ranges(path);
	run_range(path, "cuda_api_sum", NULL, STATS_CSV, &r);
	assert_int_equal(r.rc, 0);
	{
		static const char head[] = "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),"
			"Min (ns),Max (ns),StdDev (ns),Incomplete,Name\n";

		assert_true(!strncmp(r.out, head, strlen(head)));
	}
	assert_null(strstr(r.out, "ampled"));
	run_free(&r);

	path = tmp_path("plain.gtrace");
	cx_open(path, "buffer=64M");
	cx_launch(1000, 100);
	cx_close(2000);
	run_range(path, "cuda_api_sum", NULL, STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "\"capture\""));
	assert_null(strstr(r.out, "\"sampled\""));
	run_free(&r);
}

/* ------------------------------------------------------------ overhead */

static const char overhead_note[] =
	" Overhead, estimated by the daemon (probe hits times their calibrated cost, of the "
	"thread that paid most): median 5.17 %, max 7.9 % over 6 estimates; budget 5 %; "
	"full-capture duty cycle 25 % at the first record, 25 % at the last, lowered 1 time and "
	"raised 1 time; over budget at the lowest duty cycle 1 time; 1 record of a reason this "
	"build does not know.\n";

/* A daemon snapshot's overhead records: a note of capture_sum, labelled
 * estimated, with rows or without (after the SKIPPED line), and the JSON
 * document's "overhead"; --range limits them to its time. */
static void test_overhead(void **state)
{
	const char *path = tmp_path("overhead.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_overhead(path);
	run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
	tu_check_rule(path, r.rc, r.err, STATS_KEPT);
	assert_non_null(strstr(r.out, " SKIPPED: "));
	assert_non_null(strstr(r.out, "light-mode windows.\n\n"));
	assert_non_null(strstr(r.out, overhead_note));
	run_free(&r);

	run_range(path, "capture_sum", NULL, STATS_JSON, &r);
	tu_check_rule(path, r.rc, r.err, STATS_KEPT);
	assert_non_null(strstr(r.out, ",\"overhead\":{\"estimated\":true,\"records\":7,\"estimates\":6,"
				      "\"estimate_median_pct\":5.175,\"estimate_max_pct\":7.9,"
				      "\"budget_pct\":5,\"duty_first_pct\":25,\"duty_last_pct\":25,"
				      "\"calibrated\":1,\"duty_down\":1,\"duty_up\":1,\"over_budget\":1,"
				      "\"shed\":0,\"restore\":0},\"reports\":"));
	run_free(&r);

	/* the estimates are the recorder's: no events of the process paying */
	run_range(path, "process_sum", NULL, STATS_CSV, &r);
	tu_check_rule(path, r.rc, r.err, STATS_KEPT);
	assert_non_null(strstr(r.out, "\n100,2,1,50,0,50,"));
	run_free(&r);

	/* with a window: the note after the others, under the rows; --range
	 * w1 (2.5 s - 3.5 s) holds the estimates of 3 s and 3 s + 1 */
	path = tmp_path("overhead-window.gtrace");
	cx_open(path, "capture=light capture_range=none light_window_ns=1000000000 "
		      "light_period_ns=2000000000 snapshot=1");
	cx_window(2 * CX_S + CX_S / 2, GT_CAP_WINDOW_OPEN, 1, 300);
	cx_write_overhead_records();
	cx_window(3 * CX_S + CX_S / 2, GT_CAP_WINDOW_CLOSE, 1, 200);
	cx_close(8 * CX_S);
	run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
	tu_check_rule(path, r.rc, r.err, STATS_KEPT);
	assert_non_null(strstr(r.out, "(12.5 %); a window is of every process.\n"));
	{
		const char *w = strstr(r.out, "a window is of every process.\n");

		assert_non_null(w);
		assert_int_equal(strncmp(w + strlen("a window is of every process.\n"), overhead_note,
					 strlen(overhead_note)), 0);
	}
	run_free(&r);
	run_range(path, "capture_sum", "w1", STATS_JSON, &r);
	tu_check_rule(path, r.rc, r.err, STATS_KEPT);
	assert_non_null(strstr(r.out, "\"overhead\":{\"estimated\":true,\"records\":2,\"estimates\":2,"
				      "\"estimate_median_pct\":7.9,\"estimate_max_pct\":7.9,"
				      "\"budget_pct\":5,\"duty_first_pct\":25,\"duty_last_pct\":10,"
				      "\"calibrated\":0,\"duty_down\":1,\"duty_up\":0,\"over_budget\":0,"
				      "\"shed\":0,\"restore\":0}"));
	run_free(&r);

	/* none without overhead records */
	path = tmp_path("light.gtrace");
	cx_write_light(path);
	run_range(path, "capture_sum", NULL, STATS_TABLE, &r);
	assert_null(strstr(r.out, "Overhead"));
	run_free(&r);
	run_range(path, "capture_sum", NULL, STATS_JSON, &r);
	assert_null(strstr(r.out, "\"overhead\""));
	run_free(&r);
}

/* An api the budget shed (cx_write_shed): its rows in the reports of
 * the whole trace are sampled, as hot calls' are, with a note saying when;
 * the rows of an api never shed are not; the JSON document says so in
 * "shed_note"; a window's scope, in which every probe was live, is not
 * sampled at all. */
static void test_shed_sampled(void **state)
{
	const char *path = tmp_path("shed.gtrace");
	struct run r = { 0 };

	(void)state;
	cx_write_shed(path);
	run_range(path, "cuda_api_sum", NULL, STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	check_field(r.out, "cuStreamSynchronize", "sampled", "true");
	check_field(r.out, "cuCtxSynchronize", "sampled", "false");
	check_field(r.out, "cuLaunchKernel", "sampled", "true");
	assert_non_null(strstr(r.out, ",\"shed_note\":\"shed by the overhead budget (recorded only "
				      "inside light windows from then on, sampled like hot calls): "
				      "cuStreamSynchronize shed at +4.5 us; cuStreamSynchronize given "
				      "back at +8.5 us.\""));
	run_free(&r);
	run_range(path, "cuda_sync_sum", NULL, STATS_TABLE, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " shed by the overhead budget (recorded only inside light windows"));
	run_free(&r);
	/* window 2, after the shed: every probe was live in it */
	run_range(path, "cuda_api_sum", "w2", STATS_JSON, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\"sampled\":false"));
	assert_null(strstr(r.out, "shed_note"));
	run_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_stats_capture");
}

static int group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_sum),
		cmocka_unit_test(test_range_counts),
		cmocka_unit_test(test_range_windows),
		cmocka_unit_test(test_range_errors),
		cmocka_unit_test(test_sampled_windows),
		cmocka_unit_test(test_sampled_ranges),
		cmocka_unit_test(test_not_sampled),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_shed_sampled),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
