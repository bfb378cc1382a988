// SPDX-License-Identifier: MIT
/*
 * The Perfetto trace writer's tracks (pftrace.h, pftrace_int.h): their
 * uuids, sequences and descriptors (processes, threads, named and counter
 * tracks, and counter values), the machine a track is on, and a trace
 * written in parts, each opening with the descriptors kept of the tracks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export/perfetto/pftrace_int.h"
#include "lib/vec.h"

void pftrace__track_machine(struct pftrace *w, struct pf_track *t, uint32_t machine)
{
	size_t i;

	t->seq.machine = machine;
	if (!machine)
		return;
	if (u64map__set(&w->machine_of, t->uuid, machine)) {
		pfw__fail(w, -ENOMEM, "keep a track's machine");
		return;
	}
	for (i = 0; i < w->nmachines && w->machines[i] != machine; i++)
		;
	if (i < w->nmachines)
		return;
	if (vec__reserve(&w->machines, &w->mcap, w->nmachines, 1, 8)) {
		pfw__fail(w, -ENOMEM, "keep a machine");
		return;
	}
	w->machines[w->nmachines++] = machine;
	if (w->has_snapshot)
		pfw__snapshot(w, machine, w->snap_mono, w->snap_offset);
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
		pfw__snapshot(w, 0, w->snap_mono, w->snap_offset);
		for (size_t i = 0; i < w->nmachines; i++)
			pfw__snapshot(w, w->machines[i], w->snap_mono, w->snap_offset);
	}
	/* the tracks, on a sequence of their own: parents were described
	 * before their children, and stay so */
	pfw__seq_init(w, &s);
	for (size_t i = 0; i < w->nkd && !w->err; i++) {
		s.machine = w->kd[i].machine;
		pfw__pkt_begin(w, &s, NULL);
		if (pb_buf__room(&w->out, w->kd[i].len)) {
			memcpy(w->out.b + w->out.len, w->descs + w->kd[i].off, w->kd[i].len);
			w->out.len += w->kd[i].len;
		}
		pfw__pkt_end(w);
	}
}

/* ---- tracks ------------------------------------------------------------- */

void pftrace__track_init(struct pftrace *w, struct pf_track *t)
{
	t->uuid = w->next_uuid++;
	pfw__seq_init(w, &t->seq);
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
	pfw__seq_fresh(w, &t->seq);
	if (t->late)
		pfw__seq_fresh(w, t->late);
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
			pfw__fail(w, -ENOMEM, "allocate a sequence");
			return &t->seq;
		}
	}
	pfw__seq_init(w, t->late);
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
	pfw__pkt_begin(w, &t->seq, NULL);
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
			pfw__fail(w, -ENOMEM, "keep a track descriptor");
		} else {
			struct kept_desc *k = i ? &w->kd[*i - 1] : &w->kd[w->nkd++];

			memcpy(w->descs + w->dlen, w->out.b + w->desc_at, n);
			*k = (struct kept_desc){ .uuid = t->uuid, .off = w->dlen, .len = n, .machine = t->seq.machine };
			w->dlen += n;
		}
	}
	pfw__pkt_end(w);
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

	pfw__pkt_begin(w, s, &ts);
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

