#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The GPU-machine check of --gpu-metrics (issue 15), as root on the H200,
# from the repository root, with a static build made elsewhere (`make
# STATIC=libs`: the GPU machine has no libbpf): tools/gpu/gpu_metrics_phases.py
# (a bf16 GEMM, a device-to-device copy, a loop of tiny kernels, SECONDS
# each) recorded at 10 Hz with the CUPTI agent. One PASS/FAIL line per check
# with its figures, INFO lines beside them, a closing count:
#   - the recording: NVML loaded (a static build first tries it in a child:
#     a machine whose glibc is not the build's says so here), GPM on GPU 0;
#   - the phases: tensor_active highest in the GEMM phase, dram_bw highest
#     in the copy phase, sm_active lowest in the tiny-kernel phase (the
#     per-phase means of gpu_util, power too, as INFO);
#   - the program's own memory (proc_mem_used of its pid) on GPU 0;
#   - sole occupancy (stats -r gpu_metrics_sum: a kernel at least 95 % of
#     the GPU's work in a sample's interval, so cuBLAS's ~1 us workspace set
#     before each GEMM does not hide it): a kernel row whose tensor_active
#     mean is 50 % or more (the GEMM's), the top rows as INFO;
#   - the sampler's CPU time from the recorder's summary line (INFO);
#   - GPU 0's SM count in the header (gpu_metrics_dev0_sms, from NVML's
#     nvmlDeviceGetAttributes_v2 or, where the driver does not answer that
#     for a whole GPU, its CUDA cores over the architecture's cores per SM:
#     gpu_metrics_dev0_sms_from=attributes|cores, named in the line) equal
#     to what CUDA says (PyTorch's multi_processor_count: 132 on the H200),
#     and analyze of the recording without --sms judging grids against it
#     (not the assumed 40).
# Usage: tools/gpu/gpu_metrics_check.sh [OUTDIR] (default a new directory
# under /tmp); GTRACE=./gtrace-bpf, CUPTI_LIB=the agent (default: built here
# with tools/gpu/build_agent.sh; none: the sole-occupancy check is skipped
# and says so), SECONDS_PER_PHASE=5. Exit 1 if a check failed.
set -u
GTRACE=${GTRACE:-./gtrace-bpf}
OUT=${1:-${OUT:-$(mktemp -d /tmp/gpu-metrics-check.XXXXXX)}}
SECS=${SECONDS_PER_PHASE:-5}
mkdir -p "$OUT"
pass=0 fail=0
line() { # PASS|FAIL|INFO text
	echo "$1 gpu_metrics $2"
	case $1 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; esac
}
finish() {
	echo "gpu_metrics_check: $pass passed, $fail failed (outputs in $OUT)"
	[ "$fail" -eq 0 ]
	exit
}

[ -x "$GTRACE" ] || { line FAIL "setup: no $GTRACE (make STATIC=libs first)"; finish; }
line INFO "$("$GTRACE" --version 2>/dev/null | head -n 1); $(file -b "$GTRACE" | cut -d, -f1-4 | grep -o 'statically linked\|dynamically linked' || echo 'linkage unknown'); GPU $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
CUPTI_LIB=${CUPTI_LIB-}
if [ -z "$CUPTI_LIB" ]; then
	CUPTI_LIB=$OUT/libgtrace-cupti.so
	tools/gpu/build_agent.sh "$CUPTI_LIB" "$OUT/build.log" || CUPTI_LIB=
fi
cupti=()
[ -n "$CUPTI_LIB" ] && [ -f "$CUPTI_LIB" ] && cupti=(--cupti=optional --cupti-lib "$CUPTI_LIB")
[ ${#cupti[@]} -gt 0 ] || line INFO "no CUPTI agent ($(tail -n 1 "$OUT/build.log" 2>/dev/null)): no GPU records, no sole-occupancy check"

"$GTRACE" --gpu-metrics=10 "${cupti[@]}" -o "$OUT/phases.gtrace" --force -- \
	python3 tools/gpu/gpu_metrics_phases.py "$SECS" > "$OUT/phases.out" 2> "$OUT/record.err"
rc=$?
grep -i 'gpu metrics\|mig mode\|fell off' "$OUT/record.err" | sed 's/^gtrace-bpf: /INFO gpu_metrics recorder: /'
if [ $rc -ne 0 ] || [ ! -f "$OUT/phases.gtrace" ]; then
	line FAIL "record: gtrace-bpf exited $rc: $(tail -n 3 "$OUT/record.err" | tr '\n' '|')"
	finish
fi
if grep -q 'no GPU metrics:' "$OUT/record.err"; then
	line FAIL "record: $(grep -m1 'no GPU metrics:' "$OUT/record.err" | sed 's/^gtrace-bpf: //')"
	finish
fi
line PASS "record: exit 0, $(grep -m1 'GPU metrics: [0-9]* GPU' "$OUT/record.err" | sed 's/^gtrace-bpf: //')"
"$GTRACE" dump "$OUT/phases.gtrace" > "$OUT/phases.dump" 2> "$OUT/dump.err" ||
	{ line FAIL "dump: $(head -n 1 "$OUT/dump.err")"; finish; }
"$GTRACE" stats "$OUT/phases.gtrace" -r gpu_metrics_sum --format json > "$OUT/stats.json" 2> "$OUT/stats.err" ||
	line FAIL "stats -r gpu_metrics_sum: $(head -n 1 "$OUT/stats.err")"
"$GTRACE" stats "$OUT/phases.gtrace" -r gpu_metrics_sum > "$OUT/stats.txt" 2>&1

python3 - "$OUT/phases.out" "$OUT/phases.dump" "$OUT/stats.json" "${#cupti[@]}" <<- 'PY' > "$OUT/checks.txt"
	import json, sys
	lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
	pid = [l["pid"] for l in lines if "pid" in l][0]
	phases = [l for l in lines if "phase" in l]
	recs = [r for r in map(json.loads, open(sys.argv[2])) if r.get("type") == "gpu_metric"]
	def out(kind, text):
	    print("%s gpu_metrics %s" % (kind, text))
	gpm = [r for r in recs if r["device"] == 0 and r["metric"] == "tensor_active"]
	out("PASS" if gpm else "FAIL", "GPM on GPU 0: %d tensor_active samples" % len(gpm))
	mean = {}
	for p in phases:
	    for m in ("tensor_active", "dram_bw", "sm_active", "gpu_util", "power"):
	        v = [r["value"] for r in recs if r["device"] == 0 and r["metric"] == m
	             and p["start"] <= r["ts"] <= p["end"]]
	        mean[(p["phase"], m)] = sum(v) / len(v) if v else float("nan")
	    out("INFO", "phase %-5s %.1f s: " % (p["phase"], (p["end"] - p["start"]) / 1e9) + ", ".join(
	        "%s %.2f" % (m, mean[(p["phase"], m)]) for m in ("tensor_active", "dram_bw", "sm_active",
	                                                          "gpu_util", "power")))
	def m(ph, k):
	    return mean.get((ph, k), float("nan"))
	ok = m("gemm", "tensor_active") > max(m("copy", "tensor_active"), m("empty", "tensor_active"))
	out("PASS" if ok else "FAIL", "tensor_active highest in the GEMM phase: %.2f against copy %.2f, tiny %.2f"
	    % (m("gemm", "tensor_active"), m("copy", "tensor_active"), m("empty", "tensor_active")))
	ok = m("copy", "dram_bw") > max(m("gemm", "dram_bw"), m("empty", "dram_bw"))
	out("PASS" if ok else "FAIL", "dram_bw highest in the copy phase: %.2f against GEMM %.2f, tiny %.2f"
	    % (m("copy", "dram_bw"), m("gemm", "dram_bw"), m("empty", "dram_bw")))
	ok = m("empty", "sm_active") < min(m("gemm", "sm_active"), m("copy", "sm_active"))
	out("PASS" if ok else "FAIL", "sm_active lowest in the tiny-kernel phase: %.2f against GEMM %.2f, copy %.2f"
	    % (m("empty", "sm_active"), m("gemm", "sm_active"), m("copy", "sm_active")))
	mem = [r["value"] for r in recs if r["metric"] == "proc_mem_used" and r["pid"] == pid and r["device"] == 0]
	out("PASS" if mem and max(mem) > 0 else "FAIL",
	    "the program's memory (pid %d) on GPU 0: %d samples, max %.0f MiB" % (pid, len(mem),
	    max(mem) / 2**20 if mem else 0))
	if int(sys.argv[4]):
	    try:
	        rows = json.load(open(sys.argv[3]))["reports"][0]["rows"]
	    except (OSError, ValueError, KeyError, IndexError):
	        rows = []
	    kern = [r for r in rows if r["scope"] == "kernel"]
	    tens = sorted((r for r in kern if r["metric"] == "tensor_active"), key=lambda r: -r["mean"])
	    for r in sorted((r for r in kern if r["metric"] in ("tensor_active", "dram_bw", "sm_active")),
	                    key=lambda r: -r["samples"])[:6]:
	        out("INFO", "sole occupancy: %s %s mean %s over %d samples" % (r["of"][:70], r["metric"],
	            r["mean"], r["samples"]))
	    ok = bool(tens) and tens[0]["mean"] >= 50
	    out("PASS" if ok else "FAIL", "sole occupancy: the kernel with the most tensor_active: %s"
	        % ("%s, %s %% over %d samples" % (tens[0]["of"][:70], tens[0]["mean"], tens[0]["samples"])
	           if tens else "no kernel row"))
	PY
cat "$OUT/checks.txt"
pass=$((pass + $(grep -c '^PASS' "$OUT/checks.txt")))
fail=$((fail + $(grep -c '^FAIL' "$OUT/checks.txt")))
[ -s "$OUT/checks.txt" ] || line FAIL "the checks of the dump did not run (python3: see above)"
line INFO "sampler: $(grep -o "the sampler's threads used .*" "$OUT/record.err" | head -n 1)"

hdr=$("$GTRACE" dump --summary "$OUT/phases.gtrace" 2>/dev/null)
sms=$(grep -o 'gpu_metrics_dev0_sms=[0-9]*' <<< "$hdr" | cut -d= -f2)
from=$(grep -o 'gpu_metrics_dev0_sms_from=[a-z]*' <<< "$hdr" | cut -d= -f2)
cuda_sms=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)' 2>/dev/null)
if [ -z "$sms" ]; then
	line FAIL "SM count: the header has no gpu_metrics_dev0_sms (neither NVML's nvmlDeviceGetAttributes_v2 nor its CUDA cores over the architecture's cores per SM gave one on this driver; run with -v for the recorder's reason); CUDA says ${cuda_sms:-?}"
else
	[ "$sms" = "$cuda_sms" ] && [ -n "$from" ] && r=PASS || r=FAIL
	case $from in
	attributes) how="nvmlDeviceGetAttributes_v2's multiprocessorCount" ;;
	cores) how="nvmlDeviceGetNumGpuCores over the architecture's cores per SM" ;;
	*) how="source not said: no gpu_metrics_dev0_sms_from" ;;
	esac
	line $r "SM count: the header's gpu_metrics_dev0_sms=$sms (from ${from:-?}: $how), CUDA's multi_processor_count ${cuda_sms:-?}"
fi
"$GTRACE" analyze "$OUT/phases.gtrace" --format json > "$OUT/analyze.json" 2> "$OUT/analyze.err"
got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = [s["parallelism"] for s in d["scopes"] if s.get("parallelism")]
print("%s %s" % (p[0]["sm_count"], str(p[0]["sm_assumed"]).lower()) if p else "none")
print("; ".join(n for n in d["notes"] if "SM" in n) or "no note on SMs")' "$OUT/analyze.json" 2>/dev/null)
[ -n "$sms" ] && [ "$(head -n 1 <<< "$got")" = "$sms false" ] && r=PASS || r=FAIL
line $r "SM count: analyze without --sms judged grids against $(head -n 1 <<< "$got") (SMs, assumed); $(tail -n 1 <<< "$got")"
finish
