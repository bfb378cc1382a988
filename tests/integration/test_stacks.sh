#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --stacks sync: the native stacks of the calls the host waits in, against
# the mock libcuda and tests/mock/stack_workload (known call chains, frame
# pointers): every synchronize call carries its stack, whose frames name the
# workload's functions in order; a stack deeper than the recorder keeps is
# cut and marked; analyze's sync_site names the call site where the host
# waited most, and its examples say where each wait came from. Without
# --stacks no call carries one, and the CSV has no stack column.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

STACK_WL=$MOCK_DIR/stack_workload

# rec NAME [OPTIONS...]: stack_workload (12 steps, 60 deep) into $T/NAME.gtrace,
# dumped into $T/NAME.json; its JSON line in $T/NAME.out.
rec() {
	local name=$1 rc
	shift
	[ -x "$STACK_WL" ] || fatal "no $STACK_WL (make mock)"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" "$@" -- "$STACK_WL" 12 60 \
		> "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf $* -- stack_workload: status $rc: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	dump_trace "$T/$name.gtrace" "$T/$name.json"
}

# frames ID: the frames of stack ID in $T/s.json, one a line.
frames() {
	jq -r --argjson id "$1" 'select(.type == "stack" and .id == $id) | .frames[]' "$T/s.json"
}

# expect_chain ID FUNC...: frame 0 is in libcuda, frames 1.. are FUNC... of
# stack_workload, in order.
expect_chain() {
	local id=$1 i=1 f got
	shift
	got=$(frames "$id")
	sed -n 1p <<< "$got" | grep -qE '^cu[A-Za-z]+Synchronize\+0x[0-9a-f]+ \(libcuda\.so\.1\)$' ||
		err "stack $id: frame 0 is '$(sed -n 1p <<< "$got")', expected the libcuda function"
	for f in "$@"; do
		i=$((i + 1))
		sed -n "${i}p" <<< "$got" | grep -qE "^$f\+0x[0-9a-f]+ \(stack_workload\)$" ||
			err "stack $id: frame $((i - 1)) is '$(sed -n "${i}p" <<< "$got")', expected $f of stack_workload"
	done
}

t_native() {
	local ids id n
	rec s --stacks sync
	grep -Eq '^gtrace-bpf: stacks: 16 taken, [0-9]+ distinct' "$T/s.err" ||
		err "no stacks line with 16 taken: $(grep 'stacks:' "$T/s.err")"
	jq -e '.stream_syncs == 12 and .ctx_syncs == 4' "$T/s.out" > /dev/null || fatal "the workload: $(cat "$T/s.out")"
	# every synchronize call has a stack; cuInit (no wait) has none
	n=$(jq -s '[.[] | select(.api == "cuStreamSynchronize" or .api == "cuCtxSynchronize") | select(.stack == null)] | length' "$T/s.json")
	[ "$n" -eq 0 ] || err "$n synchronize calls without a stack"
	jq -e -s '[.[] | select(.api == "cuInit")] | length == 1 and (.[0].stack == null)' "$T/s.json" > /dev/null ||
		err "cuInit has a stack or is missing"
	# the 12 from one call chain: one stack
	ids=$(jq -r 'select(.api == "cuStreamSynchronize") | .stack' "$T/s.json" | sort -u)
	[ "$(wc -l <<< "$ids")" -eq 1 ] || err "cuStreamSynchronize from one chain has $(wc -l <<< "$ids") stacks: $(tr '\n' ' ' <<< "$ids")"
	expect_chain "$ids" sync_here step train main
	# cuCtxSynchronize: 3 from other_site (one stack), 1 deep and cut
	ids=$(jq -r 'select(.api == "cuCtxSynchronize") | .stack' "$T/s.json" | sort | uniq -c | sort -rn)
	[ "$(awk '{print $1}' <<< "$ids" | tr '\n' ' ')" = "3 1 " ] || err "cuCtxSynchronize stacks (count id): $(tr '\n' '|' <<< "$ids")"
	id=$(awk 'NR == 1 {print $2}' <<< "$ids")
	expect_chain "$id" other_site others main
	id=$(awk 'NR == 2 {print $2}' <<< "$ids")
	jq -e -s --argjson id "$id" '[.[] | select(.type == "stack" and .id == $id)][0] | .cut == true and (.frames | length) >= 48' \
		"$T/s.json" > /dev/null || err "the 60-deep stack is not cut at 48 frames: $(jq -c --argjson id "$id" 'select(.type == "stack" and .id == $id) | {cut, n: (.frames | length)}' "$T/s.json")"
	expect_chain "$id" deep deep deep
	# each stack once in the table
	n=$(jq -s '[.[] | select(.type == "stack")] | length' "$T/s.json")
	[ "$n" -eq "$(jq -s '[.[] | select(.type == "stack") | .id] | unique | length' "$T/s.json")" ] || err "a stack is in the table twice"
	"$GTRACE" dump --summary "$T/s.gtrace" | grep -Eq '^call stacks \(distinct\) +'"$n"'$' ||
		err "dump --summary: $(grep -i stack <<< "$("$GTRACE" dump --summary "$T/s.gtrace")")"
	"$GTRACE" export -f csv -o "$T/s.csv" "$T/s.gtrace" > /dev/null 2>&1 || err "export -f csv failed"
	head -n 1 "$T/s.csv" | grep -q ',stack$' || err "the CSV has no stack column: $(head -n 1 "$T/s.csv" | tail -c 60)"
	# Chrome JSON: the frames in the call's args
	"$GTRACE" export -f json -o "$T/s.trace.json" "$T/s.gtrace" > /dev/null 2>&1 || err "export -f json failed"
	jq -e '[.traceEvents[] | select(.name == "cuStreamSynchronize")] | length == 12 and
		all(.[]; (.args.frames[1] | test("^sync_here\\+0x[0-9a-f]+ \\(stack_workload\\)$")) and (.args.frames | length) >= 5)' \
		"$T/s.trace.json" > /dev/null || err "Chrome JSON: $(jq -c '[.traceEvents[] | select(.name == "cuStreamSynchronize")][0].args' "$T/s.trace.json")"
}

# analyze: sync_site names the site where the host waited most (sync_here:
# 12 of the 16 waits), and each example says where its wait came from.
t_sync_site() {
	local f
	rec s --stacks sync
	"$GTRACE" analyze --format json -o "$T/a.json" "$T/s.gtrace" 2> "$T/a.err" || fatal "analyze: $(cat "$T/a.err")"
	f=$(jq -c '[.scopes[] | select(.kind == "process") | .findings[] | select(.id == "sync_site")][0]' "$T/a.json")
	[ "$f" != null ] || fatal "no sync_site finding: $(jq -c '[.scopes[] | {kind, f: [.findings[].id]}]' "$T/a.json")"
	jq -e '.count == 12 and (.summary | test("16 synchronize calls from 3 call sites; most at sync_here\\+0x[0-9a-f]+ \\(stack_workload\\): .* in 12 calls"))' <<< "$f" > /dev/null ||
		err "sync_site: $(jq -c '{count, summary}' <<< "$f")"
	jq -e '(.examples | length) == 3 and ([.examples[].what] | map(test("^cu(Stream|Ctx)Synchronize from (sync_here|other_site|deep)\\+0x[0-9a-f]+ \\(stack_workload\\)$")) | all)
		and (.examples[0].what | test("from sync_here"))' <<< "$f" > /dev/null ||
		err "sync_site's examples: $(jq -c '[.examples[].what]' <<< "$f")"
	"$GTRACE" analyze "$T/s.gtrace" 2> /dev/null | grep -q 'sync_site: the host waited' || err "the table has no sync_site line"
	# stats by call site: the three sites, the most waited first
	"$GTRACE" stats -r cuda_sync_site_sum --format json "$T/s.gtrace" > "$T/st.json" 2> "$T/st.err" ||
		err "stats -r cuda_sync_site_sum: $(cat "$T/st.err")"
	jq -e '.reports[0].rows | length == 3 and (.[0].site | test("^sync_here\\+0x[0-9a-f]+ \\(stack_workload\\)$"))
		and .[0].num_calls == 12 and .[0].processes == 1
		and ([.[1:][] | {s: (.site | sub("\\+.*"; "")), n: .num_calls}] | sort_by(.s)) == [{s: "deep", n: 1}, {s: "other_site", n: 3}]' \
		"$T/st.json" > /dev/null || err "cuda_sync_site_sum: $(jq -c '.reports[0].rows | map({site, num_calls, processes})' "$T/st.json")"
}

# Without --stacks: no stack taken, none in the dump, no CSV column.
t_none() {
	rec n
	grep -q 'stacks:' "$T/n.err" && err "a stacks line without --stacks: $(grep 'stacks:' "$T/n.err")"
	jq -e -s '[.[] | select(.stack != null or .type == "stack")] | length == 0' "$T/n.json" > /dev/null ||
		err "stacks in a trace recorded without --stacks"
	"$GTRACE" dump --summary "$T/n.gtrace" | grep -q '^options:.*stacks=' && err "the header says stacks= without --stacks"
	"$GTRACE" export -f csv -o "$T/n.csv" "$T/n.gtrace" > /dev/null 2>&1 || err "export -f csv failed"
	head -n 1 "$T/n.csv" | grep -q ',stack' && err "the CSV has a stack column without --stacks"
	"$GTRACE" --stacks everything -o "$T/x.gtrace" -- true 2> "$T/x.err"
	[ $? -eq 2 ] && [ "$(wc -l < "$T/x.err")" -eq 1 ] && grep -q "unknown stacks kind 'everything'" "$T/x.err" ||
		err "--stacks everything: $(cat "$T/x.err")"
}

# --stacks all: every call has a stack, launches too; a launch from a call
# site seen before on its thread sends only the site's keys (no walk), and
# still gets the site's stack.
t_all() {
	local n nl taken same
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/a.gtrace" --stacks all -- "$WORKLOAD" \
		--launches 200 --copies 4 --syncs 4 > "$T/a.out" 2> "$T/a.err" || fatal "--stacks all: $(tail -n 3 "$T/a.err" | tr '\n' '|')"
	dump_trace "$T/a.gtrace" "$T/a.json"
	n=$(jq -s '[.[] | select(.api != null and .type != "stack")] | length' "$T/a.json")
	nl=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/a.json")
	[ "$nl" -eq 200 ] || err "$nl launches in the trace, the workload made 200"
	jq -e -s '[.[] | select(.api != null and .type != "stack" and .stack == null)] | length == 0' "$T/a.json" > /dev/null ||
		err "calls without a stack: $(jq -s -c '[.[] | select(.api != null and .type != "stack" and .stack == null) | .api] | unique' "$T/a.json")"
	# launches: frame 0 the libcuda launch function, then the workload's frames
	jq -e -s '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| [.[] | select(.type == "launch") | $s[.stack | tostring]]
		| length == 200 and all(.[]; (.[0] | test("^cuLaunchKernel[A-Za-z_]*\\+0x[0-9a-f]+ \\(libcuda\\.so\\.1\\)$"))
			and any(.[1:][]; test("\\(cuda_workload\\)$")))' "$T/a.json" > /dev/null ||
		err "launch stacks: $(jq -s -c '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s | [.[] | select(.type == "launch") | $s[.stack | tostring]][0]' "$T/a.json")"
	# the cache: most launches from a site seen before
	taken=$(sed -n 's/^gtrace-bpf: stacks: \([0-9]*\) taken.*/\1/p' "$T/a.err")
	same=$(sed -n 's/.*; \([0-9]*\) hot calls from a call site seen before (0 of them not known).*/\1/p' "$T/a.err")
	[ -n "$taken" ] && [ -n "$same" ] && [ $((taken + same)) -eq "$n" ] && [ "$same" -ge 150 ] ||
		err "stacks taken '$taken' and from known sites '$same' of $n calls: $(grep 'stacks:' "$T/a.err")"
	"$GTRACE" dump --summary "$T/a.gtrace" | grep -q '^options:.*stacks=all' || err "the header does not say stacks=all"
}

add_case t_native "--stacks sync: every synchronize call carries its stack, frames naming the workload's functions in order; a 60-deep stack cut at 48 and marked; the CSV's stack column"
add_case t_sync_site "analyze: sync_site names the call site where the host waited most, the examples where each wait came from; stats' cuda_sync_site_sum by call site"
add_case t_none "without --stacks: no stacks anywhere; a kind not known: one line, status 2"
add_case t_all "--stacks all: every call has a stack, launches too; launches from a known call site send its keys, no walk"
run_cases "$@"
