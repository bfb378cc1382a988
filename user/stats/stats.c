// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf stats FILE`: summary reports of a trace, modelled on
 * `nsys stats` so that its users find the same reports, columns and order.
 *
 * Reports (-r, comma-separated, default all in this order):
 *   cuda_api_sum       per libcuda api: Time (%), Total Time, Num Calls, Avg,
 *                      Med, Min, Max, StdDev, Incomplete, Name; by total time,
 *                      highest first
 *   cuda_launch_sum    per kernel name: Launches, Launches (%), Shapes
 *                      (distinct grid/block pairs), Grid and Block (the most
 *                      frequent pair), Launch API (the launch symbols used);
 *                      graph launches are one row "[CUDA graph launch]"
 *   cuda_mem_size_sum  per copy direction (HtoD, DtoH, ... as in dump's
 *                      "kind") and "memset": Total, Count, Avg, Med, Min,
 *                      Max, StdDev bytes; failed calls left out
 *   cuda_sync_sum      per waiting api (ctx/stream/event synchronize, stream
 *                      and event queries, cuStreamWaitEvent) and process:
 *                      Time (%), Total Time, Num Calls, Avg, Med, Min, Max,
 *                      StdDev, Incomplete, PID, Name
 *   cuda_sync_site_sum those of them with a stack (--stacks sync) per call
 *                      site (the first frame past the CUDA libraries):
 *                      the same times, Incomplete, Processes, Call Site
 *   process_sum        per process: PID, Events (its records), Calls, API
 *                      Time, Launches, Sync Time, Command (the decoder's
 *                      process name: command line, else comm; the newest
 *                      when a pid exec'd more than once)
 *   ioctl_sum          per NVIDIA device, ioctl request and RM command or
 *                      class: the time columns, Errors, Device, Name
 * and of the GPU side of a merged trace (the CUPTI agent's records):
 *   cuda_gpu_kern_sum  per kernel (demangled name): Time (%), Total Time,
 *                      Instances, Avg, Med, Min, Max, StdDev, Name; times
 *                      on the GPU, by total time, highest first
 *   cuda_gpu_mem_time_sum  per copy direction and "memset": Time (%), Total
 *                      Time, Count, Avg, Med, Min, Max, StdDev, Operation
 *   cuda_gpu_mem_size_sum  the same groups: the columns of cuda_mem_size_sum
 *   nvtx_sum           per NVTX range message: Time (%), Total Time,
 *                      Instances, Avg, Med, Min, Max, StdDev, Range (marks
 *                      left out)
 *   gpu_launch_latency per process: Count, Min, P50, P90, P99, Max of the
 *                      latency from a launch call's entry to its kernel's
 *                      start on the GPU (linked kernels; nearest-rank
 *                      percentiles), Causality (linked kernels that started
 *                      before their call, left out of the latencies), PID
 * A trace without GPU records gives these the usual SKIPPED line.  Capture
 * control (stats_capture.c) has one:
 *   capture_sum        per capture range and light-mode window: Number,
 *                      Kind, Source, PID, TID, Start and End (since the
 *                      recording started), Duration, Hot From (how long after
 *                      its start a range's hot calls began to be recorded),
 *                      State; notes with the count and the time covered,
 *                      and the anomalies; and, in a daemon snapshot with
 *                      overhead records, a note of what they say (the
 *                      daemon's estimates: median and max, the budget, the
 *                      duty cycle's changes), also when there are no rows,
 *                      and the JSON document's "overhead"
 * and GPU metrics (stats_gpum.c, a trace recorded with --gpu-metrics):
 *   gpu_metrics_sum    per GPU and metric in each scope: GPU, Scope, Of,
 *                      Metric, Unit, Samples, Mean, P50, P95, Max (exact in
 *                      the metric's unit; Mean rounded to a millionth,
 *                      percentiles nearest-rank), Attribution; scopes: the
 *                      run, each capture range and window (by time), each
 *                      kernel that was 95 % of a GPU's work or more for 3
 *                      samples or more (a merged trace: sole occupancy),
 *                      each process' GPU memory; with --range, that
 *                      range's scope only
 * and devices (stats_dev.c):
 *   cuda_device_sum    per process and device: PID, Device ("unknown" for the
 *                      calls the trace did not place), Launches, Copies, Copy
 *                      Bytes, Peer Out and Peer In (bytes), Sets, Syncs, Sync
 *                      Time, GPU Kernels and GPU Time (merged traces)
 * and NCCL (stats_nccl.c):
 *   nccl_sum           per process, communicator and NCCL api: the time
 *                      columns (host time of the calls), Bytes, Failed, PID,
 *                      Rank, Communicator, Incomplete, Name
 * and a job trace's hosts (stats_hosts.c):
 *   host_sum           per host: Host, Name, Offset (ms), Aligned By,
 *                      Collectives, Residual, Ranks, Calls, Launches, GPU
 *                      Kernels, GPU Time, NCCL Calls, NCCL Time
 * In a trace whose launches ran on more than one device cuda_launch_sum has
 * a Device column before Name and a row per kernel and device; so has
 * cuda_gpu_kern_sum when its GPU kernels did.
 *
 * --range N limits every report to capture range N (the records of its
 * process inside it), or window N (of every process inside it); the table
 * says so before the reports, the JSON document in "range".  In light mode
 * the reports of hot calls (cuda_api_sum, cuda_launch_sum,
 * cuda_mem_size_sum, cuda_sync_sum, process_sum, gpu_launch_latency) are
 * sampled where hot calls were not recorded all through what they cover:
 * a note says how much was, and a Sampled column which rows it touches.
 * stats_capture.c has the rules.
 *
 * Statistics.  Times are those of calls with an exit (the decoder's dur); a
 * call without one is counted in Num Calls and in Incomplete, not in the
 * times; a launch recorded at entry only (no return probe by design) in Num
 * Calls only.  A group with no call with an exit has no time at all: Time
 * (%) and Total Time are "no value" too, not 0 (and so is a process' API
 * Time when none of its calls has an exit).  Med is the exact median (the mean of the two middle values for an
 * even count): every duration is kept (8 bytes a call) and one selection per
 * group runs at the end.  StdDev is the sample standard deviation (n - 1),
 * 0 for a single call.  Time (%) is the share of the report's total time.
 * Rows tie-break by name or pid, so output is deterministic.
 *
 * Formats (--format):
 *   table  (default) per report: an empty line, " ** CUDA API Summary
 *          (cuda_api_sum):", an empty line, the column titles, dashes, the
 *          rows; numbers right-aligned with thousands separators, "-" for no
 *          value (Avg of an api with no completed call), footnotes under the
 *          table.  A report with no rows says " SKIPPED: FILE does not
 *          contain ...".  The layout is for people, not a stable interface.
 *   csv    one report per file, so that any CSV reader loads it: a header
 *          row of the column titles (time columns with their unit: "Total
 *          Time (ns)"), one row per line; numbers without separators, no
 *          value = empty field, RFC 4180 quoting (kernel names have
 *          commas).  On stdout one report (-r); -o BASE writes every report
 *          asked for to BASE_<report>.csv (like nsys; a ".csv" ending BASE
 *          is dropped); several reports on stdout are a command-line error.
 *   json   one document: {"file": PATH, "timeunit": "ns", "truncated": false
 *          [, "damage": WHY], "reports": [{"report": "cuda_api_sum", "title":
 *          "CUDA API Summary", "rows": [{"time_pct": 55.3, "total_time": ...,
 *          "name": "cuLaunchKernel"}, ...]}, ...]}; keys are snake_case
 *          column names, no value = null, reports in the order asked.
 * --timeunit ns|us|ms|s scales every time column in all formats: exact
 * columns (Total, Min, Max) keep every digit (1500 ns = 1.500 us), averages
 * one decimal more than that (ns: 1).  Percentages and byte averages have
 * one decimal.
 *
 * Output (-o): table and json to that file, csv to one file per report;
 * each written under a temporary name, 0600 (the reports hold command
 * lines), and renamed into place once every file is complete; an existing
 * file is refused before the work unless --force.  "-" is stdout.
 *
 * Errors: an unknown report or time unit, a bad --range or one the trace
 * does not have, csv of several reports without -o: one line on err,
 * status 2; an unreadable file or one that is not a
 * trace, an output that exists: one line, status 1, before any output.  A truncated
 * trace: the reports of what was read, then one warning line, status 0.
 *
 * Speed: one pass over the records (the decoder's), no allocation per call
 * but the growth of the value vectors; per call, array indexing, and for
 * launches a kernel lookup by the address of the decoder's name string
 * (checked with strcmp, hashed only on a miss) and one of the shape.  About
 * 5-7 million records/s on one core here (tools/bench-export.sh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "lib/hmap.h"
#include "format/nv_ioctl.h"
#include "stats/stats.h"
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"
#include "format/trace_file.h"

const char *const stats_report_names[] = {
#define STATS_REPORT(id, name, title, what, cols, notes, hot) name,
#include "stats/report_table.h"
#undef STATS_REPORT
	NULL,
};


/* ---- running ------------------------------------------------------------ */

#define REPORT(nm, ttl, what, c, n) \
	{ .name = nm, .title = ttl, .empty = what, .cols = c, \
	  .ncols = (int)(sizeof(c) / sizeof(c[0])), .notes = n }

static const struct stats_report report_templates[SR__COUNT] = {
#define STATS_REPORT(id, name, title, what, cols, notes, hot) [SR_##id] = REPORT(name, title, what, cols, notes),
#include "stats/report_table.h"
#undef STATS_REPORT
};

/* The reports with figures of hot calls, sampled in light mode: the column
 * of the api a row is of (only its hot apis' rows are), or ALL_ROWS. */
#define NOT_HOT -2
#define ALL_ROWS -1
static const int8_t hot_rows[SR__COUNT] = {
#define STATS_REPORT(id, name, title, what, cols, notes, hot) [SR_##id] = hot,
#include "stats/report_table.h"
#undef STATS_REPORT
};

static const struct stats_col sampled_col = { "Sampled", "sampled", SK_BOOL };


/* The reports with a row per kernel get a Device column before Name and a
 * row per kernel and device when their kernels ran on more than one. */
static bool by_device(int which, const struct stats_acc *s)
{
	return (which == SR_CUDA_LAUNCH_SUM && stats_devs_many(s->launch_devs)) ||
	       (which == SR_CUDA_GPU_KERN_SUM && stats_devs_many(s->gkern_devs));
}

static const struct stats_col device_col = { "Device", "device", SK_STR };

static int build(int which, struct stats_run *run, struct stats_report *r)
{
	struct stats_acc *s = run->s;

	switch (which) {
	case SR_CUDA_API_SUM: return stats_cpu__api_sum(s, r);
	case SR_CUDA_LAUNCH_SUM: return stats_cpu__launch_sum(s, r, by_device(which, s));
	case SR_CUDA_MEM_SIZE_SUM: return stats_gpu__size_rows(s->mem, r);
	case SR_CUDA_SYNC_SUM: return stats_cpu__sync_sum(s, r);
	case SR_CUDA_SYNC_SITE_SUM: return stats_cpu__site_sum(s, r);
	case SR_CUDA_GPU_SITE_SUM: return stats_cpu__gpu_site_sum(s, r);
	case SR_PROCESS_SUM: return stats_cpu__proc_sum(s, r, run->d);
	case SR_IOCTL_SUM: return stats_cpu__ioctl_sum(s, r, &run->majors);
	case SR_CUDA_GPU_KERN_SUM: return stats_gpu__named_sum(&s->gkern, r, by_device(which, s) ? s : NULL);
	case SR_CUDA_GPU_MEM_TIME_SUM: return stats_gpu__mem_time_sum(s, r);
	case SR_CUDA_GPU_MEM_SIZE_SUM: return stats_gpu__size_rows(s->gmem_size, r);
	case SR_NVTX_SUM: return stats_gpu__named_sum(&s->nvtx, r, NULL);
	case SR_GPU_LAUNCH_LATENCY: return stats_gpu__latency(s, r);
	case SR_GPU_METRICS_SUM: return stats_gpum__sum(run, r);
	case SR_CUDA_DEVICE_SUM: return stats_dev__sum(s, r);
	case SR_NCCL_SUM: return stats_nccl__sum(s, r);
	case SR_HOST_SUM: return stats_hosts__sum(s, r);
	case SR_CAPTURE_SUM:
	default: return stats_capture__sum(run, r);
	}
}

/* Builds and writes report which: in a sampled run, a report of hot calls
 * gets the Sampled column and the sampled note first. */
static int write_report(struct stats_writer *w, int which, struct stats_run *run)
{
	struct stats_report r = report_templates[which];
	struct stats_col cols[16];
	const char *notes[8] = { 0 };
	bool dev = by_device(which, run->s);
	bool mark = run->sampled && hot_rows[which] != NOT_HOT &&
		    r.ncols + dev < (int)(sizeof(cols) / sizeof(cols[0]));
	int err, n = 0;

	if (which == SR_CAPTURE_SUM) {
		r.notes = stats_capture__notes(run);
		r.empty_notes = stats_capture__empty_notes(run);
	}
	if (dev || mark) {
		memcpy(cols, r.cols, (size_t)r.ncols * sizeof(cols[0]));
		if (dev) {
			cols[r.ncols] = cols[r.ncols - 1];	/* Name stays last */
			cols[r.ncols++ - 1] = device_col;
		}
		r.cols = cols;
	}
	if (mark) {
		cols[r.ncols++] = sampled_col;
		notes[n++] = run->sampled_note;
		if (run->shed)
			notes[n++] = run->shed_note;
	}
	if (which == SR_CUDA_API_SUM && run->lookups)
		notes[n++] = run->lookups_note;
	if (n) {
		for (const char *const *p = r.notes; p && *p && n < 7; p++)
			notes[n++] = *p;
		r.notes = notes;
	}
	err = build(which, run, &r);
	if (which == SR_GPU_METRICS_SUM)
		r.notes = stats_gpum__notes(run);
	if (!err && mark)
		stats_capture__mark(run, &r, hot_rows[which]);
	if (!err)
		err = stats_writer__report(w, &r);
	stats_report__free(&r);
	return err;
}

/* Parses the -r list into report indices, in the order given, each once.
 * Returns 0, or -EINVAL with the offending name copied into bad. */
static int select_reports(const char *list, int *sel, int *nsel, char *bad, size_t badlen)
{
	const char *p = list;

	*nsel = 0;
	if (!list) {
		for (int i = 0; i < SR__COUNT; i++)
			sel[(*nsel)++] = i;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		const char *q = p, *e = p + len;
		bool dup = false;
		int i;

		/* "-r 'cuda_api_sum, process_sum'" is meant as two names */
		while (q < e && *q == ' ')
			q++;
		while (e > q && e[-1] == ' ')
			e--;
		for (i = 0; i < SR__COUNT; i++)
			if (strlen(stats_report_names[i]) == (size_t)(e - q) &&
			    !memcmp(stats_report_names[i], q, e - q))
				break;
		if (i == SR__COUNT) {
			snprintf(bad, badlen, "%.*s", (int)(e - q), q);
			return -EINVAL;
		}
		for (int j = 0; j < *nsel; j++)
			dup |= sel[j] == i;
		if (!dup)
			sel[(*nsel)++] = i;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* Reads the whole trace into s.  Returns 0 or a negative errno; *why says
 * what failed ("read", "decode") for the message. */
static int acc_record(void *ctx, const struct gt_hdr *h)
{
	return stats_acc__record(ctx, h);
}

static int read_trace(struct trace_reader *r, struct gt_decoder *d, struct stats_acc *s,
		      const char **why)
{
	struct gt_pass p = { .ctx = s, .record = acc_record };
	enum gt_pass_fail fail;
	int rc = gt_pass__run(r, d, &p, &fail);

	*why = fail == GT_PASS_READ ? "read" : "decode";
	return rc;
}

int stats__write_reports(const struct stats_opts *o, FILE *out, const int *sel, int nsel,
			  struct stats_run *run, const char *damage)
{
	struct stats_writer *w = stats_writer__new(out, o->format, o->timeunit, o->path, damage);
	int err = 0;

	if (!w)
		return -ENOMEM;
	stats_writer__set_head(w, run->head_text[0] ? run->head_text : NULL,
			       run->head_json[0] ? run->head_json : NULL);
	for (int i = 0; i < nsel && !err; i++)
		err = write_report(w, sel[i], run);
	if (!err)
		err = stats_writer__finish(w);
	stats_writer__free(w);
	return err;
}

int stats__check_reports(const char *list, char *bad, size_t badlen)
{
	int sel[SR__COUNT], nsel;

	return select_reports(list, sel, &nsel, bad, badlen);
}

int stats__check_range(const char *range)
{
	struct stats_range_arg a;

	return stats_capture__parse_range(range, &a);
}

/* The capture spans of path in a pass of their own, before the one of the
 * reports: --range must know where its span ends before its records come.
 * Returns 0 or 1 after one line on err. */
static int read_spans(const char *path, struct capture_spans *c, FILE *err)
{
	struct trace_reader *r = NULL;
	const char *msg = NULL;
	int rc = trace_reader__open(path, &r, &msg);

	if (!rc)
		rc = capture_spans__read(c, r);
	trace_reader__close(r);
	if (rc)
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", path, msg ? msg : strerror(-rc));
	return rc ? 1 : 0;
}

/* ---- the run as a library (stats.h) ----------------------------------- */

struct stats_run *stats_run__new(struct trace_reader *r)
{
	struct stats_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	run->s = stats_acc__new();
	run->cap = capture_spans__new(trace_reader__info(r));
	if (!run->s || !run->cap) {
		stats_run__free(run);
		return NULL;
	}
	/* the spans come with the other records (stats__run reads them in a
	 * pass of their own for --range) */
	run->s->cap = run->cap;
	/* a trace with GPU metric samples: its GPU records are kept for
	 * gpu_metrics_sum's attribution to kernels */
	run->s->gpum_work = gt_file_info__option(trace_reader__info(r), "gpu_metrics", NULL) != NULL;
	nv_majors__from_info(trace_reader__info(r), &run->majors);
	return run;
}

void stats_run__set_decoder(struct stats_run *run, struct gt_decoder *d)
{
	run->d = d;
	run->s->d = d;
}

int stats_run__record(struct stats_run *run, const struct gt_hdr *rec)
{
	return stats_acc__record(run->s, rec);
}

int stats_run__call(struct stats_run *run, const struct gt_callrec *c)
{
	return stats_acc__call(run->s, c);
}

int stats_run__other(struct stats_run *run, const struct gt_hdr *rec)
{
	return stats_acc__other(run->s, rec);
}

int stats_run__nccl(struct stats_run *run, const struct gt_ncclrec *n)
{
	return stats_nccl__call(run->s, n);
}

void stats_run__finish(struct stats_run *run, struct trace_reader *r)
{
	if (run->s->cap) {
		const struct gt_trailer *t = trace_reader__trailer(r);
		uint64_t last = gt_decoder__last_ts(run->d);

		capture_spans__finish(run->cap, t && t->end_ts > last ? t->end_ts : last);
	}
	stats_capture__describe(run);
}

int stats_run__write(struct stats_run *run, FILE *out, enum stats_format fmt, const char *reports,
		     const char *path, const char *damage)
{
	struct stats_opts o = { .path = path, .reports = reports, .format = fmt, .timeunit = "ns" };
	int sel[SR__COUNT], nsel;
	char bad[64];

	if (select_reports(reports, sel, &nsel, bad, sizeof(bad)))
		return -EINVAL;
	return stats__write_reports(&o, out, sel, nsel, run, damage);
}

int stats_run__sync_values(struct stats_run *run, stats_values_fn fn, void *ctx)
{
	size_t n;
	struct sync_acc **v = (struct sync_acc **)sorted_values(&run->s->syncs, stats_cpu__cmp_sync, &n);
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++)
		rc = fn(ctx, gt_api__name(v[i]->api), v[i]->pid, v[i]->d.dur.v, v[i]->d.dur.n);
	free(v);
	return rc;
}

int stats_run__size_values(struct stats_run *run, bool gpu, stats_values_fn fn, void *ctx)
{
	struct dur_acc *a = gpu ? run->s->gmem_size : run->s->mem;
	int rc = 0;

	for (int k = 0; k < MEM_KINDS && !rc; k++)
		if (a[k].dur.n)
			rc = fn(ctx, stats_acc__mem_name(k), 0, a[k].dur.v, a[k].dur.n);
	return rc;
}

static int cmp_gstack(const void *pa, const void *pb)
{
	const struct gstack_acc *a = *(struct gstack_acc *const *)pa, *b = *(struct gstack_acc *const *)pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

int stats_run__gpu_stacks(struct stats_run *run, stats_stack_fn fn, void *ctx)
{
	size_t n;
	struct gstack_acc **v = (struct gstack_acc **)sorted_values(&run->s->gstacks, cmp_gstack, &n);
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++)
		rc = fn(ctx, v[i]->stack, v[i]->ns, v[i]->kernels);
	if (!rc && run->s->gsite_none.calls)
		rc = fn(ctx, 0, run->s->gsite_none.total, run->s->gsite_none.calls);
	free(v);
	return rc;
}

const struct capture_spans *stats_run__spans(const struct stats_run *run)
{
	return run->cap;
}

void stats_run__free(struct stats_run *run)
{
	if (!run)
		return;
	stats_acc__free(run->s);
	capture_spans__free(run->cap);
	free(run);
}

int stats__run(const struct stats_opts *o)
{
	FILE *err = o->err ? o->err : stderr, *out = o->out ? o->out : stdout;
	struct trace_reader *r = NULL;
	struct gt_decoder *d = NULL;
	const char *msg = NULL, *why = NULL, *damage = NULL;
	int sel[SR__COUNT], nsel, rc, ret = 1;
	bool to_file = o->output && strcmp(o->output, "-");
	struct out_file of[SR__COUNT] = { 0 };
	struct stats_range_arg range;
	struct stats_run *run = NULL;
	int nof = 0;
	char bad[64];

	if (select_reports(o->reports, sel, &nsel, bad, sizeof(bad))) {
		fprintf(err, "gtrace-bpf: unknown report '%s' (", bad);
		for (int i = 0; stats_report_names[i]; i++)
			fprintf(err, "%s%s", i ? ", " : "", stats_report_names[i]);
		fprintf(err, ")\n");
		return 2;
	}
	if (stats_timeunit__decimals(o->timeunit ? o->timeunit : "ns") < 0) {
		fprintf(err, "gtrace-bpf: unknown time unit '%s' (ns, us, ms, s)\n", o->timeunit);
		return 2;
	}
	if (o->range && stats_capture__parse_range(o->range, &range)) {
		fprintf(err, "gtrace-bpf: bad range '%s': give the number of a capture range "
			"(1, 2, ...) or of a light-mode window (w1, w2, ...)\n", o->range);
		return 2;
	}
	/* CSV readers take one table a file: several reports in one stream
	 * would not load */
	if (o->format == STATS_CSV && nsel > 1 && !to_file) {
		fprintf(err, "gtrace-bpf: --format csv writes one report per file: choose one with "
			"-r REPORT, or give -o BASE for BASE_<report>.csv each\n");
		return 2;
	}
	/* refused before the work, not after it; the installer catches a file
	 * that appears meanwhile */
	if (to_file) {
		rc = stats_files__names(o, sel, nsel, of, &nof);
		if (rc) {
			fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(-rc));
			goto out;
		}
		if (stats_files__check(o, of, nof, err))
			goto out;
	}
	rc = trace_reader__open(o->path, &r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, msg ? msg : strerror(-rc));
		goto out;
	}
	run = stats_run__new(r);
	d = run ? gt_decoder__new(stats_acc__call, stats_acc__other, run->s) : NULL;
	if (d)
		gt_decoder__set_nccl_cb(d, stats_nccl__call);
	if (!d) {
		fprintf(err, "gtrace-bpf: failed to compute statistics: %s\n", strerror(ENOMEM));
		goto out;
	}
	stats_run__set_decoder(run, d);
	/* the GPU records are kept for gpu_metrics_sum's attribution only when
	 * it is asked for */
	{
		bool gpum = false;

		for (int i = 0; i < nsel; i++)
			gpum |= sel[i] == SR_GPU_METRICS_SUM;
		run->s->gpum_work &= gpum;
	}
	if (o->range) {
		/* the spans in a pass of their own, the reports' pass limited */
		run->s->cap = NULL;
		if (read_spans(o->path, run->cap, err))
			goto out;
		rc = stats_capture__select(run, &range, o->path, err);
		if (rc) {
			ret = rc;
			goto out;
		}
	}
	rc = read_trace(r, d, run->s, &why);
	if (rc) {
		if (!strcmp(why, "read"))
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, strerror(-rc));
		else
			fprintf(err, "gtrace-bpf: failed to decode %s: %s\n", o->path, strerror(-rc));
		goto out;
	}
	if (trace_reader__truncated(r))
		damage = trace_reader__damage(r);
	stats_run__finish(run, r);
	if (to_file) {
		if (stats_files__write(o, of, nof, sel, nsel, run, damage, err))
			goto out;
	} else {
		rc = stats__write_reports(o, out, sel, nsel, run, damage);
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot write standard output: %s\n", strerror(-rc));
			goto out;
		}
	}
	/* the reports of what was read are written; a damaged input still exits 1 */
	ret = trace_reader__report_damage(r, o->path, "the reports cover the records read", err);
out:
	stats_files__free(of, nof);
	gt_decoder__free(d);
	stats_run__free(run);
	trace_reader__close(r);
	return ret;
}
