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
#include "export/perfetto/protobuf.h"
#include "export/perfetto/pftrace.h"
#include "lib/hash.h"
#include "lib/vec.h"

#define OUT_FLUSH	(256 * 1024)	/* output written in pieces of about this */
#define PENDING_MAX	64		/* interned entries one packet may introduce */

/* Field numbers, checked against Perfetto's protos/perfetto/... files. */
enum {
	F_TRACE_PACKET = 1,		/* trace/trace.proto Trace.packet */
	/* trace/trace_packet.proto TracePacket */
	F_PKT_CLOCK_SNAPSHOT = 6,
	F_PKT_TIMESTAMP = 8,
	F_PKT_SEQ_ID = 10,		/* trusted_packet_sequence_id */
	F_PKT_TRACK_EVENT = 11,
	F_PKT_INTERNED = 12,		/* interned_data */
	F_PKT_SEQ_FLAGS = 13,		/* sequence_flags */
	F_PKT_DEFAULTS = 59,		/* trace_packet_defaults */
	F_PKT_TRACK_DESC = 60,		/* track_descriptor */
	F_PKT_MACHINE_ID = 98,		/* machine_id */
	/* trace/trace_packet_defaults.proto TracePacketDefaults */
	F_DEF_CLOCK_ID = 58,		/* timestamp_clock_id */
	/* trace/clock_snapshot.proto ClockSnapshot, ClockSnapshot.Clock */
	F_CS_CLOCKS = 1, F_CS_PRIMARY = 2,
	F_CLK_ID = 1, F_CLK_TS = 2,
	/* trace/track_event/track_descriptor.proto TrackDescriptor */
	F_TD_UUID = 1, F_TD_NAME = 2, F_TD_PROCESS = 3, F_TD_THREAD = 4, F_TD_PARENT = 5,
	F_TD_COUNTER = 8,
	/* trace/track_event/counter_descriptor.proto CounterDescriptor */
	F_CD_UNIT = 3,
	/* trace/track_event/process_descriptor.proto ProcessDescriptor */
	F_PD_PID = 1, F_PD_CMDLINE = 2, F_PD_NAME = 6,
	/* trace/track_event/thread_descriptor.proto ThreadDescriptor */
	F_THD_PID = 1, F_THD_TID = 2, F_THD_NAME = 5,
	/* trace/track_event/track_event.proto TrackEvent */
	F_TE_ANNOT = 4, F_TE_TYPE = 9, F_TE_NAME_IID = 10, F_TE_TRACK = 11, F_TE_CATEGORIES = 22,
	F_TE_FLOW = 47, F_TE_CALLSTACK_IID = 56,
	F_TE_COUNTER_VALUE = 30, F_TE_DOUBLE_COUNTER_VALUE = 44,
	/* trace/track_event/debug_annotation.proto DebugAnnotation */
	F_DA_NAME_IID = 1, F_DA_BOOL = 2, F_DA_UINT = 3, F_DA_INT = 4, F_DA_DOUBLE = 5, F_DA_PTR = 7,
	F_DA_ARRAY = 12, F_DA_STR_IID = 17,
	/* trace/interned_data/interned_data.proto InternedData */
	F_ID_EVENT_NAMES = 2, F_ID_ANNOT_NAMES = 3, F_ID_ANNOT_STRINGS = 29,
	F_ID_FUNCTION_NAMES = 5, F_ID_FRAMES = 6, F_ID_CALLSTACKS = 7, F_ID_SOURCE_PATHS = 18,
	/* profiling/profile_common.proto Frame, Callstack */
	F_PF_IID = 1, F_PF_FUNCTION = 2, F_PF_SOURCE = 5, F_PF_LINE = 6, F_PF_KIND = 7,
	F_PC_IID = 1, F_PC_FRAMES = 2,
	/* EventName, DebugAnnotationName, InternedString (profile_common.proto) */
	F_IN_IID = 1, F_IN_STR = 2,
};

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };	/* TracePacket.SequenceFlags */
enum { FRAME_NATIVE = 1, FRAME_INTERPRETED = 3 };	/* Frame.Kind */
enum { CLK_REALTIME = 1, CLK_MONOTONIC = 3 };	/* common/builtin_clock.proto BuiltinClock */

/* What an interned id names, per sequence: the low bits of a sent key
 * (0: a callstack, with its frames and their strings). */
enum { KIND_CALLSTACK = 0, KIND_EVENT_NAME = 1, KIND_ANNOT_NAME = 2, KIND_ANNOT_STR = 3 };

/* An interned callstack: its frames, outermost first, in fr[]. */
struct istack {
	uint32_t first, n;
};

/* An interned frame: its strings' ids in the string table. */
struct iframe {
	uint32_t function, source, line;
	bool python;
};

/* A track's latest TrackDescriptor (the field, tag and length included),
 * kept for the parts after the first: bytes [off, off + len) of descs. */
struct kept_desc {
	uint64_t uuid;
	size_t off, len;
	uint32_t machine;
};

struct sent {
	uint64_t h;		/* hash */
	size_t off;		/* in chars */
	uint32_t len;		/* bytes, no NUL */
};

struct pftrace {
	FILE *f;
	struct pb_buf out;		/* packets not yet written to f */
	int err;			/* first error, negative errno */
	char why[160];			/* its reason */
	/* the string table */
	uint32_t *slot;			/* scap ids, 0 = empty */
	uint32_t scap;			/* power of two */
	uint32_t nstr, ecap;		/* strings (ids 1 … nstr), entries allocated */
	struct sent *ent;		/* by id - 1 */
	char *chars;			/* the strings back to back */
	size_t clen, ccap;
	/* the open packet */
	size_t pkt, ev;			/* marks of the packet and its TrackEvent */
	struct pf_seq *seq;		/* its sequence */
	uint64_t pending[PENDING_MAX];	/* interned entries it introduces */
	uint32_t npending;
	uint64_t pending_cs;		/* the callstack it introduces, 0 = none */
	/* interned callstacks: iid = index + 1 in cs[], frame iid = index + 1 in fr[] */
	struct u64map cs_key;		/* the caller's key -> iid */
	struct istack *cs;
	size_t ncs, cs_cap;
	struct iframe *fr;
	size_t nfr, fr_cap;
	uint64_t next_uuid;
	uint32_t next_seq;
	uint64_t flow_salt;		/* added to every flow id (pftrace__set_ids) */
	struct pftrace_stats stats;
	/* parts (pftrace__keep_parts) */
	bool keep;			/* keep the snapshot and descriptors */
	uint32_t part;			/* parts begun before the current one */
	uint64_t part_written;		/* bytes of the current part written to f */
	bool has_snapshot;
	uint64_t snap_mono;
	int64_t snap_offset;
	struct kept_desc *kd;		/* in the order the tracks were first described */
	size_t nkd, kd_cap;
	struct u64map kd_of;		/* uuid -> index in kd + 1 */
	uint8_t *descs;			/* the descriptors' bytes */
	size_t dlen, dcap;
	size_t desc_at;			/* where the open descriptor field starts in out */
	struct u64map machine_of;	/* uuid -> machine, tracks on a machine other than 0 */
	uint32_t *machines;		/* machines with their clock snapshot, in order */
	size_t nmachines, mcap;
};

static void fail(struct pftrace *w, int err, const char *what)
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

static int out_write(struct pftrace *w)
{
	struct pb_buf *b = &w->out;

	if (b->len && !w->err && fwrite(b->b, 1, b->len, w->f) != b->len)
		fail(w, errno ? -errno : -EIO, "write the output");
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
	if (!out_write(w) && fflush(w->f))
		fail(w, errno ? -errno : -EIO, "write the output");
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
		fail(w, -ENOMEM, "intern a name");
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
static uint64_t intern(struct pftrace *w, int kind, uint32_t id)
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
			fail(w, -ENOMEM, "intern a name");
			return id;
		}
	}
	if (w->npending == PENDING_MAX)
		fail(w, -ENOMEM, "intern a name");
	else
		w->pending[w->npending++] = key;
	return id;
}

/* A sequence first used in this part starts again: its state cleared,
 * its names and call stacks interned anew, its timestamps free of the
 * previous part's. */
static void seq_fresh(struct pftrace *w, struct pf_seq *s)
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
static void pkt_begin(struct pftrace *w, struct pf_seq *s, const uint64_t *ts)
{
	struct pb_buf *b = &w->out;
	size_t dm;

	seq_fresh(w, s);
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
static int pkt_end(struct pftrace *w)
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
		fail(w, b->err, "build a packet");
	if (b->len >= OUT_FLUSH)
		out_write(w);
	return w->err;
}

static void seq_init(struct pftrace *w, struct pf_seq *s)
{
	memset(s, 0, sizeof(*s));
	s->id = w->next_seq++;
	s->part = w->part;
	w->stats.sequences++;
}

static void snapshot(struct pftrace *w, uint32_t machine, uint64_t mono, int64_t realtime_offset)
{
	struct pb_buf *b = &w->out;
	struct pf_seq s;
	size_t cs, c;
	int64_t real;
	/* the header's values come from the file: a wall-clock time that would
	 * wrap (or precede 1970) is left out rather than computed */
	bool has_real = mono <= INT64_MAX &&
			!__builtin_add_overflow((int64_t)mono, realtime_offset, &real) && real >= 0;

	seq_init(w, &s);
	s.machine = machine;
	pkt_begin(w, &s, NULL);
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
	pkt_end(w);
}

void pftrace__clock_snapshot(struct pftrace *w, uint64_t mono, int64_t realtime_offset)
{
	if (!w->has_snapshot) {
		w->has_snapshot = true;
		w->snap_mono = mono;
		w->snap_offset = realtime_offset;
	}
	snapshot(w, 0, mono, realtime_offset);
}

void pftrace__track_machine(struct pftrace *w, struct pf_track *t, uint32_t machine)
{
	size_t i;

	t->seq.machine = machine;
	if (!machine)
		return;
	if (u64map__set(&w->machine_of, t->uuid, machine)) {
		fail(w, -ENOMEM, "keep a track's machine");
		return;
	}
	for (i = 0; i < w->nmachines && w->machines[i] != machine; i++)
		;
	if (i < w->nmachines)
		return;
	if (vec__reserve(&w->machines, &w->mcap, w->nmachines, 1, 8)) {
		fail(w, -ENOMEM, "keep a machine");
		return;
	}
	w->machines[w->nmachines++] = machine;
	if (w->has_snapshot)
		snapshot(w, machine, w->snap_mono, w->snap_offset);
}

/* ---- parts -------------------------------------------------------------- */

void pftrace__keep_parts(struct pftrace *w)
{
	w->keep = true;
}

uint64_t pftrace__part_bytes(const struct pftrace *w)
{
	return w->part_written + w->out.len;
}

int pftrace__end_part(struct pftrace *w)
{
	return pftrace__flush(w);
}

void pftrace__next_part(struct pftrace *w, FILE *f)
{
	struct pf_seq s;

	w->f = f;
	w->part++;
	w->part_written = 0;
	if (w->has_snapshot) {
		snapshot(w, 0, w->snap_mono, w->snap_offset);
		for (size_t i = 0; i < w->nmachines; i++)
			snapshot(w, w->machines[i], w->snap_mono, w->snap_offset);
	}
	/* the tracks, on a sequence of their own: parents were described
	 * before their children, and stay so */
	seq_init(w, &s);
	for (size_t i = 0; i < w->nkd && !w->err; i++) {
		s.machine = w->kd[i].machine;
		pkt_begin(w, &s, NULL);
		if (pb_buf__room(&w->out, w->kd[i].len)) {
			memcpy(w->out.b + w->out.len, w->descs + w->kd[i].off, w->kd[i].len);
			w->out.len += w->kd[i].len;
		}
		pkt_end(w);
	}
}

/* ---- tracks ------------------------------------------------------------- */

void pftrace__track_init(struct pftrace *w, struct pf_track *t)
{
	t->uuid = w->next_uuid++;
	seq_init(w, &t->seq);
	t->late = NULL;
	w->stats.tracks++;
}

void pftrace__track_free(struct pf_track *t)
{
	u64map__free(&t->seq.sent);
	if (t->late)
		u64map__free(&t->late->sent);
	free(t->late);
	t->late = NULL;
}

struct pf_seq *pftrace__track_seq(struct pftrace *w, struct pf_track *t, uint64_t ts)
{
	seq_fresh(w, &t->seq);
	if (t->late)
		seq_fresh(w, t->late);
	if (ts >= t->seq.last_ts)
		return &t->seq;
	w->stats.late++;
	if (t->late && ts >= t->late->last_ts)
		return t->late;
	/* older than the late sequence too: a fresh one (rare: a call
	 * given up on, see perfetto_order.c) */
	if (t->late) {
		u64map__free(&t->late->sent);
	} else {
		t->late = malloc(sizeof(*t->late));
		if (!t->late) {
			fail(w, -ENOMEM, "allocate a sequence");
			return &t->seq;
		}
	}
	seq_init(w, t->late);
	t->late->machine = t->seq.machine;
	return t->late;
}

/* Opens a TrackDescriptor packet on t's sequence; returns the mark of the
 * descriptor (desc_end closes it). */
static size_t desc_begin(struct pftrace *w, struct pf_track *t, uint64_t parent)
{
	size_t td;

	if (parent && !t->seq.machine) {
		const uint64_t *m = u64map__get(&w->machine_of, parent);

		if (m)
			pftrace__track_machine(w, t, (uint32_t)*m);
	}
	pkt_begin(w, &t->seq, NULL);
	w->desc_at = w->out.len;
	td = pb_buf__begin(&w->out, F_PKT_TRACK_DESC);
	pb_buf__varint(&w->out, F_TD_UUID, t->uuid);
	if (parent)
		pb_buf__varint(&w->out, F_TD_PARENT, parent);
	return td;
}

/* Closes the descriptor opened by desc_begin and its packet; keeps the
 * descriptor for later parts. */
static void desc_end(struct pftrace *w, const struct pf_track *t, size_t td)
{
	pb_buf__end(&w->out, td);
	if (w->keep && !w->out.err) {
		size_t n = w->out.len - w->desc_at;
		uint64_t *i = u64map__get(&w->kd_of, t->uuid);

		/* a descriptor again (a renamed thread) replaces the kept one;
		 * the old bytes stay unused: renames are few */
		if (vec__reserve(&w->descs, &w->dcap, w->dlen, n, 4096) ||
		    (!i && (vec__reserve(&w->kd, &w->kd_cap, w->nkd, 1, 64) ||
			    u64map__set(&w->kd_of, t->uuid, w->nkd + 1)))) {
			fail(w, -ENOMEM, "keep a track descriptor");
		} else {
			struct kept_desc *k = i ? &w->kd[*i - 1] : &w->kd[w->nkd++];

			memcpy(w->descs + w->dlen, w->out.b + w->desc_at, n);
			*k = (struct kept_desc){ .uuid = t->uuid, .off = w->dlen, .len = n, .machine = t->seq.machine };
			w->dlen += n;
		}
	}
	pkt_end(w);
}

void pftrace__process_track(struct pftrace *w, struct pf_track *t, uint32_t pid, const char *name,
			    const char *cmdline)
{
	struct pb_buf *b = &w->out;
	size_t td = desc_begin(w, t, 0), pd;

	pd = pb_buf__begin(b, F_TD_PROCESS);
	pb_buf__varint(b, F_PD_PID, pid);
	if (name)
		pb_buf__string(b, F_PD_NAME, name);
	if (cmdline)
		pb_buf__string(b, F_PD_CMDLINE, cmdline);
	pb_buf__end(b, pd);
	desc_end(w, t, td);
}

void pftrace__thread_track(struct pftrace *w, struct pf_track *t, const struct pf_track *process,
			   uint32_t pid, uint32_t tid, const char *name)
{
	struct pb_buf *b = &w->out;
	size_t td = desc_begin(w, t, process ? process->uuid : 0), d;

	d = pb_buf__begin(b, F_TD_THREAD);
	pb_buf__varint(b, F_THD_PID, pid);
	pb_buf__varint(b, F_THD_TID, tid);
	if (name)
		pb_buf__string(b, F_THD_NAME, name);
	pb_buf__end(b, d);
	desc_end(w, t, td);
}

void pftrace__track(struct pftrace *w, struct pf_track *t, uint64_t parent, const char *name)
{
	size_t td = desc_begin(w, t, parent);

	if (name)
		pb_buf__string(&w->out, F_TD_NAME, name);
	desc_end(w, t, td);
}

void pftrace__counter_track(struct pftrace *w, struct pf_track *t, uint64_t parent, const char *name,
			    enum pf_counter_unit unit)
{
	size_t td = desc_begin(w, t, parent), cd;

	if (name)
		pb_buf__string(&w->out, F_TD_NAME, name);
	/* present, even empty, it makes the track a counter track */
	cd = pb_buf__begin(&w->out, F_TD_COUNTER);
	if (unit != PF_UNIT_UNSPECIFIED)
		pb_buf__varint(&w->out, F_CD_UNIT, unit);
	pb_buf__end(&w->out, cd);
	desc_end(w, t, td);
}

/* A TYPE_COUNTER event of t at ts, open: the caller adds the value. */
static void counter_open(struct pftrace *w, struct pf_track *t, uint64_t ts)
{
	struct pf_seq *s = pftrace__track_seq(w, t, ts);

	pkt_begin(w, s, &ts);
	w->ev = pb_buf__begin(&w->out, F_PKT_TRACK_EVENT);
	pb_buf__varint(&w->out, F_TE_TYPE, PF_COUNTER);
	pb_buf__varint(&w->out, F_TE_TRACK, t->uuid);
}

_Static_assert(sizeof(double) == sizeof(uint64_t), "a double is 64 bits on the wire");

int pftrace__counter(struct pftrace *w, struct pf_track *t, uint64_t ts, double v)
{
	uint64_t bits;

	/* a double is its IEEE 754 bits, little-endian, as fixed64 */
	memcpy(&bits, &v, sizeof(bits));
	counter_open(w, t, ts);
	pb_buf__fixed64(&w->out, F_TE_DOUBLE_COUNTER_VALUE, bits);
	return pftrace__event_close(w);
}

int pftrace__counter_int(struct pftrace *w, struct pf_track *t, uint64_t ts, int64_t v)
{
	counter_open(w, t, ts);
	pb_buf__int(&w->out, F_TE_COUNTER_VALUE, v);
	return pftrace__event_close(w);
}

/* ---- events ------------------------------------------------------------- */

void pftrace__event_open(struct pftrace *w, const struct pf_track *t, struct pf_seq *s,
			 enum pf_event_type type, uint64_t ts, uint32_t name)
{
	struct pb_buf *b = &w->out;

	pkt_begin(w, s, &ts);
	w->ev = pb_buf__begin(b, F_PKT_TRACK_EVENT);
	pb_buf__varint(b, F_TE_TYPE, type);
	pb_buf__varint(b, F_TE_TRACK, t->uuid);
	if (name)
		pb_buf__varint(b, F_TE_NAME_IID, intern(w, KIND_EVENT_NAME, name));
}

void pftrace__event_category(struct pftrace *w, const char *cat, size_t n)
{
	/* a plain string, not interned: the few categories are short, and a
	 * fourth interned kind would not fit the sent keys' two bits */
	pb_buf__bytes(&w->out, F_TE_CATEGORIES, cat, n);
}

void pftrace__event_flow(struct pftrace *w, uint64_t flow_id)
{
	pb_buf__fixed64(&w->out, F_TE_FLOW, flow_id + w->flow_salt);
}

uint64_t pftrace__callstack_iid(const struct pftrace *w, uint64_t key)
{
	const uint64_t *iid = u64map__get(&w->cs_key, key);

	return iid ? *iid : 0;
}

uint64_t pftrace__callstack(struct pftrace *w, uint64_t key, const struct pftrace_frame *f, size_t n)
{
	uint64_t iid = pftrace__callstack_iid(w, key);

	if (iid || !n)
		return iid;
	if (n > UINT32_MAX - w->nfr || vec__reserve(&w->fr, &w->fr_cap, w->nfr, n, 1024) ||
	    vec__reserve(&w->cs, &w->cs_cap, w->ncs, 1, 256)) {
		fail(w, -ENOMEM, "intern a call stack");
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		w->fr[w->nfr + i] = (struct iframe){
			.function = f[i].function ? pftrace__cstring(w, f[i].function) : 0,
			.source = f[i].source ? pftrace__cstring(w, f[i].source) : 0,
			.line = f[i].line, .python = f[i].python,
		};
	w->cs[w->ncs++] = (struct istack){ .first = (uint32_t)w->nfr, .n = (uint32_t)n };
	w->nfr += n;
	iid = w->ncs;
	if (u64map__set(&w->cs_key, key, iid)) {
		fail(w, -ENOMEM, "intern a call stack");
		return 0;
	}
	return iid;
}

void pftrace__event_callstack_iid(struct pftrace *w, uint64_t iid)
{
	uint64_t key = iid << 2 | KIND_CALLSTACK;

	if (!iid)
		return;
	if (!u64map__get(&w->seq->sent, key)) {
		if (u64map__set(&w->seq->sent, key, 1))
			fail(w, -ENOMEM, "intern a call stack");
		w->pending_cs = iid;
	}
	pb_buf__varint(&w->out, F_TE_CALLSTACK_IID, iid);
}

int pftrace__event_close(struct pftrace *w)
{
	pb_buf__end(&w->out, w->ev);
	return pkt_end(w);
}

static size_t ann_begin(struct pftrace *w, uint32_t name)
{
	size_t m = pb_buf__begin(&w->out, F_TE_ANNOT);

	pb_buf__varint(&w->out, F_DA_NAME_IID, intern(w, KIND_ANNOT_NAME, name));
	return m;
}

static void ann_varint(struct pftrace *w, uint32_t name, uint32_t field, uint64_t v)
{
	size_t m = ann_begin(w, name);

	pb_buf__varint(&w->out, field, v);
	pb_buf__end(&w->out, m);
}

void pftrace__ann_uint(struct pftrace *w, uint32_t name, uint64_t v)
{
	ann_varint(w, name, F_DA_UINT, v);
}

void pftrace__ann_int(struct pftrace *w, uint32_t name, int64_t v)
{
	ann_varint(w, name, F_DA_INT, (uint64_t)v);
}

void pftrace__ann_bool(struct pftrace *w, uint32_t name, bool v)
{
	ann_varint(w, name, F_DA_BOOL, v);
}

void pftrace__ann_double(struct pftrace *w, uint32_t name, double v)
{
	size_t m = ann_begin(w, name);
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_buf__fixed64(&w->out, F_DA_DOUBLE, bits);
	pb_buf__end(&w->out, m);
}

void pftrace__ann_ptr(struct pftrace *w, uint32_t name, uint64_t v)
{
	ann_varint(w, name, F_DA_PTR, v);
}

void pftrace__ann_str(struct pftrace *w, uint32_t name, uint32_t str)
{
	if (str)
		ann_varint(w, name, F_DA_STR_IID, intern(w, KIND_ANNOT_STR, str));
}

/* An array: trace_processor shows name[0], name[1], … */
void pftrace__ann_uints(struct pftrace *w, uint32_t name, const uint32_t *v, int n)
{
	size_t m = ann_begin(w, name);

	for (int i = 0; i < n; i++) {
		size_t e = pb_buf__begin(&w->out, F_DA_ARRAY);

		pb_buf__varint(&w->out, F_DA_UINT, v[i]);
		pb_buf__end(&w->out, e);
	}
	pb_buf__end(&w->out, m);
}
