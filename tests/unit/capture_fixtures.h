/* SPDX-License-Identifier: MIT */
/*
 * Traces with capture control, shared by the unit tests of dump, the
 * exports and stats (test_export_capture.c, test_stats_capture.c), written
 * record by record on the scaffolding of test_util.h, and the runs of dump
 * and the exports those tests read them with.  Static inline, names
 * prefixed cx_, so that a test can take these beside its own fixtures.
 *
 * cx_write_ranges: full capture with ranges (capture_range=cudaProfilerApi,
 * capture_range_end=repeat:2), start 500, trailer end 10000; pid 100 "app"
 * (tid 101), pid 200 "worker" (tid 201); launches of 0x4000 last 10 ns:
 *   1000, 2000       launches of pid 100, before any range
 *   3000 - 4000      range 1 of pid 100: launches at 3100, 3200, 3300, a
 *                    cuStreamSynchronize 3400 - 3450
 *   3500 - 5000      range 2 of pid 200, closed as its process exits
 *                    (flag exit): a launch at 3600, a cuMemcpyHtoDAsync_v2
 *                    of 1000 bytes 3700 - 3720; pid 200 exits at 5001
 *   4500             a launch of pid 100, between its ranges
 *   6000             range 3 of pid 100, refused (beyond repeat:2)
 *   6100             a launch of pid 100, not in any range
 * cx_write_light: light mode, windows (light_window_ns=1000,
 * light_period_ns=5000), start 500, end 10000, pid 100 only:
 *   1000 - 2000      window 1 (attach 300 ns, detach 200 ns): launches at
 *                    1100 and 1500, a cuMemcpyHtoDAsync_v2 1800 - 1810
 *   3000 - 3100      cuStreamSynchronize (cold: recorded outside windows)
 *   3500 - 3600      cuMemAlloc_v2 (cold)
 *   6000 - 7000      window 2: a launch at 6500
 *   windows 2000 ns of the trace's 9500 (21.1 %)
 * cx_write_light_ranges: light mode with ranges (capture=light,
 * capture_range=cudaProfilerApi, repeat), start 500, end 4000, pid 100:
 *   1000 - 2000      range 1; a cuStreamSynchronize 1200 - 1250 before the
 *                    hot probes are live at 1400 (attach 400 ns); launches
 *                    at 1500 and 1600; the probes off at 2000
 *   3000 - 4000      range 2, cut by the end of the recording (flag cut);
 *                    the probes live at 3300, a launch at 3500, off at 4000
 *   hot calls recorded 600 + 700 ns of 3500
 * cx_write_overhead: a daemon snapshot (snapshot=1, light mode, no window
 * records) with the daemon's overhead records, start 500, end 8 s; a
 * cuStreamSynchronize of pid 100 at 1000 - 1050, then (budget 5 %, period
 * 1000 ms, calibrated entry 310 ns / return 420 ns throughout):
 *   1 s        calibrated, pid 0, no interval, duty 25 %
 *   2 s        estimate 4.25 % of tid 101 (pid 100), duty 25 %; the
 *              GPU-metrics sampler 0.1234 % of one CPU (1234 ppm)
 *   3 s        estimate 7.9 %
 *   3 s + 1    duty_down to 10 % (7.9 %)
 *   4 s        over_budget (6.1 %) at 10 %
 *   5 s        duty_up to 25 % (2.1 %)
 *   6 s        reason 9, which this build does not know (3 %)
 *   7 s        an overhead record cut short of its struct
 *   estimates over an interval: 2.1 3 4.25 6.1 7.9 7.9 -> median 5.175 %,
 *   max 7.9 %; one calibration, one duty cycle change down, one up, one
 *   over budget
 */
#ifndef GTRACE_TEST_CAPTURE_FIXTURES_H
#define GTRACE_TEST_CAPTURE_FIXTURES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "export/dump.h"
#include "export/export.h"
#include "format/trace_file.h"
#include "test_util.h"

#define CX_FUNC 0x4000

static inline void cx_open(const char *path, const char *options)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 500,
		.host = "testhost", .kernel = "6.18", .cmdline = "gtrace-bpf record",
		.options = options,
	};

	tu_w_create(path, &info);
}

static inline void cx_close(uint64_t end_ts)
{
	assert_int_equal(trace_writer__finish(W, &(struct gt_trailer){ .end_ts = end_ts }), 0);
	trace_writer__free(W);
	W = NULL;
}

static inline void cx_capture(uint16_t type, uint64_t ts, uint32_t pid, uint32_t kind,
			      uint32_t source, uint32_t index, uint32_t flags, uint64_t latency)
{
	struct gt_capture *c = tu_hdr(type, sizeof(*c), ts, pid, pid ? pid + 1 : 0, 0, 1);

	c->kind = kind;
	c->source = source;
	c->index = index;
	c->flags = flags;
	c->latency_ns = latency;
	tu_w_append(c);
}

static inline void cx_range(uint64_t ts, uint32_t pid, uint32_t kind, uint32_t index,
			    uint32_t flags)
{
	cx_capture(GT_REC_RANGE, ts, pid, kind, GT_CAPSRC_PROFILER, index, flags, 0);
}

static inline void cx_ret(uint64_t ts, uint32_t pid, unsigned api)
{
	struct gt_ret *r = tu_hdr(GT_REC_RET, sizeof(*r), ts, pid, pid + 1, api, 1);

	tu_w_append(r);
}

/* A launch of CX_FUNC on pid's thread pid + 1, 10 ns long. */
static inline void cx_launch(uint64_t ts, uint32_t pid)
{
	struct gt_launch *l = tu_hdr(GT_REC_LAUNCH, sizeof(*l), ts, pid, pid + 1,
				     GT_API_cuLaunchKernel, 1);

	l->func = CX_FUNC;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 1; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	tu_w_append(l);
	cx_ret(ts + 10, pid, GT_API_cuLaunchKernel);
}

/* A call with its exit dur ns later. */
static inline void cx_call(uint64_t ts, uint64_t dur, uint32_t pid, unsigned api, uint64_t a0,
			   uint64_t a1, uint64_t a2)
{
	struct gt_call *c = tu_hdr(GT_REC_CALL, sizeof(*c), ts, pid, pid + 1, api, 1);

	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = 7;
	tu_w_append(c);
	cx_ret(ts + dur, pid, api);
}

static inline void cx_proc_name(uint32_t pid, const char *s)
{
	size_t n = strlen(s) + 1;
	struct gt_name *nm = tu_hdr(GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), 400, pid, 0, 0, 1);

	nm->key = pid;
	nm->kind = GT_NAME_PROCESS;
	nm->len = (uint16_t)n;
	memcpy(nm->str, s, n);
	tu_w_append(nm);
}

static inline void cx_write_ranges(const char *path)
{
	struct gt_proc_evt *e;

	cx_open(path, "capture=full capture_range=cudaProfilerApi capture_range_end=repeat:2");
	cx_proc_name(100, "app");
	cx_proc_name(200, "worker");
	cx_launch(1000, 100);
	cx_launch(2000, 100);
	cx_range(3000, 100, GT_CAP_RANGE_OPEN, 1, 0);
	cx_launch(3100, 100);
	cx_launch(3200, 100);
	cx_launch(3300, 100);
	cx_call(3400, 50, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_range(3500, 200, GT_CAP_RANGE_OPEN, 2, 0);
	cx_launch(3600, 200);
	cx_call(3700, 20, 200, GT_API_cuMemcpyHtoDAsync_v2, 0x10000, 0x2000, 1000);
	cx_range(4000, 100, GT_CAP_RANGE_CLOSE, 1, 0);
	cx_launch(4500, 100);
	cx_range(5000, 200, GT_CAP_RANGE_CLOSE, 2, GT_CAP_F_EXIT);
	e = tu_hdr(GT_REC_EXIT, sizeof(*e), 5001, 200, 200, 0, 1);
	memcpy(e->comm, "worker", 6);
	tu_w_append(e);
	cx_range(6000, 100, GT_CAP_RANGE_OPEN, 3, GT_CAP_F_REFUSED);
	cx_launch(6100, 100);
	cx_close(10000);
}

static inline void cx_window(uint64_t ts, uint32_t kind, uint32_t index, uint64_t latency)
{
	cx_capture(GT_REC_CAPTURE, ts, 0, kind, GT_CAPSRC_WINDOW, index, 0, latency);
}

static inline void cx_write_light(const char *path)
{
	cx_open(path, "capture=light capture_range=none light_window_ns=1000 light_period_ns=5000");
	cx_window(1000, GT_CAP_WINDOW_OPEN, 1, 300);
	cx_launch(1100, 100);
	cx_launch(1500, 100);
	cx_call(1800, 10, 100, GT_API_cuMemcpyHtoDAsync_v2, 0x10000, 0x2000, 4096);
	cx_window(2000, GT_CAP_WINDOW_CLOSE, 1, 200);
	cx_call(3000, 100, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_call(3500, 100, 100, GT_API_cuMemAlloc_v2, 0x7ffc0000, 1 << 20, 0);
	cx_window(6000, GT_CAP_WINDOW_OPEN, 2, 300);
	cx_launch(6500, 100);
	cx_window(7000, GT_CAP_WINDOW_CLOSE, 2, 200);
	cx_close(10000);
}

static inline void cx_hot(uint64_t ts, bool live, uint32_t range, uint64_t latency)
{
	cx_capture(GT_REC_CAPTURE, ts, 0, live ? GT_CAP_HOT_LIVE : GT_CAP_HOT_OFF, GT_CAPSRC_NONE,
		   range, 0, latency);
}

static inline void cx_write_light_ranges(const char *path)
{
	cx_open(path, "capture=light capture_range=cudaProfilerApi capture_range_end=repeat");
	cx_range(1000, 100, GT_CAP_RANGE_OPEN, 1, 0);
	cx_call(1200, 50, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_hot(1400, true, 1, 400);
	cx_launch(1500, 100);
	cx_launch(1600, 100);
	cx_range(2000, 100, GT_CAP_RANGE_CLOSE, 1, 0);
	cx_hot(2000, false, 1, 100);
	cx_range(3000, 100, GT_CAP_RANGE_OPEN, 2, 0);
	cx_hot(3300, true, 2, 300);
	cx_launch(3500, 100);
	cx_range(4000, 100, GT_CAP_RANGE_CLOSE, 2, GT_CAP_F_CUT);
	cx_hot(4000, false, 2, 100);
	cx_close(4000);
}

#define CX_S 1000000000ull

/* An overhead record at ts of pid (tid pid + 1, 0 for pid 0) with f's
 * fields, size bytes long (a short one is cut at its end). */
static inline void cx_overhead_api(uint64_t ts, uint32_t pid, const struct gt_overhead *f, size_t size,
				   unsigned api)
{
	struct gt_overhead *o = tu_hdr(GT_REC_OVERHEAD, size, ts, pid, pid ? pid + 1 : 0, api, 0);

	memcpy((char *)o + sizeof(o->hdr), (const char *)f + sizeof(f->hdr), size - sizeof(o->hdr));
	tu_w_append(o);
}

static inline void cx_overhead(uint64_t ts, uint32_t pid, const struct gt_overhead *f, size_t size)
{
	cx_overhead_api(ts, pid, f, size, 0);
}

/* The fields of one interval's record of cx_write_overhead: estimate est and
 * duty cycle duty (ppm), why it was written. */
static inline struct gt_overhead cx_interval(uint32_t est, uint32_t duty, uint32_t reason)
{
	return (struct gt_overhead){
		.interval_ns = CX_S, .hits = 12000, .probe_ns = 40760000, .total_ns = 50000000,
		.bpf_ns = 6000000, .estimate_ppm = est, .budget_ppm = 50000, .duty_ppm = duty,
		.period_ms = 1000, .hit_ns = 310, .ret_ns = 420, .reason = reason,
	};
}

static inline void cx_write_overhead_records(void)
{
	struct gt_overhead o = cx_interval(0, 250000, GT_OVH_CALIBRATED);
	const size_t n = sizeof(struct gt_overhead);

	o.interval_ns = o.hits = o.probe_ns = o.total_ns = o.bpf_ns = 0;
	cx_overhead(1 * CX_S, 0, &o, n);
	o = cx_interval(42500, 250000, GT_OVH_ESTIMATE);
	o.sampler_ppm = 1234;
	cx_overhead(2 * CX_S, 100, &o, n);
	o = cx_interval(79000, 250000, GT_OVH_ESTIMATE);
	cx_overhead(3 * CX_S, 100, &o, n);
	o = cx_interval(79000, 100000, GT_OVH_DUTY_DOWN);
	cx_overhead(3 * CX_S + 1, 100, &o, n);
	o = cx_interval(61000, 100000, GT_OVH_OVER);
	cx_overhead(4 * CX_S, 100, &o, n);
	o = cx_interval(21000, 250000, GT_OVH_DUTY_UP);
	cx_overhead(5 * CX_S, 100, &o, n);
	o = cx_interval(30000, 250000, 9);
	cx_overhead(6 * CX_S, 100, &o, n);
	o = cx_interval(10000, 250000, GT_OVH_ESTIMATE);
	cx_overhead(7 * CX_S, 100, &o, offsetof(struct gt_overhead, cut) - 8);	/* cut short */
}

static inline void cx_write_overhead(const char *path)
{
	cx_open(path, "capture=light capture_range=none light_window_ns=250000000 "
		      "light_period_ns=1000000000 snapshot=1");
	cx_call(1000, 50, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_write_overhead_records();
	cx_close(8 * CX_S);
}

/* A light-mode daemon snapshot in which the overhead budget shed
 * cuStreamSynchronize at 5000 (2 calls cut at the swap) and gave it back at
 * 9000: windows [1000, 2000], [6000, 7000] and [11000, 12000]; the sync
 * always-on at 3000 and 9500, inside window 2 at 6200; cuCtxSynchronize,
 * never shed, at 3200 and 8000. */
static inline void cx_write_shed(const char *path)
{
	struct gt_overhead o = cx_interval(79000, 100000, GT_OVH_SHED);
	const size_t n = sizeof(struct gt_overhead);

	cx_open(path, "capture=light capture_range=none light_window_ns=1000 light_period_ns=5000 "
		      "snapshot=1");
	cx_window(1000, GT_CAP_WINDOW_OPEN, 1, 300);
	cx_launch(1100, 100);
	cx_window(2000, GT_CAP_WINDOW_CLOSE, 1, 200);
	cx_call(3000, 100, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_call(3200, 100, 100, GT_API_cuCtxSynchronize, 0, 0, 0);
	o.cut = 2;
	cx_overhead_api(5000, 100, &o, n, GT_API_cuStreamSynchronize);
	cx_window(6000, GT_CAP_WINDOW_OPEN, 2, 300);
	cx_call(6200, 100, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_window(7000, GT_CAP_WINDOW_CLOSE, 2, 200);
	cx_call(8000, 100, 100, GT_API_cuCtxSynchronize, 0, 0, 0);
	o = cx_interval(21000, 100000, GT_OVH_RESTORE);
	cx_overhead_api(9000, 100, &o, n, GT_API_cuStreamSynchronize);
	cx_call(9500, 100, 100, GT_API_cuStreamSynchronize, 7, 0, 0);
	cx_window(11000, GT_CAP_WINDOW_OPEN, 3, 300);
	cx_window(12000, GT_CAP_WINDOW_CLOSE, 3, 200);
	cx_close(13000);
}

/* ------------------------------------------------------------ readers */

/* dump of path, --summary or not, into r; it must succeed and say nothing on
 * stderr, or, for a fixture with a record too short for its type, exit 1
 * after the one line of the readers' rule. */
static inline void cx_run_dump(const char *path, bool summary, struct run *r)
{
	struct dump_opts o = { .path = path, .summary = summary };

	tu_run_open(r, &o.out, &o.err);
	r->rc = dump__run(&o);
	tu_run_close(o.out, o.err);
	tu_check_rule(path, r->rc, r->err, summary ? "the summary covers the records read"
						   : "showing the records read");
}

/* The number after the row title of a --summary section (0: none there). */
static inline unsigned long long cx_summary_row(const char *out, const char *section, const char *title)
{
	const char *s = strstr(out, section), *row;
	char key[64];
	unsigned long long v = 0;

	assert_non_null(s);
	snprintf(key, sizeof(key), "\n  %s ", title);
	row = strstr(s, key);
	if (!row)
		fail_msg("no row '%s' in %s", title, section);
	assert_int_equal(sscanf(row + strlen(key), "%llu", &v), 1);
	return v;
}

/* How often needle occurs in text. */
static inline int cx_count_of(const char *text, const char *needle)
{
	size_t len = strlen(needle);
	int n = 0;

	for (size_t i = 0; text[i]; i++)
		n += !strncmp(text + i, needle, len);
	return n;
}

/* The count of dump --summary's "process events" line. */
static inline unsigned long long cx_process_events(const char *out)
{
	const char *row = strstr(out, "\nprocess events ");
	unsigned long long n = 0;

	assert_non_null(row);
	assert_int_equal(sscanf(row + strlen("\nprocess events "), "%llu", &n), 1);
	return n;
}

/* What an export's write function makes of path. */
static inline char *cx_export_text(const char *path, int (*write)(struct trace_reader *, FILE *, const char **))
{
	struct trace_reader *r;
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = tu_memstream(&buf, &len);

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(write(r, f, &why), 0);
	trace_reader__close(r);
	fclose(f);
	return buf;
}

#endif /* GTRACE_TEST_CAPTURE_FIXTURES_H */
