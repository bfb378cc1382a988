// SPDX-License-Identifier: MIT
/*
 * The renderings of an analyze result for people: a table for the terminal,
 * Markdown for notes and reviews (the JSON document for programs:
 * analyze_json.c). All print the same figures of the same result
 * (analyze.h); times in the table and Markdown in the unit that gives three
 * digits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "analyze/analyze.h"
#include "analyze/analyze_int.h"
#include "stats/stats.h"
#include "format/api.h"
#include "lib/installer.h"
#include "lib/term_text.h"

static const char *const question_title[AZ_Q__COUNT] = {
	"Busy or waiting", "What bounds it", "Parallelism",
};

/* The names of a busy source and of a copy kind, as the JSON and the table
 * write them (analyze_json.c shares them). */
const char *az__source_name(enum az_busy_source s)
{
	static const char *const n[] = { "none", "gpu_records", "gpu_metrics", "sync_estimate" };

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

const char *az__mem_name(int k)
{
	return k == GT_COPY__COUNT ? "memset" : gt_copy_kind__name((enum gt_copy_kind)k);
}

/* ---- table and Markdown ------------------------------------------------------ */

/* Prints s escaped for a terminal (text from traced programs). */
static void put_text(FILE *out, const char *s)
{
	char *e;

	if (!s)
		return;
	if (!term_text__needs_escape(s)) {
		fputs(s, out);
		return;
	}
	e = term_text__escape(s);
	fputs(e ? e : "?", out);
	free(e);
}

/* Markdown: text from traced programs escaped for a terminal and with the
 * characters that would start markup backslashed. */
static void put_md(FILE *out, const char *s)
{
	char *e = s && term_text__needs_escape(s) ? term_text__escape(s) : NULL;
	const char *p = e ? e : s;

	for (; p && *p; p++) {
		if (strchr("\\`*_[]<>|#", *p))
			fputc('\\', out);
		fputc(*p, out);
	}
	free(e);
}

static void fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.3f us", ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
}

static double pctf(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void scope_title(FILE *out, const struct az_scope *s, bool md, bool whole)
{
	char wall[32], pid[40];

	fmt_dur(wall, sizeof(wall), s->end_ts - s->start_ts);
	gt_pid_text(pid, sizeof(pid), s->pid);
	fputs(md ? "## " : "== ", out);
	if (s->kind == AZ_SCOPE_STEADY)
		fprintf(out, "Process %s, steady state", pid);
	else if (s->kind == AZ_SCOPE_RANGE)
		fprintf(out, "Capture range %u of process %s", s->number, pid);
	else if (s->kind == AZ_SCOPE_WINDOW)
		fprintf(out, "Process %s in light-mode window %u", pid, s->number);
	else
		fprintf(out, whole ? "Process %s, whole run" : "Process %s", pid);
	if (s->name) {
		fputs(" (", out);
		if (md)
			put_md(out, s->name);
		else
			put_text(out, s->name);
		fputs(")", out);
	}
	fprintf(out, ", wall time %s%s%s\n", wall, s->sampled ? ", sampled (light mode)" : "",
		md ? "" : " ==");
}

/* Under a steady scope's title: its iterations, and the start-up before. */
static void phases_lines(FILE *out, const struct analyze_result *r, const struct az_scope *s, bool md)
{
	const struct az_phases *ph = &s->phases;
	const char *pre = md ? "- **" : "  ", *mid = md ? ":** " : ": ";
	uint64_t t0 = r->trace_start_ts, su = ph->start_ts > ph->proc_start_ts ? ph->start_ts - ph->proc_start_ts : 0;
	char a[32], b[32];
	int printed = 0;

	if (ph->start_ts < t0)
		t0 = ph->start_ts;
	fmt_dur(a, sizeof(a), ph->median_ns);
	fprintf(out, "%sIterations%s", pre, mid);
	if (!strcmp(ph->source, "gpu_span") || !strcmp(ph->source, "calls_span")) {
		fprintf(out, "none found: the steady state is the %s, +%.3f s to +%.3f s\n",
			ph->source[0] == 'g' ? "GPU's active span (its first work to its last)"
					     : "span of its CUDA calls (no GPU records)",
			(double)(ph->start_ts - t0) / 1e9, (double)(ph->end_ts - t0) / 1e9);
	} else {
		fprintf(out, "%u of the %u found (%s: ", ph->count, ph->found, ph->source);
		if (md)
			put_md(out, ph->what ? ph->what : "?");
		else
			put_text(out, ph->what ? ph->what : "?");
		fprintf(out, "), median %s%s, +%.3f s to +%.3f s%s%s\n", a,
			ph->group > 1 ? " (estimated: counted in groups, the run repeats too often to keep each)" : "",
			(double)(ph->start_ts - t0) / 1e9, (double)(ph->end_ts - t0) / 1e9,
			ph->waited ? " (to the synchronization that waited for the work its launches queued: "
				     "without GPU records the launches' times are the CPU's)" : "",
			ph->steady ? "" : "; no steady state: the iteration times do not settle, all of them taken");
	}
	fmt_dur(b, sizeof(b), su);
	fprintf(out, "%sStart-up%s%s before it", pre, mid, b);
	if (ph->startup)
		fprintf(out, " (%u iteration%s of warm-up)", ph->startup, ph->startup == 1 ? "" : "s");
	for (int k = 0; k < AZ_SU__COUNT; k++) {
		if (!ph->startup_calls[k])
			continue;
		fmt_dur(a, sizeof(a), ph->startup_calls_ns[k]);
		fprintf(out, "%s%s %s (%llu call%s)", printed++ ? ", " : "; in CUDA calls: ",
			k == AZ_SU_MODULE ? "module loads" : k == AZ_SU_ALLOC ? "allocations" :
			k == AZ_SU_SYNC ? "synchronizations" : k == AZ_SU_INIT ? "init and contexts" : "other",
			a, (unsigned long long)ph->startup_calls[k], ph->startup_calls[k] == 1 ? "" : "s");
	}
	if (ph->tail)
		fprintf(out, "; %u iteration%s of tail after it", ph->tail, ph->tail == 1 ? "" : "s");
	fputc('\n', out);
	if (!md)
		fputc('\n', out);
}

/* The details under the answers, as label: text lines. */
static void details(FILE *out, const struct az_scope *s, bool md)
{
	const struct az_gpu *g = &s->gpu;
	const struct az_cpu *c = &s->cpu;
	const struct az_work *w = &s->work;
	const struct az_parallel *p = &s->par;
	const char *pre = md ? "- **" : "  ", *mid = md ? ":** " : ": ";
	char a[32], b[32], d[32];
	uint64_t idle_in = 0;

	for (int k = AZ_IDLE_SUBMIT; k <= AZ_IDLE_OTHER; k++)
		idle_in += g->idle_ns[k];
	fmt_dur(a, sizeof(a), g->busy_ns);
	fmt_dur(b, sizeof(b), g->wall_ns);
	fmt_dur(d, sizeof(d), g->active_ns);
	fprintf(out, "%sGPU busy%s%s of %s (%.1f %%, %s), active %s, %llu pieces of work on %u "
		"device%s\n", pre, mid, a, b, pctf(g->busy_ns, g->wall_ns), az__source_name(g->source), d,
		(unsigned long long)g->work, g->devices, g->devices == 1 ? "" : "s");
	if (g->source == AZ_BUSY_GPU_RECORDS) {
		fprintf(out, "%sGPU idle%s", pre, mid);
		for (int k = 0; k < AZ_IDLE__COUNT; k++) {
			fmt_dur(a, sizeof(a), g->idle_ns[k]);
			fprintf(out, "%s%s %s", k ? ", " : "", az_idle__name(k), a);
			if (k <= AZ_IDLE_OTHER)
				fprintf(out, " (%.1f %%)", pctf(g->idle_ns[k], idle_in));
		}
		fmt_dur(a, sizeof(a), g->submit_in_cuda_ns);
		fmt_dur(b, sizeof(b), g->concurrent_ns);
		fprintf(out, "; submit while the host was in other CUDA calls %s; concurrent %s\n", a,
			b);
		if (g->late || g->unlinked)
			fprintf(out, "%sGPU records%s%llu not linked to a launch call, %llu placed late\n",
				pre, mid, (unsigned long long)g->unlinked, (unsigned long long)g->late);
	}
	fmt_dur(a, sizeof(a), c->span_ns);
	fprintf(out, "%sCPU%s%u thread%s, %s: ", pre, mid, c->threads, c->threads == 1 ? "" : "s",
		a);
	fmt_dur(a, sizeof(a), c->calls_ns);
	fmt_dur(b, sizeof(b), c->sync_ns);
	fprintf(out, "in CUDA calls %s (%.1f %%), waiting %s (%.1f %%", a, pctf(c->calls_ns, c->span_ns),
		b, pctf(c->sync_ns, c->span_ns));
	if (c->sched) {
		fmt_dur(a, sizeof(a), c->sync_blocked_ns);
		fprintf(out, ", %s blocked", a);
	}
	if (c->sync_cut_ns) {
		fmt_dur(a, sizeof(a), c->sync_cut_ns);
		fprintf(out, ", %s in flight at the end", a);
	}
	fmt_dur(a, sizeof(a), c->outside_ns);
	fprintf(out, "), outside CUDA %s (%.1f %%", a, pctf(c->outside_ns, c->span_ns));
	if (c->sched) {
		fmt_dur(a, sizeof(a), c->off_ns);
		fprintf(out, ", %s off-CPU", a);
	} else {
		fputs(", no scheduler records", out);
	}
	fprintf(out, "); %llu calls, %llu without an exit", (unsigned long long)c->calls,
		(unsigned long long)c->incomplete);
	if (c->cut)
		fprintf(out, ", %llu in flight at the trace's end (counted up to it)",
			(unsigned long long)c->cut);
	fputc('\n', out);
	fmt_dur(a, sizeof(a), w->kernel_ns);
	fmt_dur(b, sizeof(b), w->kernel_median_ns);
	fprintf(out, "%sKernels%s%llu, %s, median %s;", pre, mid, (unsigned long long)w->kernels, a,
		b);
	for (int k = 0; k < AZ_KC__COUNT; k++)
		if (w->class_count[k])
			fprintf(out, " %s %.1f %%", az_kclass__name(k), pctf(w->class_ns[k], w->kernel_ns));
	fputc('\n', out);
	for (int k = 0; k < AZ_MEM_KINDS; k++) {
		if (!w->copy_count[k])
			continue;
		fmt_dur(a, sizeof(a), w->copy_ns[k]);
		fprintf(out, "%s%s%s%llu, %llu bytes, %s on the GPU\n", pre, az__mem_name(k), mid,
			(unsigned long long)w->copy_count[k], (unsigned long long)w->copy_bytes[k], a);
	}
	fmt_dur(a, sizeof(a), w->launch_median_ns);
	fmt_dur(b, sizeof(b), w->launch_gap_median_ns);
	fprintf(out, "%sLaunches%s%llu, median call %s, median interval %s\n", pre, mid,
		(unsigned long long)w->launches, w->launch_median_ns ? a : "unknown (entry only)",
		w->launch_gap_median_ns ? b : "-");
	for (uint32_t i = 0; i < w->nkernels; i++) {
		fmt_dur(a, sizeof(a), w->top[i].total_ns);
		fprintf(out, "%s%s%u%s%s in %llu, %s: ", pre, md ? "Top kernel " : "top kernel ", i + 1,
			mid, a, (unsigned long long)w->top[i].count, az_kclass__name(w->top[i].kclass));
		if (md)
			put_md(out, w->top[i].name);
		else
			put_text(out, w->top[i].name);
		fputc('\n', out);
	}
	if (s->comm.calls) {
		const struct az_comm *cm = &s->comm;

		fmt_dur(a, sizeof(a), cm->host_ns);
		fmt_dur(b, sizeof(b), cm->waited_ns);
		fmt_dur(d, sizeof(d), cm->caused_ns);
		fprintf(out, "%sCommunication%s", pre, mid);
		if (cm->rank >= 0)
			fprintf(out, "rank %d/%d, ", cm->rank, cm->world);
		fprintf(out, "%llu NCCL calls (%llu collectives), %s on the host, %llu bytes; %llu "
			"collectives matched on every rank (%llu by their kernels' GPU starts): "
			"waited %s for later ranks, came last to %llu (the others waited %s)\n",
			(unsigned long long)cm->calls, (unsigned long long)cm->collectives, a,
			(unsigned long long)cm->bytes, (unsigned long long)cm->matched,
			(unsigned long long)cm->matched_gpu, b, (unsigned long long)cm->last, d);
	}
	fmt_dur(a, sizeof(a), p->small_ns);
	fmt_dur(b, sizeof(b), p->host_gap_ns);
	fprintf(out, "%sParallelism%s%u stream%s, %llu legacy-stream launches, %llu small grids "
		"(under %u SMs%s, %s), %llu waits, %llu launches per wait, %llu blocking copies, "
		"%llu host gaps (%s)\n", pre, mid, p->streams, p->streams == 1 ? "" : "s",
		(unsigned long long)p->legacy_launches, (unsigned long long)p->small_kernels,
		p->sm_count, p->sm_assumed ? " assumed" : "", a, (unsigned long long)p->waits,
		(unsigned long long)p->launches_per_wait, (unsigned long long)p->blocking_copies,
		(unsigned long long)p->host_gaps, b);
}

static void findings(FILE *out, const struct analyze_result *r, const struct az_scope *s,
		     bool md)
{
	char cost[32], at[32], dur[32];

	if (!s->nfindings) {
		fputs(md ? "\nNo findings.\n" : "\n  No findings.\n", out);
		return;
	}
	fprintf(out, md ? "\n### Findings (%zu)\n\n" : "\n  Findings (%zu):\n", s->nfindings);
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct az_finding *f = &s->findings[i];

		fmt_dur(cost, sizeof(cost), f->cost_ns);
		if (md) {
			fprintf(out, "- **%s** (%s, costs %s%s, %llu): ", f->id,
				az_severity__name(f->severity), f->cost_upper ? "up to " : "", cost,
				(unsigned long long)f->count);
			put_md(out, f->summary);
			fprintf(out, ".  \n  Fix: %s  \n  Look at:", f->fix);
		} else {
			fprintf(out, "  [%s] %s: ", az_severity__name(f->severity), f->id);
			put_text(out, f->summary);
			fprintf(out, " (costs %s%s)\n      fix: %s\n      look at:", f->cost_upper ?
				"up to " : "", cost, f->fix);
		}
		for (uint32_t e = 0; e < f->nexamples; e++) {
			const struct az_example *x = &f->examples[e];

			fmt_dur(at, sizeof(at), x->ts > r->trace_start_ts ? x->ts - r->trace_start_ts : 0);
			fmt_dur(dur, sizeof(dur), x->dur);
			fprintf(out, "%s %s", e ? ";" : "", at);
			if (x->dur)
				fprintf(out, " +%s", dur);
			if (x->tid)
				fprintf(out, " tid %u", x->tid);
			fputc(' ', out);
			if (md)
				put_md(out, x->what);
			else
				put_text(out, x->what);
		}
		fputc('\n', out);
	}
}

static int write_text(const struct analyze_result *r, FILE *out, bool md)
{
	if (md)
		fputs("# gtrace-bpf analyze: ", out);
	else
		fputs("gtrace-bpf analyze: ", out);
	if (md)
		put_md(out, r->path);
	else
		put_text(out, r->path);
	fprintf(out, "%s\n", r->merged ? " (merged: GPU records from CUPTI)" : "");
	for (int i = 0; r->notes[i]; i++)
		fprintf(out, "%s%s\n", md ? "\n> " : "note: ", r->notes[i]);
	if (r->damage)
		fprintf(out, "%swarning: the trace is damaged (%s): figures of what was read\n",
			md ? "\n> " : "", r->damage);
	for (size_t i = 0; i < r->nscopes; i++) {
		const struct az_scope *s = &r->scopes[i];

		fputc('\n', out);
		scope_title(out, s, md, s->kind == AZ_SCOPE_PROCESS && i &&
			    r->scopes[i - 1].kind == AZ_SCOPE_STEADY && r->scopes[i - 1].pid == s->pid);
		if (md)
			fputc('\n', out);
		if (s->kind == AZ_SCOPE_STEADY)
			phases_lines(out, r, s, md);
		for (int q = 0; q < AZ_Q__COUNT; q++) {
			fprintf(out, md ? "**%s:** " : "%-16s ", md ? question_title[q] :
				(q == 0 ? "Busy or waiting:" : q == 1 ? "What bounds it:" : "Parallelism:"));
			if (md)
				put_md(out, s->answer[q]);
			else
				put_text(out, s->answer[q]);
			fputs(md ? "\n\n" : "\n", out);
		}
		if (!md)
			fputc('\n', out);
		details(out, s, md);
		findings(out, r, s, md);
	}
	return ferror(out) ? -EIO : 0;
}

int analyze__write(const struct analyze_result *r, enum analyze_format f, FILE *out)
{
	int err;

	if (f == ANALYZE_JSON)
		return az__write_json(r, out);
	err = write_text(r, out, f == ANALYZE_MD);
	if (!err && fflush(out))
		err = -errno;
	return err;
}

/* ---- the command ------------------------------------------------------------- */

/* Refuses, before the work, an output that exists (unless force), that is
 * the input, or that must not be replaced.  Returns 0 or 1 after one line. */
static int check_output(const struct analyze_run_opts *o, FILE *err)
{
	struct stat in_st, out_st;

	if (lstat(o->output, &out_st))
		return 0;
	if (!stat(o->path, &in_st) && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) {
		fprintf(err, "gtrace-bpf: cannot write %s: it is the input trace\n", o->output);
		return 1;
	}
	if (installer__refusal(o->output)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", o->output,
			installer__refusal(o->output));
		return 1;
	}
	if (!o->force) {
		fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", o->output);
		return 1;
	}
	return 0;
}

/* Writes r into o->output through a temporary file (0600: the result holds
 * command lines). Returns 0 or 1 after one line. */
static int write_file(const struct analyze_run_opts *o, const struct analyze_result *r, FILE *err)
{
	struct installer *in = NULL;
	FILE *f = NULL;
	int fd, rc = installer__create(o->output, "", 0600, &in);

	if (rc == -EPERM && installer__refusal(o->output)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", o->output,
			installer__refusal(o->output));
		return 1;
	}
	if (!rc) {
		fd = fcntl(installer__fd(in), F_DUPFD_CLOEXEC, 0);
		f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!f && fd >= 0)
			close(fd);
		rc = f ? analyze__write(r, o->format, f) : -errno;
		if (f && fclose(f) && !rc)
			rc = -errno;
	}
	if (!rc)
		rc = installer__commit(in, o->force);
	installer__free(in);
	if (rc == -EEXIST && !o->force)
		fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", o->output);
	else if (rc)
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", o->output, strerror(-rc));
	return rc ? 1 : 0;
}

int analyze__run(const struct analyze_run_opts *o)
{
	FILE *err = o->err ? o->err : stderr, *out = o->out ? o->out : stdout;
	bool to_file = o->output && strcmp(o->output, "-");
	struct analyze_result *r = NULL;
	int ret, rc;

	if (o->range && stats__check_range(o->range)) {
		fprintf(err, "gtrace-bpf: bad range '%s': give the number of a capture range "
			"(1, 2, ...) or of a light-mode window (w1, w2, ...)\n", o->range);
		return 2;
	}
	if (to_file && check_output(o, err))
		return 1;
	ret = analyze__file(o->path, &o->core, o->range, &r, err);
	if (ret)
		return ret;
	if (to_file) {
		ret = write_file(o, r, err);
	} else {
		rc = analyze__write(r, o->format, out);
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot write standard output: %s\n", strerror(-rc));
			ret = 1;
		}
	}
	/* the analysis of what was read is written; a damaged input still exits 1 */
	if (!ret)
		ret = trace_damage__report(&r->dmg, o->path, "the analysis covers the records read", err);
	analyze_result__free(r);
	return ret;
}
