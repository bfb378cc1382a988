// SPDX-License-Identifier: MIT
/*
 * The renderings of a struct diff_result: a text table, Markdown (for
 * reports) and, in diff_json.c, one JSON document (every figure, in ns and
 * plain ratios).  They read the same struct, so they cannot disagree on a
 * number.  Text from
 * the traces (command lines, kernel names) is escaped for each: for the
 * terminal (lib/term_text.h), as JSON strings, or for a Markdown table.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff/diff.h"
#include "diff/diff_int.h"
#include "lib/term_text.h"

/* ---- numbers ------------------------------------------------------------- */

/* ns as "12.3 ms" (three significant digits, at least the unit's), with a
 * sign when sign; into buf. */
static const char *fmt_ns(char *buf, size_t len, double ns, bool sign)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	double a = ns < 0 ? -ns : ns, v = a;
	int u = 0;

	while (u < 3 && v >= 1000) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%s%.*f %s", sign ? (ns < 0 ? "-" : "+") : (ns < 0 ? "-" : ""),
		 u == 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2, v, units[u]);
	return buf;
}

/* A count per iteration: "+2", "-0.5". */
static const char *fmt_count(char *buf, size_t len, double c, bool sign)
{
	double a = c < 0 ? -c : c;
	bool whole = a - (double)(uint64_t)a < 1e-9;

	snprintf(buf, len, sign ? "%+.*f" : "%.*f", whole ? 0 : 2, c);
	return buf;
}

static void md_code(FILE *f, const char *s);

/* Whether two sides' iterations are of one kind and name. */
static bool same_iters(const struct diff_side_info *a, const struct diff_side_info *b)
{
	return a->it.source == b->it.source && a->it.period == b->it.period &&
	       !strcmp(a->it.name ? a->it.name : "", b->it.name ? b->it.name : "");
}

/* One side's iterations in words, their name whole: escaped for a terminal
 * (md false) or as Markdown code. */
static void put_iter_words(FILE *f, const struct diff_side_info *s, bool md)
{
	const char *name = s->it.name ? s->it.name : "";
	char *e = NULL;

	switch (s->it.source) {
	case DIFF_ITER_NVTX:
	case DIFF_ITER_GRAPH:
		fputs(s->it.source == DIFF_ITER_NVTX ? "NVTX range " : "launches of CUDA graph ", f);
		if (md) {
			md_code(f, name);
			break;
		}
		e = term_text__escape(name);
		fprintf(f, s->it.source == DIFF_ITER_NVTX ? "'%s'" : "%s", e ? e : "?");
		free(e);
		break;
	case DIFF_ITER_CAPTURE:
		fputs("capture ranges", f);
		break;
	case DIFF_ITER_KERNELS:
		fprintf(f, "a repeating sequence of %u kernel launches", s->it.period);
		break;
	case DIFF_ITER_SYNC:
		/* an API name: no escaping needed */
		fprintf(f, "the %u calls up to each %s", s->it.period, name);
		break;
	default:
		fputs("none", f);
		break;
	}
}

/* ---- text table ---------------------------------------------------------- */

static void side_line(FILE *f, const char *label, const struct diff_side_info *s)
{
	char *path = term_text__escape(s->path), *cmd = term_text__escape(s->cmdline), pid[48];

	gt_pid_text(pid, sizeof(pid), s->pid);
	fprintf(f, "%-11s %s (pid %s%s%s)", label, path ? path : "?", pid, cmd && *cmd ? ": " : "",
		cmd ? cmd : "");
	if (s->processes > 1)
		fprintf(f, ", 1 of its %u processes with CUDA calls", s->processes);
	fputc('\n', f);
	if (s->damage)
		fprintf(f, "%-11s damaged: %s: the records before it are compared\n", "", s->damage);
	free(path);
	free(cmd);
}

static void ratio_line(FILE *f, const char *label, const struct diff_ratio *r, const char *what,
		       bool whole)
{
	char b[32], o[32];

	if (!r->valid) {
		fprintf(f, "%-11s - (no %s in one of the traces)\n", label, what);
		return;
	}
	fprintf(f, "%-11s %.3fx", label, r->point);
	if (r->interval)
		fprintf(f, "  [%.3fx, %.3fx] 95%% interval", r->lo, r->hi);
	fprintf(f, "  (%s%s %s -> %s)%s\n", whole ? "whole run " : "median ", what,
		fmt_ns(b, sizeof(b), r->base_ns, false), fmt_ns(o, sizeof(o), r->opt_ns, false),
		whole ? ", no interval without iterations" : "");
}

static void table_rows(FILE *f, const char *title, const struct diff_table *t, bool whole)
{
	char d[32], bt[32], bm[32], ot[32], om[32], bc[24], oc[24];

	fprintf(f, "\n%s: %llu faster, %llu slower, %llu unchanged, %llu added, %llu removed\n", title,
		(unsigned long long)t->by_class[DIFF_FASTER], (unsigned long long)t->by_class[DIFF_SLOWER],
		(unsigned long long)t->by_class[DIFF_UNCHANGED], (unsigned long long)t->by_class[DIFF_ADDED],
		(unsigned long long)t->by_class[DIFF_REMOVED]);
	if (!t->n)
		return;
	fprintf(f, "  %-9s %12s %10s %10s %10s %10s %10s %10s  %s\n", "Class",
		whole ? "Change" : "Change/iter", "Base N", "Base Total", "Base Med", "Opt N",
		"Opt Total", "Opt Med", "Name");
	for (size_t i = 0; i < t->n; i++) {
		const struct diff_row *r = &t->rows[i];
		char *name = term_text__escape(r->name);

		if (r->timed)
			fmt_ns(d, sizeof(d), r->delta, true);
		else
			snprintf(d, sizeof(d), "%s calls", fmt_count(bc, sizeof(bc), r->delta, true));
		snprintf(bc, sizeof(bc), "%llu", (unsigned long long)r->base.count);
		snprintf(oc, sizeof(oc), "%llu", (unsigned long long)r->opt.count);
		fprintf(f, "  %-9s %12s %10s %10s %9s%s %10s %10s %9s%s  %s\n", diff_class__name(r->cls), d,
			r->base.count ? bc : "-",
			r->base.timed ? fmt_ns(bt, sizeof(bt), (double)r->base.total_ns, false) : "-",
			r->base.timed ? fmt_ns(bm, sizeof(bm), r->base.median_ns, false) : "-",
			r->base.median_est ? "~" : " ", r->opt.count ? oc : "-",
			r->opt.timed ? fmt_ns(ot, sizeof(ot), (double)r->opt.total_ns, false) : "-",
			r->opt.timed ? fmt_ns(om, sizeof(om), r->opt.median_ns, false) : "-",
			r->opt.median_est ? "~" : " ", name ? name : "?");
		free(name);
	}
}

/* A term's value: ns, or a count. */
static const char *fmt_term(char *buf, size_t len, const struct diff_term_row *t, double v, bool sign)
{
	return t->count ? fmt_count(buf, len, v, sign) : fmt_ns(buf, len, v, sign);
}

/* A finding's state in words: "new", "gone", or "high -> low". */
static const char *finding_words(char *buf, size_t len, const struct diff_finding *fd)
{
	char b[32], o[32];

	if (!fd->in_base)
		snprintf(buf, len, "new (%s, %s)", fd->severity[1], fmt_ns(o, sizeof(o), fd->cost[1], false));
	else if (!fd->in_opt)
		snprintf(buf, len, "gone (was %s, %s)", fd->severity[0], fmt_ns(b, sizeof(b), fd->cost[0], false));
	else
		snprintf(buf, len, "%s %s -> %s %s", fd->severity[0], fmt_ns(b, sizeof(b), fd->cost[0], false),
			 fd->severity[1], fmt_ns(o, sizeof(o), fd->cost[1], false));
	return buf;
}

static void table_analysis(FILE *f, const struct diff_analysis *an, bool whole)
{
	char b[32], o[32], d[32], w[160];

	fprintf(f, "\nWhat moved, in analyze's terms (%s):\n",
		whole ? "the whole runs" : "per iteration, over the span of the iterations");
	if (!an->valid) {
		fprintf(f, "  - (%s)\n", an->why);
		return;
	}
	for (int t = 0; t < DIFF_T__COUNT; t++) {
		const struct diff_term_row *row = &an->terms[t];

		if (!row->known)
			continue;
		fprintf(f, "  %-42s %10s %10s %11s\n", row->label, fmt_term(b, sizeof(b), row, row->base, false),
			fmt_term(o, sizeof(o), row, row->opt, false),
			fmt_term(d, sizeof(d), row, row->opt - row->base, true));
	}
	fprintf(f, "  %-42s %s -> %s\n", "GPU busy from", an->busy_source[0], an->busy_source[1]);
	fprintf(f, "  %-42s %s -> %s\n", "What bounds it", an->bound[0], an->bound[1]);
	for (size_t i = 0; i < an->nfindings; i++)
		fprintf(f, "  %-42s %s: %s\n", i ? "" : "Findings", an->findings[i].id,
			finding_words(w, sizeof(w), &an->findings[i]));
	if (!an->nfindings)
		fprintf(f, "  %-42s none in either run\n", "Findings");
}

/* Which of the iterations found are compared: the steady state's. */
static void steady_line(FILE *f, const char *which, const struct diff_side_info *s)
{
	if (!s->it.found)
		return;
	if (s->it.steady)
		fprintf(f, "%-11s %s: the steady state, %u of the %u found (%u of start-up and %u of "
			"tail left out), %.3f s\n", "", which, s->it.count, s->it.found, s->it.startup,
			s->it.tail, (double)(s->it.steady_end - s->it.steady_start) / 1e9);
	else
		fprintf(f, "%-11s %s: no steady state (the iteration times do not settle): all %u "
			"compared\n", "", which, s->it.found);
}

static void write_table(const struct diff_result *r, FILE *f)
{
	const char *unit = r->whole_run ? "whole run" : "iterations";

	side_line(f, "Baseline:", &r->base);
	side_line(f, "Optimized:", &r->opt);
	/* in the output itself, not only on stderr: a saved table says it too */
	if (r->warning[0]) {
		char *w = term_text__escape(r->warning);

		fprintf(f, "%-11s %s\n", "Warning:", w ? w : "(out of memory)");
		free(w);
	}
	if (r->whole_run && r->why[0]) {
		fprintf(f, "%-11s found on both sides, but they do not correspond: %s; the whole runs are "
			"compared, with no interval\n", "Iterations:", r->why);
	} else if (r->whole_run) {
		fprintf(f, "%-11s none found in both: the whole runs are compared, with no interval\n",
			"Iterations:");
	} else {
		fprintf(f, "%-11s ", "Iterations:");
		put_iter_words(f, &r->base, false);
		fprintf(f, ": %u in the baseline, %u in the optimized", r->base.it.count,
			r->opt.it.count);
		if (!same_iters(&r->base, &r->opt)) {
			fputs(" (optimized: ", f);
			put_iter_words(f, &r->opt, false);
			fputc(')', f);
		}
		fputc('\n', f);
		steady_line(f, "baseline", &r->base);
		steady_line(f, "optimized", &r->opt);
	}
	ratio_line(f, "Speedup:", &r->speedup, r->whole_run ? "time" : "iteration", r->whole_run);
	if (r->why[0] && r->per_unit.valid)
		fprintf(f, "%-11s %.3fx per %s (%" PRIu64 " in the baseline, %" PRIu64 " in the optimized, "
			"the same %u kernels in the same proportions): an estimate, no interval\n", "Per unit:",
			r->per_unit.point, r->per_unit.unit, r->per_unit.base_n, r->per_unit.opt_n,
			r->per_unit.kinds);
	else if (r->why[0])
		fprintf(f, "%-11s none to compare by: %s\n", "Per unit:", r->per_unit.why);
	if (r->base.gpu_records && r->opt.gpu_records)
		ratio_line(f, "GPU busy:", &r->gpu_busy, r->whole_run ? "GPU busy" : "GPU busy per iteration",
			   r->whole_run);
	if (!r->whole_run)
		fprintf(f, "%-11s percentile bootstrap over the iterations, %u resamples, seed %llu\n", "",
			r->resamples, (unsigned long long)r->seed);
	table_rows(f, r->kernels_gpu ? "GPU kernels, copies and sets (GPU time)"
				     : "Kernel launches (CPU side: counts, and times when recorded)",
		   &r->kernels, r->whole_run);
	table_rows(f, "CUDA API calls (CPU time)", &r->apis, r->whole_run);
	if (r->sites.n)
		table_rows(f, "Call sites (CPU time in the calls with a stack made there)", &r->sites,
			   r->whole_run);
	table_analysis(f, &r->analysis, r->whole_run);
	fprintf(f, "\nRows are over the %s compared; ~: a median estimated within 3 %%. Unchanged: the change "
		"is inside %.2f standard errors of its spread across the %s, or under %.0f %% of the "
		"baseline.\n", unit, DIFF_Z, r->whole_run ? "calls" : "iterations", DIFF_MIN_REL * 100);
}

/* ---- Markdown ------------------------------------------------------------ */

/* s in a table cell, as code: pipes escaped, backticks made quotes;
 * control characters and bytes that are not UTF-8 written out as the tables
 * show them (\xHH, term_text__class), so that the document is UTF-8 and
 * nothing reaches a terminal raw. */
static void md_code(FILE *f, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i, l;

	fputc('`', f);
	for (i = 0; i < n; i += l) {
		char e = term_text__class(s, n, i, &l);

		if (e) {
			for (size_t k = 0; k < l; k++) {
				fprintf(f, "\\%c", e);
				if (e == 'x')
					fprintf(f, "%c%c", hex[s[i + k] >> 4], hex[s[i + k] & 15]);
			}
		} else if (s[i] == '|') {
			fputs("\\|", f);
		} else if (s[i] == '`') {
			fputc('\'', f);
		} else {
			fwrite(s + i, 1, l, f);
		}
	}
	fputc('`', f);
}

static void md_ratio(FILE *f, const char *label, const struct diff_ratio *r, bool whole)
{
	char b[32], o[32];

	if (!r->valid) {
		fprintf(f, "| %s | - | - | - | - |\n", label);
		return;
	}
	fprintf(f, "| %s | **%.3fx** | ", label, r->point);
	if (r->interval)
		fprintf(f, "%.3fx – %.3fx", r->lo, r->hi);
	else
		fprintf(f, "none%s", whole ? " (whole run)" : "");
	fprintf(f, " | %s | %s |\n", fmt_ns(b, sizeof(b), r->base_ns, false),
		fmt_ns(o, sizeof(o), r->opt_ns, false));
}

static void md_rows(FILE *f, const char *title, const struct diff_table *t, bool whole)
{
	char d[32], bt[32], bm[32], ot[32], om[32], c[24];

	fprintf(f, "\n### %s\n\n%llu faster, %llu slower, %llu unchanged, %llu added, %llu removed.\n",
		title, (unsigned long long)t->by_class[DIFF_FASTER],
		(unsigned long long)t->by_class[DIFF_SLOWER],
		(unsigned long long)t->by_class[DIFF_UNCHANGED],
		(unsigned long long)t->by_class[DIFF_ADDED], (unsigned long long)t->by_class[DIFF_REMOVED]);
	if (!t->n)
		return;
	fprintf(f, "\n| Class | %s | Base N | Base total | Base median | Opt N | Opt total | Opt median | Name |\n"
		"|---|--:|--:|--:|--:|--:|--:|--:|---|\n", whole ? "Change" : "Change / iteration");
	for (size_t i = 0; i < t->n; i++) {
		const struct diff_row *r = &t->rows[i];

		if (r->timed)
			fmt_ns(d, sizeof(d), r->delta, true);
		else
			snprintf(d, sizeof(d), "%s calls", fmt_count(c, sizeof(c), r->delta, true));
		fprintf(f, "| %s | %s | %llu | %s | %s%s | %llu | %s | %s%s | ", diff_class__name(r->cls), d,
			(unsigned long long)r->base.count,
			r->base.timed ? fmt_ns(bt, sizeof(bt), (double)r->base.total_ns, false) : "-",
			r->base.median_est ? "~" : "",
			r->base.timed ? fmt_ns(bm, sizeof(bm), r->base.median_ns, false) : "-",
			(unsigned long long)r->opt.count,
			r->opt.timed ? fmt_ns(ot, sizeof(ot), (double)r->opt.total_ns, false) : "-",
			r->opt.median_est ? "~" : "",
			r->opt.timed ? fmt_ns(om, sizeof(om), r->opt.median_ns, false) : "-");
		md_code(f, r->name);
		fputs(" |\n", f);
	}
}

static void md_analysis(FILE *f, const struct diff_analysis *an, bool whole)
{
	char b[32], o[32], d[32], w[160];

	fprintf(f, "\n### What moved, in analyze's terms\n\n");
	if (!an->valid) {
		fprintf(f, "Not available: %s.\n", an->why);
		return;
	}
	fprintf(f, "%s.\n\n| | Baseline | Optimized | Change |\n|---|--:|--:|--:|\n",
		whole ? "The whole runs" : "Per iteration, over the span of the iterations");
	for (int t = 0; t < DIFF_T__COUNT; t++) {
		const struct diff_term_row *row = &an->terms[t];

		if (row->known)
			fprintf(f, "| %s | %s | %s | %s |\n", row->label,
				fmt_term(b, sizeof(b), row, row->base, false),
				fmt_term(o, sizeof(o), row, row->opt, false),
				fmt_term(d, sizeof(d), row, row->opt - row->base, true));
	}
	fprintf(f, "| GPU busy from | %s | %s | |\n| What bounds it | %s | %s | |\n", an->busy_source[0],
		an->busy_source[1], an->bound[0], an->bound[1]);
	for (size_t i = 0; i < an->nfindings; i++) {
		fprintf(f, "%s| `%s` | %s |\n", i ? "" : "\n| Finding | |\n|---|---|\n", an->findings[i].id,
			finding_words(w, sizeof(w), &an->findings[i]));
	}
}

static void write_md(const struct diff_result *r, FILE *f)
{
	fputs("## Diff\n\n", f);
	if (r->warning[0]) {
		fputs("> **Warning:** ", f);
		md_code(f, r->warning);
		fputs("\n\n", f);
	}
	if (r->base.damage || r->opt.damage) {
		fprintf(f, "> **Damaged:** the %s: ", r->base.damage ? "baseline" : "optimized");
		md_code(f, r->base.damage ? r->base.damage : r->opt.damage);
		fputs(": the records before it are compared\n\n", f);
	}
	fputs("| | Trace | Process | Iterations |\n|---|---|---|---|\n", f);
	for (int k = 0; k < 2; k++) {
		const struct diff_side_info *sd = k ? &r->opt : &r->base;

		fputs(k ? "| Optimized | " : "| Baseline | ", f);
		md_code(f, sd->path);
		fprintf(f, " | %u ", sd->pid);
		md_code(f, sd->cmdline);
		fprintf(f, " | %u, ", sd->it.count);
		if (r->whole_run)
			fputs("whole run", f);
		else
			put_iter_words(f, sd, true);
		fputs(k ? " |\n\n" : " |\n", f);
	}
	fprintf(f, "| | Speedup | 95 %% interval | Baseline | Optimized |\n|---|--:|--:|--:|--:|\n");
	md_ratio(f, r->whole_run ? "Time" : "Median iteration", &r->speedup, r->whole_run);
	if (r->why[0] && r->per_unit.valid)
		fprintf(f, "| Per %s (estimate) | %.3fx | none | %" PRIu64 " | %" PRIu64 " |\n", r->per_unit.unit,
			r->per_unit.point, r->per_unit.base_n, r->per_unit.opt_n);
	if (r->base.gpu_records && r->opt.gpu_records)
		md_ratio(f, r->whole_run ? "GPU busy" : "GPU busy per iteration", &r->gpu_busy, r->whole_run);
	if (r->whole_run)
		fputs("\nNo iterations in both traces: whole runs compared, without an interval.\n", f);
	else
		fprintf(f, "\nIntervals: percentile bootstrap over the iterations, %u resamples, seed %llu.\n",
			r->resamples, (unsigned long long)r->seed);
	md_rows(f, r->kernels_gpu ? "GPU kernels, copies and sets" : "Kernel launches", &r->kernels,
		r->whole_run);
	md_rows(f, "CUDA API calls", &r->apis, r->whole_run);
	if (r->sites.n)
		md_rows(f, "Call sites (calls with a stack)", &r->sites, r->whole_run);
	md_analysis(f, &r->analysis, r->whole_run);
}


int diff_result__write(const struct diff_result *r, enum diff_format fmt, FILE *out)
{
	if (fmt == DIFF_JSON) {
		int err = diff__write_json(r, out);

		if (err)
			return err;
	} else if (fmt == DIFF_MD) {
		write_md(r, out);
	} else {
		write_table(r, out);
	}
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}
