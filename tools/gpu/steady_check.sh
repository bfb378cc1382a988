#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# analyze's steady state on the GPU machine (issue 27), from the repository
# root with a static build at ./gtrace-bpf (make STATIC=libs):
#   gemm   tools/gpu/gemm_startup.py, --cupti: 40 bf16 GEMMs back to back after
#          a slow start-up (a 16 GiB allocation, cuBLAS's first call): the steady
#          state's verdict must be compute-bound, whatever the whole run says
#   gpt2   tools/gpu/gpt2_step.py (transformers, its import time, no markers, no
#          synchronize a step), --cupti: the steady state's iterations, where it
#          starts after the process did, its median against the program's own
#          step time, busy and verdict against the whole run's
# Each recorded three ways (MODES, default all): cupti (the agent's GPU
# records), ebpf (the calls only: GPU-bound as far as the calls show, INFO)
# and metrics (--gpu-metrics, no agent: compute-bound when its samples in the
# loop show the tensor pipes, else GPU-bound by the calls, INFO).
# One PASS/FAIL/INFO line each into $OUT/summary.txt (default
# /tmp/gtrace-gpu-steady); the analyses (JSON, table) kept there.
set -u
CUDA=${CUDA_HOME:-/usr/local/cuda}
B=${GTRACE:-./gtrace-bpf}
OUT=${OUT:-/tmp/gtrace-gpu-steady}
W=$(mktemp -d /tmp/gtrace-steady.XXXXXX)
fails=0
mkdir -p "$OUT"
: > "$OUT/summary.txt"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
[ -x "$B" ] || { note "FAIL setup: no $B"; exit 1; }
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread -o "$W/agent.so" 2> "$OUT/build.log" ||
	{ note "FAIL setup: cannot build the CUPTI agent"; exit 1; }

run() {	# NAME CMD...: record as $mode says, analyze (JSON and table)
	local name=$1 rec=()
	shift
	case $mode in
	cupti) rec=(--cupti --cupti-lib "$W/agent.so") ;;
	metrics) rec=(--gpu-metrics=20) ;;
	esac
	"$B" -q "${rec[@]}" -o "$W/$name.gtrace" -- "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" ||
		{ note "FAIL $name: recording exited $?: $(tail -n 2 "$OUT/$name.err" | tr '\n' '|')"; fails=$((fails + 1)); return 1; }
	"$B" analyze "$W/$name.gtrace" --format json > "$OUT/$name.az.json" 2> "$OUT/$name.az.err" &&
		"$B" analyze "$W/$name.gtrace" > "$OUT/$name.az.txt" 2>> "$OUT/$name.az.err" ||
		{ note "FAIL $name: analyze exited $?: $(head -n 2 "$OUT/$name.az.err" | tr '\n' '|')"; fails=$((fails + 1)); return 1; }
}

for mode in ${MODES:-cupti ebpf metrics}; do
if run "gemm-$mode" python3 tools/gpu/gemm_startup.py; then
	python3 - "$OUT/gemm-$mode.az.json" "$OUT/gemm-$mode.out" "$mode" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1])); own = json.loads([l for l in open(sys.argv[2]) if l.startswith("{")][-1])
pid = max((s for s in d["scopes"]), key=lambda s: s["work"]["kernels"])["pid"]
st = [s for s in d["scopes"] if s["kind"] == "steady" and s["pid"] == pid]
wh = [s for s in d["scopes"] if s["kind"] == "process" and s["pid"] == pid][0]
def bound(s): return s.get("verdict", {}).get("bound") if isinstance(s.get("verdict"), dict) else s.get("bound")
if not st:
    print("FAIL steady gemm: no steady scope"); sys.exit(1)
s = st[0]; ph = s["phases"]
b = s["work"].get("bound") or bound(s)
mode = sys.argv[3]
ok = b == "compute"
# without GPU records the calls show a GPU-bound loop ("kernels"); a loop
# of 0.1 s holds one or two metric samples at 10 Hz, too few to name tensor use
tag = "PASS" if ok else ("INFO" if mode != "cupti" and b == "kernels" else "FAIL")
print("%s steady gemm (%s): steady state %s (%s %s), %d of %d iterations, from +%.3f s after the process' first call; bound %s (whole run: %s); GPU busy %.1f %% of the steady state, %.1f %% of the whole run; the program's own %.0f TFLOP/s" % (
    tag, mode, "found" if ph["steady"] else "not settled", ph["source"], ph["what"], ph["iterations"],
    ph["iterations_found"], (ph["steady_start_ns"] - ph["process_start_ns"]) / 1e9, b, wh["work"].get("bound"),
    100 * s["gpu"]["busy_ns"] / max(1, s["gpu"]["wall_ns"]), 100 * wh["gpu"]["busy_ns"] / max(1, wh["gpu"]["wall_ns"]), own["tflops"]))
sys.exit(0 if tag != "FAIL" else 1)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
fi

if run "gpt2-$mode" python3 tools/gpu/gpt2_step.py 60; then
	python3 - "$OUT/gpt2-$mode.az.json" "$OUT/gpt2-$mode.out" "$mode" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1])); own = json.loads([l for l in open(sys.argv[2]) if l.startswith("{")][-1])
st = [s for s in d["scopes"] if s["kind"] == "steady" and s["pid"] == own["pid"]]
wh = [s for s in d["scopes"] if s["kind"] == "process" and s["pid"] == own["pid"]][0]
if not st:
    print("FAIL steady gpt2: no steady scope"); sys.exit(1)
s = st[0]; ph = s["phases"]
med = ph["median_iteration_ns"] / 1e6
# the iterations are the steps when their median is the program's own
# median step (its time on the CPU, which paces a launch-bound step) within
# 10 %; its mean (ms_per_step) holds the first, slow step
ok = ph["source"] not in ("gpu_span", "calls_span") and abs(med / own["median_step_ms"] - 1) < 0.10
print("%s steady gpt2 (%s): %s '%s', %d of %d iterations found (start-up %d), median %.3f ms against the program's median %.3f ms a step (mean %.3f ms, its first step included); steady state from +%.3f s after the process' first CUDA call, %.3f s long; GPU busy %.1f %% of it (whole run %.1f %% of %.1f s); bound %s (whole run %s)" % (
    "PASS" if ok else "FAIL", sys.argv[3], ph["source"], ph["what"], ph["iterations"], ph["iterations_found"], ph["startup_iterations"],
    med, own["median_step_ms"], own["ms_per_step"], (ph["steady_start_ns"] - ph["process_start_ns"]) / 1e9, (ph["steady_end_ns"] - ph["steady_start_ns"]) / 1e9,
    100 * s["gpu"]["busy_ns"] / max(1, s["gpu"]["wall_ns"]), 100 * wh["gpu"]["busy_ns"] / max(1, wh["gpu"]["wall_ns"]),
    wh["wall_ns"] / 1e9, s["work"].get("bound"), wh["work"].get("bound")))
sys.exit(0 if ok else 1)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
fi
done
note "$([ $fails -eq 0 ] && echo PASS || echo FAIL) steady_check: $fails failed; analyses in $OUT"
rm -rf "$W"
[ $fails -eq 0 ]
