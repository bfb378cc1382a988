#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What light mode's full-capture windows cost a running program, measured
at the time scale of the windows themselves, inside one process.

inproc.py compares windows of a few seconds with and without a recorder;
on the GPU machine the step time of one process wanders by up to +-15 %
between such stretches, which hides a 1 % effect. Light mode's cost has two
parts: the probes that stay attached all the time (rare calls: waits,
allocations; estimated from their hit counts by the daemon) and its
full-capture windows, where every launch traps. This script measures the
second part where the noise is smallest: one light-mode recorder runs with
frequent windows, and each window is compared with the stretch just before
it, a few hundred milliseconds earlier.

  python3 tools/bench/light_windows.py [--workload torch,transformer]
      [--window 200ms] [--period 1s] [--record 120] [--quiet 60]
      [--gtrace ./gtrace-bpf] [--cpus-workload 2,3] [--cpus-tool 4-7] [--out DIR]
  python3 tools/bench/light_windows.py --gpum HZ [--window 1s --period 2s] ...
  python3 tools/bench/light_windows.py --analyze DIR
  python3 tools/bench/light_windows.py --selftest

Per workload: start it (tools/bench/torch_step.py or transformer_step.py,
--steady with a step log), wait for "ready"; --quiet seconds with nothing
attached; then `gtrace-bpf -p PID --mode light --light-window=WINDOW/PERIOD`
for --record seconds; SIGINT; the workload is stopped. The trace's capture
records give each window: its attach start (window_open's ts minus its
latency_ns), the time its probes were live (window_open's ts), its close
(window_close's ts) and when the detach ended (+ latency_ns).

Per window, with "before" = the stretch of the window's length ending at
its attach start (the always-on probes only; never earlier than the end of
the previous window's detach):
  ratio   = median step time from live to close / median step time before - 1:
            what every launch's trap costs while the window is open;
  excess  = sum over the steps from the attach start to the detach's end
            (+ --tail) of (step time - the median step time before): the
            time the whole window cost the program, its attach and detach
            included;
and per workload: the median and range of the ratios, the mean excess per
window with a bootstrap 95 % interval (2000 resamples, seed 1), and what it
makes at light mode's default 200 ms every 5 s (excess / 5 s) and at the
period used. The quiet stretch gets the same arithmetic over a made-up
schedule of the same windows with nothing attached: its figures are the
method's noise floor and should read 0.

A window has every probe live, as full mode has all the time: the ratio
is full mode's cost at this time scale (the always-on rest is light mode's
counted rare calls). --tool-opts "--stacks all" gives the windows full
mode's launch stacks (light mode takes the waits' only), "--stacks none"
none: run each in turn for what the stacks add (docs/PERFORMANCE.md, "Full
mode's cost at the windows' time scale").

With --gpum HZ the same arithmetic measures the GPU-metrics sampler
instead: the recorder runs in light mode outside any capture range (`-c
cudaProfilerApi`: probes quiet, nothing written but the samples) with
--gpu-metrics=HZ and GTRACE_GPUM_BURST=WINDOW/PERIOD, so that the sampler
works only in the first WINDOW of every PERIOD; each burst of samples (its
first to its last sample) is a window, compared with the stretch before it.
Its ratio is what sampling costs while it runs, and so what it costs all
the time at that rate; "cost" is then the mean excess / WINDOW.

With --bare FUNCS the windows are a bare counting uprobe's instead of a
recorder's: every --period, `gtrace-bpf census --functions FUNCS` runs a
child that sleeps --window (census puts a uprobe on those functions of
libcuda, whose trap every process mapping it pays, and counts the child's
calls only: the job's cost is the trap and a map lookup). The window is the
child's own span (it prints its clock when it starts and when it wakes),
its attach from census' start, its detach to census' exit; the next starts
a --period after it, and never sooner than --window and --tail after its
exit (a slow census leaves the next window its stretch before). The ratio is the
floor any tracer with a uprobe on those calls pays at this time scale, the
figure full mode's ratios stand on (--bare cuLaunchKernel,cuLaunchKernelEx
for the launches).

With --daemon BUDGET the recorder is `gtrace-bpf daemon --budget BUDGET`
with its default light mode: its windows are light mode's 200 ms at the
period its budget keeps (the windows' median spacing, printed), their
capture records from a snapshot taken at the end, and its own estimate from
`status` (overhead_mean_estimate_pct) beside the measured cost; the cost
column is then the mean excess / that period.

Output in DIR: light_windows.txt (also printed), light_windows.json, the step
logs (WORKLOAD.steps), the dumps' capture lines (WORKLOAD.capture.jsonl),
the recorders' stderr. Exit status 1 when a workload or recorder failed.
"""
import argparse, json, os, random, re, shlex, signal, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import inproc  # noqa: E402  (median, step logs, line waiting)

median, Steps, now = inproc.median, inproc.Steps, inproc.now
DEFAULT_PERIOD_NS = 5_000_000_000  # light mode's default: a window every 5 s
BOOT_N, BOOT_SEED = 2000, 1


def parse_time(s):
    m = re.fullmatch(r"([0-9.]+)(ms|s|us)?", s.strip())
    if not m:
        raise argparse.ArgumentTypeError("not a time: %r (e.g. 200ms, 1s)" % s)
    v = float(m.group(1)) * {"ms": 1e6, "us": 1e3, "s": 1e9, None: 1e9}[m.group(2)]
    if v <= 0:
        raise argparse.ArgumentTypeError("a time must be above 0: %r" % s)
    return int(v)


def boot_ci(xs, stat, n=BOOT_N, seed=BOOT_SEED):
    """95 % percentile-bootstrap interval of stat over xs."""
    if len(xs) < 2:
        return None, None
    rng = random.Random(seed)
    vals = sorted(stat([xs[rng.randrange(len(xs))] for _ in xs]) for _ in range(n))
    return vals[int(0.025 * n)], vals[min(int(0.975 * n), n - 1)]


def windows_from_captures(caps):
    """(attach_start, live, close, detach_end) per window from dump capture
    dicts (window_open / window_close in order); a window without its close
    (the recording ended in it) is left out."""
    out, cur = [], None
    for c in caps:
        k, ts, lat = c.get("kind"), c.get("ts"), c.get("latency_ns") or 0
        if k == "window_open":
            cur = (ts - lat, ts)
        elif k == "window_close" and cur:
            out.append((cur[0], cur[1], ts, ts + lat))
            cur = None
    return out


def windows_from_samples(ts, gap_ns):
    """(first, first, last, last) per burst of GPU-metric sample times
    (bursts: runs of samples less than gap_ns apart); the last burst, which
    the recording's end may have cut, is left out."""
    ts = sorted(set(ts))
    if not ts:
        return []
    out, first, prev = [], ts[0], ts[0]
    for t in ts[1:]:
        if t - prev >= gap_ns:
            out.append((first, first, prev, prev))
            first = t
        prev = t
    return out


def measure(steps, wins, win_len, tail_ns, min_steps=5):
    """The per-window figures (see the module's text) over Steps."""
    rows, prev_end = [], None
    for att, live, close, det_end in wins:
        lo = att - win_len
        if prev_end is not None:
            lo = max(lo, prev_end)
        before = steps.durations(lo, att)
        inside = steps.durations(live, close)
        prev_end = det_end + tail_ns
        if len(before) < min_steps or len(inside) < min_steps:
            continue
        ref = median(before)
        span = steps.durations(att, det_end + tail_ns)
        rows.append({"attach_ns": att, "ratio": median(inside) / ref - 1,
                     "excess_ns": sum(d - ref for d in span), "steps_in": len(inside),
                     "steps_before": len(before), "ref_ns": ref})
    return rows


def summarize(rows, period_ns, default_ns=None):
    if not rows:
        return {"windows": 0}
    r = [x["ratio"] for x in rows]
    e = [x["excess_ns"] for x in rows]
    mean = lambda xs: sum(xs) / len(xs)
    lo, hi = boot_ci(e, mean)
    rlo, rhi = boot_ci(r, median)
    s = {"windows": len(rows), "ratio_median": median(r), "ratio_min": min(r), "ratio_max": max(r),
         "ratio_ci": [rlo, rhi], "excess_mean_ns": mean(e), "excess_ci_ns": [lo, hi],
         "steps_in": median([x["steps_in"] for x in rows]), "ref_ns": median([x["ref_ns"] for x in rows])}
    for key, per in (("default", default_ns or DEFAULT_PERIOD_NS), ("period", period_ns)):
        s["cost_" + key] = s["excess_mean_ns"] / per
        s["cost_%s_ci" % key] = [v / per if v is not None else None for v in (lo, hi)]
    return s


def fake_windows(t0, t1, win_len, period, attach_ns=8_000_000, detach_ns=350_000_000):
    """The schedule of a recording's windows laid over a stretch with
    nothing attached (the noise floor)."""
    out, t = [], t0 + period
    while t + win_len + detach_ns < t1:
        out.append((t - attach_ns, t, t + win_len, t + win_len + detach_ns))
        t += period
    return out


def pct(x):
    return "n/a" if x is None else "%+.2f %%" % (100 * x)


def report(res):
    if res.get("gpum_hz"):
        lines = ["the GPU-metrics sampler at %d Hz, each burst of sampling measured against the stretch "
                 "just before it" % res["gpum_hz"],
                 "(bursts of %s every %s; the cost column = mean excess / %s: sampling all the time)" % (
                     res["window"], res["period"], res["window"]), ""]
    elif res.get("bare"):
        lines = ["a bare counting uprobe on %s (gtrace-bpf census), its windows measured against the stretch "
                 "just before each one" % res["bare"],
                 "(window %s every %s: the trap's floor under a recorder's ratios)" % (res["window"], res["period"]),
                 ""]
    elif res.get("daemon"):
        lines = ["the daemon's light-mode windows (--budget %s), measured against the stretch just before each one"
                 % res["daemon"],
                 "(window %s at the period the budget kept; the cost column = mean excess / that period)"
                 % res["window"], ""]
    else:
        lines = ["light mode's windows, measured against the stretch just before each one",
                 "(window %s every %s; cost at the default 200 ms every 5 s = mean excess / 5 s)" % (
                     res["window"], res["period"]), ""]
    head = "%-12s %-10s %7s %9s %-19s %-19s %11s %-23s %s" % (
        "workload", "part", "windows", "ratio", "ratio min..max", "ratio 95% CI", "excess ms",
        "excess 95% CI ms", "cost always on (95% CI)" if res.get("gpum_hz") else "cost at its period (95% CI)"
        if res.get("daemon") else "cost at 200ms/5s (95% CI)")
    lines.append(head)
    for wl, w in res["workloads"].items():
        for part in ("noise", "windows"):
            s = w.get(part) or {"windows": 0}
            if not s["windows"]:
                lines.append("%-12s %-10s %7d" % (wl, part, 0))
                continue
            ci = s["excess_ci_ns"]
            c = s["cost_default_ci"]
            lines.append("%-12s %-10s %7d %9s %-19s %-19s %11.3f %-23s %s (%s .. %s)" % (
                wl, part, s["windows"], pct(s["ratio_median"]),
                "%s .. %s" % (pct(s["ratio_min"]), pct(s["ratio_max"])),
                "%s .. %s" % (pct(s["ratio_ci"][0]), pct(s["ratio_ci"][1])),
                s["excess_mean_ns"] / 1e6,
                "%.3f .. %.3f" % (ci[0] / 1e6, ci[1] / 1e6) if ci[0] is not None else "n/a",
                pct(s["cost_default"]), pct(c[0]), pct(c[1])))
        if w.get("period_ms"):
            lines.append("%-12s the daemon (--budget %s): its windows every %.0f ms (median), the cost column = "
                         "mean excess / that period; its own estimate: %s %% (mean over its run)" % (
                             "", res.get("daemon"), w["period_ms"], w.get("daemon_estimate") or "n/a"))
        if w.get("step_ms"):
            lines.append("%-12s step %.3f ms; attach median %.1f ms, detach median %.1f ms%s" % (
                "", w["step_ms"], (w.get("attach_ms") or 0), (w.get("detach_ms") or 0),
                "; " + w["error"] if w.get("error") else ""))
    return "\n".join(lines) + "\n"


def run_workload(a, wl, out):
    res = {"error": None}
    log = os.path.join(out, wl + ".steps")
    secs = "%g" % (a.quiet + a.record + 120)
    if wl == "cmd":
        words = [x.replace("{step_log}", log).replace("{seconds}", secs) for x in shlex.split(a.workload_cmd)]
    else:
        words = [a.python, inproc.WORKLOADS[wl], "--steady", secs, "--step-log", log]
    cmd = (["taskset", "-c", a.cpus_workload] if a.cpus_workload else []) + words
    werr = open(os.path.join(out, wl + ".err"), "wb")
    wout = open(os.path.join(out, wl + ".out"), "wb")
    print("light_windows: %s: starting %s" % (wl, " ".join(cmd)), file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=werr,
                            start_new_session=True, cwd=inproc.ROOT)
    try:
        if inproc.wait_line(proc, proc.stdout, r"^ready\b", 300, wout) is None:
            res["error"] = "the workload never became ready"
            return res
        inproc.drain(proc.stdout, wout)
        q0 = now()
        time.sleep(a.quiet)
        res["quiet_ns"] = [q0, now()]
        trace = os.path.join(out, wl + ".gtrace")
        ms = "%dms/%dms" % (a.window // 1_000_000, a.period // 1_000_000)
        env = dict(os.environ)
        if a.gpum:
            what = ["-c", "cudaProfilerApi", "--gpu-metrics=%d" % a.gpum]
            env["GTRACE_GPUM_BURST"] = ms.replace("ms", "")
        else:
            what = ["--light-window=" + ms]
        if a.bare:
            res["error"] = bare_windows(a, out, wl)
            if proc.poll() is not None:
                res["error"] = "the workload exited during the run"
            return res
        if a.daemon:
            # the daemon as it runs in production: its own windows and period
            rundir = tempfile.mkdtemp(prefix="gtrace-lw-daemon.")
            env["GTRACE_RUN_DIR"] = rundir
            rcmd = [a.gtrace, "daemon", "--dir", rundir, "--budget", a.daemon,
                    "--window", "%ds" % (a.record + 60), "--memory", "1G"]
            ready = r"^gtrace-bpf: recording"
        else:
            rcmd = [a.gtrace, "-p", str(proc.pid), "--mode", "light"] + what + ["-o", trace, "--force"]
            ready = r"recording to "
        rcmd = (["taskset", "-c", a.cpus_tool] if a.cpus_tool else []) + rcmd + shlex.split(a.tool_opts)
        rerr = open(os.path.join(out, wl + "-recorder.err"), "wb")
        rec = subprocess.Popen(rcmd, stdin=subprocess.DEVNULL, stdout=rerr, stderr=subprocess.PIPE,
                               start_new_session=True, env=env)
        if inproc.wait_line(rec, rec.stderr, ready, 60, rerr) is None:
            res["error"] = "the recorder did not start"
            rec.kill()
            rec.wait()
            return res
        th = inproc.drain(rec.stderr, rerr)
        time.sleep(a.record)
        if a.daemon:
            for what, args in (("status", ["status"]), ("snapshot", ["snapshot", "-o", trace])):
                r = subprocess.run([a.gtrace] + args, env=env, capture_output=True, text=True, errors="replace")
                with open(os.path.join(out, "%s.%s" % (wl, what)), "w") as f:
                    f.write(r.stdout + r.stderr)
                if r.returncode:
                    res["error"] = "gtrace-bpf %s exited with status %d" % (what, r.returncode)
        rec.send_signal(signal.SIGTERM if a.daemon else signal.SIGINT)
        rec.wait(120)
        th.join(5)
        if rec.returncode != 0:
            res["error"] = "the recorder exited with status %d" % rec.returncode
        if proc.poll() is not None:
            res["error"] = "the workload exited during the run"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    caps = []
    d = subprocess.run([a.gtrace, "dump", trace], capture_output=True, text=True, errors="replace")
    with open(os.path.join(out, wl + ".capture.jsonl"), "w") as f:
        for line in d.stdout.splitlines():
            if '"capture"' in line or (a.gpum and '"gpu_metric"' in line and '"gpu_util"' in line):
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                if o.get("type") in ("capture", "gpu_metric"):
                    caps.append(o)
                    f.write(line + "\n")
    if not a.keep_trace:
        os.unlink(trace)
    return res


def bare_windows(a, out, wl):
    """--bare: census' windows over the running job, for a.record
    seconds, written as the capture lines analyze reads; an error string or
    None."""
    child = ("import time; print(time.monotonic_ns(), flush=True); time.sleep(%.6f); "
             "print(time.monotonic_ns(), flush=True)" % (a.window / 1e9))
    cmd = (["taskset", "-c", a.cpus_tool] if a.cpus_tool else []) + \
        [a.gtrace, "census", "--functions", a.bare] + shlex.split(a.tool_opts) + ["--", a.python, "-c", child]
    caps, fails, end = [], 0, now() + int(a.record * 1e9)
    with open(os.path.join(out, wl + "-census.err"), "w") as err:
        while now() < end:
            att = now()
            r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
            det = now()
            t = [int(x) for x in r.stdout.split() if x.isdigit() and len(x) > 9][:2]
            if r.returncode or len(t) != 2:
                fails += 1
                err.write("census: status %d, child's times %r: %s\n" % (r.returncode, t, r.stderr[-300:]))
            else:
                caps.append({"type": "capture", "kind": "window_open", "ts": t[0], "latency_ns": t[0] - att})
                caps.append({"type": "capture", "kind": "window_close", "ts": t[1], "latency_ns": det - t[1]})
            # the next window's "before" stretch is free of this one's
            # detach and tail however long census took
            rest = max(att + a.period - now(), a.window + a.tail)
            time.sleep(rest / 1e9)
    with open(os.path.join(out, wl + ".capture.jsonl"), "w") as f:
        for c in caps:
            f.write(json.dumps(c) + "\n")
    if fails:
        return "census failed %d times (%s-census.err)" % (fails, wl)
    return None


def analyze(a, out, workloads, meta):
    res = {"window": "%d ms" % (a.window // 1_000_000), "period": "%d ms" % (a.period // 1_000_000),
           "gpum_hz": a.gpum, "daemon": a.daemon, "bare": a.bare,
           "tail_ms": a.tail // 1_000_000, "workloads": {}}
    ok = True
    for wl in workloads:
        m = meta.get(wl, {})
        times = inproc.read_step_log(os.path.join(out, wl + ".steps"))
        steps = Steps(times)
        w = {"error": m.get("error")}
        try:
            caps = [json.loads(l) for l in open(os.path.join(out, wl + ".capture.jsonl"))]
        except OSError:
            caps = []
        if a.gpum:
            wins = windows_from_samples([c["ts"] for c in caps if c.get("type") == "gpu_metric"],
                                        (a.period - a.window) // 2)
        else:
            wins = windows_from_captures(caps)
        if len(steps):
            w["step_ms"] = median([times[i + 1] - times[i] for i in range(len(steps))]) / 1e6
        if wins:
            w["attach_ms"] = median([l - s for s, l, _, _ in wins]) / 1e6
            w["detach_ms"] = median([e - c for _, _, c, e in wins]) / 1e6
        per = a.window if a.gpum else a.period
        if a.daemon and len(wins) > 1:
            # the period the budget kept: the windows' median spacing
            per = int(median([b[0] - x[0] for x, b in zip(wins, wins[1:])]))
            w["period_ms"] = per / 1e6
            try:
                st = dict(l.split(None, 1) for l in open(os.path.join(out, wl + ".status")) if " " in l)
                w["daemon_estimate"] = st.get("overhead_mean_estimate_pct", "").strip()
            except OSError:
                pass
        w["windows"] = summarize(measure(steps, wins, a.window, a.tail), per,
                                 a.window if a.gpum else per if a.daemon else None)
        q = m.get("quiet_ns")
        if q:
            fw = fake_windows(q[0], q[1], a.window, per if a.daemon else a.period,
                              0 if a.gpum else int((w.get("attach_ms") or 8) * 1e6),
                              0 if a.gpum else int((w.get("detach_ms") or 350) * 1e6))
            w["noise"] = summarize(measure(steps, fw, a.window, a.tail), per,
                                   a.window if a.gpum else per if a.daemon else None)
        if w["error"] or not wins:
            ok = False
            w["error"] = w["error"] or ("no bursts of GPU-metric samples" if a.gpum else
                                        "no capture windows in the trace")
        res["workloads"][wl] = w
    return res, ok


def selftest():
    """A synthetic step log: 6.5 ms steps with 3 % jitter, 9 % longer while
    a window's probes are live, and a 5 ms stall at each attach."""
    rng = random.Random(7)
    base, t, times = 6_500_000, 10**9, []
    wins = fake_windows(2 * 10**9, 62 * 10**9, 200_000_000, 1_000_000_000, 8_000_000, 350_000_000)
    wi, stall_done = 0, set()
    while t < 63 * 10**9:
        times.append(t)
        d = base * (1 + rng.gauss(0, 0.03))
        while wi < len(wins) and wins[wi][3] < t:
            wi += 1
        if wi < len(wins):
            att, live, close, _ = wins[wi]
            if live <= t < close:
                d *= 1.09
            if att <= t and wi not in stall_done:
                d += 5_000_000
                stall_done.add(wi)
        t += int(d)
    steps = Steps(times)
    s = summarize(measure(steps, wins, 200_000_000, 100_000_000), 1_000_000_000)
    want_excess = 0.09 * 200_000_000 + 5_000_000  # ~23 ms a window
    fails = []
    if abs(s["ratio_median"] - 0.09) > 0.01:
        fails.append("ratio %.4f, planted 0.09" % s["ratio_median"])
    lo, hi = s["excess_ci_ns"]
    if not lo <= want_excess <= hi or abs(s["excess_mean_ns"] - want_excess) > 3_000_000:
        fails.append("excess %.2f ms (CI %.2f..%.2f), planted %.2f" % (
            s["excess_mean_ns"] / 1e6, lo / 1e6, hi / 1e6, want_excess / 1e6))
    # nothing planted: the noise floor must read ~0
    t, times = 10**9, []
    while t < 63 * 10**9:
        times.append(t)
        t += int(base * (1 + rng.gauss(0, 0.03)))
    n = summarize(measure(Steps(times), wins, 200_000_000, 100_000_000), 1_000_000_000)
    lo, hi = n["excess_ci_ns"]
    if not lo <= 0 <= hi:
        fails.append("noise excess CI %.2f..%.2f ms excludes 0" % (lo / 1e6, hi / 1e6))
    for f in fails:
        print("light_windows selftest: FAIL: " + f)
    print("light_windows selftest: %s (ratio %+.2f %%, excess %.2f ms against %.2f planted, noise %.2f ms)" % (
        "FAIL" if fails else "PASS", 100 * s["ratio_median"], s["excess_mean_ns"] / 1e6, want_excess / 1e6,
        n["excess_mean_ns"] / 1e6))
    return 1 if fails else 0


def main(argv):
    ap = argparse.ArgumentParser(prog="light_windows.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="torch,transformer")
    ap.add_argument("--workload-cmd", help="workload 'cmd': this command ({step_log}, {seconds} replaced), "
                    "which prints 'ready' once it logs steps")
    ap.add_argument("--window", type=parse_time, default=parse_time("200ms"))
    ap.add_argument("--period", type=parse_time, default=parse_time("1s"))
    ap.add_argument("--tail", type=parse_time, default=parse_time("100ms"),
                    help="steps after a detach ended still counted in its excess (default 100ms)")
    ap.add_argument("--record", type=float, default=120, help="seconds recorded per workload")
    ap.add_argument("--quiet", type=float, default=60, help="seconds with nothing attached first")
    ap.add_argument("--gtrace", default=os.path.join(".", "gtrace-bpf"))
    ap.add_argument("--tool-opts", default="")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cpus-workload")
    ap.add_argument("--cpus-tool")
    ap.add_argument("--out")
    ap.add_argument("--keep-trace", action="store_true")
    ap.add_argument("--daemon", metavar="BUDGET",
                    help="measure `gtrace-bpf daemon --budget BUDGET` (its own windows and period; "
                    "status and snapshot at the end) instead of a light-mode recorder")
    ap.add_argument("--gpum", type=int, metavar="HZ",
                    help="measure the GPU-metrics sampler at HZ in bursts of --window every --period")
    ap.add_argument("--bare", metavar="FUNCS",
                    help="measure a bare counting uprobe on these libcuda functions (gtrace-bpf census "
                    "--functions FUNCS), in windows of --window every --period, instead of a recorder")
    ap.add_argument("--analyze", metavar="DIR")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest()
    if a.window >= a.period:
        ap.error("--window must be shorter than --period")
    if sum(bool(x) for x in (a.daemon, a.gpum, a.bare)) > 1:
        ap.error("--daemon, --gpum and --bare do not mix")
    workloads = [w for w in a.workload.split(",") if w]
    if a.workload_cmd:
        workloads = ["cmd"]
    for w in workloads:
        if w not in inproc.WORKLOADS and w != "cmd":
            ap.error("unknown workload %r (%s)" % (w, ", ".join(inproc.WORKLOADS)))
    if a.analyze:
        out = a.analyze
        meta = json.load(open(os.path.join(out, "light_windows.json"))).get("meta", {})
        workloads = [w for w in workloads if w in meta]
    else:
        out = a.out or tempfile.mkdtemp(prefix="gtrace-lightwin.")
        os.makedirs(out, exist_ok=True)
        meta = {}
        for wl in workloads:
            meta[wl] = run_workload(a, wl, out)
            # kept as it goes: a run cut short is analyzed with --analyze
            with open(os.path.join(out, "light_windows.json"), "w") as f:
                json.dump({"meta": meta}, f)
    res, ok = analyze(a, out, workloads, meta)
    res["meta"] = meta
    text = report(res)
    sys.stdout.write(text)
    with open(os.path.join(out, "light_windows.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "light_windows.json"), "w") as f:
        json.dump(res, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
