#!/usr/bin/env bash
# What the budget's swap machinery costs the record path: the BPF programs'
# run time per call (the kernel's BPF statistics, which the daemon enables)
# on a flood of always-on calls (cuStreamSynchronize after every launch,
# cuCtxSynchronize 1000 times a second) through the mock libcuda, for
#   before     the daemon of another build (GTRACE_BEFORE=path, e.g. main's),
#              light mode, --budget 50% (never over: nothing is shed)
#   full       this build, --mode full --budget 50%: the generation check is
#              not loaded (swap_gate off)
#   light      this build, light mode, --budget 50%: every always-on probe
#              checks its generation, no swap in progress
# interleaved over ROUNDS rounds (default 5), the median of each printed as
# "CONFIG PROGRAM NS_PER_RUN". Then one run with --budget 1%, in which the
# flood is shed: the swap's latency from the daemon's line. As root, from
# the repository root, with the mock built (make mock):
#   GTRACE_BEFORE=/path/to/other/gtrace-bpf tools/bench/swap_cost.sh [SECONDS] [ROUNDS]
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=${1:-4}
rounds=${2:-5}
B=${GTRACE:-./gtrace-bpf}
A=${GTRACE_BEFORE:-}
M=${GT_OUTPUT:-.output}/mock
W=$(mktemp -d /tmp/gtrace-swap.XXXXXX)
export GTRACE_RUN_DIR=$W/run
mkdir -m 0700 "$W/run" "$W/snaps"

run() { # label binary daemon-options...
	local label=$1 bin=$2 dp
	shift 2
	"$bin" daemon -q --libcuda "$M/libcuda.so.1" --dir "$W/snaps" "$@" 2> "$W/$label.err" &
	dp=$!
	for _ in $(seq 100); do grep -q 'recording' "$W/$label.err" 2>/dev/null && break; sleep 0.1; done
	GT_MOCK_SYNC_US=0 GT_LIBCUDA=$M/libcuda.so.1 "$M/cuda_workload" --flood "$secs" --sync-each \
		--steady 1000 > /dev/null 2>&1
	python3 tools/bench/bpf_prog_stats.py call_entry call_exit launch_entry |
		awk -v l="$label" '{ print l, $1, $3 }' >> "$W/rows"
	kill -TERM "$dp"
	wait "$dp"
}

for r in $(seq "$rounds"); do
	[ -n "$A" ] && run before "$A" --light-window 200ms/1s --budget 50%
	run full "$B" --mode full --budget 50%
	run light "$B" --light-window 200ms/1s --budget 50%
done
python3 - "$W/rows" <<- 'EOF2'
	import collections, statistics, sys
	v = collections.defaultdict(list)
	for l in open(sys.argv[1]):
	    c, p, ns = l.split()
	    v[(c, p)].append(float(ns))
	for (c, p), xs in sorted(v.items()):
	    print("%-7s %-13s %7.1f ns/run (median of %d: %s)" % (c, p, statistics.median(xs), len(xs),
	          " ".join("%.0f" % x for x in xs)))
EOF2
# the swap's latency: a budget the flood exceeds
"$B" daemon -v --libcuda "$M/libcuda.so.1" --dir "$W/snaps" --light-window 200ms/1s --budget 1% \
	2> "$W/shed.err" &
dp=$!
for _ in $(seq 100); do grep -q 'recording' "$W/shed.err" 2>/dev/null && break; sleep 0.1; done
GT_MOCK_SYNC_US=0 GT_LIBCUDA=$M/libcuda.so.1 "$M/cuda_workload" --flood 20 --sync-each --steady 1000 \
	> /dev/null 2>&1
kill -TERM "$dp"
wait "$dp"
grep -E 'shedding|shed to the light windows in|new always-on links attached' "$W/shed.err" | sed 's/^gtrace-bpf: //'
rm -rf "$W"
