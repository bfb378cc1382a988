// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf diff`: the order of the two traces, the pure core that
 * compares two sides (diff__compute), and the run of the command.  The
 * passes over a trace are diff_trace.c, the renderings diff_render.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diff/diff_int.h"
#include "format/api.h"
#include "lib/installer.h"
#include "lib/term_text.h"
#include "lib/vec.h"
#include "lib/cmp.h"

/* ---- names of things ---------------------------------------------------- */

const char *diff_class__name(enum diff_class c)
{
	static const char *const names[] = { "added", "removed", "faster", "slower", "unchanged" };

	return (unsigned)c < 5 ? names[c] : "?";
}

const char *diff_iter_source__name(enum diff_iter_source s)
{
	static const char *const names[] = { "none", "nvtx", "capture", "graph", "kernels", "sync" };

	return (unsigned)s < 6 ? names[s] : "?";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool diff__order(const char *a, const char *b, const char **base, const char **opt)
{
	bool a_opt = ends_with(a, "_optimized.gtrace"), b_base = ends_with(b, "_baseline.gtrace");
	bool a_base = ends_with(a, "_baseline.gtrace"), b_opt = ends_with(b, "_optimized.gtrace");
	bool swap = (a_opt || b_base) && !a_base && !b_opt;

	*base = swap ? b : a;
	*opt = swap ? a : b;
	return swap;
}

int diff__check_iter(const char *iter)
{
	if (!iter || !*iter || !strcmp(iter, "nvtx:"))
		return -EINVAL;
	return 0;
}

/* ---- the result's strings ----------------------------------------------- */

static const char *keep(struct diff_result *r, const char *s)
{
	return diff_strs__keep(&r->strs, &r->nstrs, &r->strs_cap, s);
}

void diff_result__free(struct diff_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	free(r->strs);
	free(r->kernels.rows);
	free(r->sites.rows);
	free(r->apis.rows);
	free(r);
}

/* ---- rows --------------------------------------------------------------- */

/* One side of a row: its figures, and what the classification compares. */
static void row_side(const struct diff_side *s, const struct diff_acc *a, bool timed,
		     struct diff_stat *st, struct diff_obs *ob)
{
	const struct diff_moments *m;

	*st = (struct diff_stat){ 0 };
	*ob = (struct diff_obs){ 0 };
	if (!a || !a->count)
		return;
	st->count = a->count;
	st->timed = a->timed;
	st->total_ns = a->total;
	if (a->timed) {
		st->median_ns = (double)loghist__median(&a->sk);
		/* exact when the buckets hold one value each: all equal, or all
		 * below the first bucket wider than 1 */
		st->median_est = a->sk.min != a->sk.max && a->sk.max >= 2 * LOGHIST_SUB;
	}
	ob->count = a->count;
	if (s->whole) {
		/* no iterations: the run's total, with the variance of a sum of
		 * that many calls (their spread per call) */
		st->per_iter = timed ? (double)a->total : (double)a->count;
		ob->var = timed ? (double)a->call.n * diff_moments__var(&a->call) : 0;
		ob->units = 1;
	} else {
		m = timed ? &a->it_t : &a->it_c;
		st->per_iter = m->mean;
		ob->var = diff_moments__var(m);
		ob->units = s->n_iter;
	}
	ob->mean = st->per_iter;
}

static int add_row(struct diff_result *r, struct diff_table *t, size_t *cap, const char *name,
		   const struct diff_side *b, const struct diff_acc *ab, const struct diff_side *o,
		   const struct diff_acc *ao)
{
	struct diff_obs ob, oo;
	struct diff_row *row;
	bool in_b = ab && ab->count, in_o = ao && ao->count;

	if (!in_b && !in_o)
		return 0;
	if (vec__reserve(&t->rows, cap, t->n, 1, 32))
		return -ENOMEM;
	row = &t->rows[t->n++];
	*row = (struct diff_row){ .name = keep(r, name) };
	if (!row->name)
		return -ENOMEM;
	/* by time when every run it is in timed it, else by count */
	row->timed = (!in_b || ab->timed) && (!in_o || ao->timed);
	row_side(b, ab, row->timed, &row->base, &ob);
	row_side(o, ao, row->timed, &row->opt, &oo);
	row->delta = row->opt.per_iter - row->base.per_iter;
	row->cls = diff_stat__classify(&ob, &oo, &row->noise);
	t->by_class[row->cls]++;
	return 0;
}

static double absd(double x)
{
	return x < 0 ? -x : x;
}

/* Timed rows first, then by how much they moved, then by name. */
static int row_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;

	if (a->timed != b->timed)
		return a->timed ? -1 : 1;
	if (absd(a->delta) != absd(b->delta))
		return absd(a->delta) > absd(b->delta) ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int names_rows(struct diff_result *r, struct diff_table *t, const struct diff_side *b,
		      const struct diff_names *nb, const struct diff_side *o,
		      const struct diff_names *no)
{
	size_t cap = 0;
	int err = 0;

	for (uint32_t i = 0; i < nb->n && !err; i++)
		err = add_row(r, t, &cap, nb->v[i]->name, b, nb->v[i], o,
			      diff_names__find(no, nb->v[i]->name));
	for (uint32_t i = 0; i < no->n && !err; i++)
		if (!diff_names__find(nb, no->v[i]->name))
			err = add_row(r, t, &cap, no->v[i]->name, b, NULL, o, no->v[i]);
	if (!err && t->n)
		cmp__sort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	return err;
}

static int api_rows(struct diff_result *r, const struct diff_side *b, const struct diff_side *o)
{
	size_t cap = 0;
	int err = 0;

	for (unsigned i = 0; i < GT_API__COUNT && !err; i++)
		err = add_row(r, &r->apis, &cap, gt_api__name(i), b, &b->api[i], o, &o->api[i]);
	if (!err && r->apis.n)
		cmp__sort(r->apis.rows, r->apis.n, sizeof(*r->apis.rows), row_cmp);
	return err;
}

/* ---- mismatches --------------------------------------------------------- */

/* The program of a command line: the last path component of its first word. */
static size_t program_of(const char *cmdline, const char **prog)
{
	const char *p = cmdline, *end = cmdline + strcspn(cmdline, " \t"), *slash;

	for (slash = p; slash < end; slash++)
		if (*slash == '/')
			p = slash + 1;
	*prog = p;
	return (size_t)(end - p);
}

static void warn_add(struct diff_result *r, const char *what)
{
	size_t n = strlen(r->warning);

	snprintf(r->warning + n, sizeof(r->warning) - n, "%s%s", n ? "; " : "", what);
}

static void mismatches(struct diff_result *r, bool partial)
{
	const char *pb, *po;
	size_t nb = program_of(r->base.cmdline, &pb), no = program_of(r->opt.cmdline, &po);
	char buf[256];

	if (nb && no && (nb != no || memcmp(pb, po, nb))) {
		r->mismatch |= DIFF_MM_PROGRAM;
		/* 60 bytes of each, cut between characters */
		snprintf(buf, sizeof(buf), "different programs (%.*s, %.*s)", (int)term_text__cut(pb, nb, 60),
			 pb, (int)term_text__cut(po, no, 60), po);
		warn_add(r, buf);
	}
	if ((r->base.gpu_records > 0) != (r->opt.gpu_records > 0)) {
		r->mismatch |= DIFF_MM_GPU_ONE;
		snprintf(buf, sizeof(buf), "only the %s has GPU records: kernels compared by their launches",
			 r->base.gpu_records ? "baseline" : "optimized");
		warn_add(r, buf);
	}
	if (r->kernels.by_class[DIFF_ADDED] && r->kernels.by_class[DIFF_REMOVED] &&
	    r->kernels.by_class[DIFF_ADDED] + r->kernels.by_class[DIFF_REMOVED] == r->kernels.n) {
		r->mismatch |= DIFF_MM_NO_COMMON;
		warn_add(r, "no kernel in common");
	}
	if (partial) {
		r->mismatch |= DIFF_MM_ITERS;
		warn_add(r, r->whole_run ? "iterations in one trace only: whole runs compared"
					  : "iterations of a kind only one trace has were passed over");
	}
	if (r->base.sampled || r->opt.sampled) {
		r->mismatch |= DIFF_MM_SAMPLED;
		if (r->base.sampled && r->opt.sampled)
			warn_add(r, "light mode: launches and other hot calls are sampled");
		else
			warn_add(r, r->base.sampled ? "the baseline is light mode, the optimized full: the "
				  "baseline's launches and other hot calls are sampled"
						    : "the optimized is light mode, the baseline full: the "
				  "optimized's launches and other hot calls are sampled");
	}
	/* a damaged trace: the mismatch, and each side's damage in the
	 * document; the line that says so is the readers' rule's */
	if (trace_damage__any(&r->base.dmg) || trace_damage__any(&r->opt.dmg))
		r->mismatch |= DIFF_MM_DAMAGED;
}

/* ---- analyze's terms ----------------------------------------------------- */

static const struct {
	const char *key, *label;
	bool count;
} terms[DIFF_T__COUNT] = {
	[DIFF_T_WALL] = { "wall", "Wall time", false },
	[DIFF_T_GPU_BUSY] = { "gpu_busy", "GPU busy", false },
	[DIFF_T_IDLE_SUBMIT] = { "idle_submit", "GPU idle: waiting for the host to submit", false },
	[DIFF_T_IDLE_LAUNCH] = { "idle_launch", "GPU idle: launch overhead", false },
	[DIFF_T_IDLE_SYNC] = { "idle_sync", "GPU idle: host in a sync or blocking copy", false },
	[DIFF_T_IDLE_OTHER] = { "idle_other", "GPU idle: other", false },
	[DIFF_T_KERNELS] = { "kernels", "GPU kernels", false },
	[DIFF_T_COPIES] = { "copies", "GPU copies and sets", false },
	[DIFF_T_CPU_CALLS] = { "cpu_calls", "CPU: in CUDA calls", false },
	[DIFF_T_CPU_SYNC] = { "cpu_sync", "CPU: waiting in syncs", false },
	[DIFF_T_CPU_SYNC_BLOCKED] = { "cpu_sync_blocked", "CPU: waiting in syncs, blocked", false },
	[DIFF_T_CPU_OUTSIDE] = { "cpu_outside", "CPU: outside CUDA", false },
	[DIFF_T_CPU_OFF] = { "cpu_off", "CPU: outside CUDA, off-CPU", false },
	[DIFF_T_CPU_HOST] = { "cpu_host", "CPU: outside CUDA, host work", false },
	[DIFF_T_LAUNCHES] = { "launches", "Launches", true },
};

/* A side's figure per iteration (the run's without iterations). */
static double per_iter(const struct diff_side *s, double v)
{
	return s->whole ? v : v / (double)s->n_iter;
}

static int finding_cmp(const void *x, const void *y)
{
	const struct diff_finding *a = x, *b = y;
	double ca = a->cost[0] > a->cost[1] ? a->cost[0] : a->cost[1];
	double cb = b->cost[0] > b->cost[1] ? b->cost[0] : b->cost[1];

	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(a->id, b->id);
}

static struct diff_finding *finding_of(struct diff_analysis *an, const char *id)
{
	for (size_t i = 0; i < an->nfindings; i++)
		if (!strcmp(an->findings[i].id, id))
			return &an->findings[i];
	if (an->nfindings == AZ_RULE__COUNT)
		return NULL;
	an->findings[an->nfindings] = (struct diff_finding){ .id = id };
	return &an->findings[an->nfindings++];
}

static void analysis_of(const struct diff_side *b, const struct diff_side *o, struct diff_analysis *an)
{
	const struct diff_side *side[2] = { b, o };

	an->valid = b->az.valid && o->az.valid;
	if (!an->valid) {
		const char *why = b->az.valid ? o->az.why : b->az.why;

		snprintf(an->why, sizeof(an->why), "%s: %.*s", b->az.valid ? "optimized" : "baseline",
			 (int)term_text__cut(why, strlen(why), 180), why);
		return;
	}
	for (int t = 0; t < DIFF_T__COUNT; t++) {
		struct diff_term_row *row = &an->terms[t];

		row->key = terms[t].key;
		row->label = terms[t].label;
		row->count = terms[t].count;
		row->known = b->az.known[t] && o->az.known[t];
		row->base = per_iter(b, b->az.v[t]);
		row->opt = per_iter(o, o->az.v[t]);
	}
	for (int k = 0; k < 2; k++) {
		const struct diff_az *az = &side[k]->az;

		an->bound[k] = az->bound;
		an->busy_source[k] = az->busy_source;
		for (uint32_t i = 0; i < az->nf; i++) {
			struct diff_finding *f = finding_of(an, az->f[i].id);

			if (!f)
				continue;
			if (k)
				f->in_opt = true;
			else
				f->in_base = true;
			f->severity[k] = az->f[i].severity;
			f->cost[k] = per_iter(side[k], (double)az->f[i].cost_ns);
		}
	}
	cmp__sort(an->findings, an->nfindings, sizeof(*an->findings), finding_cmp);
}

/* ---- the core ----------------------------------------------------------- */

static int copy_info(struct diff_result *r, struct diff_side_info *to, const struct diff_side_info *from)
{
	*to = *from;
	to->path = keep(r, from->path ? from->path : "");
	to->cmdline = keep(r, from->cmdline ? from->cmdline : "");
	to->damage = from->damage ? keep(r, from->damage) : NULL;
	to->it.name = from->it.name ? keep(r, from->it.name) : NULL;
	return to->path && to->cmdline && (!from->damage || to->damage) &&
	       (!from->it.name || to->it.name) ? 0 : -ENOMEM;
}

static uint64_t median_of(const uint64_t *v, uint32_t n)
{
	uint64_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	double m;

	if (!tmp)
		return 0;
	memcpy(tmp, v, n * sizeof(*v));
	m = diff_stat__median(tmp, n);
	free(tmp);
	return (uint64_t)(m + 0.5);
}

int diff__compute(const struct diff_side *b, const struct diff_side *o, bool partial,
		  struct diff_result *r)
{
	bool gpu = b->info.gpu_records && o->info.gpu_records;
	int err;

	*r = (struct diff_result){ .resamples = DIFF_RESAMPLES, .seed = DIFF_SEED };
	err = copy_info(r, &r->base, &b->info);
	if (!err)
		err = copy_info(r, &r->opt, &o->info);
	if (err)
		return err;
	r->whole_run = b->whole || o->whole;
	r->base.it.count = b->n_iter;
	r->opt.it.count = o->n_iter;
	r->base.it.median_ns = median_of(b->iter_ns, b->n_iter);
	r->opt.it.median_ns = median_of(o->iter_ns, o->n_iter);
	err = diff_stat__ratio(b->iter_ns, b->n_iter, o->iter_ns, o->n_iter, DIFF_RESAMPLES, DIFF_SEED,
			       &r->speedup);
	if (!err && gpu) {
		r->base.it.gpu_median_ns = median_of(b->gpu_ns, b->n_iter);
		r->opt.it.gpu_median_ns = median_of(o->gpu_ns, o->n_iter);
		err = diff_stat__ratio(b->gpu_ns, b->n_iter, o->gpu_ns, o->n_iter, DIFF_RESAMPLES,
				       DIFF_SEED, &r->gpu_busy);
	}
	r->kernels_gpu = gpu;
	if (!err)
		err = names_rows(r, &r->kernels, b, &b->tab[gpu ? DIFF_TAB_GPU : DIFF_TAB_LAUNCH], o,
				 &o->tab[gpu ? DIFF_TAB_GPU : DIFF_TAB_LAUNCH]);
	if (!err)
		err = api_rows(r, b, o);
	if (!err)
		err = names_rows(r, &r->sites, b, &b->tab[DIFF_TAB_SITE], o, &o->tab[DIFF_TAB_SITE]);
	if (!err) {
		analysis_of(b, o, &r->analysis);
		mismatches(r, partial);
	}
	return err;
}

/* ---- correspondence ----------------------------------------------------- */

/*
 * Whether the iterations chosen on the two sides are the same iterations
 * of the program: the source is the same (diff_iter__choose); a
 * synchronization series must end each iteration with the same call (an
 * eager step and its CUDA graph both end in the synchronize that closes the
 * step); a kernel sequence, which has no such anchor, must repeat as often
 * on both sides (within DIFF_MATCH_COUNT): a sequence one side repeats
 * thousands of times and the other a few dozen is a pattern inside the
 * iteration on one side only; and the two processes must run the same
 * program (the last path component of their command lines' first word).
 * When not, why says so in a line.
 */
#define DIFF_MATCH_COUNT 1.25

static bool correspond(const struct diff_cand *x, const struct diff_cand *y, const char *cmd_x,
		       const char *cmd_y, char *why, size_t n)
{
	const char *px = NULL, *py = NULL;
	size_t nx, ny;
	double r;

	/* iterations of two programs are no one program's */
	nx = cmd_x ? program_of(cmd_x, &px) : 0;
	ny = cmd_y ? program_of(cmd_y, &py) : 0;
	if (nx && ny && (nx != ny || memcmp(px, py, nx))) {
		snprintf(why, n, "they are iterations of different programs");
		return false;
	}
	switch (x->source) {
	case DIFF_ITER_SYNC:
		if (x->what && y->what && strcmp(x->what, y->what)) {
			snprintf(why, n, "the baseline's iterations end in %s, the optimized's in %s",
				 x->what, y->what);
			return false;
		}
		return true;
	case DIFF_ITER_KERNELS:
		r = x->count > y->count ? (double)x->count / (y->count ? y->count : 1)
					: (double)y->count / (x->count ? x->count : 1);
		if (r > DIFF_MATCH_COUNT) {
			snprintf(why, n, "a repeating sequence of kernel launches was found on both sides, "
				 "%u times in the baseline and %u in the optimized: not the same iterations",
				 x->count, y->count);
			return false;
		}
		return true;
	default:
		return true;
	}
}

/* ---- per unit of work -------------------------------------------------- */

/* Iterations that do not correspond leave the whole runs, whose lengths
 * differ by what each did as much as by how fast: a unit of work both did
 * makes them comparable. The unit is a kernel run when both ran the same
 * kernels (none added, none removed) in the same proportions (each
 * kernel's share of the runs within DIFF_UNIT_MIX of the other side's):
 * the time per kernel run. Else none, and why. */
#define DIFF_UNIT_MIX 0.25

static void per_unit(struct diff_result *r)
{
	struct diff_per_unit *u = &r->per_unit;
	uint64_t nb = 0, no = 0;

	*u = (struct diff_per_unit){ .unit = "kernel run" };
	if (!r->speedup.valid || r->kernels.by_class[DIFF_ADDED] || r->kernels.by_class[DIFF_REMOVED] ||
	    !r->kernels.n) {
		snprintf(u->why, sizeof(u->why), "the two runs did not run the same kernels");
		return;
	}
	for (size_t i = 0; i < r->kernels.n; i++) {
		nb += r->kernels.rows[i].base.count;
		no += r->kernels.rows[i].opt.count;
	}
	if (!nb || !no) {
		snprintf(u->why, sizeof(u->why), "the two runs did not run the same kernels");
		return;
	}
	for (size_t i = 0; i < r->kernels.n; i++) {
		double a = (double)r->kernels.rows[i].base.count / (double)nb;
		double b = (double)r->kernels.rows[i].opt.count / (double)no;

		if (fabs(a - b) > DIFF_UNIT_MIX * (a > b ? a : b)) {
			snprintf(u->why, sizeof(u->why), "the same kernels ran in different proportions");
			return;
		}
	}
	u->valid = true;
	u->base_n = nb;
	u->opt_n = no;
	u->kinds = (uint32_t)r->kernels.n;
	u->point = (r->speedup.base_ns / (double)nb) / (r->speedup.opt_ns / (double)no);
}

/* ---- reading two traces ------------------------------------------------- */

int diff__traces(const char *base, const char *opt, const struct diff_params *p,
		 struct diff_result **out)
{
	FILE *err = p && p->err ? p->err : stderr;
	const char *iter = p ? p->iter : NULL;
	struct diff_scan *sa = NULL, *sb = NULL;
	struct diff_side *a = NULL, *b = NULL;
	const struct diff_cand *ca, *cb;
	size_t na, nb, ia = 0, ib = 0;
	enum diff_choice_miss miss;
	bool partial = false, matched = false;
	char why[160] = "";
	int status = 1, rc;

	*out = NULL;
	if (iter && diff__check_iter(iter)) {
		fprintf(err, "gtrace-bpf: bad --iter '%s': give an NVTX range name, capture, graph, "
			"sync, kernels or none\n", iter);
		return 2;
	}
	if ((rc = diff_scan__open(base, p ? p->pid_base : 0, p && p->by_rank ? p->rank : -1, &sa, p ? p->base_dmg : NULL, err)) ||
	    (rc = diff_scan__open(opt, p ? p->pid_opt : 0, p && p->by_rank ? p->rank : -1, &sb, NULL, err))) {
		status = rc;
		goto out;
	}
	ca = diff_scan__cands(sa, &na);
	cb = diff_scan__cands(sb, &nb);
	miss = diff_iter__choose(ca, na, cb, nb, iter, &ia, &ib, &partial);
	if (miss == DIFF_CHOICE_NO_BASE || miss == DIFF_CHOICE_NO_OPT) {
		struct diff_scan *s = miss == DIFF_CHOICE_NO_BASE ? sa : sb;

		char *has = diff_scan__describe(s);

		fprintf(err, "gtrace-bpf: --iter %s: %s has no such iterations (%s%s)\n", iter,
			miss == DIFF_CHOICE_NO_BASE ? base : opt, has && *has ? "it has: " : "it has none",
			has ? has : "");
		free(has);
		status = 2;
		goto out;
	}
	if (miss == DIFF_CHOICE_OK && !iter &&
	    !correspond(&ca[ia], &cb[ib], diff_scan__cmdline(sa, ca[ia].pid), diff_scan__cmdline(sb, cb[ib].pid),
			why, sizeof(why)))
		miss = DIFF_CHOICE_NONE;
	else if (miss == DIFF_CHOICE_OK)
		matched = true;
	if (diff_scan__side(sa, miss == DIFF_CHOICE_OK ? (ssize_t)ia : -1, &a, err) ||
	    diff_scan__side(sb, miss == DIFF_CHOICE_OK ? (ssize_t)ib : -1, &b, err))
		goto out;
	*out = calloc(1, sizeof(**out));
	rc = *out ? diff__compute(a, b, partial, *out) : -ENOMEM;
	if (!rc) {
		(*out)->checked = matched || why[0];
		(*out)->corresponds = matched;
		if (why[0]) {
			char line[sizeof(why) + 64];

			snprintf((*out)->why, sizeof((*out)->why), "%s", why);
			(*out)->mismatch |= DIFF_MM_NO_MATCH;
			per_unit(*out);
			snprintf(line, sizeof(line), "iterations do not correspond (%s): whole runs compared, "
				 "no interval", why);
			warn_add(*out, line);
		}
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to compare %s and %s: %s\n", base, opt, strerror(-rc));
		diff_result__free(*out);
		*out = NULL;
		goto out;
	}
	status = 0;
out:
	diff_side__free(a);
	diff_side__free(b);
	diff_scan__free(sa);
	diff_scan__free(sb);
	return status;
}

/* -o: the diff into the installer's temporary file. */
struct fill_diff {
	const struct diff_result *r;
	enum diff_format format;
};

static int fill_diff(void *ctx, FILE *f, const char **why)
{
	const struct fill_diff *x = ctx;

	*why = NULL;
	return diff_result__write(x->r, x->format, f);
}

int diff__run(const struct diff_opts *o)
{
	FILE *err = o->err ? o->err : stderr, *out = o->out ? o->out : stdout;
	struct diff_params p = { .iter = o->iter, .err = err };
	struct diff_result *r;
	const char *base, *opt;
	bool swapped = diff__order(o->a, o->b, &base, &opt);
	bool to_file = o->output && strcmp(o->output, "-");
	int status, rc;

	/* -p A,B is of the traces as given: follows them when they swap */
	p.pid_base = swapped ? o->pid_b : o->pid_a;
	p.pid_opt = swapped ? o->pid_a : o->pid_b;
	p.by_rank = o->by_rank;
	p.rank = o->rank;
	/* before the work: an output that may not be written */
	if (to_file && installer__check(o->output, base, o->force, err))
		return 1;
	status = diff__traces(base, opt, &p, &r);
	if (status)
		return status;
	r->swapped = swapped;
	if (to_file) {
		struct fill_diff fd = { r, o->format };

		rc = installer__write(o->output, o->force, fill_diff, &fd, "write the diff of", base, err) ? -EIO : 0;
		if (!rc)
			fprintf(out, "wrote %s\n", o->output);
	} else {
		rc = diff_result__write(r, o->format, out);
		if (rc)
			fprintf(err, "gtrace-bpf: cannot write standard output: %s\n", strerror(-rc));
	}
	if (rc) {
		status = 1;
	} else {
		if (r->warning[0]) {
			/* program names in it: escaped for the terminal */
			char *w = term_text__escape(r->warning);

			fprintf(err, "gtrace-bpf: warning: %s\n", w ? w : r->warning);
			free(w);
		}
		/* the comparison of what was read is written; a damaged input
		 * still exits 1 */
		status |= trace_damage__report(&r->base.dmg, r->base.path, "compared the records read", err);
		status |= trace_damage__report(&r->opt.dmg, r->opt.path, "compared the records read", err);
	}
	diff_result__free(r);
	return status;
}
