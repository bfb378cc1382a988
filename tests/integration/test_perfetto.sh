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

add_case t_export "export -f perfetto: protoc decodes it, the lint passes, slices/instants/tracks/names match dump (3 threads)"
add_case t_export_fail "export -f perfetto: a trace with a failed call matches dump and passes the lint"
run_cases "$@"
