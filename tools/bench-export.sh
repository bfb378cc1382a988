#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Throughput of the trace readers: builds tools/gen_trace, writes a synthetic
# trace of N records (default 5000000, THREADS threads in each of 2
# processes, default 4) and times, on one CPU, median of 3 runs each:
#   gtrace-bpf stats FILE                   (all reports, table, to /dev/null)
#   gtrace-bpf export FILE -f perfetto|json|csv -o OUT
#   gtrace-bpf analyze FILE                 (table, to /dev/null)
#   gtrace-bpf diff FILE FILE2              (FILE2: the same with seed 2)
#   gtrace-bpf diff FILE FILE2 with NVTX step ranges of 20 ms (gen_trace -i)
# then writes a merged trace of as many records (gen_trace -g -u 50: the
# GPU records of the launches, copies and sets, NVTX ranges, off-CPU waits,
# a fiftieth of the GPU records unlinked in the tail) and times stats and
# analyze on it, printing seconds, events (records) per second and the
# largest resident size.  The goal is >= 2 million events/s for stats and
# the exports, >= 1 million for analyze and diff (the records of both
# traces counted once, each read in two passes and by analyze).
#
# Usage: tools/bench-export.sh [N_RECORDS [THREADS]]
# Environment: GTRACE (default ./gtrace-bpf; any command taking the same
# arguments, e.g. a driver while a sub-command is not wired yet), RUNS (3),
# CPU (the CPU to pin to with taskset, default the last one), KEEP=1 keeps
# the trace and outputs (their directory is printed).
# Needs .output/libgtrace-read.a (run make first) and gcc.
set -u
cd "$(dirname "$0")/.." || exit 2

n=${1:-5000000}
threads=${2:-4}
runs=${RUNS:-3}
gtrace=${GTRACE:-./gtrace-bpf}
cpu=${CPU:-$(($(nproc) - 1))}
gen=.output/tools/gen_trace

[ -f .output/libgtrace-read.a ] || { echo "bench: .output/libgtrace-read.a missing: run make first" >&2; exit 2; }
mkdir -p .output/tools
# the writer is a reader-library module: no libbpf, as the Makefile links readers
gcc -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iuser -iquote . \
	tools/gen_trace*.c .output/libgtrace-read.a -lz -lzstd -liberty -lm -o "$gen" ||
	{ echo "bench: failed to build $gen" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-bench.XXXXXX") || exit 1
if [ -n "${KEEP:-}" ]; then
	echo "bench: files kept in $dir"
else
	trap 'rm -rf "$dir"' EXIT
fi
trace=$dir/bench.gtrace
line=$("$gen" "$trace" "$n" "$threads") || { echo "bench: gen_trace failed" >&2; exit 1; }
records=$(sed -n 's/.*: \([0-9][0-9]*\) records$/\1/p' <<< "$line")
[ -n "$records" ] || { echo "bench: unexpected gen_trace output: $line" >&2; exit 1; }

pin=()
command -v taskset > /dev/null && pin=(taskset -c "$cpu")
echo "bench: $records records ($(( $(stat -c %s "$trace") / 1048576 )) MiB, $threads threads x 2 processes)," \
	"median of $runs runs${pin:+, pinned to CPU $cpu}; $gtrace"

# bench NAME OUT ARGS...: runs "$gtrace ARGS" RUNS times (OUT: a file it
# writes, removed before each run, or -), prints the median.
bench() {
	local name=$1 out=$2 i t0 t1 rc kb maxkb=0
	local -a times=() tm=()
	shift 2
	[ -x /usr/bin/time ] && tm=(/usr/bin/time -f %M -o "$dir/rss")
	for ((i = 0; i < runs; i++)); do
		[ "$out" = - ] || rm -f "$out"
		t0=$(date +%s%N)
		"${tm[@]}" "${pin[@]}" "$gtrace" "$@" > "$dir/stdout" 2> "$dir/stderr"
		rc=$?
		t1=$(date +%s%N)
		kb=$( [ -s "$dir/rss" ] && cat "$dir/rss" || echo 0)
		[ "$kb" -gt "$maxkb" ] && maxkb=$kb
		if [ $rc -ne 0 ]; then
			printf '%-22s skipped: exited with status %d: %s\n' "$name" "$rc" \
				"$(head -n 1 "$dir/stderr")"
			return
		fi
		times+=($((t1 - t0)))
	done
	local med
	med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
	awk -v name="$name" -v ns="$med" -v n="$records" -v kb="$maxkb" 'BEGIN {
		printf "%-22s %8.3f s  %6.2f M events/s  %7.1f MiB max RSS\n", name, ns / 1e9,
			n / (ns / 1e9) / 1e6, kb / 1024 }'
}

bench "stats" - stats "$trace"
for f in perfetto json csv; do
	bench "export -f $f" "$dir/out.$f" export "$trace" -f "$f" -o "$dir/out.$f"
done
bench "analyze" - analyze "$trace"

# diff: a second trace like the first (another seed); then both with NVTX steps
# gen2 OUT ARGS...: writes OUT with gen_trace ARGS, prints its record count.
gen2() {
	local out=$1 l
	shift
	l=$("$gen" "$@" "$out" "$n" "$threads") || { echo "bench: gen_trace failed" >&2; exit 1; }
	sed -n 's/.*: \([0-9][0-9]*\) records$/\1/p' <<< "$l"
}
one=$records
r2=$(gen2 "$dir/b2.gtrace" -s 2)
records=$((one + r2))
bench "diff" - diff "$trace" "$dir/b2.gtrace"
r1=$(gen2 "$dir/n1.gtrace" -i 20000)
r2=$(gen2 "$dir/n2.gtrace" -s 2 -i 20000)
records=$((r1 + r2))
bench "diff (NVTX steps)" - diff "$dir/n1.gtrace" "$dir/n2.gtrace"

# the merged trace: GPU records on the timeline
trace=$dir/bench-gpu.gtrace
line=$("$gen" -g -u 50 "$trace" "$n" "$threads") || { echo "bench: gen_trace -g failed" >&2; exit 1; }
records=$(sed -n 's/.*: \([0-9][0-9]*\) records$/\1/p' <<< "$line")
echo "bench: $records records of a merged trace ($(( $(stat -c %s "$trace") / 1048576 )) MiB)"
bench "stats (merged)" - stats "$trace"
bench "analyze (merged)" - analyze "$trace"
