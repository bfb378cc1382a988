// SPDX-License-Identifier: MIT
/*
 * What the daemon says of itself: status's "key value" lines (the window,
 * names, snapshots, clients, the budget, the GPU-metrics sampler, shedding,
 * libcuda discovery, the agents' spools, the metrics endpoint's clients) and
 * the figures the metrics endpoint serves, once per poll. Estimates are
 * labelled as such.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "daemon/budget/budget.h"
#include "daemon/budget/shed.h"
#include "daemon/control.h"
#include "daemon/daemon_cupti.h"
#include "daemon/daemon_int.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/name_store.h"
#include "daemon/snap_writer.h"
#include "format/api.h"
#include "format/chunk_ring.h"
#include "lib/clock.h"
#include "record/gpum/gpu_metrics.h"
#include "record/probe_cost.h"

size_t daemon__reply(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* What became of the metrics endpoint's clients (none without --metrics). */
static size_t metrics_lines(struct daemon *d, char *buf, size_t len)
{
	struct metrics_http_stats st;

	metrics_http__stats(d->http, &st);
	return daemon__reply(buf, len,
			     "metrics_clients_open %u\n"
			     "metrics_clients_served %llu\n"
			     "metrics_clients_timed_out %llu\n"
			     "metrics_clients_dropped %llu\n"
			     "metrics_clients_refused %llu\n"
			     "metrics_clients_gone %llu\n",
			     st.open, (unsigned long long)st.served, (unsigned long long)st.timed_out,
			     (unsigned long long)st.dropped, (unsigned long long)st.refused,
			     (unsigned long long)st.gone);
}

/* The budget's lines of status: estimates are labelled as such. */
static size_t budget_lines(struct daemon *d, char *buf, size_t len)
{
	struct budget_status st;
	char est[32] = "unknown";

	if (!budget__status(d->bud, &st))
		return daemon__reply(buf, len, "overhead_estimate_pct unknown\n");
	if (st.known)
		snprintf(est, sizeof(est), "%.3f", st.estimate * 100);
	return daemon__reply(buf, len,
		     "overhead_estimate_pct %s\n"
		     "overhead_mean_estimate_pct %.3f\n"
		     "overhead_max_estimate_pct %.3f\n"
		     "overhead_budget_pct %.3f\n"
		     "overhead_over_budget %d\n"
		     "overhead_thread %u/%u\n"
		     "overhead_interval_s %.1f\n"
		     "overhead_hits %llu\n"
		     "overhead_bpf_ms %.3f\n"
		     "overhead_evaluations %llu\n"
		     "overhead_changes %llu\n"
		     "duty_cycle_pct %.3f\n"
		     "light_period_s %.1f\n"
		     "probe_hit_ns %.0f\n"
		     "probe_hit_push_ns %.0f\n"
		     "probe_hit_branch_ns %.0f\n"
		     "probe_hit_step_ns %.0f\n"
		     "probe_ret_ns %.0f\n"
		     "bpf_stats %s\n",
		     est, st.mean_estimate * 100, st.max_estimate * 100, d->o->budget * 100, st.over, st.pid, st.tid,
		     st.interval_ns / 1e9, (unsigned long long)st.hits, st.bpf_ns / 1e6,
		     (unsigned long long)st.evaluations, (unsigned long long)st.changes, st.duty * 100,
		     st.period_ns / 1e9, st.hit_ns, st.hit_insn_ns[UPROBE_INSN_PUSH],
		     st.hit_insn_ns[UPROBE_INSN_BRANCH], st.hit_insn_ns[UPROBE_INSN_STEP], st.ret_ns, st.stats ? "on" : "off");
}

/* The GPU-metrics sampler's lines of status: what it read, and its own
 * cost, measured as its threads' CPU time (the recorder's, not the traced
 * programs'). All 0 when it is off or has no NVML. */
static size_t gpum_lines(struct daemon *d, char *buf, size_t len)
{
	struct gpu_metrics_stats s = { 0 };

	if (recorder__gpum(d->r))
		gpu_metrics__stats(recorder__gpum(d->r), &s);
	return daemon__reply(buf, len,
		     "gpu_metrics_hz %u\n"
		     "gpu_metrics_gpus %u\n"
		     "gpu_metrics_mig %u\n"
		     "gpu_metrics_samples %llu\n"
		     "gpu_metrics_missed %llu\n"
		     "gpu_metrics_records %llu\n"
		     "gpu_metrics_proc_records %llu\n"
		     "gpu_metrics_errors %llu\n"
		     "gpu_metrics_dropped %llu\n"
		     "gpu_metrics_lost %u\n"
		     "gpu_metrics_cpu_ms %.3f\n"
		     "gpu_metrics_cpu_pct %.4f\n",
		     s.hz, s.gpus, s.mig, (unsigned long long)s.samples, (unsigned long long)s.missed,
		     (unsigned long long)s.records,
		     (unsigned long long)s.proc_samples, (unsigned long long)s.errors,
		     (unsigned long long)s.dropped, s.lost, s.cpu_ns / 1e6,
		     s.wall_ns ? 100.0 * (double)s.cpu_ns / (double)s.wall_ns : 0.0);
}

/* The budget's shedding: the apis recorded only in windows now (a comma
 * list, "none"), the swaps made and what they cost. */
static size_t shed_lines(struct daemon *d, char *buf, size_t len)
{
	struct shed_status st;
	char apis[SHED_MAX * 40] = "none", swap[64] = "none";
	size_t n = 0;

	if (!shed__status(budget__shed(d->bud), &st))
		return 0;
	for (unsigned i = 0; i < st.n && n < sizeof(apis); i++)
		n += (size_t)snprintf(apis + n, sizeof(apis) - n, "%s%s", i ? "," : "",
				      gt_api__name(st.apis[i]) ?: "?");
	if (st.swapping)
		snprintf(swap, sizeof(swap), "%s:%s", st.swap_shed ? "shedding" : "giving_back",
			 gt_api__name(st.swapping) ?: "?");
	return daemon__reply(buf, len,
		     "overhead_shed_apis %s\n"
		     "overhead_sheds %llu\n"
		     "overhead_given_back %llu\n"
		     "overhead_swap %s\n"
		     "overhead_swap_last_ms %.1f\n"
		     "overhead_swap_max_ms %.1f\n"
		     "overhead_swap_cut_calls %llu\n"
		     "overhead_swap_handed_hits %llu\n"
		     "overhead_swap_failed %llu\n",
		     apis, (unsigned long long)st.sheds, (unsigned long long)st.restores, swap, st.last_ms,
		     st.max_ms, (unsigned long long)st.cut, (unsigned long long)st.handed,
		     (unsigned long long)st.failed);
}

size_t daemon__status(struct daemon *d, char *buf, size_t len)
{
	struct gt_counters c;
	struct chunk_ring_stats rs;
	struct control_stats cs;
	struct name_store_stats ns;
	struct recorder_figures f;
	const struct record_opts *ro = recorder__opts(d->r);
	uint64_t up = clock__mono_ns() - d->start;
	size_t n;
	char cg[3 * PATH_MAX];

	recorder__counters(d->r, &c);
	recorder__figures(d->r, &f);
	chunk_ring__stats(d->ring, &rs);
	control__stats(d->ctl, &cs);
	name_store__stats(d->names_kept, &ns);
	recorder__cgroup_word(d->r, cg, sizeof(cg));
	n = daemon__reply(buf, len,
		     "ok\n"
		     "pid %d\n"
		     "uptime_s %.1f\n"
		     "mode %s\n"
		     "cgroup %s\n"
		     "processes %llu\n"
		     "processes_alive %llu\n"
		     "events %llu\n"
		     "dropped %llu\n"
		     "window_chunks %llu\n"
		     "window_records %llu\n"
		     "window_bytes %llu\n"
		     "window_limit_bytes %llu\n"
		     "window_span_s %.1f\n"
		     "window_dropped_chunks %llu\n"
		     "window_dropped_records %llu\n"
		     "names_kept_bytes %llu\n"
		     "names_kept_records %llu\n"
		     "names_in_use %llu\n"
		     "names_limit_bytes %llu\n"
		     "names_forgotten %llu\n"
		     "names_repeated %llu\n"
		     "names_lost %llu\n"
		     "names_lost_bytes %llu\n"
		     "names_exits_missed %llu\n"
		     "light_windows %u\n"
		     "snapshots %llu\n"
		     "triggers_fired %llu\n"
		     "triggers_suppressed %llu\n",
		     (int)getpid(), up / 1e9, ro->light ? "light" : "full", cg,
		     (unsigned long long)f.nprocs, (unsigned long long)(f.nprocs - d->procs_exited),
		     (unsigned long long)c.events,
		     (unsigned long long)(c.drop_ringbuf + c.drop_state), (unsigned long long)rs.chunks,
		     (unsigned long long)rs.records, (unsigned long long)rs.mem_bytes,
		     (unsigned long long)d->o->memory,
		     rs.chunks ? (rs.newest_ts - rs.oldest_ts) / 1e9 : 0.0,
		     (unsigned long long)rs.dropped_chunks, (unsigned long long)rs.dropped_records,
		     (unsigned long long)ns.bytes, (unsigned long long)ns.records,
		     (unsigned long long)ns.live, (unsigned long long)ns.limit,
		     (unsigned long long)ns.forgotten, (unsigned long long)ns.repeated,
		     (unsigned long long)ns.lost, (unsigned long long)ns.lost_bytes,
		     (unsigned long long)ns.gone,
		     f.windows,
		     (unsigned long long)d->snapshots, (unsigned long long)d->trig.fired,
		     (unsigned long long)d->trig.suppressed);
	/* what went wrong with snapshots and clients, counted */
	n += daemon__reply(buf + n, len - n,
		   "snapshots_failed %llu\n"
		   "snapshots_writing %u\n"
		   "clients_served %llu\n"
		   "clients_timed_out %llu\n"
		   "clients_refused %llu\n"
		   "clients_gone %llu\n"
		   "loop_stall_max_ms %.3f\n"
		   "loop_stall_snapshot_max_ms %.3f\n",
		   (unsigned long long)d->snapshots_failed, snap_writer__busy(d->snapw),
		   (unsigned long long)cs.served, (unsigned long long)cs.timed_out,
		   (unsigned long long)cs.refused, (unsigned long long)cs.gone,
		   d->stall_max_ns / 1e6, d->stall_snap_max_ns / 1e6);
	n += budget_lines(d, buf + n, len - n);
	n += gpum_lines(d, buf + n, len - n);
	n += shed_lines(d, buf + n, len - n);
	/* libcuda discovery and holds (record/discovery.c), the agents' spools */
	n += recorder__hold_status(d->r, buf + n, len - n);
	n += daemon_cupti__status(d, buf + n, len - n);
	n += attach__status(d, buf + n, len - n);
	if (d->http && n < len)
		n += metrics_lines(d, buf + n, len - n);
	return n;
}

/* The metrics endpoint's figures, once per poll; the endpoint served. */
void daemon__metrics_poll(struct daemon *d)
{
	const struct record_opts *ro = recorder__opts(d->r);
	struct gpu_metrics *gpum = recorder__gpum(d->r);
	struct gt_metrics_self s = { .has_names = true };
	struct recorder_figures f;
	struct chunk_ring_stats rs;
	struct budget_status bs;
	struct shed_status ss;
	struct name_store_stats ns;
	struct gt_counters c;
	struct timespec cpu;
	uint64_t up;

	if (!d->metrics)
		return;
	recorder__counters(d->r, &c);
	recorder__figures(d->r, &f);
	chunk_ring__stats(d->ring, &rs);
	s.records = f.received;
	s.ring_bytes = f.ring_bytes;
	s.ring_used_bytes = rs.mem_bytes;
	if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu))
		s.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	up = clock__mono_ns() - d->start;
	s.duty_cycle = !ro->light ? 1.0 : ro->period_ns && up ? (double)f.windows * ro->window_ns / up : 0.0;
	if (s.duty_cycle > 1)
		s.duty_cycle = 1;
	/* -1 while unknown */
	s.overhead_ratio = budget__status(d->bud, &bs) && bs.known ? bs.estimate : -1;
	s.budget_ratio = d->o->budget;
	if (shed__status(budget__shed(d->bud), &ss)) {
		s.has_shed = true;
		s.shed_apis = ss.n;
		s.sheds = ss.sheds;
		s.restores = ss.restores;
	}
	if (gpum) {
		struct gpu_metrics_stats gs = { 0 };

		gpu_metrics__stats(gpum, &gs);
		s.has_sampler = true;
		s.sampler_cpu_ns = gs.cpu_ns;
	}
	name_store__stats(d->names_kept, &ns);
	s.names_lost = ns.lost;
	gt_metrics__set_counters(d->metrics, &c);
	gt_metrics__set_self(d->metrics, &s);
	metrics_http__serve(d->http, gt_metrics__render_cb, d->metrics);
}
