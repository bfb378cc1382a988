#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/bench/inproc.py, the in-process overhead benchmark: its arithmetic
# (--selftest), its schedule end to end with a stand-in recorder that slows
# the workload down by a known amount, and the real recorder attached to and
# detached from one running process window after window (the mock libcuda;
# no GPU, so no step times: --no-steps).
REQUIRES="root jq mock gtrace"
# it measures a planted 10 % slowdown of 5 ms sleeps to within 4 %: other
# tests beside it would add their own noise to the steps
QUIET_CASES="t_planted"
. "$(dirname "$0")/lib.sh"

INPROC=$ROOT/tools/bench/inproc.py
LIGHTWIN=$ROOT/tools/bench/light_windows.py
GLC=$ROOT/tools/bench/gpum_launch_cost.py

t_selftest() {
	python3 "$INPROC" --selftest > "$T/self.out" 2>&1 ||
		fatal "inproc.py --selftest failed: $(grep -E 'FAIL|Error|assert' "$T/self.out" | head -n 5 | tr '\n' '|')"
	grep -q '^OK$' "$T/self.out" || err "no OK line from --selftest: $(tail -n 3 "$T/self.out" | tr '\n' '|')"
}

# A recorder that attaches nothing: while "recording" it creates $FAKE_FLAG,
# which makes the stand-in workload's steps 10 % longer.
make_fakes() {
	cat > "$T/fake-gtrace" <<-'EOF'
	#!/usr/bin/env bash
	case ${1:-} in
	--version) echo "fake 0"; exit 0 ;;
	dump) exit 0 ;;
	esac
	out= fail=
	while [ $# -gt 0 ]; do
		case $1 in -o) out=$2; shift ;; --fail) fail=1 ;; esac
		shift
	done
	if [ -n "$fail" ]; then echo "gtrace-bpf: error: told to fail" >&2; exit 1; fi
	stop() { rm -f "$FAKE_FLAG"; echo fake > "$out"; exit 0; }
	trap stop INT TERM
	sleep 0.2
	touch "$FAKE_FLAG"
	echo "gtrace-bpf: recording to $out (fake); Ctrl-C to stop" >&2
	while :; do sleep 0.05; done
	EOF
	chmod +x "$T/fake-gtrace"
	cat > "$T/fake-wl.py" <<-'EOF'
	import os, sys, time
	log, secs, flag = sys.argv[1], float(sys.argv[2]), os.environ["FAKE_FLAG"]
	f = open(log, "w")
	print("ready %d" % os.getpid(), flush=True)
	end = time.monotonic() + secs
	f.write("%d\n" % time.monotonic_ns())
	while time.monotonic() < end:
	    time.sleep(0.0055 if os.path.exists(flag) else 0.005)
	    f.write("%d\n" % time.monotonic_ns())
	    f.flush()
	EOF
}

# the median ratio of CONFIG in WORKLOAD in the JSON summary, in %
ratio_of() {
	jq -r --arg w "$2" --arg c "$3" '.workloads[$w].summary[$c].ratio_median.median // "null" | if . == "null" then . else . * 100 end' "$1"
}

t_planted() {
	local rc slow none
	make_fakes
	FAKE_FLAG=$T/flag python3 "$INPROC" --gtrace "$T/fake-gtrace" \
		--workload-cmd "python3 $T/fake-wl.py {step_log} {seconds}" \
		--configs "slow=,none" --rounds 3 --on 1 --off 0.8 --guard 0.3 --out "$T/o" \
		> "$T/run.out" 2> "$T/run.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "inproc.py exited with $rc: $(tail -n 5 "$T/run.err" | tr '\n' '|')"
	for f in inproc.csv inproc.json inproc.txt windows.jsonl cmd.steps; do
		[ -s "$T/o/$f" ] || err "no $f in the output directory"
	done
	[ "$(jq -s 'length' "$T/o/windows.jsonl")" -eq 6 ] || err "not 6 windows in windows.jsonl"
	[ "$(grep -c '^cmd,' "$T/o/inproc.csv")" -eq 6 ] || err "not 6 rows in inproc.csv"
	slow=$(ratio_of "$T/o/inproc.json" cmd slow)
	none=$(ratio_of "$T/o/inproc.json" cmd none)
	log "planted +10 %: measured slow $slow %, none $none %"
	awk -v s="$slow" 'BEGIN { exit !(s != "null" && s >= 6 && s <= 14) }' ||
		err "steps 10 % longer in the windows: measured $slow % (expected 6..14)"
	awk -v s="$none" 'BEGIN { exit !(s != "null" && s >= -3 && s <= 3) }' ||
		err "no recorder in the windows: measured $none % (expected -3..3)"
	# every window has steps on both sides, and the table says so
	jq -e '.workloads.cmd.summary | .slow.used == 3 and .none.used == 3' "$T/o/inproc.json" > /dev/null ||
		err "not every window gave a ratio: $(jq -c '.workloads.cmd.summary | map_values(.used)' "$T/o/inproc.json")"
	grep -Eq '^slow +3/3 +\+' "$T/o/inproc.txt" || err "no row for slow in the table: $(head -n 5 "$T/o/inproc.txt" | tr '\n' '|')"
	# --analyze prints the same table from the files
	python3 "$INPROC" --analyze "$T/o" > "$T/again.out" 2>&1 || err "--analyze failed: $(tail -n 3 "$T/again.out" | tr '\n' '|')"
	grep -Eq "^slow +3/3 +\\+" "$T/again.out" || err "--analyze: no row for slow"
}

t_recorder_fails() {
	local rc
	make_fakes
	FAKE_FLAG=$T/flag python3 "$INPROC" --gtrace "$T/fake-gtrace" \
		--workload-cmd "python3 $T/fake-wl.py {step_log} {seconds}" \
		--configs "ok=,bad=--fail" --rounds 2 --on 0.6 --off 0.5 --guard 0.2 --out "$T/o" \
		> "$T/run.out" 2> "$T/run.err"
	rc=$?
	[ $rc -eq 1 ] || err "a recorder that exits before recording: inproc.py exited with $rc, expected 1"
	[ "$(grep -c '^cmd,bad,.*,False,the recorder exited with status 1 before recording' "$T/o/inproc.csv")" -eq 2 ] ||
		err "the failed windows are not in the CSV as failed: $(grep bad "$T/o/inproc.csv" | head -n 2 | tr '\n' '|')"
	[ "$(grep -c '^cmd,ok,.*,True,' "$T/o/inproc.csv")" -eq 2 ] || err "the good windows are not both there"
	grep -q '^inproc: FAILED window cmd bad round 1' "$T/run.out" || err "no FAILED line for the bad windows"
}

# The real recorder on the mock: attached and detached 6 times over one
# flooding process, which keeps running; each trace holds its launches and
# nothing of other processes.
t_mock_windows() {
	local rc n f pid launches others
	python3 "$INPROC" --gtrace "$GTRACE" --no-steps --keep-traces \
		--workload-cmd "env LD_LIBRARY_PATH=$MOCK_DIR $WORKLOAD --flood {seconds} --rate 2000" \
		--ready-regex '' --configs "full,cuda=--trace cuda" --tool-opts "--libcuda $MOCK_LIB" \
		--rounds 3 --on 1.2 --off 0.8 --guard 0.3 --out "$T/o" > "$T/run.out" 2> "$T/run.err"
	rc=$?
	[ $rc -eq 0 ] || err "inproc.py exited with $rc: $(grep -E 'FAILED|cut short|rror' "$T/run.out" "$T/run.err" | head -n 5 | tr '\n' '|')"
	n=$(jq -s 'length' "$T/o/windows.jsonl")
	[ "$n" -eq 6 ] || fatal "$n windows, expected 6"
	jq -e '.workloads.cmd | .alive_at_end == true and .rounds_run == 3' "$T/o/inproc.json" > /dev/null ||
		err "the workload did not keep running through the 3 rounds: $(jq -c '.workloads.cmd | {alive_at_end, rounds_run, cut}' "$T/o/inproc.json")"
	pid=$(jq -r '.workloads.cmd.pid' "$T/o/inproc.json")
	jq -e -s --argjson p "$pid" 'all(.ok == true and .rc == 0 and .workload_alive == true and .pid == $p)' "$T/o/windows.jsonl" > /dev/null ||
		err "a window did not attach, exit 0 after SIGINT, or keep the workload: $(jq -c -s 'map(select(.ok != true)) | .[0]' "$T/o/windows.jsonl")"
	for f in "$T"/o/cmd-full-r{1,2,3}.gtrace "$T"/o/cmd-cuda-r{1,2,3}.gtrace; do
		[ -s "$f" ] || { err "no trace $f"; continue; }
		dump_trace "$f" "$f.json"
		launches=$(jq -s --argjson p "$pid" '[.[] | select(.type == "launch" and .pid == $p)] | length' "$f.json")
		# (pid 0: the recorder's own, such as the kernel lookups' record)
		others=$(jq -s --argjson p "$pid" '[.[] | select(.pid != $p and .pid != 0)] | length' "$f.json")
		# 2000 launches/s for 1.2 s and the stop, less what falls in the attach
		[ "$launches" -ge 1000 ] || err "$(basename "$f"): $launches launches of pid $pid, expected >= 1000"
		[ "$others" -eq 0 ] || err "$(basename "$f"): $others records of other processes"
	done
	jq -e -s 'all(.[]; .pid_launches // 0 >= 1000)' <(python3 -c '
import csv, json, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(json.dumps({"pid_launches": int(r["pid_launches"] or 0)}))' "$T/o/inproc.csv") > /dev/null ||
		err "the CSV does not count the launches of each window: $(cut -d, -f2,3,33 "$T/o/inproc.csv" | tr '\n' ' ')"
	grep -Eq '^full +3/3 ' "$T/o/inproc.txt" || err "no 'full 3/3' row: $(head -n 4 "$T/o/inproc.txt" | tr '\n' '|')"
}

t_lw_selftest() {
	python3 "$LIGHTWIN" --selftest > "$T/self.out" 2>&1 ||
		err "light_windows.py --selftest failed: $(tr '\n' '|' < "$T/self.out")"
	grep -q '^light_windows selftest: PASS' "$T/self.out" || err "no PASS line: $(tail -n 3 "$T/self.out" | tr '\n' '|')"
}

# steps_py: $T/steps.py STEP_LOG SECONDS, a stepping job for light_windows.py's
# "cmd" workload: a step every 5 ms logged, "ready" once it logs; with
# GT_STEP_LAUNCHES=N each step also makes N launches through GT_LIBCUDA
steps_py() {
	cat > "$T/steps.py" <<-'EOF'
	import ctypes, os, sys, time
	n = int(os.environ.get("GT_STEP_LAUNCHES", "0"))
	lib = ctypes.CDLL(os.environ["GT_LIBCUDA"]) if n else None
	f = open(sys.argv[1], "w")
	print("ready %d" % os.getpid(), flush=True)
	end = time.monotonic() + float(sys.argv[2])
	f.write("%d\n" % time.monotonic_ns())
	while time.monotonic() < end:
	    time.sleep(0.005)
	    for _ in range(n):
	        lib.cuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, None)
	    f.write("%d\n" % time.monotonic_ns())
	    f.flush()
	EOF
}

# light_windows.py end to end: the real recorder in light mode on the mock
# libcuda beside a stepping process: each of its windows found in the trace,
# paired with the stretch before it, and the same over the quiet stretch
t_lw_mock() {
	local rc n
	steps_py
	python3 "$LIGHTWIN" --gtrace "$GTRACE" --workload-cmd "python3 $T/steps.py {step_log} {seconds}" \
		--quiet 4 --record 6 --period 1s --window 200ms --tool-opts "--libcuda $MOCK_LIB" \
		--out "$T/lw" > "$T/lw.out" 2> "$T/lw.err"
	rc=$?
	[ $rc -eq 0 ] || err "light_windows.py exited with $rc: $(tail -n 5 "$T/lw.err" | tr '\n' '|')"
	local closed whole
	n=$(jq '.workloads.cmd.windows.windows' "$T/lw/light_windows.json")
	# every window the trace closed whole is measured (40 steps of 5 ms in
	# each and before it); one the recorder's end cut short may be too short
	# to measure; the recorder ran 6 s or more of 1 s periods (it stops when
	# told, however late), the first opening a period after its start
	closed=$(grep -c '"kind":"window_close"' "$T/lw/cmd.capture.jsonl")
	whole=$(jq -s '[.[] | select(.kind == "window_open" or .kind == "window_close")] |
		[range(0; length - 1) as $i | select(.[$i].kind == "window_open" and .[$i + 1].kind == "window_close" and
			.[$i + 1].ts - .[$i].ts >= 150000000)] | length' "$T/lw/cmd.capture.jsonl")
	log "$n windows measured, $whole closed whole, $closed closed"
	[ "$n" -ge "$whole" ] && [ "$n" -le "$closed" ] ||
		err "$n windows measured, $whole closed whole and $closed closed in the trace: $(cat "$T/lw/light_windows.txt")"
	[ "$n" -ge 4 ] || err "$n windows measured in 6 s of 1 s periods, expected 4 or more: $(cat "$T/lw/light_windows.txt")"
	[ "$(grep -c '"kind":"window_open"' "$T/lw/cmd.capture.jsonl")" -ge "$n" ] || err "fewer window_open records than windows measured"
	n=$(jq '.workloads.cmd.noise.windows' "$T/lw/light_windows.json")
	[ "$n" -ge 2 ] || err "the quiet stretch gave $n noise windows, expected 2 or more"
	grep -q '^cmd  *windows ' "$T/lw.out" || err "no table row for the windows: $(cat "$T/lw.out")"
}

# --bare: census' windows (a bare counting uprobe on the mock's launch
# function) over a job that launches through it: each census run a window,
# each window measured against the stretch before it
t_lw_bare() {
	local rc n opens
	steps_py
	GT_LIBCUDA=$MOCK_LIB GT_STEP_LAUNCHES=20 python3 "$LIGHTWIN" --gtrace "$GTRACE" \
		--workload-cmd "python3 $T/steps.py {step_log} {seconds}" \
		--quiet 3 --record 5 --period 1s --window 200ms --bare cuLaunchKernel --tool-opts "--libcuda $MOCK_LIB" \
		--out "$T/lw" > "$T/lw.out" 2> "$T/lw.err"
	rc=$?
	[ $rc -eq 0 ] || err "light_windows.py --bare exited with $rc: $(tail -n 5 "$T/lw.err" | tr '\n' '|') $(cat "$T/lw/cmd-census.err" 2> /dev/null)"
	n=$(jq '.workloads.cmd.windows.windows' "$T/lw/light_windows.json")
	opens=$(grep -c '"kind": "window_open"' "$T/lw/cmd.capture.jsonl")
	log "$n windows measured of $opens census runs: $(grep '^cmd  *windows' "$T/lw.out")"
	# every census run is a window and each is measured: 40 steps of 5 ms
	# in its 200 ms and in the stretch before it
	[ "$opens" -ge 2 ] && [ "$n" = "$opens" ] ||
		err "$n windows measured of $opens census runs: $(cat "$T/lw/light_windows.txt")"
	[ "$(grep -c '"kind": "window_close"' "$T/lw/cmd.capture.jsonl")" = "$opens" ] || err "a census window without its close"
	jq -e '.bare == "cuLaunchKernel"' "$T/lw/light_windows.json" > /dev/null || err "the JSON does not say the bare functions"
	grep -q '^a bare counting uprobe on cuLaunchKernel' "$T/lw.out" || err "the table does not say what it measured: $(head -n 2 "$T/lw.out")"
}

t_glc_selftest() {
	python3 "$GLC" --selftest > "$T/self.out" 2>&1 ||
		err "gpum_launch_cost.py --selftest failed: $(tr '\n' '|' < "$T/self.out")"
	grep -q '^gpum_launch_cost selftest: PASS' "$T/self.out" || err "no PASS line: $(tail -n 3 "$T/self.out" | tr '\n' '|')"
}

# gpum_launch_cost.py end to end on the mock libcuda and the mock NVML:
# the workload's launches logged, the recorder's bursts of samples found in
# its trace, each paired with the stretch before it, and the quiet part's
# made-up bursts beside them
t_glc_mock() {
	local nvml=$MOCK_DIR/nvml/libnvidia-ml.so.1 rc n
	[ -f "$nvml" ] || fatal "no mock NVML at $nvml (make mock)"
	GTRACE_NVML_LIB=$nvml GT_LIBCUDA=$MOCK_LIB python3 "$GLC" --gtrace "$GTRACE" --workload "$WORKLOAD" \
		--gpum 20 --seconds 6 --quiet 2 --rate 5000 --tool-opts "--libcuda $MOCK_LIB" --out "$T/g" \
		> "$T/g.out" 2> "$T/g.err"
	rc=$?
	[ $rc -eq 0 ] || err "gpum_launch_cost.py exited with $rc: $(tail -n 5 "$T/g.out" "$T/g.err" | tr '\n' '|')"
	# the flood goes on 6 s after the recorder said it records: a burst every
	# 500 ms, about 12 in the trace; each one measured but a cut first or last
	local in_trace
	in_trace=$(jq '.bursts_in_trace' "$T/g/gpum_launch_cost.json")
	n=$(jq '.bursts.windows' "$T/g/gpum_launch_cost.json")
	[ "$in_trace" -ge 3 ] || err "$in_trace bursts of samples in the trace of 6 s at 20 Hz in 250 ms of every 500 ms, expected 3 or more: $(cat "$T/g/gpum_launch_cost.txt")"
	[ "$n" -ge $((in_trace - 2)) ] && [ "$n" -le "$in_trace" ] ||
		err "$n bursts measured of the trace's $in_trace, expected all but a cut first or last: $(cat "$T/g/gpum_launch_cost.txt")"
	n=$(jq '.noise.windows' "$T/g/gpum_launch_cost.json")
	[ "$n" -ge 2 ] || err "the quiet part gave $n noise windows, expected 2 or more"
	# the workload's log: every launch it made, paced at 5000 a second (it
	# catches up when it falls behind): 5000 x the log's span by its own clock
	jq -e '.launches > 1000 and ((.launches - 1 - 5000 * .launch_span_s) | fabs) <= 0.01 * .launches' \
		"$T/g/gpum_launch_cost.json" > /dev/null ||
		err "the launch log does not hold 5000 launches a second of its span: $(jq -c '{launches, launch_span_s}' "$T/g/gpum_launch_cost.json")"
	grep -q '^bursts  *[0-9]' "$T/g.out" || err "no table row for the bursts: $(cat "$T/g.out")"
}

add_case t_lw_selftest "light_windows.py --selftest: a planted 9 % trap cost and 5 ms attach stall read back, noise floor 0"
add_case t_lw_bare "light_windows.py --bare on the mock: each census run over a job launching through it is a window, measured against the stretch before it"
add_case t_lw_mock "light_windows.py on the mock: every light window of the trace paired with the stretch before it"
add_case t_glc_selftest "gpum_launch_cost.py --selftest: a planted 2 % slower launch inside bursts read back, noise floor 0"
add_case t_glc_mock "gpum_launch_cost.py on the mock with the mock NVML: each burst of samples paired with the stretch before it"
add_case t_selftest "inproc.py --selftest: windowing, pairing and ratios on synthetic step logs"
add_case t_planted "inproc.py with a stand-in recorder that slows steps by 10 %: measured 6..14 %, none -3..3 %"
add_case t_recorder_fails "inproc.py: a recorder that fails to attach fails its windows, the others go on, status 1"
add_case t_mock_windows "inproc.py --no-steps on the mock: 6 attach/detach windows over one process, each trace its launches"
run_cases "$@"
