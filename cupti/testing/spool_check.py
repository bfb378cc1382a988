#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads a CUPTI agent spool file (cupti/gtrace_cupti.h) and evaluates a
Python expression over what it holds:
  spool_check.py SPOOL EXPR
names: k (GPU kernels), api, copies, sets, nvtx, marks (counts), stats (dict
of the last GT_REC_CUPTI_STATS, None if the file does not end with one),
allstats (every GT_REC_CUPTI_STATS, in order), kseg (kernels between two
stats records, a list), corr (set of kernel correlation ids), names (set of
kernel names), ranges (list of (id, dur, name, tid)), pid (set of hdr.pid).
Prints a summary; exit 0 when EXPR holds.  Stats flags: 1 final, 2 paused,
4 disk full, 8 backlog.  SPOOL_CUT_OK=1: a last record cut short ends the
file, as the recorder's reader takes it (cut: True); a program that _exits
while the agent's writer thread is in a write leaves one (the kernel ends a
write between pages for a dying process); else it is a bad record."""
import os, struct, sys

path, expr = sys.argv[1], sys.argv[2]
d = open(path, "rb").read()
if d[:8] != b"GTCUPTI1":
    print(f"{path}: bad magic {d[:8]!r}")
    sys.exit(1)
off, counts, corr, names, ranges, pids, stats = 8, {}, set(), set(), [], set(), None
allstats, kseg, kn = [], [], 0
cut = False
while off < len(d):
    if len(d) - off < 24 and os.environ.get("SPOOL_CUT_OK") == "1":
        cut = True
        break
    ts, p, tid, typ, size, api, cpu = struct.unpack_from("<QIIHHHH", d, off)
    if off + size > len(d) and size >= 24 and not size % 8 and os.environ.get("SPOOL_CUT_OK") == "1":
        cut = True
        break
    if size < 24 or size % 8 or off + size > len(d) or api or cpu:
        print(f"{path}: bad record at {off}: type {typ} size {size} api {api} cpu {cpu}")
        sys.exit(1)
    counts[typ] = counts.get(typ, 0) + 1
    pids.add(p)
    stats = None
    if typ == 40:
        kn += 1
        corr.add(struct.unpack_from("<I", d, off + 40)[0])
        ln = struct.unpack_from("<H", d, off + 86)[0]
        names.add(d[off + 88:off + 87 + ln].decode())
    elif typ == 44:
        dur, i, ln = struct.unpack_from("<QIH", d, off + 24)
        ranges.append((i, dur, d[off + 40:off + 39 + ln].decode(), tid))
    elif typ == 45:
        keys = ("records", "dropped", "buffers", "unknown", "clock_offset_ns")
        if size >= 88:
            keys += ("flags", "lost_disk", "lost_backlog")
        stats = dict(zip(keys, struct.unpack_from("<%dQ" % len(keys), d, off + 24)))
        allstats.append(stats)
        kseg.append(kn)
        kn = 0
    off += size
v = dict(k=counts.get(40, 0), copies=counts.get(41, 0), sets=counts.get(42, 0), api=counts.get(43, 0),
         nvtx=counts.get(44, 0), marks=counts.get(50, 0), stats=stats, allstats=allstats,
         kseg=kseg + ([kn] if kn else []), corr=corr, names=names, ranges=ranges, pid=pids, cut=cut)
print(f"kernels={v['k']} api={v['api']} copies={v['copies']} sets={v['sets']} nvtx={v['nvtx']} stats={stats}")
ok = eval(expr, {}, v)
if not ok:
    print(f"expected: {expr}")
sys.exit(0 if ok else 1)
