#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Structural checks of a native Perfetto trace (.pftrace), python3 stdlib only.

Usage: tools/perfetto_lint.py [--json] [--part] FILE

Reads the protobuf wire format itself (no protobuf package, no .proto files:
the field numbers it needs are below, from Perfetto's protos/perfetto/trace)
and checks what trace_processor relies on when it imports track events:

  - every sequence (trusted_packet_sequence_id) starts with a packet that has
    SEQ_INCREMENTAL_STATE_CLEARED, and a packet with interned data or a
    track event (which uses it) has SEQ_NEEDS_INCREMENTAL_STATE, the first
    one of its sequence included;
  - timestamps never decrease along a sequence;
  - interned ids (event names, categories, debug annotation names and string
    values) are defined on their sequence before, or in the packet of, their
    first use, and an id keeps its string;
  - every track_uuid an event or a descriptor refers to has a TrackDescriptor
    earlier in the file, and a uuid is not redescribed as another track;
  - a process track is described once (trace_processor takes a process'
    name from its first descriptor only, later ones would be lost);
  - per track, taking events in time order (ties in file order, as
    trace_processor sorts them), every SLICE_END closes an open SLICE_BEGIN
    and no slice is left open at the end;
  - machines (TracePacket.machine_id, a job trace's hosts): a track's events
    come from the machine of its descriptor, a track's machine is its
    parent's, and a machine has a clock snapshot of its own before its
    first track;
  - every flow id appears on at least two events (with --part, a part of a
    timeline that `export --split` wrote, one event is allowed: an arrow
    whose other end is in another part; counted as flows_cut);
  - an event's interned call stack (callstack_iid) is defined on its
    sequence before or in its packet, with every frame it lists, and each
    frame's function name and source file.

On success it prints the counts (packets, sequences, tracks, slices,
instants, ...), with --json as one JSON object that also lists the process,
thread and other tracks (GPU streams, NVTX: name and parent), how often each
slice / instant name occurs, and the most events one flow id is on
(flow_events_max: 2 for gtrace-bpf's launch -> GPU arrows), the events with
a call stack and their distinct stacks (callstack_events, callstacks), the
callstacks sent again on a sequence that had them (callstack_repeats), and
the frames those stacks hold as "function (file:line)" (stack_frames).  On the
first violation it prints "perfetto_lint: FILE: packet N (offset X): why" on
stderr and exits 1; an unreadable file exits 2.

As a library (tests):  sys.path.insert(0, "tools"); import perfetto_lint
    summary = perfetto_lint.lint_bytes(data)        # raises LintError
    for off, pkt in perfetto_lint.packets(data): ... # raw packet bytes
    perfetto_lint.fields(buf)                        # (field, wire, value)
"""

import json
import struct
import sys

# trace.proto / trace_packet.proto
TRACE_PACKET = 1
PKT_CLOCK_SNAPSHOT = 6
PKT_TIMESTAMP = 8
PKT_SEQ_ID = 10
PKT_TRACK_EVENT = 11
PKT_INTERNED = 12
PKT_SEQ_FLAGS = 13
PKT_INCREMENTAL_STATE_CLEARED = 41  # deprecated bool form of the flag
PKT_DEFAULTS = 59
PKT_CLOCK_ID = 58
PKT_TRACK_DESC = 60
PKT_MACHINE_ID = 98
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
# trace_packet_defaults.proto, track_event.proto TrackEventDefaults
DEF_CLOCK_ID = 58
DEF_TRACK_EVENT = 11
TED_TRACK_UUID = 11
# clock_snapshot.proto
CS_CLOCK = 1
CS_PRIMARY = 2
CLK_ID = 1
CLK_TS = 2
# track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto
TD_UUID = 1
TD_NAME = 2
TD_PROCESS = 3
TD_THREAD = 4
TD_PARENT = 5
PD_PID = 1
PD_CMDLINE = 2
PD_NAME = 6
THD_PID = 1
THD_TID = 2
THD_NAME = 5
# track_event.proto TrackEvent
TE_CATEGORY_IIDS = 3
TE_ANNOTATIONS = 4
TE_TYPE = 9
TE_NAME_IID = 10
TE_TRACK_UUID = 11
TE_NAME = 23
TE_FLOW_IDS_OLD = 36
TE_TERMINATING_FLOW_IDS_OLD = 42
TE_FLOW_IDS = 47
TE_TERMINATING_FLOW_IDS = 48
TE_CALLSTACK = 55
TE_CALLSTACK_IID = 56
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
# debug_annotation.proto DebugAnnotation
DA_NAME_IID = 1
DA_DICT = 11
DA_ARRAY = 12
DA_STRING_IID = 17
# interned_data.proto InternedData: field -> what it interns
ID_CATEGORIES = 1
ID_EVENT_NAMES = 2
ID_ANNOT_NAMES = 3
ID_ANNOT_STRINGS = 29
INTERNED_KINDS = {
    ID_CATEGORIES: "event category",
    ID_EVENT_NAMES: "event name",
    ID_ANNOT_NAMES: "debug annotation name",
    ID_ANNOT_STRINGS: "debug annotation string value",
}
IN_IID = 1
IN_NAME = 2  # EventCategory.name, EventName.name, DebugAnnotationName.name, InternedString.str
# interned call stacks: InternedData fields; profile_common.proto Frame, Callstack
ID_FUNCTION_NAMES = 5
ID_FRAMES = 6
ID_CALLSTACKS = 7
ID_SOURCE_PATHS = 18
INTERNED_KINDS[ID_FUNCTION_NAMES] = "function name"
INTERNED_KINDS[ID_SOURCE_PATHS] = "source path"
FR_IID, FR_FUNCTION, FR_SOURCE, FR_LINE = 1, 2, 5, 6
CSK_IID, CSK_FRAMES = 1, 2

BUILTIN_CLOCKS = {1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE",
                  5: "MONOTONIC_RAW", 6: "BOOTTIME"}


class LintError(Exception):
    """A violation (or unreadable wire data); str() is the one-line reason."""

    def __init__(self, msg, packet=None, offset=None):
        super().__init__(msg)
        self.msg, self.packet, self.offset = msg, packet, offset

    def __str__(self):
        if self.packet is None:
            return self.msg
        return "packet %d (offset %s): %s" % (
            self.packet, "?" if self.offset is None else self.offset, self.msg)


# --- wire format --------------------------------------------------------------

def varint(buf, pos, end):
    """The varint at buf[pos]: (value, position after it)."""
    v = shift = 0
    while True:
        if pos >= end:
            raise LintError("varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos
        shift += 7
        if shift >= 70:
            raise LintError("varint longer than 10 bytes")


def fields(buf, start=0, end=None):
    """Yields (field, wire type, value) of one message: value is an int for
    varint / fixed fields and a memoryview for length-delimited ones."""
    if end is None:
        end = len(buf)
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    pos = start
    while pos < end:
        # one-byte tags and values, most of them, read here: this loop is
        # where a large trace's lint spends its time
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if field == 0:
            raise LintError("field number 0")
        if wire == 0:
            if pos < end and buf[pos] < 0x80:
                v = buf[pos]
                pos += 1
            else:
                v, pos = varint(buf, pos, end)
        elif wire == 1:
            if pos + 8 > end:
                raise LintError("fixed64 field %d runs past its message" % field)
            v = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire == 2:
            n, pos = varint(buf, pos, end)
            if pos + n > end:
                raise LintError("field %d: %d bytes run past the end of its message" % (field, n))
            v = view[pos:pos + n]
            pos += n
        elif wire == 5:
            if pos + 4 > end:
                raise LintError("fixed32 field %d runs past its message" % field)
            v = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise LintError("field %d has wire type %d (groups are not used)" % (field, wire))
        yield field, wire, v


def packets(data):
    """Yields (offset, packet bytes) of every Trace.packet."""
    pos, end, idx = 0, len(data), 0
    while pos < end:
        at = pos
        try:
            tag, pos = varint(data, pos, end)
            if tag != (TRACE_PACKET << 3 | 2):
                raise LintError("top-level field %d (wire type %d) where Trace.packet (1) was "
                                "expected" % (tag >> 3, tag & 7))
            n, pos = varint(data, pos, end)
            if pos + n > end:
                raise LintError("the packet runs past the end of the file (%d bytes, %d left)"
                                % (n, end - pos))
        except LintError as e:
            e.packet, e.offset = idx, at
            raise
        yield at, memoryview(data)[pos:pos + n]
        pos += n
        idx += 1


def repeated_ints(field, wire, v, fixed64):
    """Values of a repeated integer field, packed or not."""
    if wire != 2:
        return [v]
    if fixed64:
        if len(v) % 8:
            raise LintError("packed fixed64 field %d of %d bytes" % (field, len(v)))
        return list(struct.unpack("<%dQ" % (len(v) // 8), v))
    out, pos = [], 0
    while pos < len(v):
        x, pos = varint(v, pos, len(v))
        out.append(x)
    return out


def text(v):
    return bytes(v).decode("utf-8", "replace")


# --- the checks ---------------------------------------------------------------

class Sequence:
    def __init__(self):
        self.packets = 0
        self.last_ts = None
        self.interned = {}          # interned_data field -> {iid: string}
        self.frames = {}            # frame iid -> "function (file:line)"
        self.callstacks = {}        # callstack iid -> tuple of frame iids
        self.default_track = None   # TrackEventDefaults.track_uuid


class Linter:
    def __init__(self, part=False):
        self.part = part
        self.seqs = {}
        self.tracks = {}        # uuid -> {"kind", "parent", "pid", "tid", "name"}
        self.track_events = {}  # uuid -> [(ts, packet index, type)]
        self.flows = {}         # flow id -> events carrying it
        self.counts = {"packets": 0, "sequences": 0, "tracks": 0, "process_tracks": 0,
                       "thread_tracks": 0, "other_tracks": 0, "track_events": 0, "slices": 0,
                       "slice_ends": 0, "instants": 0, "counters": 0, "flows": 0,
                       "interned": 0, "clock_snapshots": 0, "callstack_events": 0,
                       "callstack_repeats": 0, "flows_cut": 0}
        self.primary_clock = None
        self.names = {"slices": {}, "instants": {}}
        self.stacks_used = set()    # (sequence, callstack iid) of the events
        self.stack_frames = set()   # the frames of the stacks events used
        self.ts_min = self.ts_max = None
        self.idx = 0
        self.machine = 0
        self.snapshots = set()      # machines with a clock snapshot

    # one packet
    def packet(self, idx, pkt):
        self.idx = idx
        self.counts["packets"] += 1
        f = {}
        for field, wire, v in fields(pkt):
            f.setdefault(field, []).append((wire, v))
        one = lambda k: f[k][-1][1] if k in f else None  # noqa: E731
        self.machine = one(PKT_MACHINE_ID) or 0
        seq_id = one(PKT_SEQ_ID) or 0
        seq = self.seqs.get(seq_id)
        cleared = bool((one(PKT_SEQ_FLAGS) or 0) & SEQ_INCREMENTAL_STATE_CLEARED or
                       one(PKT_INCREMENTAL_STATE_CLEARED))
        if seq is None:
            if not cleared:
                raise LintError("the first packet of sequence %d lacks SEQ_INCREMENTAL_STATE_CLEARED"
                                % seq_id)
            seq = self.seqs[seq_id] = Sequence()
            self.counts["sequences"] += 1
        elif cleared:
            seq.interned = {}
            seq.frames = {}
            seq.callstacks = {}
            seq.default_track = None
        seq.packets += 1
        if ((PKT_INTERNED in f or PKT_TRACK_EVENT in f) and
                not (one(PKT_SEQ_FLAGS) or 0) & SEQ_NEEDS_INCREMENTAL_STATE):
            raise LintError("a packet with %s on sequence %d lacks SEQ_NEEDS_INCREMENTAL_STATE"
                            % ("interned data" if PKT_INTERNED in f else "a track event", seq_id))
        if PKT_DEFAULTS in f:
            for field, _, v in fields(one(PKT_DEFAULTS)):
                if field == DEF_TRACK_EVENT:
                    for ff, _, vv in fields(v):
                        if ff == TED_TRACK_UUID:
                            seq.default_track = vv

        ts = one(PKT_TIMESTAMP)
        if ts is not None:
            if seq.last_ts is not None and ts < seq.last_ts:
                raise LintError("timestamp %d is before %d, the previous one on sequence %d"
                                % (ts, seq.last_ts, seq_id))
            seq.last_ts = ts
            self.ts_min = ts if self.ts_min is None else min(self.ts_min, ts)
            self.ts_max = ts if self.ts_max is None else max(self.ts_max, ts)

        # interned data first: it may define what this packet's event uses
        for _, v in f.get(PKT_INTERNED, []):
            self.interned(seq, seq_id, v)
        for _, v in f.get(PKT_CLOCK_SNAPSHOT, []):
            self.clock_snapshot(v)
        for _, v in f.get(PKT_TRACK_DESC, []):
            self.descriptor(v)
        for _, v in f.get(PKT_TRACK_EVENT, []):
            if ts is None:
                raise LintError("a track event without a packet timestamp")
            self.event(seq, seq_id, ts, v)

    def interned(self, seq, seq_id, msg):
        # strings first: a frame of this packet may name one of them
        msgs = list(fields(msg))
        for field, _, v in msgs:
            if field not in INTERNED_KINDS:
                continue
            iid = name = None
            for ff, _, vv in fields(v):
                if ff == IN_IID:
                    iid = vv
                elif ff == IN_NAME:
                    name = text(vv)
            if not iid:
                raise LintError("an interned %s without an iid" % INTERNED_KINDS[field])
            table = seq.interned.setdefault(field, {})
            if iid in table and table[iid] != name:
                raise LintError("interned %s %d redefined on sequence %d: %r, then %r"
                                % (INTERNED_KINDS[field], iid, seq_id, table[iid], name))
            if iid not in table:
                self.counts["interned"] += 1
            table[iid] = name
        for field, wire, v in msgs:
            if field == ID_FRAMES:
                self.frame(seq, seq_id, v)
        for field, wire, v in msgs:
            if field == ID_CALLSTACKS:
                iid, frames = None, []
                for ff, ww, vv in fields(v):
                    if ff == CSK_IID:
                        iid = vv
                    elif ff == CSK_FRAMES:
                        frames.extend(repeated_ints(ff, ww, vv, False))
                if not iid:
                    raise LintError("an interned callstack without an iid")
                for fid in frames:
                    if fid not in seq.frames:
                        raise LintError("callstack %d names frame %d, not defined on sequence %d"
                                        % (iid, fid, seq_id))
                if iid in seq.callstacks:
                    if seq.callstacks[iid] != tuple(frames):
                        raise LintError("interned callstack %d redefined on sequence %d" % (iid, seq_id))
                    self.counts["callstack_repeats"] += 1
                seq.callstacks[iid] = tuple(frames)

    def frame(self, seq, seq_id, msg):
        iid, fn, src, line = None, None, None, None
        for ff, _, vv in fields(msg):
            if ff == FR_IID:
                iid = vv
            elif ff == FR_FUNCTION:
                fn = self.lookup(seq, seq_id, ID_FUNCTION_NAMES, vv)
            elif ff == FR_SOURCE:
                src = self.lookup(seq, seq_id, ID_SOURCE_PATHS, vv)
            elif ff == FR_LINE:
                line = vv
        if not iid:
            raise LintError("an interned frame without an iid")
        where = src + (":%d" % line if line else "") if src else ""
        seq.frames[iid] = "%s (%s)" % (fn or "?", where) if where else (fn or "?")

    def lookup(self, seq, seq_id, kind, iid):
        name = seq.interned.get(kind, {}).get(iid)
        if name is None:
            raise LintError("%s iid %d used on sequence %d before it was defined there"
                            % (INTERNED_KINDS[kind], iid, seq_id))
        return name

    def clock_snapshot(self, msg):
        self.counts["clock_snapshots"] += 1
        self.snapshots.add(self.machine)
        clocks = []
        for field, _, v in fields(msg):
            if field == CS_CLOCK:
                cid = dict((ff, vv) for ff, _, vv in fields(v)).get(CLK_ID)
                clocks.append(cid)
            elif field == CS_PRIMARY:
                self.primary_clock = BUILTIN_CLOCKS.get(v, str(v))
        if len(clocks) != len(set(clocks)):
            raise LintError("a clock snapshot lists a clock twice: %s" % clocks)

    def descriptor(self, msg):
        d = {"kind": "other", "parent": None, "pid": None, "tid": None, "name": None,
             "cmdline": None, "machine": self.machine}
        if self.machine not in self.snapshots:
            raise LintError("a track of machine %d before that machine's clock snapshot" % self.machine)
        uuid = None
        for field, _, v in fields(msg):
            if field == TD_UUID:
                uuid = v
            elif field == TD_PARENT:
                d["parent"] = v
            elif field == TD_NAME:
                d["name"] = text(v)
            elif field == TD_PROCESS:
                d["kind"] = "process"
                for ff, _, vv in fields(v):
                    if ff == PD_PID:
                        d["pid"] = vv
                    elif ff == PD_NAME:
                        d["name"] = text(vv)
                    elif ff == PD_CMDLINE:
                        d["cmdline"] = (d["cmdline"] or []) + [text(vv)]
            elif field == TD_THREAD:
                d["kind"] = "thread"
                for ff, _, vv in fields(v):
                    if ff == THD_PID:
                        d["pid"] = vv
                    elif ff == THD_TID:
                        d["tid"] = vv
                    elif ff == THD_NAME:
                        d["name"] = text(vv)
        if not uuid:
            raise LintError("a track descriptor without a uuid")
        if d["parent"] is not None and d["parent"] not in self.tracks:
            raise LintError("track %d names parent %d, which has no descriptor before it"
                            % (uuid, d["parent"]))
        if d["parent"] is not None and self.tracks[d["parent"]]["machine"] != d["machine"]:
            raise LintError("track %d is on machine %d, its parent %d on machine %d"
                            % (uuid, d["machine"], d["parent"], self.tracks[d["parent"]]["machine"]))
        old = self.tracks.get(uuid)
        if old is not None:
            if (old["kind"], old["parent"], old["pid"], old["tid"], old["machine"]) != \
               (d["kind"], d["parent"], d["pid"], d["tid"], d["machine"]):
                raise LintError("track %d described again as another track: %s, then %s"
                                % (uuid, old, d))
            if d["kind"] == "process":
                raise LintError("process track %d (pid %s) described twice: trace_processor "
                                "keeps the first name only" % (uuid, d["pid"]))
            if d["name"] is None:
                d["name"] = old["name"]
        else:
            self.counts["tracks"] += 1
            self.counts[d["kind"] + "_tracks"] += 1
        self.tracks[uuid] = d

    def annotations(self, seq, seq_id, msg):
        for field, _, v in fields(msg):
            if field == DA_NAME_IID:
                self.lookup(seq, seq_id, ID_ANNOT_NAMES, v)
            elif field == DA_STRING_IID:
                self.lookup(seq, seq_id, ID_ANNOT_STRINGS, v)
            elif field in (DA_DICT, DA_ARRAY):
                self.annotations(seq, seq_id, v)

    def event(self, seq, seq_id, ts, msg):
        etype, track, name = 0, seq.default_track, None
        for field, wire, v in fields(msg):
            if field == TE_TYPE:
                etype = v
            elif field == TE_TRACK_UUID:
                track = v
            elif field == TE_NAME_IID:
                name = self.lookup(seq, seq_id, ID_EVENT_NAMES, v)
            elif field == TE_NAME:
                name = text(v)
            elif field == TE_CATEGORY_IIDS:
                for iid in repeated_ints(field, wire, v, False):
                    self.lookup(seq, seq_id, ID_CATEGORIES, iid)
            elif field == TE_ANNOTATIONS:
                self.annotations(seq, seq_id, v)
            elif field == TE_CALLSTACK_IID:
                if v not in seq.callstacks:
                    raise LintError("callstack iid %d used on sequence %d before it was defined there"
                                    % (v, seq_id))
                self.counts["callstack_events"] += 1
                if (seq_id, v) not in self.stacks_used:
                    self.stacks_used.add((seq_id, v))
                    self.stack_frames.update(seq.frames[f] for f in seq.callstacks[v])
            elif field == TE_CALLSTACK:
                self.counts["callstack_events"] += 1
            elif field in (TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS,
                           TE_FLOW_IDS_OLD, TE_TERMINATING_FLOW_IDS_OLD):
                fixed = field in (TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS)
                for fid in repeated_ints(field, wire, v, fixed):
                    self.flows[fid] = self.flows.get(fid, 0) + 1
        if track is None:
            raise LintError("a track event with no track_uuid (and no default track)")
        if track in self.tracks and self.tracks[track]["machine"] != self.machine:
            raise LintError("an event of machine %d on track %d of machine %d"
                            % (self.machine, track, self.tracks[track]["machine"]))
        if track not in self.tracks:
            raise LintError("track event on track %d, which has no descriptor before it" % track)
        self.counts["track_events"] += 1
        if etype == SLICE_BEGIN:
            self.counts["slices"] += 1
            self.names["slices"][name] = self.names["slices"].get(name, 0) + 1
        elif etype == SLICE_END:
            self.counts["slice_ends"] += 1
        elif etype == INSTANT:
            self.counts["instants"] += 1
            self.names["instants"][name] = self.names["instants"].get(name, 0) + 1
        elif etype == COUNTER:
            self.counts["counters"] += 1
        else:
            raise LintError("track event of type %d" % etype)
        if etype in (SLICE_BEGIN, SLICE_END):
            self.track_events.setdefault(track, []).append((ts, self.idx, etype))

    # after the last packet
    def finish(self):
        for track, evs in self.track_events.items():
            evs.sort()
            depth = 0
            for ts, idx, etype in evs:
                if etype == SLICE_BEGIN:
                    depth += 1
                elif depth == 0:
                    raise LintError("SLICE_END at %d on track %d closes no open slice"
                                    % (ts, track), idx, None)
                else:
                    depth -= 1
            if depth:
                raise LintError("%d slice(s) on track %d never end" % (depth, track))
        for fid, n in self.flows.items():
            if n < 2 and self.part:
                self.counts["flows_cut"] += 1
            elif n < 2:
                raise LintError("flow id %d appears on only %d event" % (fid, n))
        self.counts["flows"] = len(self.flows)

    def summary(self):
        s = dict(self.counts)
        s["primary_clock"] = self.primary_clock
        s["ts_min"], s["ts_max"] = self.ts_min, self.ts_max
        s["machines"] = sorted({d["machine"] for d in self.tracks.values()})
        s["processes"] = [{"uuid": u, "pid": d["pid"], "name": d["name"], "cmdline": d["cmdline"],
                           "machine": d["machine"]}
                          for u, d in self.tracks.items() if d["kind"] == "process"]
        s["threads"] = [{"uuid": u, "pid": d["pid"], "tid": d["tid"], "name": d["name"],
                         "parent": d["parent"]}
                        for u, d in self.tracks.items() if d["kind"] == "thread"]
        s["other"] = [{"uuid": u, "name": d["name"], "parent": d["parent"]}
                      for u, d in self.tracks.items() if d["kind"] == "other"]
        s["flow_events_max"] = max(self.flows.values(), default=0)
        s["callstacks"] = len({iid for _, iid in self.stacks_used})
        s["stack_frames"] = sorted(self.stack_frames)
        s["slice_names"] = self.names["slices"]
        s["instant_names"] = self.names["instants"]
        return s


def lint_bytes(data, part=False):
    """Checks a whole trace; returns the summary dict or raises LintError."""
    lt = Linter(part)
    for idx, (off, pkt) in enumerate(packets(data)):
        try:
            lt.packet(idx, pkt)
        except LintError as e:
            e.packet, e.offset = idx, off
            raise
    try:
        lt.finish()
    except LintError as e:
        if e.packet is not None and e.offset is None:
            e.offset = offset_of(data, e.packet)
        raise
    return lt.summary()


def offset_of(data, index):
    for i, (off, _) in enumerate(packets(data)):
        if i == index:
            return off
    return None


def main(argv):
    args = [a for a in argv[1:] if a not in ("--json", "--part")]
    as_json = "--json" in argv[1:]
    part = "--part" in argv[1:]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    path = args[0]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.stderr.write("perfetto_lint: cannot read %s: %s\n" % (path, e.strerror))
        return 2
    try:
        s = lint_bytes(data, part)
    except LintError as e:
        sys.stderr.write("perfetto_lint: %s: %s\n" % (path, e))
        return 1
    if as_json:
        print(json.dumps(s, sort_keys=True))
    else:
        keys = ("packets", "sequences", "tracks", "process_tracks", "thread_tracks",
                "other_tracks", "slices", "instants", "counters", "flows", "interned")
        print("%s: ok: " % path + ", ".join("%s %d" % (k, s[k]) for k in keys) +
              ", primary clock %s" % s["primary_clock"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
