#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What recording costs a running program, measured inside one process.

Two runs of the same PyTorch step on the GPU machine differ by more than the
effects measured here, so runs are not compared: one workload process runs
steadily, logging the end time of every step, and the recorder is attached
to it and detached again in windows of a few seconds. Step times inside a
window are compared with those of the quiet period just before it.

  python3 tools/bench/inproc.py --workload torch,transformer [--rounds 4]
      [--configs full,light,outside-range,outside-range-light]
      [--on 4] [--off 4] [--gtrace ./gtrace-bpf]
      [--cpus-workload 2,3] [--cpus-tool 4-7] [--out DIR]
  python3 tools/bench/inproc.py --workload-cmd 'CMD {step_log} {seconds}' ...
  python3 tools/bench/inproc.py --no-steps --workload-cmd CMD ...
  python3 tools/bench/inproc.py --analyze DIR      (the tables again)
  python3 tools/bench/inproc.py --selftest         (the arithmetic)

Workloads: torch (tools/bench/torch_step.py, the launch-bound MLP) and
transformer (tools/bench/transformer_step.py), both run with --steady and
--step-log; --workload-cmd runs any command instead: "{step_log}" in it is
replaced by the step log's path (one CLOCK_MONOTONIC ns per line, the first
the start of the first step, tools/bench/steady.py), "{seconds}" by how long
it should run; it is started when it prints a line matching --ready-regex
(default "^ready"; "" starts after --settle seconds). Without {step_log} (or
with --no-steps) only the mechanics are checked.

Configurations (--configs, comma-separated; a segment that is neither a
name below nor NAME=OPTS continues the previous one's options, so
"mine=--trace cuda,ioctl" is one configuration):
  full                 gtrace-bpf -p PID
  light                gtrace-bpf -p PID --mode light
  outside-range        gtrace-bpf -p PID -c cudaProfilerApi (the workloads
                       never call cudaProfilerStart: probes on, nothing written)
  outside-range-light  gtrace-bpf -p PID --mode light -c cudaProfilerApi
  none                 no recorder at all in the "on" window: the noise floor
                       of the method (expect 0 %)
  gpum-off, gpum-10, gpum-100
                       gtrace-bpf -p PID --mode light -c cudaProfilerApi
                       --gpu-metrics=off / 10 / 100: the quietest recorder
                       (probes on, nothing written), without and with the
                       GPU-metrics sampler; pair them (--pairs) to isolate
                       the sampler
  NAME=OPTS            gtrace-bpf -p PID OPTS (shell words)
--tool-opts OPTS are added to every recorder command (e.g. --libcuda PATH).

Pairs (--pairs A:B,...): per round, A's window against B's window of the
same round, each taken against the quiet period just before it:
(1 + A's ratio) / (1 + B's ratio) - 1; per pair the median and min..max
over the rounds. gpum-10:gpum-off is what the sampler at 10 Hz adds to the
same recorder without it. A recorder's stderr line "the sampler's threads
used X ms of CPU in Y s (Z% of one CPU" is read into the window's
sampler_cpu_pct (the recorder's own CPU, not the workload's).

Schedule, per workload: start it, wait for "ready"; then for each round r
and each configuration, in the order rotated by r: wait --guard s after the
previous recorder exited (or after "ready") plus --off s; start
`gtrace-bpf -p PID OPTS -o DIR/W-CONF-rR.gtrace --force`; the window opens
when its "recording to" line is read (probes attached) and closes when
SIGINT is sent, --on s later; wait for the recorder to exit.

Arithmetic: a step runs from the previous step's end to its own end and
counts in an interval only if it started and ended inside it. "on" = the
window; "off" = the last stretch of the quiet period before it, of the same
length as the window, never earlier than --guard s after the previous
recorder exited, ending when the recorder is started (its start-up, before
the probes are attached, is in neither). Per window: ratio = median step
time on / median step time off - 1 (mean-based and bracketed ratios are
computed too, see docs/PERFORMANCE.md); per configuration: the median and
min..max of the window ratios.

Output in DIR (--out, default /tmp/gtrace-inproc.XXXX): inproc.csv (one row
per window), inproc.json (the summary), inproc.txt (the tables, also
printed), windows.jsonl (the raw schedule, for --analyze), WORKLOAD.steps
(step logs), WORKLOAD.out/.err, the recorders' stderr (*.err). Traces are
deleted once read unless --keep-traces. Light-mode traces are read for their
capture records (gtrace-bpf dump, "type":"capture": attach and detach times
of the hot probes). Exit status 0 when every window worked (the recorder
attached, exited 0 after SIGINT, the workload kept running), 1 otherwise.
"""
import argparse, bisect, json, math, os, random, re, select, shlex, signal
import subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

BUILTIN_CONFIGS = {
    "full": "",
    "light": "--mode light",
    "outside-range": "-c cudaProfilerApi",
    "outside-range-light": "--mode light -c cudaProfilerApi",
    # gtrace-bpf daemon (every process, a window in memory, its overhead
    # budget): its own estimate of what it costs is read from its last line
    "daemon": "daemon",
    "daemon-full": "daemon --mode full",
    # the GPU-metrics sampler alone: the quietest recorder with and without it
    "gpum-off": "--mode light -c cudaProfilerApi --gpu-metrics=off",
    "gpum-10": "--mode light -c cudaProfilerApi --gpu-metrics=10",
    "gpum-100": "--mode light -c cudaProfilerApi --gpu-metrics=100",
    "none": None,  # no recorder
}
SAMPLER_RE = re.compile(r"the sampler's threads used ([0-9.]+) ms of CPU in ([0-9.]+) s \(([0-9.]+)% of one CPU")
ESTIMATE_RE = re.compile(r"overhead \(estimated\): ([0-9.]+)% .* at most ([0-9.]+)%")
DEFAULT_CONFIGS = "full,light,outside-range,outside-range-light"
WORKLOADS = {
    "torch": os.path.join(HERE, "torch_step.py"),
    "transformer": os.path.join(HERE, "transformer_step.py"),
}
CAPTURE_KINDS = {1: "range_open", 2: "range_close", 3: "window_open", 4: "window_close",
                 5: "hot_live", 6: "hot_off"}
ATTACH_KINDS = ("window_open", "hot_live")
DETACH_KINDS = ("window_close", "hot_off")
CSV_FIELDS = [
    "workload", "config", "round", "slot", "ok", "error", "rc", "workload_alive",
    "quiet_start_ns", "spawn_ns", "on_start_ns", "on_end_ns", "exit_ns", "next_spawn_ns",
    "attach_ms", "stop_ms", "off_start_ns", "off_end_ns",
    "steps_off", "steps_on", "steps_after", "off_median_ns", "on_median_ns",
    "off_mean_ns", "on_mean_ns", "ratio_median", "ratio_mean", "ratio_bracketed",
    "trace_bytes", "records", "calls", "dropped", "pid_launches", "other_pid_records",
    "capture_records", "capture_windows", "attach_lat_med_ns", "attach_lat_max_ns",
    "detach_lat_med_ns", "detach_lat_max_ns", "estimate", "estimate_max", "sampler_cpu_pct",
]


# --- arithmetic (checked by --selftest) -------------------------------------

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def mean(xs):
    return sum(xs) / len(xs) if xs else None


# two-sided 95 % critical values of Student's t, degrees of freedom 1..30
# (the standard table); above 30 the normal value 1.96 is used
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
       2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci95(xs):
    """Mean and the 95 % interval of the mean (Student's t over the values,
    taken as independent): (mean, lo, hi); (mean, None, None) below 2."""
    n = len(xs)
    if n == 0:
        return None, None, None
    m = mean(xs)
    if n < 2:
        return m, None, None
    sd = (sum((x - m) ** 2 for x in xs) / (n - 1)) ** 0.5
    t = T95[n - 2] if n - 1 <= len(T95) else 1.96
    h = t * sd / n ** 0.5
    return m, m - h, m + h


def read_step_log(path):
    """The times of a step log, in order; a line that is not a whole number
    (the last one, cut short when the process was killed) ends the list."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.isdigit():
                    break
                t = int(line)
                if out and t < out[-1]:
                    break
                out.append(t)
    except OSError:
        pass
    return out


class Steps:
    """Steps from a log of times: step i runs from times[i] to times[i + 1]."""

    def __init__(self, times):
        self.t = times

    def __len__(self):
        return max(len(self.t) - 1, 0)

    def durations(self, t0, t1):
        """Durations of the steps that started at or after t0 and ended at or
        before t1."""
        t = self.t
        if t1 is None or t0 is None or t1 <= t0:
            return []
        i = bisect.bisect_left(t, t0)
        out = []
        while i + 1 < len(t) and t[i + 1] <= t1:
            out.append(t[i + 1] - t[i])
            i += 1
        return out


def off_interval(quiet_start, spawn, on_len, guard):
    """The off period paired with a window of length on_len whose recorder
    was started at spawn, the previous recorder having exited at quiet_start
    (or the workload become ready then): the last on_len before spawn, not
    earlier than quiet_start + guard. None when nothing is left."""
    if spawn is None or quiet_start is None or on_len is None or on_len <= 0:
        return None
    lo = max(quiet_start + guard, spawn - on_len)
    return (lo, spawn) if lo < spawn else None


def after_interval(exit_ns, next_spawn, on_len, guard):
    """The off period after a window (for the bracketed ratio): from guard
    after its recorder exited, on_len long, ending before the next recorder
    was started (or the workload was stopped)."""
    if exit_ns is None or next_spawn is None or on_len is None or on_len <= 0:
        return None
    lo = exit_ns + guard
    hi = min(lo + on_len, next_spawn)
    return (lo, hi) if lo < hi else None


def ratio(on, off, stat, min_steps):
    if len(on) < min_steps or len(off) < min_steps:
        return None
    a, b = stat(on), stat(off)
    return a / b - 1 if b else None


def analyze_window(w, steps, guard, min_steps):
    """Fills in the step figures of one window record (a dict with the
    schedule's times) from the workload's steps."""
    on0, on1 = w.get("on_start_ns"), w.get("on_end_ns")
    on_len = on1 - on0 if on0 is not None and on1 is not None else None
    off = off_interval(w.get("quiet_start_ns"), w.get("spawn_ns"), on_len, guard)
    after = after_interval(w.get("exit_ns"), w.get("next_spawn_ns"), on_len, guard)
    d_on = steps.durations(on0, on1) if on_len else []
    d_off = steps.durations(*off) if off else []
    d_after = steps.durations(*after) if after else []
    w["off_start_ns"], w["off_end_ns"] = off if off else (None, None)
    w["steps_on"], w["steps_off"], w["steps_after"] = len(d_on), len(d_off), len(d_after)
    w["on_median_ns"], w["off_median_ns"] = median(d_on), median(d_off)
    w["on_mean_ns"], w["off_mean_ns"] = mean(d_on), mean(d_off)
    w["ratio_median"] = ratio(d_on, d_off, median, min_steps)
    w["ratio_mean"] = ratio(d_on, d_off, mean, min_steps)
    w["ratio_bracketed"] = None
    if w["ratio_median"] is not None and len(d_after) >= min_steps:
        ref = (median(d_off) + median(d_after)) / 2
        w["ratio_bracketed"] = median(d_on) / ref - 1
    return w


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, None
    return median(xs), min(xs), max(xs)


def summarize(windows):
    """Per configuration (in order of first appearance): the windows' ratios
    and counts."""
    out = {}
    for w in windows:
        c = out.setdefault(w["config"], {"windows": 0, "failed": 0, "used": 0, "_w": []})
        c["windows"] += 1
        if not w.get("ok"):
            c["failed"] += 1
        c["_w"].append(w)
    for c in out.values():
        ws = c.pop("_w")
        used = [w for w in ws if w.get("ok") and w.get("ratio_median") is not None]
        c["used"] = len(used)
        for key in ("ratio_median", "ratio_mean", "ratio_bracketed"):
            m, lo, hi = spread([w.get(key) for w in used])
            c[key] = {"median": m, "min": lo, "max": hi}
        for key in ("steps_on", "steps_off"):
            c[key] = median([w[key] for w in used if w.get(key) is not None])
        c["on_median_ns"] = median([w["on_median_ns"] for w in used])
        c["off_median_ns"] = median([w["off_median_ns"] for w in used])
        ok = [w for w in ws if w.get("ok")]
        for key in ("attach_ms", "stop_ms", "trace_bytes", "records", "calls", "pid_launches",
                    "capture_windows"):
            vals = [w[key] for w in ok if w.get(key) is not None]
            c[key] = {"median": median(vals), "min": min(vals) if vals else None,
                      "max": max(vals) if vals else None}
        c["dropped"] = sum(w.get("dropped") or 0 for w in ws)
        cpu = [w["sampler_cpu_pct"] for w in ws if w.get("ok") and w.get("sampler_cpu_pct") is not None]
        c["sampler_cpu_pct"] = {"median": median(cpu), "min": min(cpu) if cpu else None,
                                "max": max(cpu) if cpu else None, "n": len(cpu)}
        est = [w["estimate"] for w in used if w.get("estimate") is not None]
        c["estimate"] = {"median": median(est), "min": min(est) if est else None,
                         "max": max(est) if est else None, "n": len(est)}
        for key in ("attach_lat", "detach_lat"):
            vals = [v for w in ws for v in w.get("_" + key, [])]
            c[key + "_ns"] = {"n": len(vals), "median": median(vals),
                              "max": max(vals) if vals else None}
    return out


def parse_pairs(spec, names):
    """[(A, B)] from --pairs "A:B,C:D"; both must be configurations."""
    out = []
    for seg in (spec or "").split(","):
        seg = seg.strip()
        if not seg:
            continue
        a, colon, b = seg.partition(":")
        if not colon or a not in names or b not in names or a == b:
            raise ValueError("bad pair %r: give A:B of two configurations (%s)" % (seg, ", ".join(names)))
        out.append((a, b))
    return out


def pair_summary(windows, pairs):
    """Per pair "A:B": per round, (1 + A's ratio_median) / (1 + B's) - 1
    where both windows of that round gave a ratio; their median, min and
    max, and the values in round order."""
    out = {}
    for a, b in pairs:
        by_round = {}
        for w in windows:
            if w.get("ok") and w.get("ratio_median") is not None and w["config"] in (a, b):
                by_round.setdefault(w["round"], {})[w["config"]] = w["ratio_median"]
        vals = [(1 + r[a]) / (1 + r[b]) - 1 for _, r in sorted(by_round.items()) if a in r and b in r]
        m, lo, hi = spread(vals)
        mu, clo, chi = mean_ci95(vals)
        out["%s:%s" % (a, b)] = {"n": len(vals), "median": m, "min": lo, "max": hi, "mean": mu,
                                 "ci95_lo": clo, "ci95_hi": chi, "values": vals}
    return out


def rotate(items, r):
    if not items:
        return []
    k = r % len(items)
    return items[k:] + items[:k]


def parse_configs(spec):
    """[(name, options list or None for no recorder)] from --configs."""
    out = []
    for seg in spec.split(","):
        seg = seg.strip()
        name, eq, opts = seg.partition("=")
        if eq and re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
            out.append([name, opts])
        elif seg in BUILTIN_CONFIGS:
            out.append([seg, BUILTIN_CONFIGS[seg]])
        elif out and out[-1][1] is not None and seg:
            out[-1][1] += "," + seg  # a comma inside the previous one's options
        else:
            raise ValueError("unknown configuration %r (known: %s, or NAME=OPTS)"
                             % (seg, ", ".join(BUILTIN_CONFIGS)))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("a configuration is named twice: %s" % ",".join(names))
    return [(n, shlex.split(o) if o is not None else None) for n, o in out]


def parse_summary(text):
    """Totals from `gtrace-bpf dump --summary`: records, calls, drops."""
    out = {}
    drops = None
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == "records_written" and f[1].isdigit():
            out["records"] = int(f[1])
        elif len(f) >= 2 and f[0] == "total" and f[1].isdigit():
            out["calls"] = int(f[1])
        elif len(f) >= 2 and f[0].startswith("drop_") and f[1].isdigit():
            drops = (drops or 0) + int(f[1])
    if drops is not None:
        out["dropped"] = drops
    return out


def parse_dump(lines, pid):
    """From `gtrace-bpf dump` lines: launches of pid, records of other
    processes (process records aside), and the capture records as
    (kind, latency_ns) pairs. Lines that are not what they should be are
    skipped."""
    launches = others = 0
    caps = []
    pid_re = re.compile(r'"pid":\s*(-?\d+)')
    for line in lines:
        if '"capture"' in line:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if not isinstance(o, dict) or o.get("type") != "capture":
                continue
            kind = o.get("kind")
            if isinstance(kind, int):
                kind = CAPTURE_KINDS.get(kind, str(kind))
            lat = o.get("latency_ns")
            caps.append((str(kind), lat if isinstance(lat, int) and not isinstance(lat, bool) else None))
            continue
        if pid is None:
            continue
        m = pid_re.search(line)
        if not m:
            continue
        if int(m.group(1)) != pid:
            # pid 0: the recorder's own records (its clock pairs)
            if int(m.group(1)) != 0 and '"type":"process"' not in line.replace(" ", ""):
                others += 1
        elif '"type":"launch"' in line.replace(" ", ""):
            launches += 1
    return {"pid_launches": launches, "other_pid_records": others, "captures": caps}


def capture_stats(caps):
    att = [lat for k, lat in caps if k in ATTACH_KINDS and lat is not None]
    det = [lat for k, lat in caps if k in DETACH_KINDS and lat is not None]
    return {"capture_records": len(caps),
            "capture_windows": sum(1 for k, _ in caps if k == "window_open"),
            "attach_lat_med_ns": median(att), "attach_lat_max_ns": max(att) if att else None,
            "detach_lat_med_ns": median(det), "detach_lat_max_ns": max(det) if det else None,
            "_attach_lat": att, "_detach_lat": det}


def pct(x, digits=1):
    if x is None:
        return "n/a"
    v = round(x * 100, digits)
    if v == 0:
        v = 0.0  # no "-0.0"
    return "%+.*f %%" % (digits, v)


def pct_range(lo, hi):
    if lo is None:
        return "n/a"
    return "%s .. %s" % (pct(lo)[:-2], pct(hi))


def ms(ns, digits=3):
    return "n/a" if ns is None else "%.*f" % (digits, ns / 1e6)


# --- tables -----------------------------------------------------------------

def table(rows, head):
    cols = [list(map(str, c)) for c in zip(head, *rows)]
    widths = [max(len(x) for x in c) for c in cols]
    lines = []
    for r in [head] + rows:
        lines.append("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                               for i, (x, w) in enumerate(zip(r, widths))).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def report(meta, per_wl, no_steps):
    out = []
    for wl, info in per_wl.items():
        s = info["summary"]
        out.append("workload %s: %d rounds run of %d, on %g s / off %g s, guard %g s%s"
                   % (wl, info.get("rounds_run", 0), meta["rounds"], meta["on"], meta["off"],
                      meta["guard"], "; cut short: " + info["cut"] if info.get("cut") else ""))
        if info.get("step_ms") is not None:
            out.append("  steady step time (median of all steps): %.3f ms, %d steps logged"
                       % (info["step_ms"], info.get("steps_logged", 0)))
        rows = []
        for name, c in s.items():
            att = c["attach_ms"]
            if no_steps:
                rows.append([name, "%d/%d" % (c["windows"] - c["failed"], c["windows"]),
                             "n/a" if att["median"] is None else "%.0f" % att["median"],
                             "n/a" if c["stop_ms"]["median"] is None else "%.0f" % c["stop_ms"]["median"],
                             rng(c["pid_launches"]), rng(c["records"]),
                             rng(c["trace_bytes"], 1e-3, "%.1f"), c["dropped"]])
            else:
                rm, rmean, rb = c["ratio_median"], c["ratio_mean"], c["ratio_bracketed"]
                rows.append([name, "%d/%d" % (c["used"], c["windows"]), pct(rm["median"]),
                             pct_range(rm["min"], rm["max"]), pct(rmean["median"]),
                             pct(rb["median"]),
                             "n/a" if c["steps_on"] is None else "%.0f" % c["steps_on"],
                             "n/a" if c["steps_off"] is None else "%.0f" % c["steps_off"],
                             ms(c["off_median_ns"]),
                             "n/a" if att["median"] is None else "%.0f" % att["median"],
                             rng(c["trace_bytes"], 1e-6, "%.1f"), c["dropped"]])
        if no_steps:
            head = ["config", "ok/windows", "attach ms", "stop ms", "launches of pid",
                    "records", "trace KB", "dropped"]
        else:
            head = ["config", "windows", "median", "min..max", "mean-based", "bracketed",
                    "steps on", "steps off", "off ms/step", "attach ms", "trace MB", "dropped"]
        out.append(table(rows, head))
        est = [[name, c["estimate"]["n"], pct(c["estimate"]["median"]),
                pct_range(c["estimate"]["min"], c["estimate"]["max"]), pct(c["ratio_median"]["median"]),
                "n/a" if not c["estimate"]["median"] or c["ratio_median"]["median"] is None else
                "%.2f" % (c["ratio_median"]["median"] / c["estimate"]["median"])]
               for name, c in s.items() if c.get("estimate", {}).get("n")]
        if est:
            out.append("  the daemon's own estimate (mean over its intervals, per window) against the "
                       "measured ratio")
            out.append(table(est, ["config", "windows", "estimate", "min..max", "measured",
                                   "measured/estimate"]))
        cpu = [[name, c["sampler_cpu_pct"]["n"], "%.4f" % c["sampler_cpu_pct"]["median"],
                "%.4f .. %.4f" % (c["sampler_cpu_pct"]["min"], c["sampler_cpu_pct"]["max"])]
               for name, c in s.items() if c.get("sampler_cpu_pct", {}).get("n")]
        if cpu:
            out.append("  the GPU-metrics sampler's own CPU (its threads, measured by the recorder; % of "
                       "one CPU, not the workload's)")
            out.append(table(cpu, ["config", "windows", "median %", "min..max %"]))
        pairs = info.get("pairs") or {}
        if pairs:
            out.append("  paired: per round (1 + A's ratio) / (1 + B's ratio) - 1, both against their own "
                       "quiet period")
            out.append(table([[k, p["n"], pct(p["median"], 2), pct_range(p["min"], p["max"]),
                               pct(p.get("mean"), 2), pct_range(p.get("ci95_lo"), p.get("ci95_hi"))]
                              for k, p in pairs.items()],
                             ["A:B", "rounds", "median", "min..max", "mean", "95 % CI of the mean"]))
        lat = []
        for name, c in s.items():
            a, d = c["attach_lat_ns"], c["detach_lat_ns"]
            if c["capture_windows"]["max"] or a["n"] or d["n"] or meta["light_like"].get(name):
                lat.append([name, rng(c["capture_windows"]),
                            a["n"], ms(a["median"]), ms(a["max"]), d["n"], ms(d["median"]), ms(d["max"])])
        if lat:
            out.append("  hot probes (capture records of the traces): attach = window_open/hot_live, "
                       "detach = window_close/hot_off, ms")
            out.append(table(lat, ["config", "windows/trace", "attaches", "median", "max",
                                   "detaches", "median", "max"]))
        out.append("")
    return "\n".join(out)


def rng(d, scale=1, fmt="%.0f"):
    if d["median"] is None:
        return "n/a"
    if d["min"] == d["max"]:
        return fmt % (d["median"] * scale)
    return (fmt + " (" + fmt + ".." + fmt + ")") % (d["median"] * scale, d["min"] * scale, d["max"] * scale)


def write_outputs(out_dir, meta, windows, per_wl, no_steps):
    import csv
    with open(os.path.join(out_dir, "inproc.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, CSV_FIELDS, extrasaction="ignore")
        wr.writeheader()
        for w in windows:
            wr.writerow({k: ("" if w.get(k) is None else w.get(k)) for k in CSV_FIELDS})
    js = {"meta": meta, "workloads": {wl: {k: v for k, v in info.items()} for wl, info in per_wl.items()}}
    with open(os.path.join(out_dir, "inproc.json"), "w") as f:
        json.dump(js, f, indent=1, sort_keys=False)
        f.write("\n")
    text = report(meta, per_wl, no_steps)
    with open(os.path.join(out_dir, "inproc.txt"), "w") as f:
        f.write(text + "\n")
    return text


# --- running ----------------------------------------------------------------

def now():
    return time.monotonic_ns()


def cpu_list(spec):
    cpus = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


class Stop(Exception):
    pass


def wait_line(proc, stream, regex, timeout_s, sink):
    """Reads proc's stream until a line matches regex; returns the time it
    was read (ns) or None when the process exited or timeout_s passed first.
    What it read goes to sink (a file)."""
    fd = stream.fileno()
    buf = b""
    deadline = time.monotonic() + timeout_s
    rx = re.compile(regex)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not r:
            if proc.poll() is not None:
                return None
            continue
        chunk = os.read(fd, 65536)
        t = now()
        if not chunk:  # closed: the process is ending; let the caller see its status
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
            return None
        sink.write(chunk)
        sink.flush()
        buf += chunk
        lines = buf.split(b"\n")
        buf = lines.pop()
        for ln in lines:
            if rx.search(ln.decode("utf-8", "replace")):
                return t


def drain(stream, sink):
    def run():
        try:
            while True:
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    break
                sink.write(chunk)
                sink.flush()
        except (OSError, ValueError):
            pass
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


class Runner:
    def __init__(self, a, configs, out_dir):
        self.a = a
        self.configs = configs
        self.out = out_dir
        self.windows = []
        self.live = []  # processes to end on the way out
        self.tool_prefix = ["taskset", "-c", a.cpus_tool] if a.cpus_tool else []
        self.wl_prefix = ["taskset", "-c", a.cpus_workload] if a.cpus_workload else []
        self.raw = open(os.path.join(out_dir, "windows.jsonl"), "w")
        self.stopping = False

    def sleep_until(self, t_ns):
        while True:
            if self.stopping:
                raise Stop("stopped by a signal")
            left = (t_ns - now()) / 1e9
            if left <= 0:
                return
            time.sleep(min(left, 0.2))

    def workload_cmd(self, wl, step_log, seconds):
        a = self.a
        if wl in WORKLOADS:
            cmd = [a.python, WORKLOADS[wl], "--steady", "%g" % seconds, "--step-log", step_log]
            return cmd + shlex.split(a.workload_args)
        words = shlex.split(wl)
        return [w.replace("{step_log}", step_log).replace("{seconds}", "%g" % seconds) for w in words]

    def run_workload(self, wl, label, budget_s):
        a = self.a
        t_begin = now()
        deadline = t_begin + int(budget_s * 1e9)
        step_log = os.path.join(self.out, label + ".steps")
        has_steps = (wl in WORKLOADS or "{step_log}" in wl) and not a.no_steps
        if os.path.exists(step_log):
            os.unlink(step_log)
        cmd = self.wl_prefix + self.workload_cmd(wl, step_log, budget_s + 60)
        info = {"command": cmd, "rounds_run": 0, "cut": None, "pid": None}
        wout = open(os.path.join(self.out, label + ".out"), "wb")
        werr = open(os.path.join(self.out, label + ".err"), "wb")
        print("inproc: %s: starting %s" % (label, " ".join(map(shlex.quote, cmd))), file=sys.stderr, flush=True)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=werr,
                                start_new_session=True, cwd=ROOT)
        self.live.append(proc)
        info["pid"] = pid = proc.pid
        mine = []
        try:
            if a.ready_regex:
                t_ready = wait_line(proc, proc.stdout, a.ready_regex, a.ready_timeout, wout)
                if t_ready is None:
                    if proc.poll() is None:
                        info["cut"] = "the workload printed no line matching %r within %g s" % (
                            a.ready_regex, a.ready_timeout)
                    else:
                        info["cut"] = "the workload exited with status %d before printing a line matching %r" % (
                            proc.returncode, a.ready_regex)
                    return info, mine
            else:
                time.sleep(a.settle)
                t_ready = now()
            drain(proc.stdout, wout)
            info["ready_s"] = round((t_ready - t_begin) / 1e9, 3)
            print("inproc: %s: pid %d ready after %.1f s" % (label, pid, info["ready_s"]),
                  file=sys.stderr, flush=True)
            quiet = t_ready
            cost = None  # a window's overhead beyond on + off (start-up, exit), measured
            for r in range(a.rounds):
                for slot, (name, opts) in enumerate(rotate(self.configs, r)):
                    need = a.guard + a.off + a.on + (cost if cost is not None else 3.0)
                    if now() + need * 1e9 > deadline:
                        info["cut"] = "the time left (--max-seconds) ended round %d" % (r + 1)
                        return info, mine
                    if proc.poll() is not None:
                        info["cut"] = "the workload exited (status %s) in round %d" % (proc.returncode, r + 1)
                        return info, mine
                    self.sleep_until(quiet + int((a.guard + a.off) * 1e9))
                    w = self.window(label, pid, proc, name, opts, r, slot, quiet)
                    w["has_steps"] = has_steps
                    if mine:
                        mine[-1]["next_spawn_ns"] = w["spawn_ns"]
                    mine.append(w)
                    self.raw.write(json.dumps({k: v for k, v in w.items() if not k.startswith("_")}) + "\n")
                    self.raw.flush()
                    quiet = w["exit_ns"] if w.get("exit_ns") is not None else now()
                    extra = (quiet - w["spawn_ns"]) / 1e9 - a.on
                    cost = extra if cost is None else max(cost, extra)
                    print("inproc: %s: round %d %-20s %s" % (label, r + 1, name,
                          "ok" if w["ok"] else "FAILED: " + w["error"]), file=sys.stderr, flush=True)
                    if w.get("fatal"):
                        info["cut"] = w["error"]
                        return info, mine
                info["rounds_run"] = r + 1
            # the quiet stretch after the last window, for its bracketed ratio
            if has_steps:
                self.sleep_until(quiet + int((a.guard + a.on) * 1e9))
        except Stop as e:
            info["cut"] = str(e)
        finally:
            t_end = now()
            if mine and mine[-1].get("next_spawn_ns") is None:
                mine[-1]["next_spawn_ns"] = t_end
            self.end_workload(proc, info)
            wout.flush()
        return info, mine

    def end_workload(self, proc, info):
        alive = proc.poll() is None
        info["alive_at_end"] = alive
        if alive:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        info["exit_status"] = proc.returncode
        if proc in self.live:
            self.live.remove(proc)

    def window(self, label, pid, wproc, name, opts, r, slot, quiet):
        a = self.a
        w = {"workload": label, "config": name, "round": r + 1, "slot": slot + 1, "pid": pid,
             "quiet_start_ns": quiet, "ok": False, "error": "", "rc": None}
        base = "%s-%s-r%d" % (label, name, r + 1)
        if opts is None:  # "none": the same schedule without a recorder
            w["spawn_ns"] = now()
            w["on_start_ns"] = now()
            self.sleep_until(w["on_start_ns"] + int(a.on * 1e9))
            w["on_end_ns"] = w["exit_ns"] = now()
            w["workload_alive"] = wproc.poll() is None
            w["ok"] = w["workload_alive"]
            w["error"] = "" if w["ok"] else "the workload exited during the window"
            return w
        trace = os.path.join(self.out, base + ".gtrace")
        env = None
        if opts and opts[0] == "daemon":
            # its own run and snapshot directories; it writes no trace
            ddir = tempfile.mkdtemp(prefix="daemon-", dir=self.out)
            env = dict(os.environ, GTRACE_RUN_DIR=os.path.join(ddir, "run"))
            cmd = self.tool_prefix + [a.gtrace] + opts + shlex.split(a.tool_opts) + ["--dir", ddir]
            trace = None
        else:
            cmd = self.tool_prefix + [a.gtrace, "-p", str(pid)] + opts + shlex.split(a.tool_opts) + \
                ["-o", trace, "--force"]
        w["trace"] = trace
        w["command"] = cmd
        err = open(os.path.join(self.out, base + ".err"), "wb")
        w["spawn_ns"] = now()
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.PIPE,
                                 start_new_session=True, env=env)
        except OSError as e:
            w["error"] = "cannot start %s: %s" % (a.gtrace, e)
            w["exit_ns"] = now()
            w["fatal"] = True
            return w
        self.live.append(p)
        try:
            t_on = wait_line(p, p.stderr, a.start_regex, a.attach_timeout, err)
            if t_on is None:
                if p.poll() is None:
                    w["error"] = "no line matching %r within %g s" % (a.start_regex, a.attach_timeout)
                else:
                    w["error"] = "the recorder exited with status %d before recording" % p.returncode
                self.stop(p)
                w["rc"] = p.returncode
                w["exit_ns"] = now()
                return w
            w["on_start_ns"] = t_on
            th = drain(p.stderr, err)
            self.sleep_until(t_on + int(a.on * 1e9))
            w["on_end_ns"] = now()
            p.send_signal(signal.SIGINT)
            try:
                p.wait(a.stop_timeout)
            except subprocess.TimeoutExpired:
                w["error"] = "the recorder did not exit within %g s of SIGINT" % a.stop_timeout
                p.kill()
                p.wait()
            w["exit_ns"] = now()
            th.join(5)
            w["rc"] = p.returncode
            w["attach_ms"] = round((t_on - w["spawn_ns"]) / 1e6, 1)
            w["stop_ms"] = round((w["exit_ns"] - w["on_end_ns"]) / 1e6, 1)
            w["workload_alive"] = wproc.poll() is None
            if not w["error"]:
                if p.returncode != 0:
                    w["error"] = "the recorder exited with status %d after SIGINT" % p.returncode
                elif not w["workload_alive"]:
                    w["error"] = "the workload exited during the window"
                elif trace and not os.path.exists(trace):
                    w["error"] = "no trace file"
            w["ok"] = not w["error"]
            if not trace:
                w.update(read_estimate(os.path.join(self.out, base + ".err")))
            w.update(read_sampler(os.path.join(self.out, base + ".err")))
            return w
        finally:
            if p.poll() is None:
                self.stop(p)
            if p in self.live:
                self.live.remove(p)
            err.close()

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(self.a.stop_timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def cleanup(self):
        for p in list(self.live):
            if p.poll() is None:
                p.send_signal(signal.SIGINT if p.args and self.a.gtrace in p.args else signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        self.live.clear()


def read_estimate(path):
    """The daemon's own estimate of its cost (its last "overhead
    (estimated)" line): mean and max over its intervals, as fractions."""
    try:
        with open(path, errors="replace") as f:
            m = None
            for line in f:
                m = ESTIMATE_RE.search(line) or m
    except OSError:
        return {}
    if not m:
        return {}
    return {"estimate": float(m.group(1)) / 100, "estimate_max": float(m.group(2)) / 100}


def read_sampler(path):
    """The GPU-metrics sampler's CPU (% of one CPU) from a recorder's
    summary line, {} when it has none."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = SAMPLER_RE.search(line)
                if m:
                    return {"sampler_cpu_pct": float(m.group(3))}
    except OSError:
        pass
    return {}


def read_trace(a, w, light_like):
    """Trace size, dump --summary totals and, where wanted, what the dump
    holds: launches of the pid, other processes' records, capture records."""
    tr = w.get("trace")
    if not tr or not os.path.exists(tr):
        return
    prefix = ["taskset", "-c", a.cpus_tool] if a.cpus_tool else []
    w["trace_bytes"] = os.path.getsize(tr)
    try:
        r = subprocess.run(prefix + [a.gtrace, "dump", "--summary", tr], capture_output=True, text=True,
                           timeout=300)
        w.update(parse_summary(r.stdout))
    except (OSError, subprocess.SubprocessError):
        pass
    if a.check_pid or light_like:
        try:
            p = subprocess.Popen(prefix + [a.gtrace, "dump", tr], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True, errors="replace")
            d = parse_dump(p.stdout, w["pid"] if a.check_pid else None)
            p.wait()
        except OSError:
            d = {"pid_launches": None, "other_pid_records": None, "captures": []}
        if a.check_pid:
            w["pid_launches"], w["other_pid_records"] = d["pid_launches"], d["other_pid_records"]
            if w.get("ok") and not d["pid_launches"]:
                w["ok"], w["error"] = False, "no launch of pid %d in the trace" % w["pid"]
            elif w.get("ok") and d["other_pid_records"]:
                w["ok"], w["error"] = False, "%d records of other processes" % d["other_pid_records"]
        w.update(capture_stats(d["captures"]))
    if not a.keep_traces:
        os.unlink(tr)


def finish(a, meta, windows, infos, configs):
    """Step figures of every window, per-configuration summaries."""
    per_wl = {}
    for label, info in infos.items():
        ws = [w for w in windows if w["workload"] == label]
        times = read_step_log(os.path.join(a.out, label + ".steps"))
        steps = Steps(times)
        if len(steps) and not a.no_steps:
            info["steps_logged"] = len(steps)
            info["step_ms"] = median([times[i + 1] - times[i] for i in range(len(steps))]) / 1e6
        for w in ws:
            if not a.no_steps:
                analyze_window(w, steps, int(a.guard * 1e9), a.min_steps)
        info["summary"] = summarize(ws)
        if getattr(a, "pairs_list", None):
            info["pairs"] = pair_summary(ws, a.pairs_list)
        per_wl[label] = info
    return per_wl


def main(argv):
    ap = argparse.ArgumentParser(prog="inproc.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="torch",
                    help="torch, transformer or both (comma-separated); default torch")
    ap.add_argument("--workload-cmd", help="run this command instead ({step_log}, {seconds} replaced)")
    ap.add_argument("--workload-args", default="", help="extra arguments for torch/transformer")
    ap.add_argument("--python", default=sys.executable, help="Python for the torch workloads")
    ap.add_argument("--configs", default=DEFAULT_CONFIGS)
    ap.add_argument("--pairs", default="", help="A:B,... configurations compared round by round")
    ap.add_argument("--tool-opts", default="", help="options added to every recorder command")
    ap.add_argument("--on", type=float, default=4.0, help="seconds of a window (default 4)")
    ap.add_argument("--off", type=float, default=4.0, help="quiet seconds before a window, after --guard (default 4)")
    ap.add_argument("--guard", type=float, default=0.5, help="seconds after a recorder exited left out (default 0.5)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--gtrace", default=os.path.join(".", "gtrace-bpf"))
    ap.add_argument("--cpus-workload", help="taskset CPU list for the workload, e.g. 2,3")
    ap.add_argument("--cpus-tool", help="taskset CPU list for the recorder and this script, e.g. 4-7")
    ap.add_argument("--out", help="output directory (default: a new /tmp/gtrace-inproc.*)")
    ap.add_argument("--max-seconds", type=float, default=540,
                    help="stop starting windows when this would be passed (default 540)")
    ap.add_argument("--min-steps", type=int, default=5, help="fewer steps on either side: no ratio")
    ap.add_argument("--ready-regex", default=r"^ready\b")
    ap.add_argument("--ready-timeout", type=float, default=300)
    ap.add_argument("--settle", type=float, default=1.0, help="with --ready-regex '': seconds to wait")
    ap.add_argument("--start-regex", default=r"recording to ")
    ap.add_argument("--attach-timeout", type=float, default=60)
    ap.add_argument("--stop-timeout", type=float, default=60)
    ap.add_argument("--no-steps", action="store_true", help="no step log: check the attach/detach mechanics only")
    ap.add_argument("--check-pid", action="store_true",
                    help="read every trace: launches of the pid, nothing of other processes (default with --no-steps)")
    ap.add_argument("--keep-traces", action="store_true")
    ap.add_argument("--analyze", metavar="DIR", help="print the tables again from DIR/windows.jsonl")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest()
    if a.analyze:
        return analyze_dir(a)
    try:
        configs = parse_configs(a.configs)
        a.pairs_list = parse_pairs(a.pairs, [n for n, _ in configs])
    except ValueError as e:
        ap.error(str(e))
    if a.on <= 0 or a.off < 0 or a.guard < 0 or a.rounds < 1:
        ap.error("--on must be > 0, --off and --guard >= 0, --rounds >= 1")
    if a.no_steps:
        a.check_pid = True
    workloads = [a.workload_cmd] if a.workload_cmd else [w.strip() for w in a.workload.split(",") if w.strip()]
    for w in workloads:
        if not a.workload_cmd and w not in WORKLOADS:
            ap.error("unknown workload %r (torch, transformer; or --workload-cmd)" % w)
    if a.workload_cmd and "{step_log}" not in a.workload_cmd:
        a.no_steps = a.check_pid = True
    if not (os.path.isfile(a.gtrace) and os.access(a.gtrace, os.X_OK)):
        ap.error("no recorder at %s (--gtrace)" % a.gtrace)
    a.gtrace = os.path.abspath(a.gtrace)
    a.out = a.out or tempfile.mkdtemp(prefix="gtrace-inproc.")
    os.makedirs(a.out, exist_ok=True)
    if a.cpus_tool:
        os.sched_setaffinity(0, cpu_list(a.cpus_tool))
    meta = make_meta(a, configs, workloads)
    runner = Runner(a, configs, a.out)

    def on_signal(signum, frame):
        runner.stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t0 = time.monotonic()
    infos = {}
    windows = []
    try:
        for i, wl in enumerate(workloads):
            label = wl if wl in WORKLOADS else "cmd%d" % (i + 1) if len(workloads) > 1 else "cmd"
            left = a.max_seconds - (time.monotonic() - t0)
            # a share of the time left for each workload still to run, less
            # what reading its traces will take
            budget = left / (len(workloads) - i) - 15
            if runner.stopping:
                break
            info, ws = runner.run_workload(wl, label, budget)
            infos[label] = info
            windows += ws
            if runner.stopping:
                break
    finally:
        runner.cleanup()
        runner.raw.close()
    for w in windows:
        read_trace(a, w, meta["light_like"].get(w["config"], False))
    per_wl = finish(a, meta, windows, infos, configs)
    meta["wall_s"] = round(time.monotonic() - t0, 1)
    text = write_outputs(a.out, meta, windows, per_wl, a.no_steps)
    print(text)
    print("inproc: %d windows in %.0f s; files in %s" % (len(windows), meta["wall_s"], a.out))
    bad = [w for w in windows if not w.get("ok")]
    for w in bad:
        print("inproc: FAILED window %s %s round %d: %s" % (w["workload"], w["config"], w["round"], w["error"]))
    cut = [l for l, i in infos.items() if i.get("cut")]
    for label in cut:
        print("inproc: %s cut short: %s" % (label, infos[label]["cut"]))
    return 1 if bad or not windows or any(
        infos[l].get("rounds_run", 0) == 0 for l in infos) else 0


def make_meta(a, configs, workloads):
    try:
        version = subprocess.run([a.gtrace, "--version"], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        version = None
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "host": os.uname().nodename,
            "gtrace": a.gtrace, "gtrace_version": version, "workloads": workloads,
            "configs": {n: o for n, o in configs},
            "light_like": {n: o is not None and any(x in ("--mode", "-c", "--capture-range") or
                                                    x.startswith(("--mode=", "--capture")) for x in o)
                           for n, o in configs},
            "rounds": a.rounds, "on": a.on, "off": a.off, "guard": a.guard, "min_steps": a.min_steps,
            "pairs": ["%s:%s" % p for p in a.pairs_list],
            "cpus_workload": a.cpus_workload, "cpus_tool": a.cpus_tool, "tool_opts": a.tool_opts,
            "statistic": "median step time on / off - 1, per window; median and min..max over windows",
            "argv": sys.argv}


def analyze_dir(a):
    """The tables again from a run's windows.jsonl and step logs (traces
    are not read again)."""
    d = a.analyze
    windows = []
    with open(os.path.join(d, "windows.jsonl")) as f:
        for line in f:
            if line.strip():
                windows.append(json.loads(line))
    old = {}
    try:
        with open(os.path.join(d, "inproc.json")) as f:
            old = json.load(f)
    except (OSError, ValueError):
        pass
    meta = old.get("meta") or {"rounds": a.rounds, "on": a.on, "off": a.off, "guard": a.guard,
                               "light_like": {}}
    a.out = d
    a.guard = meta.get("guard", a.guard)
    a.pairs_list = [tuple(p.split(":", 1)) for p in meta.get("pairs", [])]
    no_steps = not any(w.get("has_steps") for w in windows)
    a.no_steps = no_steps
    # keep the trace figures read during the run
    by_key = {}
    try:
        import csv
        with open(os.path.join(d, "inproc.csv")) as f:
            for row in csv.DictReader(f):
                by_key[(row["workload"], row["config"], row["round"])] = row
    except OSError:
        pass
    for w in windows:
        row = by_key.get((w["workload"], w["config"], str(w["round"])), {})
        for k in ("trace_bytes", "records", "calls", "dropped", "pid_launches", "capture_windows",
                  "attach_lat_med_ns", "attach_lat_max_ns", "detach_lat_med_ns", "detach_lat_max_ns"):
            if row.get(k) not in (None, ""):
                w[k] = int(float(row[k]))
        if row.get("sampler_cpu_pct") not in (None, ""):
            w["sampler_cpu_pct"] = float(row["sampler_cpu_pct"])
        if row.get("ok") in ("False", "True"):
            w["ok"], w["error"] = row["ok"] == "True", row.get("error", "")
    infos = {}
    for w in windows:
        infos.setdefault(w["workload"], (old.get("workloads", {}).get(w["workload"]) or
                                         {"rounds_run": max(x["round"] for x in windows
                                                            if x["workload"] == w["workload"])}))
    per_wl = finish(a, meta, windows, infos, None)
    print(write_outputs(d, meta, windows, per_wl, no_steps))
    return 0


# --- selftest ---------------------------------------------------------------

def simulate(plan, base_ns, jitter, drift_per_s, rng, guard_ns, on_ns, off_ns, attach_ns, stop_ns,
             stall_every=0, stall_ns=0):
    """A step log and a schedule as the driver would make them: windows of
    on_ns in which each step is slower by plan[i] (a fraction), quiet
    periods of guard + off between them, a recorder start-up of attach_ns
    (no slowdown) and a stop of stop_ns (slowed down as in the window).
    Step times: base_ns * (1 + drift_per_s * t) * lognormal(jitter), with a
    stall of stall_ns every stall_every-th step."""
    windows = []
    t = 10 ** 12
    times = [t]
    quiet = t
    sched = []  # (start, end, factor)
    for i, f in enumerate(plan):
        spawn = quiet + guard_ns + off_ns
        on0 = spawn + attach_ns
        on1 = on0 + on_ns
        ex = on1 + stop_ns
        sched.append((on0, ex, f))
        windows.append({"workload": "sim", "config": "c%d" % (i % 4), "round": i // 4 + 1, "ok": True,
                        "quiet_start_ns": quiet, "spawn_ns": spawn, "on_start_ns": on0,
                        "on_end_ns": on1, "exit_ns": ex})
        quiet = ex
    for i in range(len(windows) - 1):
        windows[i]["next_spawn_ns"] = windows[i + 1]["spawn_ns"]
    windows[-1]["next_spawn_ns"] = quiet + guard_ns + off_ns
    end = quiet + guard_ns + off_ns
    k = 0
    n = 0
    while t < end:
        while k < len(sched) and sched[k][1] <= t:
            k += 1
        f = sched[k][2] if k < len(sched) and sched[k][0] <= t < sched[k][1] else 0.0
        d = base_ns * (1 + drift_per_s * (t - times[0]) / 1e9)
        if jitter:
            d *= math.exp(rng.gauss(0, jitter))
        n += 1
        if stall_every and n % stall_every == 0:
            d += stall_ns
        t += int(d * (1 + f))
        times.append(t)
    return Steps(times), windows


def selftest():
    import unittest

    class T(unittest.TestCase):
        MS = 1000000

        def test_exact_planted(self):
            # 10 ms steps, 10.5 ms inside windows: exactly +5 % by both statistics
            steps, ws = simulate([0.05] * 8, 10 * self.MS, 0, 0, None, self.MS // 2, 4000 * self.MS,
                                 4000 * self.MS, 300 * self.MS, 200 * self.MS)
            for w in ws:
                analyze_window(w, steps, self.MS // 2, 5)
                self.assertAlmostEqual(w["ratio_median"], 0.05, places=6)
                self.assertAlmostEqual(w["ratio_mean"], 0.05, places=6)
                self.assertAlmostEqual(w["ratio_bracketed"], 0.05, places=6)
                # a 4 s window of 10.5 ms steps holds 380 or 381 complete steps
                self.assertIn(w["steps_on"], (380, 381))
                self.assertIn(w["steps_off"], (399, 400))
            s = summarize(ws)
            self.assertEqual(s["c0"]["windows"], 2)
            self.assertEqual(pct(s["c0"]["ratio_median"]["median"]), "+5.0 %")

        def test_noisy_planted(self):
            rng = random.Random(13)
            plan = [0.0, 0.02, 0.05, 0.10] * 6
            steps, ws = simulate(plan, 6 * self.MS, 0.02, 0, rng, self.MS // 2, 4000 * self.MS,
                                 4000 * self.MS, 800 * self.MS, 300 * self.MS,
                                 stall_every=97, stall_ns=40 * self.MS)
            for w in ws:
                analyze_window(w, steps, self.MS // 2, 5)
            s = summarize(ws)
            for i, want in enumerate([0.0, 0.02, 0.05, 0.10]):
                got = s["c%d" % i]["ratio_median"]["median"]
                self.assertAlmostEqual(got, want, delta=0.003, msg="c%d: %s" % (i, got))
                self.assertEqual(s["c%d" % i]["used"], 6)
                lo, hi = s["c%d" % i]["ratio_median"]["min"], s["c%d" % i]["ratio_median"]["max"]
                self.assertTrue(lo <= got <= hi)
                self.assertLess(hi - lo, 0.03)

        def test_stall_moves_mean_not_median(self):
            # one 300 ms stall inside each window: the median does not see it,
            # the mean does (300 ms over ~4 s of steps: ~ +7.5 % more)
            steps, ws = simulate([0.05] * 4, 10 * self.MS, 0, 0, None, self.MS // 2, 4000 * self.MS,
                                 4000 * self.MS, 300 * self.MS, 200 * self.MS)
            t = list(steps.t)
            for w in ws:
                mid = (w["on_start_ns"] + w["on_end_ns"]) // 2
                i = bisect.bisect_left(t, mid)
                t = t[:i] + [x + 300 * self.MS for x in t[i:]]
                for later in ws[ws.index(w) + 1:]:
                    for k in ("quiet_start_ns", "spawn_ns", "on_start_ns", "on_end_ns", "exit_ns",
                              "next_spawn_ns"):
                        later[k] += 300 * self.MS
                w["on_end_ns"] += 300 * self.MS
                w["exit_ns"] += 300 * self.MS
                w["next_spawn_ns"] += 300 * self.MS
            steps = Steps(t)
            for w in ws:
                analyze_window(w, steps, self.MS // 2, 5)
                self.assertAlmostEqual(w["ratio_median"], 0.05, places=6)
                self.assertGreater(w["ratio_mean"], 0.10)
                self.assertLess(w["ratio_mean"], 0.14)

        def test_drift(self):
            # a steady rise of 0.5 %/s: pairing with the period before reads
            # it as slowdown (the window is ~4.7 s later on average); the
            # bracketed ratio cancels it
            steps, ws = simulate([0.05] * 8, 10 * self.MS, 0, 0.005, None, self.MS // 2,
                                 4000 * self.MS, 4000 * self.MS, 300 * self.MS, 200 * self.MS)
            for w in ws:
                analyze_window(w, steps, self.MS // 2, 5)
            s = summarize(ws)
            rm = s["c0"]["ratio_median"]["median"]
            rb = s["c0"]["ratio_bracketed"]["median"]
            self.assertGreater(rm, 0.065)  # 1.05 * (1 + ~0.005 * 4.3 s / (1 + drift so far)) - 1
            self.assertAlmostEqual(rb, 0.05, delta=0.002)

        def test_boundaries(self):
            ms = self.MS
            # steps of 10 ms, one 1000 ms step straddling the window's start
            # and one straddling its end: neither is counted
            t = [0]
            for _ in range(100):
                t.append(t[-1] + 10 * ms)  # 0 .. 1000 ms
            t.append(t[-1] + 1000 * ms)    # 1000 .. 2000, across 1500
            for _ in range(50):
                t.append(t[-1] + 11 * ms)  # 2000 .. 2550
            t.append(t[-1] + 1000 * ms)    # 2550 .. 3550, across 3000
            steps = Steps(t)
            self.assertEqual(steps.durations(1500 * ms, 3000 * ms), [11 * ms] * 50)
            # exact edges count: a step from t0 to t1 is inside [t0, t1]
            self.assertEqual(steps.durations(0, 10 * ms), [10 * ms])
            self.assertEqual(steps.durations(1, 10 * ms), [])
            self.assertEqual(steps.durations(0, 10 * ms - 1), [])
            self.assertEqual(steps.durations(5 * ms, 5 * ms), [])
            self.assertEqual(steps.durations(None, 5), [])
            self.assertEqual(len(Steps([])), 0)
            self.assertEqual(Steps([5]).durations(0, 10), [])

        def test_no_complete_step(self):
            # a window shorter than a step: no ratio, left out of the summary
            t = [i * 10 * self.MS for i in range(1000)]
            steps = Steps(t)
            w = {"config": "x", "ok": True, "quiet_start_ns": 0, "spawn_ns": 5000 * self.MS,
                 "on_start_ns": 5001 * self.MS, "on_end_ns": 5009 * self.MS, "exit_ns": 5100 * self.MS,
                 "next_spawn_ns": 9000 * self.MS}
            analyze_window(w, steps, self.MS // 2, 1)
            self.assertEqual(w["steps_on"], 0)
            self.assertIsNone(w["ratio_median"])
            self.assertIsNone(w["on_median_ns"])
            w2 = dict(w, on_start_ns=6000 * self.MS, on_end_ns=6100 * self.MS, spawn_ns=5990 * self.MS)
            analyze_window(w2, steps, self.MS // 2, 5)
            self.assertAlmostEqual(w2["ratio_median"], 0.0)
            s = summarize([w, w2])
            self.assertEqual((s["x"]["windows"], s["x"]["used"]), (2, 1))
            self.assertAlmostEqual(s["x"]["ratio_median"]["median"], 0.0)
            s = summarize([w])
            self.assertIsNone(s["x"]["ratio_median"]["median"])
            self.assertEqual(pct(s["x"]["ratio_median"]["median"]), "n/a")

        def test_min_steps_and_failed(self):
            t = [i * 10 * self.MS for i in range(2000)]
            steps = Steps(t)
            w = {"config": "x", "ok": True, "quiet_start_ns": 0, "spawn_ns": 5000 * self.MS,
                 "on_start_ns": 5100 * self.MS, "on_end_ns": 5140 * self.MS, "exit_ns": 5200 * self.MS,
                 "next_spawn_ns": 9000 * self.MS}
            analyze_window(w, steps, self.MS // 2, 5)
            self.assertEqual(w["steps_on"], 4)
            self.assertIsNone(w["ratio_median"])  # 4 < 5 steps
            analyze_window(w, steps, self.MS // 2, 4)
            self.assertAlmostEqual(w["ratio_median"], 0.0)
            bad = dict(w, ok=False)
            s = summarize([bad])
            self.assertEqual((s["x"]["windows"], s["x"]["failed"], s["x"]["used"]), (1, 1, 0))

        def test_off_interval(self):
            ms = self.MS
            # guard after the previous exit is left out
            self.assertEqual(off_interval(0, 4500 * ms, 4000 * ms, 500 * ms), (500 * ms, 4500 * ms))
            self.assertEqual(off_interval(0, 3000 * ms, 4000 * ms, 500 * ms), (500 * ms, 3000 * ms))
            self.assertEqual(off_interval(0, 9000 * ms, 4000 * ms, 500 * ms), (5000 * ms, 9000 * ms))
            self.assertIsNone(off_interval(0, 400 * ms, 4000 * ms, 500 * ms))
            self.assertIsNone(off_interval(0, 500 * ms, 4000 * ms, 500 * ms))
            self.assertIsNone(off_interval(None, 500 * ms, 4000 * ms, 500 * ms))
            self.assertEqual(after_interval(1000 * ms, 9000 * ms, 4000 * ms, 500 * ms),
                             (1500 * ms, 5500 * ms))
            self.assertEqual(after_interval(1000 * ms, 3000 * ms, 4000 * ms, 500 * ms),
                             (1500 * ms, 3000 * ms))
            self.assertIsNone(after_interval(1000 * ms, 1200 * ms, 4000 * ms, 500 * ms))
            # steps in the guard are not counted: slow steps there change nothing
            t = [0]
            for i in range(900):
                t.append(t[-1] + (50 if t[-1] < 500 * ms else 10) * ms)
            steps = Steps(t)
            w = {"config": "x", "ok": True, "quiet_start_ns": 0, "spawn_ns": 4500 * ms,
                 "on_start_ns": 4600 * ms, "on_end_ns": 8600 * ms, "exit_ns": 8700 * ms,
                 "next_spawn_ns": 13200 * ms}
            analyze_window(w, steps, 500 * ms, 5)
            self.assertEqual(w["off_median_ns"], 10 * ms)
            self.assertEqual(w["off_mean_ns"], 10 * ms)
            self.assertEqual((w["off_start_ns"], w["off_end_ns"]), (500 * ms, 4500 * ms))

        def test_median_mean(self):
            self.assertEqual(median([3, 1, 2]), 2)
            self.assertEqual(median([4, 1, 2, 3]), 2.5)
            self.assertIsNone(median([]))
            self.assertEqual(mean([1, 2, 6]), 3)
            self.assertIsNone(mean([]))

        def test_rotate(self):
            c = ["a", "b", "c", "d"]
            self.assertEqual([rotate(c, r) for r in range(5)],
                             [c, ["b", "c", "d", "a"], ["c", "d", "a", "b"], ["d", "a", "b", "c"], c])
            # over len(c) rounds every config is in every slot once
            for i in range(4):
                self.assertEqual(sorted(rotate(c, r)[i] for r in range(4)), c)
            self.assertEqual(rotate([], 3), [])

        def test_pairs(self):
            ws = []
            for r, (ra, rb) in enumerate([(0.03, 0.01), (0.0, 0.02), (0.05, 0.05), (None, 0.0)], 1):
                ws.append({"config": "a", "round": r, "ok": True, "ratio_median": ra})
                ws.append({"config": "b", "round": r, "ok": ra is not None, "ratio_median": rb})
            ws.append({"config": "c", "round": 1, "ok": True, "ratio_median": 0.5})
            p = pair_summary(ws, [("a", "b")])["a:b"]
            # round 4 has no ratio for a: left out
            self.assertEqual(p["n"], 3)
            self.assertAlmostEqual(p["values"][0], 1.03 / 1.01 - 1)
            self.assertAlmostEqual(p["values"][1], 1.0 / 1.02 - 1)
            self.assertAlmostEqual(p["values"][2], 0.0)
            self.assertAlmostEqual(p["median"], 0.0)
            self.assertAlmostEqual(p["min"], 1.0 / 1.02 - 1)
            self.assertAlmostEqual(p["max"], 1.03 / 1.01 - 1)
            # mean and its interval: t with 2 degrees of freedom (4.303)
            v = p["values"]
            mu = sum(v) / 3
            sd = (sum((x - mu) ** 2 for x in v) / 2) ** 0.5
            self.assertAlmostEqual(p["mean"], mu)
            self.assertAlmostEqual(p["ci95_hi"] - mu, 4.303 * sd / 3 ** 0.5)
            self.assertAlmostEqual(mu - p["ci95_lo"], 4.303 * sd / 3 ** 0.5)
            self.assertEqual(mean_ci95([0.1]), (0.1, None, None))
            lo40, hi40 = mean_ci95([0.1] * 40)[1:]
            self.assertAlmostEqual(lo40, 0.1)
            self.assertAlmostEqual(hi40, 0.1)
            self.assertEqual(parse_pairs("gpum-10:gpum-off, gpum-100:gpum-off", ["gpum-off", "gpum-10", "gpum-100"]),
                             [("gpum-10", "gpum-off"), ("gpum-100", "gpum-off")])
            self.assertEqual(parse_pairs("", ["a"]), [])
            self.assertRaises(ValueError, parse_pairs, "a:z", ["a", "b"])
            self.assertRaises(ValueError, parse_pairs, "a:a", ["a", "b"])
            self.assertRaises(ValueError, parse_pairs, "ab", ["a", "b"])

        def test_sampler_line(self):
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "e")
                with open(p, "w") as f:
                    f.write("gtrace-bpf: recording to x\ngtrace-bpf: GPU metrics: 30 samples, 0 missed (the sampler late), 300 records (0 of "
                            "process memory), 0 read errors, 0 dropped, 0 GPUs lost mid-run, 0 in MIG mode; the "
                            "sampler's threads used 12.5 ms of CPU in 3.0 s (0.417% of one CPU, measured: the "
                            "recorder's own cost)\n")
                self.assertEqual(read_sampler(p), {"sampler_cpu_pct": 0.417})
                self.assertEqual(read_sampler(os.path.join(d, "none")), {})

        def test_parse_configs(self):
            got = parse_configs("full,light,mine=--trace cuda,ioctl --buffer-size 1G,none")
            self.assertEqual(got, [("full", []), ("light", ["--mode", "light"]),
                                   ("mine", ["--trace", "cuda,ioctl", "--buffer-size", "1G"]),
                                   ("none", None)])
            self.assertEqual(parse_configs(DEFAULT_CONFIGS)[3],
                             ("outside-range-light", ["--mode", "light", "-c", "cudaProfilerApi"]))
            self.assertRaises(ValueError, parse_configs, "bogus")
            self.assertRaises(ValueError, parse_configs, "full,full")
            self.assertRaises(ValueError, parse_configs, "none,ioctl")

        def test_pct(self):
            self.assertEqual(pct(0.05), "+5.0 %")
            self.assertEqual(pct(-0.0123), "-1.2 %")
            self.assertEqual(pct(-0.00001), "+0.0 %")
            self.assertEqual(pct(None), "n/a")
            self.assertEqual(pct_range(-0.01, 0.03), "-1.0 .. +3.0 %")
            self.assertEqual(pct_range(None, None), "n/a")

        def test_step_log(self):
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "s")
                with open(p, "w") as f:
                    f.write("100\n200\n350\n42")  # last line cut short, and not in order
                self.assertEqual(read_step_log(p), [100, 200, 350])
                with open(p, "w") as f:
                    f.write("100\n200\n35")
                self.assertEqual(read_step_log(p), [100, 200])  # 35 < 200: cut
                self.assertEqual(read_step_log(os.path.join(d, "missing")), [])

        def test_summary_parse(self):
            text = ("api  calls failed incomplete total_dur_ns\ncuLaunchKernel 1716 - 0 -\n"
                    "total                                        3432          0          0  0\n"
                    "counters\n  events   3455\n  drop_ringbuf  2\n  drop_stash  1\n"
                    "  records_written                            3460\n")
            self.assertEqual(parse_summary(text), {"calls": 3432, "dropped": 3, "records": 3460})
            self.assertEqual(parse_summary("garbage\n"), {})

        def test_dump_parse(self):
            lines = [
                '{"ts":1,"pid":7,"tid":7,"type":"process","event":"seen"}',
                '{"ts":2,"pid":7,"tid":7,"type":"launch","api":"cuLaunchKernel"}',
                '{"ts":3,"pid":7,"tid":7,"type":"launch","api":"cuLaunchKernelEx"}',
                '{"ts":4,"pid":8,"tid":8,"type":"call","api":"cuInit"}',
                '{"ts":4,"pid":8,"tid":8,"type":"process","event":"seen"}',
                '{"ts":5,"pid":0,"type":"capture","kind":"window_open","latency_ns":2000000}',
                '{"ts":6,"pid":0,"type":"capture","kind":"window_close","latency_ns":500000}',
                '{"ts":7,"pid":0,"type":"capture","kind":3,"latency_ns":4000000}',
                '{"ts":8,"pid":0,"type":"capture","kind":"hot_off"}',
                '{"type":"capture", broken',
                '{"ts":9,"pid":0,"type":"capture","kind":"range_open","latency_ns":0}',
                'not json at all "capture"',
            ]
            d = parse_dump(lines, 7)
            self.assertEqual((d["pid_launches"], d["other_pid_records"]), (2, 1))
            st = capture_stats(d["captures"])
            self.assertEqual(st["capture_records"], 5)
            self.assertEqual(st["capture_windows"], 2)
            self.assertEqual((st["attach_lat_med_ns"], st["attach_lat_max_ns"]), (3000000, 4000000))
            self.assertEqual((st["detach_lat_med_ns"], st["detach_lat_max_ns"]), (500000, 500000))
            none = capture_stats(parse_dump(['{"type":"launch","pid":1}'], None)["captures"])
            self.assertEqual((none["capture_records"], none["attach_lat_med_ns"]), (0, None))
            w = {"config": "l", "ok": True, "ratio_median": None, "steps_on": 0, "steps_off": 0,
                 "on_median_ns": None, "off_median_ns": None}
            w.update(none)
            s = summarize([w])["l"]
            self.assertEqual((s["attach_lat_ns"]["n"], s["attach_lat_ns"]["median"]), (0, None))
            self.assertEqual(ms(s["attach_lat_ns"]["median"]), "n/a")

        def test_outputs(self):
            steps, ws = simulate([0.05, 0.0] * 4, 10 * self.MS, 0, 0, None, self.MS // 2,
                                 1000 * self.MS, 1000 * self.MS, 100 * self.MS, 100 * self.MS)
            for w in ws:
                w["config"] = "a" if w["config"] in ("c0", "c2") else "b"
                analyze_window(w, steps, self.MS // 2, 5)
            meta = {"rounds": 4, "on": 1, "off": 1, "guard": 0.5, "light_like": {}}
            info = {"rounds_run": 4, "summary": summarize(ws)}
            with tempfile.TemporaryDirectory() as d:
                text = write_outputs(d, meta, ws, {"sim": info}, False)
                self.assertRegex(text, r"\ba\s+4/4\s+\+5\.0 %\s+\+5\.0 \.\. \+5\.0 %")
                self.assertRegex(text, r"\bb\s+4/4\s+\+0\.0 %")
                import csv
                rows = list(csv.DictReader(open(os.path.join(d, "inproc.csv"))))
                self.assertEqual(len(rows), 8)
                self.assertAlmostEqual(float(rows[0]["ratio_median"]), 0.05, places=6)
                js = json.load(open(os.path.join(d, "inproc.json")))
                self.assertAlmostEqual(js["workloads"]["sim"]["summary"]["a"]["ratio_median"]["median"],
                                       0.05, places=6)

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(T)
    res = unittest.TextTestRunner(verbosity=1, stream=sys.stdout).run(suite)
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
