#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf --all: system-wide recording with libcuda discovered by the
# tracer itself (no --libcuda): processes that were running before it
# started, processes started after, and a libcuda copy that appears after.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

N=40 M=4 K=2

# One process started before the tracer, with its kernels looked up before,
# one started after; both from the same libcuda (found in the first one's
# /proc/PID/maps).
t_before_and_after() {
	local early late wj1 wj2
	start_workload early LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches $N --copies $M --syncs $K
	early=$WPID
	wait_ready early "$early"
	start_tracer --all -o "$T/all.gtrace"
	kill -USR1 "$early"
	start_workload late LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--launches $N --copies $M --syncs $K
	late=$WPID
	finish_workload early "$early"
	wj1=$WJ
	finish_workload late "$late"
	wj2=$WJ
	stop_tracer INT
	dump_trace "$T/all.gtrace" "$T/all.json"

	compare_counts "the early workload's own counts after the signal" \
		"$(wl_counts "$wj1" after_ready)" "$(expected_counts $N $M $K 0 1 1)"
	compare_counts "calls of the process started before the tracer (pid $early)" \
		"$(counts_of "$T/all.json" "$early")" "$(expected_counts $N $M $K 0 1 1)"
	compare_counts "calls of the process started after the tracer (pid $late)" \
		"$(counts_of "$T/all.json" "$late")" "$(expected_counts $N $M $K)"
	compare_counts "the late workload's own counts" "$(wl_counts "$wj2")" "$(expected_counts $N $M $K)"
	# Names of kernels looked up before tracing began come from the handles.
	check_launches "launches of the early process (names recovered from handles)" "$T/all.json" "$early" "$wj1" $N
	check_launches "launches of the late process" "$T/all.json" "$late" "$wj2" $N
	check_clean "pid $early" "$T/all.json" "$early"
	check_clean "pid $late" "$T/all.json" "$late"
}

# A copy of the mock in a new directory (a new inode), created after the
# tracer started, used by a process started after that: the tracer has to
# find it by itself, and holds the process at its open of the copy until the
# copy's probes are attached: every call is there, cuInit first (the mock
# calls come at once, as in a program that calls right after its dlopen).
t_new_copy() {
	local holder late wj2 lib2
	# A process using the first copy while the tracer starts, as on a
	# machine where a CUDA job already runs.
	start_workload holder LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- \
		--wait-signal --launches 4 --copies 1 --syncs 1
	holder=$WPID
	wait_ready holder "$holder"
	start_tracer --all -o "$T/new.gtrace"
	mkdir "$T/lib2"
	cp "$MOCK_LIB" "$T/lib2/libcuda.so.1"
	lib2=$(stat -c '%d:%i' "$T/lib2/libcuda.so.1")
	[ "$lib2" != "$(stat -c '%d:%i' "$MOCK_LIB")" ] || fatal "the copy has the same device:inode as the original"
	start_workload late LD_LIBRARY_PATH="$T/lib2" GT_MOCK_SYNC_US=1000 -- \
		--launches $N --copies $M --syncs $K
	late=$WPID
	finish_workload late "$late"
	wj2=$WJ
	[ "$(jq -r .lib <<< "$wj2")" = libcuda.so.1 ] || err "the late workload loaded $(jq -r .lib <<< "$wj2")"
	kill -USR1 "$holder"
	finish_workload holder "$holder"
	stop_tracer INT
	dump_trace "$T/new.gtrace" "$T/new.json"
	gtrace_ok "$T/new.sum" dump --summary "$T/new.gtrace"
	grep -Eq "^  pid $late held [0-9]+ ns: $T/lib2/libcuda.so.1\$" "$T/new.sum" ||
		err "dump --summary does not list pid $late held at its load of $T/lib2/libcuda.so.1: $(grep '^  pid' "$T/new.sum" | tr '\n' '|')"
	compare_counts "calls of the process using the new libcuda copy (pid $late)" \
		"$(counts_of "$T/new.json" "$late")" "$(expected_counts $N $M $K)"
	compare_counts "the late workload's own counts" "$(wl_counts "$wj2")" "$(expected_counts $N $M $K)"
	check_launches "launches through the new copy" "$T/new.json" "$late" "$wj2" $N
}

add_case t_before_and_after "--all: a process started before the tracer (names recovered) and one after, exact counts"
add_case t_new_copy "--all: a libcuda copy that appears after the tracer started is found and traced"
run_cases "$@"
