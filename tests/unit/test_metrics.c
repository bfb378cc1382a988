// SPDX-License-Identifier: MIT
/*
 * Unit tests of the Prometheus metrics (user/daemon/metrics.c): a small
 * stream of records whose every number was worked out by hand must render
 * exactly the expected series; label values are escaped as the text format
 * says and made valid UTF-8; the top-N of kernels, the kernel names counted,
 * the failure codes and the processes stay within their bounds, and the
 * processes evicted are the exited ones first and are counted.
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
#include "daemon/metrics.h"
#include "decode/decode.h"
#include "test_util.h"

#define API(x) GT_API_##x
#define CU_NOT_READY 600

static struct gt_metrics *M;

static void put(const void *rec)
{
	assert_int_equal(gt_metrics__feed(M, rec), 0);
}

static void *hdr(uint16_t type, size_t size, uint64_t ts, uint32_t pid, unsigned api)
{
	return tu_hdr(type, size, ts, pid, pid + 1, api, 0);
}

/* An entry with its arguments where the API table's a/b/c columns say. */
static void m_call(uint64_t ts, uint32_t pid, unsigned api, uint64_t a, uint64_t b, uint64_t c)
{
	const struct gt_api_info *ai = gt_api__info(api);
	struct gt_call *r = hdr(GT_REC_CALL, sizeof(*r), ts, pid, api);

	if (ai->a >= 0)
		r->args[ai->a] = a;
	if (ai->b >= 0)
		r->args[ai->b] = b;
	if (ai->c >= 0)
		r->args[ai->c] = c;
	put(r);
}

static void m_ret(uint64_t ts, uint32_t pid, unsigned api, int32_t ret, uint64_t out)
{
	struct gt_ret *r = hdr(GT_REC_RET, sizeof(*r), ts, pid, api);

	r->ret = ret;
	r->out = out;
	r->flags = out ? GT_RET_OUT : 0;
	put(r);
}

static void m_call_ret(uint64_t ts, uint64_t dur, uint32_t pid, unsigned api, int32_t ret,
		       uint64_t a, uint64_t b, uint64_t c)
{
	m_call(ts, pid, api, a, b, c);
	m_ret(ts + dur, pid, api, ret, 0);
}

/* A launch recorded at entry only, as the recorder does by default. */
static void m_launch(uint64_t ts, uint32_t pid, unsigned api, uint64_t func)
{
	struct gt_launch *l = hdr(GT_REC_LAUNCH, sizeof(*l), ts, pid, api);

	l->func = func;
	l->grid[0] = l->block[0] = 1;
	l->flags = GT_LAUNCH_NO_EXIT;
	put(l);
}

/* cuModuleGetFunction(&f, module, name) returning f = func. */
static void m_name_kernel(uint64_t ts, uint32_t pid, uint64_t func, const char *mangled)
{
	size_t n = strlen(mangled) + 1;
	struct gt_call_str *c = hdr(GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), ts, pid,
				    API(cuModuleGetFunction));

	c->args[1] = 0x3000;
	c->len = (uint16_t)n;
	memcpy(c->str, mangled, n);
	put(c);
	m_ret(ts + 100, pid, API(cuModuleGetFunction), 0, func);
}

static void m_proc_name(uint64_t ts, uint32_t pid, const char *s)
{
	size_t n = strlen(s) + 1;
	struct gt_name *nm = hdr(GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), ts, pid, 0);

	nm->key = pid;
	nm->kind = GT_NAME_PROCESS;
	nm->len = (uint16_t)n;
	memcpy(nm->str, s, n);
	put(nm);
}

static void m_proc(uint16_t type, uint64_t ts, uint32_t pid, const char *comm)
{
	struct gt_proc_evt *p = hdr(type, sizeof(*p), ts, pid, 0);

	p->ppid = 1;
	memcpy(p->comm, comm, strlen(comm));
	put(p);
}

static char *OUT;
static size_t OUT_LEN;

static FILE *OUT_F;

/* An output buffer writing into OUT (emptied); out_end() closes it. */
static void out_begin(struct obuf *o)
{
	free(OUT);
	OUT = NULL;
	OUT_F = tu_memstream(&OUT, &OUT_LEN);
	assert_int_equal(obuf__init(o, OUT_F), 0);
}

static const char *out_end(struct obuf *o)
{
	assert_int_equal(obuf__flush(o), 0);
	obuf__free(o);
	assert_int_equal(fclose(OUT_F), 0);
	return OUT;
}

/* M rendered, into OUT. */
static const char *render(void)
{
	struct obuf o;

	out_begin(&o);
	assert_int_equal(gt_metrics__render(M, &o), 0);
	return out_end(&o);
}

/* The sample lines of OUT that start with prefix, joined by '\n'. */
static const char *series(const char *prefix)
{
	static char buf[8192];
	size_t n = 0, plen = strlen(prefix);

	buf[0] = 0;
	for (const char *p = OUT; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len >= plen && !memcmp(p, prefix, plen) && (p[plen] == '{' || p[plen] == ' ')) {
			assert_true(n + len + 2 < sizeof(buf));
			if (n)
				buf[n++] = '\n';
			memcpy(buf + n, p, len);
			n += len;
			buf[n] = 0;
		}
		p = e ? e + 1 : p + len;
	}
	return buf;
}

static int setup_opts(const struct gt_metrics_opts *o)
{
	M = gt_metrics__new(o);
	return M ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	return setup_opts(NULL);
}

static int teardown(void **state)
{
	(void)state;
	gt_metrics__free(M);
	M = NULL;
	free(OUT);
	OUT = NULL;
	return 0;
}

/*
 * pid 100, named by its command line (a quote, a backslash and a line feed
 * in it): names 0x4000 vecAdd (100 ns), launches it 3 times and 0x5000
 * (unnamed) once; copies 1000 B in 5 ns and 3000 B in 16 ns host to device,
 * 500 B device to host failing with code 1 in 3 ns; synchronizes a stream
 * in 100 and 1000 ns; queries a stream, not ready (600: no failure), in 2 ns;
 * fails an allocation with code 2 in 7 ns.  pid 200 "worker" (a comm)
 * launches 0x6000 once and exits.  The recorder's snapshot: 20 events, 3 dropped.
 */
static void feed_fixture(void)
{
	struct gt_stats *st;

	m_proc_name(500, 100, "app --tag \"x\\y\"\nz");
	m_proc(GT_REC_EXEC, 600, 200, "worker");
	m_name_kernel(1000, 100, 0x4000, "_Z6vecAddPfS_S_i");
	m_launch(2000, 100, API(cuLaunchKernel), 0x4000);
	m_launch(2100, 100, API(cuLaunchKernel), 0x4000);
	m_launch(2200, 100, API(cuLaunchKernel), 0x4000);
	m_launch(2300, 100, API(cuLaunchKernel), 0x5000);
	m_call_ret(3000, 5, 100, API(cuMemcpyHtoD_v2), 0, 0x10000, 0x2000, 1000);
	m_call_ret(3100, 16, 100, API(cuMemcpyHtoD_v2), 0, 0x10000, 0x2000, 3000);
	m_call_ret(3200, 3, 100, API(cuMemcpyDtoH_v2), 1, 0x2000, 0x10000, 500);
	m_call_ret(4000, 100, 100, API(cuStreamSynchronize), 0, 7, 0, 0);
	m_call_ret(4200, 1000, 100, API(cuStreamSynchronize), 0, 7, 0, 0);
	m_call_ret(5300, 2, 100, API(cuStreamQuery), CU_NOT_READY, 7, 0, 0);
	m_call_ret(5400, 7, 100, API(cuMemAlloc_v2), 2, 1 << 20, 0, 0);
	st = hdr(GT_REC_STATS, sizeof(*st), 5500, 0, 0);
	st->c.events = 20;
	st->c.drop_ringbuf = 3;
	st->c.drop_state = 2;
	put(st);
	m_launch(8000, 200, API(cuLaunchKernel_ptsz), 0x6000);
	m_proc(GT_REC_EXIT, 9000, 200, "worker");
}

static const char want_fixture[] =
	"# HELP gtrace_launches_total Kernel and graph launch calls, per process.\n"
	"# TYPE gtrace_launches_total counter\n"
	"gtrace_launches_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\"} 4\n"
	"gtrace_launches_total{pid=\"200\",process=\"worker\"} 1\n"
	"# HELP gtrace_api_calls_total libcuda calls by symbol, complete or not, per process.\n"
	"# TYPE gtrace_api_calls_total counter\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuLaunchKernel\"} 4\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemcpyHtoD_v2\"} 2\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemcpyDtoH_v2\"} 1\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemAlloc_v2\"} 1\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuStreamSynchronize\"} 2\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuStreamQuery\"} 1\n"
	"gtrace_api_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuModuleGetFunction\"} 1\n"
	"gtrace_api_calls_total{pid=\"200\",process=\"worker\",api=\"cuLaunchKernel_ptsz\"} 1\n";

static void test_fixture_counts(void **state)
{
	(void)state;
	feed_fixture();
	render();
	/* the first families in full, HELP and TYPE lines included */
	assert_int_equal(strncmp(OUT, want_fixture, sizeof(want_fixture) - 1), 0);
	assert_string_equal(series("gtrace_api_seconds_total"),
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuLaunchKernel\"} 0.000000000\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemcpyHtoD_v2\"} 0.000000021\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemcpyDtoH_v2\"} 0.000000003\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemAlloc_v2\"} 0.000000007\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuStreamSynchronize\"} 0.000001100\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuStreamQuery\"} 0.000000002\n"
		"gtrace_api_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuModuleGetFunction\"} 0.000000100\n"
		"gtrace_api_seconds_total{pid=\"200\",process=\"worker\",api=\"cuLaunchKernel_ptsz\"} 0.000000000");
	assert_string_equal(series("gtrace_sync_wait_seconds_total"),
		"gtrace_sync_wait_seconds_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\"} 0.000001100\n"
		"gtrace_sync_wait_seconds_total{pid=\"200\",process=\"worker\"} 0.000000000");
	/* sorted by api, then code; the not-ready query is no failure */
	assert_string_equal(series("gtrace_failed_calls_total"),
		"gtrace_failed_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemcpyDtoH_v2\",code=\"1\"} 1\n"
		"gtrace_failed_calls_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",api=\"cuMemAlloc_v2\",code=\"2\"} 1");
	/* the failed copy moved nothing */
	assert_string_equal(series("gtrace_copy_bytes_total"),
		"gtrace_copy_bytes_total{pid=\"100\",process=\"app --tag \\\"x\\\\y\\\"\\nz\",direction=\"HtoD\"} 4000");
	assert_string_equal(series("gtrace_events_dropped_total"), "gtrace_events_dropped_total 3");
	assert_string_equal(series("gtrace_state_dropped_total"), "gtrace_state_dropped_total 2");
	assert_string_equal(series("gtrace_bpf_events_total"), "gtrace_bpf_events_total 20");
	assert_string_equal(series("gtrace_processes"), "gtrace_processes 2");
	assert_string_equal(series("gtrace_processes_evicted_total"), "gtrace_processes_evicted_total 0");
	assert_string_equal(series("gtrace_top_kernel_launches"),
		"gtrace_top_kernel_launches{rank=\"1\",kernel=\"vecAdd(float*, float*, float*, int)\"} 3\n"
		"gtrace_top_kernel_launches{rank=\"2\",kernel=\"unknown_kernel_0x5000\"} 1\n"
		"gtrace_top_kernel_launches{rank=\"3\",kernel=\"unknown_kernel_0x6000\"} 1");
	assert_string_equal(series("gtrace_untracked_kernel_launches_total"),
			    "gtrace_untracked_kernel_launches_total 0");
	/* the recorder's figures are not made up before the daemon gives them */
	assert_string_equal(series("gtrace_records_total"), "");
	assert_string_equal(series("gtrace_overhead_estimate_ratio"), "");
}

/* Every family has its HELP and TYPE, in that order, before its samples;
 * counters end in _total; and a second rendering is the same bytes. */
static void test_families(void **state)
{
	char *first;
	const char *p;
	int families = 0;

	(void)state;
	feed_fixture();
	first = strdup(render());
	assert_non_null(first);
	assert_string_equal(render(), first);
	free(first);
	for (p = OUT; *p; p = strchr(p, '\n') + 1) {
		char name[128], tname[128], type[16];

		if (strncmp(p, "# HELP ", 7))
			continue;
		assert_int_equal(sscanf(p, "# HELP %127s", name), 1);
		p = strchr(p, '\n') + 1;
		assert_int_equal(sscanf(p, "# TYPE %127s %15s", tname, type), 2);
		assert_string_equal(name, tname);
		if (!strcmp(type, "counter"))
			assert_non_null(strstr(name, "_total"));
		else
			assert_string_equal(type, "gauge");
		families++;
	}
	assert_int_equal(families, 26);
}

static void test_self(void **state)
{
	struct gt_metrics_self s = {
		.overhead_ratio = 0.0425, .duty_cycle = 1, .records = 12345, .ring_bytes = 1 << 24,
		.ring_used_bytes = 4096, .written_bytes = 999, .cpu_ns = 1500000000,
	};
	struct gt_counters c = { .events = 7, .drop_ringbuf = 0 };

	(void)state;
	gt_metrics__set_self(M, &s);
	gt_metrics__set_counters(M, &c);
	render();
	assert_string_equal(series("gtrace_overhead_estimate_ratio"), "gtrace_overhead_estimate_ratio 0.0425");
	assert_string_equal(series("gtrace_duty_cycle"), "gtrace_duty_cycle 1");
	assert_string_equal(series("gtrace_records_total"), "gtrace_records_total 12345");
	assert_string_equal(series("gtrace_ring_bytes"), "gtrace_ring_bytes 16777216");
	assert_string_equal(series("gtrace_ring_used_bytes"), "gtrace_ring_used_bytes 4096");
	assert_string_equal(series("gtrace_written_bytes_total"), "gtrace_written_bytes_total 999");
	assert_string_equal(series("gtrace_cpu_seconds_total"), "gtrace_cpu_seconds_total 1.500000000");
	assert_string_equal(series("gtrace_events_dropped_total"), "gtrace_events_dropped_total 0");
	/* no budget, no shedding, no sampler: no samples of theirs */
	assert_string_equal(series("gtrace_overhead_budget_ratio"), "");
	assert_string_equal(series("gtrace_overhead_shed_calls"), "");
	assert_string_equal(series("gtrace_overhead_sheds_total"), "");
	assert_string_equal(series("gtrace_gpu_metrics_cpu_seconds_total"), "");
	/* not the daemon: no names kept, none lost */
	assert_string_equal(series("gtrace_names_lost_total"), "");
	/* an unknown overhead is left out, not written as 0 */
	s.overhead_ratio = -1;
	gt_metrics__set_self(M, &s);
	render();
	assert_string_equal(series("gtrace_overhead_estimate_ratio"), "");
	/* a light-mode daemon with a budget that shed one call and gave one back,
	 * and a sampler */
	s.budget_ratio = 0.01;
	s.has_shed = true;
	s.shed_apis = 1;
	s.sheds = 2;
	s.restores = 1;
	s.has_sampler = true;
	s.sampler_cpu_ns = 250000000;
	s.has_names = true;
	s.names_lost = 3;
	gt_metrics__set_self(M, &s);
	render();
	assert_string_equal(series("gtrace_overhead_budget_ratio"), "gtrace_overhead_budget_ratio 0.01");
	assert_string_equal(series("gtrace_overhead_shed_calls"), "gtrace_overhead_shed_calls 1");
	assert_string_equal(series("gtrace_overhead_sheds_total"), "gtrace_overhead_sheds_total 2");
	assert_string_equal(series("gtrace_overhead_given_back_total"), "gtrace_overhead_given_back_total 1");
	assert_string_equal(series("gtrace_gpu_metrics_cpu_seconds_total"),
			    "gtrace_gpu_metrics_cpu_seconds_total 0.250000000");
	assert_string_equal(series("gtrace_names_lost_total"), "gtrace_names_lost_total 3");
}

static const char *label(const char *s, size_t max)
{
	struct obuf o;

	out_begin(&o);
	gt_metrics__label_value(&o, s, max);
	return out_end(&o);
}

static void test_escaping(void **state)
{
	(void)state;
	assert_string_equal(label("a\\b\"c\nd\te", 100), "\"a\\\\b\\\"c\\nd\te\"");
	/* bytes that are not UTF-8 would fail the whole scrape */
	assert_string_equal(label("x\xff" "y\xc3(", 100), "\"x\xef\xbf\xbdy\xef\xbf\xbd(\"");
	assert_string_equal(label("caf\xc3\xa9", 100), "\"caf\xc3\xa9\"");
	/* a cut says so, and never splits a character */
	assert_string_equal(label("abcdef", 3), "\"abc...\"");
	assert_string_equal(label("ab\xc3\xa9z", 3), "\"ab...\"");
	assert_string_equal(label("", 3), "\"\"");
}

/* 15 kernels, kernel i launched i times (names k01..k15), and two that tie:
 * the top 10 are the most launched, ties by name, and no more than 10. */
static void test_top_bound(void **state)
{
	char mangled[32];

	(void)state;
	for (unsigned i = 1; i <= 15; i++) {
		snprintf(mangled, sizeof(mangled), "k%02u", i);
		m_name_kernel(i * 1000, 100, 0x1000 + i, mangled);
		for (unsigned j = 0; j < i; j++)
			m_launch(i * 1000 + 200 + j, 100, API(cuLaunchKernel), 0x1000 + i);
	}
	/* one more tie with k06 (6 launches): "k06" < "tie" */
	m_name_kernel(90000, 100, 0x9000, "tie");
	for (unsigned j = 0; j < 6; j++)
		m_launch(90200 + j, 100, API(cuLaunchKernel), 0x9000);
	render();
	assert_string_equal(series("gtrace_top_kernel_launches"),
		"gtrace_top_kernel_launches{rank=\"1\",kernel=\"k15\"} 15\n"
		"gtrace_top_kernel_launches{rank=\"2\",kernel=\"k14\"} 14\n"
		"gtrace_top_kernel_launches{rank=\"3\",kernel=\"k13\"} 13\n"
		"gtrace_top_kernel_launches{rank=\"4\",kernel=\"k12\"} 12\n"
		"gtrace_top_kernel_launches{rank=\"5\",kernel=\"k11\"} 11\n"
		"gtrace_top_kernel_launches{rank=\"6\",kernel=\"k10\"} 10\n"
		"gtrace_top_kernel_launches{rank=\"7\",kernel=\"k09\"} 9\n"
		"gtrace_top_kernel_launches{rank=\"8\",kernel=\"k08\"} 8\n"
		"gtrace_top_kernel_launches{rank=\"9\",kernel=\"k07\"} 7\n"
		"gtrace_top_kernel_launches{rank=\"10\",kernel=\"k06\"} 6");
}

/* Past kernels_cap names, launches are counted as untracked, not by name. */
static void test_kernels_cap(void **state)
{
	struct gt_metrics_opts o = { .kernels_cap = 2, .top_kernels = 5 };

	(void)state;
	gt_metrics__free(M);
	assert_int_equal(setup_opts(&o), 0);
	m_launch(100, 100, API(cuLaunchKernel), 0xa);
	m_launch(200, 100, API(cuLaunchKernel), 0xb);
	m_launch(300, 100, API(cuLaunchKernel), 0xc);
	m_launch(400, 100, API(cuLaunchKernel), 0xc);
	m_launch(500, 100, API(cuLaunchKernel), 0xa);
	render();
	assert_string_equal(series("gtrace_top_kernel_launches"),
		"gtrace_top_kernel_launches{rank=\"1\",kernel=\"unknown_kernel_0xa\"} 2\n"
		"gtrace_top_kernel_launches{rank=\"2\",kernel=\"unknown_kernel_0xb\"} 1");
	assert_string_equal(series("gtrace_untracked_kernel_launches_total"),
			    "gtrace_untracked_kernel_launches_total 2");
	assert_string_equal(series("gtrace_launches_total"),
			    "gtrace_launches_total{pid=\"100\",process=\"\"} 5");
}

/* 18 distinct failure codes of one api: 16 by code, the rest as "other". */
static void test_fail_bound(void **state)
{
	(void)state;
	for (int i = 1; i <= 18; i++)
		m_call_ret(1000 + 10 * (unsigned)i, 1, 100, API(cuMemAlloc_v2), i, 1, 0, 0);
	render();
	assert_non_null(strstr(series("gtrace_failed_calls_total"),
			       "api=\"cuMemAlloc_v2\",code=\"16\"} 1\n"
			       "gtrace_failed_calls_total{pid=\"100\",process=\"\",api=\"other\",code=\"other\"} 2"));
	assert_null(strstr(OUT, "code=\"17\""));
}

/* max_procs 2: a third process evicts the exited one; a fourth, with none
 * exited, the one seen longest ago; each eviction is counted. */
static void test_eviction(void **state)
{
	struct gt_metrics_opts o = { .max_procs = 2 };

	(void)state;
	gt_metrics__free(M);
	assert_int_equal(setup_opts(&o), 0);
	m_call_ret(100, 1, 10, API(cuCtxSynchronize), 0, 0, 0, 0);
	m_call_ret(200, 1, 20, API(cuCtxSynchronize), 0, 0, 0, 0);
	m_call_ret(300, 1, 10, API(cuCtxSynchronize), 0, 0, 0, 0);
	m_proc(GT_REC_EXIT, 400, 10, "a");
	m_call_ret(500, 1, 30, API(cuCtxSynchronize), 0, 0, 0, 0);
	render();
	assert_string_equal(series("gtrace_launches_total"),
		"gtrace_launches_total{pid=\"20\",process=\"\"} 0\n"
		"gtrace_launches_total{pid=\"30\",process=\"\"} 0");
	assert_string_equal(series("gtrace_processes_evicted_total"), "gtrace_processes_evicted_total 1");
	/* 20 was seen before 30 */
	m_call_ret(600, 1, 40, API(cuCtxSynchronize), 0, 0, 0, 0);
	render();
	assert_string_equal(series("gtrace_launches_total"),
		"gtrace_launches_total{pid=\"30\",process=\"\"} 0\n"
		"gtrace_launches_total{pid=\"40\",process=\"\"} 0");
	assert_string_equal(series("gtrace_processes_evicted_total"), "gtrace_processes_evicted_total 2");
	assert_string_equal(series("gtrace_processes"), "gtrace_processes 2");
}

/* A process named after its first call gets the name; exec renames it. */
static void test_rename(void **state)
{
	(void)state;
	m_call_ret(100, 1, 10, API(cuCtxSynchronize), 0, 0, 0, 0);
	render();
	assert_string_equal(series("gtrace_launches_total"),
			    "gtrace_launches_total{pid=\"10\",process=\"\"} 0");
	m_proc_name(200, 10, "python3 train.py");
	render();
	assert_string_equal(series("gtrace_launches_total"),
			    "gtrace_launches_total{pid=\"10\",process=\"python3 train.py\"} 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fixture_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_families, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_top_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernels_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
