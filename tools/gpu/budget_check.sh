#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon's overhead budget on the GPU machine: a daemon at -v beside a
# PyTorch step loop for a few seconds (its calibration, its estimate and
# status), then the in-process comparison of its estimate with the cost
# measured in the step times (tools/bench/inproc.py). Outputs under $OUT.
# Usage: tools/gpu/budget_check.sh [INPROC ARGS...]
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d)}
G=$PWD/gtrace-bpf
PY=${PYTHON:-python3}
mkdir -p "$OUT/sanity"
run=$(mktemp -d)
GTRACE_RUN_DIR=$run "$G" daemon -vv --dir "$run" --light-window 500ms/2s \
	> "$OUT/sanity/daemon.out" 2> "$OUT/sanity/daemon.err" &
dpid=$!
for _ in $(seq 100); do grep -q '^gtrace-bpf: recording' "$OUT/sanity/daemon.err" && break; sleep 0.1; done
taskset -c 2,3 timeout 30 "$PY" tools/bench/torch_step.py --steady 14 --step-log "$OUT/sanity/steps" \
	> "$OUT/sanity/torch.out" 2>&1 &
tpid=$!
sleep 12
GTRACE_RUN_DIR=$run "$G" status -v > "$OUT/sanity/status" 2>&1
kill -TERM "$dpid"
wait "$dpid"
echo "daemon exit $?"
wait "$tpid"
grep -E 'budget|overhead|recording' "$OUT/sanity/daemon.err" | head -30
grep -E '^(overhead|duty|light_period|probe|bpf|events)' "$OUT/sanity/status"
[ $# -gt 0 ] || exit 0
"$PY" tools/bench/inproc.py --out "$OUT/inproc" "$@" > "$OUT/inproc.log" 2>&1
echo "inproc exit $?"
tail -45 "$OUT/inproc.log"
