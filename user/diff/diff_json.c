// SPDX-License-Identifier: MIT
/*
 * A struct diff_result as one JSON document: every figure of the table and
 * Markdown (diff_render.c), times in ns, ratios plain; text from the traces
 * as JSON strings.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff/diff.h"
#include "diff/diff_int.h"
#include "lib/obuf.h"

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
		OBUF_LIT(o, "{\"label\":");
		obuf__json_str(o, row->label);
		OBUF_LIT(o, ",\"base\":");
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

int diff__write_json(const struct diff_result *r, FILE *f)
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
	j_key(&o, "sites", false);
	j_table(&o, &r->sites, "calls");
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
