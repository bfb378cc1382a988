/* SPDX-License-Identifier: MIT */
/*
 * A writer of native Perfetto traces (.pftrace): tracks, packet sequences,
 * interning, track events with debug annotations and flows, counter tracks
 * and their values, a clock snapshot; packets encoded with protobuf.h and
 * written in large pieces.
 *
 * It knows Perfetto, not CUDA: user/export/perfetto.c turns decoded calls
 * into its events, and the GPU records of a merged trace (CUPTI) into
 * tracks of their own (pftrace__track: one per stream) and flows between
 * the two through the same functions.
 *
 * Rules it keeps for its users: every sequence's first packet clears the
 * incremental state (and, when it is an event, says it needs it, as every
 * later packet does) and sets TracePacketDefaults.timestamp_clock_id =
 * MONOTONIC; names are interned per sequence (ids from one string table of
 * the writer); a sequence's timestamps must not decrease, which
 * pftrace__track_seq() guarantees by handing out a track's "late" sequence
 * for an event older than what the track's own sequence has.
 */
#ifndef GTRACE_PFTRACE_H
#define GTRACE_PFTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/u64map.h"

/* TrackEvent.Type */
enum pf_event_type { PF_SLICE_BEGIN = 1, PF_SLICE_END = 2, PF_INSTANT = 3, PF_COUNTER = 4 };

/* CounterDescriptor.Unit: what a counter track's values are.  A ratio (a
 * percentage, a utilization) has no unit of its own: leave it unspecified
 * and say it in the track's name, "overhead estimate (%)". */
enum pf_counter_unit {
	PF_UNIT_UNSPECIFIED = 0,
	PF_UNIT_TIME_NS = 1,
	PF_UNIT_COUNT = 2,
	PF_UNIT_SIZE_BYTES = 3,
};

/* String ids below this are marked in a bitmap per sequence: the annotation
 * names, api names and the first kernels, looked up on every event. */
#define PF_LOW_IDS 1024

/* A packet sequence (TracePacket.trusted_packet_sequence_id): timestamps
 * and interned ids are per sequence. */
struct pf_seq {
	uint32_t id;		/* trusted_packet_sequence_id */
	uint32_t part;		/* the output part its state below is of (pftrace__next_part) */
	uint32_t machine;	/* TracePacket.machine_id of its packets, 0: none (the host) */
	bool started;		/* its first packet (state cleared, defaults) is written */
	uint64_t last_ts;	/* latest timestamp written on it */
	uint64_t low[3][PF_LOW_IDS / 64];	/* per kind, ids below PF_LOW_IDS interned here */
	struct u64map sent;	/* (string id << 2 | kind) -> 1: higher ids interned here */
};

/* A track (TrackDescriptor) and the sequences that write its events. */
struct pf_track {
	uint64_t uuid;		/* TrackDescriptor.uuid, unique in the trace */
	struct pf_seq seq;	/* its events in time order */
	struct pf_seq *late;	/* events older than seq.last_ts; NULL until one comes */
};

struct pftrace;

/* A writer onto f (nothing is written until the first packet).  Returns 0
 * or -ENOMEM. */
int pftrace__new(FILE *f, struct pftrace **out);
/* Draws the track uuids, sequence ids and flow ids of this file from seed
 * (e.g. a hash of the trace's header), so that exports of different traces
 * loaded together do not share ids and one trace always gets the same ones.
 * Before the first track or packet; without it they count from 1. */
void pftrace__set_ids(struct pftrace *w, uint64_t seed);
/* Writes what is buffered and fflushes f.  Returns 0 or the first error. */
int pftrace__flush(struct pftrace *w);

/*
 * A timeline in parts (export --split): each part a trace of its own.
 * pftrace__keep_parts, before the first packet, makes the writer keep what a
 * later part must repeat: the clock snapshot and every track's latest
 * descriptor.  pftrace__part_bytes: the bytes of the current part so far
 * (written and buffered).  pftrace__end_part: the current part flushed to
 * its file (returns 0 or the first error; the caller then closes it).
 * pftrace__next_part: later packets go to f, which starts with the clock snapshot and the descriptors of
 * every track described so far (once each, parents first), and every
 * sequence clears its incremental state again at its next packet, so that
 * names and call stacks are interned anew.  Slices must not be open across
 * the change (the caller ends them first); a flow whose ends fall in two
 * parts is drawn in neither.
 */
void pftrace__keep_parts(struct pftrace *w);
uint64_t pftrace__part_bytes(const struct pftrace *w);
int pftrace__end_part(struct pftrace *w);
void pftrace__next_part(struct pftrace *w, FILE *f);
/* The first error (negative errno), 0 if none; *why then a one-line reason. */
int pftrace__err(const struct pftrace *w, const char **why);
void pftrace__free(struct pftrace *w);

/* The id of the string s[0..n) in the writer's table, added when new; 0
 * (and the writer's error set) when out of memory.  Ids are what events
 * and annotations take for names and string values. */
uint32_t pftrace__string(struct pftrace *w, const char *s, size_t n);
uint32_t pftrace__cstring(struct pftrace *w, const char *s);

/* One ClockSnapshot: CLOCK_MONOTONIC at mono (the primary trace clock, the
 * clock of every timestamp) and CLOCK_REALTIME at mono + realtime_offset. */
void pftrace__clock_snapshot(struct pftrace *w, uint64_t mono, int64_t realtime_offset);

/* A new track with a new uuid and sequence; describe it before its events. */
void pftrace__track_init(struct pftrace *w, struct pf_track *t);
void pftrace__track_free(struct pf_track *t);
/* The sequence for an event of t at ts: t's own while ts keeps its order. */
struct pf_seq *pftrace__track_seq(struct pftrace *w, struct pf_track *t, uint64_t ts);
/* TrackDescriptors (a thread's again after a rename: same uuid, new name).
 * name may be NULL.  A process is described once (trace_processor keeps
 * the first name it is given): cmdline, NULL when unknown, is written as
 * one string, ProcessDescriptor.cmdline's only element. */
void pftrace__process_track(struct pftrace *w, struct pf_track *t, uint32_t pid, const char *name,
			    const char *cmdline);
void pftrace__thread_track(struct pftrace *w, struct pf_track *t, const struct pf_track *process,
			   uint32_t pid, uint32_t tid, const char *name);
/* Several machines in one trace (a job trace of merge --hosts): the
 * packets of t, and of every track later described under it, carry
 * TracePacket.machine_id machine (0: the trace's own machine, no field);
 * the first track of a machine brings a clock snapshot of that machine
 * (the same clocks: the job's times are on one clock already).  Between
 * pftrace__track_init and t's descriptor. */
void pftrace__track_machine(struct pftrace *w, struct pf_track *t, uint32_t machine);
/* A named track under parent (0: a root track), e.g. one per GPU stream. */
void pftrace__track(struct pftrace *w, struct pf_track *t, uint64_t parent, const char *name);

/* A counter track: a named track under parent (0: a root track) whose
 * TrackDescriptor has a CounterDescriptor (with unit when not unspecified),
 * so that it takes counter values only, no slices or instants: the UI draws
 * it as a graph of its values.  Made with pftrace__track_init, freed with
 * pftrace__track_free, as any track. */
void pftrace__counter_track(struct pftrace *w, struct pf_track *t, uint64_t parent, const char *name,
			    enum pf_counter_unit unit);
/* One value of counter track t from ts on (a TYPE_COUNTER TrackEvent with
 * double_counter_value; the _int form with counter_value), on the sequence
 * pftrace__track_seq gives for ts.  No event may be open.  Returns 0 or the
 * writer's first error. */
int pftrace__counter(struct pftrace *w, struct pf_track *t, uint64_t ts, double v);
int pftrace__counter_int(struct pftrace *w, struct pf_track *t, uint64_t ts, int64_t v);

/* One event: open, add annotations / flows, close.  One at a time.  name
 * is a string id (0 for slice ends); s comes from pftrace__track_seq. */
void pftrace__event_open(struct pftrace *w, const struct pf_track *t, struct pf_seq *s,
			 enum pf_event_type type, uint64_t ts, uint32_t name);
/* The category of the open event (TrackEvent.categories), cat[0..n): the
 * "cat" the Chrome JSON export gives the same event. */
void pftrace__event_category(struct pftrace *w, const char *cat, size_t n);
/* A flow id of the open event (shifted by the file's salt, pftrace__set_ids). */
void pftrace__event_flow(struct pftrace *w, uint64_t flow_id);
/* Debug annotations of the open event; name and str are string ids. */
void pftrace__ann_uint(struct pftrace *w, uint32_t name, uint64_t v);
void pftrace__ann_int(struct pftrace *w, uint32_t name, int64_t v);
void pftrace__ann_bool(struct pftrace *w, uint32_t name, bool v);
void pftrace__ann_double(struct pftrace *w, uint32_t name, double v);
void pftrace__ann_ptr(struct pftrace *w, uint32_t name, uint64_t v);
void pftrace__ann_str(struct pftrace *w, uint32_t name, uint32_t str);
void pftrace__ann_uints(struct pftrace *w, uint32_t name, const uint32_t *v, int n);
/* A frame of a call stack; a NULL field is left out, line 0 too. */
struct pftrace_frame {
	const char *function, *source;
	uint32_t line;
	bool python;		/* an interpreted frame (Frame.kind, interned stacks) */
};
/* Interned call stacks (TrackEvent.callstack_iid, InternedData.callstacks):
 * a stack is given once, by the caller's key (a trace's stack id), frames
 * outermost first; its iid (from 1) is then put on any number of events,
 * and a sequence that has not seen it gets the callstack, its frames and
 * their function names and source files in the event's packet.
 * pftrace__callstack_iid: the iid of key, 0 before it was given.
 * pftrace__callstack: gives it (when not yet given); returns its iid, 0
 * for no frames or out of memory (the writer's error). */
uint64_t pftrace__callstack_iid(const struct pftrace *w, uint64_t key);
uint64_t pftrace__callstack(struct pftrace *w, uint64_t key, const struct pftrace_frame *f, size_t n);
/* The open event's call stack by iid (0: none). */
void pftrace__event_callstack_iid(struct pftrace *w, uint64_t iid);
/* Returns 0 or the writer's first error. */
int pftrace__event_close(struct pftrace *w);

/* Counters for tests and diagnostics. */
struct pftrace_stats {
	uint64_t packets;	/* TracePackets written */
	uint64_t tracks;	/* tracks created */
	uint64_t sequences;	/* sequences created, late ones included */
	uint64_t late;		/* events that went on a late sequence */
};
const struct pftrace_stats *pftrace__stats(const struct pftrace *w);

#endif
