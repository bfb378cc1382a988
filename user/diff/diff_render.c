// SPDX-License-Identifier: MIT
/*
 * The renderings of a struct diff_result: a text table, one JSON document
 * (every figure, in ns and plain ratios), Markdown (for reports).  They
 * read the same struct, so they cannot disagree on a number.  Text from
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
#include "lib/obuf.h"
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
	char *path = term_text__escape(s->path), *cmd = term_text__escape(s->cmdline);

	fprintf(f, "%-11s %s (pid %u%s%s)", label, path ? path : "?", s->pid, cmd && *cmd ? ": " : "",
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
	md_analysis(f, &r->analysis, r->whole_run);
}

/* ---- JSON ---------------------------------------------------------------- */

static void j_num(struct obuf *o, double v)
{
	/* DBL_MAX is 309 digits before the point */
	char b[400];
	int n;

	/* JSON has no inf or nan */
	if (!isfinite(v)) {
		OBUF_LIT(o, "null");
		return;
	}
	n = snprintf(b, sizeof(b), "%.6f", v);
	if (n < 0 || (size_t)n >= sizeof(b)) {
		OBUF_LIT(o, "null");
		return;
	}

	/* "12.500000" -> "12.5", "3.000000" -> "3" */
	while (n > 1 && b[n - 1] == '0')
		n--;
	if (n > 1 && b[n - 1] == '.')
		n--;
	obuf__mem(o, b, (size_t)n);
}

static void j_key(struct obuf *o, const char *k, bool first)
{
	if (!first)
		OBUF_LIT(o, ",");
	obuf__json_str(o, k);
	OBUF_LIT(o, ":");
}

static void j_bool(struct obuf *o, bool v)
{
	if (v)
		OBUF_LIT(o, "true");
	else
		OBUF_LIT(o, "false");
}

static void j_side(struct obuf *o, const struct diff_side_info *s)
{
	OBUF_LIT(o, "{");
	j_key(o, "path", true);
	obuf__json_str(o, s->path);
	j_key(o, "pid", false);
	obuf__u64(o, s->pid);
	j_key(o, "cmdline", false);
	obuf__json_str(o, s->cmdline);
	j_key(o, "processes", false);
	obuf__u64(o, s->processes);
	j_key(o, "records", false);
	obuf__u64(o, s->records);
	j_key(o, "calls", false);
	obuf__u64(o, s->calls);
	j_key(o, "gpu_records", false);
	obuf__u64(o, s->gpu_records);
	j_key(o, "sampled", false);
	j_bool(o, s->sampled);
	j_key(o, "damage", false);
	if (s->damage)
		obuf__json_str(o, s->damage);
	else
		OBUF_LIT(o, "null");
	j_key(o, "iterations", false);
	OBUF_LIT(o, "{");
	j_key(o, "source", true);
	obuf__json_str(o, diff_iter_source__name(s->it.source));
	j_key(o, "name", false);
	if (s->it.name)
		obuf__json_str(o, s->it.name);
	else
		OBUF_LIT(o, "null");
	j_key(o, "count", false);
	obuf__u64(o, s->it.count);
	j_key(o, "period", false);
	obuf__u64(o, s->it.period);
	j_key(o, "off_sequence", false);
	obuf__u64(o, s->it.off_sequence);
	j_key(o, "median_ns", false);
	obuf__u64(o, s->it.median_ns);
	j_key(o, "gpu_median_ns", false);
	obuf__u64(o, s->it.gpu_median_ns);
	j_key(o, "unattributed", false);
	obuf__u64(o, s->it.unattributed);
	j_key(o, "late", false);
	obuf__u64(o, s->it.late);
	j_key(o, "gpu_unordered", false);
	obuf__u64(o, s->it.gpu_unordered);
	j_key(o, "phases", false);
	OBUF_LIT(o, "{");
	j_key(o, "found", true);
	obuf__u64(o, s->it.found);
	j_key(o, "steady", false);
	j_bool(o, s->it.steady);
	j_key(o, "startup", false);
	obuf__u64(o, s->it.startup);
	j_key(o, "tail", false);
	obuf__u64(o, s->it.tail);
	j_key(o, "steady_start_ts", false);
	obuf__u64(o, s->it.steady_start);
	j_key(o, "steady_end_ts", false);
	obuf__u64(o, s->it.steady_end);
	OBUF_LIT(o, "}}}");
}

static void j_ratio(struct obuf *o, const struct diff_ratio *r)
{
	if (!r->valid) {
		OBUF_LIT(o, "null");
		return;
	}
	OBUF_LIT(o, "{");
	j_key(o, "point", true);
	j_num(o, r->point);
	j_key(o, "interval", false);
	if (r->interval) {
		OBUF_LIT(o, "[");
		j_num(o, r->lo);
		OBUF_LIT(o, ",");
		j_num(o, r->hi);
		OBUF_LIT(o, "]");
	} else {
		OBUF_LIT(o, "null");
	}
	j_key(o, "base_ns", false);
	j_num(o, r->base_ns);
	j_key(o, "opt_ns", false);
	j_num(o, r->opt_ns);
	OBUF_LIT(o, "}");
}

static void j_stat(struct obuf *o, const struct diff_stat *s)
{
	OBUF_LIT(o, "{");
	j_key(o, "count", true);
	obuf__u64(o, s->count);
	j_key(o, "timed", false);
	obuf__u64(o, s->timed);
	j_key(o, "total_ns", false);
	obuf__u64(o, s->total_ns);
	j_key(o, "median_ns", false);
	j_num(o, s->median_ns);
	j_key(o, "median_estimated", false);
	j_bool(o, s->median_est);
	j_key(o, "per_iteration", false);
	j_num(o, s->per_iter);
	OBUF_LIT(o, "}");
}

static void j_table(struct obuf *o, const struct diff_table *t, const char *source)
{
	static const char *const keys[] = { "added", "removed", "faster", "slower", "unchanged" };

	OBUF_LIT(o, "{");
	j_key(o, "source", true);
	obuf__json_str(o, source);
	j_key(o, "classes", false);
	OBUF_LIT(o, "{");
	for (int c = 0; c < 5; c++) {
		j_key(o, keys[c], !c);
		obuf__u64(o, t->by_class[c]);
	}
	OBUF_LIT(o, "}");
	j_key(o, "rows", false);
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < t->n; i++) {
		const struct diff_row *r = &t->rows[i];

		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "\n{");
		j_key(o, "name", true);
		obuf__json_str(o, r->name);
		j_key(o, "class", false);
		obuf__json_str(o, diff_class__name(r->cls));
		j_key(o, "timed", false);
		j_bool(o, r->timed);
		j_key(o, "delta", false);
		j_num(o, r->delta);
		j_key(o, "noise", false);
		j_num(o, r->noise);
		j_key(o, "base", false);
		j_stat(o, &r->base);
		j_key(o, "opt", false);
		j_stat(o, &r->opt);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]}");
}

static void j_opt_str(struct obuf *o, const char *s)
{
	if (s)
		obuf__json_str(o, s);
	else
		OBUF_LIT(o, "null");
}

static void j_analysis(struct obuf *o, const struct diff_analysis *an, bool whole)
{
	OBUF_LIT(o, "{");
	j_key(o, "valid", true);
	j_bool(o, an->valid);
	if (!an->valid) {
		j_key(o, "why", false);
		obuf__json_str(o, an->why);
		OBUF_LIT(o, "}");
		return;
	}
	j_key(o, "per_iteration", false);
	j_bool(o, !whole);
	j_key(o, "terms", false);
	OBUF_LIT(o, "{");
	for (int t = 0; t < DIFF_T__COUNT; t++) {
		const struct diff_term_row *row = &an->terms[t];

		j_key(o, row->key, !t);
		if (!row->known) {
			OBUF_LIT(o, "null");
			continue;
		}
		OBUF_LIT(o, "{\"base\":");
		j_num(o, row->base);
		OBUF_LIT(o, ",\"opt\":");
		j_num(o, row->opt);
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "}");
	j_key(o, "busy_source", false);
	OBUF_LIT(o, "[");
	j_opt_str(o, an->busy_source[0]);
	OBUF_LIT(o, ",");
	j_opt_str(o, an->busy_source[1]);
	OBUF_LIT(o, "]");
	j_key(o, "bound", false);
	OBUF_LIT(o, "[");
	j_opt_str(o, an->bound[0]);
	OBUF_LIT(o, ",");
	j_opt_str(o, an->bound[1]);
	OBUF_LIT(o, "]");
	j_key(o, "findings", false);
	OBUF_LIT(o, "[");
	for (size_t i = 0; i < an->nfindings; i++) {
		const struct diff_finding *fd = &an->findings[i];

		if (i)
			OBUF_LIT(o, ",");
		OBUF_LIT(o, "{");
		j_key(o, "id", true);
		obuf__json_str(o, fd->id);
		for (int k = 0; k < 2; k++) {
			j_key(o, k ? "opt" : "base", false);
			if (!(k ? fd->in_opt : fd->in_base)) {
				OBUF_LIT(o, "null");
				continue;
			}
			OBUF_LIT(o, "{\"severity\":");
			obuf__json_str(o, fd->severity[k]);
			OBUF_LIT(o, ",\"cost_ns\":");
			j_num(o, fd->cost[k]);
			OBUF_LIT(o, "}");
		}
		OBUF_LIT(o, "}");
	}
	OBUF_LIT(o, "]}");
}

static int write_json(const struct diff_result *r, FILE *f)
{
	static const char *const mm[] = { "program", "no_common_kernels", "gpu_records_in_one",
					  "iterations", "sampled", "damaged", "no_correspondence" };
	struct obuf o;
	bool first = true;
	int err = obuf__init(&o, f);

	if (err)
		return err;
	OBUF_LIT(&o, "{");
	j_key(&o, "baseline", true);
	j_side(&o, &r->base);
	j_key(&o, "optimized", false);
	j_side(&o, &r->opt);
	j_key(&o, "swapped", false);
	j_bool(&o, r->swapped);
	j_key(&o, "whole_run", false);
	j_bool(&o, r->whole_run);
	/* whether a script may trust the interval: the iterations found on
	 * both sides were checked to be the same ones */
	j_key(&o, "correspondence", false);
	OBUF_LIT(&o, "{");
	j_key(&o, "checked", true);
	j_bool(&o, r->checked);
	j_key(&o, "ok", false);
	j_bool(&o, r->corresponds);
	j_key(&o, "why", false);
	if (r->why[0])
		obuf__json_str(&o, r->why);
	else
		OBUF_LIT(&o, "null");
	OBUF_LIT(&o, "}");
	/* not corresponding: the whole runs per unit of work both did */
	j_key(&o, "per_unit", false);
	if (!r->why[0]) {
		OBUF_LIT(&o, "null");
	} else {
		const struct diff_per_unit *u = &r->per_unit;

		OBUF_LIT(&o, "{");
		j_key(&o, "unit", true);
		if (u->valid)
			obuf__json_str(&o, u->unit);
		else
			OBUF_LIT(&o, "null");
		j_key(&o, "speedup", false);
		if (u->valid)
			j_num(&o, u->point);
		else
			OBUF_LIT(&o, "null");
		j_key(&o, "baseline", false);
		j_num(&o, (double)u->base_n);
		j_key(&o, "optimized", false);
		j_num(&o, (double)u->opt_n);
		j_key(&o, "estimated", false);
		j_bool(&o, true);
		j_key(&o, "why", false);
		if (u->valid)
			OBUF_LIT(&o, "null");
		else
			obuf__json_str(&o, u->why);
		OBUF_LIT(&o, "}");
	}
	j_key(&o, "speedup", false);
	j_ratio(&o, &r->speedup);
	j_key(&o, "gpu_busy", false);
	j_ratio(&o, &r->gpu_busy);
	j_key(&o, "bootstrap", false);
	OBUF_LIT(&o, "{\"method\":\"percentile\",\"level\":0.95,\"resamples\":");
	obuf__u64(&o, r->resamples);
	OBUF_LIT(&o, ",\"seed\":");
	obuf__u64(&o, r->seed);
	OBUF_LIT(&o, "}");
	j_key(&o, "kernels", false);
	j_table(&o, &r->kernels, r->kernels_gpu ? "gpu" : "launches");
	j_key(&o, "apis", false);
	j_table(&o, &r->apis, "calls");
	j_key(&o, "analysis", false);
	j_analysis(&o, &r->analysis, r->whole_run);
	j_key(&o, "mismatch", false);
	OBUF_LIT(&o, "[");
	for (unsigned i = 0; i < sizeof(mm) / sizeof(mm[0]); i++) {
		if (!(r->mismatch & (1u << i)))
			continue;
		if (!first)
			OBUF_LIT(&o, ",");
		obuf__json_str(&o, mm[i]);
		first = false;
	}
	OBUF_LIT(&o, "]");
	j_key(&o, "warning", false);
	if (r->warning[0])
		obuf__json_str(&o, r->warning);
	else
		OBUF_LIT(&o, "null");
	OBUF_LIT(&o, "}\n");
	err = obuf__flush(&o);
	obuf__free(&o);
	return err;
}

int diff_result__write(const struct diff_result *r, enum diff_format fmt, FILE *out)
{
	if (fmt == DIFF_JSON) {
		int err = write_json(r, out);

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
