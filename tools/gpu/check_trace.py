#!/usr/bin/env python3
"""Checks a `gtrace-bpf dump` of a GPU run against what the traced program
says it did. Prints one PASS/FAIL line per check with its figures; exit 1 on
any failure.

  check_trace.py runtime DUMP.jsonl PROGRAM_OUTPUT
  check_trace.py driver  DUMP.jsonl PROGRAM_OUTPUT
  check_trace.py torch   DUMP.jsonl PROGRAM_OUTPUT
  check_trace.py ioctl   DUMP.jsonl PROGRAM_OUTPUT
"""
import collections
import json
import sys

failed = 0


def check(name, ok, detail):
    global failed
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    failed += not ok


def load(dump, out):
    with open(out) as f:
        prog = [json.loads(l) for l in f if l.startswith("{")][-1]
    with open(dump) as f:
        ev = [json.loads(l) for l in f]
    mine = [e for e in ev if e.get("pid") == prog["pid"]]
    return prog, ev, mine


def runtime(mine, prog):
    launches = [e for e in mine if e["type"] == "launch"]
    names = collections.Counter(e["kernel"] for e in launches)
    ph = sum(1 for e in launches if e["kernel"].startswith("unknown_kernel_0x"))
    check("runtime launches", len(launches) == prog["launches"],
          f"{len(launches)} launch events for {prog['launches']} <<<>>> launches; apis "
          f"{dict(collections.Counter(e['api'] for e in launches))}")
    check("runtime kernel names", ph == 0 and any("saxpy" in n for n in names)
          and any("scale<float>" in n for n in names), f"{dict(names)}; placeholders {ph}")
    htod = [e for e in mine if e["type"] == "memcpy" and e.get("bytes") == prog["bytes"]
            and e.get("kind") in ("HtoD", "Default")]
    check("runtime copies", len(htod) == prog["copies_htod"] + 0,
          f"{len(htod)} copies of {prog['bytes']} B for {prog['copies_htod']} cudaMemcpy HtoD; apis "
          f"{dict(collections.Counter((e['api'], e['kind']) for e in htod))}")
    ss = [e for e in mine if e.get("api", "").startswith("cuStreamSynchronize")]
    check("runtime stream syncs", len(ss) == prog["stream_syncs"],
          f"{len(ss)} cuStreamSynchronize for {prog['stream_syncs']} cudaStreamSynchronize")
    failed_calls = [e for e in mine if e.get("failed")]
    print(f"INFO runtime: {len(mine)} events, {len(failed_calls)} failed calls "
          f"{dict(collections.Counter(e['api'] for e in failed_calls))}")


def driver(mine, prog):
    got = collections.Counter(e["api"] for e in mine if "api" in e)
    want = prog["calls"]
    diff = {k: (got.get(k, 0), v) for k, v in want.items() if got.get(k, 0) != v}
    extra = {k: v for k, v in got.items() if k not in want}
    check("driver api counts", not diff and not extra,
          f"{sum(want.values())} calls expected over {len(want)} apis; differing {diff}; unexpected {extra}")
    launches = [e for e in mine if e["type"] == "launch"]
    ph = sum(1 for e in launches if e["kernel"].startswith("unknown_kernel_0x"))
    check("driver kernel names", ph == 0, f"{dict(collections.Counter(e['kernel'] for e in launches))}")


def torch(mine, prog):
    launches = [e for e in mine if e["type"] == "launch"]
    ph = [e for e in launches if e["kernel"].startswith("unknown_kernel_0x")]
    names = collections.Counter(e["kernel"] for e in launches)
    demangled = [n for n in names if "(" in n]
    check("torch launches", len(launches) >= prog["steps"] * 5,
          f"{len(launches)} launches over {prog['steps']} steps "
          f"({len(launches) / max(prog['steps'], 1):.1f}/step), apis "
          f"{dict(collections.Counter(e['api'] for e in launches))}")
    check("torch kernel names", launches and not ph and demangled,
          f"{len(names)} distinct kernels, {len(ph)} placeholder launches, {len(demangled)} demangled")
    for n, c in names.most_common(8):
        print(f"INFO   {c:6d}  {n[:150]}")


def ioctl(mine, prog):
    io = [e for e in mine if e["type"] == "ioctl"]
    by_dev = collections.Counter(e.get("device") for e in io)
    names = collections.Counter(e.get("name") for e in io)
    hexnames = sum(c for n, c in names.items() if not n or n.startswith("0x"))
    rm = [e for e in io if "rm" in e]
    rm_named = [e for e in rm if not str(e["rm"]).startswith("0x")]
    failed = sum(1 for e in io if e.get("ret", 0) < 0)
    check("ioctl events", len(io) > 0 and hexnames == 0,
          f"{len(io)} ioctls, devices {dict(by_dev)}, {hexnames} with unnamed commands, "
          f"{failed} failed; top {names.most_common(6)}")
    check("ioctl rm decoding", len(rm) > 0 and len(rm_named) >= 0.9 * len(rm),
          f"{len(rm_named)} of {len(rm)} RM control/alloc words named; top "
          f"{collections.Counter(e['rm'] for e in rm).most_common(6)}")
    waits = sorted((e["dur"] for e in io), reverse=True)[:3]
    print(f"INFO ioctl: longest {waits} ns; total {sum(e['dur'] for e in io)} ns")
    off = [e for e in mine if e["type"] == "offcpu"]
    print(f"INFO offcpu: {len(off)} intervals, {sum(e['dur'] for e in off)} ns, states "
          f"{dict(collections.Counter(e.get('state') for e in off))}")


def main():
    mode, dump, out = sys.argv[1:4]
    prog, ev, mine = load(dump, out)
    print(f"INFO {mode}: {len(ev)} events in dump, {len(mine)} from pid {prog['pid']}")
    {"runtime": runtime, "driver": driver, "torch": torch, "ioctl": ioctl}[mode](mine, prog)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
