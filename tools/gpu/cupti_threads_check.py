#!/usr/bin/env python3
"""Checks a merged --cupti recording of `streams_workload S K threads` (dump
JSON lines): S threads launched K same-looking kernels each, at the same
time, so neither the dims nor the kernel tell the threads apart; how long a
kernel ran does (thread t's spin for (t + 1) * 20 us). Every GPU record must
be linked to a launch of the thread whose spin its duration shows.
  cupti_threads_check.py LABEL DUMP.jsonl PROGRAM_OUTPUT
"""
import collections, json, sys

label, dump, out = sys.argv[1:4]
prog = [json.loads(l) for l in open(out) if l.startswith("{")][-1]
threads = prog["threads"]
ev = [json.loads(l) for l in open(dump)]
gk = [e for e in ev if e.get("pid") == prog["pid"] and e["type"] == "gpu_kernel"
      and "tagged" in e.get("kernel", "")]
linked = [e for e in gk if "launch_ts" in e]


def thread_of(dur_ns):
    return min(threads, key=lambda t: abs(t["spin_us"] * 1000 - dur_ns))["tid"]


wrong = [e for e in linked if e["launch_tid"] != thread_of(e["dur"])]
per = collections.Counter(e["launch_tid"] for e in linked)
n = prog["kernels"]
ok = len(gk) == n and len(linked) == n and not wrong
print(f"{'PASS' if ok else 'FAIL'} cupti threads ({label}): {len(threads)} threads x "
      f"{prog['kernels_per_stream']} same-looking kernels: {len(gk)} GPU records, {len(linked)} linked, "
      f"{len(wrong)} to the wrong thread; per thread {sorted(per.values())}")
sys.exit(0 if ok else 1)
