#!/usr/bin/env bash
# Overhead of recording on a launch-bound loop, on the GPU machine, with a
# static build of gtrace-bpf next to this repo's root:
#   tools/bench/overhead.sh [ROUNDS] [LAUNCHES]
# Configurations, interleaved within each round (timings on these machines
# drift; never compare numbers from different runs):
#   none      the loop alone
#   bare      a bare counting uprobe on the launch functions (gtrace-bpf census
#             --functions): the floor any uprobe tracer pays
#   full      gtrace-bpf -- CMD, all sources (cuda, ioctl, sched)
#   noexit    gtrace-bpf --no-launch-exit (no uretprobe on launches)
#   cuda      gtrace-bpf --trace cuda (no ioctl, no sched)
#   all       gtrace-bpf --all running beside the loop (no pid filter in BPF)
# The loop is pinned to one CPU (LOOP_CPU, default 2) and the recorder to
# another (REC_CPU, default 4) so that scheduling noise stays out.
# Prints, per configuration, the median ns per launch with min..max and the
# median added over "none"; raw rows in $OUT/overhead.csv when OUT is set.
set -u
cd "$(dirname "$0")/../.." || exit 2
rounds=${1:-5}
n=${2:-200000}
B=${GTRACE:-./gtrace-bpf}
CUDA=${CUDA_HOME:-/usr/local/cuda}
W=$(mktemp -d /tmp/gtrace-bench.XXXXXX)
LAUNCH_FNS=cuLaunchKernel,cuLaunchKernel_ptsz,cuLaunchKernelEx,cuLaunchKernelEx_ptsz
LOOP="taskset -c ${LOOP_CPU:-2}"
REC="taskset -c ${REC_CPU:-4}"
"$CUDA/bin/nvcc" -O2 -o "$W/launch_loop" tools/bench/launch_loop.cu || exit 1
csv=${OUT:+$OUT/overhead.csv}
csv=${csv:-$W/overhead.csv}
echo "round,config,ns_per_launch" > "$csv"

run() { # config
	local out="$W/out.$1"
	case $1 in
	none) $LOOP "$W/launch_loop" "$n" > "$out" ;;
	bare) $REC "$B" census --functions "$LAUNCH_FNS" -- $LOOP "$W/launch_loop" "$n" > "$out" 2>/dev/null ;;
	full) $REC "$B" -q -o "$W/t.gtrace" --force -- $LOOP "$W/launch_loop" "$n" > "$out" ;;
	noexit) $REC "$B" -q --no-launch-exit -o "$W/t.gtrace" --force -- $LOOP "$W/launch_loop" "$n" > "$out" ;;
	cuda) $REC "$B" -q --trace cuda -o "$W/t.gtrace" --force -- $LOOP "$W/launch_loop" "$n" > "$out" ;;
	all)
		$REC "$B" --all -o "$W/a.gtrace" --force 2> "$W/all.err" &
		local rp=$! i
		for i in $(seq 1 300); do grep -q 'recording to' "$W/all.err" && break; sleep 0.05; done
		$LOOP "$W/launch_loop" "$n" > "$out"
		kill -INT $rp
		wait $rp ;;
	esac
	grep -o '"ns_per_launch":[0-9.]*' "$out" | cut -d: -f2
}

configs=(none bare full noexit cuda all)
for r in $(seq 1 "$rounds"); do
	for c in "${configs[@]}"; do
		v=$(run "$c")
		echo "$r,$c,$v" >> "$csv"
	done
done
# a full recording's drops and size, for the record
"$B" dump --summary "$W/t.gtrace" | grep -E '^(cuLaunchKernel|total) |drop_ringbuf' > "$W/summary"
python3 - "$csv" "$n" "$W/summary" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["config"], []).append(float(r["ns_per_launch"]))
base = statistics.median(by["none"])
print(f"{'config':8} {'median ns/launch':>17} {'min..max':>17} {'added ns':>9} {'added %':>8}")
for c, v in by.items():
    m = statistics.median(v)
    print(f"{c:8} {m:17.1f} {min(v):8.1f}..{max(v):<8.1f} {m - base:9.1f} {100 * (m - base) / base:7.1f}%")
bare = statistics.median(by["bare"]) - base
for c in ("full", "noexit", "cuda", "all"):
    if c in by and bare > 0:
        print(f"{c}: {(statistics.median(by[c]) - base) / bare:.2f}x what the bare uprobe adds")
print(f"{len(by['none'])} rounds of {sys.argv[2]} launches each")
print(open(sys.argv[3]).read().strip())
PY
rm -rf "$W"
