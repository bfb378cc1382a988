#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The GPU-machine check of --gpu-metrics (issue 15), as root on the H200:
# tools/gpu/gpu_metrics_phases.py recorded at 10 Hz; the per-phase means of
# tensor_active, dram_bw and sm_active from dump, which must say tensor
# highest in the GEMM phase, DRAM highest in the copy phase, SM lowest in
# the empty-kernel phase. Usage: tools/gpu/gpu_metrics_check.sh [OUTDIR]
# (gtrace-bpf from ./gtrace-bpf or $GTRACE).
set -u
GTRACE=${GTRACE:-./gtrace-bpf}
OUT=${1:-/tmp/gpu-metrics-check}
mkdir -p "$OUT"
"$GTRACE" --gpu-metrics=10 -o "$OUT/phases.gtrace" --force -- \
	python3 tools/gpu/gpu_metrics_phases.py 5 > "$OUT/phases.out" 2> "$OUT/record.err" ||
	{ echo "FAIL gpu_metrics_check: the recording failed: $(tail -n 3 "$OUT/record.err" | tr '\n' '|')"; exit 1; }
"$GTRACE" dump "$OUT/phases.gtrace" | grep '"type":"gpu_metric"' > "$OUT/metrics.dump"
grep -i 'gpu metrics' "$OUT/record.err"
python3 - "$OUT/phases.out" "$OUT/metrics.dump" <<- 'PY'
	import json, sys
	phases = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
	recs = [json.loads(l) for l in open(sys.argv[2])]
	mean = {}
	for p in phases:
	    for m in ("tensor_active", "dram_bw", "sm_active", "gpu_util", "power"):
	        v = [r["value"] for r in recs if r["device"] == 0 and r["metric"] == m
	             and p["start"] <= r["ts"] <= p["end"]]
	        mean[(p["phase"], m)] = sum(v) / len(v) if v else float("nan")
	        print("%-6s %-14s mean %8.2f over %d samples" % (p["phase"], m, mean[(p["phase"], m)], len(v)))
	ok = (mean[("gemm", "tensor_active")] > max(mean[("copy", "tensor_active")], mean[("empty", "tensor_active")])
	      and mean[("copy", "dram_bw")] > max(mean[("gemm", "dram_bw")], mean[("empty", "dram_bw")])
	      and mean[("empty", "sm_active")] < min(mean[("gemm", "sm_active")], mean[("copy", "sm_active")]))
	print("PASS gpu_metrics_check" if ok else "FAIL gpu_metrics_check: the phases do not order as expected")
	sys.exit(0 if ok else 1)
PY
