#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Snapshots of the daemon under a real flood, on the GPU machine from the
# repository root with a static build made elsewhere (`make STATIC=libs`; the
# binary travels as ./gtrace-bpf): `gtrace-bpf daemon --mode full --cupti`
# records a launch-bound PyTorch loop (tools/gpu/torch_loop.py) started with
# the CUPTI agent, while SNAPS snapshots of the whole window are asked one
# after the other (each merged on the daemon's snapshot writer thread).
# Checks, one PASS/FAIL line each with its figures:
#   - each snapshot held the recording loop < 5 ms and the window's lock
#     < 1 ms (the daemon's log line of each);
#   - the loop's longest pass while snapshots were asked or written
#     (status loop_stall_snapshot_max_ms) and any pass (loop_stall_max_ms);
#   - nothing dropped, no spool bytes skipped, every snapshot merged.
# Files under $OUT/daemon_stall (default OUT=/tmp/gtrace-stall). Exit 1 if
# any check failed.
# Usage: tools/gpu/daemon_stall.sh [STEPS [SNAPS]]
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gtrace-stall}
G=$PWD/gtrace-bpf
CUDA=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
steps=${1:-20000}
snaps=${2:-5}
d=$OUT/daemon_stall
fails=0
result() { # name rc detail
	if [ "$2" -eq 0 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; fails=$((fails + 1)); fi
}
status_of() { "$G" status -v 2> /dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
# lt A B: A < B as numbers
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a < b) }'; }

[ -x "$G" ] || { echo "FAIL setup: no $G (make STATIC=libs first)"; exit 1; }
rm -rf "$d"
mkdir -p -m 0700 "$d/snaps"
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Wall -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread \
	-o "$d/libgtrace-cupti.so" 2> "$d/build.log"
result "build CUPTI agent" $? "gcc against $CUDA/include/cupti.h"

run=$(mktemp -d)
export GTRACE_RUN_DIR=$run
"$G" daemon -v --mode full --cupti --cupti-lib "$d/libgtrace-cupti.so" --window 60s --memory 1G \
	--dir "$d/snaps" > "$d/daemon.out" 2> "$d/daemon.err" &
dpid=$!
for _ in $(seq 200); do grep -q '^gtrace-bpf: recording' "$d/daemon.err" && break; sleep 0.1; done
grep -q '^gtrace-bpf: recording' "$d/daemon.err" || { echo "FAIL daemon start: $(tail -n 3 "$d/daemon.err" | tr '\n' '|')"; exit 1; }

CUDA_INJECTION64_PATH=$d/libgtrace-cupti.so "$PY" tools/gpu/torch_loop.py "$steps" > "$d/job.out" 2> "$d/job.err" &
jpid=$!
sleep 8	# CUDA up, the loop running, the window filling
asked=0
for i in $(seq "$snaps"); do
	kill -0 "$jpid" 2> /dev/null || break
	"$G" snapshot -o "$d/s$i.gtrace" > /dev/null 2> "$d/s$i.err" && asked=$((asked + 1))
	sleep 1
done
result "snapshots during the job" $((asked == snaps ? 0 : 1)) "$asked of $snaps written while the job ran"
wait "$jpid"
result "job" $? "$(tail -n 1 "$d/job.out")"
sleep 2
stall=$(status_of loop_stall_snapshot_max_ms)
anyp=$(status_of loop_stall_max_ms)
dropped=$(status_of dropped)
skipped=$(status_of cupti_spool_skipped_bytes)
kill -TERM "$dpid"
wait "$dpid"
result "daemon stop" $? "exit status after SIGTERM"
rm -rf "$run"

held=$(sed -n 's/.*the recording loop held \([0-9.]*\) ms.*/\1/p' "$d/daemon.err" | sort -g | tail -n 1)
locked=$(sed -n 's/.*the window locked \([0-9.]*\) ms.*/\1/p' "$d/daemon.err" | sort -g | tail -n 1)
grep -E 'snapshot /|merged [0-9]+ GPU' "$d/daemon.err" | sed 's/^/    /'
lt "$held" 5
result "loop held by a snapshot" $? "longest ${held:-?} ms (expected < 5)"
lt "$locked" 1
result "window locked by a snapshot" $? "longest ${locked:-?} ms (expected < 1)"
echo "INFO loop: longest pass with a snapshot asked or written ${stall:-?} ms, any pass ${anyp:-?} ms"
[ "$dropped" = 0 ] && [ "$skipped" = 0 ]
result "nothing lost" $? "dropped ${dropped:-?}, spool bytes skipped ${skipped:-?}"
merged=0
for i in $(seq "$asked"); do
	"$G" dump --summary "$d/s$i.gtrace" 2> /dev/null | grep -q 'cupti=merged' && merged=$((merged + 1))
done
result "snapshots merged" $((merged == asked ? 0 : 1)) "$merged of $asked say cupti=merged"
exit $((fails > 0))
