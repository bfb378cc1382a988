// SPDX-License-Identifier: MIT
/*
 * Rendering of `gtrace-bpf stats` reports: typed rows in, an nsys-style text
 * table, CSV or one JSON document out (the formats are described in stats.c).
 *
 * Reports are small (one row per api, kernel, copy kind or process), so this
 * favours exactness over speed: every cell is formatted into its own string
 * first, because a table needs the widest cell of a column before its first
 * line.  Time columns are integers of nanoseconds scaled by a power of ten
 * with integer arithmetic, so "1.500" us is exactly 1500 ns, never a rounded
 * double.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/obuf.h"
#include "stats/stats_report.h"
#include "lib/vec.h"
#include "lib/term_text.h"

#define CELL_MAX 64	/* longest number a cell prints, grouping included */

struct stats_writer {
	FILE *out;
	struct obuf ob;		/* on out: its JSON and CSV string writers, flushed after each */
	enum stats_format fmt;
	const char *unit;	/* "ns", "us", "ms" or "s" */
	int dec;		/* decimals of the unit: 0, 3, 6, 9 */
	const char *path;	/* the trace, for JSON and SKIPPED lines */
	const char *damage;	/* why the trace ended early, NULL if whole */
	const char *head_text;	/* table: lines before the first report, NULL none */
	const char *head_json;	/* JSON: members after "damage", NULL none */
	int nreports;		/* reports written so far */
};

static const uint64_t pow10_u64[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
				      100000000, 1000000000 };

int stats_timeunit__decimals(const char *unit)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };

	for (int i = 0; i < 4; i++)
		if (unit && !strcmp(unit, units[i]))
			return i * 3;
	return -EINVAL;
}

struct stats_cell *stats_report__row(struct stats_report *r)
{
	struct stats_cell *row;

	if (r->nrows == r->cap) {
		void *c = r->cells;

		/* the element is a row of ncols cells */
		if (vec__grow(&c, &r->cap, r->nrows, 1, r->ncols * sizeof(*r->cells), 16, SIZE_MAX))
			return NULL;
		r->cells = c;
	}
	row = r->cells + r->nrows++ * r->ncols;
	for (int i = 0; i < r->ncols; i++)
		row[i] = (struct stats_cell){ .none = true };
	return row;
}

void stats_report__free(struct stats_report *r)
{
	free(r->cells);
	r->cells = NULL;
	r->nrows = r->cap = 0;
}

struct stats_writer *stats_writer__new(FILE *out, enum stats_format fmt, const char *unit,
				       const char *path, const char *damage)
{
	struct stats_writer *w;
	int dec = stats_timeunit__decimals(unit ? unit : "ns");

	if (dec < 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (obuf__init(&w->ob, out)) {
		free(w);
		return NULL;
	}
	w->out = out;
	w->fmt = fmt;
	w->unit = unit ? unit : "ns";
	w->dec = dec;
	w->path = path;
	w->damage = damage;
	return w;
}

void stats_writer__set_head(struct stats_writer *w, const char *text, const char *json)
{
	w->head_text = text;
	w->head_json = json;
}

void stats_writer__free(struct stats_writer *w)
{
	if (w)
		obuf__free(&w->ob);
	free(w);
}

/* ---- numbers ------------------------------------------------------------ */

/* Inserts a comma every three digits of the integer part (table only: nsys
 * prints its tables so, and long nanosecond counts are unreadable without). */
static void group_digits(char *s)
{
	char tmp[CELL_MAX];
	size_t n = strlen(s), ilen = strcspn(s, "."), o = 0;

	if (n + ilen / 3 >= sizeof(tmp))
		return;
	for (size_t i = 0; i < n; i++) {
		if (i && i < ilen && (ilen - i) % 3 == 0)
			tmp[o++] = ',';
		tmp[o++] = s[i];
	}
	tmp[o] = '\0';
	memcpy(s, tmp, o + 1);
}

/* A number cell without grouping; "" for none. */
static void fmt_number(const struct stats_writer *w, enum stats_kind kind,
		       const struct stats_cell *c, char *buf)
{
	if (c->none) {
		buf[0] = '\0';
		return;
	}
	switch (kind) {
	case SK_INT:
	case SK_ID:
		snprintf(buf, CELL_MAX, "%llu", (unsigned long long)c->u);
		break;
	case SK_TIME:
		if (!w->dec)
			snprintf(buf, CELL_MAX, "%llu", (unsigned long long)c->u);
		else
			snprintf(buf, CELL_MAX, "%llu.%0*llu",
				 (unsigned long long)(c->u / pow10_u64[w->dec]), w->dec,
				 (unsigned long long)(c->u % pow10_u64[w->dec]));
		break;
	case SK_TIMEF:
		/* one decimal more than the exact columns: averages are not integers */
		snprintf(buf, CELL_MAX, "%.*f", w->dec + 1, c->d / (double)pow10_u64[w->dec]);
		break;
	case SK_PCT:
	case SK_REAL:
		snprintf(buf, CELL_MAX, "%.1f", c->d);
		break;
	case SK_BOOL:
		snprintf(buf, CELL_MAX, "%s", w->fmt == STATS_TABLE ? (c->u ? "yes" : "no") :
					      c->u ? "true" : "false");
		break;
	case SK_MICRO: {
		int64_t v = (int64_t)c->u;
		uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
		unsigned frac = (unsigned)(m % 1000000), digits = 6;

		while (frac && frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		if (frac)
			snprintf(buf, CELL_MAX, "%s%llu.%0*u", v < 0 ? "-" : "",
				 (unsigned long long)(m / 1000000), (int)digits, frac);
		else
			snprintf(buf, CELL_MAX, "%s%llu", v < 0 ? "-" : "", (unsigned long long)(m / 1000000));
		break;
	}
	case SK_STR:
		buf[0] = '\0';
		break;
	}
}

/* ---- strings ------------------------------------------------------------ */


/* A JSON string: lib/obuf's (bytes that are not UTF-8 as \u00XX, their
 * Latin-1 reading; control characters escaped), written out at once, as
 * the rest of the document goes to the stream directly. */
static void put_json_str(struct stats_writer *w, const char *s)
{
	obuf__json_str(&w->ob, s);
	obuf__flush(&w->ob);
}

/* A CSV cell of text: lib/obuf's (RFC 4180 quoting; control characters and
 * bytes that are not UTF-8 written out; a formula neutralised by a leading
 * apostrophe).  Numbers are written by fmt_number, never through here. */
static void put_csv_str(struct stats_writer *w, const char *s)
{
	obuf__csv_strn(&w->ob, s, strlen(s));
	obuf__flush(&w->ob);
}

static bool is_time(enum stats_kind k)
{
	return k == SK_TIME || k == SK_TIMEF;
}

/* "Total Time (us)": the unit follows the title of time columns. */
static void col_title(const struct stats_writer *w, const struct stats_col *c, char *buf,
		      size_t len)
{
	if (is_time(c->kind))
		snprintf(buf, len, "%s (%s)", c->title, w->unit);
	else
		snprintf(buf, len, "%s", c->title);
}

/* ---- table -------------------------------------------------------------- */

static const char *cell_text(const struct stats_writer *w, const struct stats_col *col,
			     const struct stats_cell *c, char *buf)
{
	if (col->kind == SK_STR)
		return c->none ? "-" : c->s;
	if (c->none)
		return "-";
	fmt_number(w, col->kind, c, buf);
	if (col->kind != SK_ID && col->kind != SK_BOOL)
		group_digits(buf);
	return buf;
}

/* s in a column of width bytes; a left-aligned last column is not padded
 * so that lines carry no trailing blanks. */
static void put_padded(FILE *f, const char *s, size_t width, bool left, bool last)
{
	size_t n = strlen(s);

	if (!left)
		for (size_t k = n; k < width; k++)
			fputc(' ', f);
	fputs(s, f);
	if (left && !last)
		for (size_t k = n; k < width; k++)
			fputc(' ', f);
}

static int write_table(struct stats_writer *w, const struct stats_report *r)
{
	char (*num)[CELL_MAX] = NULL, **esc = NULL;
	const char **text = NULL;
	size_t *width = NULL, ncells = r->nrows * r->ncols;
	char title[96];
	FILE *f = w->out;
	int err = 0;

	if (!w->nreports && w->head_text)
		fprintf(f, "\n%s", w->head_text);
	fprintf(f, "\n ** %s (%s):\n\n", r->title, r->name);
	if (!r->nrows) {
		fprintf(f, " SKIPPED: %s does not contain %s.\n", w->path ? w->path : "the trace",
			r->empty);
		if (r->empty_notes && r->empty_notes[0]) {
			fputc('\n', f);
			for (const char *const *n = r->empty_notes; *n; n++)
				fprintf(f, " %s\n", *n);
		}
		return 0;
	}
	num = malloc((ncells ? ncells : 1) * sizeof(*num));
	text = malloc((ncells ? ncells : 1) * sizeof(*text));
	width = calloc(r->ncols, sizeof(*width));
	/* the escaped copies of text cells that need one */
	esc = calloc(ncells ? ncells : 1, sizeof(*esc));
	if (!num || !text || !width || !esc) {
		err = -ENOMEM;
		goto out;
	}
	for (int j = 0; j < r->ncols; j++) {
		col_title(w, &r->cols[j], title, sizeof(title));
		width[j] = strlen(title);
	}
	for (size_t i = 0; i < ncells; i++) {
		size_t j = i % r->ncols, l;

		text[i] = cell_text(w, &r->cols[j], &r->cells[i], num[i]);
		/* command lines and kernel names are the traced programs':
		 * their escape sequences must not reach the terminal */
		if (r->cols[j].kind == SK_STR && term_text__needs_escape(text[i])) {
			esc[i] = term_text__escape(text[i]);
			if (!esc[i]) {
				err = -ENOMEM;
				goto out;
			}
			text[i] = esc[i];
		}
		l = strlen(text[i]);
		if (l > width[j])
			width[j] = l;
	}
	/* header, dashes, rows: numbers right-aligned, text left-aligned */
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < r->ncols; j++) {
			bool left = r->cols[j].kind == SK_STR, last = j == r->ncols - 1;

			fputs(j ? "  " : " ", f);
			if (pass == 0) {
				col_title(w, &r->cols[j], title, sizeof(title));
				put_padded(f, title, width[j], left, last);
			} else {
				for (size_t k = 0; k < width[j]; k++)
					fputc('-', f);
			}
		}
		fputc('\n', f);
	}
	for (size_t i = 0; i < r->nrows; i++) {
		for (int j = 0; j < r->ncols; j++) {
			const char *t = text[i * r->ncols + j];
			bool left = r->cols[j].kind == SK_STR;

			fputs(j ? "  " : " ", f);
			put_padded(f, t, width[j], left, j == r->ncols - 1);
		}
		fputc('\n', f);
	}
	if (r->notes && r->notes[0]) {
		fputc('\n', f);
		for (const char *const *n = r->notes; *n; n++)
			fprintf(f, " %s\n", *n);
	}
out:
	for (size_t i = 0; esc && i < ncells; i++)
		free(esc[i]);
	free(esc);
	free(num);
	free(text);
	free(width);
	return err;
}

/* ---- CSV and JSON ------------------------------------------------------- */

static void write_csv(struct stats_writer *w, const struct stats_report *r)
{
	char buf[CELL_MAX];
	FILE *f = w->out;

	/* a header row and the rows, nothing else: one report is one file
	 * that any CSV reader loads (stats.c writes one per report) */
	for (int j = 0; j < r->ncols; j++) {
		col_title(w, &r->cols[j], buf, sizeof(buf));
		if (j)
			fputc(',', f);
		put_csv_str(w, buf);
	}
	fputc('\n', f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct stats_cell *row = r->cells + i * r->ncols;

		for (int j = 0; j < r->ncols; j++) {
			if (j)
				fputc(',', f);
			if (r->cols[j].kind == SK_STR) {
				if (!row[j].none)
					put_csv_str(w, row[j].s);
				continue;
			}
			fmt_number(w, r->cols[j].kind, &row[j], buf);
			fputs(buf, f);
		}
		fputc('\n', f);
	}
}

static void write_json_head(struct stats_writer *w)
{
	FILE *f = w->out;

	fputs("{\"file\":", f);
	put_json_str(w, w->path ? w->path : "");
	fprintf(f, ",\"timeunit\":\"%s\",\"truncated\":%s", w->unit, w->damage ? "true" : "false");
	if (w->damage) {
		fputs(",\"damage\":", f);
		put_json_str(w, w->damage);
	}
	if (w->head_json)
		fprintf(f, ",%s", w->head_json);
	fputs(",\"reports\":[", f);
}

static void write_json(struct stats_writer *w, const struct stats_report *r)
{
	char buf[CELL_MAX];
	FILE *f = w->out;

	if (!w->nreports)
		write_json_head(w);
	fprintf(f, "%s\n{\"report\":\"%s\",\"title\":", w->nreports ? "," : "", r->name);
	put_json_str(w, r->title);
	fputs(",\"rows\":[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct stats_cell *row = r->cells + i * r->ncols;

		fputs(i ? ",\n{" : "\n{", f);
		for (int j = 0; j < r->ncols; j++) {
			fprintf(f, "%s\"%s\":", j ? "," : "", r->cols[j].key);
			if (row[j].none) {
				fputs("null", f);
			} else if (r->cols[j].kind == SK_STR) {
				put_json_str(w, row[j].s);
			} else {
				fmt_number(w, r->cols[j].kind, &row[j], buf);
				fputs(buf, f);
			}
		}
		fputc('}', f);
	}
	fputs("]}", f);
}

int stats_writer__report(struct stats_writer *w, const struct stats_report *r)
{
	int err = 0;

	/* the writes below do not return their errors: the stream's error
	 * flag keeps that one happened, errno which (ENOSPC on a full disk) */
	errno = 0;
	switch (w->fmt) {
	case STATS_TABLE:
		err = write_table(w, r);
		break;
	case STATS_CSV:
		write_csv(w, r);
		break;
	case STATS_JSON:
		write_json(w, r);
		break;
	}
	w->nreports++;
	/* the string writer's first error has the errno of the write that
	 * failed; errno may have moved on since */
	if (!err && w->ob.err)
		err = w->ob.err;
	if (!err && ferror(w->out))
		err = errno ? -errno : -EIO;
	return err;
}

int stats_writer__finish(struct stats_writer *w)
{
	errno = 0;
	if (w->fmt == STATS_JSON) {
		if (!w->nreports)
			write_json_head(w);
		fputs("\n]}\n", w->out);
	}
	if (fflush(w->out) || ferror(w->out))
		return w->ob.err ? w->ob.err : errno ? -errno : -EIO;
	return 0;
}
