// SPDX-License-Identifier: MIT
/*
 * The capture spans of a trace (capture_spans.h says what they are and how
 * records pair).  A trace holds a few ranges or, in light mode, a window
 * every few seconds: the spans are kept in one array, the hot intervals in
 * another, both sorted once at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture_spans.h"
#include "decode/pass.h"
#include "format/api.h"
#include "format/records.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "lib/cmp.h"

/* A span still open while the trace is read (never seen after finish). */
#define CAPSPAN_OPEN 0

struct interval {
	uint64_t a, b;		/* [a, b] */
};

struct capture_spans {
	struct gt_capture_mode mode;	/* from the header */
	uint64_t start_ts;		/* the header's start */
	uint64_t end_ts;		/* the trace's end, once finished */
	uint64_t max_ts;		/* latest capture record */
	struct capspan *v;		/* the spans; in order of start once finished */
	size_t n, cap;
	struct u64map open;		/* pid + 1 -> index + 1 in v of its open range, 0 none */
	struct u64map numbers;		/* kind << 32 | number -> 1: numbers seen */
	size_t open_window;		/* index + 1 in v of the open window, 0 none */
	struct capture_hot *hot;	/* HOT_LIVE / HOT_OFF records */
	size_t nhot, caphot;
	struct interval *iv;		/* hot intervals; their union once finished */
	size_t niv, capiv;
	bool hot_live;			/* between a HOT_LIVE and its HOT_OFF */
	uint64_t hot_since;		/* the HOT_LIVE's ts */
	bool light_records;		/* a window or hot-probe record was read */
	uint64_t an[CAPTURE_AN__COUNT];
	struct capture_shed *sh;	/* the budget's sheds and give-backs, in ts order once
					 * finished */
	size_t nsh, capsh;
	uint64_t lookups_ts;		/* GT_CAP_LOOKUPS_OFF's ts, 0 = none */
	uint32_t lookups_checked;	/* ... and its names checked */
};

struct capture_spans *capture_spans__new(const struct gt_file_info *info)
{
	struct capture_spans *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	gt_capture_mode__from_info(info, &c->mode);
	c->start_ts = info ? info->start_ts : 0;
	return c;
}

void capture_spans__free(struct capture_spans *c)
{
	if (!c)
		return;
	free(c->v);
	free(c->hot);
	free(c->iv);
	free(c->sh);
	u64map__free(&c->open);
	u64map__free(&c->numbers);
	free(c);
}

/* ---- reading ------------------------------------------------------------ */

static int interval_add(struct capture_spans *c, uint64_t a, uint64_t b)
{
	if (vec__reserve(&c->iv, &c->capiv, c->niv, 1, 16))
		return -ENOMEM;
	c->iv[c->niv++] = (struct interval){ .a = a, .b = b > a ? b : a };
	return 0;
}

/* A new span from its open record; NULL when out of memory. */
static struct capspan *span_open(struct capture_spans *c, const struct gt_capture *cp,
				 enum capspan_kind kind)
{
	uint64_t key = (uint64_t)kind << 32 | cp->index, *seen = u64map__get(&c->numbers, key);
	struct capspan *s;

	if (seen)
		c->an[CAPTURE_AN_DUPLICATE_NUMBER]++;
	else if (u64map__set(&c->numbers, key, 1))
		return NULL;
	if (vec__reserve(&c->v, &c->cap, c->n, 1, 16))
		return NULL;
	s = &c->v[c->n++];
	*s = (struct capspan){
		.number = cp->index, .kind = (uint8_t)kind, .source = (uint16_t)cp->source,
		.pid = kind == CAPSPAN_RANGE ? cp->hdr.pid : 0,
		.tid = kind == CAPSPAN_RANGE ? cp->hdr.tid : 0,
		.flags = cp->flags, .start_ts = cp->hdr.ts, .end_ts = cp->hdr.ts,
	};
	return s;
}

static void span_end(struct capspan *s, uint64_t ts, enum capspan_end how)
{
	s->end_ts = ts > s->start_ts ? ts : s->start_ts;
	s->end = (uint8_t)how;
}

static int range_open(struct capture_spans *c, const struct gt_capture *cp)
{
	uint64_t *open = u64map__get(&c->open, (uint64_t)cp->hdr.pid + 1);
	struct capspan *s;

	if (cp->flags & GT_CAP_F_REFUSED) {
		/* nothing of it is recorded and no close follows; the process'
		 * open range, if any, stays open */
		s = span_open(c, cp, CAPSPAN_RANGE);
		if (!s)
			return -ENOMEM;
		s->end = CAPSPAN_REFUSED;
		return 0;
	}
	if (open && *open) {
		c->an[CAPTURE_AN_OPEN_IN_OPEN]++;
		span_end(&c->v[*open - 1], cp->hdr.ts, CAPSPAN_CLOSE_LOST);
	}
	s = span_open(c, cp, CAPSPAN_RANGE);
	if (!s || u64map__set(&c->open, (uint64_t)cp->hdr.pid + 1, c->n))
		return -ENOMEM;
	return 0;
}

static void range_close(struct capture_spans *c, const struct gt_capture *cp)
{
	uint64_t *open = u64map__get(&c->open, (uint64_t)cp->hdr.pid + 1);
	struct capspan *s;

	if (!open || !*open) {
		c->an[CAPTURE_AN_CLOSE_WITHOUT_OPEN]++;
		return;
	}
	s = &c->v[*open - 1];
	*open = 0;
	if (s->number != cp->index)
		c->an[CAPTURE_AN_INDEX_MISMATCH]++;
	s->flags |= cp->flags;
	span_end(s, cp->hdr.ts, CAPSPAN_CLOSED);
}

static int window_open(struct capture_spans *c, const struct gt_capture *cp)
{
	struct capspan *s;

	if (c->open_window) {
		c->an[CAPTURE_AN_OPEN_IN_OPEN]++;
		span_end(&c->v[c->open_window - 1], cp->hdr.ts, CAPSPAN_CLOSE_LOST);
	}
	s = span_open(c, cp, CAPSPAN_WINDOW);
	if (!s)
		return -ENOMEM;
	s->attach_ns = cp->latency_ns;
	c->open_window = c->n;
	return 0;
}

static void window_close(struct capture_spans *c, const struct gt_capture *cp)
{
	struct capspan *s;

	if (!c->open_window) {
		c->an[CAPTURE_AN_CLOSE_WITHOUT_OPEN]++;
		return;
	}
	s = &c->v[c->open_window - 1];
	c->open_window = 0;
	if (s->number != cp->index)
		c->an[CAPTURE_AN_INDEX_MISMATCH]++;
	s->flags |= cp->flags;
	s->detach_ns = cp->latency_ns;
	span_end(s, cp->hdr.ts, CAPSPAN_CLOSED);
}

static int hot_change(struct capture_spans *c, const struct gt_capture *cp)
{
	bool live = cp->kind == GT_CAP_HOT_LIVE;

	if (vec__reserve(&c->hot, &c->caphot, c->nhot, 1, 16))
		return -ENOMEM;
	c->hot[c->nhot++] = (struct capture_hot){
		.ts = cp->hdr.ts, .latency_ns = cp->latency_ns, .range = cp->index, .live = live,
	};
	if (live == c->hot_live) {
		/* live while live: the first still holds; off while off: nothing */
		c->an[CAPTURE_AN_HOT_UNPAIRED]++;
		return 0;
	}
	c->hot_live = live;
	if (live) {
		c->hot_since = cp->hdr.ts;
		return 0;
	}
	return interval_add(c, c->hot_since, cp->hdr.ts);
}

/* A shed or give-back of the overhead budget (others are no capture
 * control). */
static int shed_feed(struct capture_spans *c, const struct gt_overhead *o)
{
	if (o->reason != GT_OVH_SHED && o->reason != GT_OVH_RESTORE)
		return 0;
	if (!o->hdr.api || o->hdr.api >= GT_API__COUNT) {
		c->an[CAPTURE_AN_MALFORMED]++;
		return 0;
	}
	if (vec__reserve(&c->sh, &c->capsh, c->nsh, 1, 8))
		return -ENOMEM;
	c->sh[c->nsh++] = (struct capture_shed){ .ts = o->hdr.ts, .api = o->hdr.api,
						 .shed = o->reason == GT_OVH_SHED };
	return 0;
}

int capture_spans__feed(struct capture_spans *c, const struct gt_hdr *rec)
{
	const struct gt_capture *cp = (const void *)rec;
	bool range = rec->type == GT_REC_RANGE;

	if (rec->type == GT_REC_OVERHEAD)
		return gt_rec__size_ok(rec) ? shed_feed(c, (const struct gt_overhead *)rec) : 0;
	if (rec->type != GT_REC_RANGE && rec->type != GT_REC_CAPTURE)
		return 0;
	if (!gt_rec__size_ok(rec))
		goto malformed;
	if (rec->ts > c->max_ts)
		c->max_ts = rec->ts;
	/* the hot-probe records name a range, 0 being none: the others a span */
	if (!cp->index && cp->kind != GT_CAP_HOT_LIVE && cp->kind != GT_CAP_HOT_OFF)
		goto malformed;
	switch (cp->kind) {
	case GT_CAP_LOOKUPS_OFF:
		if (range)
			goto malformed;
		if (!c->lookups_ts || rec->ts < c->lookups_ts) {
			c->lookups_ts = rec->ts;
			c->lookups_checked = cp->index;
		}
		return 0;
	case GT_CAP_RANGE_OPEN:
	case GT_CAP_RANGE_CLOSE:
		if (!range)
			goto malformed;
		if (cp->kind == GT_CAP_RANGE_OPEN)
			return range_open(c, cp);
		range_close(c, cp);
		return 0;
	case GT_CAP_WINDOW_OPEN:
	case GT_CAP_WINDOW_CLOSE:
	case GT_CAP_HOT_LIVE:
	case GT_CAP_HOT_OFF:
		if (range)
			goto malformed;
		c->light_records = true;
		if (cp->kind == GT_CAP_WINDOW_OPEN)
			return window_open(c, cp);
		if (cp->kind == GT_CAP_WINDOW_CLOSE) {
			window_close(c, cp);
			return 0;
		}
		return hot_change(c, cp);
	default:
		break;
	}
malformed:
	c->an[CAPTURE_AN_MALFORMED]++;
	return 0;
}

/* ---- finishing ---------------------------------------------------------- */

static int cmp_span(const void *pa, const void *pb)
{
	const struct capspan *a = pa, *b = pb;

	if (a->start_ts != b->start_ts)
		return a->start_ts < b->start_ts ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* Sorts iv[0..n) and merges what overlaps or touches; returns the new n. */
static size_t interval_union(struct interval *iv, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;	/* iv may be NULL: qsort must not see it */
	cmp__sort(iv, n, sizeof(*iv), cmp_interval);
	for (size_t i = 0; i < n; i++) {
		if (k && iv[i].a <= iv[k - 1].b) {
			if (iv[i].b > iv[k - 1].b)
				iv[k - 1].b = iv[i].b;
			continue;
		}
		iv[k++] = iv[i];
	}
	return k;
}

/* The first ts of [a, b] inside a hot interval; UINT64_MAX when none. */
static uint64_t first_hot(const struct capture_spans *c, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < c->niv; i++) {
		if (c->iv[i].b < a)
			continue;
		if (c->iv[i].a > b)
			break;
		return c->iv[i].a > a ? c->iv[i].a : a;
	}
	return UINT64_MAX;
}

static int cmp_shed(const void *a, const void *b)
{
	const struct capture_shed *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->api - (int)y->api;
}

void capture_spans__finish(struct capture_spans *c, uint64_t end_ts)
{
	uint64_t end = end_ts > c->max_ts ? end_ts : c->max_ts;
	bool light = capture_spans__light(c);

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].start_ts > end)
			end = c->v[i].start_ts;
	c->end_ts = end;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].end == CAPSPAN_OPEN)
			span_end(&c->v[i], end, CAPSPAN_OPEN_AT_END);
	u64map__free(&c->open);
	c->open_window = 0;
	/* the windows are hot intervals too: every probe is live in them;
	 * without memory for them, the spans' hot times come out short, never
	 * long */
	if (c->hot_live)
		interval_add(c, c->hot_since, end);
	c->hot_live = false;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == CAPSPAN_WINDOW && c->v[i].end != CAPSPAN_REFUSED)
			interval_add(c, c->v[i].start_ts, c->v[i].end_ts);
	c->niv = interval_union(c->iv, c->niv);
	if (c->n)
		cmp__sort(c->v, c->n, sizeof(*c->v), cmp_span);
	if (c->nsh)
		cmp__sort(c->sh, c->nsh, sizeof(*c->sh), cmp_shed);
	for (size_t i = 0; i < c->n; i++) {
		struct capspan *s = &c->v[i];
		uint64_t live;

		if (!light || s->kind != CAPSPAN_RANGE || s->end == CAPSPAN_REFUSED) {
			s->live_ts = s->start_ts;
			continue;
		}
		live = first_hot(c, s->start_ts, s->end_ts);
		s->live_ts = live == UINT64_MAX ? s->end_ts : live;
	}
}

struct spans_read {
	struct capture_spans *c;
	uint64_t last;		/* the latest record's time */
};

static int spans_record(void *ctx, const struct gt_hdr *rec)
{
	struct spans_read *sr = ctx;

	if (rec->ts > sr->last)
		sr->last = rec->ts;
	return capture_spans__feed(sr->c, rec);
}

int capture_spans__read(struct capture_spans *c, struct trace_reader *r)
{
	struct spans_read sr = { .c = c };
	struct gt_pass p = { .ctx = &sr, .record = spans_record };
	const struct gt_trailer *t;
	int rc = gt_pass__run(r, NULL, &p, NULL);

	if (rc)
		return rc;
	t = trace_reader__trailer(r);
	if (t && t->end_ts > sr.last)
		sr.last = t->end_ts;
	capture_spans__finish(c, sr.last);
	return 0;
}

/* ---- queries ------------------------------------------------------------ */

size_t capture_spans__count(const struct capture_spans *c)
{
	return c->n;
}

const struct capspan *capture_spans__at(const struct capture_spans *c, size_t i)
{
	return i < c->n ? &c->v[i] : NULL;
}

const struct capspan *capture_spans__find(const struct capture_spans *c, enum capspan_kind kind,
					  uint32_t number)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == kind && c->v[i].number == number)
			return &c->v[i];
	return NULL;
}

size_t capture_spans__hot_count(const struct capture_spans *c)
{
	return c->nhot;
}

const struct capture_hot *capture_spans__hot_at(const struct capture_spans *c, size_t i)
{
	return i < c->nhot ? &c->hot[i] : NULL;
}

const struct gt_capture_mode *capture_spans__mode(const struct capture_spans *c)
{
	return &c->mode;
}

bool capture_spans__light(const struct capture_spans *c)
{
	return c->mode.light || c->light_records;
}

bool capture_spans__any(const struct capture_spans *c)
{
	return capture_spans__light(c) || c->mode.range || c->n || c->nhot ||
	       capture_spans__anomalies(c);
}

uint64_t capture_spans__start_ts(const struct capture_spans *c)
{
	return c->start_ts;
}

uint64_t capture_spans__end_ts(const struct capture_spans *c)
{
	return c->end_ts;
}

uint64_t capture_spans__hot_ns(const struct capture_spans *c, uint64_t a, uint64_t b)
{
	uint64_t ns = 0;

	if (b <= a)
		return 0;
	if (!capture_spans__light(c))
		return b - a;
	for (size_t i = 0; i < c->niv && c->iv[i].a < b; i++) {
		uint64_t lo = c->iv[i].a > a ? c->iv[i].a : a, hi = c->iv[i].b < b ? c->iv[i].b : b;

		if (hi > lo)
			ns += hi - lo;
	}
	return ns;
}

/* Time inside at least one non-refused span of kind; 0 when out of memory
 * (never more than there was). */
static uint64_t covered_ns(const struct capture_spans *c, enum capspan_kind kind)
{
	struct interval *iv = malloc((c->n ? c->n : 1) * sizeof(*iv));
	size_t n = 0;
	uint64_t ns = 0;

	if (!iv)
		return 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == kind && c->v[i].end != CAPSPAN_REFUSED)
			iv[n++] = (struct interval){ .a = c->v[i].start_ts, .b = c->v[i].end_ts };
	n = interval_union(iv, n);
	for (size_t i = 0; i < n; i++)
		ns += iv[i].b - iv[i].a;
	free(iv);
	return ns;
}

void capture_spans__totals(const struct capture_spans *c, struct capture_totals *t)
{
	uint64_t start = c->start_ts && c->start_ts < c->end_ts ? c->start_ts : c->end_ts;

	*t = (struct capture_totals){ .trace_ns = c->end_ts - start };
	for (size_t i = 0; i < c->n; i++) {
		const struct capspan *s = &c->v[i];

		if (s->kind == CAPSPAN_WINDOW) {
			t->windows++;
			continue;
		}
		t->ranges++;
		t->refused += s->end == CAPSPAN_REFUSED;
		t->late += s->end != CAPSPAN_REFUSED && s->live_ts > s->start_ts;
	}
	t->range_ns = covered_ns(c, CAPSPAN_RANGE);
	t->window_ns = covered_ns(c, CAPSPAN_WINDOW);
	t->hot_intervals = capture_spans__light(c) ? (uint32_t)c->niv : 0;
	t->hot_ns = capture_spans__hot_ns(c, start, c->end_ts);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

bool capture_spans__sampled(const struct capture_spans *c, const struct capspan *sc,
			    char *note, size_t len)
{
	uint64_t a = sc ? sc->start_ts : c->start_ts, b = sc ? sc->end_ts : c->end_ts, hot, all;
	char h[32], w[32], from[32], where[96];
	struct capture_totals t;

	note[0] = '\0';
	if (a > b)
		a = b;
	all = b - a;
	hot = capture_spans__hot_ns(c, a, b);
	if (!capture_spans__light(c) || hot >= all)
		return false;
	capture_spans__totals(c, &t);
	if (sc && sc->kind == CAPSPAN_RANGE && sc->live_ts > sc->start_ts && sc->live_ts < sc->end_ts)
		snprintf(where, sizeof(where), "from +%s of range %u on, when the hot probes were live",
			 gt_ns__text(sc->live_ts - sc->start_ts, from, sizeof(from)), sc->number);
	else if (sc && sc->kind == CAPSPAN_RANGE)
		snprintf(where, sizeof(where), "while the hot probes were live in range %u",
			 sc->number);
	else if (t.windows && !c->nhot)
		snprintf(where, sizeof(where), "inside %u window%s", t.windows,
			 t.windows == 1 ? "" : "s");
	else
		snprintf(where, sizeof(where), "while the hot probes were live (%u interval%s)",
			 t.hot_intervals, t.hot_intervals == 1 ? "" : "s");
	snprintf(note, len, "sampled: launches and other hot calls only %s, %s of %s (%.1f %%); "
		 "cold calls, ioctls and off-CPU intervals are complete; nothing is extrapolated.",
		 where, gt_ns__text(hot, h, sizeof(h)), gt_ns__text(all, w, sizeof(w)),
		 share(hot, all));
	return true;
}

size_t capture_spans__shed_count(const struct capture_spans *c)
{
	return c->nsh;
}

const struct capture_shed *capture_spans__shed_at(const struct capture_spans *c, size_t i)
{
	return i < c->nsh ? &c->sh[i] : NULL;
}

bool capture_spans__shed_in(const struct capture_spans *c, unsigned api, uint64_t a, uint64_t b)
{
	bool shed = false;

	for (size_t i = 0; i < c->nsh; i++) {
		if (c->sh[i].api != api)
			continue;
		if (c->sh[i].ts > b)
			break;
		if (c->sh[i].ts <= a)
			shed = c->sh[i].shed;
		else if (c->sh[i].shed)
			return true;
	}
	return shed;
}

bool capture_spans__shed_note(const struct capture_spans *c, const struct capspan *sc, char *note,
			      size_t len)
{
	uint64_t a = sc ? sc->start_ts : c->start_ts, b = sc ? sc->end_ts : c->end_ts;
	size_t n = 0;
	char t[32];

	note[0] = '\0';
	for (size_t i = 0; i < c->nsh && n < len; i++) {
		const struct capture_shed *e = &c->sh[i];

		if (e->ts > b || (!e->shed && e->ts < a) || !capture_spans__shed_in(c, e->api, a, b))
			continue;
		if (!n)
			n = (size_t)snprintf(note, len, "shed by the overhead budget (recorded only inside "
					     "light windows from then on, sampled like hot calls):");
		if (n < len)
			n += (size_t)snprintf(note + n, len - n, " %s %s at +%s;", gt_api__name(e->api),
					      e->shed ? "shed" : "given back",
					      gt_ns__text(e->ts > c->start_ts ? e->ts - c->start_ts : 0,
							  t, sizeof(t)));
	}
	if (n && n < len)
		note[n - 1] = '.';
	return n > 0;
}

bool capture_spans__lookups_note(const struct capture_spans *c, const struct capspan *sc,
				 char *note, size_t len)
{
	char t[32];

	note[0] = '\0';
	if (!c->lookups_ts || (sc && c->lookups_ts > sc->end_ts))
		return false;
	snprintf(note, len, "kernel lookups (cuKernelGetFunction) recorded only until +%s: from then "
		 "on kernel names come from the driver's function structures, whose layout held for "
		 "%u names.",
		 gt_ns__text(c->lookups_ts > c->start_ts ? c->lookups_ts - c->start_ts : 0, t, sizeof(t)),
		 c->lookups_checked);
	return true;
}

/* ---- anomalies and names ------------------------------------------------ */

static const struct {
	const char *key;	/* in JSON */
	const char *one, *many;	/* in words, after the count */
} anomaly_names[CAPTURE_AN__COUNT] = {
	[CAPTURE_AN_CLOSE_WITHOUT_OPEN] = { "close_without_open", "close without an open",
					    "closes without an open" },
	[CAPTURE_AN_OPEN_IN_OPEN] = { "open_in_open", "open while one was open (its close lost)",
				      "opens while one was open (their closes lost)" },
	[CAPTURE_AN_INDEX_MISMATCH] = { "index_mismatch", "close numbered unlike its open",
					"closes numbered unlike their opens" },
	[CAPTURE_AN_DUPLICATE_NUMBER] = { "duplicate_number", "number used twice",
					  "numbers used twice" },
	[CAPTURE_AN_HOT_UNPAIRED] = { "hot_unpaired", "hot-probe record that changed nothing",
				      "hot-probe records that changed nothing" },
	[CAPTURE_AN_MALFORMED] = { "malformed", "malformed capture record",
				   "malformed capture records" },
};

uint64_t capture_spans__anomaly(const struct capture_spans *c, enum capture_anomaly a)
{
	return (unsigned)a < CAPTURE_AN__COUNT ? c->an[a] : 0;
}

uint64_t capture_spans__anomalies(const struct capture_spans *c)
{
	uint64_t n = 0;

	for (int i = 0; i < CAPTURE_AN__COUNT; i++)
		n += c->an[i];
	return n;
}

const char *capture_anomaly__key(enum capture_anomaly a)
{
	return (unsigned)a < CAPTURE_AN__COUNT ? anomaly_names[a].key : NULL;
}

char *capture_spans__anomalies_text(const struct capture_spans *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < CAPTURE_AN__COUNT; i++) {
		if (!c->an[i])
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%llu %s", n ? ", " : "",
				      (unsigned long long)c->an[i],
				      c->an[i] == 1 ? anomaly_names[i].one : anomaly_names[i].many);
	}
	return buf;
}

const char *capspan__source_name(const struct capspan *s)
{
	const char *n = gt_capture_source__name(s->source);

	return n ? n : "unknown";
}

const char *capspan__state_name(const struct capspan *s)
{
	switch (s->end) {
	case CAPSPAN_CLOSED:
		return s->flags & GT_CAP_F_EXIT ? "exit" : s->flags & GT_CAP_F_CUT ? "cut" : "closed";
	case CAPSPAN_OPEN_AT_END:
		return "open_at_end";
	case CAPSPAN_CLOSE_LOST:
		return "close_lost";
	case CAPSPAN_REFUSED:
		return "refused";
	default:
		return "open";
	}
}
