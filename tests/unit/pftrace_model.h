/* SPDX-License-Identifier: MIT */
/*
 * A minimal reader of native Perfetto traces for the unit tests: a protobuf
 * wire reader and a model of the packets (tracks, interned names, track
 * events with their annotations) built in one pass that also checks, with
 * cmocka asserts, what trace_processor relies on: each sequence starts by
 * clearing its incremental state (with TracePacketDefaults), timestamps never
 * decrease along a sequence, interned ids are defined before use on their
 * sequence, events and parents name tracks described before, and per track
 * (events in time order, ties in file order) slice ends close open slices.
 * Events keep their flow ids; plain tracks (GPU streams, NVTX) their names;
 * counter tracks (a CounterDescriptor) their unit, and take counter events
 * only, each with one value, which no other event has.
 * Static inline so that each test takes what it uses.
 */
#ifndef GTRACE_TEST_PFTRACE_MODEL_H
#define GTRACE_TEST_PFTRACE_MODEL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

struct field {
	uint32_t num;
	int wire;
	uint64_t v;		/* varint / fixed value */
	const uint8_t *p;	/* length-delimited bytes */
	size_t n;
};

static inline uint64_t rd_varint(const uint8_t **pp, const uint8_t *end)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		assert_true(*pp < end);
		v |= (uint64_t)(**pp & 0x7f) << shift;
		if (!(*(*pp)++ & 0x80))
			return v;
	}
	fail_msg("varint longer than 10 bytes");
	return 0;
}

static inline bool next_field(const uint8_t **pp, const uint8_t *end, struct field *f)
{
	uint64_t tag;

	if (*pp >= end)
		return false;
	tag = rd_varint(pp, end);
	f->num = (uint32_t)(tag >> 3);
	f->wire = (int)(tag & 7);
	switch (f->wire) {
	case 0:
		f->v = rd_varint(pp, end);
		break;
	case 1:
		assert_true(end - *pp >= 8);
		memcpy(&f->v, *pp, 8);
		*pp += 8;
		break;
	case 2:
		f->n = rd_varint(pp, end);
		assert_true((size_t)(end - *pp) >= f->n);
		f->p = *pp;
		*pp += f->n;
		break;
	default:
		fail_msg("wire type %d", f->wire);
	}
	return true;
}

#define FOR_FIELDS(f, p, n) \
	for (const uint8_t *_q = (p), *_e = (p) + (n); next_field(&_q, _e, &(f));)

enum { K_EVENT = 2, K_ANNOT = 3, K_STR = 29 };	/* InternedData fields */

struct ann {
	char name[32];
	int field;		/* DebugAnnotation value field: 2 bool, 3 uint, 4 int, 7 ptr, 17 string, 12 array */
	uint64_t v;
	char str[128];
	int narr;
	uint64_t arr[4];
};

#define EV_FLOWS 8

struct ev {
	int pkt;		/* packet index */
	uint32_t seq;
	uint64_t ts, track, flow;	/* flow: the last of flows */
	uint64_t flows[EV_FLOWS];	/* flow_ids, in order */
	int nflow;
	int type;
	char name[128];
	char cat[32];		/* TrackEvent.categories, the last of them; "" when none */
	int ncat;		/* how many categories it has */
	struct ann ann[32];
	int nann;
	int nvalue;		/* counter values it has (a counter event: exactly one) */
	bool is_double;		/* the value is double_counter_value, else counter_value */
	double value;		/* double_counter_value */
	int64_t ivalue;		/* counter_value */
};

struct trk {
	uint64_t uuid, parent;
	char kind;		/* 'p' process, 't' thread */
	uint32_t pid, tid;
	char name[128];
	char cmdline[128];	/* ProcessDescriptor.cmdline, its elements joined by spaces */
	int ncmdline;		/* its elements */
	int ndesc;		/* descriptors of this uuid: a thread's again after a rename */
	bool counter;		/* it has a CounterDescriptor */
	int unit;		/* CounterDescriptor.unit, 0 when unset */
};

struct interned {
	uint32_t seq;
	int kind;
	uint64_t iid;
	char name[128];
};

/* A whole exported trace, checked while read. */
struct model {
	int npkt, nev, ntrk, nint;
	int capev, capint;	/* allocated entries of ev and in */
	struct ev *ev;
	struct trk trk[64];
	struct interned *in;
	uint32_t seqs[64];	/* sequences seen, in order */
	uint64_t last_ts[64];
	int nseq, defaults_ok;
	uint64_t clk[8];	/* ClockSnapshot: clock id -> timestamp */
	int primary;
};

static inline int seq_index(struct model *m, uint32_t seq)
{
	for (int i = 0; i < m->nseq; i++)
		if (m->seqs[i] == seq)
			return i;
	return -1;
}

static inline const char *lookup(struct model *m, uint32_t seq, int kind, uint64_t iid)
{
	for (int i = m->nint - 1; i >= 0; i--)
		if (m->in[i].seq == seq && m->in[i].kind == kind && m->in[i].iid == iid)
			return m->in[i].name;
	fail_msg("iid %llu (kind %d) used on sequence %u before it was defined",
		 (unsigned long long)iid, kind, seq);
	return NULL;
}

/* Copies at most cap - 1 bytes of s (names longer than the model keeps are
 * cut: the tests use short ones). */
static inline void set_str(char *dst, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);

	memcpy(dst, s, n);
	dst[n] = '\0';
}

static inline void copy_str(char *dst, size_t cap, const struct field *f)
{
	size_t n = f->n < cap - 1 ? f->n : cap - 1;

	memcpy(dst, f->p, n);
	dst[n] = '\0';
}

static inline void read_interned(struct model *m, uint32_t seq, const struct field *im)
{
	struct field f, g;

	FOR_FIELDS(f, im->p, im->n) {
		struct interned *in;

		if (f.num != K_EVENT && f.num != K_ANNOT && f.num != K_STR)
			continue;
		if (m->nint == m->capint) {
			m->capint = m->capint ? m->capint * 2 : 64;
			m->in = realloc(m->in, m->capint * sizeof(*m->in));
			assert_non_null(m->in);
		}
		in = &m->in[m->nint++];
		memset(in, 0, sizeof(*in));
		in->seq = seq;
		in->kind = (int)f.num;
		FOR_FIELDS(g, f.p, f.n) {
			if (g.num == 1)
				in->iid = g.v;
			else if (g.num == 2)
				copy_str(in->name, sizeof(in->name), &g);
		}
		assert_true(in->iid != 0);
	}
}

static inline void read_ann(struct model *m, uint32_t seq, struct ev *e, const struct field *af)
{
	struct ann *a = &e->ann[e->nann++];
	struct field f, g;

	assert_true(e->nann < 32);
	memset(a, 0, sizeof(*a));
	FOR_FIELDS(f, af->p, af->n) {
		if (f.num == 1) {
			set_str(a->name, sizeof(a->name), lookup(m, seq, K_ANNOT, f.v));
		} else if (f.num == 12) {
			a->field = 12;
			FOR_FIELDS(g, f.p, f.n)
				if (g.num == 3)
					a->arr[a->narr++] = g.v;
		} else {
			a->field = (int)f.num;
			a->v = f.v;
			if (f.num == 17)
				set_str(a->str, sizeof(a->str), lookup(m, seq, K_STR, f.v));
		}
	}
}

static inline void read_track(struct model *m, const struct field *tf)
{
	struct trk *t = &m->trk[m->ntrk];
	struct field f, g;

	memset(t, 0, sizeof(*t));
	FOR_FIELDS(f, tf->p, tf->n) {
		if (f.num == 1)
			t->uuid = f.v;
		else if (f.num == 5)
			t->parent = f.v;
		else if (f.num == 2)
			copy_str(t->name, sizeof(t->name), &f);	/* a plain track's name */
		else if (f.num == 8) {
			t->counter = true;
			FOR_FIELDS(g, f.p, f.n)
				if (g.num == 3)
					t->unit = (int)g.v;
		}
		else if (f.num == 3 || f.num == 4) {
			t->kind = f.num == 3 ? 'p' : 't';
			FOR_FIELDS(g, f.p, f.n) {
				if (g.num == 1)
					t->pid = (uint32_t)g.v;
				else if (g.num == 2 && f.num == 4)
					t->tid = (uint32_t)g.v;
				else if ((g.num == 6 && f.num == 3) || (g.num == 5 && f.num == 4))
					copy_str(t->name, sizeof(t->name), &g);
				else if (g.num == 2 && f.num == 3) {
					size_t l = strlen(t->cmdline);
					char part[128];

					copy_str(part, sizeof(part), &g);
					snprintf(t->cmdline + l, sizeof(t->cmdline) - l, "%s%s",
						 t->ncmdline++ ? " " : "", part);
				}
			}
		}
	}
	assert_true(t->uuid != 0);
	if (t->parent) {
		bool found = false;

		for (int i = 0; i < m->ntrk; i++)
			found |= m->trk[i].uuid == t->parent;
		assert_true(found);
	}
	/* described again (a thread's rename): replace, and count */
	t->ndesc = 1;
	for (int i = 0; i < m->ntrk; i++)
		if (m->trk[i].uuid == t->uuid) {
			t->ndesc += m->trk[i].ndesc;
			m->trk[i] = *t;
			return;
		}
	m->ntrk++;
	assert_true(m->ntrk < 64);
}

static inline void read_event(struct model *m, uint32_t seq, uint64_t ts, const struct field *tf)
{
	struct ev *e;
	struct field f;
	bool known = false;

	if (m->nev == m->capev) {
		m->capev = m->capev ? m->capev * 2 : 64;
		m->ev = realloc(m->ev, m->capev * sizeof(*m->ev));
		assert_non_null(m->ev);
	}
	e = &m->ev[m->nev++];
	memset(e, 0, sizeof(*e));
	e->pkt = m->npkt;
	e->seq = seq;
	e->ts = ts;
	FOR_FIELDS(f, tf->p, tf->n) {
		if (f.num == 9)
			e->type = (int)f.v;
		else if (f.num == 11)
			e->track = f.v;
		else if (f.num == 10)
			set_str(e->name, sizeof(e->name), lookup(m, seq, K_EVENT, f.v));
		else if (f.num == 4)
			read_ann(m, seq, e, &f);
		else if (f.num == 22) {
			copy_str(e->cat, sizeof(e->cat), &f);
			e->ncat++;
		}
		else if (f.num == 47) {
			assert_true(e->nflow < EV_FLOWS);
			e->flow = e->flows[e->nflow++] = f.v;
		}
		else if (f.num == 44) {
			assert_int_equal(f.wire, 1);
			memcpy(&e->value, &f.v, sizeof(e->value));
			e->is_double = true;
			e->nvalue++;
		}
		else if (f.num == 30) {
			e->ivalue = (int64_t)f.v;
			e->nvalue++;
		}
	}
	for (int i = 0; i < m->ntrk; i++) {
		if (m->trk[i].uuid != e->track)
			continue;
		known = true;
		/* a counter track takes counter events, one value each, and
		 * nothing else does */
		assert_int_equal(m->trk[i].counter, e->type == 4);
		assert_int_equal(e->nvalue, e->type == 4);
	}
	assert_true(known);
}

static inline void read_packet(struct model *m, const struct field *pf)
{
	struct field f, g;
	uint64_t ts = 0, flags = 0;
	bool has_ts = false;
	uint32_t seq = 0;
	int si;

	FOR_FIELDS(f, pf->p, pf->n) {
		if (f.num == 8) {
			ts = f.v;
			has_ts = true;
		} else if (f.num == 10) {
			seq = (uint32_t)f.v;
		} else if (f.num == 13) {
			flags = f.v;
		}
	}
	assert_true(seq != 0);
	si = seq_index(m, seq);
	if (si < 0) {
		/* a sequence starts by clearing its state, with the defaults */
		assert_true(flags & 1);
		si = m->nseq++;
		m->seqs[si] = seq;
		FOR_FIELDS(f, pf->p, pf->n)
			if (f.num == 59)
				FOR_FIELDS(g, f.p, f.n)
					m->defaults_ok += g.num == 58 && g.v == 3;
	} else {
		assert_int_equal(flags, 2);
	}
	/* a packet that interns names or has an event (which uses them)
	 * says it needs the sequence's state, its first one included */
	FOR_FIELDS(f, pf->p, pf->n)
		if (f.num == 12 || f.num == 11)
			assert_true(flags & 2);
	if (has_ts) {
		assert_true(ts >= m->last_ts[si]);
		m->last_ts[si] = ts;
	}
	/* interned data first: the packet's own event may use it */
	FOR_FIELDS(f, pf->p, pf->n)
		if (f.num == 12)
			read_interned(m, seq, &f);
	FOR_FIELDS(f, pf->p, pf->n) {
		if (f.num == 60) {
			read_track(m, &f);
		} else if (f.num == 11) {
			assert_true(has_ts);
			read_event(m, seq, ts, &f);
		} else if (f.num == 6) {
			FOR_FIELDS(g, f.p, f.n) {
				struct field h;
				uint64_t id = 0, cts = 0;

				if (g.num == 2)
					m->primary = (int)g.v;
				if (g.num != 1)
					continue;
				FOR_FIELDS(h, g.p, g.n) {
					if (h.num == 1)
						id = h.v;
					else if (h.num == 2)
						cts = h.v;
				}
				assert_true(id < 8);
				m->clk[id] = cts;
			}
		}
	}
}

static inline int ev_time_cmp(const void *a, const void *b)
{
	const struct ev *x = *(struct ev *const *)a, *y = *(struct ev *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->pkt - y->pkt;
}

/* The events of a track in time order (ties in file order, as
 * trace_processor sorts); *n gets how many.  Checks that ends close open
 * slices and none is left open. */
static inline struct ev **track_events(struct model *m, uint64_t track, int *n)
{
	struct ev **v = calloc(m->nev + 1, sizeof(*v));
	int k = 0, depth = 0;

	for (int i = 0; i < m->nev; i++)
		if (m->ev[i].track == track)
			v[k++] = &m->ev[i];
	qsort(v, k, sizeof(*v), ev_time_cmp);
	for (int i = 0; i < k; i++) {
		if (v[i]->type == 1)
			depth++;
		else if (v[i]->type == 2)
			assert_true(depth-- > 0);
	}
	assert_int_equal(depth, 0);
	*n = k;
	return v;
}

static inline void model_read(struct model *m, const uint8_t *buf, size_t len)
{
	struct field f;

	memset(m, 0, sizeof(*m));
	FOR_FIELDS(f, buf, len) {
		assert_int_equal(f.num, 1);
		assert_int_equal(f.wire, 2);
		read_packet(m, &f);
		m->npkt++;
	}
	/* every track's slices balance */
	for (int i = 0; i < m->ntrk; i++) {
		int n;

		free(track_events(m, m->trk[i].uuid, &n));
	}
}

static inline void model_free(struct model *m)
{
	free(m->ev);
	free(m->in);
}

static inline const struct trk *find_track(const struct model *m, char kind, uint32_t tid)
{
	for (int i = 0; i < m->ntrk; i++)
		if (m->trk[i].kind == kind && (kind == 'p' ? m->trk[i].pid : m->trk[i].tid) == tid)
			return &m->trk[i];
	fail_msg("no %s track for %u", kind == 'p' ? "process" : "thread", tid);
	return NULL;
}

/* A track that is neither a process' nor a thread's, by name. */
static inline const struct trk *find_named_track(const struct model *m, const char *name)
{
	for (int i = 0; i < m->ntrk; i++)
		if (!m->trk[i].kind && !strcmp(m->trk[i].name, name))
			return &m->trk[i];
	fail_msg("no track named %s", name);
	return NULL;
}

/* Events carrying flow id (a flow id twice on one event counts twice). */
static inline int flow_uses(const struct model *m, uint64_t id)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		for (int k = 0; k < m->ev[i].nflow; k++)
			n += m->ev[i].flows[k] == id;
	return n;
}

static inline const struct ann *find_ann(const struct ev *e, const char *name)
{
	for (int i = 0; i < e->nann; i++)
		if (!strcmp(e->ann[i].name, name))
			return &e->ann[i];
	return NULL;
}

static inline int count_type(const struct model *m, int type)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		n += m->ev[i].type == type;
	return n;
}

#endif
