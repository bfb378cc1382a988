#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test fixtures themselves (no tracer, no root): the mock libcuda exports
# what the tracer probes, and the workload does and reports what the other
# tests expect of it.
REQUIRES="jq mock"
. "$(dirname "$0")/lib.sh"

t_exports() {
	local syms missing addrs
	command -v nm > /dev/null || fatal "needs nm (binutils)"
	syms=$(grep -oE '^[[:space:]]*X\(cu[A-Za-z0-9_]+' "$API_H" | sed 's/.*X(//' | sort -u)
	[ -n "$syms" ] || fatal "no symbols found in $API_H"
	nm -D --defined-only "$MOCK_LIB" | awk '$2 == "T" { print $3, $1 }' | sort > "$T/exports"
	missing=$(comm -23 <(printf '%s\n' "$syms") <(cut -d' ' -f1 "$T/exports"))
	[ -z "$missing" ] || err "symbols of bpf/gtrace_api.h the mock does not export: $(tr '\n' ' ' <<< "$missing")"
	for s in cuDeviceGet cuDeviceGetCount cuDeviceGetName cuCtxSetCurrent cuGetErrorName; do
		grep -q "^$s " "$T/exports" || err "the mock does not export $s"
	done
	addrs=$(cut -d' ' -f2 "$T/exports" | sort | uniq -d)
	[ -z "$addrs" ] || err "exported functions sharing an entry address: $(grep -E "$(tr '\n' '|' <<< "$addrs" | sed 's/|$//')" "$T/exports" | tr '\n' ' ')"
	readelf -d "$MOCK_LIB" | grep -q 'Library soname: \[libcuda.so.1\]' || err "the mock's soname is not libcuda.so.1"
}

# run_mock ARGS...: runs the workload on the mock (LD_LIBRARY_PATH, not
# lib.sh's run_wl and its GT_LIBCUDA), sets WJ, WRC.
run_mock() {
	env LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US="${SYNC_US:-100}" "$WORKLOAD" "$@" > "$T/wl.out" 2> "$T/wl.err"
	WRC=$?
	WJ=$(grep '^{' "$T/wl.out" | tail -n 1)
}

t_workload_counts() {
	local args n m k f th
	while read -r n m k f th; do
		args=(--launches "$n" --copies "$m" --syncs "$k" --threads "$th")
		[ "$f" -eq 1 ] && args+=(--fail)
		run_mock "${args[@]}"
		[ "$WRC" -eq 0 ] || { err "cuda_workload ${args[*]}: exit status $WRC: $(tail -n 2 "$T/wl.err" | tr '\n' '|')"; continue; }
		compare_counts "cuda_workload ${args[*]}: reported calls" "$(wl_counts "$WJ")" "$(expected_counts "$n" "$m" "$k" "$f" "$th")"
		jq -e --argjson n "$n" --argjson th "$th" \
			'(.launches | .vecAdd + .scale + .fill_ex + .fill) == $n * $th and (.handles.streams | length) == $th' \
			<<< "$WJ" > /dev/null || err "cuda_workload ${args[*]}: launches/streams in its JSON: $(jq -c '{launches, s: .handles.streams}' <<< "$WJ")"
	done <<- EOF
		100 10 5 0 1
		7 3 2 0 1
		0 0 0 0 1
		4 1 1 1 1
		10 2 1 0 3
	EOF
	run_mock --launches 4
	jq -e '.name_at_8 | all(.[]; . == true)' <<< "$WJ" > /dev/null ||
		err "the mock's handles do not hold the name pointer at +8: $(jq -c .name_at_8 <<< "$WJ")"
	jq -e '.mock == true and .device == "gtrace mock device"' <<< "$WJ" > /dev/null ||
		err "the workload does not recognise the mock: $(jq -c '{mock, device}' <<< "$WJ")"
}

t_workload_wait_signal() {
	local pid wj
	start_workload ws LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=100 -- --wait-signal --launches 8 --copies 2 --syncs 1
	pid=$WPID
	wait_ready ws "$pid"
	sleep 0.2
	kill -0 "$pid" 2>/dev/null || fatal "the workload did not wait for SIGUSR1"
	kill -USR1 "$pid"
	finish_workload ws "$pid"
	wj=$WJ
	compare_counts "calls after the signal" "$(wl_counts "$wj" after_ready)" "$(expected_counts 8 2 1 0 1 1)"
	compare_counts "all calls" "$(wl_counts "$wj")" "$(expected_counts 8 2 1)"
}

t_workload_bad_args() {
	local a
	for a in "--launches -1" "--launches 1x" "--launches 99999999999999999999" "--threads 0" "--threads 65" \
		"--copies" "--flood 0" "--bogus" "stray"; do
		# shellcheck disable=SC2086
		env LD_LIBRARY_PATH="$MOCK_DIR" "$WORKLOAD" $a > "$T/out" 2> "$T/err"
		WRC=$?
		[ "$WRC" -eq 2 ] || err "cuda_workload $a: exit status $WRC, expected 2"
		[ "$(wc -l < "$T/err")" -eq 1 ] || err "cuda_workload $a: $(wc -l < "$T/err") lines on stderr, expected 1"
		[ ! -s "$T/out" ] || err "cuda_workload $a: printed to stdout"
	done
	env GT_LIBCUDA="$T/none.so" "$WORKLOAD" > "$T/out" 2> "$T/err"
	WRC=$?
	[ "$WRC" -eq 1 ] || err "cuda_workload with a missing libcuda: exit status $WRC, expected 1"
}

t_mock_sync_time() {
	local start end ms
	start=$(date +%s%N)
	SYNC_US=20000 run_mock --launches 4 --copies 1 --syncs 5
	end=$(date +%s%N)
	ms=$(( (end - start) / 1000000 ))
	[ "$WRC" -eq 0 ] || fatal "workload failed: $(tail -n 2 "$T/wl.err" | tr '\n' '|')"
	# 5 stream syncs + event sync + context sync, 20 ms each
	[ $ms -ge 140 ] || err "7 synchronizing calls of 20 ms took $ms ms in all"
}

add_case t_exports "mock libcuda: exports every symbol of bpf/gtrace_api.h at distinct addresses, soname libcuda.so.1"
add_case t_workload_counts "workload: reported calls per api match the documented rule (5 option sets, --fail, --threads)"
add_case t_workload_wait_signal "workload: --wait-signal prints ready, waits for SIGUSR1, reports calls after it"
add_case t_workload_bad_args "workload: bad options exit 2 with one line on stderr"
add_case t_mock_sync_time "mock: synchronizing calls sleep GT_MOCK_SYNC_US"
run_cases "$@"
