#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf --cgroup PATH: every process of one cgroup v2 directory and the
# cgroups below it is recorded, also ones started there later, and nothing
# of the processes outside it, although they use the same libcuda file
# (whose uprobes fire for all of them). The cases make cgroups of their own
# under the cgroup2 mount and put their workloads in them. A recording
# scoped to a cgroup of the case's own sees no other test's processes: the
# cases run beside others.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

CGROUPS=()

# cg2_mount: the cgroup2 mount point (mounting one under $T if there is
# none: on a hybrid machine that is the same hierarchy). Sets CG2.
cg2_mount() {
	CG2=$(cg2_root)
	if [ -z "$CG2" ]; then
		mkdir -p "$T/cg2" && mount -t cgroup2 none "$T/cg2" || fatal "no cgroup2 file system is mounted and mounting one failed"
		CG2=$T/cg2
	fi
}

# cg_make REL: makes $CG2/REL (parents too), removed when the case ends.
cg_make() {
	local d=$CG2/$1
	mkdir -p "$d" || fatal "cannot make the cgroup $d"
	CGROUPS=("$d" "${CGROUPS[@]}")
}

cg_cleanup() {
	local d p
	case_cleanup
	for d in "${CGROUPS[@]}"; do
		# a process left in it (one that outlived the case) goes to the root
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do
			echo "$p" > "$CG2/cgroup.procs" 2>/dev/null
		done
		rmdir "$d" 2>/dev/null
	done
}

# start_in NAME CGDIR ENV... -- ARGS: start_workload inside CGDIR.
start_in() {
	local name=$1 cg=$2
	shift 2
	IN_CGROUP=$cg start_workload "$name" "$@"
}

# The cgroup's processes, one started after the recorder and one in a
# cgroup below it, each with exactly its calls; the one outside none; the
# header and the status line name the cgroup; a forked child of a process
# inside is recorded.
t_cgroup() {
	local top sub in1 in2 out got
	trap cg_cleanup EXIT
	cg2_mount
	top=gtrace-test-$$-c
	cg_make "$top/sub"
	cg_make "$top-sibling"
	start_in in1 "$CG2/$top" LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches 12 --copies 2 --syncs 1
	in1=$WPID
	start_in out "$CG2/$top-sibling" LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches 8 --copies 2 --syncs 1
	out=$WPID
	wait_ready in1 "$in1"
	wait_ready out "$out"
	grep -qx "0::/$top" "/proc/$in1/cgroup" || fatal "the workload is not in $top: $(grep '^0::' "/proc/$in1/cgroup")"
	# relative to the cgroup2 mount
	start_tracer --cgroup "$top" --libcuda "$MOCK_LIB" -o "$T/c.gtrace"
	grep -q "the processes of cgroup $CG2/$top)" "$T/tracer.err" ||
		err "the recording line does not name the cgroup: $(grep recording "$T/tracer.err")"
	# started after the recorder, in a cgroup below: --fork 3, each child 2 launches
	start_in in2 "$CG2/$top/sub" LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--launches 4 --copies 1 --syncs 1 --fork 3
	in2=$WPID
	kill -USR1 "$in1" "$out"
	finish_workload in1 "$in1"
	local wj1=$WJ
	finish_workload in2 "$in2"
	finish_workload out "$out"
	stop_tracer INT
	dump_trace "$T/c.gtrace" "$T/c.json"

	compare_counts "calls of $in1 (in the cgroup)" "$(counts_of "$T/c.json" "$in1")" "$(expected_counts 12 2 1 0 1 1)"
	compare_counts "the workload's own counts after the signal" "$(wl_counts "$wj1" after_ready)" \
		"$(expected_counts 12 2 1 0 1 1)"
	compare_counts "calls of $in2 (started later, in a cgroup below)" "$(counts_of "$T/c.json" "$in2")" \
		"$(expected_counts 4 1 1)"
	got=$(jq -s -c --argjson p "$out" '[.[] | select(.pid == $p)] | length' "$T/c.json")
	[ "$got" -eq 0 ] || err "$got records of $out, in the sibling cgroup, are in the trace"
	got=$(jq -s -c --argjson a "$in1" --argjson b "$in2" '[.[] | select(.pid != $a and .pid != $b and .type == "launch")]
		| group_by(.pid) | {children: length, launches: (map(length) | add // 0)}' "$T/c.json")
	[ "$got" = '{"children":3,"launches":6}' ] || err "the forked children's launches: $got, expected 3 children with 2 each"
	"$GTRACE" dump --summary "$T/c.gtrace" > "$T/summary" 2>&1
	grep -q " cgroup=$CG2/$top\( \|\$\)" "$T/summary" || err "the header's options do not say cgroup=$CG2/$top: $(grep options "$T/summary")"
	grep -q " mode=all\| options: mode=all" "$T/summary" || err "the header's mode is not all: $(grep options "$T/summary")"
}

# The kernel-side sources too: ioctls on --ioctl-majors 1 (/dev/null) and
# off-CPU intervals of the ioctl workload inside the cgroup, exactly, and
# none of the same workload beside it, nor of any other process.
t_cgroup_kernel() {
	local top in out got
	trap cg_cleanup EXIT
	cg2_mount
	top=gtrace-test-$$-k
	cg_make "$top"
	cg_make "$top-other"
	start_tracer --cgroup "$CG2/$top" --trace ioctl,sched --ioctl-majors 1 -o "$T/k.gtrace"
	PROG=$MOCK_DIR/ioctl_workload start_in in "$CG2/$top" -- 30 3 40
	in=$WPID
	PROG=$MOCK_DIR/ioctl_workload start_in out "$CG2/$top-other" -- 30 3 40
	out=$WPID
	finish_workload in "$in"
	finish_workload out "$out"
	stop_tracer INT
	dump_trace "$T/k.gtrace" "$T/k.json"
	local ioctls long lost
	ioctls=$(jq -s -c --argjson p "$in" '[.[] | select(.type == "ioctl" and .pid == $p)] | length' "$T/k.json")
	# a 40 ms sleep's interval runs from the switch after the timer was armed
	# (microseconds into the sleep) to the switch back: about 40 ms, a hair
	# under it at times; nothing else of the workload sleeps: half of it
	# tells the three apart from everything else. A runnable thread kept off
	# a busy machine's CPUs that long (state R) is the machine's, not a sleep
	long=$(jq -s -c --argjson p "$in" '[.[] | select(.type == "offcpu" and .pid == $p and .dur >= 20000000 and .state != "R")] | length' "$T/k.json")
	# what the recorder says it lost (a full ring buffer, or a start the
	# kernel would not store) is the only shortfall allowed, and only as
	# many as it counted
	lost=$("$GTRACE" dump --summary "$T/k.gtrace" |
		awk '$1 == "drop_ringbuf" || $1 == "drop_state" { n += $2 } END { print n + 0 }')
	[ "$lost" = 0 ] || log "the recorder counted $lost records lost"
	if [ "$ioctls" -gt 30 ] || [ "$long" -gt 3 ] || [ $((ioctls + long + lost)) -ne 33 ]; then
		err "ioctls of $in (in the cgroup) $ioctls, expected 30; off-CPU intervals of >= 20 ms (three 40 ms sleeps) $long, expected 3; counted lost $lost; its off-CPU intervals (start after its first record, ns; duration): $(jq -s -c --argjson p "$in" '([.[] | select(.pid == $p) | .ts] | min) as $t0 | [.[] | select(.type == "offcpu" and .pid == $p) | [.ts - $t0, .dur, .state]]' "$T/k.json"); counters: $("$GTRACE" dump --summary "$T/k.gtrace" | awk '$1 ~ /^drop_/ || $1 == "events" || $1 == "records_written" { printf "%s=%s ", $1, $2 }')"
	fi
	got=$(jq -s -c --argjson p "$in" '[.[] | select((.type == "ioctl" or .type == "offcpu") and .pid != $p) | .pid] | unique' "$T/k.json")
	[ "$got" = "[]" ] || err "ioctls or off-CPU intervals of processes outside the cgroup (pids $got; $out was beside it)"
}

# The default file name is the cgroup's own name; the path may be given
# absolute, through a symbolic link, or with a trailing slash.
t_cgroup_name() {
	local top
	trap cg_cleanup EXIT
	cg2_mount
	top=gtrace-test-$$-n.scope
	cg_make "$top"
	ln -s "$CG2/$top" "$T/link"
	start_in w "$CG2/$top" LD_LIBRARY_PATH="$MOCK_DIR" -- --wait-signal --launches 4 --copies 1 --syncs 1
	local w=$WPID
	wait_ready w "$w"
	mkdir "$T/d" && cd "$T/d" || fatal "cannot make $T/d"
	start_tracer --cgroup "$T/link/" --libcuda "$MOCK_LIB" --scenario base
	kill -USR1 "$w"
	finish_workload w "$w"
	stop_tracer INT
	local f
	f=$(ls "$T/d")
	[[ $f =~ ^gtrace-test-$$-n\.scope_base_[0-9]{8}_v1\.gtrace$ ]] || fatal "the default name is '$f', expected gtrace-test-$$-n.scope_base_DATE_v1.gtrace"
	[ "$(stat -c %a "$T/d/$f")" = 600 ] || err "the trace's mode is $(stat -c %a "$T/d/$f"), expected 600"
	compare_counts "calls of $w" "$(counts_of <("$GTRACE" dump "$T/d/$f") "$w")" "$(expected_counts 4 1 1 0 1 1)"
	"$GTRACE" dump --summary "$T/d/$f" | grep -q " cgroup=$CG2/$top\( \|\$\)" ||
		err "the header names the link, not the cgroup: $("$GTRACE" dump --summary "$T/d/$f" | grep options)"
}

# Bad --cgroup values: one line naming the problem, status 2, no trace.
t_cgroup_bad() {
	local v1 out rc
	cg2_mount
	mkdir "$T/w" && cd "$T/w" || fatal "cannot make $T/w"
	touch "$T/file"
	v1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/mounts)
	for a in "/nonexistent-$$" "$T/file" "$T" "gtrace-no-such-$$" "" ${v1:+"$v1"}; do
		out=$("$GTRACE" --cgroup "$a" --libcuda "$MOCK_LIB" 2>&1 > /dev/null)
		rc=$?
		[ "$rc" -eq 2 ] || err "--cgroup '$a': status $rc, expected 2"
		[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == "gtrace-bpf: "* ]] ||
			err "--cgroup '$a': not one 'gtrace-bpf: ' line: $out"
		case $a in
		"$v1") [[ $out == *"cgroup v1"*"$CG2"* ]] || err "--cgroup $a (cgroup v1): the line does not say so and name $CG2: $out" ;;
		"$T") [[ $out == *"not a cgroup"* ]] || err "--cgroup $T: the line does not say 'not a cgroup': $out" ;;
		"$T/file") [[ $out == *"not a directory"* ]] || err "--cgroup $T/file: the line does not say 'not a directory': $out" ;;
		esac
	done
	[ -z "$v1" ] && log "no cgroup v1 hierarchy here: its message is not checked"
	out=$("$GTRACE" --cgroup / -p 1 2>&1 > /dev/null)
	rc=$?
	[ "$rc" -eq 2 ] && [[ $out == *"choose one of"* ]] || err "--cgroup with -p: status $rc, '$out'"
	out=$("$GTRACE" daemon --cgroup "/nonexistent-$$" 2>&1 > /dev/null)
	rc=$?
	[ "$rc" -eq 2 ] && [[ $out == *"/nonexistent-$$"* ]] || err "daemon --cgroup /nonexistent: status $rc, '$out'"
	[ -z "$(ls "$T/w")" ] || err "files were left: $(ls "$T/w")"
}

# The daemon scoped to a cgroup: its snapshot holds the cgroup's process
# and none of the other.
t_cgroup_daemon() {
	local top in out got
	trap cg_cleanup EXIT
	cg2_mount
	top=gtrace-test-$$-d
	cg_make "$top"
	cg_make "$top-other"
	start_daemon --mode full --cgroup "$CG2/$top"
	start_in in "$CG2/$top" LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- --launches 8 --copies 1 --syncs 1
	in=$WPID
	start_in out "$CG2/$top-other" LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- --launches 8 --copies 1 --syncs 1
	out=$WPID
	finish_workload in "$in"
	finish_workload out "$out"
	sleep 0.3
	snap
	dump_trace "$SNAP" "$T/d.json"
	compare_counts "calls of $in (in the cgroup)" "$(counts_of "$T/d.json" "$in")" "$(expected_counts 8 1 1)"
	got=$(jq -s -c --argjson p "$out" '[.[] | select(.pid == $p)] | length' "$T/d.json")
	[ "$got" -eq 0 ] || err "$got records of $out (outside the cgroup) are in the snapshot"
	got=$("$GTRACE" status -v 2> /dev/null | awk '$1 == "cgroup" { print $2 }')
	[ "$got" = "$CG2/$top" ] || err "status says cgroup '$got', expected $CG2/$top"
	"$GTRACE" status --json 2> /dev/null | jq -e --arg c "$CG2/$top" '.cgroup == $c' > /dev/null ||
		err "status --json: $("$GTRACE" status --json 2>&1 | head -c 300)"
	"$GTRACE" dump --summary "$SNAP" | grep -q " cgroup=$CG2/$top\( \|\$\)" ||
		err "the snapshot's header does not say cgroup=$CG2/$top"
	stop_daemon
}

# The daemon's bad input exits at once, and a daemon scoped to a cgroup of
# the case's own sees no other test's processes: both run beside others.
SHARED_CASES="t_cgroup_bad t_cgroup_daemon"

add_case t_cgroup "--cgroup: its processes (one started later, one below it, forked children) exactly, none outside"
add_case t_cgroup_kernel "--cgroup: ioctls and off-CPU intervals of its process exactly, none of others"
add_case t_cgroup_name "--cgroup: the default file name is the cgroup's, through a link"
add_case t_cgroup_bad "--cgroup: a missing path, a file, a plain directory, cgroup v1, with -p: one line, status 2"
add_case t_cgroup_daemon "daemon --cgroup: the snapshot holds the cgroup's process, none of another; status and header name it"
run_cases "$@"
