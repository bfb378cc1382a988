// SPDX-License-Identifier: MIT
/*
 * Unit tests of analyze's communication figures (user/analyze/analyze_nccl.c):
 * two ranks of one communicator, one planted late by a known time before
 * every collective: the other rank waited exactly that long per collective
 * (nccl_wait, naming the late rank), the late one came last to all of them
 * (nccl_straggler); a rank missing from the trace leaves the collectives
 * unmatched, said in a note, no finding; with the GPU side the arrivals are
 * the kernels' starts (launched inside the calls), not the calls' entries,
 * and a collective missing one rank's kernel falls back to the entries.
 * No file, no root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyze/analyze.h"
#include "decode/decode.h"
#include "format/trace_file.h"

#define MS 1000000ull
#define T0 1000000000ull
#define UID 0xfeedface12345678ull

struct run {
	struct analyze *a;
	struct gt_decoder *d;
	struct analyze_result *r;
};

static void feed(struct run *x, const void *rec)
{
	assert_int_equal(gt_decoder__feed(x->d, rec), 0);
}

static void hdr(struct gt_hdr *h, uint16_t type, uint16_t size, uint64_t ts, uint32_t pid,
		uint16_t api)
{
	h->ts = ts;
	h->pid = pid;
	h->tid = pid;
	h->type = type;
	h->size = size;
	h->api = api;
}

static void launch(struct run *x, uint64_t ts, uint32_t pid)
{
	struct gt_launch l = { 0 };
	struct gt_ret r = { 0 };

	hdr(&l.hdr, GT_REC_LAUNCH, sizeof(l), ts, pid, GT_API_cuLaunchKernel);
	l.func = 0xf00;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	feed(x, &l);
	hdr(&r.hdr, GT_REC_RET, sizeof(r), ts + 1000, pid, GT_API_cuLaunchKernel);
	feed(x, &r);
}

static void nccl(struct run *x, uint64_t ts, uint64_t dur, uint32_t pid, unsigned api,
		 const struct gt_nccl *args, uint64_t out)
{
	struct gt_nccl e = *args;
	struct gt_ret r = { 0 };

	hdr(&e.hdr, GT_REC_NCCL, sizeof(e), ts, pid, (uint16_t)api);
	feed(x, &e);
	hdr(&r.hdr, GT_REC_NCCL_RET, sizeof(r), ts + dur, pid, (uint16_t)api);
	r.out = out;
	r.flags = out ? GT_RET_OUT : 0;
	feed(x, &r);
}

static void begin(struct run *x)
{
	static const struct analyze_opts none;
	struct gt_file_info info = { .version = GT_FILE_VERSION, .clock_id = 1, .start_ts = T0 - 1000,
				     .options = "trace=cuda,sched" };

	memset(x, 0, sizeof(*x));
	x->a = analyze__new(&none, &info, NULL);
	assert_non_null(x->a);
	x->d = gt_decoder__new(analyze__call, analyze__other, x->a);
	assert_non_null(x->d);
	gt_decoder__set_entry_cb(x->d, analyze__entry);
	gt_decoder__set_nccl_cb(x->d, analyze__nccl);
	analyze__set_decoder(x->a, x->d);
}

static void end(struct run *x, uint64_t ts)
{
	assert_int_equal(gt_decoder__finish(x->d), 0);
	assert_int_equal(analyze__finish(x->a, ts, &x->r), 0);
}

static void done(struct run *x)
{
	analyze_result__free(x->r);
	gt_decoder__free(x->d);
	analyze__free(x->a);
}

static const struct az_scope *scope_of(const struct analyze_result *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nscopes; i++)
		if (r->scopes[i].pid == pid && r->scopes[i].kind == AZ_SCOPE_PROCESS)
			return &r->scopes[i];
	fail_msg("no scope of pid %u", pid);
	return NULL;
}

static const struct az_finding *finding(const struct az_scope *s, enum az_rule rule)
{
	for (size_t i = 0; i < s->nfindings; i++)
		if (s->findings[i].rule == rule)
			return &s->findings[i];
	return NULL;
}

/* nranks ranks with pids 100, 200, ...; those of present[] take part: each
 * makes a launch, an init and `rounds` all-reduces, rank late_rank arriving
 * late_ns after the others each time. */
static uint64_t job(struct run *x, int nranks, const bool *present, int rounds, int late_rank,
		    uint64_t late_ns)
{
	uint64_t t = T0;

	for (int r = 0; r < nranks; r++) {
		struct gt_nccl init = { .out = 0x7000, .peer = r, .nranks = nranks, .uid = UID,
					.flags = GT_NCCL_UID, .datatype = GT_NCCL_NONE32,
					.op = GT_NCCL_NONE32 };

		if (!present[r])
			continue;
		launch(x, t, 100 * (r + 1));
		nccl(x, t + 10000, 1000, 100 * (r + 1), GT_NCCL_API_ncclCommInitRank, &init,
		     0xc000 + r);
	}
	t += 1 * MS;
	for (int i = 0; i < rounds; i++, t += 100 * MS) {
		for (int r = 0; r < nranks; r++) {
			struct gt_nccl ar = { .sendbuff = 0xa, .recvbuff = 0xa, .count = 1024,
					      .comm = 0xc000 + r, .peer = -1, .datatype = 7, .op = 0 };
			uint64_t at = t + (r == late_rank ? late_ns : 0) + (uint64_t)r * 1000;

			if (present[r])
				nccl(x, at, 2000, 100 * (r + 1), GT_NCCL_API_ncclAllReduce, &ar, 0);
		}
	}
	return t;
}

static void t_straggler(void **state)
{
	const bool all[2] = { true, true };
	const struct az_scope *s0, *s1;
	const struct az_finding *w, *l;
	struct run x;

	(void)state;
	begin(&x);
	end(&x, job(&x, 2, all, 5, 1, 10 * MS));
	s0 = scope_of(x.r, 100);
	s1 = scope_of(x.r, 200);
	/* rank 0 arrives first by 10 ms + the 1 us offset of rank 1, five times */
	assert_int_equal(s0->comm.calls, 6);
	assert_int_equal(s0->comm.collectives, 5);
	assert_int_equal(s0->comm.matched, 5);
	assert_int_equal(s0->comm.last, 0);
	assert_int_equal(s0->comm.waited_ns, 5 * (10 * MS + 1000));
	assert_int_equal(s0->comm.waited_for_pid, 200);
	assert_int_equal(s0->comm.waited_for_rank, 1);
	assert_int_equal(s0->comm.rank, 0);
	assert_int_equal(s0->comm.world, 2);
	assert_int_equal(s0->comm.bytes, 5 * 4096);
	assert_int_equal(s1->comm.last, 5);
	assert_int_equal(s1->comm.caused_ns, 5 * (10 * MS + 1000));
	assert_int_equal(s1->comm.waited_ns, 0);
	w = finding(s0, AZ_RULE_NCCL_WAIT);
	assert_non_null(w);
	assert_string_equal(w->id, "nccl_wait");
	assert_int_equal(w->cost_ns, 5 * (10 * MS + 1000));
	assert_int_equal(w->count, 5);
	assert_non_null(strstr(w->summary, "for rank 1 (pid 200)"));
	assert_int_equal(w->nexamples, 5);
	assert_int_equal(w->examples[0].dur, 10 * MS + 1000);
	assert_string_equal(w->examples[0].what, "AllReduce");
	assert_null(finding(s0, AZ_RULE_NCCL_STRAGGLER));
	l = finding(s1, AZ_RULE_NCCL_STRAGGLER);
	assert_non_null(l);
	assert_int_equal(l->count, 5);
	assert_non_null(strstr(l->summary, "came last to 5 of its 5 matched collectives"));
	assert_null(finding(s1, AZ_RULE_NCCL_WAIT));
	for (int i = 0; x.r->notes[i]; i++)
		assert_null(strstr(x.r->notes[i], "NCCL"));
	done(&x);
}

static void t_rank_missing(void **state)
{
	const bool two_of_three[3] = { true, true, false };
	const struct az_scope *s0;
	bool said = false;
	struct run x;

	(void)state;
	begin(&x);
	end(&x, job(&x, 3, two_of_three, 4, 1, 10 * MS));
	s0 = scope_of(x.r, 100);
	assert_int_equal(s0->comm.collectives, 4);
	assert_int_equal(s0->comm.matched, 0);
	assert_int_equal(s0->comm.waited_ns, 0);
	assert_null(finding(s0, AZ_RULE_NCCL_WAIT));
	for (int i = 0; x.r->notes[i]; i++)
		said |= strstr(x.r->notes[i], "4 NCCL collectives were not seen on every rank") != NULL;
	assert_true(said);
	done(&x);
}

static void nccl_entry(struct run *x, uint64_t ts, uint32_t pid, unsigned api, const struct gt_nccl *args)
{
	struct gt_nccl e = *args;

	hdr(&e.hdr, GT_REC_NCCL, sizeof(e), ts, pid, (uint16_t)api);
	feed(x, &e);
}

static void nccl_exit(struct run *x, uint64_t ts, uint32_t pid, unsigned api)
{
	struct gt_ret r = { 0 };

	hdr(&r.hdr, GT_REC_NCCL_RET, sizeof(r), ts, pid, (uint16_t)api);
	feed(x, &r);
}

/* A launch at ts whose kernel ran at start for 1 ms: the GPU record right
 * after the launch's entry (as a merged trace has it), linked unless not. */
static void launch_gpu(struct run *x, uint64_t ts, uint32_t pid, uint64_t start, bool linked)
{
	static const char name[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	union {
		struct gt_gpu_kernel k;
		char b[GT_REC_ALIGN(sizeof(struct gt_gpu_kernel) + sizeof(name))];
	} g;
	struct gt_launch l = { 0 };
	struct gt_ret r = { 0 };

	hdr(&l.hdr, GT_REC_LAUNCH, sizeof(l), ts, pid, GT_API_cuLaunchKernel);
	l.func = 0xf00;
	l.stream = 0x5;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	feed(x, &l);
	memset(&g, 0, sizeof(g));
	hdr(&g.k.hdr, GT_REC_GPU_KERNEL, sizeof(g), start, pid, 0);
	g.k.hdr.tid = linked ? pid : 0;
	g.k.dur = 1 * MS;
	g.k.launch_ts = linked ? ts : 0;
	g.k.flags = linked ? GT_GPU_LINKED : 0;
	g.k.device = (uint32_t)(pid / 100 - 1);
	g.k.stream = 7;
	g.k.grid[0] = g.k.grid[1] = g.k.grid[2] = 1;
	g.k.block[0] = g.k.block[1] = g.k.block[2] = 1;
	g.k.len = sizeof(name);
	memcpy(g.k.name, name, sizeof(name));
	feed(x, &g);
	hdr(&r.hdr, GT_REC_RET, sizeof(r), ts + 1000, pid, GT_API_cuLaunchKernel);
	feed(x, &r);
}

/* Rank 0 calls each all-reduce 2 ms after rank 1 (so by the calls it is
 * last), but rank 1's stream is busy: its kernel starts 9 ms after its call,
 * rank 0's 1 ms after its: on the GPU rank 1 is last, rank 0 waited 6 ms.
 * The last round's kernel of rank 0 is not linked: that one by the calls. */
static void t_gpu_arrival(void **state)
{
	const struct az_scope *s0, *s1;
	const struct az_finding *w;
	const int rounds = 4;
	uint64_t t = T0;
	struct run x;

	(void)state;
	begin(&x);
	for (int r = 0; r < 2; r++) {
		struct gt_nccl init = { .out = 0x7000, .peer = r, .nranks = 2, .uid = UID,
					.flags = GT_NCCL_UID, .datatype = GT_NCCL_NONE32,
					.op = GT_NCCL_NONE32 };

		nccl(&x, t + 10000, 1000, 100 * (r + 1), GT_NCCL_API_ncclCommInitRank, &init, 0xc000 + r);
	}
	t += 1 * MS;
	for (int i = 0; i < rounds; i++, t += 100 * MS) {
		for (int r = 1; r >= 0; r--) {
			struct gt_nccl ar = { .sendbuff = 0xa, .recvbuff = 0xa, .count = 1024,
					      .comm = 0xc000 + r, .peer = -1, .datatype = 7, .op = 0,
					      .stream = 0x5 };
			uint32_t pid = 100 * (r + 1);
			uint64_t at = t + (r == 0 ? 2 * MS : 0);

			nccl_entry(&x, at, pid, GT_NCCL_API_ncclAllReduce, &ar);
			launch_gpu(&x, at + 5000, pid, at + (r == 0 ? 1 : 9) * MS,
				   !(r == 0 && i == rounds - 1));
			nccl_exit(&x, at + 20000, pid, GT_NCCL_API_ncclAllReduce);
		}
	}
	end(&x, t);
	s0 = scope_of(x.r, 100);
	s1 = scope_of(x.r, 200);
	assert_int_equal(s0->comm.matched, rounds);
	assert_int_equal(s0->comm.matched_gpu, rounds - 1);
	assert_int_equal(s1->comm.matched_gpu, rounds - 1);
	/* by the GPU: rank 0 waited 6 ms three times; by the calls, rank 1 2 ms once */
	assert_int_equal(s0->comm.waited_ns, 3 * 6 * MS);
	assert_int_equal(s0->comm.last, 1);
	assert_int_equal(s0->comm.caused_ns, 2 * MS);
	assert_int_equal(s1->comm.waited_ns, 2 * MS);
	assert_int_equal(s1->comm.last, 3);
	assert_int_equal(s1->comm.caused_ns, 3 * 6 * MS);
	assert_int_equal(s0->comm.waited_for_rank, 1);
	w = finding(s0, AZ_RULE_NCCL_WAIT);
	assert_non_null(w);
	assert_int_equal(w->cost_ns, 3 * 6 * MS);
	assert_non_null(finding(s1, AZ_RULE_NCCL_STRAGGLER));
	assert_int_equal(s0->gpu.unlinked, 1);
	done(&x);
}

static void t_rule_ids(void **state)
{
	(void)state;
	assert_string_equal(az_rule__id(AZ_RULE_NCCL_WAIT), "nccl_wait");
	assert_int_equal(az_rule__by_id("nccl_straggler"), AZ_RULE_NCCL_STRAGGLER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_straggler),
		cmocka_unit_test(t_rank_missing),
		cmocka_unit_test(t_gpu_arrival),
		cmocka_unit_test(t_rule_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
