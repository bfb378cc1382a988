/* SPDX-License-Identifier: MIT */
/*
 * Internal to the Perfetto trace writer (pftrace.h): the state its files
 * share and the packet primitives.  pftrace.c is the writer itself (its
 * output, the string table, packets and their interned data, the clock
 * snapshot); pftrace_track.c the tracks (descriptors, sequences, counter
 * tracks, a trace in parts, machines); pftrace_event.c the track events
 * (their names, categories, flows, call stacks and debug annotations).
 */
#ifndef GTRACE_PFTRACE_INT_H
#define GTRACE_PFTRACE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "export/perfetto/protobuf.h"
#include "export/perfetto/pftrace.h"
#include "lib/u64map.h"

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

/* Keeps the writer's first error and its reason. */
void pfw__fail(struct pftrace *w, int err, const char *what);
/* Writes what is buffered to the file. Returns the first error. */
int pfw__out_write(struct pftrace *w);
/* The iid of string id (of kind) on the open packet's sequence, queued for
 * the packet's interned data when the sequence has not seen it. */
uint64_t pfw__intern(struct pftrace *w, int kind, uint32_t id);
/* A sequence first used in this part starts again (see pftrace.c). */
void pfw__seq_fresh(struct pftrace *w, struct pf_seq *s);
/* Opens a TracePacket on s (ts may be NULL); pfw__pkt_end closes it with
 * the interned entries it introduced. */
void pfw__pkt_begin(struct pftrace *w, struct pf_seq *s, const uint64_t *ts);
int pfw__pkt_end(struct pftrace *w);
/* A new sequence of the writer's ids. */
void pfw__seq_init(struct pftrace *w, struct pf_seq *s);
/* One ClockSnapshot on a sequence of its own, of machine (0: the trace's). */
void pfw__snapshot(struct pftrace *w, uint32_t machine, uint64_t mono, int64_t realtime_offset);

#endif
