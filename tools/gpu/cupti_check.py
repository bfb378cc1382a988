#!/usr/bin/env python3
"""Checks a merged --cupti recording of streams_workload (dump JSON lines):
every kernel has a GPU record, linked to the launch with the same grid size,
none before its launch. Also reads the clock offset from dump --summary.
  cupti_check.py DUMP.jsonl PROGRAM_OUTPUT SUMMARY.txt
"""
import collections, json, re, sys

failed = 0


def check(name, ok, detail):
    global failed
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    failed += not ok


dump, out, summ = sys.argv[1:4]
prog = [json.loads(l) for l in open(out) if l.startswith("{")][-1]
ev = [json.loads(l) for l in open(dump)]
mine = [e for e in ev if e.get("pid") == prog["pid"]]
launches = {(e["tid"], e["ts"]): e for e in mine if e["type"] == "launch"}
gk = [e for e in mine if e["type"] == "gpu_kernel" and "tagged" in e.get("kernel", "")]
linked = [e for e in gk if "launch_ts" in e]
wrong = [e for e in linked if launches.get((e["launch_tid"], e["launch_ts"]), {}).get("grid", [None])[0] != e["grid"][0]]
caus = [e for e in linked if e["ts"] < e["launch_ts"]]
n = prog["kernels"]
check("cupti kernels", len(gk) == n, f"{len(gk)} GPU kernel records for {n} launches")
check("cupti links", len(linked) >= 0.999 * n and not wrong,
      f"{len(linked)} linked ({100.0 * len(linked) / max(n, 1):.2f} %), {len(wrong)} wrong links")
check("cupti causality", not caus, f"{len(caus)} kernels starting before their launch")
lat = sorted(e["ts"] - e["launch_ts"] for e in linked)
if lat:
    print(f"INFO launch->start latency ns: min {lat[0]} p50 {lat[len(lat)//2]} p99 {lat[int(len(lat)*0.99)]} max {lat[-1]}")
streams = collections.Counter(e.get("stream_id") for e in gk)
print(f"INFO GPU streams: {dict(streams)}")
txt = open(summ).read()
m = re.search(r"clock_offset_ns\s+(\d+)", txt)
check("cupti clock", m is not None and int(m.group(1)) < 2000,
      f"|CUPTI - CLOCK_MONOTONIC| = {m.group(1) if m else '?'} ns at start")
sys.exit(1 if failed else 0)
