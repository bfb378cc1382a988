#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the GPU-metrics sampler costs a launch, measured inside one process
at the time scale of its bursts.

light_windows.py --gpum measures the sampler's cost on a PyTorch step; a
step's time wanders between stretches of a quarter second by more than the
0.5 % target. A launch-bound step's time is its launch calls and the Python
around them; the sampler runs on other CPUs, so what it could cost the step
is what it does to the launch calls (the driver's locks, the PCIe reads of
its queries). This script measures that directly: the mock workload
(tests/mock/cuda_workload, the real libcuda when GT_LIBCUDA names it) makes
back-to-back launches paced at --rate and logs each one's clock before and
after the call (--launch-log); one recorder, `gtrace-bpf -p PID --mode
light -c cudaProfilerApi --gpu-metrics=HZ` (probes quiet, nothing written
but the samples), samples only in the first WINDOW of every PERIOD
(GTRACE_GPUM_BURST). Each burst (its first sample to its last) is compared
with the stretch of the same length just before it:

  ratio = median launch latency in the burst / median in the stretch - 1

and over the bursts: the median and range of the ratios and a 95 %
bootstrap interval of their mean. The same arithmetic over made-up bursts
in the first QUIET seconds (the recorder not yet started) is the method's
noise floor. Hundreds of thousands of launches a second make each burst's
median precise; the pairing takes out the drift.

The flood goes on for QUIET seconds, then for SECONDS after the recorder
said it records, and ends by SIGTERM (the workload's --until-term).

  python3 tools/bench/gpum_launch_cost.py --gpum HZ [--seconds 60] [--quiet 10]
      [--window 250ms --period 500ms] [--rate 20000] [--workload-args '--grid 1']
      [--gtrace ./gtrace-bpf]
      [--workload .output/mock/cuda_workload] [--cpus-workload 2,3]
      [--cpus-tool 4-7] [--tool-opts '...'] [--out DIR]

Output in DIR: gpum_launch_cost.txt (also printed), .json, the launch log,
the recorder's stderr, the samples' times. Exit status 1 when the workload
or the recorder failed or no burst was measured.
"""
import argparse, json, os, random, shlex, signal, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import inproc  # noqa: E402  (median, line waiting)
from light_windows import boot_ci, parse_time, windows_from_samples  # noqa: E402

median = inproc.median
ROOT = os.path.dirname(os.path.dirname(HERE))


def read_log(path):
    """(before, latency) per launch of a launch log, in order."""
    out = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[0].isdigit() and p[1].isdigit():
                a, b = int(p[0]), int(p[1])
                if b >= a:
                    out.append((a, b - a))
    out.sort()
    return out


def latencies(log, t0, t1):
    """Latencies of the launches that began in [t0, t1)."""
    import bisect
    i = bisect.bisect_left(log, (t0, -1))
    j = bisect.bisect_left(log, (t1, -1))
    return [lat for _, lat in log[i:j]]


def measure(log, wins, min_launches=50):
    """Per burst (first sample, last sample), its ratio against the stretch
    of its length before it (never before the previous burst's end)."""
    rows, prev_end = [], None
    for s, e in wins:
        ln = e - s
        lo = s - ln if prev_end is None else max(s - ln, prev_end)
        before, inside = latencies(log, lo, s), latencies(log, s, e)
        prev_end = e
        if len(before) < min_launches or len(inside) < min_launches:
            continue
        rows.append({"start_ns": s, "len_ns": ln, "launches": len(inside),
                     "median_before_ns": median(before), "median_ns": median(inside),
                     "ratio": median(inside) / median(before) - 1})
    return rows


def summary(rows):
    if not rows:
        return {"windows": 0}
    r = [x["ratio"] for x in rows]
    lo, hi = boot_ci(r, lambda xs: sum(xs) / len(xs))
    return {"windows": len(rows), "ratio_median": median(r), "ratio_min": min(r), "ratio_max": max(r),
            "ratio_mean": sum(r) / len(r), "ratio_mean_ci": [lo, hi],
            "launches_per_window": median([x["launches"] for x in rows]),
            "latency_median_ns": median([x["median_before_ns"] for x in rows])}


def pct(x):
    return "n/a" if x is None else "%+.3f %%" % (x * 100)


def report(res):
    lines = ["the GPU-metrics sampler at %d Hz: each burst's median launch latency against the stretch just "
             "before it" % res["gpum_hz"],
             "(bursts of %s every %s; %d launches/s asked; noise: made-up bursts before the recorder started)"
             % (res["window"], res["period"], res["rate"]),
             "",
             "%-8s %7s %11s %-23s %-25s %10s %10s" % ("part", "windows", "ratio med", "ratio min..max",
                                                    "mean ratio 95% CI", "launches", "latency"),
             ]
    for part in ("noise", "bursts"):
        s = res[part]
        if not s["windows"]:
            lines.append("%-8s %7d" % (part, 0))
            continue
        ci = s["ratio_mean_ci"]
        lines.append("%-8s %7d %11s %-23s %-25s %10d %8.0f ns" % (
            part, s["windows"], pct(s["ratio_median"]), "%s .. %s" % (pct(s["ratio_min"]), pct(s["ratio_max"])),
            "%s .. %s" % (pct(ci[0]), pct(ci[1])), s["launches_per_window"], s["latency_median_ns"]))
    b = res["bursts"]
    if b["windows"] and b["ratio_mean_ci"][1] is not None:
        hi = b["ratio_mean_ci"][1]
        lines.append("")
        lines.append("the launch call's latency while sampling: %s (95 %% CI of the mean %s .. %s): %s" % (
            pct(b["ratio_mean"]), pct(b["ratio_mean_ci"][0]), pct(hi),
            "at or under the 0.5 % target" if hi <= 0.005 else "not shown under the 0.5 % target"))
    if res.get("error"):
        lines.append("error: " + res["error"])
    return "\n".join(lines) + "\n"


def selftest():
    """Planted: launches of 2000 ns with +-50 ns of noise; 10 s quiet, then
    40 bursts of 250 ms every 500 ms in which they take 2 % longer."""
    rng = random.Random(1)
    q1, period, ln = 10_000_000_000, 500_000_000, 250_000_000
    wins = [(q1 + k * period + ln, q1 + (k + 1) * period) for k in range(40)]
    fake = [(k * period + period, k * period + period + ln) for k in range(q1 // period - 1)]
    log, t, w = [], 0, 0
    while t < q1 + 40 * period:
        while w < len(wins) and t >= wins[w][1]:
            w += 1
        inside = w < len(wins) and wins[w][0] <= t
        log.append((t, int(2000 * (1.02 if inside else 1.0)) + rng.randint(-50, 50)))
        t += 20_000
    s = summary(measure(log, wins))
    n = summary(measure(log, fake))
    ok = (s["windows"] == 40 and abs(s["ratio_median"] - 0.02) < 0.001 and
          s["ratio_mean_ci"][0] <= 0.0205 and s["ratio_mean_ci"][1] >= 0.0195 and
          n["windows"] == len(fake) and abs(n["ratio_median"]) < 0.001 and
          abs(n["ratio_mean_ci"][0]) < 0.001 and abs(n["ratio_mean_ci"][1]) < 0.001)
    print("gpum_launch_cost selftest: %s (planted +2 %%: median %s over %d bursts; noise %s over %d)"
          % ("PASS" if ok else "FAIL", pct(s.get("ratio_median")), s["windows"], pct(n.get("ratio_median")),
             n["windows"]))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpum", type=int, metavar="HZ")
    ap.add_argument("--seconds", type=float, default=60, help="the launches' flood once the recorder records")
    ap.add_argument("--quiet", type=float, default=10, help="seconds of launches before the recorder starts")
    ap.add_argument("--window", type=parse_time, default=parse_time("250ms"))
    ap.add_argument("--period", type=parse_time, default=parse_time("500ms"))
    ap.add_argument("--rate", type=int, default=20000, help="launches per second the workload paces to")
    ap.add_argument("--workload-args", default="--grid 1",
                    help="more options of the workload (default: one-block grids, tiny kernels)")
    ap.add_argument("--gtrace", default=os.path.join(ROOT, "gtrace-bpf"))
    ap.add_argument("--workload", default=os.path.join(ROOT, ".output/mock/cuda_workload"))
    ap.add_argument("--cpus-workload", default="")
    ap.add_argument("--cpus-tool", default="")
    ap.add_argument("--tool-opts", default="")
    ap.add_argument("--out")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not a.gpum:
        ap.error("--gpum HZ is needed")
    if a.window >= a.period:
        ap.error("--window must be shorter than --period")
    out = a.out or tempfile.mkdtemp(prefix="gpum-launch-cost.")
    os.makedirs(out, exist_ok=True)
    log_path, trace = os.path.join(out, "launch.log"), os.path.join(out, "gpum.gtrace")
    res = {"gpum_hz": a.gpum, "window": "%d ms" % (a.window // 1_000_000),
           "period": "%d ms" % (a.period // 1_000_000), "rate": a.rate, "error": None}
    pin = lambda cpus: ["taskset", "-c", cpus] if cpus else []  # noqa: E731
    # the flood ends by SIGTERM --seconds after the recorder said it records
    # (however long its start took); its own limit is only a backstop
    wcmd = pin(a.cpus_workload) + [a.workload, "--wait-signal", "--flood", "%g" % (a.quiet + a.seconds + 300),
                                   "--until-term", "--rate", str(a.rate), "--launch-log", log_path] + \
        shlex.split(a.workload_args)
    wout = open(os.path.join(out, "workload.out"), "wb")
    werr = open(os.path.join(out, "workload.err"), "wb")
    w = subprocess.Popen(wcmd, stdout=subprocess.PIPE, stderr=werr, stdin=subprocess.DEVNULL)
    rec = None
    try:
        if inproc.wait_line(w, w.stdout, r"^ready\b", 120, wout) is None:
            res["error"] = "the workload never became ready"
            return finish(a, out, res, [], [])
        inproc.drain(w.stdout, wout)
        w.send_signal(signal.SIGUSR1)
        q0 = time.monotonic_ns()
        time.sleep(a.quiet)
        q1 = time.monotonic_ns()
        env = dict(os.environ, GTRACE_GPUM_BURST="%d/%d" % (a.window // 1_000_000, a.period // 1_000_000))
        rcmd = pin(a.cpus_tool) + [a.gtrace, "-p", str(w.pid), "--mode", "light", "-c", "cudaProfilerApi",
                                   "--gpu-metrics=%d" % a.gpum, "-o", trace, "--force"] + shlex.split(a.tool_opts)
        rerr = open(os.path.join(out, "recorder.err"), "wb")
        rec = subprocess.Popen(rcmd, stdin=subprocess.DEVNULL, stdout=rerr, stderr=subprocess.PIPE, env=env,
                               start_new_session=True)
        if inproc.wait_line(rec, rec.stderr, r"recording to ", 60, rerr) is None:
            res["error"] = "the recorder did not start"
            return finish(a, out, res, [], [])
        inproc.drain(rec.stderr, rerr)
        time.sleep(a.seconds)
        if w.poll() is None:
            w.send_signal(signal.SIGTERM)
        w.wait(120)
        rec.wait(120)
        if w.returncode:
            res["error"] = "the workload exited with status %d" % w.returncode
        elif rec.returncode:
            res["error"] = "the recorder exited with status %d" % rec.returncode
    finally:
        for p in (w, rec):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    d = subprocess.run([a.gtrace, "dump", trace], capture_output=True, text=True, errors="replace")
    samples = []
    for line in d.stdout.splitlines():
        if '"gpu_metric"' in line:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("type") == "gpu_metric":
                samples.append(o["ts"])
    with open(os.path.join(out, "samples.txt"), "w") as f:
        f.write("".join("%d\n" % t for t in sorted(set(samples))))
    wins = [(s, c) for s, _, c, _ in windows_from_samples(samples, (a.period - a.window) // 2)]
    # the noise floor: bursts of the same length and schedule over the quiet
    # part, where nothing samples
    span = int(median([e - s for s, e in wins])) if wins else a.window
    fake, t = [], q0 + a.period
    while t + span < q1:
        fake.append((t, t + span))
        t += a.period
    return finish(a, out, res, wins, fake)


def finish(a, out, res, wins, fake):
    log = read_log(os.path.join(out, "launch.log")) if os.path.exists(os.path.join(out, "launch.log")) else []
    res["launches"] = len(log)
    # the span of the log by the workload's own clock: paced at --rate, the
    # workload makes rate x span launches (it catches up when it falls behind)
    res["launch_span_s"] = (log[-1][0] - log[0][0]) / 1e9 if len(log) > 1 else 0.0
    res["bursts_in_trace"] = len(wins)
    res["bursts"] = summary(measure(log, wins))
    res["noise"] = summary(measure(log, fake))
    if not res["error"] and not res["bursts"]["windows"]:
        res["error"] = "no burst of samples measured (%d bursts in the trace, %d launches logged)" % (
            len(wins), len(log))
    txt = report(res)
    sys.stdout.write(txt)
    with open(os.path.join(out, "gpum_launch_cost.txt"), "w") as f:
        f.write(txt)
    with open(os.path.join(out, "gpum_launch_cost.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("gpum_launch_cost: files in %s" % out)
    return 1 if res["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
