#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf daemon against the mock libcuda: start and stop, status,
# snapshots of the window (whole, --last, one process) with exact contents,
# the time bound of the window, a second daemon refused, a daemon killed
# with SIGKILL replaced by the next, --log and its reopening at SIGHUP, and
# the bad command lines. Each case
# has its own run directory (GTRACE_RUN_DIR) and snapshot directory.
REQUIRES="root jq mock gtrace"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_snapshot t_window t_names t_names_bound t_names_lost t_metrics t_triggers t_second_and_kill t_log t_bad"
. "$(dirname "$0")/lib.sh"

t_snapshot() {
	local got st
	start_daemon --mode full --window 30s --memory 16M
	run_wl a --launches 100 --copies 3
	sleep 1.5	# a second's flush puts the last chunk in the window
	# the summary a person reads: a few lines, the figures that matter
	"$GTRACE" status > "$T/sum" 2> "$T/sum.err" || err "status failed: $(cat "$T/sum.err")"
	for k in daemon: traced: events: window: overhead: snapshots:; do
		grep -q "^$k " "$T/sum" || err "the status summary has no '$k' line: $(tr '\n' '|' < "$T/sum")"
	done
	grep -Eq '^traced: +[1-9][0-9]* process(es)? seen' "$T/sum" && grep -q '^daemon: .* full mode' "$T/sum" ||
		err "the status summary: $(tr '\n' '|' < "$T/sum")"
	[ "$(wc -l < "$T/sum")" -le 10 ] || err "the status summary is $(wc -l < "$T/sum") lines long"
	"$GTRACE" status -v > "$T/status" 2> "$T/status.err" || err "status failed: $(cat "$T/status.err")"
	grep -Eq '^processes [1-9]' "$T/status" || err "status shows no process: $(tr '\n' '|' < "$T/status")"
	grep -Eq '^window_chunks [1-9]' "$T/status" || err "status shows an empty window: $(tr '\n' '|' < "$T/status")"
	grep -q "^pid $DPID\$" "$T/status" || err "status does not give the daemon's pid"
	"$GTRACE" status --json | jq -e --argjson p "$DPID" '.pid == $p and .processes >= 1 and .mode == "full"' > /dev/null ||
		err "status --json: $("$GTRACE" status --json 2>&1 | head -c 300)"
	snap
	case $SNAP in "$T/snaps/system_snapshot_"*_v1.gtrace) ;; *) err "default snapshot name: $SNAP" ;; esac
	[ "$(stat -c %a "$SNAP")" = 600 ] || err "the snapshot's mode is $(stat -c %a "$SNAP"), expected 600"
	dump_trace "$SNAP" "$T/s.json"
	got=$(launches_of "$T/s.json" "$WP")
	[ "$got" -eq 100 ] || err "the snapshot holds $got of the workload's 100 launches"
	got=$(jq -s --argjson p "$WP" '[.[] | select(.pid == $p and .api == "cuMemcpyHtoD_v2")] | length' "$T/s.json")
	[ "$got" -eq 3 ] || err "the snapshot holds $got of 3 copies"
	"$GTRACE" dump --summary "$SNAP" | grep -q 'snapshot=1' || err "the snapshot's header does not say snapshot=1"
	snap -o "$T/second.gtrace"
	[ "$SNAP" = "$T/second.gtrace" ] || err "-o: the snapshot went to $SNAP"
	"$GTRACE" snapshot -o "$T/second.gtrace" > /dev/null 2> "$T/again.err" && err "a snapshot over an existing file succeeded"
	stop_daemon
	[ ! -e "$T/run/control.sock" ] && [ ! -e "$T/run/daemon.pid" ] || err "the socket or pid file is left after SIGTERM"
	grep -q 'daemon stopped' "$T/daemon.err" || err "no line saying the daemon stopped"
}

# The window keeps 3 s: a workload 6 s ago is gone, the last one is there;
# --last 2s leaves out one 3.5 s ago; -p keeps one process.
t_window() {
	local a b c got b_end c_start last
	start_daemon --mode full --window 3s --memory 16M
	run_wl a --launches 40
	a=$WP
	sleep 6
	run_wl b --launches 60
	b=$WP
	b_end=$(date +%s%N)
	sleep 3.5
	c_start=$(date +%s%N)
	run_wl c --launches 20
	c=$WP
	sleep 1.5
	snap
	dump_trace "$SNAP" "$T/w.json"
	[ "$(launches_of "$T/w.json" "$a")" -eq 0 ] || err "a workload older than the window is in the snapshot"
	[ "$(launches_of "$T/w.json" "$c")" -eq 20 ] || err "the last workload: $(launches_of "$T/w.json" "$c") of 20 launches"
	# --last: back to the middle of the 3.5 s between b's end and c's start,
	# however long the steps since took
	last=$((($(date +%s%N) - (b_end + c_start) / 2) / 1000000))
	snap --last "${last}ms"
	dump_trace "$SNAP" "$T/l.json"
	[ "$(launches_of "$T/l.json" "$b")" -eq 0 ] || err "--last ${last}ms holds the workload that ended 1.75 s before it"
	[ "$(launches_of "$T/l.json" "$c")" -eq 20 ] || err "--last ${last}ms lost the workload that started 1.75 s after it"
	run_wl d --launches 12
	sleep 1.5
	snap -p "$WP"
	dump_trace "$SNAP" "$T/p.json"
	got=$(jq -s --argjson p "$WP" '[.[] | select(.pid != $p and .pid != 0 and .api != null)] | length' "$T/p.json")
	[ "$got" -eq 0 ] || err "-p $WP: $got calls of other processes"
	[ "$(launches_of "$T/p.json" "$WP")" -eq 12 ] || err "-p $WP: $(launches_of "$T/p.json" "$WP") of 12 launches"
	"$GTRACE" snapshot -p 4000000 > /dev/null 2> "$T/nopid.err" && err "a snapshot of a pid never seen succeeded"
	grep -q 'never seen' "$T/nopid.err" || err "no line saying the pid was never seen: $(cat "$T/nopid.err")"
	stop_daemon
}

# Names learned before the window's oldest chunk: a process that looked its
# kernels up 5 s before launching them, in a 3 s window, still has its
# kernel and process names in the snapshot (the preamble).
t_names() {
	local wp got
	start_daemon --mode full --window 3s --memory 16M
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --wait-signal --launches 8 > "$T/n.out" 2> "$T/n.err" &
	PIDS+=($!)
	wait_line "$T/n.out" '^ready ' 20 || fatal "the workload never got ready"
	wp=$(awk '/^ready / { print $2; exit }' "$T/n.out")
	sleep 5
	kill -USR1 "$wp"
	wait_line "$T/n.out" '^\{' 20 || fatal "the workload did not finish"
	sleep 1.5
	snap
	dump_trace "$SNAP" "$T/n.json"
	got=$(jq -s --argjson p "$wp" '[.[] | select(.pid == $p and .api == "cuModuleGetFunction")] | length' "$T/n.json")
	[ "$got" -eq 0 ] || err "the kernel lookups of 5 s ago are still in a 3 s window"
	[ "$(launches_of "$T/n.json" "$wp")" -eq 8 ] || err "$(launches_of "$T/n.json" "$wp") of 8 launches in the snapshot"
	got=$(jq -s -c --argjson p "$wp" '[.[] | select(.pid == $p and .type == "launch") | .kernel] | unique' "$T/n.json")
	[ "$got" = "[\"$K_FILL\",\"$K_VECADD\",\"$K_SCALE\"]" ] || err "kernel names in the snapshot: $got"
	grep -q '^names_kept_bytes [1-9]' <("$GTRACE" status -v) || err "status keeps no names"
	stop_daemon
}

# long_job NAME [ARGS...]: the workload over the mock libcuda with a
# command line of about a kilobyte (its argv[0]: NAME and 1000 zeros, which
# the daemon keeps as the process' name), --launches 8 unless ARGS say
# otherwise, in the background; sets WPID.
long_job() {
	local name=$1
	shift
	[ $# -gt 0 ] || set -- --launches 8
	GT_LIBCUDA=$MOCK_LIB bash -c 'exec -a "$0" "$@"' "$(printf '%s-%01000d' "$name" 0)" \
		"$WORKLOAD" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	WPID=$!
	PIDS+=("$WPID")
}

status_of() { # KEY: its value in status --json
	"$GTRACE" status --json | jq -r --arg k "$1" '.[$k]'
}

# The names kept for the snapshots' head are those of the processes that
# may still be in the window: 30 short jobs with kilobyte names one after
# the other in a 4 s window (about 6 of them at a time), a store that holds
# the names of 12 jobs, then a job that looks its kernels up and launches
# them 6 s later: its launches, and every other in the snapshot, have their
# kernels' names (its lookups are out of the window: the names come from the
# store), nothing is lost, the names of the jobs gone from the window were
# let go.
t_names_bound() {
	local one limit i got wp
	# what the names of one job take, measured
	start_daemon --mode full --window 3s
	long_job probe
	finish_workload probe "$WPID"
	sleep 1.5
	one=$(status_of names_kept_bytes)
	stop_daemon
	[ "$one" -ge 1000 ] || fatal "the names of one job take $one bytes, expected more than its kilobyte name"
	limit=$((12 * one))
	export GTRACE_NAMES_MAX_BYTES=$limit
	start_daemon --mode full --window 4s
	unset GTRACE_NAMES_MAX_BYTES
	for ((i = 1; i <= 30; i++)); do
		long_job "job$i"
		finish_workload "job$i" "$WPID"
		sleep 0.7
	done
	long_job late --wait-signal --launches 8
	wp=$WPID
	wait_ready late "$wp"
	sleep 6
	kill -USR1 "$wp"
	finish_workload late "$wp"
	sleep 1.5
	snap
	"$GTRACE" status --json > "$T/st.json"
	dump_trace "$SNAP" "$T/b.json"
	got=$(jq -s --argjson p "$wp" '[.[] | select(.pid == $p and .api == "cuModuleGetFunction")] | length' "$T/b.json")
	[ "$got" -eq 0 ] || err "the late job's kernel lookups of 6 s ago are still in a 4 s window"
	[ "$(launches_of "$T/b.json" "$wp")" -eq 8 ] || err "$(launches_of "$T/b.json" "$wp") of the late job's 8 launches in the snapshot"
	got=$(jq -s '[.[] | select(.type == "launch") | .pid] | unique | length' "$T/b.json")
	log "the launches of $got jobs in the window; status: $(jq -c 'with_entries(select(.key | startswith("names_")))' "$T/st.json")"
	[ "$got" -le 11 ] || err "the launches of $got jobs in a 4 s window: the test's bound of 12 jobs' names is too tight"
	jq -s -e '[.[] | select(.type == "launch") | .pid] | group_by(.) | all(length == 8)' "$T/b.json" > /dev/null ||
		err "not 8 launches for every job in the snapshot"
	got=$(jq -s -c --arg a "$K_VECADD" --arg b "$K_SCALE" --arg c "$K_FILL" \
		'[.[] | select(.type == "launch" and ([.kernel] | inside([$a, $b, $c]) | not)) | .kernel] | unique' "$T/b.json")
	[ "$got" = "[]" ] || err "launches in the snapshot without their kernel's name: $got"
	jq -e --argjson l "$limit" '.names_lost == 0 and .names_lost_bytes == 0 and .names_forgotten > 0 and
	       .names_limit_bytes == $l and .names_kept_bytes <= $l' "$T/st.json" > /dev/null ||
		err "status: $(jq -c 'with_entries(select(.key | startswith("names_")))' "$T/st.json")"
	grep -q 'name records lost' "$T/daemon.err" && err "a warning of lost names: $(grep 'name records lost' "$T/daemon.err")"
	stop_daemon
}

# A bound too small even for the names of the processes running: what does
# not fit is lost, counted in status (text, JSON) and in the metrics, and
# said in one warning however many are lost.
t_names_lost() {
	local port i lost body
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export GTRACE_NAMES_MAX_BYTES=4096
	start_daemon --mode full --window 30s --metrics "127.0.0.1:$port"
	unset GTRACE_NAMES_MAX_BYTES
	local -a w=()
	for ((i = 1; i <= 4; i++)); do
		long_job "live$i" --wait-signal --launches 8
		w+=("$WPID")
		wait_ready "live$i" "$WPID"
	done
	sleep 1.5
	lost=$(status_of names_lost)
	[ "$lost" -ge 1 ] || err "4 processes with kilobyte names in a 4 KiB bound: names_lost is $lost"
	"$GTRACE" status -v | grep -q "^names_lost $lost\$" || err "status (text) does not say names_lost $lost"
	[ "$(status_of names_lost_bytes)" -gt 0 ] || err "names_lost_bytes is 0 with $lost names lost"
	[ "$(status_of names_in_use)" -ge 1 ] || err "status: no name in use"
	body=$(curl -sf "http://127.0.0.1:$port/metrics") || fatal "no answer on 127.0.0.1:$port/metrics"
	grep -qx "gtrace_names_lost_total $lost" <<< "$body" ||
		err "the metrics do not say $lost names lost: $(grep names_lost <<< "$body" | tr '\n' '|')"
	# more lost later: counted, not said again
	long_job live5 --wait-signal --launches 8
	w+=("$WPID")
	wait_ready live5 "$WPID"
	sleep 1.5
	[ "$(status_of names_lost)" -gt "$lost" ] || err "a fifth process lost no name: names_lost stays $lost"
	[ "$(grep -c 'name records lost' "$T/daemon.err")" -eq 1 ] ||
		err "not one warning of lost names: $(grep 'name records lost' "$T/daemon.err" | tr '\n' '|')"
	for ((i = 0; i < 5; i++)); do
		kill -USR1 "${w[$i]}"
		finish_workload "live$((i + 1))" "${w[$i]}"
	done
	stop_daemon
}

# --metrics: the daemon's own endpoint, scraped with curl: the workload's
# launches and calls per api, exact.
t_metrics() {
	local port=$((20000 + RANDOM % 20000)) body got want
	start_daemon --mode full --window 30s --metrics "127.0.0.1:$port"
	run_wl m --launches 100 --copies 2
	sleep 1.5	# a second's flush puts the chunks in the window
	body=$(curl -sf "http://127.0.0.1:$port/metrics") || fatal "no answer on 127.0.0.1:$port/metrics"
	got=$(awk -v p="pid=\"$WP\"" '$1 ~ /^gtrace_launches_total\{/ && index($0, p) { print $NF }' <<< "$body")
	[ "$got" = 100 ] || err "gtrace_launches_total of pid $WP: '$got', expected 100"
	got=$(awk -v p="pid=\"$WP\"" '$1 ~ /^gtrace_api_calls_total\{/ && index($0, p) && index($0, "api=\"cuMemcpyHtoD_v2\"") { print $NF }' <<< "$body")
	[ "$got" = 2 ] || err "gtrace_api_calls_total of cuMemcpyHtoD_v2: '$got', expected 2"
	grep -q '^gtrace_ring_used_bytes [1-9]' <<< "$body" || err "no window bytes in the metrics"
	want=404
	got=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
	[ "$got" = "$want" ] || err "GET /other answered $got, expected $want"
	stop_daemon
	"$GTRACE" daemon --dir "$T/snaps" --metrics 10.1.2.3:9464 > /dev/null 2> "$T/remote.err"
	[ $? -eq 1 ] || err "--metrics on a remote address was taken"
	grep -q 'not a loopback address' "$T/remote.err" || err "--metrics remote: $(cat "$T/remote.err")"
}

# trig_case KIND TRIGGER-OPTS -- ACTION...: a daemon with that one trigger,
# the action that trips it; then exactly one snapshot named after it, with
# its trigger record, and a second trip within the window suppressed.
trig_files() { find "$T/snaps" -name "system_$1_trigger_*.gtrace" | sort; }
trig_case() {
	local kind=$1 n f got
	shift
	start_daemon --mode full --window 20s --post 500ms "$@"
}

trig_check() { # KIND FIRED
	local kind=$1 n f
	# written once the post time is over: the daemon says so (a slow
	# machine's writer takes what it takes)
	wait_line "$T/daemon.err" "snapshot [^ ]*system_${kind}_trigger_[^ ]*: [0-9]+ records" 60 "$DPID" ||
		err "$kind: no snapshot named after the trigger written: $(grep -i 'trigger\|snapshot' "$T/daemon.err" | tr '\n' '|')"
	n=$(trig_files "$kind" | grep -c .)
	[ "$n" -eq 1 ] || { err "$kind: $n snapshots named after the trigger, expected 1: $(ls "$T/snaps" | tr '\n' ' ')"; return; }
	f=$(trig_files "$kind")
	dump_trace "$f" "$T/$kind.json"
	jq -s -e --arg k "$kind" '[.[] | select(.type == "trigger" and .kind == $k)] | length == 1' "$T/$kind.json" > /dev/null ||
		err "$kind: the snapshot does not hold exactly one trigger record of its kind"
}

t_triggers() {
	local wp
	# sync>10ms: the mock's syncs last 30 ms
	trig_case sync --trigger 'sync>10ms'
	GT_MOCK_SYNC_US=30000 run_wl s --launches 8 --syncs 1
	trig_check sync
	jq -s -e '[.[] | select(.type == "trigger")][0] | .wait_ns >= 30000000 and .api == "cuStreamSynchronize"' "$T/sync.json" > /dev/null ||
		err "sync trigger: wait or api wrong: $(jq -s -c '[.[] | select(.type == "trigger")]' "$T/sync.json")"
	GT_MOCK_SYNC_US=30000 run_wl s2 --launches 8 --syncs 1
	sleep 1.5
	[ "$(trig_files sync | grep -c .)" -eq 1 ] || err "a second long sync within the window wrote another snapshot"
	grep -Eq '^triggers_suppressed [1-9]' <("$GTRACE" status -v) || err "status counts no suppressed trigger"
	stop_daemon
	# error: the workload's failing allocation
	trig_case error --trigger error
	run_wl e --launches 4 --fail
	trig_check error
	stop_daemon
	# exit: a workload killed by a signal
	trig_case exit --trigger exit
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --wait-signal --launches 4 > "$T/x.out" 2> "$T/x.err" &
	wp=$!
	wait_line "$T/x.out" '^ready ' 20 || fatal "the workload never got ready"
	kill -TERM "$wp"
	wait "$wp" 2> /dev/null
	trig_check exit
	stop_daemon
	# profiler: cuProfilerStart (the workload calls it at its end)
	trig_case profiler --trigger profiler
	run_wl p --launches 4
	trig_check profiler
	stop_daemon
	# signal: SIGUSR1 to the daemon
	trig_case signal --trigger signal
	kill -USR1 "$DPID"
	trig_check signal
	stop_daemon
	# bad specs
	for bad in 'sync>' 'sync>-1s' 'error=x' 'slow' 'sync<2s'; do
		"$GTRACE" daemon --trigger "$bad" > /dev/null 2> "$T/tb.err"
		[ $? -eq 2 ] || err "--trigger '$bad' was taken"
	done
}

t_second_and_kill() {
	local rc
	start_daemon --window 10s
	"$GTRACE" daemon --dir "$T/snaps" > /dev/null 2> "$T/second.err"
	rc=$?
	[ $rc -eq 1 ] || err "a second daemon exited $rc, expected 1"
	grep -q "a daemon is already running (pid $DPID)" "$T/second.err" ||
		err "the second daemon's line does not name the first: $(cat "$T/second.err")"
	[ "$(grep -c . "$T/second.err")" -eq 1 ] || err "the second daemon said more than one line"
	kill -KILL "$DPID"
	wait "$DPID" 2> /dev/null
	start_daemon --window 10s
	"$GTRACE" status -v > /dev/null 2>&1 || err "the daemon after a SIGKILLed one does not answer"
	stop_daemon
}

# --log FILE: the daemon's lines go there (0600), none to stderr; SIGHUP
# after a rotation reopens it (the old file keeps what came before, the new
# one what comes after); a log that became a symlink is not followed: the
# daemon says so in the old one and logs on there; without --log SIGHUP
# neither stops it nor opens anything.
t_log() {
	local log=$T/d.log
	start_daemon -v --mode full --window 30s --log "$log"
	[ "$(stat -c %a "$log")" = 600 ] || err "the log is mode $(stat -c %a "$log"), expected 600"
	[ ! -s "$T/daemon.err" ] || err "with --log the daemon wrote to stderr: $(head -n 3 "$T/daemon.err" | tr '\n' '|')"
	mv "$log" "$log.1"
	kill -HUP "$DPID"
	wait_line "$log" 'SIGHUP: log reopened' 10 "$DPID" || fatal "no 'log reopened' in a new $log after SIGHUP"
	[ "$(stat -c '%a %u' "$log")" = "600 $(id -u)" ] || err "the reopened log is $(stat -c '%a %u' "$log"), expected 600 and ours"
	run_wl a --launches 30
	sleep 1.5
	snap
	dump_trace "$SNAP" "$T/s.json"
	[ "$(launches_of "$T/s.json" "$WP")" -eq 30 ] || err "after SIGHUP the snapshot holds $(launches_of "$T/s.json" "$WP") of 30 launches"
	grep -q "snapshot $SNAP:" "$log" || err "the snapshot's line is not in the reopened log"
	grep -q "snapshot $SNAP:" "$log.1" && err "the snapshot's line is in the rotated log"
	grep -q '^gtrace-bpf: recording' "$log.1" || err "the rotated log lost the lines before the rotation"
	grep -q 'SIGHUP' "$log.1" && err "the rotated log got the SIGHUP line"
	# a rotation that leaves a symlink in the log's place
	mv "$log" "$log.2"
	ln -s "$T/elsewhere" "$log"
	kill -HUP "$DPID"
	wait_line "$log.2" 'SIGHUP: cannot reopen the log' 10 "$DPID" || err "no warning in the old log when the new one is a symlink"
	[ ! -e "$T/elsewhere" ] || err "SIGHUP followed the symlink to $T/elsewhere"
	"$GTRACE" status -v > /dev/null 2>&1 || err "the daemon does not answer after a SIGHUP it could not act on"
	grep -q 'logging on' "$log.2" || err "the warning does not say the daemon logs on"
	stop_daemon
	grep -q 'daemon stopped' "$log.2" || err "after the failed reopen the daemon did not log on in the old log"
	# no --log
	start_daemon --window 10s
	kill -HUP "$DPID"
	wait_line "$T/daemon.err" 'SIGHUP: no --log to reopen' 10 "$DPID" || err "without --log: no line for SIGHUP"
	"$GTRACE" status -v > /dev/null 2>&1 || err "SIGHUP without --log stopped the daemon"
	stop_daemon
}

t_bad() {
	local bad rc
	export GTRACE_RUN_DIR=$T/run
	"$GTRACE" snapshot > /dev/null 2> "$T/none.err"
	[ $? -eq 1 ] || err "snapshot without a daemon did not exit 1"
	grep -q 'no daemon is running' "$T/none.err" || err "snapshot without a daemon: $(cat "$T/none.err")"
	while IFS= read -r bad; do
		# shellcheck disable=SC2086
		"$GTRACE" daemon $bad > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "daemon $bad exited $rc, expected 2: $(head -n 2 "$T/bad.err" | tr '\n' '|')"
		[ "$(grep -c . "$T/bad.err")" -eq 1 ] || err "daemon $bad: not one line"
	done <<- 'EOF'
		--window 0
		--window 2x
		--memory 10
		--memory 1T
		--dir relative/dir
		--mode heavy
		--light-window 5s/1s
		extra
	EOF
	ln -s /tmp "$T/link"
	timeout 20 "$GTRACE" daemon --dir "$T/link" > /dev/null 2> "$T/link.err"
	[ $? -eq 1 ] || err "--dir through a symlink was taken"
	grep -q 'cannot use --dir' "$T/link.err" || err "--dir symlink: $(cat "$T/link.err")"
}

add_case t_snapshot "daemon: status, a snapshot with the workload's exact launches and copies, -o, SIGTERM cleans up"
add_case t_window "daemon: a 3 s window drops older work; --last back to between two workloads and -p PID select; a pid never seen refused"
add_case t_names "daemon: names learned before the window's oldest chunk are in the snapshot"
add_case t_names_bound "daemon: the names kept for snapshots are those of the processes still in the window: after 30 jobs with long names and a bound for 12, a job whose lookups left the window has its kernels named, none lost"
add_case t_names_lost "daemon: names past a bound too small for the live processes are counted in status and the metrics, and said once"
add_case t_metrics "daemon --metrics: exact launches and calls per api over HTTP, 404 elsewhere, loopback only"
add_case t_triggers "daemon --trigger: sync>, error, exit, profiler, signal each write exactly one snapshot named after them; a second within the window suppressed"
add_case t_second_and_kill "daemon: a second one refused naming the first's pid; after SIGKILL the next one starts"
add_case t_log "daemon --log: 0600, nothing on stderr; SIGHUP reopens it after a rotation, refuses a symlink in its place and logs on; without --log SIGHUP is harmless"
add_case t_bad "daemon: bad options exit 2 with one line; snapshot without a daemon; --dir through a symlink refused"
run_cases "$@"
