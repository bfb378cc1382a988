#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --cupti=attach on the GPU machine (issue 30): a PyTorch training job
# (tools/bench/transformer_step.py --steady) started without the CUPTI
# agent; the recorder attached with -p PID --cupti=attach for SECS seconds,
# CYCLES times. For each: the merge's line (kernels linked to their
# launches), the longest step around the attach against the median (the
# stall), the job's threads, descriptors and resident memory after it; at the
# end the median step before the first attach and after the last.
# As root from the repository root with a static build at $GTRACE (default
# ./gtrace-bpf); the agent built here (tools/gpu/build_agent.sh) unless
# AGENT names one. OUT=DIR keeps the files. PASS/FAIL lines and the figures.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d /tmp/attach-check.XXXXXX)}
PY=${PYTHON:-python3}
G=${GTRACE:-./gtrace-bpf}
SECS=${SECS:-5}
CYCLES=${CYCLES:-3}
mkdir -p "$OUT"
AGENT=${AGENT:-$OUT/libgtrace-cupti.so}
[ -f "$AGENT" ] || tools/gpu/build_agent.sh "$AGENT" "$OUT/agent.build" ||
	{ echo "FAIL attach: the agent does not build: $(tail -n 3 "$OUT/agent.build")"; exit 1; }
(cd tools/bench && exec "$PY" transformer_step.py --steady 900 --step-log "$OUT/steps.log") > "$OUT/wl.out" 2>&1 &
WL=$!
trap 'kill "$WL" 2> /dev/null' EXIT
for _ in $(seq 240); do
	[ -s "$OUT/steps.log" ] && break
	kill -0 "$WL" 2> /dev/null || break
	sleep 0.5
done
[ -s "$OUT/steps.log" ] || { echo "FAIL attach: the job did not start: $(tail -n 3 "$OUT/wl.out")"; exit 1; }
sleep 4
state() {
	echo "threads $(ls /proc/"$WL"/task | wc -l) fds $(ls /proc/"$WL"/fd | wc -l) rss_kb $(awk '/^VmRSS/ { print $2 }' /proc/"$WL"/status)"
}
echo "attach: before: $(state)"
fail=0
for c in $(seq "$CYCLES"); do
	t0=$(date +%s%N)
	"$G" record -p "$WL" --cupti=attach --cupti-lib "$AGENT" -d "$SECS" -o "$OUT/at$c.gtrace" --force \
		> "$OUT/at$c.out" 2> "$OUT/at$c.err"
	rc=$?
	echo "$t0 $(date +%s%N)" > "$OUT/at$c.span"
	grep -h 'cupti=attach\|merged' "$OUT/at$c.err" | sed "s/^/attach $c: /" | cut -c1-400
	kill -0 "$WL" 2> /dev/null || { echo "FAIL attach $c: the job died"; fail=1; break; }
	echo "attach $c: rc $rc; after: $(state)"
	grep -q 'linked' "$OUT/at$c.err" || fail=1
	sleep 3
done
sleep 5
kill -0 "$WL" 2> /dev/null && echo "attach: the job runs on: $(state)" || { echo "FAIL attach: the job is gone"; fail=1; }
"$PY" - "$OUT" "$CYCLES" <<'PY'
import statistics, sys, time
out, cycles = sys.argv[1], int(sys.argv[2])
ts = [int(l) for l in open(out + "/steps.log") if l.strip().isdigit()]
# the step log's times are CLOCK_MONOTONIC; the spans are CLOCK_REALTIME: shift by now's difference
shift = time.monotonic_ns() - time.time_ns()
steps = list(zip(ts, ts[1:]))
def med(sel):
    d = [(b - a) / 1e6 for a, b in sel]
    return statistics.median(d) if d else float("nan"), len(d)
spans = []
for c in range(1, cycles + 1):
    try:
        a, b = (int(x) + shift for x in open("%s/at%d.span" % (out, c)).read().split())
        spans.append((a, b))
    except (OSError, ValueError):
        pass
if spans:
    before = med([s for s in steps if s[1] < spans[0][0]][-400:])
    after = med([s for s in steps if s[0] > spans[-1][1]][:400])
    print("attach: median step before the first attach %.3f ms (%d steps), after the last %.3f ms (%d steps): %+.2f %%"
          % (before[0], before[1], after[0], after[1], (after[0] / before[0] - 1) * 100 if before[1] and after[1] else 0))
    for i, (a, b) in enumerate(spans, 1):
        win = [(x, y) for x, y in steps if a <= y and x <= a + 3_000_000_000]
        if win:
            worst = max((y - x) / 1e6 for x, y in win)
            print("attach %d: the longest step in the first 3 s of the recorder %.1f ms against a median of %.3f ms"
                  % (i, worst, before[0]))
PY
echo "files in $OUT"
exit $fail
