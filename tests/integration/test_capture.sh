#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Capture control against the mock libcuda: -c cudaProfilerApi ranges with
# --capture-range-end stop and repeat (one process, and two under --all),
# light mode's windows checked launch by launch against the workload's own
# log of its launches, light mode with ranges, --delay/--duration bounds,
# and the bad command lines, each refused with one line before anything is
# attached.
REQUIRES="root jq mock gtrace"
# t_light counts its windows and t_delay_duration times its span against
# the wall clock: both assume the recorder's timers run on time.
QUIET_CASES="t_light t_delay_duration"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_refused t_all_two"
. "$(dirname "$0")/lib.sh"

# count_in JSON PID JQ-FILTER: how many records of PID match the filter.
count_in() {
	jq -s --argjson p "$2" "[.[] | select(.pid == \$p) | select($3)] | length" "$1"
}

# The capture records of a dump, one JSON array.
# (the kernel lookups' record, tested in test_record_cmd's t_lookups, aside: these cases are about ranges)
captures() {
	jq -s '[.[] | select(.type == "capture" and .kind != "lookups_off")]' "$1"
}

t_profiler_stop() {
	local rc r1 got opens gp i
	# CMD outlives the recording: after its workload it waits (30 s at
	# most) for the test to have read the line saying it runs on untraced
	# (a CMD that ended first would end the recording by itself: the
	# sanitized recorder once took longer than the workload's last ranges)
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -c cudaProfilerApi -o "$T/s.gtrace" -- \
		sh -c "\"$WORKLOAD\" --launches 50 --ranges 2 --gap 5 --copies 3; i=0
			while [ ! -e \"$T/go\" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done; exit 4" \
		> "$T/w.out" 2> "$T/w.err" &
	gp=$!
	PIDS+=("$gp")
	for ((i = 0; i < 600; i++)); do
		grep -q 'runs on untraced until it exits' "$T/w.err" && break
		kill -0 "$gp" 2> /dev/null || break
		nap 0.05
	done
	touch "$T/go"
	wait "$gp"
	rc=$?
	[ $rc -eq 4 ] || err "-c cudaProfilerApi -- CMD exited $rc, expected CMD's 4: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	grep -q 'stopping (--capture-range-end=stop)' "$T/w.err" || err "no line saying the first range's end stops the recording"
	grep -q 'runs on untraced until it exits' "$T/w.err" || err "no line saying CMD runs on untraced"
	r1=$(grep '^{' "$T/w.out" | tail -n 1 | jq '.range_launches[0]')
	dump_trace "$T/s.gtrace" "$T/s.json"
	got=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/s.json")
	[ "$got" -eq "$r1" ] || err "stop: $got launches recorded, expected the $r1 of the first range"
	# nothing outside the range: no copy, allocation or sync (they come before and after)
	got=$(jq -s '[.[] | select(.api != null and .type != "launch" and .type != "marker")] | length' "$T/s.json")
	[ "$got" -eq 0 ] || err "stop: $got calls outside the range recorded: $(jq -sc '[.[] | select(.api != null and .type != "launch" and .type != "marker") | .api] | unique' "$T/s.json")"
	got=$(jq -s '[.[] | select(.type == "marker")] | map(.api) | join(",")' "$T/s.json")
	[ "$got" = '"cuProfilerStart,cuProfilerStop"' ] || err "stop: markers $got, expected the first range's start and stop"
	# the second range's open, refused (beyond the count), is in the trace
	# when the driver made it before the recording stopped: 5 ms after the
	# first range's close here, a race that either way is right
	opens=$(captures "$T/s.json" | jq -c '[.[] | select((.flags // "" | index("refused")) == null) | [.kind, .index]]')
	[ "$opens" = '[["range_open",1],["range_close",1]]' ] || err "stop: capture records $opens"
	got=$(captures "$T/s.json" | jq -c '[.[] | select((.flags // "" | index("refused")) != null) | [.kind, .index]]')
	case $got in
	'[]' | '[["range_open",2]]') ;;
	*) err "stop: refused capture records $got, expected none or the second range's open" ;;
	esac
	"$GTRACE" dump --summary "$T/s.gtrace" | grep -q 'capture_range=cudaProfilerApi capture_range_end=stop' ||
		err "the header does not say capture_range=cudaProfilerApi capture_range_end=stop"
}

t_profiler_repeat() {
	local end want got wj kinds
	for end in repeat repeat:3 repeat:1; do
		GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -c cudaProfilerApi --capture-range-end=$end \
			-o "$T/$end.gtrace" -- "$WORKLOAD" --launches 70 --ranges 3 --gap 5 > "$T/w.out" 2> "$T/w.err" ||
			{ err "--capture-range-end=$end exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"; continue; }
		wj=$(grep '^{' "$T/w.out" | tail -n 1)
		case $end in
		repeat | repeat:3) want=$(jq '.range_launches | add' <<< "$wj"); kinds=3 ;;
		repeat:1) want=$(jq '.range_launches[0]' <<< "$wj"); kinds=1 ;;
		esac
		dump_trace "$T/$end.gtrace" "$T/$end.json"
		got=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/$end.json")
		[ "$got" -eq "$want" ] || err "$end: $got launches recorded, expected $want (ranges: $(jq -c .range_launches <<< "$wj"))"
		got=$(captures "$T/$end.json" | jq '[.[] | select(.kind == "range_close")] | length')
		[ "$got" -eq "$kinds" ] || err "$end: $got ranges closed, expected $kinds"
		# per range: the launches between its open and close are its own
		# (its two records by kind: other capture records carry an index
		# of their own, lookups_off the count of names it read)
		for i in $(seq 1 "$kinds"); do
			got=$(jq -s --argjson i "$i" '
				([.[] | select(.type == "capture" and .index == $i and
					(.kind == "range_open" or .kind == "range_close"))] | sort_by(.ts)) as $r
				| if ($r | length) != 2 then -1 else
					[.[] | select(.type == "launch" and .ts >= $r[0].ts and .ts <= $r[1].ts)] | length end' "$T/$end.json")
			want=$(jq --argjson i "$i" '.range_launches[$i - 1]' <<< "$wj")
			[ "$got" -ge 0 ] || { err "$end: range $i has not one open and one close"; continue; }
			[ "$got" -eq "$want" ] || err "$end: range $i holds $got launches, expected $want"
		done
	done
}

# stop under --all: a range that opens in a second process while the first
# one's is open is beyond the count: refused, counted, nothing of it written
t_refused() {
	local pa pb got
	start_tracer --all --libcuda "$MOCK_LIB" -c cudaProfilerApi -o "$T/rf.gtrace"
	start_workload a GT_LIBCUDA="$MOCK_LIB" -- --launches 9 --ranges 1 --hold 2500
	pa=$WPID
	sleep 0.8
	start_workload b GT_LIBCUDA="$MOCK_LIB" -- --launches 30 --ranges 1
	pb=$WPID
	wait_exit "$pb" 30 || err "the second workload did not finish"
	wait_exit "$TRACER_PID" 30 || fatal "the recording did not stop at the first range's end"
	TRACER_RC=$WAIT_RC
	[ "$TRACER_RC" -eq 0 ] || err "gtrace-bpf exited $TRACER_RC"
	wait_exit "$pa" 30 || err "the first workload did not finish"
	dump_trace "$T/rf.gtrace" "$T/rf.json"
	got=$(count_in "$T/rf.json" "$pa" '.type == "launch"')
	[ "$got" -eq 3 ] || err "the first process' range: $got launches recorded, expected 3"
	got=$(count_in "$T/rf.json" "$pb" '.api != null')
	[ "$got" -eq 0 ] || err "the refused range's process: $got calls recorded"
	got=$(count_in "$T/rf.json" "$pb" '.type == "capture" and .kind == "range_open" and (.flags | index("refused"))')
	[ "$got" -eq 1 ] || err "no refused range open in the second process"
	"$GTRACE" dump --summary "$T/rf.gtrace" | grep -Eq 'ranges_refused +1' ||
		err "ranges_refused is not 1: $("$GTRACE" dump --summary "$T/rf.gtrace" | grep ranges_ | tr '\n' '|')"
}

t_all_two() {
	local p1 p2 w1 w2 got want
	start_tracer --all --libcuda "$MOCK_LIB" -c cudaProfilerApi --capture-range-end=repeat -o "$T/all.gtrace"
	start_workload a GT_LIBCUDA="$MOCK_LIB" -- --launches 30 --ranges 1 --copies 2
	p1=$WPID
	start_workload b GT_LIBCUDA="$MOCK_LIB" -- --launches 90 --ranges 2 --gap 5 --copies 4
	p2=$WPID
	wait_exit "$p1" 60 && wait_exit "$p2" 60 || fatal "the workloads did not finish"
	sleep 0.3
	stop_tracer
	w1=$(grep '^{' "$T/a.out" | tail -n 1)
	w2=$(grep '^{' "$T/b.out" | tail -n 1)
	dump_trace "$T/all.gtrace" "$T/all.json"
	for p in "$p1:$w1" "$p2:$w2"; do
		pid=${p%%:*}
		want=$(jq '.range_launches | add' <<< "${p#*:}")
		got=$(count_in "$T/all.json" "$pid" '.type == "launch"')
		[ "$got" -eq "$want" ] || err "--all: pid $pid has $got launches recorded, expected its ranges' $want"
		want=$(jq '.range_launches | length' <<< "${p#*:}")
		got=$(count_in "$T/all.json" "$pid" '.type == "capture" and .kind == "range_close"')
		[ "$got" -eq "$want" ] || err "--all: pid $pid has $got ranges, expected $want"
		got=$(count_in "$T/all.json" "$pid" '.type == "memcpy"')
		[ "$got" -eq 0 ] || err "--all: pid $pid has $got copies recorded, all outside its ranges"
	done
}

t_no_range() {
	local rc
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -c cudaProfilerApi -o "$T/n.gtrace" -- \
		"$WORKLOAD" --launches 20 --ranges 0 > "$T/w.out" 2> "$T/w.err"
	rc=$?
	[ $rc -eq 0 ] || err "a workload without a range: exit $rc: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	grep -q 'no capture range opened (cuProfilerStart was never called): the trace holds 0 ranges' "$T/w.err" ||
		err "no line saying no range opened: $(tr '\n' '|' < "$T/w.err")"
	dump_trace "$T/n.gtrace" "$T/n.json"
	[ "$(jq -s '[.[] | select(.api != null)] | length' "$T/n.json")" -eq 0 ] || err "calls recorded without a range"
	[ "$(jq -s '[.[] | select(.type == "process" and .event == "exit")] | length' "$T/n.json")" -eq 1 ] ||
		err "the process' lifecycle is not in the trace"
}

# check_windows FULL: per window of $T/caps.json, the launches recorded
# ($T/got.json) against the workload's log ($T/log.json): at least those
# made wholly inside it, at most those that overlap it (a launch recorded
# twice, by two windows' links at once, exceeds that); at least FULL windows
# held launches made wholly inside them.
check_windows() {
	jq -n -r --slurpfile c "$T/caps.json" --slurpfile g "$T/got.json" --slurpfile l "$T/log.json" '
		($c[0] | map(select(.kind == "window_open")) | sort_by(.index)) as $o
		| ($c[0] | map(select(.kind == "window_close")) | sort_by(.index)) as $x
		| range(0; $o | length) as $i
		| $o[$i].ts as $s | ($x[$i].ts // 1e20) as $e
		| [$g[0][] | select(. >= $s and . <= $e)] | length as $n
		| [$l[0][] | select(.[0] >= $s and .[1] <= $e)] | length as $lo
		| [$l[0][] | select(.[1] >= $s and .[0] <= $e)] | length as $hi
		| "\($o[$i].index) \($n) \($lo) \($hi)"' > "$T/per_window"
	# a window may open after the flood ended (lo = hi = 0): empty, rightly;
	# most must hold launches the workload made wholly inside them
	local full=0 i n lo hi
	while read -r i n lo hi; do
		[ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ] ||
			err "window $i: $n launches recorded, the workload made $lo..$hi in it"
		[ "$lo" -gt 0 ] && full=$((full + 1))
	done < "$T/per_window"
	[ "$full" -ge "$1" ] || err "only $full windows held launches made wholly inside them: $(tr '\n' '|' < "$T/per_window")"
}

# Light mode: windows of 150 ms every 600 ms over a 3.5 s flood of 2000
# launches/s. Every launch the workload logged inside a window is in the
# trace, none outside; the cold calls are all there. The log holds each
# launch's clock before and after the call, the probe's time lies between:
# a launch whose call began and ended inside a window must be recorded, one
# whose call overlaps the window's edge may be.
t_light() {
	local n got
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --mode light --light-window 150ms/600ms \
		-o "$T/l.gtrace" -- "$WORKLOAD" --flood 3 --rate 2000 --launch-log "$T/launch.log" \
		--copies 4 --syncs 3 > "$T/w.out" 2> "$T/w.err" || fatal "light mode exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	grep -Eq 'light mode: [0-9]+ windows; the hot probes attached' "$T/w.err" || err "no light-mode summary line"
	dump_trace "$T/l.gtrace" "$T/l.json"
	jq -s -c '[.[] | select(.type == "capture")] | sort_by(.ts)' "$T/l.json" > "$T/caps.json"
	jq -s -c '[.[] | select(.type == "launch") | .ts]' "$T/l.json" > "$T/got.json"
	jq -R -s -c '[split("\n")[] | select(length > 0) | split(" ") | map(tonumber)]' "$T/launch.log" > "$T/log.json"
	n=$(jq '[.[] | select(.kind == "window_open")] | length' "$T/caps.json")
	[ "$n" -ge 5 ] && [ "$n" -le 8 ] || err "$n windows in 3 s at 150ms/600ms, expected 5..8"
	check_windows 4
	got=$(jq -n --slurpfile c "$T/caps.json" --slurpfile g "$T/got.json" '
		($c[0] | map(select(.kind == "window_open")) | sort_by(.index)) as $o
		| ($c[0] | map(select(.kind == "window_close")) | sort_by(.index)) as $x
		| [$g[0][] as $t | select([range(0; $o | length) | select($t >= $o[.].ts and $t <= ($x[.].ts // 1e20))] | length == 0)]
		| length')
	[ "$got" -eq 0 ] || err "$got launches recorded outside every window"
	# the cold calls, complete
	for a in cuMemcpyHtoD_v2:4 cuStreamSynchronize:3 cuMemAlloc_v2:3 cuMemFree_v2:3 cuModuleGetFunction:2; do
		got=$(jq -s --arg a "${a%%:*}" '[.[] | select(.api == $a)] | length' "$T/l.json")
		[ "$got" -eq "${a#*:}" ] || err "light mode: $got ${a%%:*} recorded, expected all ${a#*:}"
	done
	jq -e '.[] | select(.kind == "window_open") | select(.latency_ns > 0)' "$T/caps.json" > /dev/null ||
		err "no window carries its attach time"
	jq -e '.[] | select(.kind == "window_close") | select(.latency_ns > 0)' "$T/caps.json" > /dev/null ||
		err "no window carries its detach time"
	"$GTRACE" dump --summary "$T/l.gtrace" | grep -q 'capture=light capture_range=none light_window_ns=150000000 light_period_ns=600000000' ||
		err "the header does not hold the light-mode keys"
}

# Light mode when a window's detach outlasts the gap to the next (the
# kernel's synchronization on a loaded machine; a test knob makes it 1 s):
# the next window's links wait for it, so no launch is recorded by two
# windows' links at once, and the summary says the attaches waited.
t_light_slow_detach() {
	GTRACE_TEST_DETACH_DELAY_MS=1000 GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --mode light \
		--light-window 100ms/200ms -o "$T/l.gtrace" -- "$WORKLOAD" --flood 4 --rate 2000 \
		--launch-log "$T/launch.log" > "$T/w.out" 2> "$T/w.err" ||
		fatal "light mode exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	grep -Eq 'light mode: [0-9]+ windows; .*; [1-9][0-9]* attach(es)? waited for the detach before' "$T/w.err" ||
		err "no attach waited for the slow detach: $(grep 'light mode:' "$T/w.err")"
	dump_trace "$T/l.gtrace" "$T/l.json"
	jq -s -c '[.[] | select(.type == "capture")] | sort_by(.ts)' "$T/l.json" > "$T/caps.json"
	jq -s -c '[.[] | select(.type == "launch") | .ts]' "$T/l.json" > "$T/got.json"
	jq -R -s -c '[split("\n")[] | select(length > 0) | split(" ") | map(tonumber)]' "$T/launch.log" > "$T/log.json"
	check_windows 2
}

# Light mode with --launch-exit: a launch's exit is recorded only while the
# window's gate is open, as its entry is. The launches made while a closed
# window's probes were still being detached (held 300 ms here, as a loaded
# machine's) leave no exit without its entry (before: every one of them);
# the workload's one launching thread can leave one at each edge: a launch
# in flight as the gate opens has its exit without its entry, one recorded
# just before it closes is incomplete.
t_light_launch_exit() {
	local wins unmatched incomplete
	GTRACE_TEST_DETACH_DELAY_MS=300 GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --mode light --launch-exit \
		--light-window 100ms/500ms -o "$T/le.gtrace" -- "$WORKLOAD" --flood 3 > "$T/w.out" 2> "$T/w.err" ||
		fatal "light mode --launch-exit exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	wins=$(sed -n 's/.*light mode: \([0-9]*\) windows.*/\1/p' "$T/w.err")
	[ "${wins:-0}" -ge 2 ] || fatal "fewer than 2 windows: $(grep 'light mode:' "$T/w.err")"
	"$GTRACE" dump --summary "$T/le.gtrace" > "$T/sum.txt" 2> "$T/sum.err" || fatal "dump --summary: $(cat "$T/sum.err")"
	unmatched=$(awk '$1 == "unmatched_exits" { print $2 }' "$T/sum.txt")
	incomplete=$(awk '$1 ~ /^cuLaunch/ && $2 == "*" { n += $5 } END { print n + 0 }' "$T/sum.txt")
	[ -n "$unmatched" ] && [ "$unmatched" -le "$wins" ] ||
		err "${unmatched:-no count of} launch exits without their entry over $wins windows, at most one a window expected"
	[ "$incomplete" -le "$wins" ] || err "$incomplete launches incomplete over $wins windows, at most one a window expected"
	[ "$(awk '$1 ~ /^cuLaunch/ && $2 == "*" { n += $3 } END { print n + 0 }' "$T/sum.txt")" -gt 0 ] ||
		err "no launch recorded in the windows"
	log "$wins windows: $unmatched exits without entry, $incomplete launches incomplete"
}

# Light mode with ranges: the hot probes follow the ranges; launches are
# recorded only inside them and after they went live, which the trace says.
# Each range waits 300 ms before its launches: the attach takes ~10 ms on
# this VM, and a range shorter than that would hold no launch.
t_light_range() {
	local wj got want bad
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --mode light -c cudaProfilerApi --capture-range-end=repeat \
		-o "$T/lr.gtrace" -- "$WORKLOAD" --launches 3000 --ranges 2 --gap 300 --hold 300 --copies 2 > "$T/w.out" 2> "$T/w.err" ||
		fatal "light mode with ranges exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	wj=$(grep '^{' "$T/w.out" | tail -n 1)
	dump_trace "$T/lr.gtrace" "$T/lr.json"
	got=$(captures "$T/lr.json" | jq -c '[sort_by(.ts)[] | .kind]')
	[ "$got" = '["range_open","hot_live","range_close","hot_off","range_open","hot_live","range_close","hot_off"]' ] ||
		err "capture records in order: $got"
	bad=$(jq -s '
		([.[] | select(.type == "capture")] | sort_by(.ts)) as $c
		| [$c[] | select(.kind == "hot_live")] as $on | [$c[] | select(.kind == "hot_off")] as $off
		| [.[] | select(.type == "launch") | .ts as $t
		   | select([range(0; $on | length) | select($t >= $on[.].ts and $t <= $off[.].ts)] | length == 0)]
		| length' "$T/lr.json")
	[ "$bad" -eq 0 ] || err "$bad launches recorded outside the live part of a range"
	got=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/lr.json")
	want=$(jq '.range_launches | add' <<< "$wj")
	[ "$got" -eq "$want" ] || err "light ranges: $got launches recorded of the ranges' $want (all come after the probes went live)"
	# the cold calls inside the ranges: the markers, exactly
	got=$(jq -s '[.[] | select(.type == "marker")] | length' "$T/lr.json")
	[ "$got" -eq 4 ] || err "light ranges: $got markers recorded, expected 4"
}

# -y 1s -d 2s over a 4 s flood: every launch the workload logged between the
# first and the last recorded is recorded, and they span about 1 s, starting
# about 1 s in.
t_delay_duration() {
	jq_span() { jq -s '[.[] | select(.type == "launch") | .ts] | [min, max, length]' "$1"; }
	local span first last n logged t0
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -y 1s -d 2s -o "$T/d.gtrace" -- \
		"$WORKLOAD" --flood 4 --rate 1000 --launch-log "$T/launch.log" > "$T/w.out" 2> "$T/w.err" ||
		fatal "-y 1s -d 2s exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	dump_trace "$T/d.gtrace" "$T/d.json"
	span=$(jq_span "$T/d.json")
	first=$(jq '.[0]' <<< "$span") last=$(jq '.[1]' <<< "$span") n=$(jq '.[2]' <<< "$span")
	t0=$(head -n 1 "$T/launch.log" | cut -d ' ' -f 1)
	# launches whose call (before .. after) overlaps the recorded span: the
	# first and last recorded ones and every one between, none other
	logged=$(awk -v a="$first" -v b="$last" '$2 + 0 >= a && $1 + 0 <= b' "$T/launch.log" | wc -l)
	[ "$n" -gt 0 ] || fatal "no launch recorded"
	[ "$n" -eq "$logged" ] || err "-y 1s -d 2s: $n launches recorded, the workload made $logged between the first and the last"
	# the sanitized build stops up to ~0.4 s late under a loaded CI machine
	awk -v f="$first" -v l="$last" -v t="$t0" 'BEGIN { exit !((l - f) <= 1.45e9 && (l - f) >= 0.7e9 && (f - t) >= 0.7e9) }' ||
		err "-y 1s -d 2s: launches recorded from $(((first - t0) / 1000000)) ms to $(((last - t0) / 1000000)) ms into the flood"
}

# --trace none: no CPU-side source; the process lifecycle only, and what the
# agent adds (here none: the mock libcuda loads no injection).
t_trace_none() {
	local d
	# an agent that does nothing (the entry point the recorder checks for):
	# the mock libcuda loads no injection anyway
	echo 'int InitializeInjection(void) { return 1; }' | cc -shared -fPIC -x c - -o "$T/agent.so" ||
		fatal "cannot build a stand-in agent"
	# past the recorder's once-a-second rescan of new processes' libcuda
	# copies (which must not attach the CPU-side probes either)
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --cupti=optional --cupti-lib "$T/agent.so" -t none -o "$T/tn.gtrace" -- \
		"$WORKLOAD" --launches 8 --gpu-idle 1500 > "$T/w.out" 2> "$T/w.err" || fatal "-t none exited $?: $(tail -n 3 "$T/w.err" | tr '\n' '|')"
	grep -q 'recording to .* (--trace none: the GPU side only' "$T/w.err" || err "no line saying the GPU side only is recorded"
	dump_trace "$T/tn.gtrace" "$T/tn.json"
	d=$(jq -s -c '[.[] | select(.api != null or .type == "ioctl" or .type == "offcpu") | {type, api}] | group_by(.) | map("\(length) \(.[0].type) \(.[0].api // "")")' "$T/tn.json")
	[ "$d" = "[]" ] || err "-t none recorded CPU-side records: $d"
	[ "$(jq -s '[.[] | select(.type == "process")] | length' "$T/tn.json")" -ge 2 ] || err "-t none lost the process lifecycle"
	"$GTRACE" dump --summary "$T/tn.gtrace" | grep -q ' trace=none ' || err "the header does not say trace=none"
}

t_bad() {
	local bad rc
	while IFS= read -r bad; do
		# shellcheck disable=SC2086
		"$GTRACE" $bad --libcuda "$MOCK_LIB" -o "$T/bad.gtrace" -- "$WORKLOAD" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "'$bad' exited $rc, expected 2: $(head -n 2 "$T/bad.err" | tr '\n' '|')"
		[ "$(grep -c . "$T/bad.err")" -eq 1 ] || err "'$bad': not one line: $(tr '\n' '|' < "$T/bad.err")"
		[ ! -e "$T/bad.gtrace" ] || err "'$bad' wrote a trace"
	done <<- 'EOF'
		-c cudaProfiler
		-c nvtx
		-c nvtx --nvtx-capture step
		--nvtx-capture step
		--nvtx-capture @dom -c nvtx --cupti
		-c cudaProfilerApi --capture-range-end=again
		-c cudaProfilerApi --capture-range-end=repeat:0
		-c cudaProfilerApi --capture-range-end=repeat:x
		--capture-range-end=repeat
		--light-window 200ms/5s
		--mode light --light-window 300ms/200ms
		--mode light --light-window 200ms
		--mode light --light-window -1s/5s
		--mode heavy
		--trace none
		--trace none,cuda --cupti
		-c cudaProfilerApi --trace ioctl
		--mode light --trace sched
	EOF
}

add_case t_profiler_stop "-c cudaProfilerApi (stop): exactly the first range's launches and markers, nothing outside, CMD's status"
add_case t_profiler_repeat "-c cudaProfilerApi: repeat, repeat:3 and repeat:1 over 3 ranges, exact launches per range, refused ones counted"
add_case t_refused "--all -c cudaProfilerApi (stop): a second process' range while the first is open is refused and counted"
add_case t_all_two "--all -c cudaProfilerApi --capture-range-end=repeat: two processes with different ranges, exact per process"
add_case t_no_range "-c cudaProfilerApi with no range: ends normally, says 0 ranges, no call recorded"
add_case t_light "--mode light: launches recorded exactly inside the windows (against the workload's log), cold calls complete"
add_case t_light_slow_detach "--mode light, a detach slower than the gap between windows: the next attach waits, no launch recorded twice"
add_case t_light_launch_exit "--mode light --launch-exit: exits only while the window is open, none without its entry while a closed window detaches; at most one exit without entry and one launch incomplete a window"
add_case t_light_range "--mode light -c cudaProfilerApi: hot probes live inside ranges only, marked in the trace"
add_case t_delay_duration "-y 1s -d 2s: launches recorded only from about 1 s to about 2 s into a 4 s flood, all of them"
add_case t_trace_none "-t none --cupti: no CPU-side records, the lifecycle kept, trace=none in the header"
add_case t_bad "bad capture options: one line, exit 2, no trace"
run_cases "$@"
