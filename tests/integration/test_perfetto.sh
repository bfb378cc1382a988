#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf export -f perfetto: a recorded mock workload exported through
# the CLI is protobuf that protoc decodes, passes tools/perfetto_lint.py
# (sequences, timestamps, interning, tracks, nesting), and says what dump
# says: one slice per call with an exit or launch recorded at entry only
# (1 ns long), one instant per call whose exit never came or process event,
# named by the kernel or the api; a process track
# with the workload's pid and name, and one thread track per thread that
# made calls, under its process track.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

LINT=$ROOT/tools/perfetto_lint.py

need_tools() {
	command -v protoc > /dev/null || fatal "needs protoc (apt-get install protobuf-compiler)"
	command -v python3 > /dev/null || fatal "needs python3 for tools/perfetto_lint.py"
}

# export_pf NAME: gtrace-bpf export NAME.gtrace -f perfetto -o NAME.pftrace,
# then protoc --decode_raw and the lint (its JSON summary in NAME.lint).
export_pf() {
	local name=$1 rc
	"$GTRACE" export "$T/$name.gtrace" -f perfetto -o "$T/$name.pftrace" > "$T/$name.xout" 2> "$T/$name.xerr"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf export $name.gtrace -f perfetto exited with status $rc: $(head -n 3 "$T/$name.xerr" | tr '\n' '|')"
	[ -s "$T/$name.xerr" ] && err "gtrace-bpf export wrote to stderr: $(head -n 3 "$T/$name.xerr" | tr '\n' '|')"
	[ -s "$T/$name.pftrace" ] || fatal "gtrace-bpf export left no $name.pftrace (or an empty one)"
	protoc --decode_raw < "$T/$name.pftrace" > "$T/$name.raw" 2> "$T/$name.protoc" ||
		fatal "protoc --decode_raw cannot read $name.pftrace: $(head -n 3 "$T/$name.protoc" | tr '\n' '|')"
	python3 "$LINT" --json "$T/$name.pftrace" > "$T/$name.lint" 2> "$T/$name.linterr" ||
		fatal "perfetto_lint rejects $name.pftrace: $(head -n 3 "$T/$name.linterr" | tr '\n' '|')"
	log "lint: $(jq -c 'del(.slice_names, .instant_names, .threads, .processes)' "$T/$name.lint")"
}

# check_vs_dump NAME: the lint's counts and names against the dump's libcuda
# calls, ioctls, off-CPU intervals and exec / fork / exit events.
check_vs_dump() {
	local name=$1 d
	# what the dump says the trace holds: "slice NAME" per call with an
	# exit or launch recorded at entry only (no dur, not incomplete),
	# "instant NAME" per call whose exit never came and per process event
	d=$(jq -s -r --slurpfile lint "$T/$name.lint" "$JQ_DEFS"'
		def cname: if .type == "launch" and (.kernel | type) == "string" then .kernel else .api end;
		[ .[] | if .type == "process" then (select(.event | IN("exec", "fork", "exit")) | "instant \(.event)")
		        elif .type == "offcpu" then "slice off-CPU (\(.state))"
		        elif .type == "ioctl" then "slice \(.name)"
		        elif (.api | type) != "string" then empty
		        elif .dur == null and .incomplete then "instant \(cname)"
		        else "slice \(cname)" end ] | tally as $want
		| ($lint[0] | (.slice_names | with_entries(.key = "slice " + .key))
		            + (.instant_names | with_entries(.key = "instant " + .key))) as $got
		| diffmaps($got; $want)' "$T/$name.dump") || fatal "jq failed on $name.dump"
	[ -z "$d" ] || err "slices and instants per name in the export (got) vs the dump's calls and process events (expected):
$d"
	d=$(jq -s -r --slurpfile lint "$T/$name.lint" '
		($lint[0]) as $l
		| [ .[] | select(.type != "process" and (.api | type) == "string") ] as $calls
		| [ .[] | select(.type == "offcpu" or .type == "ioctl") ] as $kern
		| ([ ($calls[], $kern[]) | {pid, tid} ] | unique) as $thr
		| ([ ($calls[] | .pid), (.[] | select(.type == "process" and (.event | IN("exec", "fork", "exit"))) | .pid) ]
		   | unique) as $pids
		| ([ $calls[] | select(.dur != null or (.incomplete | not)) ] | length + ($kern | length)) as $ncalls
		| [ (if $l.slices != $ncalls then "\($l.slices) slices, the dump has \($ncalls) calls with an exit or recorded at entry only, ioctls and off-CPU intervals" else empty end),
		    (if $l.slice_ends != $l.slices then "\($l.slices) slice begins but \($l.slice_ends) ends" else empty end),
		    (if $l.thread_tracks != ($thr | length) then "\($l.thread_tracks) thread tracks, the dump has calls from \($thr | length) threads" else empty end),
		    (if ([ $l.threads[] | {pid, tid} ] | sort) != $thr then "thread tracks \([ $l.threads[] | {pid, tid} ] | sort | tojson), dump threads \($thr | tojson)" else empty end),
		    (if ([ $l.processes[] | .pid ] | unique) != $pids then "process tracks of pids \([ $l.processes[] | .pid ] | unique), the dump has pids \($pids)" else empty end),
		    (if $l.primary_clock != "MONOTONIC" then "primary clock \($l.primary_clock), expected MONOTONIC" else empty end),
		    (if $l.flows != 0 then "\($l.flows) flows, expected none" else empty end),
		    ([ $l.threads[] | . as $t | select(([ $l.processes[] | select(.uuid == $t.parent and .pid == $t.pid) ] | length) != 1)
		       | "thread track \(.tid) is not under the process track of pid \(.pid)" ] | .[])
		  ] | join("\n")' "$T/$name.dump") || fatal "jq failed on $name.dump"
	[ -z "$d" ] || err "$d"
}

t_export() {
	local d
	need_tools
	record_named a --launches 100 --copies 10 --syncs 5 --threads 3
	export_pf a
	check_vs_dump a
	# the workload's process and threads, named
	d=$(jq -r --argjson pid "$WL_PID" --arg k1 "$K_VECADD" --arg k2 "$K_SCALE" --arg k3 "$K_FILL" '
		[ (if ([ .processes[] | select(.pid == $pid and ((.name // "") | contains("cuda_workload"))) ] | length) != 1
		   then "no process track of pid \($pid) named after cuda_workload: \(.processes | tojson)" else empty end),
		  (if ([ .processes[] | select(.pid == $pid and ((.cmdline // []) | length) == 1 and (.cmdline[0] | contains("cuda_workload"))) ] | length) != 1
		   then "no process track of pid \($pid) with its command line as cmdline: \(.processes | tojson)" else empty end),
		  (if ([ .threads[] | select(.pid == $pid and .tid == $pid and .name == "cuda_workload") ] | length) != 1
		   then "no thread track for the main thread \($pid) named cuda_workload: \(.threads | tojson)" else empty end),
		  (if ([ .threads[] | select(.pid == $pid) ] | length) != 4
		   then "\([ .threads[] | select(.pid == $pid) ] | length) thread tracks for pid \($pid), expected 4 (main + 3 launch threads)" else empty end),
		  (if [.slice_names[$k1], .slice_names[$k2], .slice_names[$k3]] != [75, 75, 150]
		   then "kernel launch slices \([.slice_names[$k1], .slice_names[$k2], .slice_names[$k3]]), expected [75, 75, 150] (3 threads x 100 launches at entry only)" else empty end),
		  (if .instant_names.exec != 1 or .instant_names.exit != 1
		   then "process instants \(.instant_names | tojson), expected one exec and one exit" else empty end)
		] | join("\n")' "$T/a.lint")
	[ -z "$d" ] || err "$d"
	# names on the wire, as protoc sees them
	grep -qF "\"$K_VECADD\"" "$T/a.raw" || err "the kernel name '$K_VECADD' is not in the protoc dump"
	grep -qF '"_Z6vecAddPfS_S_i"' "$T/a.raw" || err "the mangled name is not in the protoc dump"
}

# A failing call (ret and failed annotations) and a bigger trace.
t_export_fail() {
	need_tools
	record_named b --launches 400 --copies 4 --syncs 2 --fail
	export_pf b
	check_vs_dump b
	grep -q '"failed"' "$T/b.raw" || err "no 'failed' annotation name in the protoc dump"
}

# peak_kb FILE CMD...: CMD's largest resident size in KiB (its rusage)
# into FILE; the status is CMD's
peak_kb() {
	python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$@"
}

# export --split SIZE: a generated trace with its GPU side (gen_trace -g)
# whose Perfetto timeline is ~10 MB, in parts of 1M (the smallest --split
# takes; 4M parts of a 40 MB timeline checked the same, four times slower):
# each part at most 1M,
# protoc decodes it, the lint passes it as a part (every track it uses
# described in it, names interned in it, slices that end, time in order),
# each has every process and thread track; together they hold every slice,
# instant and counter of the whole export, the arrows the export says it cut
# are the parts' one-ended ones, and the parts follow each other in time.
# The same trace four times as long, in parts: its peak memory is that of
# the short one (the export streams: what is in flight, not the length).
t_split() {
	local n=100000 f parts rss1 rss4 cut said
	need_tools
	gen_trace -g "$T/g.gtrace" "$n" > /dev/null || fatal "gen_trace failed"
	gen_trace -g "$T/g4.gtrace" $((4 * n)) > /dev/null || fatal "gen_trace failed"
	"$GTRACE" export "$T/g.gtrace" -o "$T/whole.pftrace" > /dev/null 2>&1 || fatal "the whole export failed"
	python3 "$LINT" --json "$T/whole.pftrace" > "$T/whole.lint" || fatal "the lint rejects the whole export"
	peak_kb "$T/rss1" "$GTRACE" export "$T/g.gtrace" --split 1M -o "$T/p.pftrace" 2> "$T/p.err" > "$T/p.out" ||
		fatal "export --split 1M failed: $(cat "$T/p.err")"
	rss1=$(cat "$T/rss1")
	parts=$(ls "$T"/p-*.pftrace | wc -l)
	[ "$parts" -ge 8 ] || err "$parts parts of a $(stat -c %s "$T/whole.pftrace")-byte timeline at 1M"
	said=$(grep -c "^wrote $T/p-[0-9][0-9][0-9].pftrace (perfetto, part [0-9]* of $parts, [0-9]* bytes)$" "$T/p.out")
	[ "$said" -eq "$parts" ] || err "the export said $said of its $parts parts: $(head -n 2 "$T/p.out" | tr '\n' '|')"
	for f in "$T"/p-*.pftrace; do
		[ "$(stat -c %s "$f")" -le $((1 << 20)) ] || err "$f is $(stat -c %s "$f") bytes, over 1M"
		[ "$(stat -c %a "$f")" = 600 ] || err "$f has mode $(stat -c %a "$f")"
		protoc --decode_raw < "$f" > /dev/null 2> "$T/protoc.err" || err "protoc cannot read $f: $(head -n 2 "$T/protoc.err")"
		python3 "$LINT" --part --json "$f" > "$f.lint" 2> "$f.linterr" || err "the lint rejects $f: $(cat "$f.linterr")"
	done
	cut=$(sed -n 's/^gtrace-bpf: \([0-9]*\) arrows\? from a call to its GPU work cross.*/\1/p' "$T/p.err")
	jq -s -e --slurpfile w "$T/whole.lint" --argjson cut "${cut:-0}" '
		($w[0]) as $w
		| ([.[].slices] | add) == $w.slices and ([.[].instants] | add) == $w.instants
		  and ([.[].counters] | add) == $w.counters and ([.[].flows_cut] | add) == $cut
		  and all(.[]; .process_tracks == $w.process_tracks and .thread_tracks == $w.thread_tracks
		                and .other_tracks == $w.other_tracks and .flows_cut < 100)
		  and ([.[].ts_min] | . == sort) and ([.[].ts_max] | . == sort)' "$T"/p-*.pftrace.lint > /dev/null ||
		err "the parts against the whole (slices, instants, counters, tracks, cut arrows $cut, time order): $(jq -c '{slices, instants, counters, flows_cut, thread_tracks, other_tracks, ts_min, ts_max}' "$T"/p-*.pftrace.lint | head -n 4 | tr '\n' ' ') whole $(jq -c '{slices, instants, counters, thread_tracks, other_tracks}' "$T/whole.lint")"
	peak_kb "$T/rss4" "$GTRACE" export "$T/g4.gtrace" --split 1M -o "$T/q.pftrace" 2> "$T/q.err" > /dev/null ||
		fatal "export --split 1M of the long trace failed: $(cat "$T/q.err")"
	rss4=$(cat "$T/rss4")
	for f in "$T"/q-*.pftrace; do
		protoc --decode_raw < "$f" > /dev/null 2> "$T/protoc.err" || err "protoc cannot read $f"
	done
	log "parts: $parts of the ${n}-record trace (peak $rss1 KiB), $(ls "$T"/q-*.pftrace | wc -l) of the $((4 * n))-record one (peak $rss4 KiB); $cut arrows cut"
	[ "$rss4" -le $((rss1 + rss1 / 4)) ] ||
		err "the export's peak memory grew with the trace: $rss1 KiB for $n records, $rss4 KiB for four times as many"
}

# export --split, bad input: one line, status 2 (usage) or 1; a part that
# exists without --force stops the export, and the parts it had written go
# (the one that was there stays as it was)
t_split_bad() {
	local args rc
	gen_trace -g "$T/g.gtrace" 200000 > /dev/null || fatal "gen_trace failed"
	while IFS= read -r args; do
		# shellcheck disable=SC2086
		"$GTRACE" export "$T/g.gtrace" $args > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] && [ "$(grep -c . "$T/bad.err")" -eq 1 ] ||
			err "export $args: status $rc, $(tr '\n' '|' < "$T/bad.err")"
	done <<- EOF
		--split 100K -o $T/x.pftrace
		--split 0 -o $T/x.pftrace
		--split lots -o $T/x.pftrace
		--split 4M -f json -o $T/x.json
		--split 4M -o -
	EOF
	echo keep > "$T/y-003.pftrace"
	"$GTRACE" export "$T/g.gtrace" --split 1M -o "$T/y.pftrace" > /dev/null 2> "$T/y.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "y-003.pftrace exists: use --force" "$T/y.err" && [ "$(grep -c . "$T/y.err")" -eq 1 ] ||
		err "a part there without --force: status $rc, $(tr '\n' '|' < "$T/y.err")"
	[ "$(cat "$T/y-003.pftrace")" = keep ] || err "the file that was there was changed"
	[ -z "$(ls "$T"/y-00[124].pftrace "$T"/.y* 2> /dev/null)" ] || err "parts left after the failed export: $(ls "$T" | grep '^\.\?y')"
	"$GTRACE" export "$T/g.gtrace" --split 1M -o "$T/y.pftrace" --force > /dev/null 2> "$T/y.err" ||
		err "with --force: $(cat "$T/y.err")"
	[ "$(cat "$T/y-003.pftrace")" != keep ] || err "--force did not replace the part"
	ln -s /etc/passwd "$T/z-002.pftrace"
	"$GTRACE" export "$T/g.gtrace" --split 1M -o "$T/z.pftrace" --force > /dev/null 2> "$T/z.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "refusing to replace .*z-002.pftrace" "$T/z.err" && [ -L "$T/z-002.pftrace" ] &&
		[ ! -e "$T/z-001.pftrace" ] || err "a link as a part's name: status $rc, $(tr '\n' '|' < "$T/z.err")"
}

add_case t_export "export -f perfetto: protoc decodes it, the lint passes, slices/instants/tracks/names match dump (3 threads)"
add_case t_export_fail "export -f perfetto: a trace with a failed call matches dump and passes the lint"
add_case t_split "export --split 1M: parts each at most 1M, each decoded and linted on its own with its tracks, together the whole export; memory that does not grow with the trace"
add_case t_split_bad "export --split: bad sizes, formats and stdout refused with one line; a part there stops the export and its parts go; a link refused"
run_cases "$@"
