#!/usr/bin/env bash
# GPU acceptance checks, run on the GPU machine from the repo root with a
# static build made elsewhere (`make STATIC=libs`; the binary travels as
# ./gtrace-bpf). One PASS/FAIL line per check with its figures; logs and
# traces packed into $OUT/gpu-logs.tgz, the summary in $OUT/summary.txt
# ($OUT defaults to /tmp/gtrace-gpu). Exit 1 if any check failed.
set -u
FINAL=${OUT:-/tmp/gtrace-gpu}
W=$(mktemp -d /tmp/gtrace-gpu.XXXXXX)
OUT=$W/logs
B=${GTRACE:-./gtrace-bpf}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
fails=0
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
result() { # name rc detail
	if [ "$2" -eq 0 ]; then note "PASS $1: $3"; else note "FAIL $1: $3"; fails=$((fails + 1)); fi
}
pycheck() { # mode dump output
	python3 tools/gpu/check_trace.py "$@" | tee -a "$OUT/summary.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
}
wait_for() { # file pattern seconds
	local i
	for i in $(seq 1 $(($3 * 10))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

LIBCUDA=$(readlink -f /usr/local/nvidia/lib64/libcuda.so.1 2>/dev/null || ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
note "INFO $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); kernel $(uname -r); libcuda $LIBCUDA"
[ -x "$B" ] || { note "FAIL setup: no $B (make STATIC=libs first)"; exit 1; }
file "$B" 2>/dev/null | grep -q "statically linked" && note "INFO $B is static"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

# build the workloads here: nvcc for the runtime API one, gcc for the driver API one
"$CUDA/bin/nvcc" -O2 -o "$W/runtime_workload" tools/gpu/runtime_workload.cu 2>"$OUT/build.log"
result "build runtime workload" $? "nvcc $(\"$CUDA/bin/nvcc\" --version | tail -1)"
gcc -O2 -std=gnu11 -D_GNU_SOURCE -I"$CUDA/include" -DGT_HAVE_CUDA_H -Itests/mock \
	tests/mock/cuda_workload*.c -ldl -lpthread -o "$W/cuda_workload" 2>>"$OUT/build.log"
result "build driver workload" $? "gcc"

# the probe list against the driver's exports
nm -D --defined-only "$LIBCUDA" | awk '{print $NF}' | sort -u > "$OUT/libcuda_exports.txt"
grep -oE '^[[:space:]]*X\(cu[A-Za-z0-9_]+' bpf/gtrace_api.h | sed 's/.*X(//' | sort -u > "$W/probed.txt"
comm -23 "$W/probed.txt" "$OUT/libcuda_exports.txt" > "$OUT/probed_not_exported.txt"
note "INFO probe table: $(wc -l < "$W/probed.txt") symbols, $(grep -c '^cu' "$OUT/libcuda_exports.txt") cu* exports in libcuda; not exported: $(tr '\n' ' ' < "$OUT/probed_not_exported.txt")"
# where the hot probes land: an entry instruction the kernel cannot emulate
# costs a second (single-step) trap per hit
mkdir -p "$OUT/entries"
python3 tools/gpu/first_insns.py --dump "$OUT/entries" "$LIBCUDA" cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx \
	cuLaunchKernelEx_ptsz cuMemcpyHtoD_v2 cuMemcpyHtoDAsync_v2 cuMemcpyAsync cuStreamSynchronize \
	cuEventRecord 2>&1 | sed 's/^/INFO entry /' | tee -a "$OUT/summary.txt"

# 1. runtime API program: exact launches, copies, stream syncs, kernel names
"$B" -q -o "$W/rt.gtrace" -- "$W/runtime_workload" 1000 100 50 > "$OUT/rt.out" 2> "$OUT/rt.err"
result "record runtime workload" $? "exit status of gtrace-bpf -- runtime_workload; $(tail -1 "$OUT/rt.err")"
"$B" dump "$W/rt.gtrace" > "$OUT/rt.jsonl"
pycheck runtime "$OUT/rt.jsonl" "$OUT/rt.out"
"$B" dump --summary "$W/rt.gtrace" > "$OUT/rt.summary"
# the driver's ioctls of the same run (init, allocations, syncs) and the rung
pycheck ioctl "$OUT/rt.jsonl" "$OUT/rt.out"
note "INFO ioctl rung and sources: $(grep -o 'trace=[^ ]*\|ioctl_rung=[^ ]*\|ioctl_majors=[^ ]*\|uprobes=[^ ]*' "$OUT/rt.summary" | tr '\n' ' ')"

# 1b. the same program with --launch-exit: every launch with its duration and result
"$B" -q --launch-exit -o "$W/rtx.gtrace" -- "$W/runtime_workload" 1000 100 50 > "$OUT/rtx.out" 2> "$OUT/rtx.err"
"$B" dump "$W/rtx.gtrace" | python3 -c "
import json, sys
ev = [json.loads(l) for l in sys.stdin]
l = [e for e in ev if e.get('type') == 'launch']
ok = [e for e in l if e.get('ret') == 0 and e.get('dur', 0) > 0]
d = sorted(e['dur'] for e in ok) or [0]
print('%s launch exits: %d launches, %d with ret 0 and a duration (median %d ns, p99 %d ns)' % (
      'PASS' if len(l) == 1000 and len(ok) == 1000 else 'FAIL', len(l), len(ok), d[len(d) // 2], d[len(d) * 99 // 100]))
sys.exit(0 if len(l) == 1000 and len(ok) == 1000 else 1)
" | tee -a "$OUT/summary.txt"
[ "${PIPESTATUS[1]}" -eq 0 ] || fails=$((fails + 1))

# 2. driver API program (the bundled workload, real PTX): counts per api
"$B" -q -o "$W/drv.gtrace" -- "$W/cuda_workload" --launches 400 --copies 20 --syncs 10 --fail \
	> "$OUT/drv.out" 2> "$OUT/drv.err"
result "record driver workload" $? "$(tail -1 "$OUT/drv.err")"
"$B" dump "$W/drv.gtrace" > "$OUT/drv.jsonl"
pycheck driver "$OUT/drv.jsonl" "$OUT/drv.out"

# 3. PyTorch with --all, the tracer started after the process set CUDA up
python3 tools/gpu/torch_loop.py 300 --wait 6 > "$OUT/torch.out" 2> "$OUT/torch.err" &
tpid=$!
wait_for "$OUT/torch.out" ready 120
"$B" --all -o "$W/torch.gtrace" -v > /dev/null 2> "$OUT/torch_rec.err" &
rpid=$!
wait_for "$OUT/torch_rec.err" "recording to" 30
result "attach --all" $? "$(grep -m1 'recording to' "$OUT/torch_rec.err")"
wait $tpid
sleep 0.5
kill -INT $rpid; wait $rpid
result "stop on SIGINT" $? "$(tail -1 "$OUT/torch_rec.err")"
"$B" dump "$W/torch.gtrace" > "$OUT/torch.jsonl"
pycheck torch "$OUT/torch.jsonl" "$OUT/torch.out"
"$B" dump --summary "$W/torch.gtrace" > "$OUT/torch.summary"
# the PyTorch trace as a Perfetto timeline and Chrome JSON, checked independently
"$B" export "$W/torch.gtrace" -f perfetto -o "$W/torch.pftrace" 2> "$OUT/export.err"
result "export perfetto" $? "$(stat -c %s "$W/torch.pftrace" 2>/dev/null) bytes"
python3 tools/perfetto_lint.py "$W/torch.pftrace" > "$OUT/lint.txt" 2>&1
result "perfetto lint" $? "$(tail -1 "$OUT/lint.txt")"
"$B" export "$W/torch.gtrace" -f json -o "$W/torch.json" 2>> "$OUT/export.err" &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['traceEvents']), 'events')" \
	"$W/torch.json" > "$OUT/json.txt" 2>&1
result "export json" $? "$(cat "$OUT/json.txt")"
"$B" stats "$W/torch.gtrace" > "$OUT/torch.stats" 2>&1
result "stats" $? "$(grep -c . "$OUT/torch.stats") lines"

# 5. the CUPTI agent: kernels on several streams in a known order, each GPU
# record linked to its launch; then PyTorch with --cupti on the timeline
if [ -d cupti ] && ls cupti/*.c >/dev/null 2>&1; then
	CUDA_HOME=$CUDA tools/gpu/build_agent.sh "$W/libgtrace-cupti.so" "$OUT/build.log"
	result "build CUPTI agent" $? "gcc against $CUDA/include/cupti.h"
	"$CUDA/bin/nvcc" -O2 -o "$W/streams_workload" tools/gpu/streams_workload.cu 2>> "$OUT/build.log"
	"$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -o "$W/cu.gtrace" -- "$W/streams_workload" 4 250 \
		> "$OUT/cu.out" 2> "$OUT/cu.err"
	result "record --cupti" $? "$(tail -1 "$OUT/cu.err")"
	"$B" dump "$W/cu.gtrace" > "$OUT/cu.jsonl"
	"$B" dump --summary "$W/cu.gtrace" > "$OUT/cu.summary"
	python3 tools/gpu/cupti_check.py "$OUT/cu.jsonl" "$OUT/cu.out" "$OUT/cu.summary" | tee -a "$OUT/summary.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
	# the same without the agent's API records: linked by launch order
	GTRACE_CUPTI_API=none "$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -o "$W/cuo.gtrace" -- \
		"$W/streams_workload" 4 250 > "$OUT/cuo.out" 2> "$OUT/cuo.err"
	result "record --cupti, GTRACE_CUPTI_API=none" $? "$(tail -1 "$OUT/cuo.err")"
	"$B" dump "$W/cuo.gtrace" > "$OUT/cuo.jsonl"
	"$B" dump --summary "$W/cuo.gtrace" > "$OUT/cuo.summary"
	python3 tools/gpu/cupti_check.py "$OUT/cuo.jsonl" "$OUT/cuo.out" "$OUT/cuo.summary" | sed 's/^\(PASS\|FAIL\) cupti/\1 by-order cupti/' | tee -a "$OUT/summary.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
	# same-looking kernels from 4 threads at once: only the durations tell
	# which thread launched which. Through the API records every link must
	# be right; by launch order this is the known weak case (figures only).
	for mode in api order; do
		env=GTRACE_CUPTI_API=calls
		[ $mode = order ] && env=GTRACE_CUPTI_API=none
		env $env "$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -o "$W/ct$mode.gtrace" -- \
			"$W/streams_workload" 4 250 threads > "$OUT/ct$mode.out" 2> "$OUT/ct$mode.err"
		"$B" dump "$W/ct$mode.gtrace" > "$OUT/ct$mode.jsonl"
		if [ $mode = api ]; then
			python3 tools/gpu/cupti_threads_check.py "API records" "$OUT/ct$mode.jsonl" "$OUT/ct$mode.out" | tee -a "$OUT/summary.txt"
			[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
		else
			python3 tools/gpu/cupti_threads_check.py "by launch order" "$OUT/ct$mode.jsonl" "$OUT/ct$mode.out" | sed 's/^\(PASS\|FAIL\)/INFO/' | tee -a "$OUT/summary.txt"
		fi
	done
	"$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -o "$W/tc.gtrace" -- \
		python3 tools/gpu/torch_loop.py 100 > "$OUT/tc.out" 2> "$OUT/tc.err"
	result "record PyTorch --cupti" $? "$(tail -1 "$OUT/tc.err")"
	"$B" export "$W/tc.gtrace" -f perfetto -o "$W/tc.pftrace" 2>> "$OUT/export.err"
	python3 tools/perfetto_lint.py "$W/tc.pftrace" > "$OUT/tc.lint" 2>&1
	result "PyTorch --cupti timeline" $? "$(tail -1 "$OUT/tc.lint")"
	# one arrow per linked GPU record in both exports of this default
	# (launches at entry only) recording
	"$B" export "$W/tc.gtrace" -f json -o "$W/tc.json" 2>> "$OUT/export.err"
	"$B" dump "$W/tc.gtrace" > "$OUT/tc.jsonl"
	python3 tools/gpu/arrows_check.py "$OUT/tc.jsonl" "$W/tc.pftrace" "$W/tc.json" > "$OUT/tc.arrows" 2>&1
	result "PyTorch --cupti arrows" $? "$(tail -1 "$OUT/tc.arrows" | sed 's/^\(PASS\|FAIL\) timeline arrows: //')"
	"$B" dump "$W/tc.gtrace" | python3 -c "
import sys, json, collections
ev = [json.loads(l) for l in sys.stdin]
g = [e for e in ev if e['type'] == 'gpu_kernel']
l = [e for e in g if 'launch_ts' in e]
print('INFO torch --cupti: %d GPU kernels, %d linked, %d distinct names, top %s' % (len(g), len(l),
      len(set(e.get('kernel') for e in g)), collections.Counter(e.get('kernel', '')[:60] for e in g).most_common(3)))
" | tee -a "$OUT/summary.txt"
	"$B" stats "$W/tc.gtrace" -r cuda_gpu_kern_sum,gpu_launch_latency > "$OUT/tc.stats" 2>&1
	result "GPU stats" $? "$(grep -c . "$OUT/tc.stats") lines"
fi

# a transformers GPT-2 (random weights) with --cupti: one arrow per linked
# GPU record in both exports, on a model's many kernel kinds
if [ -f "$W/libgtrace-cupti.so" ] && python3 -c 'import transformers' 2>/dev/null; then
	"$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -o "$W/g2.gtrace" -- \
		python3 tools/gpu/gpt2_step.py 10 > "$OUT/g2.out" 2> "$OUT/g2.err"
	result "record GPT-2 --cupti" $? "$(grep '^{' "$OUT/g2.out" | tail -1) $(tail -1 "$OUT/g2.err")"
	"$B" export "$W/g2.gtrace" -f perfetto -o "$W/g2.pftrace" 2>> "$OUT/export.err"
	"$B" export "$W/g2.gtrace" -f json -o "$W/g2.json" 2>> "$OUT/export.err"
	"$B" dump "$W/g2.gtrace" > "$OUT/g2.jsonl"
	python3 tools/gpu/arrows_check.py "$OUT/g2.jsonl" "$W/g2.pftrace" "$W/g2.json" > "$OUT/g2.arrows" 2>&1
	result "GPT-2 --cupti arrows" $? "$(tail -1 "$OUT/g2.arrows" | sed 's/^\(PASS\|FAIL\) timeline arrows: //')"
else
	note "INFO GPT-2 check skipped: no CUPTI agent built or no transformers in python3"
fi

# GPU metrics through NVML (tools/gpu/gpu_metrics_check.sh): a GEMM, a copy
# and tiny kernels told apart at 10 Hz, the program's own memory, sole
# occupancy with the agent
agent=none
[ -f "$W/libgtrace-cupti.so" ] && agent=$W/libgtrace-cupti.so
GTRACE=$B CUPTI_LIB=$agent tools/gpu/gpu_metrics_check.sh "$OUT/gpu_metrics" > "$OUT/gpu_metrics.txt" 2>&1
grep -E '^(PASS|FAIL|INFO) ' "$OUT/gpu_metrics.txt" | tee -a "$OUT/summary.txt"
fails=$((fails + $(grep -c '^FAIL' "$OUT/gpu_metrics.txt")))

# Python frames of --stacks (tools/gpu/pystacks_check.sh): the lines of a
# planted .item() and synchronize named by analyze; GPT-2 training's GPU time
# at the lines of its script; CUDA graphs' replayed kernels at the lines that
# captured them (the cost part is left to a run of its own)
GTRACE=$B PARTS="item gpt2 graph" OUT="$OUT/pystacks" tools/gpu/pystacks_check.sh > "$OUT/pystacks.txt" 2>&1
grep -E '^(PASS|FAIL) ' "$OUT/pystacks.txt" | tee -a "$OUT/summary.txt"
fails=$((fails + $(grep -c '^FAIL' "$OUT/pystacks.txt")))

# 7. capture ranges: PyTorch with torch.cuda.profiler.start()/stop() around
# steps 10..19: -c cudaProfilerApi records exactly the launches the full
# recording has between the markers; light mode's gap is printed
"$B" -q -o "$W/pr_full.gtrace" -- python3 tools/gpu/torch_loop.py 30 --profiler-range 10 19 > "$OUT/pr_full.out" 2> "$OUT/pr_full.err"
"$B" -q -c cudaProfilerApi -o "$W/pr_range.gtrace" -- python3 tools/gpu/torch_loop.py 30 --profiler-range 10 19 > "$OUT/pr_range.out" 2> "$OUT/pr_range.err"
result "record PyTorch -c cudaProfilerApi" $? "$(grep '^{' "$OUT/pr_range.out" | tail -1) $(tail -1 "$OUT/pr_range.err")"
"$B" -q --mode light -c cudaProfilerApi -o "$W/pr_light.gtrace" -- python3 tools/gpu/torch_loop.py 30 --profiler-range 10 19 > "$OUT/pr_light.out" 2> "$OUT/pr_light.err"
for k in full range light; do "$B" dump "$W/pr_$k.gtrace" > "$OUT/pr_$k.jsonl"; done
python3 tools/gpu/range_check.py "$OUT/pr_full.jsonl" "$OUT/pr_range.jsonl" "$OUT/pr_light.jsonl" 10 | tee -a "$OUT/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
# light mode over a steady PyTorch loop: windows, launches in them, attach/detach times
"$B" -v --mode light --light-window 200ms/1s -o "$W/lt.gtrace" -- python3 tools/gpu/torch_loop.py 3000 > "$OUT/lt.out" 2> "$OUT/lt.err"
result "record PyTorch --mode light" $? "$(grep 'light mode:' "$OUT/lt.err" | sed 's/^gtrace-bpf: //')"
note "INFO whole probe set: $(grep -E 'attached [0-9]+ probes to|detached [0-9]+ probes' "$OUT/lt.err" | sed 's/^gtrace-bpf: //' | tr '\n' ';')"
"$B" dump --summary "$W/lt.gtrace" > "$OUT/lt.summary" 2>&1
note "INFO light PyTorch: $(awk '/^cu[A-Za-z0-9_]+ / { printf "%s %s%s; ", $1, $2, ($NF == "*" ? " (sampled)" : "") }' "$OUT/lt.summary")$(grep -m1 'sampled:' "$OUT/lt.summary"); $(stat -c %s "$W/lt.gtrace") bytes; $(grep -E 'ms_per_step' "$OUT/lt.out")"
# NVTX capture with the agent on a named range
if [ -f "$W/libgtrace-cupti.so" ] && [ -f tools/gpu/nvtx_capture.py ]; then
	"$B" -q --cupti --cupti-lib "$W/libgtrace-cupti.so" -c nvtx --nvtx-capture capture --capture-range-end=repeat \
		-o "$W/nv.gtrace" -- python3 tools/gpu/nvtx_capture.py > "$OUT/nv.out" 2> "$OUT/nv.err"
	result "record PyTorch -c nvtx" $? "$(grep '^{' "$OUT/nv.out" | tail -1) $(tail -1 "$OUT/nv.err")"
	"$B" dump "$W/nv.gtrace" > "$OUT/nv.jsonl"
	python3 - "$OUT/nv.jsonl" "$OUT/nv.out" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
wl = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
got = len([e for e in ev if e.get("type") == "launch"])
caps = [e.get("kind") for e in ev if e.get("type") == "capture"]
want = wl.get("launches_inside")
ok = want is not None and got == want and caps.count("range_open") >= 1
print("%s NVTX capture: %d launches recorded, the program made %s inside its ranges (%s outside); ranges %d" % (
    "PASS" if ok else "FAIL", got, want, wl.get("launches_outside"), caps.count("range_open")))
sys.exit(0 if ok else 1)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
fi

# 6. the event-rate flood through the mock libcuda: 1 M events/s for 10 s
bash tools/bench/flood.sh 10 > "$OUT/flood.txt" 2>&1
tee -a "$OUT/summary.txt" < "$OUT/flood.txt"
fails=$((fails + $(grep -c '^FAIL' "$OUT/flood.txt")))

# 4. what the runtime and PyTorch call in libcuda (for the probe list)
"$B" census -- "$W/runtime_workload" 20 4 4 > "$OUT/census_runtime.txt" 2>&1
"$B" census -- python3 tools/gpu/torch_loop.py 20 > "$OUT/census_torch.txt" 2>&1
note "INFO census runtime: $(tail -1 "$OUT/census_runtime.txt")"
note "INFO census torch:   $(tail -1 "$OUT/census_torch.txt")"
grep -E ' NO ' "$OUT/census_torch.txt" "$OUT/census_runtime.txt" | head -40 | sed 's/^/INFO unprobed /' | tee -a "$OUT/summary.txt"

ls -la "$W"/*.gtrace | awk '{print "INFO trace " $NF " " $5 " bytes"}' | tee -a "$OUT/summary.txt"
cp "$W"/*.gtrace "$OUT/" 2>/dev/null
note "gpu-check: $fails failed"
mkdir -p "$FINAL"
cp "$OUT/summary.txt" "$FINAL/summary.txt"
tar czf "$FINAL/gpu-logs.tgz" -C "$OUT" .
rm -rf "$W"
[ "$fails" -eq 0 ]
