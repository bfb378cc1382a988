// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf export -f csv`: one row per call, per process event, per
 * capture record (a range's or window's open and close, a hot-probe change),
 * per flight-recorder trigger, per overhead record of the daemon and (merged
 * traces) per GPU kernel, copy, set and NVTX range, the fields
 * of dump as columns, for spreadsheets and data frames.
 *
 * A header row names the columns (the field order of export/fields.h, grid and block
 * split into _x/_y/_z); a row has a cell for every column, empty where the
 * field does not apply to the call (exactly where dump leaves it out), so
 * a row and its dump line hold the same values.  Rows come in dump's order
 * (completion order); sort by ts for time order.  Cells follow RFC 4180:
 * quoted when they hold a comma (C++ kernel names do), a quote or a line
 * break; rows end with a bare LF, which every CSV reader takes.
 *
 * The columns of the daemon's overhead records (from CF_OVERHEAD_FIRST on)
 * come last, and only in the CSV of a trace that holds such records, so
 * that the CSV of every other trace keeps its columns.  The header comes
 * before the rows, so that is known first: the daemon writes them, so a
 * daemon snapshot (snapshot=1) is read once ahead up to its first overhead
 * record and rewound; any other trace is not, and has none.  The columns of
 * GPU metric samples (from CF_GPUM_FIRST on: metric, value, unit; their GPU
 * is the device column) come after those, only in the CSV of a trace
 * recorded with --gpu-metrics (its header says gpu_metrics=HZ); a call's
 * stack id (CF_STACKS_FIRST) last, in the CSV of a trace recorded with
 * --stacks (stacks=...; dump lists the stacks).
 */
#include <errno.h>
#include <string.h>
#include "export/fields.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "export/export.h"
#include "format/records.h"
#include "format/trace_file.h"

/* The column sets a CSV has (see the top). */
struct cols {
	bool overhead;		/* CF_OVERHEAD_FIRST .. CF_GPUM_FIRST */
	bool gpum;		/* CF_GPUM_FIRST .. CF_STACKS_FIRST */
	bool stacks;		/* CF_STACKS_FIRST .. CF__COUNT */
};

static inline bool col_on(const struct cols *c, unsigned id)
{
	return id < CF_OVERHEAD_FIRST || (id < CF_GPUM_FIRST ? c->overhead :
					  id < CF_STACKS_FIRST ? c->gpum : c->stacks);
}

static void put_header(struct obuf *o, const struct cols *c)
{
	for (unsigned id = 0; id < CF__COUNT; id++) {
		if (!col_on(c, id))
			continue;
		if (id)
			OBUF_LIT(o, ",");
		if (id == CF_GRID || id == CF_BLOCK) {
			const char *n = cf_names[id];

			obuf__mem(o, n, strlen(n));
			OBUF_LIT(o, "_x,");
			obuf__mem(o, n, strlen(n));
			OBUF_LIT(o, "_y,");
			obuf__mem(o, n, strlen(n));
			OBUF_LIT(o, "_z");
		} else {
			obuf__csv_strn(o, cf_names[id], strlen(cf_names[id]));
		}
	}
	OBUF_LIT(o, "\n");
}

/* Room a row takes apart from its strings: a comma and 20 digits (or the
 * minus and 19) per column, the newline. */
#define ROW_ROOM ((CF__COUNT + 4) * 21 + 1)
_Static_assert(ROW_ROOM <= OBUF_ROOM_MAX, "a row's numbers must fit obuf__room");

/* Numbers and separators go through a local pointer, not the buffer's
 * length: a row is mostly those, and updating the length in memory for
 * each one cost a third of the export. */
static void put_row(struct obuf *o, const struct cf_val *v, unsigned n, const struct cols *c)
{
	const struct cf_val *cell[CF__COUNT] = { 0 };
	char *p;

	for (unsigned i = 0; i < n; i++)
		cell[v[i].id] = &v[i];
	p = obuf__room(o, ROW_ROOM);
	for (unsigned id = 0; id < CF__COUNT; id++) {
		const struct cf_val *f = cell[id];

		if (!col_on(c, id))
			continue;
		if (id)
			*p++ = ',';
		if (!f) {
			if (id == CF_GRID || id == CF_BLOCK) {
				*p++ = ',';
				*p++ = ',';
			}
			continue;
		}
		switch (f->kind) {
		default:
			p = fields__scalar(p, f, false);
			break;
		case CF_K_STR:
			o->len = (size_t)(p - o->b);
			obuf__csv_strn(o, f->s, f->len);
			p = obuf__room(o, ROW_ROOM);
			break;
		}
	}
	*p++ = '\n';
	o->len = (size_t)(p - o->b);
}

struct cx {
	struct obuf ob;
	struct gt_decoder *d;	/* names of GPU kernels */
	struct cols cols;	/* the column sets written */
};

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct cx *x = ctx;
	struct cf_val v[CF_MAX];

	put_row(&x->ob, v, fields__call(c, v), &x->cols);
	return x->ob.err;
}

static int on_nccl(void *ctx, const struct gt_ncclrec *nc)
{
	struct cx *x = ctx;
	struct cf_val v[CF_MAX];

	put_row(&x->ob, v, fields__nccl(nc, v), &x->cols);
	return x->ob.err;
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct cx *x = ctx;
	struct cf_val v[CF_MAX];
	unsigned n = fields__record(x->d, rec, v);

	if (n)
		put_row(&x->ob, v, n, &x->cols);
	return x->ob.err;
}

/* Whether r holds a GT_REC_OVERHEAD record whole (see the top): a daemon
 * snapshot is read ahead up to its first one, then rewound.  Returns 1, 0,
 * or a negative errno of the read. */
static int find_overhead(void *ctx, const struct gt_hdr *rec)
{
	bool *found = ctx;

	*found = rec->type == GT_REC_OVERHEAD && gt_rec__size_ok(rec);
	return *found;
}

static int holds_overhead(struct trace_reader *r)
{
	bool found = false;
	struct gt_pass p = { .ctx = &found, .record = find_overhead };
	int rc;

	if (!gt_file_info__has_option(trace_reader__info(r), "snapshot", "1"))
		return 0;
	rc = gt_pass__run(r, NULL, &p, NULL);
	trace_reader__rewind(r);
	return rc < 0 ? rc : found;
}

int export_csv__write(struct trace_reader *r, FILE *out, const char **why)
{
	struct cx x = { 0 };
	int rc;

	rc = holds_overhead(r);
	if (rc < 0) {
		*why = strerror(-rc);
		return rc;
	}
	x.cols.overhead = rc;
	x.cols.gpum = gt_file_info__option(trace_reader__info(r), "gpu_metrics", NULL) != NULL;
	x.cols.stacks = gt_file_info__option(trace_reader__info(r), "stacks", NULL) != NULL;
	rc = fields__writer_open(&x.ob, out, on_call, on_other, &x, &x.d, why);
	if (rc)
		return rc;
	gt_decoder__set_nccl_cb(x.d, on_nccl);
	put_header(&x.ob, &x.cols);
	rc = fields__decode_all(r, x.d, why);
	if (rc)
		goto cleanup;
	rc = obuf__flush(&x.ob);
	if (rc)
		*why = strerror(-rc);
cleanup:
	gt_decoder__free(x.d);
	obuf__free(&x.ob);
	return rc;
}
