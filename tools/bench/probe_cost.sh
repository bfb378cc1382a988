#!/usr/bin/env bash
# What one probed launch costs, without the GPU driver's noise: one thread
# of the driver-API workload launching as fast as it can through the mock
# libcuda (a launch there is a few ns of argument checks), so the time added
# per launch is the probe's alone. Run on the GPU machine (uprobe hits cost
# there what they cost users; on the CI VM a trap is ~20 us) from the
# repository root with a static build at ./gtrace-bpf:
#   tools/bench/probe_cost.sh [ROUNDS] [SECONDS]     (default 7 rounds of 2 s)
# Configurations, rotated within each round:
#   none    the loop alone
#   bare    a bare counting uprobe on the four launch functions (census)
#   ebpf    gtrace-bpf --all (cuda, ioctl, sched; launches at entry only)
#   cuda    gtrace-bpf --all --trace cuda
#   exit    gtrace-bpf --all --launch-exit
#   cgroup  gtrace-bpf --cgroup DIR, the loop inside DIR (a cgroup v2
#           directory made for it): the cgroup filter's cost beside ebpf's
# Then, with kernel.bpf_stats_enabled, the run time per call of the BPF
# programs themselves (the kernel's own accounting), for bare, ebpf and
# cgroup.
set -u
cd "$(dirname "$0")/../.." || exit 2
rounds=${1:-7}
secs=${2:-2}
B=$(readlink -f "${GTRACE:-./gtrace-bpf}")
W=$(mktemp -d /tmp/gtrace-pc.XXXXXX)
tools/bench/build_mock.sh "$W" || exit 1
MOCK=$W/libcuda.so.1
python3 tools/gpu/first_insns.py "$MOCK" cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx | sed 's/^/entry of the mock: /'
FNS=cuLaunchKernel,cuLaunchKernel_ptsz,cuLaunchKernelEx,cuLaunchKernelEx_ptsz
LOOP=(taskset -c "${WL_CPUS:-2}" env GT_LIBCUDA="$MOCK" "$W/cuda_workload" --flood "$secs" --copies 0 --syncs 0)
TOOL="taskset -c ${TOOL_CPUS:-4-7}"
CG2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
CG=${CG2:+$CG2/gtrace-pc-$$}
[ -n "$CG" ] && mkdir "$CG" || { echo "probe_cost: no cgroup2 mount: the cgroup configuration is left out" >&2; CG=; }
trap '[ -n "$CG" ] && rmdir "$CG" 2> /dev/null; rm -rf "$W"' EXIT
# the loop inside the cgroup: a shell that moves itself there, then execs it
in_cg() { bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$@"; }

beside() { # recorder options...: the loop with gtrace-bpf --all running (--cgroup: in it)
	local rp i
	case " $* " in
	*" --cgroup "*) $TOOL "$B" --libcuda "$MOCK" "$@" -o "$W/t.gtrace" --force 2> "$W/rec.err" & ;;
	*) $TOOL "$B" --all --libcuda "$MOCK" "$@" -o "$W/t.gtrace" --force 2> "$W/rec.err" & ;;
	esac
	rp=$!
	for i in $(seq 1 200); do grep -q 'recording to' "$W/rec.err" && break; sleep 0.05; done
	case " $* " in
	*" --cgroup "*) in_cg "${LOOP[@]}" ;;
	*) "${LOOP[@]}" ;;
	esac
	kill -INT $rp
	wait $rp
}

one() { # config -> ns per launch
	local out
	case $1 in
	none) out=$("${LOOP[@]}" 2>/dev/null) ;;
	bare) out=$($TOOL "$B" census --libcuda "$MOCK" --functions "$FNS" -- "${LOOP[@]}" 2>/dev/null) ;;
	ebpf) out=$(beside) ;;
	cuda) out=$(beside --trace cuda) ;;
	exit) out=$(beside --launch-exit) ;;
	cgroup) out=$(beside --cgroup "$CG") ;;
	esac
	python3 -c 'import json, sys
j = [json.loads(l) for l in sys.stdin if l.startswith("{")][-1]
print("%.1f" % (float(sys.argv[1]) * 1e9 / sum(j["launches"].values())))' "$secs" <<< "$out"
}

configs=(none bare ebpf cuda exit ${CG:+cgroup})
nc=${#configs[@]}
echo "round,config,ns_per_launch" > "$W/rows"
for r in $(seq 1 "$rounds"); do
	for k in $(seq 0 $((nc - 1))); do
		c=${configs[$(((k + r) % nc))]}
		echo "$r,$c,$(one "$c")" >> "$W/rows"
	done
done
python3 - "$W/rows" <<'PY'
import csv, statistics, sys
by = {}
for r in csv.DictReader(open(sys.argv[1])):
    try:
        by.setdefault(r["config"], []).append(float(r["ns_per_launch"]))
    except ValueError:
        pass
base = statistics.median(by["none"])
bare = statistics.median(by["bare"]) - base
print(f"probe cost, mock launches on one thread ({len(by['none'])} rounds):")
for c in ("none", "bare", "ebpf", "cuda", "exit", "cgroup"):
    v = by.get(c)
    if v:
        m = statistics.median(v)
        x = f"  {(m - base) / bare:.2f}x bare" if c not in ("none", "bare") and bare > 0 else ""
        print(f"  {c:6} {m:8.1f} ns/launch ({min(v):.1f}..{max(v):.1f}), added {m - base:7.1f}{x}")
PY
# the BPF programs' own run time per call
if [ -w /proc/sys/kernel/bpf_stats_enabled ]; then
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	LOOP=(taskset -c "${WL_CPUS:-2}" env GT_LIBCUDA="$MOCK" "$W/cuda_workload" --flood 4 --copies 0 --syncs 0)
	for c in bare ebpf ${CG:+cgroup}; do
		case $c in
		bare) $TOOL "$B" census --libcuda "$MOCK" --functions "$FNS" -- "${LOOP[@]}" > /dev/null 2>&1 & ;;
		ebpf) beside > /dev/null 2>&1 & ;;
		cgroup) beside --cgroup "$CG" > /dev/null 2>&1 & ;;
		esac
		sleep 3
		python3 tools/bench/bpf_prog_stats.py 2>&1 | head -n 8 | sed "s/^/  $c: /"
		wait
	done
	echo 0 > /proc/sys/kernel/bpf_stats_enabled
fi
