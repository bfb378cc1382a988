#!/usr/bin/env python3
"""The tables of tools/bench/overhead.sh, from its CSV (round, workload,
config, ns_per_op[, wall_ms]); also on its own, for a CSV kept from a run:
  overhead_table.py overhead.csv
Per workload and configuration: the median time per operation over the
rounds and its min..max; "added" is the median over the rounds of
(configuration - none) in the same round, so that drift between rounds
cancels; then the ratios the targets name. A round where either value is
missing is left out of that configuration's differences."""
import csv, math, statistics, sys

ORDER = ["none", "bare", "bare_idle", "ebpf", "ebpf_exit", "gtrace_cupti", "gtrace_cupti_order",
         "cupti_bare", "nsys", "torchprof"]
UNIT = {"memcpy": "round trip", "torch": "step"}


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: overhead_table.py overhead.csv")
    vals = {}  # workload -> config -> round -> ns
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            v = float(r["ns_per_op"])
            if not math.isnan(v):
                vals.setdefault(r["workload"], {}).setdefault(r["config"], {})[r["round"]] = v
    for wl, by in vals.items():
        if "none" not in by:
            print(f"\n{wl}: no run without tracing; no table")
            continue
        none = by["none"]
        med = {c: statistics.median(v.values()) for c, v in by.items()}
        add = {}
        for c, v in by.items():
            d = [v[k] - none[k] for k in v if k in none]
            add[c] = statistics.median(d) if d else math.nan
        base = med["none"]
        print(f"\n{wl} (ns per {UNIT.get(wl, 'launch')}, {len(none)} rounds)")
        print(f"  {'config':18} {'median':>12} {'min..max':>23} {'added':>10} {'added %':>8}")
        for c in ORDER + sorted(set(by) - set(ORDER)):
            if c in by:
                v = by[c].values()
                print(f"  {c:18} {med[c]:12.1f} {min(v):11.1f}..{max(v):<11.1f} {add[c]:10.1f} "
                      f"{100 * add[c] / base:7.2f}%")
        b = add.get("bare")
        if b and b > 0:
            for c in ("ebpf", "ebpf_exit"):
                if c in add:
                    print(f"  {c}: {add[c] / b:.2f}x what the bare uprobe adds")
        for c in ("gtrace_cupti", "gtrace_cupti_order"):
            if c in add and "cupti_bare" in add and b is not None and add["cupti_bare"] + b > 0:
                floor = add["cupti_bare"] + b
                print(f"  {c} adds {add[c]:.1f}; bare CUPTI + bare uprobe add {floor:.1f} "
                      f"({add[c] / floor:.2f}x)")
            if c in add and "nsys" in add and add["nsys"] > 0:
                print(f"  {c} adds {add[c] / add['nsys']:.2f}x what nsys adds")


main()
