#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The budget's shedding on the GPU machine, against the driver's libcuda: a
# PyTorch loop that synchronizes after every small step (torch.cuda.
# synchronize: cuCtxSynchronize, always-on) under `daemon --budget 0.1%`,
# whose windows cannot hold it: the daemon must shed the costliest always-on
# call (one line naming it and its rate), status must list it, and the swap's
# latency is printed (attach of the new always-on links, then the whole swap
# to the old links' close). Then the snapshot: the shed api's records after
# the shed only inside windows, and no exit without its entry of any api.
# GTRACE_BUDGET_PERIOD_MAX_S=5 (a test knob) makes the longest window period
# short. Outputs under $OUT. Prints PASS or FAIL lines; exit 1 on a FAIL.
# Usage: tools/gpu/shed_check.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
G=$PWD/gtrace-bpf
PY=${PYTHON:-python3}
run=$(mktemp -d)
fails=0
pass() { echo "PASS shed_check: $*"; }
fail() { echo "FAIL shed_check: $*"; fails=$((fails + 1)); }
GTRACE_RUN_DIR=$run GTRACE_BUDGET_PERIOD_MAX_S=5 "$G" daemon -v --dir "$run" --light-window 200ms/1s \
	--budget 0.1% > "$OUT/daemon.out" 2> "$OUT/daemon.err" &
dpid=$!
for _ in $(seq 100); do grep -q '^gtrace-bpf: recording' "$OUT/daemon.err" && break; sleep 0.1; done
"$PY" - > "$OUT/torch.out" 2>&1 <<- 'EOF2' &
	import time, torch
	x = torch.randn(256, 256, device="cuda")
	end = time.time() + 25
	n = 0
	while time.time() < end:
	    y = x @ x
	    torch.cuda.synchronize()
	    n += 1
	print("steps", n)
EOF2
tpid=$!
sleep 20
GTRACE_RUN_DIR=$run "$G" status -v > "$OUT/status" 2>&1
GTRACE_RUN_DIR=$run "$G" snapshot -o "$OUT/s.gtrace" > /dev/null 2>&1
wait "$tpid"
kill -TERM "$dpid"
wait "$dpid"
echo "daemon exit $?"
grep -E 'shedding|shed to the light|new always-on links|given back' "$OUT/daemon.err"
grep -E '^overhead_(shed|sheds|swap|given)' "$OUT/status"
api=$(awk '$1 == "overhead_shed_apis" { print $2 }' "$OUT/status")
if [ -n "$api" ] && [ "$api" != none ]; then pass "status lists $api as shed"; else fail "nothing shed: $(grep budget "$OUT/daemon.err" | tail -n 3 | tr '\n' '|')"; fi
grep -q "shedding $api, the always-on call that costs most ([0-9]* calls/s" "$OUT/daemon.err" &&
	pass "a warning names $api and its rate" || fail "no warning naming the shed api"
"$G" dump "$OUT/s.gtrace" > "$OUT/s.json" 2> "$OUT/dump.err" || fail "dump: $(cat "$OUT/dump.err")"
"$PY" - "$OUT/s.json" "$api" <<- 'EOF2' || fails=$((fails + 1))
	import json, sys
	opens, closes, shed, calls = {}, {}, None, []
	for l in open(sys.argv[1]):
	    r = json.loads(l)
	    t = r.get("type")
	    # windows by number: a close is written once its detach is done
	    if t == "capture" and r.get("kind") == "window_open": opens[r["index"]] = r["ts"]
	    elif t == "capture" and r.get("kind") == "window_close": closes[r["index"]] = r["ts"]
	    elif t == "overhead" and r.get("reason") == "shed" and shed is None: shed = r["ts"]
	    elif r.get("api") == sys.argv[2] and t != "overhead": calls.append(r["ts"])
	wins = [(opens[i], closes[i]) for i in opens if i in closes]
	after = [ts for ts in calls if shed and ts >= shed]
	out = [ts for ts in after if not any(a <= ts <= b for a, b in wins)]
	print("%s: %d records, %d after the shed, %d of them outside windows" % (sys.argv[2], len(calls), len(after), len(out)))
	print(("PASS" if shed and not out else "FAIL") + " shed_check: after the shed only inside windows")
	sys.exit(0 if shed and not out else 1)
EOF2
"$G" dump --summary "$OUT/s.gtrace" > "$OUT/summary" 2>&1
grep -E '^\* |overhead records|^  shed|^  restore' -A0 "$OUT/summary"
[ $fails -eq 0 ]
