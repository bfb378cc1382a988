#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf -p PID: only the chosen processes are recorded, although the
# others use the same libcuda file (whose uprobes fire for all of them).
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

N=40 M=4 K=2

t_one_pid() {
	local w1 w2 wj1 others
	start_workload w1 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches $N --copies $M --syncs $K
	w1=$WPID
	start_workload w2 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches $N --copies $M --syncs $K
	w2=$WPID
	wait_ready w1 "$w1"
	wait_ready w2 "$w2"
	start_tracer -p "$w1" --libcuda "$MOCK_LIB" -o "$T/p.gtrace"
	kill -USR1 "$w1" "$w2"
	finish_workload w1 "$w1"
	wj1=$WJ
	finish_workload w2 "$w2"
	# SIGTERM here (SIGINT elsewhere): both must stop the recorder cleanly
	stop_tracer TERM
	dump_trace "$T/p.gtrace" "$T/p.json"

	compare_counts "calls of the traced pid $w1" "$(counts_of "$T/p.json" "$w1")" "$(expected_counts $N $M $K 0 1 1)"
	compare_counts "the traced workload's own counts after the signal" \
		"$(wl_counts "$wj1" after_ready)" "$(expected_counts $N $M $K 0 1 1)"
	others=$(jq -s -c --argjson p "$w2" '[.[] | select(.pid == $p)] | length' "$T/p.json")
	[ "$others" -eq 0 ] || err "$others records of the untraced pid $w2 are in the trace"
	# (pid 0: the recorder's own, its clock pairs)
	others=$(jq -s -c --argjson p "$w1" '[.[] | select(.pid != $p and .pid != 0 and .type != "process") | .pid] | unique' "$T/p.json")
	[ "$others" = "[]" ] || err "calls of other processes than $w1 in the trace: pids $others"
	check_launches "launches of pid $w1 (names recovered from handles)" "$T/p.json" "$w1" "$wj1" $N
	check_clean "pid $w1" "$T/p.json" "$w1"
}

t_two_pids() {
	local w1 w2 w3
	for w in w1 w2 w3; do
		start_workload $w LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
			--wait-signal --launches 8 --copies 2 --syncs 1
		printf -v "$w" '%s' "$WPID"
	done
	wait_ready w1 "$w1"
	wait_ready w2 "$w2"
	wait_ready w3 "$w3"
	start_tracer -p "$w1" -p "$w3" --libcuda "$MOCK_LIB" -o "$T/p2.gtrace"
	kill -USR1 "$w1" "$w2" "$w3"
	for w in w1 w2 w3; do
		finish_workload $w "${!w}"
	done
	stop_tracer INT
	dump_trace "$T/p2.gtrace" "$T/p2.json"
	compare_counts "calls of traced pid $w1" "$(counts_of "$T/p2.json" "$w1")" "$(expected_counts 8 2 1 0 1 1)"
	compare_counts "calls of traced pid $w3" "$(counts_of "$T/p2.json" "$w3")" "$(expected_counts 8 2 1 0 1 1)"
	compare_counts "calls of the untraced pid $w2" "$(counts_of "$T/p2.json" "$w2")" "{}"
}

# As perf record -p does: no Ctrl-C needed once the traced processes are
# gone, and not before the last of them is.
t_stops_when_all_exit() {
	local w1 w2
	start_workload w1 LD_LIBRARY_PATH="$MOCK_DIR" -- --wait-signal --launches 4 --copies 1 --syncs 1
	w1=$WPID
	start_workload w2 LD_LIBRARY_PATH="$MOCK_DIR" -- --wait-signal --launches 4 --copies 1 --syncs 1
	w2=$WPID
	wait_ready w1 "$w1"
	wait_ready w2 "$w2"
	start_tracer -p "$w1" -p "$w2" --libcuda "$MOCK_LIB" -o "$T/auto.gtrace"
	kill -USR1 "$w1"
	finish_workload w1 "$w1"
	sleep 1
	kill -0 "$TRACER_PID" 2>/dev/null ||
		fatal "gtrace-bpf stopped when the first of two traced processes exited; stderr: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	kill -USR1 "$w2"
	finish_workload w2 "$w2"
	wait_exit "$TRACER_PID" 10 ||
		fatal "gtrace-bpf still recording 10 s after every traced process exited"
	[ "$WAIT_RC" -eq 0 ] || err "gtrace-bpf exited with status $WAIT_RC after its processes exited (expected 0)"
	grep -q '^gtrace-bpf: every traced process has exited; stopping' "$T/tracer.err" ||
		err "no line saying why the recording stopped; stderr: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	dump_trace "$T/auto.gtrace" "$T/auto.json"
	compare_counts "calls of pid $w2, the last to exit" "$(counts_of "$T/auto.json" "$w2")" "$(expected_counts 4 1 1 0 1 1)"
}

# kthreadd (pid 2) is always there and never makes a CUDA call.
t_kernel_thread() {
	local rc
	timeout 30 "$GTRACE" -p 2 -d 1 --libcuda "$MOCK_LIB" -o "$T/k.gtrace" > /dev/null 2> "$T/k.err"
	rc=$?
	[ "$rc" -eq 0 ] || err "-p 2 -d 1: exit $rc, expected 0; stderr: $(tail -n 3 "$T/k.err" | tr '\n' '|')"
	grep -q '^gtrace-bpf: warning: -p 2 is a kernel thread' "$T/k.err" ||
		err "-p of a kernel thread: no warning; stderr: $(tail -n 3 "$T/k.err" | tr '\n' '|')"
}

# a static program maps no shared object: it has no loader to open libcuda
t_static_program() {
	local rc pid i
	printf '#include <unistd.h>\nint main(void) { pause(); return 0; }\n' > "$T/st.c"
	cc -static -O1 "$T/st.c" -o "$T/st" || fatal "cannot build a static program (libc6-dev's libc.a)"
	"$T/st" & pid=$!
	# until the child has exec'd, its maps are the shell's, with shared libraries
	for ((i = 0; i < 200; i++)); do
		[ "$(readlink "/proc/$pid/exe" 2> /dev/null)" = "$T/st" ] && break
		nap 0.05
	done
	[ "$(readlink "/proc/$pid/exe")" = "$T/st" ] || fatal "$T/st did not start in 10 s"
	timeout 30 "$GTRACE" -p "$pid" -d 1 --libcuda "$MOCK_LIB" -o "$T/s.gtrace" > /dev/null 2> "$T/s.err"
	rc=$?
	kill "$pid"; wait "$pid" 2> /dev/null
	[ "$rc" -eq 0 ] || err "-p STATIC -d 1: exit $rc, expected 0; stderr: $(tail -n 3 "$T/s.err" | tr '\n' '|')"
	grep -q "^gtrace-bpf: warning: -p $pid is a static program that maps no shared library" "$T/s.err" ||
		err "-p of a static program: no warning; stderr: $(tail -n 3 "$T/s.err" | tr '\n' '|')"
	# a dynamic program that has not loaded libcuda yet may still: no warning
	sleep 30 & pid=$!
	timeout 30 "$GTRACE" -p "$pid" -d 1 --libcuda "$MOCK_LIB" -o "$T/d.gtrace" > /dev/null 2> "$T/d.err"
	kill "$pid"; wait "$pid" 2> /dev/null
	! grep -q 'static program' "$T/d.err" || err "-p of a dynamic program warned: $(cat "$T/d.err")"
}

add_case t_static_program "-p of a static program: a warning that it can never load libcuda; none for a dynamic one"
add_case t_kernel_thread "-p of a kernel thread: a warning that it never makes CUDA calls"
add_case t_stops_when_all_exit "-p A -p B: the recording ends by itself once both have exited, not before"
add_case t_one_pid "-p PID: only that process of two is recorded, exact counts, stops on SIGTERM"
add_case t_two_pids "-p A -p C: two of three processes recorded, the third not"
run_cases "$@"
