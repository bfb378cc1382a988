#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf daemon --cupti against the mock libcuda, which loads the real
# CUPTI agent over the mock libcupti (GT_MOCK_INJECTION=1) as the driver
# would: snapshots hold the GPU kernels (with names), copies, sets, API
# records and NVTX of the programs that joined, linked to their calls; the
# gpu-idle trigger fires once on a planted idle gap and never without one,
# for a process without the agent, or before a process used its GPU; spool
# files give back what was read and go once their process has; a daemon
# after a SIGKILLed one takes the agents over where it stopped reading;
# snapshots under a flood of GPU records are merged off the recording loop;
# bad specs exit 2 with one line. Each case has its own run directory
# (GTRACE_RUN_DIR, which the agents read too) and snapshot directory.
REQUIRES="root jq mock gtrace"
# it times the recording loop: nothing else beside it, the plain build only
QUIET_CASES="t_stall"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
# t_snapshot and t_takeover check the session of every process (scope all),
# t_gap and t_no_gap the GPU's idle time and t_bounded a rate that a loaded
# machine changes: solo in both passes
SCOPED_CASES="t_attach_trigger t_attach_demand_idle t_attach_demand t_bad"
. "$(dirname "$0")/lib.sh"

OUT_DIR=$(dirname "$MOCK_DIR")
AGENT=$OUT_DIR/libgtrace-cupti.so
CUPTI_MOCK=$OUT_DIR/cupti/mock
DRIVER=$CUPTI_MOCK/agent_driver

need_cupti() {
	[ -f "$AGENT" ] && [ -x "$DRIVER" ] && ls "$CUPTI_MOCK"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($AGENT, $CUPTI_MOCK): build them with make cupti-mock (needs cupti.h)"
}

# start_cupti_daemon ARGS...: start_daemon --cupti ARGS with the agent of
# this build.
start_cupti_daemon() {
	need_cupti
	start_daemon --cupti --cupti-lib "$AGENT" "$@"
	RUN=$T/run/cupti
}

# the environment of a program started with the agent (run_wl NAME
# "${AGENT_ENV[@]}" ARGS...)
AGENT_ENV=(GT_MOCK_INJECTION=1 "CUDA_INJECTION64_PATH=$AGENT" "LD_LIBRARY_PATH=$CUPTI_MOCK")

count() { # DUMP PID JQ-SELECT: records of PID that SELECT keeps
	jq -s --argjson p "$2" "[.[] | select(.pid == \$p and ($3))] | length" "$1"
}

status_of() { "$GTRACE" status -v | awk -v k="$1" '$1 == k { print $2 }'; }

# A snapshot holds every GPU record of the programs that joined, linked.
t_snapshot() {
	local got dp
	start_cupti_daemon --mode full --window 30s
	[ "$(cat "$RUN/session")" = "scope all" ] || err "the session says '$(cat "$RUN/session")' while the daemon runs"
	run_wl a "${AGENT_ENV[@]}" --launches 40 --copies 3
	a=$WP
	# the agent's own driver: 100 kernels, a copy, a set, an NVTX range
	env LD_LIBRARY_PATH="$CUPTI_MOCK" "$DRIVER" "$AGENT" ine > "$T/drv.out" 2> "$T/drv.err" &
	dp=$!
	wait "$dp" || fatal "agent_driver failed: $(cat "$T/drv.err")"
	sleep 1.5
	snap
	dump_trace "$SNAP" "$T/s.json"
	got=$(count "$T/s.json" "$a" '.type == "gpu_kernel"')
	[ "$got" -eq 40 ] || err "the snapshot holds $got GPU kernels of the workload's 40 launches"
	got=$(jq -s -c --argjson p "$a" '[.[] | select(.pid == $p and .type == "gpu_kernel") | .mangled] | unique' "$T/s.json")
	[ "$got" = "[\"$M_FILL\",\"$M_SCALE\",\"$M_VECADD\"]" ] || err "kernel names in the snapshot: $got"
	got=$(count "$T/s.json" "$a" '.type == "gpu_kernel" and .launch_ts != null')
	[ "$got" -eq 40 ] || err "$got of 40 GPU kernels linked to their launch"
	got=$(count "$T/s.json" "$a" '.type == "gpu_memcpy"')
	[ "$got" -eq 4 ] || err "$got GPU copies, expected 4 (3 HtoD, 1 DtoH)"
	got=$(count "$T/s.json" "$a" '.type == "gpu_memset"')
	[ "$got" -eq 1 ] || err "$got GPU sets, expected 1"
	"$GTRACE" dump --summary "$SNAP" > "$T/sum.out" 2>&1 || err "dump --summary failed: $(head -n 3 "$T/sum.out")"
	grep -q 'cupti=merged' "$T/sum.out" || err "the snapshot's options do not say cupti=merged"
	# CUPTI's records of the calls: the workload's 45, the driver's 100
	got=$(awk '$1 == "api" && $2 == "records" { print $3 }' "$T/sum.out")
	[ "$got" = 145 ] || err "$got GPU API records, expected 145"
	got=$(count "$T/s.json" "$dp" '.type == "gpu_kernel" and .mangled == "_Z10mockKernelv"')
	[ "$got" -eq 100 ] || err "agent_driver: $got of its 100 kernels"
	got=$(count "$T/s.json" "$dp" '.type == "nvtx" and .name == "mock range"')
	[ "$got" -eq 1 ] || err "agent_driver: $got NVTX ranges 'mock range', expected 1"
	got=$(count "$T/s.json" "$dp" '.type == "gpu_memcpy" or .type == "gpu_memset"')
	[ "$got" -eq 2 ] || err "agent_driver: $got copies and sets, expected 2"
	# both exited: their spool files are gone
	got=$(find "$RUN" -name 'gtrace-cupti.*.spool' | wc -l)
	[ "$got" -eq 0 ] || err "$got spool files left in $RUN after their processes exited"
	[ "$(status_of cupti_spool_removed)" = 2 ] || err "status: cupti_spool_removed $(status_of cupti_spool_removed), expected 2"
	stop_daemon
	[ ! -e "$RUN/session" ] || err "the session is left after the daemon stopped"
	[ -z "$(ls "$RUN" | grep -v '^recorder$')" ] || err "$RUN holds more than the lock file after the daemon stopped: $(ls -A "$RUN" | tr '\n' ' ')"
}

trig_files() { find "$T/snaps" -name 'system_gpu-idle_trigger_*.gtrace' | sort; }

# A planted 1.5 s gap fires gpu-idle once, snapshot and record named after it.
t_gap() {
	local files got gap
	start_cupti_daemon --mode full --window 30s --trigger 'gpu-idle>500ms' --post 1s
	run_wl g "${AGENT_ENV[@]}" --launches 40 --gpu-idle 1500
	for _ in $(seq 60); do [ -n "$(trig_files)" ] && break; sleep 0.1; done
	sleep 1
	files=$(trig_files)
	[ "$(grep -c . <<< "$files")" -eq 1 ] || fatal "$(grep -c . <<< "$files") gpu-idle snapshots, expected 1: $(ls "$T/snaps" | tr '\n' ' ')"
	dump_trace "$files" "$T/g.json"
	got=$(jq -s -c '[.[] | select(.type == "trigger")]' "$T/g.json")
	# the idle it fired on: over the threshold, and no longer than the
	# workload's gap between two kernels as the snapshot has them (the
	# 1.5 s sleep and whatever the machine added to it)
	gap=$(jq -s --argjson p "$WP" '[.[] | select(.pid == $p and .type == "gpu_kernel")] | sort_by(.ts)
		| [range(1; length) as $i | .[$i].ts - (.[$i - 1].ts + .[$i - 1].dur)] | max' "$T/g.json")
	log "the kernels' longest gap $gap ns; the trigger's wait $(jq -c '[.[].wait_ns]' <<< "$got")"
	jq -e --argjson p "$WP" --argjson gap "$gap" 'length == 1 and .[0].kind == "gpu-idle" and .[0].pid == $p and
		.[0].wait_ns > 500000000 and .[0].wait_ns <= $gap' <<< "$got" > /dev/null ||
		err "the trigger records of the gpu-idle snapshot: $got, the kernels' longest gap $gap ns"
	got=$(count "$T/g.json" "$WP" '.type == "gpu_kernel"')
	[ "$got" -eq 40 ] || err "the gpu-idle snapshot holds $got of 40 kernels"
	# the gap closed later: the same gap, not fired again
	[ "$(status_of triggers_fired)" = 1 ] || err "status: triggers_fired $(status_of triggers_fired), expected 1"
	[ "$(status_of gpu_idle_gaps)" = 1 ] || err "status: gpu_idle_gaps $(status_of gpu_idle_gaps), expected 1"
	stop_daemon
}

# No gap, no agent, no GPU work yet: none fires.
t_no_gap() {
	start_cupti_daemon --mode full --window 30s --trigger 'gpu-idle>500ms' --post 0
	run_wl n "${AGENT_ENV[@]}" --launches 40 --copies 3
	# the same gap without the agent: nothing to tell the GPU's idle time by
	run_wl na --launches 40 --gpu-idle 1500
	# alive 1.5 s with the agent before any GPU work, then 100 kernels
	env LD_LIBRARY_PATH="$CUPTI_MOCK" "$DRIVER" "$AGENT" issse > "$T/drv.out" 2> "$T/drv.err" ||
		fatal "agent_driver failed: $(cat "$T/drv.err")"
	sleep 1.5	# the first workload exited 3 s ago: exited, it does not fire
	[ "$(status_of triggers_fired)" = 0 ] || err "status: triggers_fired $(status_of triggers_fired), expected 0"
	[ -z "$(trig_files)" ] || err "a gpu-idle snapshot without a gap: $(trig_files)"
	[ "$(status_of cupti_marks)" -gt 0 ] || err "status: no flush marks read"
	stop_daemon
}

# Spool files give back what was read: at 10000 launches a second the file
# grows, its blocks do not; nothing is skipped and every kernel is there.

# gpu_kernels SNAPSHOT: the GPU kernels it holds, every process' (summary)
gpu_kernels() {
	"$GTRACE" dump --summary "$1" | awk '/^gpu$/ { g = 1 } g && $1 == "kernels" { print $2; exit }'
}

t_bounded() {
	local size disk got
	start_cupti_daemon --mode full --window 30s
	start_workload f "${AGENT_ENV[@]}" "GT_LIBCUDA=$MOCK_LIB" GT_MOCK_GPU_NS=1000 -- --flood 3 --rate 10000
	local wp=$WPID
	sleep 2.5
	size=$(stat -c %s "$RUN/gtrace-cupti.$wp.spool" 2> /dev/null || echo 0)
	disk=$(( $(stat -c %b "$RUN/gtrace-cupti.$wp.spool" 2> /dev/null || echo 0) * 512 ))
	[ "$size" -gt $((2 << 20)) ] || err "the spool grew to $size bytes only"
	[ "$disk" -lt $((size / 2)) ] || err "the spool holds $disk bytes on disk of its $size"
	wait_exit "$wp" 30 || fatal "the flood did not end"
	got=$(grep '^{' "$T/f.out" | tail -n 1 | jq '[.launches[]] | add')
	sleep 1.5
	[ "$(status_of cupti_spool_given_back_bytes)" -gt 0 ] || err "status: nothing given back"
	[ "$(status_of cupti_spool_skipped_bytes)" = 0 ] || err "status: $(status_of cupti_spool_skipped_bytes) bytes skipped"
	snap
	[ "$(gpu_kernels "$SNAP")" = "$got" ] || err "the snapshot holds $(gpu_kernels "$SNAP") GPU kernels of $got launches"
	stop_daemon
}

# A daemon killed with SIGKILL leaves its spool files; the next takes the
# agents over and reads on where the first stopped reading: nothing skipped,
# every launch in its window with its kernel.
t_takeover() {
	local wp launches got
	start_cupti_daemon --mode full --window 30s
	start_workload k "${AGENT_ENV[@]}" "GT_LIBCUDA=$MOCK_LIB" GT_MOCK_GPU_NS=1000 -- --flood 8 --rate 10000
	wp=$WPID
	sleep 1.5
	kill -KILL "$DPID"
	wait "$DPID" 2> /dev/null
	start_cupti_daemon --mode full --window 30s
	wait_exit "$wp" 30 || fatal "the flood did not end"
	sleep 1.5
	[ "$(status_of cupti_spool_resyncs)" = 0 ] || err "status: cupti_spool_resyncs $(status_of cupti_spool_resyncs), expected 0"
	[ "$(status_of cupti_records_before_start)" -gt 0 ] || err "status: nothing of the first daemon's time left out"
	snap
	dump_trace "$SNAP" "$T/k.json"
	launches=$(launches_of "$T/k.json" "$wp")
	got=$(count "$T/k.json" "$wp" '.type == "gpu_kernel" and .launch_ts != null')
	log "the second daemon recorded $launches launches"
	[ "$launches" -gt 0 ] || err "the second daemon recorded no launch of the flood"
	[ "$got" = "$launches" ] || err "the second daemon's snapshot holds $got linked GPU kernels of its $launches launches"
	[ ! -e "$RUN/gtrace-cupti.$wp.spool" ] || err "the spool is left after its process exited"
	stop_daemon
}

# Snapshots taken while a program floods GPU records: each is merged on the
# snapshot writer's thread (the reply comes when the merged file is done),
# the recording loop is held a few ms by each (the drain of the spools and
# the flush included), nothing is dropped or skipped, every kernel is in the
# last one.
t_stall() {
	local wp i got want held stall
	start_cupti_daemon -v --mode full --window 60s --memory 256M
	start_workload s "${AGENT_ENV[@]}" "GT_LIBCUDA=$MOCK_LIB" GT_MOCK_GPU_NS=1000 -- --flood 4 --rate 20000 --ranges 0
	wp=$WPID
	sleep 1.5
	for i in 1 2 3; do
		snap -o "$T/s$i.gtrace"
		"$GTRACE" dump --summary "$SNAP" > "$T/sum$i.out" 2>&1 || err "dump --summary of snapshot $i under the flood failed"
		grep -q 'cupti=merged' "$T/sum$i.out" || err "snapshot $i under the flood is not merged (no cupti=merged)"
	done
	wait_exit "$wp" 30 || fatal "the flood did not end"
	[ "$WAIT_RC" -eq 0 ] || fatal "the flood failed: $(tail -n 2 "$T/s.err" | tr '\n' '|')"
	sleep 1.5
	[ "$(grep -c 'merged [0-9]* GPU records' "$T/daemon.err")" -eq 3 ] ||
		err "$(grep -c 'merged [0-9]* GPU records' "$T/daemon.err") merges in the log for 3 snapshots"
	want=$(grep '^{' "$T/s.out" | tail -n 1 | jq '[.launches[]] | add')
	snap -o "$T/last.gtrace"
	got=$(gpu_kernels "$SNAP")
	[ "$got" = "$want" ] || err "the snapshot after the flood holds $got GPU kernels of $want launches"
	[ "$(status_of dropped)" = 0 ] || err "status dropped: $(status_of dropped)"
	[ "$(status_of cupti_spool_skipped_bytes)" = 0 ] || err "status: $(status_of cupti_spool_skipped_bytes) spool bytes skipped"
	held=$(sed -n 's/.*the recording loop held \([0-9.]*\) ms.*/\1/p' "$T/daemon.err" | sort -g | tail -n 1)
	stall=$(status_of loop_stall_snapshot_max_ms)
	log "longest hold of the loop by a snapshot ${held:-?} ms; its longest pass with one asked or being merged ${stall:-?} ms (any pass: $(status_of loop_stall_max_ms) ms)"
	[ -n "$held" ] && awk -v h="$held" 'BEGIN { exit !(h < 30) }' || err "a snapshot held the recording loop ${held:-?} ms, expected < 30"
	[ -n "$stall" ] && awk -v s="$stall" 'BEGIN { exit !(s < 200) }' || err "a pass of the loop took ${stall:-?} ms while a snapshot was written, expected < 200"
	stop_daemon
}

t_bad() {
	local bad rc
	export GTRACE_RUN_DIR=$T/run
	while IFS= read -r bad; do
		# shellcheck disable=SC2086
		"$GTRACE" daemon $bad > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "daemon $bad exited $rc, expected 2: $(head -n 2 "$T/bad.err" | tr '\n' '|')"
		[ "$(grep -c . "$T/bad.err")" -eq 1 ] || err "daemon $bad: not one line: $(tr '\n' '|' < "$T/bad.err")"
	done <<- 'EOF'
		--cupti --trigger gpu-idle>
		--cupti --trigger gpu-idle>-1s
		--cupti --trigger gpu-idle>0
		--cupti --trigger gpu-idle<1s
		--trigger gpu-idle>500ms
		--cupti-lib /nonexistent
	EOF
	"$GTRACE" daemon --cupti --trigger 'gpu-idle>-1s' 2>&1 | grep -q "invalid --trigger 'gpu-idle>-1s': TIME is a time > 0" ||
		err "gpu-idle>-1s: the line does not say what TIME is"
	"$GTRACE" daemon --trigger 'gpu-idle>500ms' 2>&1 | grep -q 'needs --cupti' ||
		err "gpu-idle without --cupti: the line does not say it needs --cupti"
}

# the program started without the agent (no injection), its libcupti the mock
PLAIN_ENV=("GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK")

# finalized N: the program w's stderr says CUPTI was finalized N times, each
# in an API exit callback (the agent detached); waits for the Nth (20 s at most)
finalized() {
	local i
	for ((i = 0; i < 400; i++)); do
		[ "$(grep -c 'cuptiFinalize in an API exit callback' "$T/w.err")" -ge "$1" ] && break
		nap 0.05
	done
	[ "$(grep -c 'cuptiFinalize in an API exit callback' "$T/w.err")" -eq "$1" ] &&
		! grep -q 'outside an API callback' "$T/w.err"
}

# A slow synchronize in a running program started without the agent fires
# the sync trigger, which attaches the agent for 1 s: the snapshot, taken
# once it detached, holds the program's kernels, named and linked, and the
# attach; CUPTI is finalized in the program, which runs on.
t_attach_trigger() {
	local w got linked
	start_cupti_daemon --mode full --window 30s --trigger 'sync>30ms' --attach-cupti 1s --post 0.2s
	start_workload w "${PLAIN_ENV[@]}" GT_MOCK_SYNC_US=60000 -- --wait-signal --flood 30 --rate 400 --steady 1
	w=$WPID
	wait_ready w "$w"
	kill -USR1 "$w"
	wait_line "$T/daemon.err" "attach: pid $w detaches" 30 "$DPID" || fatal "no attach and detach: $(grep -i 'attach\|trigger' "$T/daemon.err" | tr '\n' '|')"
	finalized 1 || err "CUPTI not finalized once in an API exit callback: $(grep cuptiFinalize "$T/w.err" | tr '\n' '|')"
	for _ in $(seq 200); do
		f=$(find "$T/snaps" -name 'system_sync_trigger_*.gtrace' | head -n 1)
		[ -n "$f" ] && break
		nap 0.05
	done
	[ -n "$f" ] || fatal "no sync trigger snapshot: $(ls "$T/snaps" | tr '\n' ' ')"
	dump_trace "$f" "$T/t.json"
	got=$(count "$T/t.json" "$w" '.type == "gpu_kernel"')
	linked=$(count "$T/t.json" "$w" '.type == "gpu_kernel" and .launch_ts != null and .kernel != null')
	[ "$got" -ge 100 ] || err "the snapshot holds $got GPU kernels of the attached program in 1 s at 400 launches/s"
	[ "$linked" -eq "$got" ] || err "$linked of $got GPU kernels named and linked to their launch"
	got=$(count "$T/t.json" "$w" '.type == "cupti_attach" and .event == "attached" and .dur > 0')
	[ "$got" -eq 1 ] || err "$got attach records of the program, expected 1"
	kill -0 "$w" || fatal "the program died"
	kill -TERM "$w"
	wait_exit "$w" 20
	stop_daemon
}

# gtrace-bpf attach -p PID -d 1s: the agent into a running program on
# demand, the window holds its kernels linked, it detaches; twice, its
# threads and descriptors as before each time. Refused with one line and
# status 1: a static program, no such process, a daemon without --cupti.
# two_attaches_linked PID: a snapshot of PID ($T/d.json its dump) after two
# on-demand attaches of 1 s at 400 launches/s: at least 200 GPU kernels of
# it, every one linked to its launch.
two_attaches_linked() {
	local got
	snap -p "$1"
	dump_trace "$SNAP" "$T/d.json"
	got=$(count "$T/d.json" "$1" '.type == "gpu_kernel"')
	[ "$got" -ge 200 ] || err "the snapshot holds $got GPU kernels of two 1 s attaches at 400 launches/s"
	[ "$(count "$T/d.json" "$1" '.type == "gpu_kernel" and .launch_ts != null')" -eq "$got" ] ||
		err "not every GPU kernel linked: $(count "$T/d.json" "$1" '.type == "gpu_kernel" and .launch_ts == null') not"
}

# The daemon with --cupti-detach=idle: each on-demand attach records its
# second, then the agent detaches (its writer thread gone) and CUPTI stays
# loaded and idle: never finalized; every kernel of both in the window linked.
t_attach_demand_idle() {
	local w c
	start_cupti_daemon --mode full --window 30s --cupti-detach=idle
	start_workload w "${PLAIN_ENV[@]}" -- --wait-signal --flood 30 --rate 400 --steady 50
	w=$WPID
	wait_ready w "$w"
	kill -USR1 "$w"
	for c in 1 2; do
		"$GTRACE" attach -p "$w" -d 1s > "$T/a$c.out" 2> "$T/a$c.err" ||
			fatal "attach $c exited $?: $(cat "$T/a$c.err")"
		grep -q "^pid $w attached (held [0-9.]* ms)" "$T/a$c.out" || err "attach $c: $(cat "$T/a$c.out")"
		# the writer starts with the attach and ends with the detach
		grep -qx gtrace-cupti /proc/"$w"/task/*/comm || fatal "attach $c: the agent's writer is not running"
		for _ in $(seq 200); do
			grep -qx gtrace-cupti /proc/"$w"/task/*/comm 2> /dev/null || break
			nap 0.05
		done
		grep -qx gtrace-cupti /proc/"$w"/task/*/comm 2> /dev/null && fatal "attach $c: the agent did not detach in 10 s"
		[ "$(grep -c cuptiFinalize "$T/w.err")" -eq 0 ] ||
			err "attach $c: CUPTI finalized with --cupti-detach=idle: $(grep cuptiFinalize "$T/w.err" | tr '\n' '|')"
	done
	two_attaches_linked "$w"
	kill -TERM "$w"
	wait_exit "$w" 20
	stop_daemon
}

t_attach_demand() {
	local w n0 f0 c
	start_cupti_daemon --mode full --window 30s
	start_workload w "${PLAIN_ENV[@]}" -- --wait-signal --flood 30 --rate 400 --steady 50
	w=$WPID
	wait_ready w "$w"
	kill -USR1 "$w"
	n0=$(ls "/proc/$w/task" | wc -l)
	f0=$(ls "/proc/$w/fd" | wc -l)
	for c in 1 2; do
		"$GTRACE" attach -p "$w" -d 1s > "$T/a$c.out" 2> "$T/a$c.err" ||
			fatal "attach $c exited $?: $(cat "$T/a$c.err")"
		grep -q "^pid $w attached (held [0-9.]* ms)" "$T/a$c.out" || err "attach $c: $(cat "$T/a$c.out")"
		finalized "$c" || fatal "attach $c: CUPTI not finalized $c times: $(grep cuptiFinalize "$T/w.err" | tr '\n' '|')"
		[ "$(ls "/proc/$w/task" | wc -l)" -eq "$n0" ] && [ "$(ls "/proc/$w/fd" | wc -l)" -eq "$f0" ] ||
			err "attach $c: threads $(ls "/proc/$w/task" | wc -l) and descriptors $(ls "/proc/$w/fd" | wc -l), before $n0 and $f0"
	done
	sleep 1.5
	two_attaches_linked "$w"
	[ "$(count "$T/d.json" "$w" '.type == "cupti_attach" and .event == "attached"')" -eq 2 ] || err "not two attach records"
	[ "$(status_of attach_attached)" = 2 ] || err "status: attach_attached $(status_of attach_attached)"
	kill -TERM "$w"
	wait_exit "$w" 20
	# refused: one line, status 1, the process untouched
	PROG=$MOCK_DIR/inject_target_static start_workload s -- 3
	wait_line "$T/s.out" "^ready $WPID\$" 20 "$WPID" || fatal "the static program did not start"
	"$GTRACE" attach -p "$WPID" -d 1s > "$T/st.out" 2> "$T/st.err"
	[ $? -eq 1 ] && [ "$(wc -l < "$T/st.err")" -eq 1 ] && grep -q "pid $WPID is a static program" "$T/st.err" ||
		err "attach to a static program: $(cat "$T/st.err")"
	wait_exit "$WPID" 10
	[ "$WAIT_RC" -eq 0 ] || err "the static program exited $WAIT_RC after the refused attach"
	"$GTRACE" attach -p 4194000 -d 1s > /dev/null 2> "$T/np.err"
	[ $? -eq 1 ] && [ "$(wc -l < "$T/np.err")" -eq 1 ] || err "attach to no process: $(cat "$T/np.err")"
	[ "$(count "$T/d.json" "$w" '.type == "cupti_attach" and .event != "attached"')" -eq 0 ] || err "a refused attach recorded for the attached program"
	stop_daemon
	start_daemon --mode full --window 5s
	"$GTRACE" attach -p "$$" -d 1s > /dev/null 2> "$T/nc.err"
	[ $? -eq 1 ] && grep -q 'without --cupti' "$T/nc.err" || err "attach to a daemon without --cupti: $(cat "$T/nc.err")"
	stop_daemon
}

add_case t_snapshot "daemon --cupti: a snapshot holds the GPU kernels (named), copies, sets, API records and NVTX of the programs that joined, linked; their spool files go with them"
add_case t_gap "daemon --cupti --trigger gpu-idle>500ms: a planted 1.5 s GPU idle gap fires once, a snapshot and a trigger record named after it"
add_case t_no_gap "daemon --trigger gpu-idle: no gap, a process without the agent, a process before its first GPU work: none fires"
add_case t_bounded "daemon --cupti: spool files give back what was read; at 10000 launches/s nothing is skipped, every kernel in the snapshot"
add_case t_takeover "daemon --cupti: after a SIGKILLed daemon the next reads on where it stopped: every launch of its own with its kernel"
add_case t_stall "daemon --cupti: snapshots under a GPU-record flood are merged off the loop, which each holds a few ms; nothing dropped or skipped"
add_case t_attach_trigger "daemon --cupti --attach-cupti 1s: a slow sync's trigger attaches the agent to a program started without it; the snapshot after its detach holds its kernels named and linked"
add_case t_attach_demand_idle "daemon --cupti-detach=idle, gtrace-bpf attach twice: kernels linked, the agent detached each time, CUPTI never finalized"
add_case t_attach_demand "gtrace-bpf attach -p PID -d 1s twice: kernels linked in the window, detached each time, threads and descriptors as before; refusals one line, status 1"
add_case t_bad "daemon --cupti: bad gpu-idle specs and --cupti-lib without --cupti exit 2 with one line"
run_cases "$@"
