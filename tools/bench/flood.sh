#!/usr/bin/env bash
# Event-rate flood: does the recorder keep every event at a given rate, with
# the default ring buffer? Run on the GPU machine (a uprobe hit costs ~0.3 us
# there, ~20 us on the CI VM) from the repository root, with a static build
# at ./gtrace-bpf:
#   tools/bench/flood.sh [SECONDS]           (default 10)
# Builds the mock libcuda and the driver-API workload with gcc, then records
# `cuda_workload --flood SECONDS --threads T [--rate R]` through the mock for
# each configuration below and prints one PASS/FAIL line per configuration:
# calls per second made, records in the trace, drops, bytes per record on
# disk. PASS: the rate asked for was reached (95 %), nothing was dropped and
# the trace holds exactly the launches made.
#   1M/s entry    8 threads x 125,000 launches/s (1 M events/s; a launch is
#                 one record by default)
#   1M/s exit     8 threads x 62,500 launches/s with --launch-exit (an entry
#                 and an exit record each: 1 M events/s)
#   max entry     8 threads as fast as they go (the ceiling; drops are
#                 reported, not a failure of the target)
# FLOOD_OPTS: recorder options added to every configuration (e.g.
# "--buffer-size 8M").
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=${1:-10}
B=${GTRACE:-./gtrace-bpf}
W=$(mktemp -d /tmp/gtrace-flood.XXXXXX)
tools/bench/build_mock.sh "$W" || exit 1
fails=0

flood() { # label threads rate(0 = unpaced) target(1 = must not drop) [recorder options]
	local label=$1 threads=$2 rate=$3 target=$4 wj made recs drops bytes rate_opt=
	shift 4
	[ "$rate" -gt 0 ] && rate_opt="--rate $rate"
	# shellcheck disable=SC2086
	GT_LIBCUDA=$W/libcuda.so.1 "$B" -q --libcuda "$W/libcuda.so.1" "$@" ${FLOOD_OPTS:-} -o "$W/f.gtrace" --force -- \
		"$W/cuda_workload" --flood "$secs" --threads "$threads" $rate_opt --copies 1 --syncs 1 \
		> "$W/out" 2> "$W/err"
	wj=$(grep '^{' "$W/out" | tail -n 1)
	made=$(python3 -c 'import json, sys; print(sum(json.loads(sys.argv[1])["launches"].values()))' "$wj" 2>/dev/null)
	"$B" dump --summary "$W/f.gtrace" > "$W/sum" 2>&1
	recs=$(awk '$1 == "records_written" { print $2 }' "$W/sum")
	drops=$(awk '$1 ~ /^drop_/ { s += $2 } END { print s + 0 }' "$W/sum")
	got=$(awk '$1 ~ /^cuLaunch/ { s += $2 } END { print s + 0 }' "$W/sum")
	bytes=$(stat -c %s "$W/f.gtrace")
	local line
	line=$(python3 -c '
import sys
label, secs, made, got, recs, drops, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3] or 0), int(sys.argv[4]), int(sys.argv[5] or 0), int(sys.argv[6]), int(sys.argv[7])
print("%s: %.2f M calls/s made (%d launches in %g s), %d in the trace, %d records (%.2f M/s), %d dropped, %.2f bytes/record (%.1f MB)"
      % (label, made / secs / 1e6, made, secs, got, recs, recs / secs / 1e6, drops, size / max(recs, 1), size / 1e6))
' "$label" "$secs" "${made:-0}" "$got" "${recs:-0}" "$drops" "$bytes")
	if [ -z "$made" ] || [ "$made" -eq 0 ]; then
		echo "FAIL flood $label: the workload made no launches: $(tail -n 2 "$W/err" | tr '\n' '|')"
		fails=$((fails + 1))
	elif [ "$rate" -gt 0 ] && [ "$made" -lt $((threads * rate * secs * 95 / 100)) ]; then
		echo "FAIL flood $line: below 95 % of the $((threads * rate)) calls/s asked for"
		fails=$((fails + 1))
	elif [ "$drops" -eq 0 ] && [ "$got" -eq "$made" ]; then
		echo "PASS flood $line"
	elif [ "$target" -eq 1 ]; then
		echo "FAIL flood $line"
		fails=$((fails + 1))
	else
		echo "INFO flood $line"
	fi
}

flood "1M/s entry" 8 125000 1
flood "1M/s exit" 8 62500 1 --launch-exit
flood "max entry" 8 0 0
rm -rf "$W"
[ "$fails" -eq 0 ]
