#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --stacks sync: the native stacks of the calls the host waits in, against
# the mock libcuda and tests/mock/stack_workload (known call chains, frame
# pointers): every synchronize call carries its stack, whose frames name the
# workload's functions in order; a stack deeper than the recorder keeps is
# cut and marked; analyze's sync_site names the call site where the host
# waited most, and its examples say where each wait came from. With
# --stacks none no call carries one, and the CSV has no stack column;
# without --stacks, full mode takes every call's, light mode the waits'.
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
	# the stack columns last: the call's stack, and a CUDA graph's kernel's
	head -n 1 "$T/s.csv" | grep -q ',stack,graph_node,capture_ts,capture_tid,cloned_from$' ||
		err "the CSV has no stack column: $(head -n 1 "$T/s.csv" | tail -c 80)"
	# Chrome JSON: the frames in the call's args
	"$GTRACE" export -f json -o "$T/s.trace.json" "$T/s.gtrace" > /dev/null 2>&1 || err "export -f json failed"
	jq -e '[.traceEvents[] | select(.name == "cuStreamSynchronize")] | length == 12 and
		all(.[]; (.args.frames[1] | test("^sync_here\\+0x[0-9a-f]+ \\(stack_workload\\)$")) and (.args.frames | length) >= 5)' \
		"$T/s.trace.json" > /dev/null || err "Chrome JSON: $(jq -c '[.traceEvents[] | select(.name == "cuStreamSynchronize")][0].args' "$T/s.trace.json")"
}

# site_sums DUMP RE: the synchronize calls of DUMP by call site (their
# stack's first frame that matches RE), the most waited first, from the
# waits the trace holds: [{site, ns, n}]. Which site the host waited at
# most is the machine's doing (one wait stalled 40 ms on a loaded CI run);
# analyze and stats must name the one the trace says.
site_sums() {
	jq -s -c --arg re "$2" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| [.[] | select((.api // "" | endswith("Synchronize")) and .stack != null)
		   | {site: ([$s[.stack | tostring][] | select(test($re))][0]), dur}]
		| group_by(.site) | map({site: .[0].site, ns: (map(.dur) | add), n: length}) | sort_by(-.ns)' "$1"
}

# analyze: sync_site names the site where the host waited most (by the
# trace's own waits; sync_here made 12 of the 16), and each example says
# where its wait came from.
t_sync_site() {
	local f sums
	rec s --stacks sync
	"$GTRACE" analyze --format json -o "$T/a.json" "$T/s.gtrace" 2> "$T/a.err" || fatal "analyze: $(cat "$T/a.err")"
	f=$(jq -c '[.scopes[] | select(.kind == "process") | .findings[] | select(.id == "sync_site")][0]' "$T/a.json")
	[ "$f" != null ] || fatal "no sync_site finding: $(jq -c '[.scopes[] | {kind, f: [.findings[].id]}]' "$T/a.json")"
	sums=$(site_sums "$T/s.json" ' \(stack_workload\)$')
	jq -e '[.[] | {s: (.site | sub("\\+.*"; "")), n}] | sort_by(.s) == [{s: "deep", n: 1}, {s: "other_site", n: 3}, {s: "sync_here", n: 12}]' \
		<<< "$sums" > /dev/null || fatal "the trace's synchronize calls by site: $sums"
	jq -e --argjson top "$(jq -c '.[0]' <<< "$sums")" '.count == $top.n
		and (.summary | startswith("the host waited ") and contains(" in 16 synchronize calls from 3 call sites; most at " + $top.site + ": ")
			and (split("; most at ")[1] | test(": [^:]* in \($top.n) calls? \\(")))' <<< "$f" > /dev/null ||
		err "sync_site: $(jq -c '{count, summary}' <<< "$f"), the trace's most waited site: $(jq -c '.[0]' <<< "$sums")"
	jq -e --argjson top "$(jq -c '.[0]' <<< "$sums")" '(.examples | length) == 3
		and ([.examples[].what] | map(test("^cu(Stream|Ctx)Synchronize from (sync_here|other_site|deep)\\+0x[0-9a-f]+ \\(stack_workload\\)$")) | all)
		and (.examples[0].what | endswith(" from " + $top.site))' <<< "$f" > /dev/null ||
		err "sync_site's examples: $(jq -c '[.examples[].what]' <<< "$f"), the trace's most waited site: $(jq -c '.[0].site' <<< "$sums")"
	"$GTRACE" analyze "$T/s.gtrace" 2> /dev/null | grep -q 'sync_site: the host waited' || err "the table has no sync_site line"
	# stats by call site: the three sites, the most waited first (the trace's)
	"$GTRACE" stats -r cuda_sync_site_sum --format json "$T/s.gtrace" > "$T/st.json" 2> "$T/st.err" ||
		err "stats -r cuda_sync_site_sum: $(cat "$T/st.err")"
	jq -e --argjson sums "$sums" '.reports[0].rows | .[0].site == $sums[0].site and all(.[]; .processes == 1)
		and (map({site, n: .num_calls}) | sort_by(.site)) == ($sums | map({site, n}) | sort_by(.site))' \
		"$T/st.json" > /dev/null || err "cuda_sync_site_sum: $(jq -c '.reports[0].rows | map({site, num_calls, processes})' "$T/st.json"), the trace's: $sums"
}

# --stacks none: no stack taken, none in the dump, no CSV column. Without
# --stacks: full mode takes every call's (all), light mode the waits' (sync).
t_none() {
	rec n --stacks none
	grep -q 'stacks:' "$T/n.err" && err "a stacks line with --stacks none: $(grep 'stacks:' "$T/n.err")"
	jq -e -s '[.[] | select(.stack != null or .type == "stack")] | length == 0' "$T/n.json" > /dev/null ||
		err "stacks in a trace recorded with --stacks none"
	"$GTRACE" dump --summary "$T/n.gtrace" | grep -q '^options:.*stacks=' && err "the header says stacks= with --stacks none"
	"$GTRACE" export -f csv -o "$T/n.csv" "$T/n.gtrace" > /dev/null 2>&1 || err "export -f csv failed"
	head -n 1 "$T/n.csv" | grep -q ',stack' && err "the CSV has a stack column with --stacks none"
	# the defaults
	rec d
	"$GTRACE" dump --summary "$T/d.gtrace" | grep -q '^options:.* stacks=all' || err "full mode's default is not --stacks all"
	jq -e -s '[.[] | select(.type == "launch" or .type == "sync")] | length > 0 and all(.stack != null)' "$T/d.json" > /dev/null ||
		err "full mode's default: a launch or sync without its stack"
	rec l --mode light --trace cuda
	"$GTRACE" dump --summary "$T/l.gtrace" | grep -q '^options:.* stacks=sync' || err "light mode's default is not --stacks sync"
	jq -e -s '[.[] | select(.type == "sync")] | length > 0 and all(.stack != null)' "$T/l.json" > /dev/null ||
		err "light mode's default: a sync without its stack"
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
	# a call site's reference shares its call's reservation; a name's
	# reservation is longer than its record: both read right, nothing malformed
	! grep -i 'malformed' "$T/a.err" || err "the recorder skipped malformed records"
	[ "$(jq -s '[.[] | select(.type == "name" or .kernel != null)] | length' "$T/a.json")" -gt 0 ] ||
		err "no kernel names in the trace"
}

# ---- Python frames -----------------------------------------------------------

PY_WL=$ROOT/tests/mock/py_workload.py

# pyline MARKER: the line of py_workload.py that ends with "# @MARKER".
pyline() {
	grep -n "# @$1\$" "$PY_WL" | cut -d: -f1
}

# pyrec NAME PYTHON [OPTIONS...]: py_workload (12 steps, 80 deep) run by
# PYTHON into $T/NAME.gtrace, dumped into $T/NAME.json.
pyrec() {
	local name=$1 py=$2 rc
	shift 2
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" "$@" -- "$py" "$PY_WL" 12 80 \
		> "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf $* -- $py py_workload.py: status $rc: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	jq -e '.launches == 12 and .stream_syncs == 12 and .ctx_syncs == 5' "$T/$name.out" > /dev/null ||
		fatal "the workload: $(cat "$T/$name.out")"
	dump_trace "$T/$name.gtrace" "$T/$name.json"
}

# pyframes FILE API [N]: the Python frames of the stacks of the API calls
# in dump FILE (the N-th such call, default each distinct stack), one
# "function:line" a line, innermost first; frames of other files as
# "function@file".
pyframes() {
	jq -r -s --arg api "$2" --arg wl "$PY_WL" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| [.[] | select(.api == $api and .type != "stack") | .stack] | unique[] | $s[tostring]
		| [.[] | select(test(" \\(.*\\.py(:[0-9]+)?\\)$"))
		       | capture("^(?<f>.*) \\((?<file>.*\\.py)(:(?<l>[0-9]+))?\\)$")
		       | if .file == $wl then "\(.f):\(.l)" else "\(.f)@\(.file | sub(".*/"; ""))" end]
		| join(" ")' "$1"
}

# expect_py FILE API WANT...: every distinct stack of API's calls holds the
# Python frames WANT ("function:MARKER", innermost first) at its start.
expect_py() {
	local file=$1 api=$2 want="" w got
	shift 2
	for w in "$@"; do
		want+="${want:+ }${w%%:*}:$(pyline "${w#*:}")"
	done
	got=$(pyframes "$file" "$api")
	[ -n "$got" ] || { err "$api: no Python frames in $file"; return; }
	while read -r line; do
		[ "${line:0:${#want}}" = "$want" ] || err "$api: Python frames '$line', expected '$want' first"
	done <<< "$got"
}

# py_checks NAME: the stacks of run NAME name every call's Python lines.
py_checks() {
	local f=$T/$1.json
	expect_py "$f" cuStreamSynchronize sync_here:sync_here step:step_sync train:train_step main:main_train \
		"<module>:module_main"
	expect_py "$f" cuLaunchKernel launch:launch step:step_launch train:train_step main:main_train \
		"<module>:module_main"
	# the generator, the thread and the deep recursion (cuCtxSynchronize)
	pyframes "$f" cuCtxSynchronize > "$T/$1.ctx"
	grep -qx "gen_syncs:$(pyline gen_sync) main:$(pyline main_gen) <module>:$(pyline module_main)" "$T/$1.ctx" ||
		err "the generator's sync: $(tr '\n' '|' < "$T/$1.ctx")"
	# (3.10's code objects have no qualified name: "run")
	grep -Eq "^(Worker\.)?run:$(pyline thread_sync) .*_bootstrap_inner@threading.py" "$T/$1.ctx" ||
		err "the thread's sync: $(tr '\n' '|' < "$T/$1.ctx")"
	grep -q "^deep:$(pyline deep_sync)\( deep:$(pyline deep_rec)\)\{63\}$" "$T/$1.ctx" ||
		err "the deep sync: $(grep '^deep' "$T/$1.ctx" | cut -c1-200)"
	jq -e -s '[.[] | select(.type == "stack" and .python_cut == true)] | length == 1' "$f" > /dev/null ||
		err "not one stack cut at 64 Python frames: $(jq -s -c '[.[] | select(.type == "stack") | {id, python, python_cut}]' "$f")"
	jq -e -s '[.[] | select(.api != null and .type != "stack" and .stack != null)] as $c
		| (map(select(.type == "stack" and .python == true) | .id)) as $py
		| [$c[] | select(.api | test("Synchronize$|Launch")) | select(.stack as $id | $py | index($id) | not)] | length == 0' \
		"$f" > /dev/null || err "syncs or launches without Python frames"
}

# Debian's python3 (3.11): syncs, launches, a generator, a thread and a
# recursion deeper than kept, each with its exact lines; analyze names the
# line the host waited at.
t_python() {
	local py=/usr/bin/python3 f sums
	[ -x "$py" ] || fatal "no $py (python3 is a test dependency)"
	pyrec p "$py" --stacks all
	grep -Eq '^gtrace-bpf: stacks: [0-9]+ with Python frames \(1 interpreter;' "$T/p.err" ||
		err "no Python stacks line: $(grep 'stacks:' "$T/p.err" | tr '\n' '|')"
	# the program's interpreter is named to BPF before it starts: no call without its frames
	[ "$(sed -n 's/.*, \([0-9]*\) taken before the process. interpreter was known (.*/\1/p' "$T/p.err")" = 0 ] ||
		err "stacks taken before the interpreter was known: $(grep 'Python frames' "$T/p.err")"
	# every hot call's site key read cheaply (the thread and its innermost
	# frame), none by a walk
	grep -q '; 0 hot calls keyed by a walk$' "$T/p.err" ||
		err "hot calls keyed by a walk: $(grep -o '[0-9]* hot calls keyed by a walk' "$T/p.err")"
	py_checks p
	grep -q "^Worker\.run:$(pyline thread_sync) " "$T/p.ctx" || err "the thread's function is not Worker.run: $(grep run "$T/p.ctx")"
	# Perfetto: the stack on the call's slice, interned (TrackEvent.callstack_iid:
	# each stack once per sequence), a Python frame as function, file and
	# line; the lint checks every callstack, frame and string is defined
	# before use
	"$GTRACE" export -f perfetto -o "$T/p.pftrace" "$T/p.gtrace" > /dev/null 2>&1 || err "export -f perfetto failed"
	python3 "$ROOT/tools/perfetto_lint.py" --json "$T/p.pftrace" > "$T/p.lint" 2> "$T/p.lint.err" ||
		err "perfetto_lint: $(tail -n 2 "$T/p.lint.err")"
	jq -e --arg f "sync_here ($PY_WL:$(pyline sync_here))" --argjson n "$(jq -s '[.[] | select(.stack != null and .type != "stack")] | length' "$T/p.json")" \
		--argjson ns "$(jq -s '[.[] | select(.stack != null and .type != "stack") | .stack] | unique | length' "$T/p.json")" \
		'.callstack_events == $n and .callstacks == $ns and .callstack_repeats == 0 and (.stack_frames | index($f) != null)' "$T/p.lint" > /dev/null ||
		err "Perfetto's call stacks: $(jq -c '{callstack_events, callstacks, f: [.stack_frames[] | select(test("sync_here"))]}' "$T/p.lint")"
	# diff by call site: the same program with half the steps
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/h.gtrace" --stacks all \
		-- /usr/bin/python3 "$PY_WL" 6 80 > /dev/null 2> "$T/h.err" || fatal "6 steps: $(tail -n 3 "$T/h.err" | tr '\n' '|')"
	"$GTRACE" diff --format json "$T/p.gtrace" "$T/h.gtrace" > "$T/d.json" 2> "$T/d.err" || err "diff: $(cat "$T/d.err")"
	# (over the span diff compares: each site's counts are those of its one
	# api; which steps that span holds is the steady state's, found from the
	# steps' times: on a loaded machine both sides' can be equal)
	jq -e --arg s "sync_here ($PY_WL:$(pyline sync_here))" --arg l "launch ($PY_WL:$(pyline launch))" '
		def n($rows; $name): [$rows[] | select(.name == $name) | [.base.count, .opt.count]][0];
		n(.sites.rows; $s) == n(.apis.rows; "cuStreamSynchronize") and n(.sites.rows; $l) == n(.apis.rows; "cuLaunchKernel")
		and n(.sites.rows; $s)[0] > 0 and n(.sites.rows; $s)[1] > 0' "$T/d.json" > /dev/null ||
		err "diff's call sites: $(jq -c '[.sites.rows[], .apis.rows[] | [.name, .base.count, .opt.count]]' "$T/d.json" | head -c 900)"
	"$GTRACE" diff "$T/p.gtrace" "$T/h.gtrace" 2> /dev/null | grep -q "^Call sites (CPU time in the calls with a stack made there)" ||
		err "diff's table has no call-site rows"
	# a file name the program chose is text everywhere: dump's JSON, the report's page
	mkdir -p "$T/a<b>&\"q'" && cp "$PY_WL" "$T/a<b>&\"q'/wl.py" || fatal "cannot copy the workload"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/x.gtrace" --stacks sync \
		-- /usr/bin/python3 "$T/a<b>&\"q'/wl.py" 2 3 > /dev/null 2> "$T/x.err" || fatal "the hostile path: $(tail -n 3 "$T/x.err" | tr '\n' '|')"
	"$GTRACE" dump "$T/x.gtrace" | jq -e -s --arg f "sync_here ($T/a<b>&\"q'/wl.py:$(pyline sync_here))" \
		'[.[] | select(.type == "stack") | .frames[]] | index($f) != null' > /dev/null ||
		err "dump does not hold the hostile file name as it is"
	"$GTRACE" report "$T/x.gtrace" -o "$T/x.html" 2> /dev/null || err "report of the hostile path failed"
	python3 "$ROOT/tests/integration/report_page.py" "$T/xpage.json" "$T/x.html" 2> /dev/null || fatal "report_page.py failed"
	jq -e --arg f "sync_here ($T/a<b>&\"q'/wl.py:$(pyline sync_here))" '.[0] | .errors == []
		and ([.sites[] | select(.site == $f)] | length) == 1' "$T/xpage.json" > /dev/null ||
		err "the report's sites with a hostile file name: $(jq -c '.[0] | {errors, sites}' "$T/xpage.json")"
	# a native thread that calls for the waiting main thread: the main thread's frames, flagged
	GT_POOL_LIB=$MOCK_DIR/libpool.so GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/m.gtrace" --stacks sync \
		-- /usr/bin/python3 "$PY_WL" 2 3 > "$T/m.out" 2> "$T/m.err" || fatal "GT_POOL_LIB: $(tail -n 3 "$T/m.err" | tr '\n' '|')"
	jq -e '.pool_syncs == 1' "$T/m.out" > /dev/null || fatal "the workload's pool call: $(cat "$T/m.out")"
	dump_trace "$T/m.gtrace" "$T/m.json"
	jq -e -s --arg f "pool_call ($PY_WL:$(pyline pool_sync))" --arg mf "main ($PY_WL:$(pyline main_pool))" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s
		| [.[] | select(.api == "cuCtxSynchronize" and .tid != .pid) | $s[.stack | tostring]]
		| map(select(.python_of_main_thread == true)) as $m
		| ($m | length) == 1 and ([$m[0].frames | to_entries[] | select(.value == $f or .value == $mf) | .key]) as $at
		| ($at | length) == 2 and $at[0] + 1 == $at[1] and $m[0].frames[$at[0]] == $f' "$T/m.json" > /dev/null ||
		err "the pool thread's sync: $(jq -s -c '(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s | [.[] | select(.api == "cuCtxSynchronize") | {tid, pid, s: $s[.stack | tostring]}]' "$T/m.json" | head -c 1500)"
	grep -Eq 'Python frames \(1 interpreter; 1 of a thread without Python' "$T/m.err" ||
		err "the stacks line: $(grep 'Python frames' "$T/m.err")"
	# a call that failed, whose entry takes no stack with --stacks sync: taken at its exit
	jq -e '.failed == 1' "$T/m.out" > /dev/null || fatal "the workload's failing lookup did not fail: $(cat "$T/m.out")"
	jq -e -s --arg f "lookup_missing ($PY_WL:$(pyline lookup_fail))" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s
		| [.[] | select(.api == "cuModuleGetFunction")] as $c
		| ($c | length) == 2 and ($c | map(select(.failed == false)) | all(.stack == null))
		and ($c | map(select(.failed == true)) | length == 1 and ($s[.[0].stack | tostring]
			| .at_exit == true and (.frames | index($f)) != null))' "$T/m.json" > /dev/null ||
		err "the failed call's stack: $(jq -s -c '(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s | [.[] | select(.api == "cuModuleGetFunction") | {failed, s: $s[(.stack // 0) | tostring]}]' "$T/m.json" | head -c 800)"
	grep -q 'stacks: [0-9]* taken.*, 1 at the exit of a failed call' "$T/m.err" || err "the stacks line: $(grep 'stacks:' "$T/m.err" | head -n 1)"
	# analyze: who synchronized, by file:line
	"$GTRACE" analyze --format json -o "$T/pa.json" "$T/p.gtrace" 2> "$T/pa.err" || fatal "analyze: $(cat "$T/pa.err")"
	f=$(jq -c '[.scopes[] | select(.kind == "process") | .findings[] | select(.id == "sync_site")][0]' "$T/pa.json")
	# each wait at its line; the site named first is the one the trace's
	# waits put first (sync_here made 12 of the 17)
	sums=$(site_sums "$T/p.json" '/py_workload\.py:[0-9]+\)$')
	jq -e --arg wl "$PY_WL" --argjson l "[$(pyline sync_here), $(pyline gen_sync), $(pyline thread_sync), $(pyline deep_sync)]" '
		map({site, n}) | sort_by(.site) == ([{f: "sync_here", n: 12}, {f: "gen_syncs", n: 3}, {f: "Worker.run", n: 1}, {f: "deep", n: 1}]
			| to_entries | map({site: "\(.value.f) (\($wl):\($l[.key]))", n: .value.n}) | sort_by(.site))' <<< "$sums" > /dev/null ||
		err "the trace's synchronize calls by site: $sums"
	jq -e --argjson top "$(jq -c '.[0]' <<< "$sums")" '.count == $top.n and (.summary | contains("most at " + $top.site + ": "))
		and (.examples[0].what | endswith(" from " + $top.site))' <<< "$f" > /dev/null ||
		err "sync_site: $(jq -c '{count, summary, ex: [.examples[].what]}' <<< "$f"), the trace's most waited site: $(jq -c '.[0]' <<< "$sums")"
	"$GTRACE" stats -r cuda_sync_site_sum --format json "$T/p.gtrace" > "$T/ps.json" 2> /dev/null ||
		err "stats -r cuda_sync_site_sum failed"
	jq -e --argjson sums "$sums" '.reports[0].rows | .[0].site == $sums[0].site
		and (map({site, n: .num_calls}) | sort_by(.site)) == ($sums | map({site, n}) | sort_by(.site))' \
		"$T/ps.json" > /dev/null || err "cuda_sync_site_sum: $(jq -c '.reports[0].rows | map({site, num_calls})' "$T/ps.json"), the trace's: $sums"
}

# A Python process that execs Python: the pid and the main thread's id stay,
# the interpreter (another version where the machine has one) and every
# address change. The new interpreter is named at the exec (the workload's
# second image waits until the recorder said so, then launches); its
# launches must name its own line, not what was known of the first
# (bpf/pystack.bpf.h: py_forget at the exec).
t_python_exec() {
	local wl=$ROOT/tests/mock/py_exec.py py2 v lf ls rec pid
	py2=$(ls -d /root/.pyenv/versions/3.12.*/bin/python3.12 /usr/bin/python3.12 2> /dev/null | head -n 1)
	if [ -z "$py2" ]; then
		py2=/usr/bin/python3
		log "no Python 3.12 here: the second image runs $py2 again (its interpreter known from the start)"
	fi
	log "first image /usr/bin/python3, second $py2"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" -vv --libcuda "$MOCK_LIB" -o "$T/x.gtrace" --stacks all -- /usr/bin/python3 \
		"$wl" first "$py2" > "$T/x.out" 2> "$T/x.err" &
	rec=$!
	PIDS+=("$rec")
	wait_line "$T/x.out" '^ready [0-9]+$' 30 "$rec" || fatal "the second image did not start: $(tail -n 3 "$T/x.err")"
	pid=$(sed -n 's/^ready //p' "$T/x.out")
	PIDS+=("$pid")
	v=$("$py2" -c 'import sys; print("%d\\.%d" % sys.version_info[:2])')
	wait_line "$T/x.err" "stacks: Python $v at /" 30 "$rec" ||
		fatal "the exec'd interpreter $py2 not named: $(grep 'stacks: Python' "$T/x.err" | tr '\n' '|')"
	kill -USR1 "$pid"
	wait "$rec" || fatal "py_exec: $(grep -v libbpf "$T/x.err" | tail -n 3 | tr '\n' '|')"
	[ "$(grep -c '^{' "$T/x.out")" -eq 2 ] && [ "$(grep '^{' "$T/x.out" | jq -s '[.[] | .pid] | unique | length')" -eq 1 ] ||
		fatal "the workload did not exec in place: $(cat "$T/x.out")"
	dump_trace "$T/x.gtrace" "$T/x.json"
	lf=$(grep -n '# @first_launch$' "$wl" | cut -d: -f1)
	ls=$(grep -n '# @second_launch$' "$wl" | cut -d: -f1)
	for v in "first:$lf:1" "second:$ls:2"; do
		local f=${v%%:*} l got
		l=${v#*:}
		l=${l%%:*}
		got=$(jq -r -s --arg g "${v##*:}" '
			(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
			| [.[] | select(.type == "launch" and (.grid[0] | tostring) == $g) | $s[.stack | tostring]
			   | ([.[] | select(test(" \\(.*py_exec\\.py:[0-9]+\\)$"))
			          | capture("^(?<f>.*) \\((?<file>.*):(?<l>[0-9]+)\\)$")
			          | "\(.f) (\(.file | sub(".*/"; "")):\(.l))"][0] // "none")]
			| group_by(.) | map("\(length) \(.[0])") | join("|")' "$T/x.json")
		[ "$got" = "20 $f (py_exec.py:$l)" ] || err "the $f image's launches: '$got', expected 20 at '$f (py_exec.py:$l)'"
	done
}

# The other versions found on this machine (3.10, 3.12, 3.13; each one
# exercised is named in the log); a runtime of an unsupported version is
# said once and its stacks stay native.
t_python_versions() {
	local v py n=0
	for v in 3.10 3.12 3.13; do
		py=$(ls -d /root/.pyenv/versions/"$v".*/bin/python"$v" /usr/bin/python"$v" /usr/local/bin/python"$v" 2> /dev/null | head -n 1)
		if [ -z "$py" ]; then
			log "Python $v: not on this machine, not exercised"
			continue
		fi
		log "Python $v: $py"
		pyrec "v$v" "$py" --stacks all
		grep -Eq '^gtrace-bpf: stacks: [0-9]+ with Python frames \(1 interpreter;' "$T/v$v.err" ||
			err "Python $v: no Python stacks line: $(grep 'stacks:' "$T/v$v.err" | tr '\n' '|')"
		py_checks "v$v"
		n=$((n + 1))
	done
	log "$n other Python versions exercised"
	# a runtime that says it is 3.9 (its _PyRuntime, its name): native only, said once
	printf '%s\n' '#include <dlfcn.h>' 'char _PyRuntime[4096];' \
		'int main(void) { void *l = dlopen(getenv("GT_LIBCUDA"), RTLD_NOW); int (*i)(unsigned) = dlsym(l, "cuInit");' \
		'int (*s)(void) = dlsym(l, "cuCtxSynchronize"); i(0); for (int k = 0; k < 3; k++) s(); return 0; }' \
		| sed '1a #include <stdlib.h>' > "$T/old.c"
	cc -O1 -fno-omit-frame-pointer -o "$T/python3.9" "$T/old.c" -ldl || fatal "cannot build the 3.9 stand-in"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/o.gtrace" --stacks sync -- "$T/python3.9" \
		> /dev/null 2> "$T/o.err" || fatal "python3.9 stand-in: $(tail -n 3 "$T/o.err" | tr '\n' '|')"
	[ "$(grep -c 'is Python 3.9: its processes. stacks are native only' "$T/o.err")" -eq 1 ] ||
		err "unsupported Python not said once: $(grep -i python "$T/o.err" | tr '\n' '|')"
	dump_trace "$T/o.gtrace" "$T/o.json"
	jq -e -s '[.[] | select(.api == "cuCtxSynchronize")] | length == 3 and all(.[]; .stack != null)' "$T/o.json" > /dev/null ||
		err "the 3.9 stand-in's syncs lack their stacks"
	jq -e -s '[.[] | select(.type == "stack" and .python == true)] | length == 0' "$T/o.json" > /dev/null ||
		err "Python frames from an unsupported runtime"
}

# --cupti --stacks all on the Python workload (the mock CUPTI agent runs each
# kernel): stats' cuda_gpu_site_sum puts all GPU kernel time at the line that
# launched it; the launches reached through env are Python's from the first.
t_python_gpu() {
	local out_dir agent mock site
	out_dir=$(dirname "$MOCK_DIR")
	agent=$out_dir/libgtrace-cupti.so
	mock=$out_dir/cupti/mock
	[ -f "$agent" ] && ls "$mock"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($agent, $mock): build them with make cupti-mock"
	export GTRACE_RUN_DIR=$T/run
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --cupti --cupti-lib "$agent" --stacks all -o "$T/g.gtrace" \
		-- env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$mock" /usr/bin/python3 "$PY_WL" 12 80 > "$T/g.out" 2> "$T/g.err" ||
		fatal "--cupti --stacks all: $(tail -n 3 "$T/g.err" | tr '\n' '|')"
	jq -e '.launches == 12' "$T/g.out" > /dev/null || fatal "the workload: $(cat "$T/g.out")"
	[ "$(sed -n 's/.*, \([0-9]*\) taken before the process. interpreter was known (.*/\1/p' "$T/g.err")" = 0 ] ||
		err "stacks taken before the interpreter was known: $(grep 'Python frames' "$T/g.err")"
	"$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/g.gtrace" > "$T/gs.json" 2> "$T/gs.err" ||
		fatal "stats -r cuda_gpu_site_sum: $(cat "$T/gs.err")"
	site="launch ($PY_WL:$(pyline launch))"
	jq -e --arg site "$site" '.reports[0].rows | length == 1 and .[0].site == $site and .[0].instances == 12
		and .[0].time_pct == 100 and .[0].processes == 1' "$T/gs.json" > /dev/null ||
		err "cuda_gpu_site_sum: $(jq -c '.reports[0].rows' "$T/gs.json"); the merge: $(grep -h 'merged' "$T/g.err"); the agent: $("$GTRACE" dump --summary "$T/g.gtrace" 2> /dev/null | grep -A9 '^cupti agent' | tr -s ' ' | tr '\n' ';')"
	# the report: its call-site section lists the launch line, with the GPU's share
	"$GTRACE" report "$T/g.gtrace" -o "$T/g.html" 2> "$T/gr.err" || fatal "report: $(cat "$T/gr.err")"
	python3 "$ROOT/tests/integration/report_page.py" "$T/page.json" "$T/g.html" 2> "$T/page.err" ||
		fatal "report_page.py: $(tail -n 3 "$T/page.err" | tr '\n' '|')"
	jq -e --arg site "$site" '.[0] | .errors == [] and ([.sites[] | select(.siteKind == "gpu")] | length == 1
		and .[0].site == $site and .[0].instances == "12" and .[0].pct == "100")' "$T/page.json" > /dev/null ||
		err "report's call sites: $(jq -c '.[0] | {errors, sites}' "$T/page.json")"
	# its flame graph: the launch line's box holds all the GPU time, under main and <module>
	jq -e --arg l "$site" --arg m "main ($PY_WL:$(pyline main_train))" '.[0].flame as $f
		| ([$f[] | select(.flameDepth == "0")] | map(.ns | tonumber) | add) as $all
		| [$f[] | select(.flame == $l)] | length == 1 and (.[0].ns | tonumber) == $all
		and ([$f[] | select(.flame == $m)] | length == 1)' "$T/page.json" > /dev/null ||
		err "report's flame graph: $(jq -c '[.[0].flame[] | [.flame, .flameDepth, .ns]]' "$T/page.json" | head -c 700)"
	# without stacks the kernels are there, under no site
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --cupti --cupti-lib "$agent" --stacks none -o "$T/h.gtrace" \
		-- env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$mock" /usr/bin/python3 "$PY_WL" 12 80 > /dev/null 2> "$T/h.err" ||
		fatal "--cupti: $(tail -n 3 "$T/h.err" | tr '\n' '|')"
	"$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/h.gtrace" 2> /dev/null |
		jq -e '.reports[0].rows | length == 1 and .[0].site == "(launch without a stack)" and .[0].instances == 12' > /dev/null ||
		err "cuda_gpu_site_sum without stacks: $("$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/h.gtrace" 2>&1 | head -c 300)"
}

# t_python_graph: a CUDA graph captured from known lines (tests/mock/py_graph.py),
# replayed: the merged trace traces every replayed kernel back to the launch
# that captured it, and its GPU time goes to that line.
t_python_graph() {
	local out_dir agent mock g=$ROOT/tests/mock/py_graph.py at ml ea
	out_dir=$(dirname "$MOCK_DIR")
	agent=$out_dir/libgtrace-cupti.so
	mock=$out_dir/cupti/mock
	[ -f "$agent" ] && ls "$mock"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($agent, $mock): build them with make cupti-mock"
	gline() { grep -n "# @$1\$" "$g" | cut -d: -f1; }
	at="attention ($g:$(gline attention))" ml="mlp ($g:$(gline mlp))" ea="eager ($g:$(gline eager))"
	export GTRACE_RUN_DIR=$T/run
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --cupti --cupti-lib "$agent" --stacks all -o "$T/g.gtrace" \
		-- env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$mock" /usr/bin/python3 "$g" 7 > "$T/g.out" 2> "$T/g.err" ||
		fatal "--cupti --stacks all: $(tail -n 3 "$T/g.err" | tr '\n' '|')"
	jq -e '.captured == 3 and .replays == 7 and .eager == 1' "$T/g.out" > /dev/null || fatal "the workload: $(cat "$T/g.out")"
	# the merge says it: 21 kernels run by the graph, all traced back; the 3
	# captured launches are not launches without GPU work
	grep -q 'merged 22 GPU records from 1 processes: 22 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work; 21 kernels run by CUDA graphs, 21 of them (100.0 %) traced back to the launch that captured them; 3 launches captured into CUDA graphs$' "$T/g.err" ||
		err "the merge's line: $(grep merged "$T/g.err"); the agent: $(grep -h 'gtrace-cupti' "$T/g.err" | head -n 3 | tr '\n' '|')"
	dump_trace "$T/g.gtrace" "$T/g.json"
	# every replayed kernel names its node, the capturing launch (its entry,
	# thread and stack: that launch's own)
	jq -e -s '([.[] | select(.type == "launch" and .stack != null) | {key: (.ts | tostring), value: .stack}] | from_entries) as $ls
		| [.[] | select(.type == "gpu_kernel" and .graph_node != null)]
		| length == 21 and all(.capture_ts != null and .capture_tid == .launch_tid and .stack == $ls[.capture_ts | tostring])
		and ([.[].graph_node] | unique | length == 3)' "$T/g.json" > /dev/null ||
		err "the replayed kernels: $(jq -c -s '[.[] | select(.type == "gpu_kernel")][:4]' "$T/g.json" | head -c 900)"
	[ "$(jq -s '[.[] | select(.type == "gpu_graph_node")] | length' "$T/g.json")" = 6 ] ||
		err "graph node records: $(jq -c -s '[.[] | select(.type == "gpu_graph_node")]' "$T/g.json" | head -c 600)"
	# stats: the GPU time at the capture's lines, none at the replay's
	"$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/g.gtrace" > "$T/gs.json" 2> "$T/gs.err" ||
		fatal "stats -r cuda_gpu_site_sum: $(cat "$T/gs.err")"
	jq -e --arg at "$at" --arg ml "$ml" --arg ea "$ea" '.reports[0].rows as $r | ($r | length == 3)
		and ($r[0].site == $ml and $r[0].instances == 14) and ($r[1].site == $at and $r[1].instances == 7)
		and ($r[2].site == $ea and $r[2].instances == 1)' "$T/gs.json" > /dev/null ||
		err "cuda_gpu_site_sum: $(jq -c '.reports[0].rows | map({site, instances})' "$T/gs.json")"
	# the exports: each replayed kernel's slice carries the capture's stack
	# (Perfetto: interned, defined before use; Chrome JSON: its frames)
	"$GTRACE" export -f perfetto -o "$T/g.pftrace" "$T/g.gtrace" > /dev/null 2>&1 || err "export -f perfetto failed"
	python3 "$ROOT/tools/perfetto_lint.py" --json "$T/g.pftrace" > "$T/g.lint" 2> "$T/g.lint.err" ||
		err "perfetto_lint: $(tail -n 2 "$T/g.lint.err")"
	jq -e --argjson n "$(jq -s '[.[] | select(.stack != null and .type != "stack")] | length' "$T/g.json")" \
		--arg at "$at" --arg ml "$ml" '.callstack_events == $n and (.stack_frames | index($at) != null and index($ml) != null)' "$T/g.lint" > /dev/null ||
		err "Perfetto's call stacks: $(jq -c '{callstack_events, callstacks}' "$T/g.lint")"
	"$GTRACE" export -f json -o "$T/g.chrome.json" "$T/g.gtrace" > /dev/null 2>&1 || err "export -f json failed"
	jq -e --arg at "$at" --arg ml "$ml" '[.traceEvents[] | select(.args.graph_node != null)] | length == 21
		and all(.args.frames | index($at) != null or index($ml) != null)' "$T/g.chrome.json" > /dev/null ||
		err "Chrome JSON's replayed kernels: $(jq -c '[.traceEvents[] | select(.args.graph_node != null)][0].args' "$T/g.chrome.json" | head -c 600)"
	# a CUPTI that tells no graph nodes: one line; the kernels keep their
	# node, none traced back (no line: a graph launch's kernels are written
	# before its exit, whose record brings its stack)
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --cupti --cupti-lib "$agent" --stacks all -o "$T/n.gtrace" \
		-- env GT_MOCK_INJECTION=1 MOCK_NO_GRAPH_CBS=1 LD_LIBRARY_PATH="$mock" /usr/bin/python3 "$g" 7 > /dev/null 2> "$T/n.err" ||
		fatal "--cupti, no graph callbacks: $(tail -n 3 "$T/n.err" | tr '\n' '|')"
	[ "$(grep -c 'failed to watch CUDA graph nodes' "$T/n.err")" = 1 ] || err "no graph callbacks, not said once: $(cat "$T/n.err")"
	grep -q '21 kernels run by CUDA graphs, 0 of them (0.0 %) traced back' "$T/n.err" || err "no graph callbacks, the merge: $(grep merged "$T/n.err")"
	grep -q '3 launches without GPU work' "$T/n.err" || err "no graph callbacks: the captured launches are not counted: $(grep merged "$T/n.err")"
	"$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/n.gtrace" 2> /dev/null |
		jq -e --arg ea "$ea" '.reports[0].rows | length == 2 and .[0].site == $ea
			and .[1].site == "(launch without a stack)" and .[1].instances == 21' > /dev/null ||
		err "no graph callbacks, cuda_gpu_site_sum: $("$GTRACE" stats -r cuda_gpu_site_sum --format json "$T/n.gtrace" 2>&1 | head -c 400)"
}

# A thread with a Python state of its own that runs no Python (autograd's:
# it launches the backward pass for the main thread, which waits in a
# line): its launches, from one call site, name the main thread's line; a
# hook it runs in Python on its own state names the hook's line; after the
# hook the main thread's again. Its hot calls after the first are site
# references (the thread's key read cheaply, py_fast keeping the main
# thread's state beside its own), none keyed by a walk.
t_python_pool_hot() {
	local n=40
	GT_POOL_LIB=$MOCK_DIR/libpool.so GT_POOL_HOT=$n GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/h.gtrace" \
		--stacks all -- /usr/bin/python3 "$PY_WL" 2 3 > "$T/h.out" 2> "$T/h.err" ||
		fatal "GT_POOL_HOT: $(tail -n 3 "$T/h.err" | tr '\n' '|')"
	jq -e --argjson n $((2 * n)) '.pool_launches == $n and .hook_launches == 1' "$T/h.out" > /dev/null ||
		fatal "the workload's pool launches: $(cat "$T/h.out")"
	dump_trace "$T/h.gtrace" "$T/h.json"
	jq -e -s --argjson n $((2 * n)) --arg p "pool_hot ($PY_WL:$(pyline pool_hot))" \
		--arg m "main ($PY_WL:$(pyline main_pool_hot))" --arg h "pool_hot.<locals>.hook ($PY_WL:$(pyline hook_launch))" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s
		| [.[] | select(.api == "cuLaunchKernel" and .type != "stack" and .tid != .pid) | {ts, s: $s[(.stack // 0) | tostring]}]
		| sort_by(.ts) as $l
		| ($l | length) == $n + 1
		| . and ([$l[] | select(.s.frames | index($h) != null)] | length == 1
			and .[0].s.python_of_main_thread != true)
		| . and ([$l[] | select(.s.frames | index($h) == null)] | length == $n
			and all(.s.python_of_main_thread == true and (.s.frames | index($p)) != null
				and (.s.frames | index($m)) == (.s.frames | index($p)) + 1))
		| . and ($l[$n / 2].s.frames | index($h) != null)' "$T/h.json" > /dev/null ||
		err "the pool thread's launches: $(jq -s -c '(map(select(.type == "stack") | {key: (.id | tostring), value: .}) | from_entries) as $s | [.[] | select(.api == "cuLaunchKernel" and .type != "stack" and .tid != .pid) | {ts, m: $s[(.stack // 0) | tostring].python_of_main_thread, f: ($s[(.stack // 0) | tostring].frames | map(select(test("py_workload"))) | .[0:2])}] | sort_by(.ts) | .[0:3] + .[$n / 2 - 1:$n / 2 + 2]' --argjson n $((2 * n)) "$T/h.json" | head -c 1500)"
	# the thread's own launches: one walk, then site references
	same=$(sed -n 's/.*; \([0-9]*\) hot calls from a call site seen before (0 of them not known).*/\1/p' "$T/h.err")
	[ "${same:-0}" -ge $((2 * n - 2)) ] ||
		err "hot calls from a known site: ${same:-none} of the pool thread's $((2 * n)) launches: $(grep 'hot calls' "$T/h.err")"
	grep -q '; 0 hot calls keyed by a walk$' "$T/h.err" ||
		err "hot calls keyed by a walk: $(grep -o '[0-9]* hot calls keyed by a walk' "$T/h.err")"
}

# py_sites NAME PYTHON: tests/mock/py_sites.py (40 launches from each of four
# lines through one helper, two of them through map) run by PYTHON: each
# launch names its own line; after the first of each stack, site
# references, none keyed by a walk.
py_sites() {
	local name=$1 py=$2 n=40 a b c d same nst PY_WL=$ROOT/tests/mock/py_sites.py
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" --stacks all -- "$py" "$PY_WL" $n \
		> "$T/$name.out" 2> "$T/$name.err" || fatal "$py py_sites.py: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	jq -e --argjson n $n '.a == $n and .b == $n and .c == $n and .d == $n' "$T/$name.out" > /dev/null ||
		fatal "py_sites.py: $(cat "$T/$name.out")"
	dump_trace "$T/$name.gtrace" "$T/$name.json"
	a="helper:$(pyline helper) site_a:$(pyline site_a) <module>:$(pyline loop_a)"
	b="helper:$(pyline helper) site_b:$(pyline site_b) <module>:$(pyline loop_b)"
	c="helper:$(pyline helper) <module>:$(pyline loop_c)"
	d="helper:$(pyline helper) <module>:$(pyline loop_d)"
	jq -r -s --arg wl "$PY_WL" '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| .[] | select(.type == "launch") | $s[(.stack // 0) | tostring] // []
		| [.[] | select(test(" \\(.*\\.py(:[0-9]+)?\\)$"))
		       | capture("^(?<f>.*) \\((?<file>.*\\.py)(:(?<l>[0-9]+))?\\)$") | select(.file == $wl) | "\(.f):\(.l)"]
		| join(" ")' "$T/$name.json" | sort | uniq -c | awk '{$1 = $1; print}' > "$T/$name.sites"
	[ "$(cat "$T/$name.sites")" = "$(printf '%s\n' "$n $a" "$n $b" "$n $c" "$n $d" | sort)" ] ||
		err "$py: the launches' lines (count frames), expected $n each of '$a', '$b', '$c', '$d': $(tr '\n' '|' < "$T/$name.sites")"
	# a walk for the first launch of each stack; the first call through map
	# may take other native frames than the rest (an interpreter without
	# frame pointers leaves the unwinder a stack address), a stack of its own
	nst=$(jq -s '[.[] | select(.type == "launch") | .stack] | unique | length' "$T/$name.json")
	[ "$nst" -le 8 ] || err "$py: $nst distinct stacks for the launches from four lines"
	same=$(sed -n 's/.*; \([0-9]*\) hot calls from a call site seen before (0 of them not known).*/\1/p' "$T/$name.err")
	[ "${same:-0}" -ge $((4 * n - nst)) ] ||
		err "$py: hot calls from a known site: ${same:-none} of $((4 * n)) launches ($nst stacks): $(grep 'hot calls' "$T/$name.err")"
	grep -q '; 0 hot calls keyed by a walk$' "$T/$name.err" ||
		err "$py: hot calls keyed by a walk: $(grep -o '[0-9]* hot calls keyed by a walk' "$T/$name.err")"
}

# A hot call's site is the whole stack that leads to it, not its nearest
# frames. Native: launch_a and launch_b start kern_a and kern_b through the
# same two wrapper functions (the return addresses nearest the driver are
# the same, as under a CUDA runtime): each launch names its own function.
# Python (Debian's python3, and 3.10, 3.12, 3.13 where the machine has them):
# one helper called from two lines, its frame at the same place in both, and
# from two more through map (C between, from 3.12 an entry frame on the C
# stack).
t_sites() {
	local n=40 v py
	[ -x "$STACK_WL" ] || fatal "no $STACK_WL (make mock)"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/ns.gtrace" --stacks all -- "$STACK_WL" 2 3 1 $n \
		> "$T/ns.out" 2> "$T/ns.err" || fatal "stack_workload with launches: $(tail -n 3 "$T/ns.err" | tr '\n' '|')"
	jq -e --argjson n $n '.launches_a == $n and .launches_b == $n' "$T/ns.out" > /dev/null ||
		fatal "the workload: $(cat "$T/ns.out")"
	dump_trace "$T/ns.gtrace" "$T/ns.json"
	jq -e -s --argjson n $n '
		(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| [.[] | select(.type == "launch") | {k: .kernel, f: ($s[(.stack // 0) | tostring] // [] | .[1:5] | map(sub("\\+0x[0-9a-f]+ \\(stack_workload\\)$"; "")))}]
		| (map(select(.k == "kern_a" and .f == ["launch_inner", "launch_outer", "launch_a", "launches"])) | length) == $n
		and (map(select(.k == "kern_b" and .f == ["launch_inner", "launch_outer", "launch_b", "launches"])) | length) == $n' \
		"$T/ns.json" > /dev/null ||
		err "the native launches' stacks: $(jq -s -c '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s | [.[] | select(.type == "launch") | {k: .kernel, f: ($s[(.stack // 0) | tostring] // [] | .[1:5])}] | group_by(.) | map({n: length, l: .[0]})' "$T/ns.json" | head -c 1200); the recorder: $(grep 'stacks: ' "$T/ns.err" | head -n 1)"
	py_sites ps /usr/bin/python3
	for v in 3.10 3.12 3.13; do
		py=$(ls -d /root/.pyenv/versions/"$v".*/bin/python"$v" /usr/bin/python"$v" /usr/local/bin/python"$v" 2> /dev/null | head -n 1)
		if [ -z "$py" ]; then
			log "Python $v: not on this machine, not exercised"
			continue
		fi
		py_sites "ps$v" "$py"
	done
}

add_case t_native "--stacks sync: every synchronize call carries its stack, frames naming the workload's functions in order; a 60-deep stack cut at 48 and marked; the CSV's stack column"
add_case t_sync_site "analyze: sync_site names the call site where the host waited most, the examples where each wait came from; stats' cuda_sync_site_sum by call site"
add_case t_none "--stacks none: no stacks anywhere; without --stacks: all in full mode, sync in light mode; a kind not known: one line, status 2"
add_case t_all "--stacks all: every call has a stack, launches too; launches from a known call site send its keys, no walk"
add_case t_python "Debian's python3 through ctypes: syncs, launches, a generator, a thread, a recursion cut at 64 frames, each with its file:line:function; analyze, stats, Perfetto, diff and the report name the line; a native thread gets the main thread's frames; a hostile file name stays text"
add_case t_sites "a hot call's site is its whole stack: two kernels through the same native wrappers from two functions, one Python helper called from four lines (two through map, C between): each launch names its own function or line; site references after the first"
add_case t_python_pool_hot "a thread with a Python state of its own that runs no Python (autograd's): its launches name the waiting main thread's line, a Python hook on it its own line, then the main thread's again; site references after the first, none keyed by a walk"
add_case t_python_gpu "--cupti --stacks all from Python: stats' cuda_gpu_site_sum puts the GPU time of every kernel at the line that launched it"
add_case t_python_graph "a CUDA graph captured from known Python lines and replayed: every replayed kernel traced back to its capturing launch (node, entry, thread, stack), its GPU time at the capture's lines; a CUPTI without graph callbacks: said once, none traced back"
add_case t_python_exec "a Python process that execs another interpreter (same pid, same main thread): each image's launches carry its own lines"
add_case t_python_versions "the other CPython versions on the machine (3.10, 3.12, 3.13) alike; a runtime of 3.9: native stacks, said once"
run_cases "$@"
