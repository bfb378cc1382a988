// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf diff` over fixture traces with planted iterations.  Each
 * fixture is one process running STEPS steps; step i lasts
 * scale * 1 ms * (1 + (i % 5) / 10) and the next begins scale * 0.2 ms after
 * its end, so that an optimized run at half the baseline's scale is
 * exactly 2x faster per iteration whatever marks the iterations: NVTX
 * ranges "step i" (written after the other records, as a merged trace has
 * them), capture ranges around the steps, a CUDA graph launched once a
 * step, or only the repeating launches.  Each step launches the fixture's
 * kernels (entry only, as the recorder does by default) with their GPU
 * records linked, serial on the GPU, and ends with a cuStreamSynchronize
 * of scale * 100 us.
 *
 * Baseline kernels k1 100 us, k2 300 us, k4 50 us; optimized k1 100 us,
 * k2 150 us, k3 20 us: k1 unchanged, k2 faster by 150 us per step, k3
 * added, k4 removed; GPU busy 450 us against 270 us a step (1.667x).
 */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "diff/diff.h"
#include "diff/diff_int.h"
#include "stats_fixtures.h"

#define STEPS 10
#define PID 100
#define TID 101
#define T0 1000000ull

enum mark { M_NVTX, M_CAPTURE, M_GRAPH, M_KERNELS };

struct kern {
	const char *mangled;
	uint64_t func;
	uint64_t gpu_ns;
};

struct fixture {
	const char *proc;	/* the process' command line */
	double scale;		/* step times */
	enum mark mark;
	bool gpu;		/* GPU records */
	int steps;		/* 0: STEPS */
	const struct kern *k;
	int nk;
};

static const struct kern K_BASE[] = {
	{ "_Z2k1v", 0x4001, 100000 }, { "_Z2k2v", 0x4002, 300000 }, { "_Z2k4v", 0x4004, 50000 },
};
static const struct kern K_OPT[] = {
	{ "_Z2k1v", 0x4001, 100000 }, { "_Z2k2v", 0x4002, 150000 }, { "_Z2k3v", 0x4003, 20000 },
};
static const struct kern K_OTHER[] = {
	{ "_Z5otherv", 0x4001, 100000 }, { "_Z6other2v", 0x4002, 100000 },
};

static uint64_t step_ns(const struct fixture *f, int i)
{
	return (uint64_t)(f->scale * 1e6 * (1.0 + (double)(i % 5) / 10.0) + 0.5);
}

static void w_gpu_kernel(uint64_t ts, uint64_t dur, uint64_t launch_ts, const char *name)
{
	size_t n = strlen(name) + 1;
	struct gt_gpu_kernel *k = hdr(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + n), ts, PID, TID, 0);

	k->dur = dur;
	k->launch_ts = launch_ts;
	k->stream = 7;
	k->flags = GT_GPU_LINKED | GT_GPU_API_MATCHED;
	k->len = (uint16_t)n;
	memcpy(k->name, name, n);
	w_put(k);
}

static void w_nvtx(uint64_t ts, uint64_t dur, const char *name)
{
	size_t n = strlen(name) + 1;
	struct gt_nvtx *v = hdr(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*v) + n), ts, PID, TID, 0);

	v->dur = dur;
	v->len = (uint16_t)n;
	memcpy(v->name, name, n);
	w_put(v);
}

static void w_range(uint64_t ts, uint32_t kind, uint32_t index)
{
	struct gt_capture *c = hdr(GT_REC_RANGE, sizeof(*c), ts, PID, TID, 0);

	c->kind = kind;
	c->source = GT_CAPSRC_PROFILER;
	c->index = index;
	w_put(c);
}

static void write_fixture(const char *path, const struct fixture *f)
{
	int steps = f->steps ? f->steps : STEPS;
	uint64_t t = T0, starts[64], durs[64], gpu_free = 0;

	w_open(path);
	w_str(GT_REC_NAME, 10, PID, 0, PID, GT_NAME_PROCESS, f->proc);
	for (int j = 0; j < f->nk; j++) {
		w_str(GT_REC_CALL_STR, 100 + j * 100, PID, API(cuModuleGetFunction), 0x3000, 0,
		      f->k[j].mangled);
		w_ret(150 + j * 100, PID, TID, API(cuModuleGetFunction), 0, f->k[j].func, GT_RET_OUT);
	}
	for (int i = 0; i < steps; i++) {
		uint64_t d = step_ns(f, i), sync = (uint64_t)(f->scale * 100000), l = t + 10000;

		starts[i] = t;
		durs[i] = d;
		if (f->mark == M_CAPTURE)
			w_range(t, GT_CAP_RANGE_OPEN, (uint32_t)i + 1);
		if (f->mark == M_GRAPH) {
			w_call(l, PID, TID, API(cuGraphLaunch), 0x77, 7, 0);
			w_ret(l + 3000, PID, TID, API(cuGraphLaunch), 0, 0, 0);
		}
		for (int j = 0; f->mark != M_GRAPH && j < f->nk; j++, l += 20000) {
			uint64_t g = l + 5000 > gpu_free ? l + 5000 : gpu_free;

			w_launch(l, ENTRY_ONLY, PID, TID, API(cuLaunchKernel), f->k[j].func, 64);
			if (f->gpu) {
				w_gpu_kernel(g, f->k[j].gpu_ns, l, f->k[j].mangled);
				gpu_free = g + f->k[j].gpu_ns;
			}
		}
		w_call(t + d - sync - 1000, PID, TID, API(cuStreamSynchronize), 7, 0, 0);
		w_ret(t + d - 1000, PID, TID, API(cuStreamSynchronize), 0, 0, 0);
		if (f->mark == M_CAPTURE)
			w_range(t + d, GT_CAP_RANGE_CLOSE, (uint32_t)i + 1);
		t += d + (uint64_t)(f->scale * 200000);
	}
	/* the merger puts NVTX ranges after the records of the calls */
	for (int i = 0; f->mark == M_NVTX && i < steps; i++) {
		char name[32];

		snprintf(name, sizeof(name), "step %d", i);
		w_nvtx(starts[i], durs[i], name);
	}
	w_close(true);
}

static struct diff_result *diff_of(const char *a, const char *b, const char *iter, int *status)
{
	struct diff_params p = { .iter = iter };
	struct diff_result *r = NULL;
	char *errs = NULL;
	size_t len = 0;

	p.err = open_memstream(&errs, &len);
	*status = diff__traces(a, b, &p, &r);
	fclose(p.err);
	if (*status)
		fprintf(stderr, "diff: %s", errs);
	free(errs);
	return r;
}

static const struct diff_row *row_of(const struct diff_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	fprintf(stderr, "no row %s\n", name);
	fail();
	return NULL;
}

static bool near(double x, double want, double rel)
{
	double d = x - want, tol = rel * (want < 0 ? -want : want);

	return d <= tol && -d <= tol;
}

/* The base/opt pair of one marking, written to a.gtrace and b.gtrace. */
static void write_pair(enum mark m, bool gpu)
{
	struct fixture b = { "./train --steps 10", 1.0, m, gpu, 0, K_BASE, 3 };
	struct fixture o = { "./train --steps 10 --fast", 0.5, m, gpu, 0, K_OPT, 3 };

	write_fixture(tmp_path("a.gtrace"), &b);
	write_fixture(tmp_path("b.gtrace"), &o);
}

static void check_speedup_2x(const struct diff_result *r, enum diff_iter_source src, uint32_t n)
{
	assert_false(r->whole_run);
	assert_int_equal(r->base.it.source, src);
	assert_int_equal(r->opt.it.source, src);
	assert_int_equal(r->base.it.count, n);
	assert_int_equal(r->opt.it.count, n);
	assert_true(r->speedup.valid && r->speedup.interval);
	if (!near(r->speedup.point, 2.0, 1e-6) || r->speedup.lo > 2.0 || r->speedup.hi < 2.0) {
		fprintf(stderr, "speedup %.6f [%.6f, %.6f]\n", r->speedup.point, r->speedup.lo, r->speedup.hi);
		fail();
	}
	assert_true(r->speedup.lo < r->speedup.hi);
	assert_string_equal(r->warning, "");
}

static void check_kernels(const struct diff_result *r)
{
	const struct diff_row *k1, *k2, *k3, *k4;

	assert_true(r->kernels_gpu);
	assert_int_equal(r->kernels.n, 4);
	k1 = row_of(&r->kernels, "k1()");
	k2 = row_of(&r->kernels, "k2()");
	k3 = row_of(&r->kernels, "k3()");
	k4 = row_of(&r->kernels, "k4()");
	assert_int_equal(k1->cls, DIFF_UNCHANGED);
	assert_int_equal(k2->cls, DIFF_FASTER);
	assert_int_equal(k3->cls, DIFF_ADDED);
	assert_int_equal(k4->cls, DIFF_REMOVED);
	assert_true(near(k2->delta, -150000, 1e-9));
	assert_true(near(k2->base.median_ns, 300000, 1e-9) && near(k2->opt.median_ns, 150000, 1e-9));
	assert_int_equal(k2->base.count, STEPS);
	assert_int_equal(k2->base.total_ns, STEPS * 300000ull);
	/* sorted by how much they moved: k2, k4, k3, k1 */
	assert_ptr_equal(k2, &r->kernels.rows[0]);
	assert_ptr_equal(k4, &r->kernels.rows[1]);
	assert_ptr_equal(k3, &r->kernels.rows[2]);
	assert_ptr_equal(k1, &r->kernels.rows[3]);
	assert_true(r->gpu_busy.valid);
	assert_true(near(r->gpu_busy.point, 450.0 / 270.0, 1e-9));
	assert_true(near(r->gpu_busy.base_ns, 450000, 1e-9) && near(r->gpu_busy.opt_ns, 270000, 1e-9));
}

/* analyze over the span of the iterations, per iteration: the span is
 * ten steps and the nine gaps between them (13.8 ms, 6.9 ms), the GPU
 * work 450 us and 270 us a step, the sync 100 us and 50 us. */
static void check_analysis(const struct diff_result *r)
{
	const struct diff_analysis *an = &r->analysis;

	if (!an->valid) {
		fprintf(stderr, "analysis: %s\n", an->why);
		fail();
	}
	assert_true(an->terms[DIFF_T_WALL].known);
	assert_true(near(an->terms[DIFF_T_WALL].base, 1380000, 1e-9));
	assert_true(near(an->terms[DIFF_T_WALL].opt, 690000, 1e-9));
	assert_true(near(an->terms[DIFF_T_GPU_BUSY].base, 450000, 1e-9));
	assert_true(near(an->terms[DIFF_T_GPU_BUSY].opt, 270000, 1e-9));
	assert_true(near(an->terms[DIFF_T_KERNELS].opt, 270000, 1e-9));
	assert_true(near(an->terms[DIFF_T_CPU_SYNC].base, 100000, 1e-9));
	assert_true(near(an->terms[DIFF_T_CPU_SYNC].opt, 50000, 1e-9));
	assert_true(an->terms[DIFF_T_LAUNCHES].count);
	assert_true(an->terms[DIFF_T_LAUNCHES].base == 3.0 && an->terms[DIFF_T_LAUNCHES].opt == 3.0);
	/* no scheduler records in the fixtures: the on/off-CPU split is not known */
	assert_false(an->terms[DIFF_T_CPU_OFF].known);
	assert_string_equal(an->busy_source[0], "gpu_records");
	assert_non_null(an->bound[0]);
}

static void test_nvtx(void **state)
{
	struct diff_result *r;
	const struct diff_row *sync, *launch;
	int status;

	(void)state;
	write_pair(M_NVTX, true);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_NVTX, STEPS);
	assert_string_equal(r->base.it.name, "step N");
	/* step i lasts 1 + (i % 5) / 10 ms: median 1.2 ms, against 0.6 ms */
	assert_int_equal(r->base.it.median_ns, 1200000);
	assert_int_equal(r->opt.it.median_ns, 600000);
	check_kernels(r);
	/* the naming calls came before the first step: not in any iteration */
	assert_int_equal(r->base.it.unattributed, 3);
	sync = row_of(&r->apis, "cuStreamSynchronize");
	assert_true(sync->timed);
	assert_int_equal(sync->cls, DIFF_FASTER);
	assert_true(near(sync->delta, -50000, 1e-9));
	/* launches recorded at entry only: compared by count, three a step in both */
	launch = row_of(&r->apis, "cuLaunchKernel");
	assert_false(launch->timed);
	assert_int_equal(launch->cls, DIFF_UNCHANGED);
	assert_true(launch->base.per_iter == 3.0 && launch->opt.per_iter == 3.0);
	assert_int_equal(r->base.pid, PID);
	assert_string_equal(r->base.cmdline, "./train --steps 10");
	check_analysis(r);
	diff_result__free(r);
}

static void test_capture(void **state)
{
	struct diff_result *r;
	int status;

	(void)state;
	write_pair(M_CAPTURE, true);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_CAPTURE, STEPS);
	check_kernels(r);
	diff_result__free(r);
}

static void test_graph(void **state)
{
	struct diff_result *r;
	int status;

	(void)state;
	write_pair(M_GRAPH, false);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	/* ten launches of the graph: nine iterations from one to the next */
	check_speedup_2x(r, DIFF_ITER_GRAPH, STEPS - 1);
	assert_string_equal(r->base.it.name, "0x77");
	assert_false(r->kernels_gpu);
	assert_int_equal(row_of(&r->kernels, "[CUDA graph launch]")->cls, DIFF_UNCHANGED);
	diff_result__free(r);
}

static void test_kernels(void **state)
{
	struct diff_result *r;
	const struct diff_row *k2;
	int status;

	(void)state;
	write_pair(M_KERNELS, true);
	/* without markers the synchronize that ends each step is the
	 * boundary: nine iterations from one's end to the next, the same
	 * calls in each (3 launches and the synchronize) */
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_SYNC, STEPS - 1);
	assert_int_equal(r->base.it.period, 4);
	assert_string_equal(r->base.it.name, "cuStreamSynchronize");
	assert_true(r->checked && r->corresponds);
	k2 = row_of(&r->kernels, "k2()");
	assert_int_equal(k2->base.count, STEPS - 1);
	diff_result__free(r);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "kernels", &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_KERNELS, STEPS - 1);
	assert_int_equal(r->base.it.period, 3);
	assert_int_equal(r->base.it.off_sequence, 0);
	/* nine iterations, from the first launch of each step to the next: the
	 * last step's kernels are outside them */
	k2 = row_of(&r->kernels, "k2()");
	assert_int_equal(k2->base.count, STEPS - 1);
	assert_int_equal(k2->cls, DIFF_FASTER);
	diff_result__free(r);
}

static void test_iter_option(void **state)
{
	struct diff_result *r;
	int status;

	(void)state;
	write_pair(M_NVTX, true);
	/* the launches repeat too: --iter kernels takes them instead */
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "kernels", &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_KERNELS, STEPS - 1);
	diff_result__free(r);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "step", &status);
	assert_int_equal(status, 0);
	check_speedup_2x(r, DIFF_ITER_NVTX, STEPS);
	diff_result__free(r);
	/* the whole run: its CUDA calls from the first to the last */
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "none", &status);
	assert_int_equal(status, 0);
	assert_true(r->whole_run);
	assert_true(r->speedup.valid);
	assert_false(r->speedup.interval);
	assert_int_equal(r->base.it.count, 1);
	diff_result__free(r);
	/* names no iterations of the traces: status 2 */
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "graph", &status);
	assert_int_equal(status, 2);
	assert_null(r);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), "epoch", &status);
	assert_int_equal(status, 2);
	assert_null(r);
}

/* The same trace twice: 1x, an interval around 1, nothing moved. */
static void test_identical(void **state)
{
	struct diff_result *r;
	int status;

	(void)state;
	write_pair(M_NVTX, true);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("a.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	assert_true(r->speedup.point == 1.0 && r->speedup.lo <= 1.0 && r->speedup.hi >= 1.0);
	assert_true(r->gpu_busy.point == 1.0);
	assert_int_equal(r->kernels.by_class[DIFF_UNCHANGED], r->kernels.n);
	assert_int_equal(r->apis.by_class[DIFF_UNCHANGED], r->apis.n);
	assert_int_equal(r->mismatch, 0);
	diff_result__free(r);
}

/* The diff of fixtures b and o, which must succeed. */
static struct diff_result *diff_fixtures(const struct fixture *b, const struct fixture *o)
{
	struct diff_result *r;
	int status;

	write_fixture(tmp_path("a.gtrace"), b);
	write_fixture(tmp_path("b.gtrace"), o);
	r = diff_of(tmp_path("a.gtrace"), tmp_path("b.gtrace"), NULL, &status);
	assert_int_equal(status, 0);
	return r;
}

static void test_mismatch(void **state)
{
	struct fixture b = { "./train", 1.0, M_NVTX, false, 0, K_BASE, 3 };
	struct fixture o = { "/opt/other/bench --x", 0.5, M_NVTX, true, 0, K_OTHER, 2 };
	struct diff_result *r;

	(void)state;
	r = diff_fixtures(&b, &o);
	assert_int_equal(r->mismatch, DIFF_MM_PROGRAM | DIFF_MM_GPU_ONE | DIFF_MM_NO_COMMON | DIFF_MM_NO_MATCH);
	assert_string_equal(r->warning, "different programs (train, bench); only the optimized has GPU "
			    "records: kernels compared by their launches; no kernel in common; iterations do "
			    "not correspond (they are iterations of different programs): whole runs compared, "
			    "no interval");
	/* still a diff, of the whole runs, with no interval: the launches
	 * for kernels */
	assert_true(r->whole_run && r->checked && !r->corresponds);
	assert_false(r->speedup.interval);
	assert_false(r->kernels_gpu);
	assert_false(r->gpu_busy.valid);
	assert_int_equal(r->kernels.by_class[DIFF_ADDED], 2);
	assert_int_equal(r->kernels.by_class[DIFF_REMOVED], 3);
	diff_result__free(r);
}

/* Program names cut at 60 bytes for the warning: between characters (a
 * name of two-byte characters from byte 59 on). */
static void test_mismatch_cut(void **state)
{
	char prog[200] = "/opt/", *p;
	struct fixture b = { prog, 1.0, M_NVTX, true, 0, K_BASE, 3 };
	struct fixture o = { "./bench", 0.5, M_NVTX, true, 0, K_BASE, 3 };
	struct diff_result *r;

	(void)state;
	p = prog + strlen(prog);
	memset(p, 'a', 59);
	for (int i = 0; i < 20; i++)
		memcpy(p + 59 + 2 * i, "\xc3\xa9", 2);
	r = diff_fixtures(&b, &o);
	assert_true(r->mismatch & DIFF_MM_PROGRAM);
	/* 59 bytes and the character that would have been cut, left out */
	assert_non_null(strstr(r->warning, "different programs (aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, "
					   "bench)"));
	diff_result__free(r);
}

/* Numbers JSON cannot hold (inf, nan: a ratio of nothing) are null; ones of
 * 300 digits are written whole (they were read past a 40-byte buffer). */
static void test_json_numbers(void **state)
{
	struct diff_result r = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = tu_memstream(&buf, &len);

	(void)state;
	r.base.path = r.opt.path = "x.gtrace";
	r.base.cmdline = r.opt.cmdline = "";
	r.speedup = (struct diff_ratio){ .valid = true, .interval = true, .point = 1e300,
					 .lo = INFINITY, .hi = NAN, .base_ns = -1e300, .opt_ns = 2.5 };
	assert_int_equal(diff_result__write(&r, DIFF_JSON, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_null(strstr(buf, "inf"));
	assert_null(strstr(buf, "nan"));
	assert_non_null(strstr(buf, "\"speedup\":{\"point\":1000000000000000052504760255204420248704468"));
	assert_non_null(strstr(buf, "\"interval\":[null,null],\"base_ns\":-10000000000000000525047602"));
	assert_non_null(strstr(buf, "\"opt_ns\":2.5"));
	free(buf);
}

static void test_iterations_one_side(void **state)
{
	struct fixture b = { "./train", 1.0, M_NVTX, true, 0, K_BASE, 3 };
	struct fixture o = { "./train", 0.5, M_GRAPH, true, 0, K_OPT, 3 };
	struct diff_result *r;

	(void)state;
	r = diff_fixtures(&b, &o);
	/* the markers one side has are passed over, said; the synchronize
	 * that ends each step on both sides makes the iterations */
	assert_false(r->whole_run);
	assert_int_equal(r->base.it.source, DIFF_ITER_SYNC);
	assert_true(r->mismatch & DIFF_MM_ITERS);
	assert_non_null(strstr(r->warning, "iterations of a kind only one trace has were passed over"));
	assert_true(near(r->speedup.point, 2.0, 1e-6));
	diff_result__free(r);
}

/* One line on err and the status for what cannot be compared. */
static void expect_fail(const char *a, const char *b, int want_status, const char *want_text)
{
	struct diff_opts o = { .a = a, .b = b };
	struct run r = { 0 };
	const char *nl;

	tu_run_open(&r, &o.out, &o.err);
	r.rc = diff__run(&o);
	tu_run_close(o.out, o.err);
	assert_int_equal(r.rc, want_status);
	assert_int_equal(r.out_len, 0);
	nl = strchr(r.err, '\n');
	assert_non_null(nl);
	assert_string_equal(nl + 1, "");
	if (!strstr(r.err, want_text)) {
		fprintf(stderr, "got: %s", r.err);
		fail();
	}
	run_free(&r);
}

static void test_bad_input(void **state)
{
	FILE *f;

	(void)state;
	write_pair(M_NVTX, true);
	f = fopen(tmp_path("text.gtrace"), "w");
	assert_non_null(f);
	fputs("not a trace\n", f);
	fclose(f);
	expect_fail(tmp_path("a.gtrace"), tmp_path("text.gtrace"), 1, "text.gtrace");
	expect_fail(tmp_path("missing.gtrace"), tmp_path("a.gtrace"), 1, "missing.gtrace: No such file");
	/* a trace with a process and no call */
	w_open(tmp_path("empty.gtrace"));
	w_str(GT_REC_NAME, 10, PID, 0, PID, GT_NAME_PROCESS, "./idle");
	w_close(true);
	expect_fail(tmp_path("empty.gtrace"), tmp_path("a.gtrace"), 1, "holds no CUDA calls");
}

static int cmp_iv(const void *a, const void *b)
{
	const struct diff_gpu_iv *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* A side's GPU busy time per iteration from intervals that come mostly in
 * start order, some a few places early (as GPU work queued on other
 * streams is), five times more of them than are held at once: each
 * iteration's busy time is the union of its intervals, none unordered. */
static void test_gpu_busy_order(void **state)
{
	enum { N = 5 * DIFF_GPU_REORDER, ITERS = 3 };
	static struct diff_gpu_iv v[N], sorted[N];
	struct diff_side *s = diff_side__new(ITERS, false);
	uint64_t want[ITERS] = { 0 };

	(void)state;
	assert_non_null(s);
	for (uint32_t k = 0; k < N; k++) {
		uint64_t start = T0 + (uint64_t)k * 1000 - (k % 3 ? 0 : 500 * (k % 7));

		v[k] = (struct diff_gpu_iv){ start, start + 700 + (k % 5) * 200, k / (N / ITERS + 1) };
		assert_int_equal(diff_side__gpu(s, v[k].iter, v[k].start, v[k].end), 0);
	}
	memcpy(sorted, v, sizeof(v));
	qsort(sorted, N, sizeof(sorted[0]), cmp_iv);
	for (uint32_t it = 0; it < ITERS; it++) {
		uint64_t end = 0;

		for (uint32_t k = 0; k < N; k++) {
			const struct diff_gpu_iv *x = &sorted[k];
			uint64_t a = x->start > end ? x->start : end;

			if (x->iter != it)
				continue;
			if (x->end > a)
				want[it] += x->end - a;
			if (x->end > end)
				end = x->end;
		}
	}
	diff_side__finish(s);
	assert_int_equal(s->info.it.gpu_unordered, 0);
	for (uint32_t it = 0; it < ITERS; it++)
		assert_int_equal(s->gpu_ns[it], want[it]);
	diff_side__free(s);
}

static void test_order(void **state)
{
	const char *b, *o;

	(void)state;
	assert_false(diff__order("x.gtrace", "y.gtrace", &b, &o));
	assert_string_equal(b, "x.gtrace");
	assert_true(diff__order("r/run_optimized.gtrace", "r/run_baseline.gtrace", &b, &o));
	assert_string_equal(b, "r/run_baseline.gtrace");
	assert_string_equal(o, "r/run_optimized.gtrace");
	assert_false(diff__order("run_baseline.gtrace", "run_optimized.gtrace", &b, &o));
	assert_true(diff__order("run_optimized.gtrace", "other.gtrace", &b, &o));
	assert_string_equal(b, "other.gtrace");
	assert_true(diff__order("other.gtrace", "run_baseline.gtrace", &b, &o));
	/* both say baseline: as given */
	assert_false(diff__order("a_baseline.gtrace", "b_baseline.gtrace", &b, &o));
	assert_string_equal(b, "a_baseline.gtrace");
}

/* diff__run of the named pair in either order: the same numbers. */
static void test_run_formats(void **state)
{
	struct fixture b = { "./train", 1.0, M_NVTX, true, 0, K_BASE, 3 };
	struct fixture o = { "./train", 0.5, M_NVTX, true, 0, K_OPT, 3 };
	const char *names[2] = { "run_baseline.gtrace", "run_optimized.gtrace" };
	enum diff_format fmts[3] = { DIFF_TABLE, DIFF_JSON, DIFF_MD };
	const char *want[3] = {
		"Speedup:    2.000x  [",
		"\"speedup\":{\"point\":2,\"interval\":[",
		"| Median iteration | **2.000x** | ",
	};

	(void)state;
	write_fixture(tmp_path(names[0]), &b);
	write_fixture(tmp_path(names[1]), &o);
	for (int f = 0; f < 3; f++) {
		for (int swap = 0; swap < 2; swap++) {
			struct diff_opts opts = { .format = fmts[f] };
			struct run r = { 0 };
			char pa[160], pb[160];

			snprintf(pa, sizeof(pa), "%s", tmp_path(names[swap]));
			snprintf(pb, sizeof(pb), "%s", tmp_path(names[!swap]));
			opts.a = pa;
			opts.b = pb;
			tu_run_open(&r, &opts.out, &opts.err);
			r.rc = diff__run(&opts);
			tu_run_close(opts.out, opts.err);
			assert_int_equal(r.rc, 0);
			assert_int_equal(r.err_len, 0);
			if (!strstr(r.out, want[f])) {
				fprintf(stderr, "format %d, swap %d: no '%s' in:\n%s", f, swap, want[f], r.out);
				fail();
			}
			if (fmts[f] == DIFF_JSON)
				assert_non_null(strstr(r.out, swap ? "\"swapped\":true" : "\"swapped\":false"));
			if (fmts[f] == DIFF_TABLE) {
				/* k2's row: the first of the kernels' */
				const char *row = strstr(r.out, "\n  faster ");

				assert_non_null(row);
				row = strchr(row + 1, '\n') ? row : row;
				assert_true(strstr(row, "-150 us") < strchr(row + 1, '\n'));
				assert_true(strstr(row, "k2()") < strchr(row + 1, '\n'));
			}
			run_free(&r);
		}
	}
}

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("gtrace-diff-test");
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvtx),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_graph),
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_iter_option),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_mismatch_cut),
		cmocka_unit_test(test_json_numbers),
		cmocka_unit_test(test_iterations_one_side),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_gpu_busy_order),
		cmocka_unit_test(test_run_formats),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
