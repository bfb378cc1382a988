#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon's CUPTI attach on a trigger, on the GPU machine (issue 30): a
# PyTorch job (tools/gpu/slow_sync_job.py) started WITHOUT the agent runs
# under `gtrace-bpf daemon --cupti --mode full --trigger 'sync>1s'
# --attach-cupti ATTACH`; its planted slow synchronization (a GPU spin, ~1.8 s
# on the H200) fires the trigger, which attaches the agent to the job for
# ATTACH; the snapshot, taken once the agent detached, must hold the job's
# GPU kernels named and linked to their launches (>= 99 %), and the attach
# record; the job runs on to its end. Prints PASS/FAIL lines and the figures;
# files under $OUT/daemon_attach. As root with a static build at $GTRACE.
# Usage: tools/gpu/daemon_attach.sh [ATTACH_S [SECONDS [SLOW_AT]]]
set -u
cd "$(dirname "$0")/../.." || exit 2
attach_s=${1:-10}
secs=${2:-40}
slow_at=${3:-12}
. tools/gpu/agent_env.sh daemon_attach
run=$(mktemp -d)
export GTRACE_RUN_DIR=$run
"$G" daemon --cupti --cupti-lib "$AGENT" --mode full --dir "$d/snaps" --window 60s --trigger 'sync>1s' \
	--attach-cupti "${attach_s}s" --post 1s > "$d/daemon.out" 2> "$d/daemon.err" &
dpid=$!
for _ in $(seq 100); do grep -q '^gtrace-bpf: recording' "$d/daemon.err" && break; sleep 0.1; done
"$PY" tools/gpu/slow_sync_job.py "$secs" "$slow_at" 2.5 > "$d/job.out" 2> "$d/job.err" &
jpid=$!
for _ in $(seq $(( (secs + 60) * 10 ))); do
	grep -q "attach: pid $jpid detaches" "$d/daemon.err" && break
	kill -0 "$jpid" 2> /dev/null || break
	sleep 0.1
done
grep -E 'attach|trigger' "$d/daemon.err" | cut -c1-300 | head -n 8
wait "$jpid"
jrc=$?
echo "job exit $jrc: $(tail -n 1 "$d/job.out")"
sleep 3
kill -TERM "$dpid"
wait "$dpid"
echo "daemon exit $?"
snap=$(ls "$d/snaps"/system_sync_trigger_*.gtrace 2> /dev/null | head -n 1)
[ -n "$snap" ] || { echo "FAIL daemon_attach: no sync-triggered snapshot: $(ls "$d/snaps")"; exit 1; }
"$G" dump "$snap" > "$d/snap.jsonl" 2> "$d/dump.err"
"$PY" - "$d/snap.jsonl" "$d/job.out" "$jrc" "$attach_s" <<'PYEOF'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
job = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
jrc, attach_s = int(sys.argv[3]), float(sys.argv[4])
pid = job["pid"]
ok = True
def check(cond, what):
    global ok
    print(("PASS" if cond else "FAIL") + " daemon_attach: " + what)
    ok &= bool(cond)
kern = [r for r in recs if r.get("pid") == pid and r.get("type") == "gpu_kernel"]
linked = [r for r in kern if r.get("launch_ts") is not None and r.get("kernel")]
att = [r for r in recs if r.get("pid") == pid and r.get("type") == "cupti_attach"]
span = (max(r["ts"] for r in kern) - min(r["ts"] for r in kern)) / 1e9 if kern else 0
print("   attach records: %s" % json.dumps(att)[:600])
check(jrc == 0 and job.get("steps", 0) > 0, "the job ran to its end (exit %d, %s steps)" % (jrc, job.get("steps")))
check(any(r.get("event") == "attached" for r in att), "the attach recorded in the snapshot")
check(len(kern) >= 1000 and len(linked) >= 0.99 * len(kern),
      "%d GPU kernels of the job over %.2f s of the %.0f s attach, %d (%.2f %%) named and linked to their launch"
      % (len(kern), span, attach_s, len(linked), 100.0 * len(linked) / max(len(kern), 1)))
for k, n in collections.Counter(r.get("kernel") for r in linked).most_common(4):
    print("   %6d  %s" % (n, (k or "")[:100]))
sys.exit(0 if ok else 1)
PYEOF
