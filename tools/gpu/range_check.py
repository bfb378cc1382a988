# Checks -c cudaProfilerApi on a real program (tools/gpu/torch_loop.py --profiler-range):
#   python3 range_check.py FULL.jsonl RANGE.jsonl [LIGHT.jsonl] RANGE_STEPS
# FULL: `gtrace-bpf dump` of a recording of everything; RANGE: of one with
# -c cudaProfilerApi; LIGHT (optional): with --mode light -c cudaProfilerApi.
# The launches of FULL between its cuProfilerStart and cuProfilerStop are the
# range's; RANGE must hold exactly as many launches, all inside its one
# range, and a multiple of RANGE_STEPS (the steps repeat). LIGHT's figures
# (launches recorded, the hot probes' attach time, what went before they
# were live) are printed, not checked.
import json, sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def launches(ev):
    return [e for e in ev if e.get("type") == "launch"]


args = sys.argv[1:]
steps = int(args[-1])
full, rng = load(args[0]), load(args[1])
light = load(args[2]) if len(args) > 3 else None

marks = sorted((e["ts"], e["api"]) for e in full if e.get("type") == "marker")
starts = [t for t, a in marks if a == "cuProfilerStart"]
stops = [t for t, a in marks if a == "cuProfilerStop"]
ok = True
if len(starts) != 1 or len(stops) != 1:
    print("FAIL range: the full recording has %d cuProfilerStart and %d cuProfilerStop" % (len(starts), len(stops)))
    sys.exit(1)
want = len([e for e in launches(full) if starts[0] <= e["ts"] <= stops[0]])
got = launches(rng)
caps = [e for e in rng if e.get("type") == "capture"]
opens = [e for e in caps if e.get("kind") == "range_open"]
closes = [e for e in caps if e.get("kind") == "range_close"]
outside = 0
if opens and closes:
    outside = len([e for e in got if not opens[0]["ts"] <= e["ts"] <= closes[0]["ts"]])
other = len([e for e in rng if e.get("api") and e.get("type") not in ("launch", "marker")])
msg = "%d launches in the range (%d steps, %.1f per step); the full recording had %d between the markers; " \
      "%d outside the range; %d ranges; %d other calls in it" % (
          len(got), steps, len(got) / steps, want, outside, len(opens), other)
if len(got) != want or len(got) == 0 or len(got) % steps or outside or len(opens) != 1 or len(closes) != 1:
    ok = False
print(("PASS" if ok else "FAIL") + " cudaProfilerApi range: " + msg)
if light is not None:
    lg = launches(light)
    lc = [e for e in light if e.get("type") == "capture"]
    lo = [e for e in lc if e.get("kind") == "range_open"]
    live = [e for e in lc if e.get("kind") == "hot_live"]
    off = [e for e in lc if e.get("kind") == "hot_off"]
    if lo and live:
        gap = (live[0]["ts"] - lo[0]["ts"]) / 1e3
        print("INFO light mode range: %d of the range's %d launches recorded; hot probes live %.0f us after the "
              "range opened (attach %.0f us); detach %.0f us" % (
                  len(lg), want, gap, live[0].get("latency_ns", 0) / 1e3,
                  (off[0].get("latency_ns", 0) / 1e3) if off else -1))
    else:
        print("INFO light mode range: %d launches; capture records: %s" % (len(lg), [e.get("kind") for e in lc]))
sys.exit(0 if ok else 1)
