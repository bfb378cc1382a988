#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf census: every exported cu* function of a libcuda a command
# calls, counted by a bare uprobe, against the mock workload's own counts.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

# census_of ARGS...: runs census over the workload with ARGS before --; its
# report in $T/c.out, the workload's JSON line in WJ.
census_of() {
	local rc
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" census --libcuda "$MOCK_LIB" "$@" -- "$WORKLOAD" --launches 40 --syncs 3 \
		> "$T/c.out" 2> "$T/c.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "census exited with $rc: $(tail -n 3 "$T/c.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/c.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no counts: $(tail -n 3 "$T/c.out" | tr '\n' '|')"
}

# census_count NAME: the calls census counted for NAME (0 if not listed).
census_count() {
	awk -v f="$1" '$3 == f { print $1; found = 1 } END { if (!found) print 0 }' "$T/c.out"
}

t_counts() {
	local api got want bad=
	census_of
	# every api the workload counted, counted the same by census
	for api in $(jq -r '(.calls + .other_calls) | keys[]' <<< "$WJ"); do
		want=$(jq -r --arg a "$api" '(.calls + .other_calls)[$a]' <<< "$WJ")
		got=$(census_count "$api")
		[ "$got" = "$want" ] || bad="$bad $api: got $got, expected $want;"
	done
	[ -z "$bad" ] || err "census counts differ from the workload's:$bad"
	grep -Eq '^ +[0-9]+ +yes +cuLaunchKernel$' "$T/c.out" || err "cuLaunchKernel not marked probed: $(grep cuLaunchKernel "$T/c.out" | head -n 1)"
	grep -Eq '^[0-9]+ of [0-9]+ exported cu\* functions called; [0-9]+ of them not probed' "$T/c.out" ||
		err "no closing census line: $(tail -n 1 "$T/c.out")"
}

t_functions() {
	local got
	census_of --functions cuLaunchKernel,cuStreamSynchronize
	got=$(grep -Ec '^ +[0-9]+ +(yes|NO) ' "$T/c.out")
	[ "$got" = 2 ] || err "--functions of two names: $got rows, expected 2: $(head -n 5 "$T/c.out" | tr '\n' '|')"
	[ "$(census_count cuLaunchKernel)" = "$(jq -r '.calls.cuLaunchKernel' <<< "$WJ")" ] ||
		err "--functions: cuLaunchKernel counted $(census_count cuLaunchKernel), expected $(jq -r '.calls.cuLaunchKernel' <<< "$WJ")"
	[ "$(census_count cuStreamSynchronize)" = 3 ] || err "--functions: cuStreamSynchronize counted $(census_count cuStreamSynchronize), expected 3"
}

t_status() {
	local rc
	"$GTRACE" census --libcuda "$MOCK_LIB" -- sh -c 'exit 7' > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 7 ] || err "census -- sh -c 'exit 7' exited $rc, expected the command's 7"
}

t_no_symbols() {
	local rc got
	# a file with no cu* symbol: one line, status 1, the command not run, stdin left alone
	got=$(echo still-open | "$GTRACE" census --libcuda /bin/true -- touch "$T/ran" 2> "$T/err"; echo "rc=$?")
	rc=${got##*rc=}
	[ "$rc" = 1 ] || err "census --libcuda /bin/true exited $rc, expected 1"
	[ "$(wc -l < "$T/err")" -eq 1 ] || err "census --libcuda /bin/true: $(wc -l < "$T/err") lines on stderr, expected 1: $(head -n 3 "$T/err" | tr '\n' '|')"
	grep -q 'no cu\* function in /bin/true' "$T/err" || err "census --libcuda /bin/true said: $(cat "$T/err")"
	[ ! -e "$T/ran" ] || err "census --libcuda /bin/true ran the command"
}

add_case t_counts "census -- CMD: every cu* call the workload counted, counted the same; probed ones marked"
add_case t_functions "census --functions: only the listed functions, with their counts"
add_case t_status "census -- CMD exits with the command's status"
add_case t_no_symbols "census of a file with no cu* symbol: one error line, status 1, command not run"
run_cases "$@"
