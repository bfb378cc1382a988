#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf analyze on the GPU machine: one small CUDA program per verdict
# (tools/gpu/analyze_workloads.cu), each recorded with --cupti by the static
# build in the repo root (make STATIC=libs elsewhere; the GPU machine has no
# libbpf) and analyzed with the device's SM count; a PASS/FAIL line per
# verdict with its figures, then the three answers as INFO lines.  Last, a
# PyTorch loop (tools/gpu/torch_loop.py) analyzed, its verdict printed, and
# export --findings of it checked by tools/perfetto_lint.py.
#
#   launch     launch-bound tiny kernels      bound launch, launch_bound
#   gemm       a GEMM-bound loop              bound compute
#   copy       a bandwidth-bound copy kernel  bound memory
#   pageable   pageable host copies           cuda_memcpy_async
#   syncloop   a sync after every launch      sync_in_loop
#   onestream  independent copy and kernel on one stream   single_stream
#   hoststall  host work between steps        host_stall
#
# Usage (repo root, as root): tools/gpu/analyze_check.sh
# Outputs (traces, analyses as table and JSON) under $OUT (default
# /tmp/gtrace-analyze); exit 1 if any verdict is wrong.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gtrace-analyze}
B=${GTRACE:-./gtrace-bpf}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
fails=0
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

[ -x "$B" ] || { note "FAIL setup: no $B (make STATIC=libs first)"; exit 1; }
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Wall -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread \
	-o "$OUT/libgtrace-cupti.so" 2> "$OUT/build.log" || { note "FAIL setup: cannot build the CUPTI agent: $(tail -n 3 "$OUT/build.log")"; exit 1; }
"$CUDA/bin/nvcc" -O2 -o "$OUT/analyze_workloads" tools/gpu/analyze_workloads.cu 2>> "$OUT/build.log" ||
	{ note "FAIL setup: cannot build analyze_workloads: $(tail -n 3 "$OUT/build.log")"; exit 1; }
note "INFO $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# check MODE WANT-BOUND WANT-FINDING: records and analyzes one mode; either
# expectation may be "-"
check() {
	local m=$1 bound=$2 finding=$3 sms
	"$B" -q --cupti --cupti-lib "$OUT/libgtrace-cupti.so" -o "$OUT/$m.gtrace" --force -- \
		"$OUT/analyze_workloads" "$m" > "$OUT/$m.out" 2> "$OUT/$m.err"
	if [ $? -ne 0 ]; then
		note "FAIL analyze $m: recording failed: $(tail -n 2 "$OUT/$m.err" | tr '\n' '|')"
		fails=$((fails + 1))
		return
	fi
	sms=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["sms"])' "$OUT/$m.out")
	"$B" analyze "$OUT/$m.gtrace" --sms "$sms" --format json -o "$OUT/$m.json" --force 2> "$OUT/$m.aerr" &&
		"$B" analyze "$OUT/$m.gtrace" --sms "$sms" -o "$OUT/$m.txt" --force 2>> "$OUT/$m.aerr"
	if [ $? -ne 0 ]; then
		note "FAIL analyze $m: analyze failed: $(head -n 2 "$OUT/$m.aerr" | tr '\n' '|')"
		fails=$((fails + 1))
		return
	fi
	python3 - "$OUT/$m.json" "$OUT/$m.out" "$m" "$bound" "$finding" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
a = json.load(open(sys.argv[1]))
wl = json.loads(open(sys.argv[2]).read().splitlines()[-1])
mode, want_bound, want_finding = sys.argv[3:6]
# the workload's process: the scope with its kernels
s = max((x for x in a["scopes"] if x["kind"] == "process"), key=lambda x: x["work"]["kernels"])
ids = sorted(f["id"] for f in s["findings"])
ok = (want_bound == "-" or s["work"]["bound"] == want_bound) and (want_finding == "-" or want_finding in ids)
want = " and ".join(w for w in (want_bound != "-" and "bound " + want_bound or "",
                                want_finding != "-" and want_finding or "") if w)
g, w = s["gpu"], s["work"]
print("%s analyze %s: want %s; got bound %s, findings [%s]; GPU busy %.1f %% of %.3f s (%s), %d kernels "
      "median %s ns, %d launches, %d SMs; the program: %d ops in %.3f s" % (
      "PASS" if ok else "FAIL", mode, want, w["bound"], ", ".join(ids),
      100.0 * g["busy_ns"] / max(g["wall_ns"], 1), s["wall_ns"] / 1e9, g["source"], w["kernels"],
      w["kernel_median_ns"], w["launches"], s["parallelism"]["sm_count"], wl["count"], wl["wall_s"]))
for q in ("busy", "bound", "parallelism"):
    print("INFO   %s: %s" % (q, s["answers"][q]))
print("INFO   GPU metrics: %s samples (%s), %s idle left out, at %s Hz: tensor %s, DRAM %s, SM %s %%" % (
      w["metric_samples"], w["metric_basis"], w["metric_idle_samples"], w["metric_hz"],
      w["tensor_pct"], w["dram_pct"], w["sm_pct"]))
for f in s["findings"]:
    print("INFO   [%s] %s: %s" % (f["severity"], f["id"], f["summary"]))
sys.exit(0 if ok else 1)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
}

check launch launch launch_bound
check gemm compute -
check copy memory -
check pageable - cuda_memcpy_async
check syncloop - sync_in_loop
check onestream - single_stream
check hoststall - host_stall

# a PyTorch loop: its verdict, and its findings on the Perfetto timeline
"$B" -q --cupti --cupti-lib "$OUT/libgtrace-cupti.so" -o "$OUT/torch.gtrace" --force -- \
	python3 tools/gpu/torch_loop.py 200 > "$OUT/torch.out" 2> "$OUT/torch.err"
"$B" analyze "$OUT/torch.gtrace" --sms "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["sms"])' "$OUT/launch.out" 2>/dev/null || echo 132)" \
	--format json -o "$OUT/torch.json" --force 2> "$OUT/torch.aerr"
python3 - "$OUT/torch.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
a = json.load(open(sys.argv[1]))
s = max((x for x in a["scopes"] if x["kind"] == "process"), key=lambda x: x["work"]["kernels"])
print("INFO analyze torch_loop: bound %s, findings [%s]" % (s["work"]["bound"], ", ".join(sorted(f["id"] for f in s["findings"]))))
for q in ("busy", "bound", "parallelism"):
    print("INFO   %s: %s" % (q, s["answers"][q]))
PY
"$B" export "$OUT/torch.gtrace" --findings -f perfetto -o "$OUT/torch.pftrace" --force 2> "$OUT/torch.eerr" &&
	python3 tools/perfetto_lint.py "$OUT/torch.pftrace" > "$OUT/torch.lint" 2>&1
if [ $? -eq 0 ]; then
	note "PASS analyze export --findings: $(tail -n 1 "$OUT/torch.lint")"
else
	note "FAIL analyze export --findings: $(tail -n 2 "$OUT/torch.eerr" "$OUT/torch.lint" | tr '\n' '|')"
	fails=$((fails + 1))
fi
note "INFO analyze check: $fails failed; outputs in $OUT"
[ $fails -eq 0 ]
