#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CUPTI attach without a trigger, on the GPU machine (issue 30):
#   demand  `gtrace-bpf daemon --cupti` running; a PyTorch training job
#           (tools/bench/transformer_step.py --steady) started WITHOUT the
#           agent; `gtrace-bpf attach -p PID -d ATTACH_S` through the control
#           socket; then `gtrace-bpf snapshot -p PID`: the job's GPU kernels of
#           the attach, named and linked to their launches (>= 99 %), the
#           attach record, the job running on.
#   all     `gtrace-bpf record --all --cupti=attach -d SECS` over a PyTorch job
#           and a CuPy job (tools/gpu/attach_jobs.py), neither started with the
#           agent: every one found gets the agent, each job's kernels linked
#           (>= 99 %), both run on.
# As root from the repository root with a static build at $GTRACE; PASS/FAIL
# lines and the figures; files under $OUT/ondemand.
# Usage: tools/gpu/attach_ondemand.sh [ATTACH_S [SECS]]
set -u
cd "$(dirname "$0")/../.." || exit 2
attach_s=${1:-10}
secs=${2:-5}
. tools/gpu/agent_env.sh ondemand
fail=0
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null; done' EXIT

# ready LOG PID: the job's step log has its first step
ready() {
	for _ in $(seq 360); do
		[ -s "$1" ] && [ "$(wc -l < "$1")" -ge 2 ] && return 0
		kill -0 "$2" 2> /dev/null || return 1
		sleep 0.5
	done
	return 1
}

# check DUMP PID TAG: the job's kernels in the dump, named and linked
check() {
	"$PY" - "$1" "$2" "$3" <<'PYEOF'
import collections, json, sys
pid, tag = int(sys.argv[2]), sys.argv[3]
kern, att = [], []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("pid") != pid:
        continue
    if r.get("type") == "gpu_kernel":
        kern.append(r)
    elif r.get("type") == "cupti_attach":
        att.append(r)
linked = [r for r in kern if r.get("launch_ts") is not None and r.get("kernel")]
span = (max(r["ts"] for r in kern) - min(r["ts"] for r in kern)) / 1e9 if kern else 0
ok = len(kern) >= 1000 and len(linked) >= 0.99 * len(kern) and any(r.get("event") == "attached" for r in att)
print("%s %s: %d GPU kernels over %.2f s, %d (%.2f %%) named and linked to their launch; attach records %s"
      % ("PASS" if ok else "FAIL", tag, len(kern), span, len(linked), 100.0 * len(linked) / max(len(kern), 1),
         json.dumps(att)[:400]))
for k, n in collections.Counter(r.get("kernel") for r in linked).most_common(3):
    print("   %6d  %s" % (n, (k or "")[:100]))
sys.exit(0 if ok else 1)
PYEOF
}

# --- demand: the daemon's control socket
run=$(mktemp -d)
export GTRACE_RUN_DIR=$run
"$G" daemon --cupti --cupti-lib "$AGENT" --mode full --dir "$d/snaps" --window 60s \
	> "$d/daemon.out" 2> "$d/daemon.err" &
dpid=$!
pids+=("$dpid")
for _ in $(seq 100); do grep -q '^gtrace-bpf: recording' "$d/daemon.err" && break; sleep 0.1; done
(cd tools/bench && exec "$PY" transformer_step.py --steady 300 --step-log "$d/demand-steps.log") \
	> "$d/demand.wl" 2>&1 &
w=$!
pids+=("$w")
if ! ready "$d/demand-steps.log" "$w"; then
	echo "FAIL demand: the job did not start: $(tail -n 3 "$d/demand.wl")"
	fail=1
else
	sleep 3
	t0=$(date +%s%N)
	"$G" attach -p "$w" -d "${attach_s}s" > "$d/attach.out" 2> "$d/attach.err"
	rc=$?
	echo "demand: gtrace-bpf attach -p $w -d ${attach_s}s: rc $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(head -c 300 "$d/attach.out") $(head -c 300 "$d/attach.err")"
	[ "$rc" -eq 0 ] || fail=1
	for _ in $(seq 100); do grep -q "attach: pid $w detaches" "$d/daemon.err" && break; sleep 0.1; done
	sleep 2
	grep -E "attach" "$d/daemon.err" | cut -c1-300 | head -n 6 | sed 's/^/demand: daemon: /'
	snap=$("$G" snapshot -p "$w" 2> "$d/snap.err")
	if [ -f "$snap" ]; then
		"$G" dump "$snap" > "$d/demand.jsonl" 2> "$d/dump.err"
		check "$d/demand.jsonl" "$w" demand || fail=1
	else
		echo "FAIL demand: snapshot: $(cat "$d/snap.err")"
		fail=1
	fi
	kill -0 "$w" 2> /dev/null && echo "PASS demand: the job runs on after the detach" ||
		{ echo "FAIL demand: the job died"; fail=1; }
fi
kill -TERM "$w" 2> /dev/null
wait "$w" 2> /dev/null
kill -TERM "$dpid"
wait "$dpid"
echo "demand: daemon exit $?"

# --- all: every CUDA process found
(cd tools/bench && exec "$PY" transformer_step.py --steady 300 --step-log "$d/all-train-steps.log") \
	> "$d/all-train.wl" 2>&1 &
wt=$!
pids+=("$wt")
"$PY" tools/gpu/attach_jobs.py cupy 300 "$d/all-cupy-steps.log" > "$d/all-cupy.wl" 2>&1 &
wc_=$!
pids+=("$wc_")
if ready "$d/all-train-steps.log" "$wt" && ready "$d/all-cupy-steps.log" "$wc_"; then
	sleep 3
	"$G" record --all --cupti=attach --cupti-lib "$AGENT" -d "$secs" -o "$d/all.gtrace" --force \
		> "$d/all.out" 2> "$d/all.err"
	rc=$?
	grep -E 'attach|merged|CUPTI' "$d/all.err" | cut -c1-300 | head -n 10 | sed 's/^/all: /'
	[ "$rc" -eq 0 ] || { echo "FAIL all: record exited $rc"; fail=1; }
	"$G" dump "$d/all.gtrace" > "$d/all.jsonl" 2> "$d/all-dump.err"
	check "$d/all.jsonl" "$wt" all-train || fail=1
	check "$d/all.jsonl" "$wc_" all-cupy || fail=1
	sleep 2
	for p in "$wt" "$wc_"; do
		kill -0 "$p" 2> /dev/null && echo "PASS all: pid $p runs on after the detach" ||
			{ echo "FAIL all: pid $p died"; fail=1; }
	done
else
	echo "FAIL all: the jobs did not start: $(tail -n 2 "$d/all-train.wl" "$d/all-cupy.wl")"
	fail=1
fi
kill -TERM "$wt" "$wc_" 2> /dev/null
wait "$wt" "$wc_" 2> /dev/null
exit $fail
