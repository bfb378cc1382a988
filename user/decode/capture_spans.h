/* SPDX-License-Identifier: MIT */
/*
 * The capture spans of a trace (docs/FORMAT.md, "Capture ranges and light
 * mode"): its capture ranges (GT_REC_RANGE, one process each) and light-mode
 * windows (GT_REC_CAPTURE, the recorder's), each open paired with its
 * close, and when hot calls were recorded.  dump --summary, the exports and
 * stats take them from here, so that all say the same.
 *
 * Numbers.  A span keeps the number its records carry (struct gt_capture's
 * index): ranges count from 1 in the order they opened in the recording,
 * across processes, refused ones included; windows count from 1 in a
 * sequence of their own, so "range 2" and "window 2" are two spans.  The
 * list is in order of start (at one ts ranges first, then by number).
 *
 * Pairing.  A range close pairs with the range open in its process (BPF
 * keeps one per process, and ignores and counts a nested open); a window
 * close with the open window.  What does not pair is counted, never hidden
 * (enum capture_anomaly):
 *   - a close with nothing open: counted, no span;
 *   - an open while one is open (the close was lost): the open one ends
 *     there, CAPSPAN_CLOSE_LOST;
 *   - a close whose index is not its open's: it closes that open all the same;
 *   - an open with the number of an earlier span of its kind: both kept
 *     (capture_spans__find gives the first);
 *   - a record too short, of an unknown kind, of a kind the other record
 *     type carries, or of index 0: skipped.
 * A span still open when the trace ends ends there (CAPSPAN_OPEN_AT_END).
 *
 * Hot calls (gt_api__hot).  In full capture every probe is live throughout.
 * In light mode (the header's capture=light, or a trace with any window or
 * hot-probe record) hot calls were recorded only inside windows and from a
 * GT_CAP_HOT_LIVE to the next GT_CAP_HOT_OFF: the hot intervals.  A range's
 * live_ts is the first moment inside it at which they were: later than its
 * start when it opened before the hot probes were live, which readers show.
 */
#ifndef GTRACE_DECODE_CAPTURE_SPANS_H
#define GTRACE_DECODE_CAPTURE_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"
#include "format/capture.h"
#include "format/trace_file.h"

enum capspan_kind {
	CAPSPAN_RANGE = 1,	/* a capture range of one process */
	CAPSPAN_WINDOW = 2,	/* a light-mode window: every process, every probe */
};

/* How a span ended. */
enum capspan_end {
	CAPSPAN_CLOSED = 1,	/* by its close record (whose flags may say exit or cut) */
	CAPSPAN_OPEN_AT_END,	/* no close came: end_ts is the end of the trace */
	CAPSPAN_CLOSE_LOST,	/* its process (the recorder, for a window) opened another
				 * first: it ends at that open */
	CAPSPAN_REFUSED,	/* opened beyond --capture-range-end's count: nothing of it
				 * was recorded; end_ts = start_ts */
};

struct capspan {
	uint32_t number;	/* its records' index: range or window number */
	uint8_t kind;		/* enum capspan_kind */
	uint8_t end;		/* enum capspan_end */
	uint16_t source;	/* enum gt_capture_source of its open record */
	uint32_t pid, tid;	/* ranges: the process, and the thread that opened it; windows 0 */
	uint32_t flags;		/* GT_CAP_F_* of its open and close records */
	uint64_t start_ts;	/* its open record's ts */
	uint64_t end_ts;	/* its close record's ts, or as end says */
	uint64_t live_ts;	/* its hot calls were recorded from here: start_ts when from the
				 * start (full capture, windows, a range opened while the hot
				 * probes were live); end_ts when never while it was open */
	uint64_t attach_ns;	/* windows: the hot probes' attach time before start_ts */
	uint64_t detach_ns;	/* windows: their detach time after end_ts */
};

/* A GT_CAP_HOT_LIVE or GT_CAP_HOT_OFF record. */
struct capture_hot {
	uint64_t ts;		/* when the hot probes went live or off */
	uint64_t latency_ns;	/* attach (live, before ts) or detach (off, after ts) time */
	uint32_t range;		/* the index of the range that made the change */
	bool live;		/* HOT_LIVE */
};

enum capture_anomaly {
	CAPTURE_AN_CLOSE_WITHOUT_OPEN,	/* a close with nothing open */
	CAPTURE_AN_OPEN_IN_OPEN,	/* an open while one was open: its close was lost */
	CAPTURE_AN_INDEX_MISMATCH,	/* a close whose index is not its open's */
	CAPTURE_AN_DUPLICATE_NUMBER,	/* an open with an earlier span's number */
	CAPTURE_AN_HOT_UNPAIRED,	/* HOT_LIVE while live, HOT_OFF while off */
	CAPTURE_AN_MALFORMED,		/* too short, unknown kind, wrong record type, index 0 */
	CAPTURE_AN__COUNT,
};

/* What the spans add up to, over the whole trace. */
struct capture_totals {
	uint32_t ranges;	/* ranges, refused ones included */
	uint32_t refused;	/* of which refused */
	uint32_t late;		/* ranges that opened before the hot probes were live */
	uint32_t windows;	/* windows */
	uint32_t hot_intervals;	/* hot intervals (light mode), overlapping ones as one */
	uint64_t range_ns;	/* time inside at least one range */
	uint64_t window_ns;	/* time inside windows */
	uint64_t hot_ns;	/* time in which hot calls were recorded */
	uint64_t trace_ns;	/* the recording's start (header) to the trace's end */
};

/* A shed or give-back of the daemon's overhead budget (GT_REC_OVERHEAD of
 * reason shed or restore): from ts on api's calls were recorded only inside
 * light windows (shed), or always-on again. */
struct capture_shed {
	uint64_t ts;		/* the record's ts: the swap's flip */
	uint16_t api;		/* enum gt_api */
	bool shed;		/* shed, else given back */
};

struct capture_spans;

/* A list for the trace of info (its start, its capture options); NULL when
 * out of memory. */
struct capture_spans *capture_spans__new(const struct gt_file_info *info);
void capture_spans__free(struct capture_spans *c);
/* Takes a GT_REC_RANGE or GT_REC_CAPTURE record, and the overhead budget's
 * sheds and give-backs (GT_REC_OVERHEAD); ignores others.  Returns 0 or
 * -ENOMEM. */
int capture_spans__feed(struct capture_spans *c, const struct gt_hdr *rec);
/* Ends what is still open at end_ts (the trace's end: the trailer's end_ts,
 * else its latest record's ts; later capture records move it), puts the
 * spans in order of start and works out when their hot calls were
 * recorded.  Once, after the last feed; nothing below holds before. */
void capture_spans__finish(struct capture_spans *c, uint64_t end_ts);
/* Feeds every record of r (a reader just opened) and finishes: a pass of
 * its own over the trace.  Returns 0, or a negative errno (read error,
 * ENOMEM); a truncated trace is no error. */
int capture_spans__read(struct capture_spans *c, struct trace_reader *r);

size_t capture_spans__count(const struct capture_spans *c);
const struct capspan *capture_spans__at(const struct capture_spans *c, size_t i);
/* The first span of that kind and number; NULL when there is none. */
const struct capspan *capture_spans__find(const struct capture_spans *c, enum capspan_kind kind,
					  uint32_t number);
/* The hot-probe records, in the order read. */
size_t capture_spans__hot_count(const struct capture_spans *c);
const struct capture_hot *capture_spans__hot_at(const struct capture_spans *c, size_t i);

const struct gt_capture_mode *capture_spans__mode(const struct capture_spans *c);
/* True for light mode (see the top). */
bool capture_spans__light(const struct capture_spans *c);
/* True when the trace says anything about capture control: a capture mode
 * or range in its header, a span, a hot-probe record or an anomaly. */
bool capture_spans__any(const struct capture_spans *c);
uint64_t capture_spans__start_ts(const struct capture_spans *c);	/* the header's start */
uint64_t capture_spans__end_ts(const struct capture_spans *c);		/* as finished */
/* ns of [a, b] in which hot calls were recorded: b - a in full capture. */
uint64_t capture_spans__hot_ns(const struct capture_spans *c, uint64_t a, uint64_t b);
void capture_spans__totals(const struct capture_spans *c, struct capture_totals *t);
/* True when the figures of hot calls over scope (a span; NULL: the whole
 * trace) are sampled: light mode, and hot calls were not recorded all
 * through it.  note then says how much was, in one line without a newline:
 * "sampled: launches and other hot calls only inside 12 windows, 2.4 s of
 * 60.1 s (4.0 %); ..." (cut to len > 0 bytes); "" when not sampled. */
bool capture_spans__sampled(const struct capture_spans *c, const struct capspan *scope,
			    char *note, size_t len);
/* The sheds and give-backs, in ts order once finished. */
size_t capture_spans__shed_count(const struct capture_spans *c);
const struct capture_shed *capture_spans__shed_at(const struct capture_spans *c, size_t i);
/* True when api was shed at some time in [a, b]: its figures over it are
 * sampled, as hot calls' are in light mode. */
bool capture_spans__shed_in(const struct capture_spans *c, unsigned api, uint64_t a, uint64_t b);
/* When an api was shed in scope (a span; NULL: the whole trace): note says
 * which and when, in one line ("shed by the overhead budget (...):
 * cuStreamSynchronize shed at +12.3 s."); false and "" when none was. */
bool capture_spans__shed_note(const struct capture_spans *c, const struct capspan *scope, char *note,
			      size_t len);
/* When the recorder stopped recording kernel lookups (GT_CAP_LOOKUPS_OFF)
 * before the end of scope (a span; NULL: the whole trace): note says from
 * when, in one line; false and "" when it did not. */
bool capture_spans__lookups_note(const struct capture_spans *c, const struct capspan *scope,
				 char *note, size_t len);
/* A span's length in ns (0 for a refused one). */
static inline uint64_t capspan__ns(const struct capspan *s)
{
	return s->end_ts > s->start_ts ? s->end_ts - s->start_ts : 0;
}

uint64_t capture_spans__anomaly(const struct capture_spans *c, enum capture_anomaly a);
uint64_t capture_spans__anomalies(const struct capture_spans *c);	/* all of them */
/* "close_without_open", ...: the anomaly's name in JSON. */
const char *capture_anomaly__key(enum capture_anomaly a);
/* The anomalies in words, "1 close without an open, 2 malformed capture
 * records"; "" when none.  Cut to fit len (> 0) bytes; returns buf. */
char *capture_spans__anomalies_text(const struct capture_spans *c, char *buf, size_t len);

/* "cudaProfilerApi", "nvtx", "window" or "unknown": a span's source. */
const char *capspan__source_name(const struct capspan *s);
/* "closed", "exit", "cut", "open_at_end", "close_lost", "refused": how a
 * span ended, its close's flags included. */
const char *capspan__state_name(const struct capspan *s);

#endif
