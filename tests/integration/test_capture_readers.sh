#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The readers of a trace with capture ranges or light-mode windows, through
# the command line, on traces of tools/gen_trace.c (-c range, -c light):
# stats --range N counts exactly the calls dump shows inside range N (its
# process, its open to its close) or window N (every process); in light mode
# every hot call dump shows lies in a window, and stats says its figures are
# sampled, per api; a bad, unknown or absent --range is one line and status
# 2 before any output; the Perfetto export passes tools/perfetto_lint.py
# with one slice per range or window, and the JSON and CSV exports hold them.
REQUIRES="gtrace jq"
. "$(dirname "$0")/lib.sh"

LINT=$ROOT/tools/perfetto_lint.py
# the apis of gen_trace's calls that gt_api__hot() names
HOT='["cuLaunchKernel","cuLaunchKernel_ptsz","cuLaunchKernelEx","cuMemcpyHtoDAsync_v2",
      "cuMemcpyDtoHAsync_v2","cuMemcpyDtoDAsync_v2","cuMemcpyAsync","cuMemsetD32Async",
      "cuEventRecord","cuStreamQuery"]'

# gen NAME ARGS...: gen_trace ARGS into $T/NAME.gtrace and its dump into
# $T/NAME.dump.
gen() {
	local name=$1
	shift
	gen_trace "$@" "$T/$name.gtrace" 20000 3 > "$T/$name.gen" 2>&1 ||
		fatal "gen_trace $* failed: $(head -n 3 "$T/$name.gen" | tr '\n' '|')"
	dump_trace "$T/$name.gtrace" "$T/$name.dump"
}

# span_counts DUMP INDEX KIND: {"api": calls} of the calls dump shows inside
# the span of that index (KIND range: of its process; window: of all).
span_counts() {
	jq -s -c --argjson i "$2" --arg k "$3" '
		[.[] | select(.type == "capture" and .index == $i and (.kind | startswith($k)))] as $s
		| ($s | map(select(.kind | endswith("_open"))) | .[0]) as $o
		| ($s | map(select(.kind | endswith("_close"))) | .[0]) as $c
		| [.[] | select((.api | type) == "string" and .ts >= $o.ts and .ts <= $c.ts
				and ($k == "window" or .pid == $o.pid)) | .api]
		| reduce .[] as $a ({}; .[$a] += 1)' "$1"
}

# stats_counts TRACE RANGE: {"api": num_calls} of stats --range RANGE.
stats_counts() {
	"$GTRACE" stats "$1" --range "$2" -r cuda_api_sum --format json > "$T/s.json" 2> "$T/s.err" ||
		fatal "stats $1 --range $2 failed: $(head -n 3 "$T/s.err" | tr '\n' '|')"
	jq -c '[.reports[0].rows[] | {(.name): .num_calls}] | add // {}' "$T/s.json"
}

t_range_counts() {
	local n i got want pid
	gen r -c range
	n=$(jq -s '[.[] | select(.type == "capture" and .kind == "range_open")] | length' "$T/r.dump")
	[ "$n" -ge 6 ] || fatal "gen_trace -c range wrote $n ranges, expected at least 6"
	for i in 1 2 3 $((n / 2)) $n; do
		got=$(stats_counts "$T/r.gtrace" $i)
		want=$(span_counts "$T/r.dump" $i range)
		[ "$want" != "{}" ] || err "range $i holds no calls in the dump: the test checks nothing"
		compare_counts "stats --range $i vs dump's calls inside range $i" "$got" "$want"
		# and of its process only
		pid=$(jq -s --argjson i $i '[.[] | select(.type == "capture" and .kind != "lookups_off" and .index == $i)][0].pid' "$T/r.dump")
		"$GTRACE" stats "$T/r.gtrace" --range $i -r process_sum --format json > "$T/p.json"
		jq -e --argjson pid "$pid" '[.reports[0].rows[].pid] == [$pid] and .range.pid == $pid' "$T/p.json" > /dev/null ||
			err "stats --range $i process_sum: $(jq -c '[.reports[0].rows[].pid], .range' "$T/p.json"), expected only pid $pid"
	done
	# the ranges of the two processes overlap: the filter is by process
	jq -s -e '[.[] | select(.type == "capture" and .kind != "lookups_off")] as $c
		| ($c | map(select(.index == 1)) | .[1].ts) > ($c | map(select(.index == 2)) | .[0].ts)' \
		"$T/r.dump" > /dev/null || err "ranges 1 and 2 do not overlap: the test of the pid filter is void"
	# capture_sum lists every range, refused none
	"$GTRACE" stats "$T/r.gtrace" -r capture_sum --format csv > "$T/c.csv"
	[ "$(($(wc -l < "$T/c.csv") - 1))" -eq "$n" ] ||
		err "capture_sum has $(($(wc -l < "$T/c.csv") - 1)) rows, the trace $n ranges"
}

t_window_counts() {
	local n i got want out
	gen l -c light
	n=$(jq -s '[.[] | select(.type == "capture" and .kind == "window_open")] | length' "$T/l.dump")
	[ "$n" -ge 6 ] || fatal "gen_trace -c light wrote $n windows, expected at least 6"
	for i in 1 4 $n; do
		got=$(stats_counts "$T/l.gtrace" $i)
		want=$(span_counts "$T/l.dump" $i window)
		compare_counts "stats --range $i (a window) vs dump's calls inside window $i" "$got" "$want"
		[ "$(stats_counts "$T/l.gtrace" w$i)" = "$got" ] || err "--range w$i is not --range $i"
	done
	# every hot call of the dump is inside a window: what light mode records
	out=$(jq -s -r --argjson hot "$HOT" '
		[.[] | select(.type == "capture" and (.kind | startswith("window")))] as $w
		| [range(0; $w | length; 2) as $k | [$w[$k].ts, $w[$k + 1].ts]] as $iv
		| [.[] | select((.api | type) == "string" and (.api as $a | $hot | index($a)))
		   | .ts as $t | select([$iv[] | select($t >= .[0] and $t <= .[1])] | length == 0)]
		| length' "$T/l.dump")
	[ "$out" = 0 ] || err "$out hot calls of the light trace lie outside every window"
	# stats labels the figures of hot calls sampled, those of cold ones not
	"$GTRACE" stats "$T/l.gtrace" -r cuda_api_sum --format json > "$T/s.json"
	jq -e --argjson hot "$HOT" '.sampled == true and (.sampled_note | test("only inside [0-9]+ windows"))
		and all(.reports[0].rows[]; .sampled == (.name as $n | $hot | index($n) != null))' \
		"$T/s.json" > /dev/null ||
		err "stats json of the light trace: $(jq -c '{sampled, sampled_note, rows: [.reports[0].rows[] | {name, sampled}]}' "$T/s.json")"
	"$GTRACE" stats "$T/l.gtrace" -r cuda_launch_sum > "$T/s.txt"
	grep -qE "^ sampled: launches and other hot calls only inside $n windows, .* \([0-9.]+ %\)" "$T/s.txt" ||
		err "the table of the light trace has no sampled note for $n windows: $(grep -i sampled "$T/s.txt" | head -n 2)"
	# inside a window nothing is sampled
	"$GTRACE" stats "$T/l.gtrace" --range 2 -r cuda_api_sum --format json > "$T/w.json"
	jq -e '.sampled == false and all(.reports[0].rows[]; has("sampled") | not)' "$T/w.json" > /dev/null ||
		err "stats --range 2 (a window) says sampled: $(head -c 300 "$T/w.json")"
}

# bad_range WHAT ARGS...: gtrace-bpf stats ARGS must fail with status 2,
# one line on stderr, nothing on stdout.
bad_range() {
	local what=$1 rc
	shift
	"$GTRACE" stats "$@" > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 2 ] || err "$what: status $rc, expected 2 (a bad command line)"
	[ "$(wc -l < "$T/e")" -eq 1 ] || err "$what: $(wc -l < "$T/e") lines on stderr, expected 1: $(head -n 3 "$T/e" | tr '\n' '|')"
	[ -s "$T/o" ] && err "$what: something on stdout: $(head -c 200 "$T/o")"
	return 0
}

t_range_errors() {
	local b
	gen r -c range
	gen p
	for b in 0 abc -1 w0 1x ''; do
		bad_range "--range '$b'" "$T/absent.gtrace" --range "$b"
		grep -q "bad range '$b'" "$T/e" || err "--range '$b': the line does not name it: $(cat "$T/e")"
	done
	bad_range "--range 9999" "$T/r.gtrace" --range 9999
	grep -q 'has no capture range 9999 (its ranges: 1 to ' "$T/e" || err "--range 9999: $(cat "$T/e")"
	bad_range "--range w1 of a trace of ranges" "$T/r.gtrace" --range w1 --format json
	grep -q 'has no light-mode windows' "$T/e" || err "--range w1: $(cat "$T/e")"
	bad_range "--range 1 of a trace without ranges" "$T/p.gtrace" --range 1
	grep -q 'has no capture ranges or light-mode windows' "$T/e" || err "--range 1 of a plain trace: $(cat "$T/e")"
	# an unreadable file is a failure, not a bad command line
	"$GTRACE" stats "$T/absent.gtrace" --range 1 > "$T/o" 2> "$T/e"
	[ $? -eq 1 ] || err "--range 1 of a missing file: status not 1"
}

t_exports() {
	local name n lint
	command -v python3 > /dev/null || fatal "needs python3 for tools/perfetto_lint.py"
	for name in r l; do
		gen $name -c $([ $name = r ] && echo range || echo light)
		"$GTRACE" export "$T/$name.gtrace" -f perfetto -o "$T/$name.pftrace" 2> "$T/x.err" ||
			fatal "export -f perfetto of $name failed: $(head -n 3 "$T/x.err" | tr '\n' '|')"
		python3 "$LINT" --json "$T/$name.pftrace" > "$T/$name.lint" 2> "$T/lint.err" ||
			fatal "perfetto_lint rejects the export of $name: $(head -n 3 "$T/lint.err" | tr '\n' '|')"
		n=$(jq -s '[.[] | select(.type == "capture" and (.kind | endswith("_open")))] | length' "$T/$name.dump")
		lint=$(jq '[.slice_names | to_entries[] | select(.key | test("^(range|window) [0-9]+")) | .value] | add // 0' "$T/$name.lint")
		[ "$lint" -eq "$n" ] || err "the Perfetto export of $name has $lint range or window slices, the trace $n"
		"$GTRACE" export "$T/$name.gtrace" -f json -o "$T/$name.json" 2> /dev/null ||
			fatal "export -f json of $name failed"
		lint=$(jq '[.traceEvents[] | select(.cat == "capture" and .ph == "X")] | length' "$T/$name.json")
		[ "$lint" -eq "$n" ] || err "the JSON export of $name has $lint capture events, the trace $n spans"
		"$GTRACE" export "$T/$name.gtrace" -f csv -o "$T/$name.csv" 2> /dev/null ||
			fatal "export -f csv of $name failed"
		[ "$(grep -c ',capture,' "$T/$name.csv")" -eq "$(grep -c '"type":"capture"' "$T/$name.dump")" ] ||
			err "the CSV export of $name has not a row per capture record"
	done
	[ "$(jq -r '.other | map(.name) | unique | join(",")' "$T/r.lint")" = "Capture ranges" ] ||
		err "the tracks of the range trace: $(jq -c '.other' "$T/r.lint")"
	[ "$(jq -r '.other | map(.name) | unique | join(",")' "$T/l.lint")" = "Light-mode windows" ] ||
		err "the tracks of the light trace: $(jq -c '.other' "$T/l.lint")"
}

add_case t_range_counts "capture readers: stats --range N counts exactly the calls dump shows inside range N, of its process"
add_case t_window_counts "capture readers: windows by --range N and wN; light mode's hot calls all in windows, stats says sampled per api"
add_case t_range_errors "capture readers: a bad, unknown or absent --range is one line and status 2; a missing file status 1"
add_case t_exports "capture readers: Perfetto (lint), JSON and CSV exports hold every range and window"
run_cases "$@"
