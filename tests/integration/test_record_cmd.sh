#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf -- CMD: traces the workload it starts, against the mock libcuda
# given with --libcuda; every number is derived from the workload's options
# and cross-checked with the counts the workload reports itself.
REQUIRES="root jq mock gtrace"
# --all only in a command line that is refused
SHARED_CASES="t_delay"
. "$(dirname "$0")/lib.sh"

N=100 M=10 K=5
SYNC_US=20000
SYNC_NS=$((SYNC_US * 1000))
SLACK_NS=500000000	# a sync may take this much longer than the mock's sleep
IS_SYNC='(.api == "cuStreamSynchronize" or .api == "cuEventSynchronize" or .api == "cuCtxSynchronize")'

# Records `cuda_workload ARGS` into a new file (with the recorder options in
# REC_OPTS) and dumps it into $T/a.json; sets WJ (the workload's JSON line)
# and WL_PID.
REC=0
record_workload() {
	REC=$((REC + 1))
	rm -f "$T/a.json"
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=$SYNC_US \
		"$GTRACE" --libcuda "$MOCK_LIB" ${REC_OPTS:-} -o "$T/rec$REC.gtrace" -- "$WORKLOAD" "$@" \
		> "$T/cmd.out" 2> "$T/cmd.err"
	RC=$?
	log "gtrace-bpf -- cuda_workload $* exited with $RC"
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf -- cuda_workload $* exited with status $RC (the workload's is 0); stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	grep -q '^gtrace-bpf: recording' "$T/cmd.err" || err "no 'gtrace-bpf: recording' line on stderr"
	WJ=$(grep '^{' "$T/cmd.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no JSON line; stdout: $(head -c 300 "$T/cmd.out")"
	WL_PID=$(jq -r .pid <<< "$WJ")
	# NO_DUMP=1: a case that reads only stderr and the summary
	[ -n "${NO_DUMP:-}" ] || dump_trace "$T/rec$REC.gtrace" "$T/a.json"
}

t_counts() {
	local want got
	record_workload --launches $N --copies $M --syncs $K
	want=$(expected_counts $N $M $K)
	compare_counts "the workload's own counts (its JSON) vs the expected ones" "$(wl_counts "$WJ")" "$want"
	got=$(counts_of "$T/a.json" "$WL_PID")
	compare_counts "calls per api in the dump (pid $WL_PID) vs expected" "$got" "$want"
	check_clean "pid $WL_PID" "$T/a.json" "$WL_PID"
	jq -e '.launches == {"vecAdd": 25, "scale": 25, "fill_ex": 25, "fill": 25}' <<< "$WJ" > /dev/null ||
		err "the workload's launch split is $(jq -c .launches <<< "$WJ"), expected 25 of each"
}

t_launches() {
	record_workload --launches $N --copies $M --syncs $K
	check_launches "launches (api kernel [mangled] grid block shmem stream func)" "$T/a.json" "$WL_PID" "$WJ" $N
	# The uneven split: 4q+3 launches.
	record_workload --launches 7 --copies 2 --syncs 1
	compare_counts "calls per api with --launches 7" "$(counts_of "$T/a.json" "$WL_PID")" "$(expected_counts 7 2 1)"
	check_launches "launches with --launches 7" "$T/a.json" "$WL_PID" "$WJ" 7
}

t_memory() {
	local want
	record_workload --launches $N --copies $M --syncs $K
	want=$(jq -c -n --argjson w "$WJ" --argjson b $BUF_BYTES --argjson m $M '
	  $w.handles as $h |
	  { "cuMemcpyHtoD_v2 HtoD bytes=\($b) dst=\($h.dptr[0]) src=\($h.host)": (($m + 1) / 2 | floor),
	    "cuMemcpyHtoD_v2 HtoD bytes=\($b) dst=\($h.dptr[1]) src=\($h.host)": ($m / 2 | floor),
	    "cuMemcpyDtoHAsync_v2 DtoH bytes=\($b) dst=\($h.host) src=\($h.dptr[2]) stream=\($h.streams[0])": 1 }')
	sig_check "copies (api kind bytes dst src [stream])" "$T/a.json" "$WL_PID" '.type == "memcpy"' \
		'"\(.api) \(.kind) bytes=\(.bytes) dst=\(.dst | num) src=\(.src | num)" + (if .api | test("Async") then " stream=\(.stream | num)" else "" end)' \
		"$want"
	want=$(jq -c -n --argjson w "$WJ" --argjson b $((BUF_BYTES / 2)) \
		'{ "cuMemsetD32_v2 bytes=\($b) dst=\($w.handles.dptr[2])": 1 }')
	sig_check "sets (api bytes dst)" "$T/a.json" "$WL_PID" '.type == "memset"' \
		'"\(.api) bytes=\(.bytes) dst=\(.dst | num)"' "$want"
	want=$(jq -c -n --argjson w "$WJ" --argjson b $BUF_BYTES '
	  $w.handles as $h |
	  ([ $h.dptr[] | { key: "cuMemAlloc_v2 bytes=\($b) ptr=\(.)", value: 1 } ] | from_entries)
	  + { "cuMemAllocHost_v2 bytes=\($b) ptr=\($h.host)": 1 }')
	sig_check "allocations (api bytes returned-ptr; the pointers the workload got)" "$T/a.json" "$WL_PID" \
		'.type == "alloc"' '"\(.api) bytes=\(.bytes) ptr=\(.ptr | num)"' "$want"
	want=$(jq -c -n --argjson w "$WJ" '
	  $w.handles as $h |
	  ([ $h.dptr[] | { key: "cuMemFree_v2 ptr=\(.)", value: 1 } ] | from_entries)
	  + { "cuMemFreeHost ptr=\($h.host)": 1 }')
	sig_check "frees (api ptr: the pointers allocated)" "$T/a.json" "$WL_PID" '.type == "free"' \
		'"\(.api) ptr=\(.ptr | num)"' "$want"
	# the same, from the dump alone: every allocated pointer is non-zero and freed once
	local d
	d=$(jq -s -r --argjson pid "$WL_PID" "$JQ_DEFS
		[calls(\$pid) | select(.type == \"alloc\") | .ptr | num] as \$a
		| [calls(\$pid) | select(.type == \"free\") | .ptr | num] as \$f
		| if (\$a | map(select(. <= 0)) | length) > 0 then \"allocations with a zero or missing ptr: \(\$a)\"
		  elif (\$a | sort) != (\$f | sort) then \"allocated \(\$a | sort) but freed \(\$f | sort)\"
		  else empty end" "$T/a.json")
	[ -z "$d" ] || err "$d"
}

t_syncs() {
	local d
	record_workload --launches $N --copies $M --syncs $K
	sig_check "synchronizing calls (api type)" "$T/a.json" "$WL_PID" "$IS_SYNC" '"\(.api) \(.type)"' \
		"{\"cuStreamSynchronize sync\":$K,\"cuEventSynchronize sync\":1,\"cuCtxSynchronize sync\":1}"
	d=$(jq -s -r --argjson pid "$WL_PID" --argjson lo $SYNC_NS --argjson hi $((SYNC_NS + SLACK_NS)) "$JQ_DEFS
		[calls(\$pid) | select($IS_SYNC) | select((.dur | type) != \"number\" or .dur < \$lo or .dur >= \$hi)
		 | \"  \(.api) dur=\(.dur) ns\"] | join(\"\n\")" "$T/a.json")
	[ -z "$d" ] || err "sync durations outside [$SYNC_NS, $((SYNC_NS + SLACK_NS))) ns (the mock sleeps ${SYNC_US} us):
$d"
	sig_check "cuStreamSynchronize streams" "$T/a.json" "$WL_PID" '.api == "cuStreamSynchronize"' \
		'"stream=\(.stream | num)"' "{\"stream=$(jq .handles.streams[0] <<< "$WJ")\":$K}"
	sig_check "cuEventSynchronize events" "$T/a.json" "$WL_PID" '.api == "cuEventSynchronize"' \
		'"event=\(.event | num)"' "{\"event=$(jq .handles.event <<< "$WJ")\":1}"
}

t_names() {
	local d
	record_workload --launches $N --copies $M --syncs $K
	sig_check "demangled kernel names per launch api" "$T/a.json" "$WL_PID" '.type == "launch"' \
		'"\(.api): \(.kernel)"' \
		"$(jq -n -c --arg v "$K_VECADD" --arg s "$K_SCALE" --arg f "$K_FILL" \
			'{"cuLaunchKernel: \($v)": 25, "cuLaunchKernel_ptsz: \($s)": 25, "cuLaunchKernelEx: \($f)": 25, "cuLaunchKernel: \($f)": 25}')"
	# the naming calls carry the looked-up name (mangled, or demangled)
	d=$(jq -s -r --argjson pid "$WL_PID" --arg mv "$M_VECADD" --arg ms "$M_SCALE" --arg mf "$M_FILL" \
		--arg kv "$K_VECADD" --arg ks "$K_SCALE" --arg kf "$K_FILL" "$JQ_DEFS
		[calls(\$pid) | select(.api == \"cuModuleGetFunction\" or .api == \"cuLibraryGetKernel\") | .name] as \$n
		| if (\$n | length) != 3 then \"naming calls: \(\$n | length), expected 3\"
		  elif ([\$n[] | select(. == \$mv or . == \$kv)] | length) != 1
		    or ([\$n[] | select(. == \$ms or . == \$ks)] | length) != 1
		    or ([\$n[] | select(. == \$mf or . == \$kf)] | length) != 1
		  then \"names of cuModuleGetFunction/cuLibraryGetKernel: \(\$n), expected the three kernels\"
		  else empty end" "$T/a.json")
	[ -z "$d" ] || err "$d"
	d=$(jq -s -r --argjson pid "$WL_PID" "$JQ_DEFS
		[calls(\$pid) | select(.type == \"launch\" and (.kernel | tostring | startswith(\"unknown_kernel_\")))] | length
		| if . > 0 then \"\(.) launches have a placeholder name\" else empty end" "$T/a.json")
	[ -z "$d" ] || err "$d"
}

# The kernel lookups (cuKernelGetFunction, one before every fill launch as
# the CUDA runtime makes them) are recorded until the names of 3 launched
# kernels read from the driver's structures matched the looked-up ones, and
# not after their probes are gone: the workload pauses after launch 20 until
# the recorder says so; --keep-lookups records every one.
t_lookups() {
	local out=$T/lk.out errf=$T/lk.err pid rc got made before d
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -v -o "$T/lk.gtrace" -- "$WORKLOAD" \
		--launches 40 --syncs 1 --lookup-each --pause-at 20 > "$out" 2> "$errf" &
	pid=$!
	PIDS+=("$pid")
	wait_line "$out" '^paused [0-9]+$' 30 "$pid" ||
		fatal "the workload did not pause; stderr: $(tail -n 3 "$errf" | tr '\n' '|')"
	# a paused workload must not outlive a failure of the case
	PIDS+=("$(awk '/^paused/ { print $2 }' "$out")")
	wait_line "$errf" 'kernel lookups no longer recorded' 30 "$pid" ||
		fatal "the recorder did not drop the kernel lookups while the workload waited; stderr: $(tail -n 5 "$errf" | tr '\n' '|')"
	kill -USR1 "$(awk '/^paused/ { print $2 }' "$out")"
	wait_exit "$pid" 60 || fatal "gtrace-bpf -- cuda_workload still running 60 s after the signal"
	rc=$WAIT_RC
	[ "$rc" -eq 0 ] || fatal "gtrace-bpf exited $rc; stderr: $(tail -n 3 "$errf" | tr '\n' '|')"
	WJ=$(grep '^{' "$out" | tail -n 1)
	WL_PID=$(jq -r .pid <<< "$WJ")
	made=$(jq '.calls.cuKernelGetFunction' <<< "$WJ")
	before=$((made - $(jq '.calls_after_ready.cuKernelGetFunction // 0' <<< "$WJ")))
	[ "$made" -eq 21 ] && [ "$before" -eq 11 ] ||
		fatal "the workload made $made lookups, $before before its pause: expected 21 and 11"
	dump_trace "$T/lk.gtrace" "$T/lk.json"
	got=$(jq -s --argjson p "$WL_PID" '[.[] | select(.pid == $p and .api == "cuKernelGetFunction" and .type != "stack")] | length' "$T/lk.json")
	log "lookups: $got of $made recorded ($before made before the pause)"
	[ "$got" -ge 1 ] && [ "$got" -le "$before" ] ||
		err "$got of the $made kernel lookups recorded: expected 1 to $before (none after the probes came off)"
	d=$(jq -s -r '[.[] | select(.type == "capture" and .kind == "lookups_off")]
		| if length != 1 then "\(length) lookups_off records, expected 1"
		  elif .[0].index < 3 then "lookups_off after \(.[0].index) names checked, expected 3 or more"
		  else empty end' "$T/lk.json")
	[ -z "$d" ] || err "$d"
	# every launch still named, the later ones from the driver's structures
	sig_check "kernel names with the lookups dropped" "$T/lk.json" "$WL_PID" '.type == "launch"' '.kernel' \
		"$(jq -n -c --arg v "$K_VECADD" --arg s "$K_SCALE" --arg f "$K_FILL" '{($v): 10, ($s): 10, ($f): 20}')"
	"$GTRACE" dump --summary "$T/lk.gtrace" > "$T/lk.sum" 2>&1 || err "dump --summary failed"
	grep -q '^cuKernelGetFunction +' "$T/lk.sum" && grep -q '^+ kernel lookups (cuKernelGetFunction) recorded only until' "$T/lk.sum" ||
		err "dump --summary does not mark cuKernelGetFunction and say why: $(grep -i lookup "$T/lk.sum" | tr '\n' '|')"
	"$GTRACE" stats -r cuda_api_sum "$T/lk.gtrace" > "$T/lk.stats" 2>&1 || err "stats failed"
	grep -q 'kernel lookups (cuKernelGetFunction) recorded only until' "$T/lk.stats" ||
		err "stats cuda_api_sum does not say the lookups were dropped"
	"$GTRACE" stats -r cuda_api_sum --format json "$T/lk.gtrace" 2> /dev/null |
		jq -e '.lookups_note | test("recorded only until")' > /dev/null ||
		err "stats --format json has no lookups_note"
	# --keep-lookups: all 21
	REC_OPTS=--keep-lookups record_workload --launches 40 --syncs 1 --lookup-each
	got=$(jq -s --argjson p "$WL_PID" '[.[] | select(.pid == $p and .api == "cuKernelGetFunction" and .type != "stack")] | length' "$T/a.json")
	[ "$got" -eq 21 ] || err "--keep-lookups: $got of 21 kernel lookups recorded"
	[ "$(jq -s '[.[] | select(.kind == "lookups_off")] | length' "$T/a.json")" -eq 0 ] ||
		err "--keep-lookups: the trace has a lookups_off record"
}

t_exit_status() {
	local rc
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/b.gtrace" -- "$WORKLOAD" --threads 0 \
		> "$T/b.out" 2> "$T/b.err"
	rc=$?
	[ $rc -eq 2 ] || err "tracing a workload that exits 2 (bad option): gtrace-bpf exited $rc, expected 2; stderr: $(tail -n 3 "$T/b.err" | tr '\n' '|')"
	GT_LIBCUDA=/nonexistent/libcuda.so.1 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/c.gtrace" -- "$WORKLOAD" \
		> "$T/c.out" 2> "$T/c.err"
	rc=$?
	[ $rc -eq 1 ] || err "tracing a workload that exits 1 (no libcuda): gtrace-bpf exited $rc, expected 1; stderr: $(tail -n 3 "$T/c.err" | tr '\n' '|')"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/d.gtrace" -- "$WORKLOAD" --launches 4 --syncs 1 \
		> "$T/d.out" 2> "$T/d.err"
	rc=$?
	[ $rc -eq 0 ] || err "tracing a workload that exits 0: gtrace-bpf exited $rc; stderr: $(tail -n 3 "$T/d.err" | tr '\n' '|')"
	[ -s "$T/b.gtrace" ] && [ -s "$T/d.gtrace" ] || err "a trace file is missing or empty after -- CMD ran"
}

t_fail() {
	local d
	record_workload --launches 4 --copies 1 --syncs 1 --fail
	compare_counts "the workload's own counts with --fail" "$(wl_counts "$WJ")" "$(expected_counts 4 1 1 1)"
	compare_counts "calls per api with --fail" "$(counts_of "$T/a.json" "$WL_PID")" "$(expected_counts 4 1 1 1)"
	jq -e '.failed == {"cuMemAlloc_v2": 1}' <<< "$WJ" > /dev/null ||
		err "the workload reports failed calls $(jq -c .failed <<< "$WJ"), expected one cuMemAlloc_v2"
	sig_check "cuMemAlloc_v2 calls (bytes ret failed)" "$T/a.json" "$WL_PID" '.api == "cuMemAlloc_v2"' \
		'"bytes=\(.bytes) ret=\(.ret) failed=\(.failed)"' \
		"{\"bytes=$BUF_BYTES ret=0 failed=false\":3,\"bytes=0 ret=1 failed=true\":1}"
	check_clean "pid $WL_PID" "$T/a.json" "$WL_PID" cuMemAlloc_v2
}

t_threads() {
	local d
	record_workload --launches 20 --copies 2 --syncs 1 --threads 3
	compare_counts "calls per api with --threads 3" "$(counts_of "$T/a.json" "$WL_PID")" "$(expected_counts 20 2 1 0 3)"
	compare_counts "the workload's own counts with --threads 3" "$(wl_counts "$WJ")" "$(expected_counts 20 2 1 0 3)"
	# each launch thread: its own tid (not the main thread's), its own stream, 20 launches
	d=$(jq -s -r --argjson pid "$WL_PID" --argjson w "$WJ" "$JQ_DEFS
		[calls(\$pid) | select(.type == \"launch\")] | group_by(.tid)
		| map({tid: .[0].tid, n: length, streams: (map(.stream | num) | unique)}) as \$g
		| if (\$g | length) != 3 then \"launches came from \(\$g | length) threads, expected 3: \(\$g)\"
		  elif (\$g | map(select(.tid == \$pid)) | length) > 0 then \"launches on the main thread: \(\$g)\"
		  elif (\$g | map(select(.n != 20 or (.streams | length) != 1)) | length) > 0
		    then \"each thread should make 20 launches on one stream: \(\$g)\"
		  elif (\$g | map(.streams[0]) | sort) != (\$w.handles.streams | sort)
		    then \"launch streams \(\$g | map(.streams[0])), the workload created \(\$w.handles.streams)\"
		  else empty end" "$T/a.json")
	[ -z "$d" ] || err "$d"
}

# As many launches as one thread can make in 2 s: every one is in the trace,
# or the loss is counted and reported (never silent).
t_flood() {
	local got want drops
	# the counts from the summary: the JSON dump of millions of launches
	# took jq tens of seconds to read
	NO_DUMP=1 record_workload --flood 2 --copies 1 --syncs 1
	want=$(wl_counts "$WJ")
	log "flood: $(jq -c .launches <<< "$WJ")"
	"$GTRACE" dump --summary "$T/rec$REC.gtrace" > "$T/summary" 2>&1 || fatal "dump --summary failed: $(head -n 3 "$T/summary" | tr '\n' '|')"
	got=$(summary_counts "$T/summary")
	drops=$(awk '$1 ~ /^drop_/ { s += $2 } END { print s + 0 }' "$T/summary")
	log "drop counters: $drops; recorder: $(grep -i drop "$T/cmd.err" | tail -n 1)"
	if [ "$drops" -eq 0 ]; then
		compare_counts "calls per api in a 2 s launch flood (no drops reported)" "$got" "$want"
	else
		err "the recorder dropped $drops records in a 2 s flood of one thread (reported, so not silent)"
		grep -qi 'drop' "$T/cmd.err" || err "the recorder dropped $drops records but said nothing about it on stderr"
	fi
	jq -e '(.launches | .vecAdd + .scale + .fill_ex + .fill) > 1000' <<< "$WJ" > /dev/null ||
		err "the flood made only $(jq -c .launches <<< "$WJ") launches"
}

# Launches are recorded at entry only by default: one record each, no
# duration or result, not incomplete; --launch-exit adds their exits.
t_launch_exit() {
	local d n
	record_workload --launches $N --copies 2 --syncs 1
	"$GTRACE" dump --summary "$T/rec$REC.gtrace" > "$T/summary" || err "dump --summary failed"
	grep -q 'launch_exit=0' "$T/summary" || err "the default recording's header lacks launch_exit=0"
	d=$(jq -s -r --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "launch")] as $l
		| if ($l | length) != '$N' then "\($l | length) launches, expected '$N'"
		  else [ $l[] | select(has("dur") or has("ret") or has("failed") or has("incomplete"))
		         | "launch with exit fields by default: \(tojson)" ] | .[:3] | join("\n") end' "$T/a.json")
	[ -z "$d" ] || err "$d"
	n=$(awk '$1 == "incomplete" { print $2 }' "$T/summary")
	[ "$n" = 0 ] || err "dump --summary: $n incomplete calls in the default recording, expected 0"
	grep -Eq '^cuLaunchKernel +[0-9]+ +- +0 +-$' "$T/summary" ||
		err "dump --summary: the cuLaunchKernel row of the default recording is not 'N - 0 -': $(grep '^cuLaunchKernel ' "$T/summary")"
	REC_OPTS=--launch-exit record_workload --launches $N --copies 2 --syncs 1
	"$GTRACE" dump --summary "$T/rec$REC.gtrace" > "$T/summary" || err "dump --summary failed"
	grep -q 'launch_exit=1' "$T/summary" || err "the --launch-exit recording's header lacks launch_exit=1"
	d=$(jq -s -r --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "launch")] as $l
		| if ($l | length) != '$N' then "\($l | length) launches with --launch-exit, expected '$N'"
		  else [ $l[] | select(.ret != 0 or .failed != false or (.dur | type) != "number" or .dur <= 0)
		         | "launch without its exit under --launch-exit: \(tojson)" ] | .[:3] | join("\n") end' "$T/a.json")
	[ -z "$d" ] || err "$d"
	check_clean "pid $WL_PID (--launch-exit)" "$T/a.json" "$WL_PID"
}

# A first Ctrl-C leaves CMD to finish; a second must not leave it running,
# orphaned, while the recorder exits 0 as if it had finished.
t_second_interrupt() {
	local child
	start_tracer --libcuda "$MOCK_LIB" -o "$T/int.gtrace" -- sleep 60
	child=$(tracer_child sleep)
	[ -n "$child" ] || fatal "no sleep process under the recorder (pid $TRACER_PID) 10 s after it said 'recording'"
	kill -INT "$TRACER_PID"
	wait_line "$T/tracer.err" 'waiting for sleep' 10 "$TRACER_PID" ||
		fatal "no 'waiting for sleep' line after the first SIGINT; stderr: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	kill -INT "$TRACER_PID"
	wait_exit "$TRACER_PID" 10 || fatal "gtrace-bpf still running 10 s after a second SIGINT"
	[ "$WAIT_RC" -ne 0 ] || err "gtrace-bpf exited 0 after a second SIGINT although sleep 60 never finished"
	sleep 0.2
	if kill -0 "$child" 2>/dev/null; then
		kill -KILL "$child"
		err "the command (pid $child) still runs after the recorder exited"
	fi
	grep -q 'killed sleep' "$T/tracer.err" ||
		err "no line saying the command was killed; stderr: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	"$GTRACE" dump --summary "$T/int.gtrace" > /dev/null 2>&1 || err "the trace is not readable after the second SIGINT"
}

# A program that dlopens a libcuda nobody has mapped (a container's or a
# wheel's copy): traced through the openat discovery, as --all traces it;
# CMD is held at the open until the copy's probes are attached.
t_late_libcuda() {
	local rc
	mkdir "$T/wheel"
	cp "$MOCK_LIB" "$T/wheel/libcuda.so.1"
	GT_LIBCUDA=$T/wheel/libcuda.so.1 "$GTRACE" -o "$T/late.gtrace" -- \
		"$WORKLOAD" --launches 8 --copies 2 --syncs 1 > "$T/late.out" 2> "$T/late.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -- CMD (libcuda dlopened from $T/wheel) exited $rc; stderr: $(tail -n 3 "$T/late.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/late.out" | tail -n 1)
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/late.gtrace" "$T/late.json"
	# CMD is held at its open of the copy until the probes are in place:
	# cuInit, right after the dlopen, too
	compare_counts "calls through a libcuda found when CMD opened it" \
		"$(counts_of "$T/late.json" "$WL_PID")" "$(expected_counts 8 2 1)"

	# A command that never loads one: said at its end, its own status.
	"$GTRACE" -o "$T/none.gtrace" -- true > /dev/null 2> "$T/none.err"
	rc=$?
	if ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/lib/libcuda.so.1 \
		/usr/local/nvidia/lib64/libcuda.so.1 /usr/local/nvidia/lib/libcuda.so.1 \
		/usr/lib/wsl/lib/libcuda.so.1 > /dev/null 2>&1; then
		[ $rc -eq 0 ] || err "-- true with the driver's libcuda installed exited $rc; stderr: $(tail -n 3 "$T/none.err" | tr '\n' '|')"
	else
		[ $rc -eq 0 ] || err "-- true, which never loads a libcuda, exited $rc (expected its own 0)"
		grep -q 'true never loaded a libcuda' "$T/none.err" ||
			err "no line saying the command never loaded a libcuda; stderr: $(tail -n 3 "$T/none.err" | tr '\n' '|')"
	fi
}

# A 4K ring buffer overflows in a launch flood: the warnings while recording
# name the option to raise once, not every second, and the summary again.
t_drop_hint() {
	local live
	NO_DUMP=1 REC_OPTS="--buffer-size 4K -t cuda" record_workload --flood 3 --copies 1 --syncs 1
	grep -q 'events lost: ring buffer full' "$T/cmd.err" ||
		fatal "a 3 s flood into a 4K buffer lost nothing (or said nothing); stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	live=$(grep 'events lost: ring buffer full' "$T/cmd.err" | grep -c -- '--buffer-size')
	[ "$live" -eq 1 ] || err "the drop warnings while recording name --buffer-size $live times, expected once: $(grep 'events lost' "$T/cmd.err" | head -n 4 | tr '\n' '|')"
	grep -q 'events were lost to a full ring buffer; raise --buffer-size' "$T/cmd.err" ||
		err "the final summary does not name --buffer-size; stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
}

# -y/--delay: CMD starts at once and runs untraced until the probes attach;
# only what it does after that is recorded. A delay that leaves nothing of
# -d, or a malformed one, is a bad command line.
t_delay() {
	local gp wp rc
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" -y 1500ms --libcuda "$MOCK_LIB" -o "$T/delay.gtrace" -- \
		"$WORKLOAD" --wait-signal --launches 8 --copies 2 --syncs 1 > "$T/w.out" 2> "$T/w.err" &
	gp=$!
	wait_line "$T/w.out" '^ready ' 20 || fatal "the workload never got ready under --delay; stderr: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	wp=$(awk '/^ready / { print $2; exit }' "$T/w.out")
	grep -q '^gtrace-bpf: recording' "$T/w.err" && err "recording started before the delay ran out (the workload was ready first)"
	wait_line "$T/w.err" '^gtrace-bpf: recording' 20 || fatal "no recording line after the delay"
	kill -USR1 "$wp"
	wait "$gp"; rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -y 1500ms -- workload exited $rc; stderr: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	dump_trace "$T/delay.gtrace" "$T/delay.json"
	compare_counts "calls recorded with --delay (only those after the signal)" \
		"$(counts_of "$T/delay.json" "$wp")" "$(expected_counts 8 2 1 0 1 1)"
	"$GTRACE" dump --summary "$T/delay.gtrace" | grep -q 'delay=1.5' ||
		err "dump --summary does not show delay=1.5"
	for bad in "-y 5s -d 5s" "-y 10s -d 2s" "--delay 3x" "--delay=" "-y -1s"; do
		"$GTRACE" $bad --libcuda "$MOCK_LIB" -o "$T/bad.gtrace" -- "$WORKLOAD" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "'$bad' exited $rc, expected 2: $(head -n 2 "$T/bad.err" | tr '\n' '|')"
		[ ! -e "$T/bad.gtrace" ] || err "'$bad' wrote a trace"
	done
	[ "$(grep -c . <<< "$("$GTRACE" -y 5s -d 5s --all 2>&1)")" -eq 1 ] || err "-y 5s -d 5s: not one line"
}

add_case t_late_libcuda "-- CMD: a libcuda the command dlopens from its own copy is found and traced, every call; none at all is an error at its end"
add_case t_second_interrupt "-- CMD: a second SIGINT kills and reaps CMD and exits non-zero"

# A process whose main thread ends first (pthread_exit) and whose other thread
# launches after that: the process ends with its last thread. One exit record,
# after every call of the worker, with the worker's status and the process'
# name; the worker's launches keep their kernel names and device (the end of
# a process is when the readers let its kernels and devices go).
t_leader_exit() {
	local rc pid wtid got
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/le.gtrace" -- "$MOCK_DIR/leader_exit" 20 \
		> "$T/le.out" 2> "$T/le.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -- leader_exit exited $rc; stderr: $(tail -n 3 "$T/le.err" | tr '\n' '|')"
	jq -e '.launches == 20 and .failed == 0' "$T/le.out" > /dev/null || fatal "leader_exit printed: $(cat "$T/le.out")"
	pid=$(jq .pid "$T/le.out") wtid=$(jq .worker_tid "$T/le.out")
	dump_trace "$T/le.gtrace" "$T/le.json"
	got=$(jq -s -c --argjson p "$pid" '[.[] | select(.pid == $p and .type == "process" and .event == "exit")]
		| map({tid, exit_code, comm})' "$T/le.json")
	[ "$got" = "[{\"tid\":$wtid,\"exit_code\":0,\"comm\":\"leader_exit\"}]" ] ||
		err "exit records of the process: $got, expected one by its last thread $wtid, status 0, named leader_exit"
	got=$(jq -s -c --argjson p "$pid" '
		([.[] | select(.pid == $p and .type == "process" and .event == "exit") | .ts] | min) as $x
		| [.[] | select(.pid == $p and .api != null and .ts > $x) | .api]' "$T/le.json")
	[ "$got" = "[]" ] || err "calls recorded after the process' exit record: $got"
	got=$(jq -s -c --argjson p "$pid" --argjson w "$wtid" '[.[] | select(.pid == $p and .type == "launch")]
		| {n: length, worker: map(select(.tid == $w)) | length, named: map(select(.kernel == "vecAdd")) | length,
		   device: map(select(.device == 0)) | length}' "$T/le.json")
	[ "$got" = '{"n":20,"worker":20,"named":20,"device":20}' ] ||
		err "the worker's launches after the main thread ended: $got, expected 20 by $wtid, each vecAdd on device 0"
	# an exec from another thread than the main one ends the main thread, not
	# the process: one exit, with the new program's status
	"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/ex.gtrace" -- python3 -c '
import os, sys, threading
print(os.getpid(), flush=True)
threading.Thread(target=lambda: os.execv("/bin/sh", ["sh", "-c", "exit 3"])).start()
threading.Event().wait(60)' > "$T/ex.out" 2> "$T/ex.err"
	rc=$?
	[ $rc -eq 3 ] || fatal "gtrace-bpf -- python3 (exec from a thread, sh exit 3) exited $rc; stderr: $(tail -n 3 "$T/ex.err" | tr '\n' '|')"
	pid=$(head -n 1 "$T/ex.out")
	dump_trace "$T/ex.gtrace" "$T/ex.json"
	got=$(jq -s -c --argjson p "$pid" '[.[] | select(.pid == $p and .type == "process" and (.event == "exit" or .event == "exec"))
		| [.event, .comm] + (if .event == "exit" then [.exit_code] else [] end)] | .[-2:]' "$T/ex.json")
	[ "$got" = '[["exec","sh"],["exit","sh",768]]' ] ||
		err "the last exec and exit records of a process that exec'd from a thread: $got, expected sh's exec, then one exit with status 3 << 8"
	got=$(jq -s --argjson p "$pid" '[.[] | select(.pid == $p and .type == "process" and .event == "exit")] | length' "$T/ex.json")
	[ "$got" = 1 ] || err "exit records of a process that exec'd from a thread: $got, expected 1"
}
add_case t_leader_exit "-- CMD: a main thread that ends first: the process' exit comes with its last thread, after the other thread's launches, their names and devices kept; an exec from a thread ends no process"
# --max-size: the recording stops once the file holds the size (plus the chunk
# that crossed it); CMD runs on untraced to its end and its status is ours.
# What a user of nsys expects: -o NAME writes NAME.gtrace (a name there
# already is taken as it is), --stats prints stats' reports after CMD's
# output with CMD's status (--stats=LIST others; a report not known: one
# line with the name meant, status 2, nothing run), -t cuda,nvtx turns the
# agent on and says so.
t_nsys_habits() {
	local rc got
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/run" --stats -- "$WORKLOAD" --launches 8 --syncs 2 \
		> "$T/s.out" 2> "$T/s.err"
	rc=$?
	[ $rc -eq 0 ] || err "--stats: status $rc; stderr: $(tail -n 3 "$T/s.err" | tr '\n' '|')"
	[ -s "$T/run.gtrace" ] && [ ! -e "$T/run" ] || err "-o run: wrote $(ls "$T" | grep '^run' | tr '\n' ' '), expected run.gtrace"
	grep -q "wrote $T/run.gtrace" "$T/s.err" || err "the closing line does not name run.gtrace: $(grep wrote "$T/s.err")"
	# the reports after the workload's own output (its JSON line), each title
	# once, the launches counted as the workload made them
	got=$(grep -n -E '^\{|\*\* .*\((cuda_api_sum|cuda_gpu_kern_sum|cuda_launch_sum|cuda_sync_sum|cuda_mem_size_sum)\)' "$T/s.out" | cut -d: -f1 | tr '\n' ' ')
	[ "$(wc -w <<< "$got")" -eq 6 ] && [ "$(grep -n '^{' "$T/s.out" | tail -n 1 | cut -d: -f1)" = "${got%% *}" ] ||
		err "--stats: the workload's line and five reports in that order expected, lines: $got"
	"$GTRACE" stats -r cuda_launch_sum "$T/run.gtrace" > "$T/want" 2> /dev/null
	grep -qF -- "$(sed -n '/cuda_launch_sum/,/^$/p' "$T/want" | sed -n 5p)" "$T/s.out" ||
		err "--stats: the launch report differs from stats': $(sed -n '/cuda_launch_sum/,/^$/p' "$T/s.out" | head -n 6 | tr '\n' '|')"
	# another list, and the command's status through
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/run2.gtrace" --stats=cuda_sync_sum -- "$WORKLOAD" --threads 0 \
		> "$T/s2.out" 2> "$T/s2.err"
	rc=$?
	[ $rc -eq 2 ] || err "--stats with a workload that exits 2: status $rc"
	# a name that is there is taken as it is (and refused without --force)
	: > "$T/there"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/there" -- "$WORKLOAD" --launches 2 > /dev/null 2> "$T/t.err"
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$T/there.gtrace" ] && grep -q "$T/there" "$T/t.err" ||
		err "-o of a file there: status $rc, $(ls "$T" | grep '^there' | tr '\n' ' '): $(head -n 2 "$T/t.err" | tr '\n' '|')"
	# a report not known: the one meant, status 2, the command not run
	"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/run3.gtrace" --stats=cuda_api_summ -- "$WORKLOAD" --launches 2 > "$T/u.out" 2> "$T/u.err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l < "$T/u.err")" -eq 1 ] && grep -q "did you mean cuda_api_sum?" "$T/u.err" &&
		[ ! -e "$T/run3.gtrace" ] && ! grep -q '^{' "$T/u.out" ||
		err "--stats=cuda_api_summ: status $rc, stderr $(head -n 3 "$T/u.err" | tr '\n' '|')"
	# -t nvtx: the agent records NVTX ranges, so it is on (the mock has none
	# injected here: the trace says so, status 1 as --cupti's)
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/n.gtrace" -t cuda,nvtx -- "$WORKLOAD" --launches 2 > /dev/null 2> "$T/n.err"
	grep -q -- "-t nvtx: NVTX ranges are recorded by the CUPTI agent, so --cupti is on" "$T/n.err" ||
		err "-t cuda,nvtx: $(head -n 3 "$T/n.err" | tr '\n' '|')"
	"$GTRACE" dump --summary "$T/n.gtrace" 2> /dev/null | grep -q 'cupti=' || err "-t cuda,nvtx: the header does not record the agent"
}

t_max_size() {
	local rc size launches got
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --max-size 64K -o "$T/m.gtrace" -- \
		sh -c "\"$WORKLOAD\" --flood 2 --copies 1 --syncs 1; exit 3" > "$T/m.out" 2> "$T/m.err"
	rc=$?
	[ "$rc" -eq 3 ] || err "--max-size 64K -- CMD exited $rc, expected CMD's 3; stderr: $(tail -n 3 "$T/m.err" | tr '\n' '|')"
	grep -q '^gtrace-bpf: the trace reached --max-size (65536 bytes); stopping' "$T/m.err" ||
		err "no line saying --max-size was reached: $(tr '\n' '|' < "$T/m.err")"
	grep -q 'runs on untraced until it exits' "$T/m.err" || err "no line saying CMD runs on untraced"
	size=$(stat -c %s "$T/m.gtrace")
	# at least the size, at most the size and one chunk (1 MiB before compression) more
	[ "$size" -ge 65536 ] && [ "$size" -le $((65536 + 1048576 + 4096)) ] ||
		err "trace of $size bytes with --max-size 64K"
	launches=$(grep '^{' "$T/m.out" | tail -n 1 | jq '[.calls | to_entries[] | select(.key | startswith("cuLaunch")) | .value] | add')
	dump_trace "$T/m.gtrace" "$T/m.json"
	got=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/m.json")
	log "max-size: $size bytes, $got of $launches launches recorded"
	[ "$got" -gt 0 ] && [ "$got" -lt "$launches" ] ||
		err "$got of the flood's $launches launches recorded: expected some, not all"
	"$GTRACE" dump --summary "$T/m.gtrace" | grep -q 'max_size=65536' || err "the header does not hold max_size=65536"
}

add_case t_nsys_habits "-o NAME adds .gtrace, --stats prints the reports after CMD with its status, --stats=bad refused, -t cuda,nvtx turns the agent on"
add_case t_counts "-- CMD: exact calls per api (100 launches, 10 copies, 5 syncs)"
add_case t_launches "-- CMD: grid, block, shmem, stream, function and names of every launch (100 and 7 launches)"
add_case t_memory "-- CMD: copy bytes/kind/pointers, memset, alloc pointers equal to the frees'"
add_case t_syncs "-- CMD: sync durations >= GT_MOCK_SYNC_US (20 ms) and their stream/event"
add_case t_names "-- CMD: demangled names of all three kernels (module, library+cuKernelGetFunction, Ex launch)"
add_case t_lookups "-- CMD: cuKernelGetFunction before every fill launch: recorded until 3 names are checked, none after its probes come off, every launch named; the notes in dump --summary and stats; --keep-lookups records all 21"
add_case t_exit_status "-- CMD: gtrace-bpf exits with the command's status (0, 1, 2)"
add_case t_fail "-- CMD: a failing call (cuMemAlloc_v2 of 0 bytes) is recorded with ret 1, failed true"
add_case t_launch_exit "-- CMD: launches at entry only by default (no dur/ret, not incomplete); --launch-exit: every one with ret 0 and dur > 0"
add_case t_flood "-- CMD: a 2 s launch flood is recorded completely (or its drops are reported)"
add_case t_drop_hint "-- CMD: drops to a full 4K buffer: --buffer-size named once while recording and in the summary (-t cuda)"
add_case t_delay "-- CMD -y 1500ms: CMD runs untraced during the delay, only later calls recorded; bad delays exit 2"
add_case t_max_size "-- CMD --max-size 64K: recording stops at the size, CMD runs on untraced, its status passed through"
add_case t_threads "-- CMD: 3 launch threads: per-thread tids, streams and counts"
run_cases "$@"
