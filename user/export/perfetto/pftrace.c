// SPDX-License-Identifier: MIT
/*
 * The Perfetto trace writer (pftrace.h).  Packets are built in one buffer
 * and written when it passes OUT_FLUSH, between packets, so memory is one
 * piece of output plus the string table.
 *
 * Interning: every string has one id in the writer's table, and that id is
 * its iid on every sequence that uses it (iids are per sequence and per
 * kind; sharing them keeps one table).  A packet that uses an id its
 * sequence has not seen carries the entry in its own interned_data, which
 * trace_processor reads before the packet's event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export/perfetto/pftrace_int.h"
#include "lib/hash.h"
#include "lib/vec.h"

void pfw__fail(struct pftrace *w, int err, const char *what)
{
	if (w->err)
		return;
	w->err = err;
	snprintf(w->why, sizeof(w->why), "failed to %s: %s", what, strerror(-err));
}

int pftrace__new(FILE *f, struct pftrace **out)
{
	struct pftrace *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	if (pb_buf__init(&w->out, OUT_FLUSH + 64 * 1024)) {
		free(w);
		return -ENOMEM;
	}
	w->f = f;
	w->next_uuid = 1;
	w->next_seq = 1;
	*out = w;
	return 0;
}

int pfw__out_write(struct pftrace *w)
{
	struct pb_buf *b = &w->out;

	if (b->len && !w->err && fwrite(b->b, 1, b->len, w->f) != b->len)
		pfw__fail(w, errno ? -errno : -EIO, "write the output");
	w->part_written += b->len;
	b->len = 0;
	return w->err;
}

/* Sequence ids start in [SEQ_FIRST, SEQ_FIRST + SEQ_SPAN): low ids are
 * the tracing service's own, and a file may count 2^24 sequences from its
 * start without wrapping. */
#define SEQ_FIRST	0x10000u
#define SEQ_SPAN	(0xffffffffu - SEQ_FIRST - (1u << 24))

void pftrace__set_ids(struct pftrace *w, uint64_t seed)
{
	uint64_t h = hash__mix64(seed);

	/* uuids count up from a point of 2^64 drawn by the seed (never 0),
	 * sequences from one of 2^32, flows are shifted by a third: two
	 * files meet only if their ranges overlap */
	w->next_uuid = (h & ~0xffffull) ? h & ~0xffffull : 1ull << 16;
	w->next_seq = SEQ_FIRST + (uint32_t)(hash__mix64(h) % SEQ_SPAN);
	w->flow_salt = hash__mix64(h ^ 0x9e3779b97f4a7c15ull);
}

int pftrace__flush(struct pftrace *w)
{
	if (!pfw__out_write(w) && fflush(w->f))
		pfw__fail(w, errno ? -errno : -EIO, "write the output");
	return w->err;
}

int pftrace__err(const struct pftrace *w, const char **why)
{
	if (why)
		*why = w->err ? w->why : NULL;
	return w->err;
}

const struct pftrace_stats *pftrace__stats(const struct pftrace *w)
{
	return &w->stats;
}

void pftrace__free(struct pftrace *w)
{
	if (!w)
		return;
	free(w->slot);
	free(w->ent);
	free(w->chars);
	u64map__free(&w->cs_key);
	free(w->cs);
	free(w->fr);
	free(w->kd);
	u64map__free(&w->kd_of);
	u64map__free(&w->machine_of);
	free(w->machines);
	free(w->descs);
	pb_buf__free(&w->out);
	free(w);
}

/* ---- string table ------------------------------------------------------- */

static void slot_place(uint32_t *slot, uint32_t cap, uint64_t h, uint32_t id)
{
	uint32_t i = (uint32_t)h & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = id;
}

/* Room for one more string of n bytes; false when out of memory. */
static bool str_room(struct pftrace *w, size_t n)
{
	if ((uint64_t)(w->nstr + 1) * 2 > w->scap) {
		uint32_t cap = w->scap ? w->scap * 2 : 1024;
		uint32_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return false;
		for (uint32_t id = 1; id <= w->nstr; id++)
			slot_place(slot, cap, w->ent[id - 1].h, id);
		free(w->slot);
		w->slot = slot;
		w->scap = cap;
	}
	return !vec__reserve(&w->ent, &w->ecap, w->nstr, 1, 256) &&
	       !vec__reserve(&w->chars, &w->ccap, w->clen, n, 16384);
}

uint32_t pftrace__string(struct pftrace *w, const char *s, size_t n)
{
	uint64_t h = hash__bytes(s, n);
	uint32_t i, id;

	if (w->scap) {
		for (i = (uint32_t)h & (w->scap - 1); (id = w->slot[i]); i = (i + 1) & (w->scap - 1)) {
			const struct sent *e = &w->ent[id - 1];

			if (e->h == h && e->len == n && !memcmp(w->chars + e->off, s, n))
				return id;
		}
	}
	if (n > UINT32_MAX || w->nstr >= (1u << 30) || !str_room(w, n)) {
		pfw__fail(w, -ENOMEM, "intern a name");
		return 0;
	}
	memcpy(w->chars + w->clen, s, n);
	w->ent[w->nstr] = (struct sent){ .h = h, .off = w->clen, .len = (uint32_t)n };
	w->clen += n;
	id = ++w->nstr;
	slot_place(w->slot, w->scap, h, id);
	return id;
}

uint32_t pftrace__cstring(struct pftrace *w, const char *s)
{
	return pftrace__string(w, s, strlen(s));
}

/* ---- packets ------------------------------------------------------------ */

/* The iid of string id on the open packet's sequence, queued for the
 * packet's interned data when the sequence has not seen it. */
uint64_t pfw__intern(struct pftrace *w, int kind, uint32_t id)
{
	uint64_t key = (uint64_t)id << 2 | (uint64_t)kind;

	if (!id)
		return id;
	if (id < PF_LOW_IDS) {
		uint64_t *word = &w->seq->low[kind - 1][id / 64], bit = 1ull << (id % 64);

		if (*word & bit)
			return id;
		*word |= bit;
	} else {
		if (u64map__get(&w->seq->sent, key))
			return id;
		if (u64map__set(&w->seq->sent, key, 1)) {
			pfw__fail(w, -ENOMEM, "intern a name");
			return id;
		}
	}
	if (w->npending == PENDING_MAX)
		pfw__fail(w, -ENOMEM, "intern a name");
	else
		w->pending[w->npending++] = key;
	return id;
}

/* A sequence first used in this part starts again: its state cleared,
 * its names and call stacks interned anew, its timestamps free of the
 * previous part's. */
void pfw__seq_fresh(struct pftrace *w, struct pf_seq *s)
{
	if (s->part == w->part)
		return;
	s->part = w->part;
	s->started = false;
	s->last_ts = 0;
	memset(s->low, 0, sizeof(s->low));
	u64map__free(&s->sent);
}

/* Opens a TracePacket on s (ts may be NULL).  The first packet of a
 * sequence (in a part) clears its incremental state and sets the clock of
 * every later timestamp on it. */
void pfw__pkt_begin(struct pftrace *w, struct pf_seq *s, const uint64_t *ts)
{
	struct pb_buf *b = &w->out;
	size_t dm;

	pfw__seq_fresh(w, s);
	w->pkt = pb_buf__begin(b, F_TRACE_PACKET);
	w->seq = s;
	w->npending = 0;
	w->pending_cs = 0;
	if (ts) {
		pb_buf__varint(b, F_PKT_TIMESTAMP, *ts);
		if (*ts > s->last_ts)
			s->last_ts = *ts;
	}
	pb_buf__varint(b, F_PKT_SEQ_ID, s->id);
	if (s->machine)
		pb_buf__varint(b, F_PKT_MACHINE_ID, s->machine);
	if (s->started) {
		pb_buf__varint(b, F_PKT_SEQ_FLAGS, SEQ_NEEDS_STATE);
		return;
	}
	/* an event (the packets with a timestamp) uses interned names, and
	 * may bring them: it needs the state it starts, as every later
	 * packet does */
	pb_buf__varint(b, F_PKT_SEQ_FLAGS, ts ? SEQ_CLEARED | SEQ_NEEDS_STATE : SEQ_CLEARED);
	dm = pb_buf__begin(b, F_PKT_DEFAULTS);
	pb_buf__varint(b, F_DEF_CLOCK_ID, CLK_MONOTONIC);
	pb_buf__end(b, dm);
	s->started = true;
}

/* One interned string of the string table, as field (InternedString). */
static void interned_str(struct pftrace *w, uint32_t field, uint32_t id)
{
	const struct sent *e = &w->ent[id - 1];
	size_t em = pb_buf__begin(&w->out, field);

	pb_buf__varint(&w->out, F_IN_IID, id);
	pb_buf__bytes(&w->out, F_IN_STR, w->chars + e->off, e->len);
	pb_buf__end(&w->out, em);
}

/* Whether frames [first, i) of a stack already name string id in field f
 * (0: function, 1: source): each string goes once into a packet. */
static bool str_before(const struct pftrace *w, const struct istack *st, uint32_t i, int f, uint32_t id)
{
	for (uint32_t j = st->first; j < i; j++)
		if ((f ? w->fr[j].source : w->fr[j].function) == id)
			return true;
	return false;
}

/* The interned data of callstack iid: its function names, source files,
 * frames and the callstack itself (all of it, once per sequence). */
static void interned_callstack(struct pftrace *w, uint64_t iid)
{
	const struct istack *st = &w->cs[iid - 1];
	struct pb_buf *b = &w->out;
	uint32_t end = st->first + st->n, i;
	size_t m;

	for (i = st->first; i < end; i++) {
		const struct iframe *f = &w->fr[i];

		if (f->function && !str_before(w, st, i, 0, f->function))
			interned_str(w, F_ID_FUNCTION_NAMES, f->function);
		if (f->source && !str_before(w, st, i, 1, f->source))
			interned_str(w, F_ID_SOURCE_PATHS, f->source);
	}
	for (i = st->first; i < end; i++) {
		const struct iframe *f = &w->fr[i];

		m = pb_buf__begin(b, F_ID_FRAMES);
		pb_buf__varint(b, F_PF_IID, i + 1);
		if (f->function)
			pb_buf__varint(b, F_PF_FUNCTION, f->function);
		if (f->source)
			pb_buf__varint(b, F_PF_SOURCE, f->source);
		if (f->line)
			pb_buf__varint(b, F_PF_LINE, f->line);
		pb_buf__varint(b, F_PF_KIND, f->python ? FRAME_INTERPRETED : FRAME_NATIVE);
		pb_buf__end(b, m);
	}
	m = pb_buf__begin(b, F_ID_CALLSTACKS);
	pb_buf__varint(b, F_PC_IID, iid);
	for (i = st->first; i < end; i++)
		pb_buf__varint(b, F_PC_FRAMES, i + 1);
	pb_buf__end(b, m);
}

/* Closes the packet, adding the interned entries it introduced. */
int pfw__pkt_end(struct pftrace *w)
{
	static const uint32_t kind_field[] = {
		[KIND_EVENT_NAME] = F_ID_EVENT_NAMES, [KIND_ANNOT_NAME] = F_ID_ANNOT_NAMES,
		[KIND_ANNOT_STR] = F_ID_ANNOT_STRINGS,
	};
	struct pb_buf *b = &w->out;

	if (w->npending || w->pending_cs) {
		size_t im = pb_buf__begin(b, F_PKT_INTERNED);

		for (uint32_t i = 0; i < w->npending; i++)
			interned_str(w, kind_field[w->pending[i] & 3], (uint32_t)(w->pending[i] >> 2));
		if (w->pending_cs)
			interned_callstack(w, w->pending_cs);
		pb_buf__end(b, im);
		w->npending = 0;
		w->pending_cs = 0;
	}
	pb_buf__end(b, w->pkt);
	w->stats.packets++;
	if (b->err)
		pfw__fail(w, b->err, "build a packet");
	if (b->len >= OUT_FLUSH)
		pfw__out_write(w);
	return w->err;
}

void pfw__seq_init(struct pftrace *w, struct pf_seq *s)
{
	memset(s, 0, sizeof(*s));
	s->id = w->next_seq++;
	s->part = w->part;
	w->stats.sequences++;
}

void pfw__snapshot(struct pftrace *w, uint32_t machine, uint64_t mono, int64_t realtime_offset)
{
	struct pb_buf *b = &w->out;
	struct pf_seq s;
	size_t cs, c;
	int64_t real;
	/* the header's values come from the file: a wall-clock time that would
	 * wrap (or precede 1970) is left out rather than computed */
	bool has_real = mono <= INT64_MAX &&
			!__builtin_add_overflow((int64_t)mono, realtime_offset, &real) && real >= 0;

	pfw__seq_init(w, &s);
	s.machine = machine;
	pfw__pkt_begin(w, &s, NULL);
	cs = pb_buf__begin(b, F_PKT_CLOCK_SNAPSHOT);
	c = pb_buf__begin(b, F_CS_CLOCKS);
	pb_buf__varint(b, F_CLK_ID, CLK_MONOTONIC);
	pb_buf__varint(b, F_CLK_TS, mono);
	pb_buf__end(b, c);
	if (has_real) {
		c = pb_buf__begin(b, F_CS_CLOCKS);
		pb_buf__varint(b, F_CLK_ID, CLK_REALTIME);
		pb_buf__varint(b, F_CLK_TS, (uint64_t)real);
		pb_buf__end(b, c);
	}
	pb_buf__varint(b, F_CS_PRIMARY, CLK_MONOTONIC);
	pb_buf__end(b, cs);
	pfw__pkt_end(w);
}

void pftrace__clock_snapshot(struct pftrace *w, uint64_t mono, int64_t realtime_offset)
{
	if (!w->has_snapshot) {
		w->has_snapshot = true;
		w->snap_mono = mono;
		w->snap_offset = realtime_offset;
	}
	pfw__snapshot(w, 0, mono, realtime_offset);
}

