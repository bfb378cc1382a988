#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# export --split at scale (issue 31): a generated trace with its GPU side
# (tools/gen_trace -g) of RECORDS records, whose Perfetto timeline is about
# 100 bytes a record (50,000,000: ~5 GB, over trace_processor's 4 GB), is
# exported in parts of SPLIT; every part must be at most SPLIT and decode
# with protoc; LINT parts (default: the first, a middle one and the last)
# go through tools/perfetto_lint.py --part.  Prints the export's time and
# peak memory (its rusage) against those of a trace a tenth as long, the
# parts and their sizes.  Files under OUT (default a new /tmp dir), removed
# at the end unless KEEP=1.
# Usage: tools/split_check.sh [RECORDS [SPLIT]]
set -u
cd "$(dirname "$0")/.." || exit 2
n=${1:-50000000}
split=${2:-1G}
G=${GTRACE:-./gtrace-bpf}
GEN=${GEN_TRACE:-.output/tools/gen_trace}
OUT=${OUT:-$(mktemp -d /tmp/split-check.XXXXXX)}
mkdir -p "$OUT"
fail=0
[ -x "$GEN" ] || { echo "FAIL split: $GEN not built (make $GEN)"; exit 1; }
command -v protoc > /dev/null || { echo "FAIL split: needs protoc"; exit 1; }

# run TAG CMD...: CMD timed, its peak resident size (KiB) in OUT/TAG.rss
run() {
	local tag=$1
	shift
	python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d %.2f\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - t))
sys.exit(rc)' "$OUT/$tag.rss" "$@"
}

for m in $((n / 10)) "$n"; do
	"$GEN" -g "$OUT/g$m.gtrace" "$m" > /dev/null || { echo "FAIL split: gen_trace $m"; exit 1; }
	run "x$m" "$G" export "$OUT/g$m.gtrace" --split "$split" -o "$OUT/p$m.pftrace" > "$OUT/x$m.out" 2> "$OUT/x$m.err" ||
		{ echo "FAIL split: export of $m records: $(cat "$OUT/x$m.err")"; exit 1; }
	read -r rss secs < "$OUT/x$m.rss"
	total=$(cat "$OUT"/p"$m"-*.pftrace | wc -c)
	echo "split: $m records ($(stat -c %s "$OUT/g$m.gtrace") bytes of trace): $(ls "$OUT"/p"$m"-*.pftrace | wc -l) parts," \
		"$total bytes of timeline, exported in $secs s, peak memory $rss KiB; $(grep -h arrows "$OUT/x$m.err")"
	[ "$m" = "$n" ] || rm -f "$OUT"/p"$m"-*.pftrace "$OUT/g$m.gtrace"
done
limit=$(grep -o '[0-9]* bytes)$' "$OUT/x$n.out" | head -n 1 > /dev/null; python3 -c '
import sys; s = sys.argv[1].upper().rstrip("B").rstrip("I"); m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
print(int(float(s[:-1]) * m[s[-1]]) if s[-1] in m else int(s))' "$split")
mapfile -t parts < <(ls "$OUT"/p"$n"-*.pftrace)
for f in "${parts[@]}"; do
	sz=$(stat -c %s "$f")
	[ "$sz" -le "$limit" ] || { echo "FAIL split: $f is $sz bytes, over $split"; fail=1; }
	protoc --decode_raw < "$f" > /dev/null 2> "$OUT/protoc.err" || { echo "FAIL split: protoc cannot read $f"; fail=1; }
done
echo "split: ${#parts[@]} parts of at most $limit bytes, each decoded by protoc: $( [ $fail = 0 ] && echo yes || echo NO)"
k=${#parts[@]}
for i in ${LINT:-0 $((k / 2)) $((k - 1))}; do
	f=${parts[$i]}
	if python3 tools/perfetto_lint.py --part --json "$f" > "$f.lint" 2> "$f.linterr"; then
		echo "split: lint of $(basename "$f"): $(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print("ok: %d packets, %d slices, %d process and %d thread tracks, %d others, %d arrows cut, %.3f .. %.3f s"
      % (s["packets"], s["slices"], s["process_tracks"], s["thread_tracks"], s["other_tracks"], s["flows_cut"],
         s["ts_min"] / 1e9, s["ts_max"] / 1e9))' "$f.lint")"
	else
		echo "FAIL split: the lint rejects $f: $(cat "$f.linterr")"
		fail=1
	fi
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
exit $fail
