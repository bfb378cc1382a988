#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CUPTI agent taken over after a SIGKILLed recorder (issue 25), on the GPU
# machine from the repository root, with ./gtrace-bpf (make STATIC=libs):
#
#   tools/gpu/cupti_takeover.sh
#
# A PyTorch training loop (tools/gpu/torch_loop.py) started with the agent
# while a first `--all --cupti` records; that recorder SIGKILLed; a second
# `--all --cupti -d 5` started at once. It must exit 0, and of the job's
# launches it recorded, at least 99 % must have their kernel linked. Also
# printed: what the merge left out (GPU work of calls before its start or
# after its end), what the second recorder said of the first one's spool,
# and what the job's spool holds on disk afterwards (what was read is given
# back). Logs and traces in $OUT.
set -u
OUT=${OUT:-/tmp/gtrace-takeover}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
B=./gtrace-bpf
AG=$OUT/libgtrace-cupti.so
[ -x "$B" ] || { echo "FAIL cupti takeover: no ./gtrace-bpf"; exit 2; }
CUDA_HOME=$CUDA tools/gpu/build_agent.sh "$AG" "$OUT/build.log" ||
	{ echo "FAIL cupti takeover: cannot build the agent: $(tail -n 3 "$OUT/build.log")"; exit 1; }
rm -rf /run/gtrace-bpf/cupti

# what an armed agent costs with no recorder: its thread's CPU time over 8 s
# of a program that set CUDA up and sleeps
mkdir -p /run/gtrace-bpf && mkdir -m 1733 /run/gtrace-bpf/cupti
CUDA_INJECTION64_PATH=$AG python3 -c 'import torch, time; torch.zeros(1, device="cuda"); print("up", flush=True); time.sleep(12)' \
	> "$OUT/armed.out" 2> "$OUT/armed.err" &
P=$!
for _ in $(seq 300); do grep -q '^up' "$OUT/armed.out" && break; sleep 0.1; done
th=$(grep -l '^gtrace-cupti$' /proc/$P/task/*/comm 2> /dev/null | head -n 1)
if [ -n "$th" ]; then
	th=$(dirname "$th")
	a=$(cut -d' ' -f1 "$th/schedstat"); sleep 8; b=$(cut -d' ' -f1 "$th/schedstat")
	echo "INFO cupti armed: the agent's thread used $(( (b - a) / 1000 )) us of CPU in 8 s with no recorder ($(awk -v d=$((b - a)) 'BEGIN { printf "%.4f", d / 8e9 * 100 }') % of a CPU)"
else
	echo "FAIL cupti armed: no gtrace-cupti thread in pid $P: $(tail -n 2 "$OUT/armed.err" | tr '\n' '|')"
fi
kill $P 2> /dev/null
wait $P 2> /dev/null

"$B" --all --cupti --cupti-lib "$AG" -q -o "$OUT/a.gtrace" > "$OUT/a.out" 2> "$OUT/a.err" &
A=$!
for _ in $(seq 100); do [ -f "$OUT/a.gtrace" ] && break; sleep 0.1; done
CUDA_INJECTION64_PATH=$AG python3 tools/gpu/torch_loop.py 20000 --wait 1 > "$OUT/job.out" 2> "$OUT/job.err" &
J=$!
for _ in $(seq 600); do grep -q '^ready' "$OUT/job.out" && break; sleep 0.1; done
grep -q '^ready' "$OUT/job.out" || { echo "FAIL cupti takeover: the job did not start: $(tail -n 3 "$OUT/job.err")"; kill -9 $A $J; exit 1; }
sleep 4	# the job records under the first recorder
kill -9 $A
wait $A 2> /dev/null
ls -ls /run/gtrace-bpf/cupti > "$OUT/run_dir_after_kill.txt" 2>&1
t0=$(date +%s.%N)
"$B" --all --cupti --cupti-lib "$AG" -d 5 -o "$OUT/b.gtrace" > "$OUT/b.out" 2> "$OUT/b.err"
rc=$?
echo "INFO cupti takeover: second recorder took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, exit $rc"
alive=no
kill -0 $J 2> /dev/null && alive=yes
ls -ls /run/gtrace-bpf/cupti > "$OUT/run_dir_after.txt" 2>&1
kill $J 2> /dev/null
wait $J 2> /dev/null
grep -E 'CUPTI|merged|wrote' "$OUT/b.err" | sed 's/^/INFO cupti takeover: /'
"$B" dump "$OUT/b.gtrace" > "$OUT/b.jsonl" 2> "$OUT/b.dump.err"
python3 - "$OUT/b.jsonl" "$J" "$rc" "$alive" <<'PY'
import json, sys
path, pid, rc, alive = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
launches = linked = kernels = 0
for line in open(path):
    r = json.loads(line)
    if r.get("pid") != pid:
        continue
    if r.get("type") == "launch":
        launches += 1
    elif r.get("type") == "gpu_kernel":
        kernels += 1
        linked += r.get("launch_ts") is not None
share = linked / launches if launches else 0.0
ok = rc == 0 and launches > 1000 and share >= 0.99 and alive == "yes"
print(f"{'PASS' if ok else 'FAIL'} cupti takeover: exit {rc}; job pid {pid} ran through it: {alive}; "
      f"{launches} launches recorded in 5 s, {linked} with their kernel linked ({100 * share:.2f} %), "
      f"{kernels} GPU kernels of the job in the trace")
sys.exit(0 if ok else 1)
PY
res=$?
echo "INFO cupti takeover: the run directory after the second recorder: $(tr '\n' '|' < "$OUT/run_dir_after.txt")"
exit $res
