#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf diff on the GPU machine, from the repository root with a static
# build at ./gtrace-bpf (make STATIC=libs): baseline/optimized pairs whose
# speedup the programs measure themselves, recorded, and diff's speedup
# checked against theirs (within +-3 %, the brief of issue 16):
#   torch-graph  PyTorch, 20 Linear+ReLU layers x 5 passes a step, eager against a
#                CUDA graph replay (tools/gpu/diff_steps.py), --cupti: iterations
#                from the NVTX step ranges, GPU records on both sides
#   torch-bf16   PyTorch, a chain of 4096^2 matrix products, float32 against bfloat16
#   driver       the driver-API workload (tests/mock/cuda_workload*.c --steps), a
#                2 ms spin a step against 1 ms, eBPF only: iterations between the
#                synchronizes that end the steps
#   no markers   (issue 27) torch-graph and torch-bf16 again without NVTX, with and
#                without --cupti, and torch-host (20 launches of one kernel, host
#                work of 30 ms against 5 ms, a synchronize), torch-compile (eager
#                against torch.compile), torch-amp (a GPT-2 training step, fp32
#                against bf16 autocast), torch-loader (a host-bound loading loop
#                against a prefetching thread): iterations from the calls (source
#                sync), never a kernel pattern of one side (NOMARK_CASES chooses)
# Each pair: one PASS/FAIL line with diff's speedup, its interval and the
# program's own ratio; the diff tables and the programs' JSON lines are kept
# in $OUT (default /tmp/gtrace-gpu-diff).  Exit 1 if any check failed.
#
# Usage: tools/gpu/diff_check.sh [STEPS]   (default 60 steps a run)
set -u
CUDA=${CUDA_HOME:-/usr/local/cuda}
B=${GTRACE:-./gtrace-bpf}
OUT=${OUT:-/tmp/gtrace-gpu-diff}
STEPS=${1:-60}
W=$(mktemp -d /tmp/gtrace-diff.XXXXXX)
fails=0
mkdir -p "$OUT"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
fail() { note "FAIL $1: $2"; fails=$((fails + 1)); }

[ -x "$B" ] || { note "FAIL setup: no $B (make STATIC=libs first)"; exit 1; }
: > "$OUT/summary.txt"
note "INFO $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $("$B" --version | head -1)"
# the CUPTI agent and the driver-API workload, built here against the toolkit
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread -o "$W/agent.so" 2> "$OUT/build.log" ||
	{ note "FAIL setup: cannot build the CUPTI agent: $(tail -n 2 "$OUT/build.log" | tr '\n' '|')"; exit 1; }
gcc -O2 -std=gnu11 -D_GNU_SOURCE -I"$CUDA/include" -DGT_HAVE_CUDA_H -Itests/mock \
	tests/mock/cuda_workload*.c -ldl -lpthread -o "$W/cuda_workload" 2>> "$OUT/build.log" ||
	{ note "FAIL setup: cannot build the driver-API workload: $(tail -n 2 "$OUT/build.log" | tr '\n' '|')"; exit 1; }

# record NAME VARIANT ARGS...: gtrace-bpf [ARGS before --] -- CMD into
# $W/NAME_VARIANT.gtrace, the program's last JSON line in $OUT/NAME_VARIANT.json.
record() {
	local name=$1 variant=$2
	shift 2
	"$B" -q -o "$W/${name}_$variant.gtrace" "$@" > "$W/$name.$variant.out" 2> "$OUT/$name.$variant.err"
	local rc=$?
	grep '^{' "$W/$name.$variant.out" | tail -n 1 > "$OUT/${name}_$variant.json"
	[ $rc -eq 0 ] && [ -s "$OUT/${name}_$variant.json" ] || {
		fail "$name" "recording the $variant exited $rc: $(tail -n 2 "$OUT/$name.$variant.err" | tr '\n' '|')"
		return 1
	}
}

# check NAME SOURCE OWN_FIELD: diff of NAME's pair (the _baseline / _optimized
# names, given the other way round: diff orders them) against the programs'
# own median OWN_FIELD ratio.
check() {
	local name=$1 src=$2 field=$3
	"$B" diff "$W/${name}_optimized.gtrace" "$W/${name}_baseline.gtrace" > "$OUT/$name.diff.txt" 2>&1
	"$B" diff "$W/${name}_optimized.gtrace" "$W/${name}_baseline.gtrace" --format json \
		> "$OUT/$name.diff.json" 2> "$OUT/$name.diff.err" ||
		{ fail "$name" "diff exited $?: $(head -n 2 "$OUT/$name.diff.err" | tr '\n' '|')"; return; }
	python3 - "$name" "$src" "$field" "$OUT/$name.diff.json" "$OUT/${name}_baseline.json" \
		"$OUT/${name}_optimized.json" "$STEPS" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
name, src, field, dpath, bpath, opath, steps = sys.argv[1:8]
d = json.load(open(dpath))
b, o = json.loads(open(bpath).read()), json.loads(open(opath).read())
def own(j):
    return j["steps"][field] if "steps" in j and isinstance(j["steps"], dict) else j[field]
ratio = own(b) / own(o)
s = d["speedup"]
it = (d["baseline"]["iterations"], d["optimized"]["iterations"])
lo, hi = s["interval"] if s and s.get("interval") else (None, None)
dev = s["point"] / ratio - 1 if s else float("nan")
ok = (s is not None and abs(dev) <= 0.03 and it[0]["source"] == src and it[1]["source"] == src
      and d["swapped"])
gb = d.get("gpu_busy")
print("%s diff %s: speedup %.3fx [%s, %s], the program's own %.3fx (%+.2f %%); iterations %s %s/%s%s%s" % (
    "PASS" if ok else "FAIL", name, s["point"] if s else float("nan"),
    "%.3f" % lo if lo else "-", "%.3f" % hi if hi else "-", ratio, 100 * dev, it[0]["source"],
    it[0]["count"], it[1]["count"],
    "; GPU busy %.3fx [%.3f, %.3f]" % (gb["point"], gb["interval"][0], gb["interval"][1])
    if gb and gb.get("interval") else "",
    "" if lo is None or lo <= ratio <= hi else "; the program's own ratio is outside the interval"))
a = d.get("analysis", {})
if a.get("valid"):
    t = a["terms"]
    print("INFO diff %s analyze: bound %s -> %s; GPU busy/iter %s; idle submit %s; findings %s" % (
        name, a["bound"][0], a["bound"][1],
        "%.0f -> %.0f us" % (t["gpu_busy"]["base"] / 1e3, t["gpu_busy"]["opt"] / 1e3) if t.get("gpu_busy") else "-",
        "%.0f -> %.0f us" % (t["idle_submit"]["base"] / 1e3, t["idle_submit"]["opt"] / 1e3) if t.get("idle_submit") else "-",
        ", ".join("%s %s -> %s" % (f["id"], f["base"]["severity"] if f["base"] else "-",
                                  f["opt"]["severity"] if f["opt"] else "-") for f in a["findings"]) or "none"))
sys.exit(0 if ok else 1)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
}

for c in graph bf16; do
	ok=1
	for v in baseline optimized; do
		record "torch-$c" "$v" --cupti --cupti-lib "$W/agent.so" -- \
			python3 tools/gpu/diff_steps.py --case "$c" --variant "$v" --steps "$STEPS" || ok=0
	done
	[ $ok -eq 1 ] && check "torch-$c" nvtx step_median_ns
done
for c in ${NOMARK_CASES:-graph bf16 host compile amp loader}; do
	for mode in ebpf cupti; do
		ok=1
		extra=()
		[ $mode = cupti ] && extra=(--cupti --cupti-lib "$W/agent.so")
		for v in baseline optimized; do
			record "nomark-$c-$mode" "$v" "${extra[@]}" -- python3 tools/gpu/diff_steps.py --case "$c" \
				--variant "$v" --steps "$STEPS" --no-markers || ok=0
		done
		[ $ok -eq 1 ] && check "nomark-$c-$mode" sync step_median_ns
	done
done
ok=1
record driver baseline -- "$W/cuda_workload" --steps "$STEPS" --step-us 2000 --step-jitter 10 || ok=0
record driver optimized -- "$W/cuda_workload" --steps "$STEPS" --step-us 1000 --step-jitter 10 || ok=0
[ $ok -eq 1 ] && check driver sync period_median_ns

note "$([ $fails -eq 0 ] && echo PASS || echo FAIL) diff_check: $fails failed; tables and JSON in $OUT"
rm -rf "$W"
[ $fails -eq 0 ]
