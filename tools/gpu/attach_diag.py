# Where in a --cupti=attach recording its GPU records failed to link or
# started before their call (tools/gpu/attach_check.sh): reads `gtrace-bpf
# dump` of the merged trace on stdin, prints one line per finding, tagged.
#   gtrace-bpf dump T.gtrace | python3 attach_diag.py TAG
# Exit status 1 when fewer than 99 % of the GPU records are linked.
import bisect, json, sys

tag = sys.argv[1] if len(sys.argv) > 1 else "diag"
gpu, calls, extra, launches = [], [], [], []
last_api = ""
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    t = r.get("type", "")
    if t in ("gpu_kernel", "gpu_memcpy", "gpu_memset"):
        gpu.append((r["ts"], r.get("launch_ts"), bool(r.get("causality")), t))
        extra.append((r.get("graph_node") is not None, bool(r.get("clock_fixed")), r.get("correlation", 0)))
    elif "api" in r and "ts" in r:
        calls.append(r["ts"])
        if "Launch" in r["api"]:
            launches.append(r["ts"])
        if r["ts"] >= (calls[-2] if len(calls) > 1 else 0):
            last_api = r["api"]
if not gpu or not calls:
    print("%s: no GPU records (%d) or no calls (%d)" % (tag, len(gpu), len(calls)))
    sys.exit(1)
lo, hi = min(calls), max(calls)
span = max(hi - lo, 1)


def decile(ts):
    return min(max(int((ts - lo) * 10 / span), 0), 9)


unl = [0] * 10
cau = [0] * 10
gaps = []
lat = []
# the least delay from a launch to its kernel, by tenth: an offset or a
# drift of the GPU clock moves it
floor = [None] * 10
for ts, launch, c, t in gpu:
    if launch is None:
        unl[decile(ts)] += 1
    else:
        lat.append(ts - launch)
        d = decile(ts)
        if t == "gpu_kernel" and (floor[d] is None or ts - launch < floor[d]):
            floor[d] = ts - launch
    if c:
        cau[decile(ts)] += 1
        gaps.append(launch - ts)
n, linked = len(gpu), sum(1 for g in gpu if g[1] is not None)
print("%s: %d GPU records, %d linked (%.2f %%), %d started before their call; recording %.2f s of calls"
      % (tag, n, linked, linked * 100.0 / n, len(gaps), span / 1e9))
print("%s: unlinked by tenth of the recording: %s" % (tag, " ".join(map(str, unl))))
if gaps:
    gaps.sort()
    q = lambda p: gaps[min(int(p * len(gaps)), len(gaps) - 1)] / 1e3
    print("%s: started before their call by (us): median %.1f, p90 %.1f, max %.1f; by tenth: %s"
          % (tag, q(0.5), q(0.9), gaps[-1] / 1e3, " ".join(map(str, cau))))
if lat:
    lat.sort()
    print("%s: GPU start after the call's entry (us): min %.1f, p1 %.1f, median %.1f"
          % (tag, lat[0] / 1e3, lat[int(0.01 * len(lat))] / 1e3, lat[len(lat) // 2] / 1e3))
# the unlinked of the last tenth: after the last call (work of calls the
# recording did not see), graph kernels, their correlation ids against the
# linked ones'
tail = [(g, e) for g, e in zip(gpu, extra) if g[1] is None and decile(g[0]) == 9]
if tail:
    after = sorted((g[0] - hi) / 1e6 for g, _ in tail)
    maxc = max((e[2] for g, e in zip(gpu, extra) if g[1] is not None), default=0)
    print("%s: last tenth's %d unlinked: GPU start - last call (ms) min %.3f median %.3f max %.3f; "
          "%d run by graphs; %d with a correlation above the last linked one (%d); the last call %s"
          % (tag, len(tail), after[0], after[len(after) // 2], after[-1], sum(1 for _, e in tail if e[0]),
             sum(1 for _, e in tail if e[2] > maxc), maxc, last_api))
print("%s: least delay launch -> kernel by tenth (us): %s" % (tag, " ".join(
    "-" if f is None else "%.1f" % (f / 1e3) for f in floor)))
# the first unlinked kernels: the launches left without GPU work near
# them (their entry - the kernel's start), and the delays of the linked
# kernels just before them in correlation order
free = sorted(set(launches) - set(g[1] for g in gpu if g[1] is not None))
byc = sorted(range(len(gpu)), key=lambda i: (extra[i][2], gpu[i][0]))
shown = 0
for pos, i in enumerate(byc):
    if gpu[i][1] is not None or gpu[i][3] != "gpu_kernel":
        continue
    ts = gpu[i][0]
    a, b = bisect.bisect_left(free, ts - 100000), bisect.bisect_right(free, ts + 100000)
    near = ["%+.1f" % ((f - ts) / 1e3) for f in free[a:b]][:6]
    before = ["%.1f" % ((gpu[j][0] - gpu[j][1]) / 1e3) for j in byc[max(pos - 4, 0):pos] if gpu[j][1] is not None]
    print("%s: unlinked kernel, correlation %d at %.6f s: free launches within 100 us (us) %s; the linked "
          "before it: delays (us) %s" % (tag, extra[i][2], (ts - lo) / 1e9, " ".join(near) or "none",
                                         " ".join(before) or "none"))
    shown += 1
    if shown == 5:
        break
fixed = sum(1 for e in extra if e[1])
if fixed:
    print("%s: %d GPU records moved by the merger (the GPU clock drifted)" % (tag, fixed))
sys.exit(0 if linked * 100.0 / n >= 99.0 else 1)
