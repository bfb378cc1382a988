// SPDX-License-Identifier: MIT
/*
 * The daemon's overhead budget: what the probes cost the traced programs,
 * estimated all the time from measured quantities, and light mode's duty
 * cycle adapted so that the estimate stays under --budget.
 *
 * Measured: (1) the cost of one uprobe and one uretprobe hit on this
 * machine, by timing calls of functions of our own with do-nothing
 * programs attached (bpf/calib.bpf.c, record/probe_cost.c) against the same calls unprobed, at
 * the start and every RECALIBRATE_NS (then in a thread of its own); (2) the kernel's BPF statistics (run
 * count and run time of every program, enabled while we hold the fd of
 * BPF_ENABLE_STATS): hits per interval and what the programs themselves
 * took; (3) the records, which say which thread paid for each hit; (4)
 * the kernel-side programs' runs that concerned a traced task (their own
 * counter, bpf/common.bpf.h): those fire for every task on the machine,
 * and a busy neighbour's context switches are not the traced programs' cost.
 *
 * The estimate is per thread, as a fraction of wall time: a thread that
 * spends p ns of an interval L in probes would have needed L - p without
 * them, so it is slowed by p / (L - p). For a launch-bound program, whose
 * launching thread is the critical path, that is the step-time increase;
 * for a program waiting on its GPU it is an upper bound. The figure kept
 * under the budget is the thread that paid most. Hits the records do not
 * show (gated calls, lost records) are charged to that thread as well.
 *
 * Light mode's cost is the windows' (hot calls, every probe live) plus the
 * always-on probes'. Per evaluation (one window period, from a window's
 * opening to the next one's; every EVAL_NS without windows) the hot part is taken per window and the cold part per
 * second; the next period is the shortest, not shorter than the configured
 * one, that keeps hot / period + cold under TARGET of the budget.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "daemon/budget/budget.h"
#include "daemon/budget/budget_est.h"
#include "daemon/budget/shed.h"
#include "format/api.h"
#include "format/records.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "record/ext.h"
#include "record/gpum/gpu_metrics.h"
#include "record/probe_cost.h"
#include "record/record.h"

#define EVAL_NS		5000000000ull	/* evaluation interval without light-mode windows */
#define RECALIBRATE_NS	600000000000ull	/* the hit cost measured again this often */
/* Aim at this fraction of the budget: the estimate is held to within 30 %
 * of the measured cost, so an estimate 30 % low still keeps what the
 * programs pay under the budget (1 / 1.3 = 0.77). */
#define TARGET		0.75
#define PERIOD_MAX_NS	600000000000ull	/* the longest a window period is stretched to
					 * (GTRACE_BUDGET_PERIOD_MAX_S, for tests) */
#define MAX_PROGS	128

/* PERIOD_MAX_NS, or shorter for tests (budget__start). */
static uint64_t period_max_ns = PERIOD_MAX_NS;

/* the kinds of BPF programs (enum recorder_prog_kind) */
#define PC_ENTRY	RECORDER_PROG_ENTRY
#define PC_RET		RECORDER_PROG_RET
#define PC_KERN		RECORDER_PROG_KERN
#define PC__N		RECORDER_PROG__N

struct prog_stat {
	int fd;
	enum recorder_prog_kind cls;
	uint64_t cnt, ns;		/* run count and time at the last read */
};

/* One thread's hits in the interval, from its records. */
struct thread_acc {
	uint32_t pid, tid;
	uint64_t entry[2][UPROBE_INSN__COUNT];	/* [0] cold calls, [1] hot; by probed instruction */
	uint64_t ret[2];		/* return probes, cold and hot */
	uint64_t kern;			/* kernel-side records (off-CPU, ioctls, lifecycle) */
};

struct budget {
	struct recorder *r;		/* the recording whose probes it weighs */
	const struct record_opts *o;	/* ... its options */
	double budget;			/* --budget: the fraction kept under, 0 = none */
	struct shed *shed;		/* its shedding of always-on apis, NULL = none */
	int stats_fd;			/* BPF_ENABLE_STATS, -1 when refused */
	struct prog_stat progs[MAX_PROGS];
	size_t nprogs;
	double hit_ns[UPROBE_INSN__COUNT];/* calibrated entry-hit costs, BPF run time excluded */
	double ret_ns;			/* ... of a return probe's hit */
	uint64_t calibrated_at;
	uint64_t interval_start;
	uint32_t windows_seen;		/* the recorder's windows at the last evaluation */
	struct u64map by_tid;		/* tid -> index + 1 into acc */
	struct thread_acc *acc;
	size_t nacc, acc_cap;
	uint64_t cold_api[GT_API__COUNT];	/* cold entry records per call, this interval */
	uint64_t cold_ret_api[GT_API__COUNT];	/* ... and exit records */
	uint64_t kern_records;		/* every thread's kernel-side records */
	uint64_t own_runs;		/* the kernel-side runs for traced tasks at the last read */
	bool over;			/* the last evaluation was over the budget */
	struct recal *recal;		/* a calibration running in its thread, NULL = none */
	struct budget_est est;		/* every interval's estimate: the mean and the max */
	uint64_t sampler_base;		/* the GPU-metrics threads' CPU time when the interval began */
	uint64_t sampler_ns, sampler_wall;	/* over every interval: their CPU time, and the time */
	struct budget_status st;
};

static void say_calibration(const struct budget *b)
{
	pr_verbose("budget: a probe hit costs %.0f ns on a push, %.0f on a nop or branch, %.0f "
		   "single-stepped; a return probe %.0f ns more (measured, the programs' run time apart)",
		   b->hit_ns[UPROBE_INSN_PUSH], b->hit_ns[UPROBE_INSN_BRANCH], b->hit_ns[UPROBE_INSN_STEP],
		   b->ret_ns);
}

/* The periodic calibration, in a thread: timing a few hundred ms of probed
 * calls must not hold up the recording loop. */
struct recal {
	pthread_t thread;
	bool multi;
	int done;			/* set (atomically) when the thread has finished */
	int err;
	double hit[UPROBE_INSN__COUNT], ret;
};

static void *recal_main(void *arg)
{
	struct recal *c = arg;

	c->err = probe_cost__measure(c->hit, &c->ret, c->multi);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Takes a finished calibration's figures (wait: wait for it). True when
 * one was taken. */
static bool recal_collect(struct budget *b, bool wait)
{
	struct recal *c = b->recal;

	if (!c || (!wait && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)))
		return false;
	pthread_join(c->thread, NULL);
	b->recal = NULL;
	if (!c->err) {
		memcpy(b->hit_ns, c->hit, sizeof(b->hit_ns));
		b->ret_ns = c->ret;
		say_calibration(b);
	} else {
		pr_verbose("budget: the periodic calibration failed (%s); the last figures stay",
			   strerror(-c->err));
	}
	free(c);
	return true;
}

/* The calibrated cost of an entry hit of api (its probed instruction). */
static unsigned api_insn(const struct budget *b, unsigned api)
{
	int k = recorder__insn_class(b->r, api);

	return k < 0 ? UPROBE_INSN_STEP : (unsigned)k;
}

void budget__record(struct budget *b, uint32_t reason, uint64_t now, unsigned api, uint32_t cut)
{
	struct gt_overhead o;

	memset(&o, 0, sizeof(o));
	o.hdr.ts = now;
	o.hdr.pid = b->st.pid;
	o.hdr.tid = b->st.tid;
	o.hdr.type = GT_REC_OVERHEAD;
	o.hdr.size = sizeof(o);
	o.hdr.api = (uint16_t)api;
	o.cut = cut;
	o.interval_ns = b->st.interval_ns;
	o.hits = b->st.hits;
	o.probe_ns = b->st.probe_ns;
	o.total_ns = b->st.total_ns;
	o.bpf_ns = b->st.bpf_ns;
	o.estimate_ppm = (uint32_t)(b->st.estimate * 1e6 + 0.5);
	o.budget_ppm = (uint32_t)(b->budget * 1e6 + 0.5);
	o.duty_ppm = (uint32_t)(b->st.duty * 1e6 + 0.5);
	o.period_ms = (uint32_t)(b->st.period_ns / 1000000);
	o.hit_ns = (uint32_t)(b->st.hit_ns + 0.5);
	o.ret_ns = (uint32_t)(b->ret_ns + 0.5);
	o.reason = reason;
	o.sampler_ppm = (uint32_t)(b->st.sampler * 1e6 + 0.5);
	recorder__write(b->r, &o.hdr);
}

static void write_rec(struct budget *b, uint32_t reason, uint64_t now)
{
	budget__record(b, reason, now, 0, 0);
}

/* Light mode's window period now (0: none). */
static uint64_t period_now(const struct budget *b)
{
	struct recorder_figures f;

	recorder__figures(b->r, &f);
	return f.period_ns;
}

static double duty_now(const struct budget *b)
{
	if (!b->o->light)
		return 1;
	uint64_t period = period_now(b) ?: b->o->period_ns;

	if (!period || b->o->capture_range != RECORD_RANGE_NONE)
		return 0;
	return (double)b->o->window_ns / (double)period;
}

/* The CPU time the GPU-metrics sampler's threads have used, 0 without. */
static uint64_t sampler_cpu(const struct budget *b)
{
	struct gpu_metrics *g = recorder__gpum(b->r);

	return g ? gpu_metrics__cpu_ns(g) : 0;
}

static void reset_interval(struct budget *b, uint64_t now)
{
	b->sampler_base = sampler_cpu(b);
	u64map__free(&b->by_tid);
	b->nacc = 0;
	b->kern_records = 0;
	memset(b->cold_api, 0, sizeof(b->cold_api));
	memset(b->cold_ret_api, 0, sizeof(b->cold_ret_api));
	b->interval_start = now;
}

/* The run counts now, as the base of the next interval's deltas. */
static void read_base(struct budget *b)
{
	size_t i;

	for (i = 0; i < b->nprogs; i++)
		probe_cost__prog_read(b->progs[i].fd, &b->progs[i].cnt, &b->progs[i].ns);
	b->own_runs = recorder__kern_own_runs(b->r);
}

/* The mean entry-hit cost over the hot calls the files have; their
 * instruction census at -v. */
static double hot_mean_hit(const struct budget *b)
{
	unsigned api, n[UPROBE_INSN__COUNT] = { 0 }, all = 0;
	double sum = 0;

	for (api = 1; api < GT_API__COUNT; api++) {
		int k = recorder__insn_class(b->r, api);

		if (!gt_api__hot(api) || k < 0)
			continue;
		n[k]++;
		all++;
		sum += b->hit_ns[k];
	}
	pr_verbose("budget: the hot calls' probed instructions: %u push, %u nop/branch, %u "
		   "single-stepped", n[UPROBE_INSN_PUSH],
		   n[UPROBE_INSN_BRANCH], n[UPROBE_INSN_STEP]);
	return all ? sum / all : 0;
}

void budget__env_seconds(const char *name, double lo, bool lo_open, double hi, uint64_t *ns)
{
	const char *e = getenv(name);
	char *end;
	double v;

	if (!e || !*e)
		return;
	v = strtod(e, &end);
	if (*end || !(lo_open ? v > lo : v >= lo) || v > hi)
		pr_warn("%s=%s is not a number of seconds in %c%.0f, %.0f]: ignored", name, e,
			lo_open ? '(' : '[', lo, hi);
	else
		*ns = (uint64_t)(v * 1e9);
}

int budget__start(struct recorder *r, double budget, struct budget **out)
{
	struct recorder_prog progs[MAX_PROGS];
	struct budget *b = calloc(1, sizeof(*b));
	uint64_t now;
	size_t i, n;
	int err;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->r = r;
	b->o = recorder__opts(r);
	b->budget = budget;
	budget__env_seconds("GTRACE_BUDGET_PERIOD_MAX_S", 1, false, PERIOD_MAX_NS / 1e9, &period_max_ns);
	b->stats_fd = recorder__bpf_stats();
	if (b->stats_fd < 0)
		pr_warn("budget: the kernel's BPF statistics cannot be enabled (%s): the estimate counts "
			"recorded calls only, without the programs' run time", strerror(errno));
	/* every program of the recording's: the NCCL probes' hits cost the
	 * programs too */
	n = recorder__progs(r, progs, MAX_PROGS);
	for (i = 0; i < n; i++)
		b->progs[b->nprogs++] = (struct prog_stat){ .fd = progs[i].fd, .cls = progs[i].kind };
	err = probe_cost__measure(b->hit_ns, &b->ret_ns, recorder__multi(r));
	if (!err)
		say_calibration(b);
	if (err) {
		pr_warn("budget: cannot time a probe of our own (%s): no overhead estimate, no budget kept",
			strerror(-err));
		budget__free(b);
		return 0;
	}
	*out = b;
	now = clock__ns(CLOCK_MONOTONIC);
	b->calibrated_at = now;
	b->st.known = false;
	b->st.duty = duty_now(b);
	b->st.period_ns = b->o->light ? b->o->period_ns : 0;
	/* until an interval says which probes were hit: the hot calls' mean */
	b->st.hit_ns = hot_mean_hit(b);
	write_rec(b, GT_OVH_CALIBRATED, now);
	read_base(b);
	reset_interval(b, now);
	if (b->budget > 0 && b->o->light && b->o->capture_range == RECORD_RANGE_NONE &&
	    shed__start(r, b, budget, &b->shed))
		return -ENOMEM;
	if (b->budget > 0 && !b->o->light)
		pr_info("budget %.2f%%: full mode keeps every probe, so the estimate is reported, not kept "
			"(--mode light adapts)", b->budget * 100);
	pr_info("overhead budget: %s; a probe hit costs %.0f ns on a push, %.0f on a nop or branch, "
		"%.0f single-stepped, a return probe %.0f ns more (measured here)",
		b->budget <= 0 ? "estimated only (--budget none)" :
		b->o->light ? "kept under the budget" : "reported against the budget",
		b->hit_ns[UPROBE_INSN_PUSH], b->hit_ns[UPROBE_INSN_BRANCH], b->hit_ns[UPROBE_INSN_STEP],
		b->ret_ns);
	return 0;
}

/* What thread t's hot (or cold) hits cost: entries by their probed
 * instruction, returns; the programs' mean run time added to each. */
static double thread_cost(const struct budget *b, const struct thread_acc *t, int hot, double bpf_e,
			  double cost_r)
{
	double c = t->ret[hot] * cost_r;
	int k;

	for (k = 0; k < UPROBE_INSN__COUNT; k++)
		c += t->entry[hot][k] * (b->hit_ns[k] + bpf_e);
	return c;
}

static uint64_t thread_entries(const struct thread_acc *t)
{
	uint64_t n = 0;
	int h, k;

	for (h = 0; h < 2; h++)
		for (k = 0; k < UPROBE_INSN__COUNT; k++)
			n += t->entry[h][k];
	return n;
}

static struct thread_acc *thread_of(struct budget *b, const struct gt_hdr *h)
{
	uint64_t *idx = u64map__get(&b->by_tid, h->tid);

	if (idx)
		return &b->acc[*idx - 1];
	if (vec__reserve(&b->acc, &b->acc_cap, b->nacc, 1, 64) ||
	    u64map__set(&b->by_tid, h->tid, b->nacc + 1))
		return NULL;
	b->acc[b->nacc] = (struct thread_acc){ .pid = h->pid, .tid = h->tid };
	return &b->acc[b->nacc++];
}

void budget__on_record(struct budget *b, const struct gt_hdr *h)
{
	struct thread_acc *t;
	bool hot;

	if (!b || !h->tid)
		return;
	/* the shedding's calls in flight, whose exits a swap may cut */
	shed__on_record(b->shed, h);
	switch (h->type) {
	case GT_REC_CALL:
	case GT_REC_LAUNCH:
	case GT_REC_CALL_STR:
	case GT_REC_RANGE:
		if (!(t = thread_of(b, h)))
			return;
		/* a shed api is recorded in windows only, as hot calls are */
		hot = gt_api__hot(h->api) || shed__windowed(b->shed, h->api);
		t->entry[hot][h->type == GT_REC_RANGE ? UPROBE_INSN_STEP : api_insn(b, h->api)]++;
		if (!hot && h->api < GT_API__COUNT)
			b->cold_api[h->api]++;
		return;
	case GT_REC_RET:
	case GT_REC_RET_STR:
		hot = gt_api__hot(h->api) || shed__windowed(b->shed, h->api);
		if ((t = thread_of(b, h)))
			t->ret[hot]++;
		if (!hot && h->api < GT_API__COUNT)
			b->cold_ret_api[h->api]++;
		return;
	case GT_REC_OFFCPU:
	case GT_REC_IOCTL:
	case GT_REC_EXEC:
	case GT_REC_FORK:
	case GT_REC_EXIT:
		if ((t = thread_of(b, h))) {
			t->kern++;
			b->kern_records++;
		}
		return;
	default:
		return;
	}
}

/* The hottest always-on call of the interval, for the over-budget line. */
static const char *hottest_cold(const struct budget *b, uint64_t *n)
{
	unsigned best = 0, i;

	for (i = 1; i < GT_API__COUNT; i++) {
		if (b->cold_api[i] > b->cold_api[best])
			best = i;
	}
	*n = b->cold_api[best];
	return gt_api__name(best) ?: "?";
}

/* The period that keeps hot_per_window / P + cold_rate under the target. */
static uint64_t period_for(double target, double hot_ns, double cold_rate)
{
	double p;

	if (hot_ns <= 0)
		return 0;
	if (cold_rate >= target)
		return period_max_ns;
	p = hot_ns / (target - cold_rate);
	return p >= (double)period_max_ns ? period_max_ns : (uint64_t)p;
}

/* final: the recording's last, partial interval: figures only, no change,
 * no record (the trace is being finished). */
static void evaluate(struct budget *b, uint64_t now, uint32_t windows, bool final)
{
	const struct record_opts *o = b->o;
	uint64_t cur_period = period_now(b);
	uint64_t d_cnt[PC__N] = { 0 }, d_ns[PC__N] = { 0 }, rec[PC__N] = { 0 };
	double mean[PC__N], cost_e, cost_r, worst = -1, worst_probe = 0, worst_hot = 0, worst_cold = 0;
	double trap_sum = 0, max_hit = 0, probe, kern_own_ns;
	double L = (double)(now - b->interval_start), need = 0, target = b->budget * TARGET;
	uint64_t unattr_e, unattr_r, cnt, ns, scpu, period = 0, own;
	size_t i, w = SIZE_MAX;
	uint32_t reason = GT_OVH_ESTIMATE;
	bool over = false;

	for (i = 0; i < b->nprogs; i++) {
		struct prog_stat *p = &b->progs[i];

		if (!probe_cost__prog_read(p->fd, &cnt, &ns))
			continue;
		d_cnt[p->cls] += cnt - p->cnt;
		d_ns[p->cls] += ns - p->ns;
		p->cnt = cnt;
		p->ns = ns;
	}
	/* the kernel-side programs run for every task on the machine (each
	 * context switch, openat, ioctl): the traced threads pay the runs
	 * that concerned them, at the programs' mean run time; the rest is
	 * other programs' */
	own = recorder__kern_own_runs(b->r);
	kern_own_ns = d_cnt[PC_KERN] ? (double)d_ns[PC_KERN] *
		      ((double)(own - b->own_runs) < (double)d_cnt[PC_KERN] ?
		       (double)(own - b->own_runs) / (double)d_cnt[PC_KERN] : 1) : 0;
	b->own_runs = own;
	for (i = 0; i < b->nacc; i++) {
		int h, k;

		rec[PC_ENTRY] += thread_entries(&b->acc[i]);
		rec[PC_RET] += b->acc[i].ret[0] + b->acc[i].ret[1];
		for (h = 0; h < 2; h++)
			for (k = 0; k < UPROBE_INSN__COUNT; k++)
				trap_sum += b->acc[i].entry[h][k] * b->hit_ns[k];
	}
	for (i = 0; i < UPROBE_INSN__COUNT; i++)
		if (b->hit_ns[i] > max_hit)
			max_hit = b->hit_ns[i];
	/* without the statistics, the records are the hits */
	if (b->stats_fd < 0) {
		d_cnt[PC_ENTRY] = rec[PC_ENTRY];
		d_cnt[PC_RET] = rec[PC_RET];
	}
	for (i = 0; i < PC__N; i++)
		mean[i] = d_cnt[i] ? (double)d_ns[i] / (double)d_cnt[i] : 0;
	/* a hit no record shows: at the records' mean trap, else the dearest */
	b->st.hit_ns = rec[PC_ENTRY] ? trap_sum / rec[PC_ENTRY] : max_hit;
	cost_e = b->st.hit_ns + mean[PC_ENTRY];
	cost_r = b->ret_ns + mean[PC_RET];
	unattr_e = d_cnt[PC_ENTRY] > rec[PC_ENTRY] ? d_cnt[PC_ENTRY] - rec[PC_ENTRY] : 0;
	unattr_r = d_cnt[PC_RET] > rec[PC_RET] ? d_cnt[PC_RET] - rec[PC_RET] : 0;
	for (i = 0; i < b->nacc; i++) {
		const struct thread_acc *t = &b->acc[i];
		double hot = thread_cost(b, t, 1, mean[PC_ENTRY], cost_r);
		double cold = thread_cost(b, t, 0, mean[PC_ENTRY], cost_r);

		if (b->kern_records)
			cold += kern_own_ns * t->kern / b->kern_records;
		if (hot + cold > worst) {
			worst = hot + cold;
			w = i;
			worst_hot = hot;
			worst_cold = cold;
		}
	}
	/* hits no record shows: charged to the thread that paid most, as hot */
	worst_hot += unattr_e * cost_e + unattr_r * cost_r;
	worst_probe = worst_hot + worst_cold;
	b->st.interval_ns = now - b->interval_start;
	b->st.hits = d_cnt[PC_ENTRY] + d_cnt[PC_RET] + d_cnt[PC_KERN];
	b->st.bpf_ns = d_ns[PC_ENTRY] + d_ns[PC_RET] + d_ns[PC_KERN];
	b->st.total_ns = (uint64_t)(trap_sum + unattr_e * b->st.hit_ns + d_cnt[PC_RET] * b->ret_ns) +
			 b->st.bpf_ns;
	b->st.pid = w != SIZE_MAX ? b->acc[w].pid : 0;
	b->st.tid = w != SIZE_MAX ? b->acc[w].tid : 0;
	b->st.estimate = budget_est__add(&b->est, worst_probe, L, &probe);
	b->st.probe_ns = (uint64_t)probe;
	b->st.known = true;
	b->st.evaluations++;
	b->st.max_estimate = b->est.max;
	b->st.mean_estimate = b->est.mean;
	/* the sampler: CPU time of the recorder's own threads, measured; a
	 * figure of its own, never part of what the probes cost the programs */
	scpu = sampler_cpu(b) - b->sampler_base;
	b->st.sampler = L > 0 ? (double)scpu / L : 0;
	b->sampler_ns += scpu;
	b->sampler_wall += (uint64_t)L;
	b->st.mean_sampler = b->sampler_wall ? (double)b->sampler_ns / (double)b->sampler_wall : 0;
	if (final) {
		reset_interval(b, now);
		return;
	}

	if (b->budget > 0 && o->light && cur_period && o->capture_range == RECORD_RANGE_NONE &&
	    windows) {
		/* per window, and per second outside them */
		double hot_per_window = worst_hot / windows, cold_rate = worst_cold / L;

		for (i = 0; i < b->nacc; i++) {
			const struct thread_acc *t = &b->acc[i];
			double hot = thread_cost(b, t, 1, mean[PC_ENTRY], cost_r);
			double cold = thread_cost(b, t, 0, mean[PC_ENTRY], cost_r) / L;
			uint64_t p;

			if (i == w)
				continue;
			p = period_for(target, hot / windows, cold);
			if (p > period)
				period = p;
			if (cold >= target)
				over = true;
		}
		need = (double)period_for(target, hot_per_window, cold_rate);
		if (need > period)
			period = (uint64_t)need;
		if (cold_rate >= target)
			over = true;
		if (period < o->period_ns)
			period = o->period_ns;
		/* longer whenever the budget needs it; shorter again only by more
		 * than a fifth (hysteresis, so that noise does not flip it), or
		 * straight back to the configured period once that fits (else a
		 * stretch of less than a fifth would stay for good) */
		if (period > cur_period * 1.02 ||
		    (cur_period > o->period_ns &&
		     (period < cur_period / 1.2 || period == o->period_ns))) {
			reason = period > cur_period ? GT_OVH_DUTY_DOWN : GT_OVH_DUTY_UP;
			pr_info("budget %.2f%%: estimated %.2f%% (thread %u); light windows %.0f ms every "
				"%.1f s, was every %.1f s", b->budget * 100, b->st.estimate * 100,
				b->st.tid, o->window_ns / 1e6, period / 1e9, cur_period / 1e9);
			recorder__set_period(b->r, period);
			b->st.changes++;
		}
	} else if (b->budget > 0) {
		over = b->st.estimate > b->budget;
	}
	if (over && !b->over) {
		uint64_t n;
		const char *api = hottest_cold(b, &n);

		pr_warn("budget %.2f%%: %s (%.2f%% estimated; the always-on call made most: %s, %llu "
			"times in %.1f s)", b->budget * 100,
			o->light ? "over it even at the longest window period" : "over it in full mode",
			b->st.estimate * 100, api, (unsigned long long)n, L / 1e9);
		if (reason == GT_OVH_ESTIMATE)
			reason = GT_OVH_OVER;
	}
	if (b->budget > 0 && o->light && cur_period && o->capture_range == RECORD_RANGE_NONE) {
		/* what each always-on api cost: its hits at their class cost */
		double cost[GT_API__COUNT];

		for (i = 0; i < GT_API__COUNT; i++)
			cost[i] = b->cold_api[i] * (b->hit_ns[api_insn(b, (unsigned)i)] + mean[PC_ENTRY]) +
				  b->cold_ret_api[i] * cost_r;
		shed__evaluate(b->shed, now, over, b->st.estimate < b->budget, cost, b->cold_api, L);
	}
	b->over = over;
	b->st.over = over;
	b->st.duty = duty_now(b);
	b->st.period_ns = o->light ? period_now(b) : 0;
	write_rec(b, reason, now);
	pr_debug("budget: %.1f ms in %.1f s: %llu+%llu+%llu hits (%llu/%llu unattributed), bpf %.2f ms, "
		 "worst thread %u %.3f ms (hot %.3f), estimate %.3f%%",
		 L / 1e6, L / 1e9, (unsigned long long)d_cnt[PC_ENTRY], (unsigned long long)d_cnt[PC_RET],
		 (unsigned long long)d_cnt[PC_KERN], (unsigned long long)unattr_e,
		 (unsigned long long)unattr_r, b->st.bpf_ns / 1e6, b->st.tid, worst_probe / 1e6,
		 worst_hot / 1e6, b->st.estimate * 100);
	reset_interval(b, now);
}

void budget__tick(struct budget *b, uint64_t now)
{
	struct recorder_figures f, *c = &f;
	uint32_t windows;

	if (!b)
		return;
	recorder__figures(b->r, &f);
	windows = c->windows - b->windows_seen;
	if (b->o->light && c->period_ns && b->o->capture_range == RECORD_RANGE_NONE) {
		/* one period: from a window's opening to the next one's, which
		 * capture__tick is about to open (the loop calls us first) */
		if (!c->next_window || now < c->next_window || c->window_end)
			return;
		if (!windows) {
			/* the start, or the gap after a change: nothing to weigh */
			reset_interval(b, now);
			return;
		}
	} else if (now - b->interval_start < EVAL_NS) {
		return;
	}
	b->windows_seen = c->windows;
	evaluate(b, now, windows, false);
	if (now - b->calibrated_at >= RECALIBRATE_NS && !b->recal) {
		struct recal *c = calloc(1, sizeof(*c));

		b->calibrated_at = now;
		if (c) {
			c->multi = recorder__multi(b->r);
			if (pthread_create(&c->thread, NULL, recal_main, c)) {
				free(c);
				c = NULL;
			}
		}
		b->recal = c;
	}
}

void budget__poll(struct budget *b)
{
	if (b && recal_collect(b, false))
		write_rec(b, GT_OVH_CALIBRATED, clock__ns(CLOCK_MONOTONIC));
	if (b)
		shed__poll(b->shed, clock__ns(CLOCK_MONOTONIC));
}

struct shed *budget__shed(const struct budget *b)
{
	return b ? b->shed : NULL;
}

bool budget__status(const struct budget *b, struct budget_status *st)
{

	if (!b)
		return false;
	*st = b->st;
	memcpy(st->hit_insn_ns, b->hit_ns, sizeof(st->hit_insn_ns));
	st->ret_ns = b->ret_ns;
	st->stats = b->stats_fd >= 0;
	return true;
}

void budget__finish(struct budget *b)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct recorder_figures f;

	if (!b)
		return;
	recal_collect(b, true);
	shed__finish(b->shed);
	recorder__figures(b->r, &f);
	/* the last part, if it is long enough to say anything */
	if (now - b->interval_start >= 1000000000ull)
		evaluate(b, now, f.windows - b->windows_seen, true);
	if (b->st.evaluations) {
		char sampler[160] = "";

		if (recorder__gpum(b->r))
			snprintf(sampler, sizeof(sampler), "; the GPU-metrics sampler %.3f%% of one CPU on "
				 "average (measured: the recorder's own threads, not in the estimate)",
				 b->st.mean_sampler * 100);
		pr_info("overhead (estimated): %.3f%% of the costliest thread's time on average over "
			"%llu interval%s, at most %.3f%%%s; %llu change%s of the window period%s",
			b->st.mean_estimate * 100, (unsigned long long)b->st.evaluations,
			b->st.evaluations == 1 ? "" : "s", b->st.max_estimate * 100,
			b->budget > 0 ? "" : " (no budget)", (unsigned long long)b->st.changes,
			b->st.changes == 1 ? "" : "s", sampler);
	}
}

void budget__free(struct budget *b)
{
	if (!b)
		return;
	recal_collect(b, true);
	shed__free(b->shed);
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	u64map__free(&b->by_tid);
	free(b->acc);
	free(b);
}
