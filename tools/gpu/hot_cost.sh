#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What a hot call costs in BPF, on the GPT-2-like step (tools/bench/
# transformer_step.py), from the kernel's own run-time accounting
# (kernel.bpf_stats_enabled): one running job, the recorder attached with -p
# for SECS seconds in each configuration, one after the other:
#   none   full mode, --stacks none
#   all    full mode as it records by default (--stacks all, the kernel lookups
#          dropped once their names are checked)
#   keep   the same with --keep-lookups (every cuKernelGetFunction probed)
#   sync   --stacks sync
#   NAME_bufSIZE  NAME with a ring buffer of SIZE (--buffer-size SIZE): what
#          a buffer that the CPU's caches hold saves each record
#   skipN  the default with parts of a hot call's call-site key left out
#          (GTRACE_BENCH_STACK_SKIP=N, bpf/ustack.bpf.h: 1 the Python frame,
#          2 the site's lookup, 4 the record, 8 the native reads, 16 the
#          Python frames below the innermost: the whole stack's hash; 32 the
#          hash reading an entry frame on the C stack a page at a time, as
#          before it was read alone; 64 reading 4 KiB of the C stack from an
#          entry frame, the next entry frames with it): what each costs (measurement only: with
#          1-16 a trace's hot calls have no stacks or wrong ones; 32 and 64
#          change only what it costs)
# For each: the runs and ns per run of every program that ran, and from the
# trace the calls per api; then per launch: the BPF time of the call-site
# cache (all - none), the kernel lookups a launch made (keep) and what
# dropping them saves (their entry and exit hits).
# As root from the repository root with a static build at $GTRACE
# (default ./gtrace-bpf). OUT=DIR keeps the files.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d /tmp/hot-cost.XXXXXX)}
PY=${PYTHON:-python3}
G=${GTRACE:-./gtrace-bpf}
SECS=${SECS:-8}
CONFIGS=${CONFIGS:-none all keep sync}
mkdir -p "$OUT"
old=$(sysctl -n kernel.bpf_stats_enabled 2> /dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1 || { echo "FAIL hot cost: cannot enable kernel.bpf_stats_enabled"; exit 1; }
trap 'sysctl -qw kernel.bpf_stats_enabled="$old"; kill "$WL" 2> /dev/null' EXIT

(cd tools/bench && exec taskset -c 2,3 "$PY" transformer_step.py --steady 900 --step-log "$OUT/steps.log") \
	> "$OUT/wl.out" 2>&1 &
WL=$!
for _ in $(seq 240); do
	[ -s "$OUT/steps.log" ] && break
	kill -0 "$WL" 2> /dev/null || break
	sleep 0.5
done
[ -s "$OUT/steps.log" ] || { echo "FAIL hot cost: the workload did not start: $(tail -n 3 "$OUT/wl.out")"; exit 1; }
sleep 2
for c in $CONFIGS; do
	# NAME_bufSIZE: NAME's options with a ring buffer of SIZE (e.g. all_buf8M)
	buf=
	case $c in *_buf*) buf="--buffer-size ${c#*_buf}" ;; esac
	case ${c%%_buf*} in
	none) opts="--stacks none" ;;
	all) opts="" ;;
	keep) opts="--keep-lookups" ;;
	sync) opts="--stacks sync" ;;
	skip*) opts="" ;;	# skipN: the default with GTRACE_BENCH_STACK_SKIP=N
	*) echo "unknown config $c"; exit 2 ;;
	esac
	skip=0
	case ${c%%_buf*} in skip*) skip=${c#skip}; skip=${skip%%_buf*} ;; esac
	# shellcheck disable=SC2086
	GTRACE_BENCH_STACK_SKIP=$skip taskset -c 4-7 "$G" -p "$WL" $opts $buf -v -o "$OUT/$c.gtrace" --force \
		> "$OUT/$c.out" 2> "$OUT/$c.err" &
	R=$!
	sleep "$SECS"
	"$PY" tools/bench/bpf_prog_stats.py > "$OUT/$c.bpf" 2> /dev/null
	kill -INT "$R"
	wait "$R"
	"$G" dump --summary "$OUT/$c.gtrace" > "$OUT/$c.sum" 2>&1
	# the first and last launch: the steps the recording saw
	"$G" dump "$OUT/$c.gtrace" 2> /dev/null | "$PY" -c '
import json, sys
lo = hi = None
unnamed = 0
for l in sys.stdin:
    if "\"launch\"" not in l:
        continue
    r = json.loads(l)
    if r.get("type") == "launch":
        t = r["ts"]
        lo = t if lo is None or t < lo else lo
        hi = t if hi is None or t > hi else hi
        unnamed += not r.get("kernel") or str(r.get("kernel")).startswith("unknown_kernel_")
print(lo or 0, hi or 0, unnamed)' > "$OUT/$c.span"
	sleep 2
done
kill "$WL" 2> /dev/null
wait "$WL" 2> /dev/null

"$PY" - "$OUT" $CONFIGS <<'PY'
import re, sys, statistics
out, configs = sys.argv[1], sys.argv[2:]
ts = [int(l) for l in open(out + "/steps.log") if l.strip().isdigit()]
d = [(b - a) / 1e6 for a, b in zip(ts, ts[1:])]
step_ms = statistics.median(d) if d else 0.0
res = {}
for c in configs:
    progs = {}
    for l in open("%s/%s.bpf" % (out, c)):
        p = l.split()
        if len(p) == 3:
            progs[p[0]] = (int(p[1]), float(p[2]))
    calls = {}
    for l in open("%s/%s.sum" % (out, c)):
        m = re.match(r"^(cu\w+)( [*+])?\s+(\d+)\s", l)
        if m:
            calls[m.group(1)] = int(m.group(3))
    launches = sum(v for k, v in calls.items() if k.startswith("cuLaunch"))
    lookups = calls.get("cuKernelGetFunction", 0)
    lk = [l.strip() for l in open("%s/%s.err" % (out, c)) if "kernel lookups" in l]
    res[c] = (progs, launches, lookups)
    busy = sorted(progs.items(), key=lambda kv: -kv[1][0])[:6]
    unnamed = int(open("%s/%s.span" % (out, c)).read().split()[2])
    print("hot cost %s: %d launches (%d without a kernel name), %d cuKernelGetFunction recorded; busiest programs: %s%s" % (
        c, launches, unnamed, lookups, ", ".join("%s %d runs %.0f ns" % (k, v[0], v[1]) for k, v in busy),
        ("; " + lk[-1]) if lk else ""))
print("hot cost: step %.2f ms (median over %d steps of the job)" % (step_ms, len(d)))
def steps_in(c):
    lo, hi = (int(x) for x in open("%s/%s.span" % (out, c)).read().split()[:2])
    return sum(1 for t in ts if lo <= t <= hi)
def per_launch(c):
    progs, launches, _ = res[c]
    if not launches:
        return None
    return sum(n * ns for n, ns in progs.values()) / launches, sum(n for n, _ in progs.values()) / launches
if "none" in res:
    a = per_launch("none")
    for c in configs:
        if c == "none" or not a:
            continue
        b, n = per_launch(c), steps_in(c)
        if not b or not n:
            continue
        lps = res[c][1] / n
        print("hot cost %s: BPF time per launch (every program's run time over the launches) %.0f ns (%.2f program "
              "runs) against --stacks none's %.0f ns (%.2f runs): %+.0f ns a launch; at %.0f launches a step "
              "(%d steps recorded) %+.2f %% of a %.2f ms step" % (c, b[0], b[1], a[0], a[1], b[0] - a[0], lps, n,
              (b[0] - a[0]) * lps / 1e6 / step_ms * 100 if step_ms else 0, step_ms))
if "keep" in res:
    _, launches, lookups = res["keep"]
    if launches:
        print("hot cost: with --keep-lookups %d cuKernelGetFunction for %d launches: %.3f a launch, %.3f uprobe "
              "hits a launch (entry and exit) that the default drops" % (lookups, launches, lookups / launches,
              2 * lookups / launches))
PY
echo "files in $OUT"
