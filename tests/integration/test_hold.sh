#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A libcuda that appears after the recorder started. The recorder starts
# without any (--all, --cgroup, -p, the daemon), says once that it waits,
# and traces the first copy a process opens; a process that opens a copy
# nobody knew of is held until that copy's probes are attached, so that its
# calls right after the dlopen are recorded too: every one, against the
# program's own count. Where a process may not be held (a job of a
# job-control shell, a ptraced one) or cannot be (a recorder that does not
# answer, an attach slower than the bound), it runs on and the trace, dump
# --summary, analyze and the recorder's last lines say which calls may be
# missing; a recorder SIGKILLed while a process is held leaves it to the
# watchdog, which continues it at once.
#
# The workload copies the mock libcuda itself (--copy-lib DIR: a file that
# did not exist when the recorder started) and calls cuInit right after its
# dlopen, then about a thousand more calls; it logs its own counts and how
# long its dlopen took.
REQUIRES="root jq mock gtrace"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_all_waits t_all_copy t_job_not_held t_ptrace_not_held t_stale t_timeout t_sigkill"
. "$(dirname "$0")/lib.sh"

N=1000 M=2 K=2

# The driver's usual places (user/record/probes/libcuda_finder.c): a case that
# waits for a libcuda needs a machine without one there.
no_driver_libcuda() {
	local f
	for f in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/lib/libcuda.so.1 \
		/usr/local/nvidia/lib64/libcuda.so.1 /usr/local/nvidia/lib/libcuda.so.1 \
		/usr/lib/wsl/lib/libcuda.so.1 /run/opengl-driver/lib/libcuda.so.1; do
		[ -e "$f" ] && fatal "a driver libcuda is installed ($f): this case needs a machine without one"
	done
	return 0
}

# said_once FILE: FILE says exactly once that the recorder waits for a libcuda.
said_once() {
	local n
	n=$(grep -c 'waiting for a libcuda' "$1")
	[ "$n" -eq 1 ] || err "'waiting for a libcuda' said $n times in $1, expected once: $(head -n 4 "$1" | tr '\n' '|')"
}

# copy_workload NAME DIR ARGS...: the workload in the background, loading a
# copy of the mock it makes in DIR; sets WPID.
copy_workload() {
	local name=$1 dir=$2
	shift 2
	start_workload "$name" GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=100 -- --copy-lib "$dir" "$@"
}

# every_call LABEL DUMP PID WJ: PID's recorded calls are exactly the
# program's own, which are those of the sequence.
every_call() {
	compare_counts "$1: the program's own counts" "$(wl_counts "$4")" "$(expected_counts $N $M $K)"
	compare_counts "$1: calls recorded of pid $3 against the program's own" \
		"$(counts_of "$2" "$3")" "$(wl_counts "$4")"
}

# summary FILE OUT: dump --summary FILE into OUT.
summary() {
	gtrace_ok "$2" dump --summary "$1"
}

# held_ok SUMMARY PID LIB WJ: the summary lists PID held while LIB's probes
# were attached, and the hold fits in the program's own dlopen time.
held_ok() {
	local line ns dl
	line=$(grep -E "^  pid $2 held [0-9]+ ns: $3\$" "$1")
	[ -n "$line" ] || { err "dump --summary does not list pid $2 held for $3: $(sed -n '/^libcuda loads/,/^$/p' "$1" | tr '\n' '|')"; return; }
	ns=$(awk '{ print $4 }' <<< "$line")
	dl=$(jq -r .dlopen_ns <<< "$4")
	[ "$ns" -gt 0 ] && [ "$ns" -le "$dl" ] || err "pid $2 held $ns ns, its own dlopen took $dl ns: the hold is inside the dlopen"
	grep -q 'probe gap' "$T/tracer.err" && err "the recorder reports a probe gap: $(grep 'probe gap' "$T/tracer.err")"
	return 0
}

# gap_of SUMMARY PID LIB WHY: the summary lists a gap of PID in LIB for WHY
# (the outcome's words); sets GAP (its line).
gap_of() {
	GAP=$(grep -F "  pid $2 gap +" "$1" | grep -F "($4): $3")
	[ -n "$GAP" ] || err "dump --summary does not list a gap of pid $2 in $3 ($4): $(sed -n '/^libcuda loads/,/^$/p' "$1" | tr '\n' '|')"
}

# gap_said PID TRACE: the recorder's last lines and analyze say pid PID may
# miss calls (analyze in a note; when the gap took every call, in the line
# that says there is nothing to analyze).
gap_said() {
	local rc
	grep -Eq 'wrote .*, [0-9]+ probe gaps?, ' "$T/tracer.err" ||
		err "the recorder's last line does not count the probe gap: $(grep wrote "$T/tracer.err")"
	grep -q "ran a libcuda or libnccl before its probes were attached: some of its calls may be missing (the first: pid $1," "$T/tracer.err" ||
		err "the recorder does not warn of pid $1's missing calls: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	"$GTRACE" analyze "$2" > "$T/az.txt" 2> "$T/az.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 1 ] && grep -q "holds no CUDA calls: nothing to analyze; 1 process ran a libcuda or libnccl before its probes were attached" "$T/az.err" ||
			err "analyze: status $rc, $(cat "$T/az.err")"
	else
		grep -q "^note: pid $1 ran .* before its probes were attached" "$T/az.txt" ||
			err "analyze has no note of pid $1's gap: $(grep '^note' "$T/az.txt" | tr '\n' '|')"
	fi
}

# state_of PID: the state letter of /proc/PID/stat.
state_of() {
	awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null
}

# 1. --all before any libcuda: it starts, says once that it waits, and
# records every call of a program that copies the mock after it started and
# calls it right after its dlopen.
t_all_waits() {
	no_driver_libcuda
	start_tracer --all -o "$T/all.gtrace"
	said_once "$T/tracer.err"
	copy_workload wl "$T/late" --launches $N --copies $M --syncs $K
	finish_workload wl "$WPID"
	stop_tracer INT
	said_once "$T/tracer.err"
	grep -q "probes), the first libcuda found$" "$T/tracer.err" || err "no line saying the first libcuda was found"
	dump_trace "$T/all.gtrace" "$T/all.json"
	every_call "--all started before any libcuda" "$T/all.json" "$WPID" "$WJ"
	summary "$T/all.gtrace" "$T/all.sum"
	held_ok "$T/all.sum" "$WPID" "$T/late/libcuda.so.1" "$WJ"
}

# 2. --all with the mock known: a copy of it in a new place (a new inode)
# loaded and called at once is held until its own probes are attached.
t_all_copy() {
	start_tracer --all --libcuda "$MOCK_LIB" -o "$T/copy.gtrace"
	copy_workload wl "$T/copy" --launches $N --copies $M --syncs $K
	finish_workload wl "$WPID"
	stop_tracer INT
	dump_trace "$T/copy.gtrace" "$T/copy.json"
	every_call "--all, a copy made after the start" "$T/copy.json" "$WPID" "$WJ"
	summary "$T/copy.gtrace" "$T/copy.sum"
	held_ok "$T/copy.sum" "$WPID" "$T/copy/libcuda.so.1" "$WJ"
	check_launches "launches through the copy" "$T/copy.json" "$WPID" "$WJ" $N
}

# 3. -- CMD: CMD is started held until the known probes are in place; a copy
# it makes and dlopens later is covered too.
t_cmd_copy() {
	local rc
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=100 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/cmd.gtrace" -- \
		"$WORKLOAD" --copy-lib "$T/wheel" --launches $N --copies $M --syncs $K \
		> "$T/cmd.out" 2> "$T/tracer.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -- CMD exited $rc: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/cmd.out" | tail -n 1)
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/cmd.gtrace" "$T/cmd.json"
	every_call "-- CMD, its own copy" "$T/cmd.json" "$WL_PID" "$WJ"
	summary "$T/cmd.gtrace" "$T/cmd.sum"
	held_ok "$T/cmd.sum" "$WL_PID" "$T/wheel/libcuda.so.1" "$WJ"
}

# 4. -p PID of a process that has no libcuda yet: the recorder waits, then
# records every call of it.
t_pid_waits() {
	local p
	no_driver_libcuda
	copy_workload wl "$T/plib" --open-signal --launches $N --copies $M --syncs $K
	p=$WPID
	wait_line "$T/wl.out" "^waiting $p\$" 20 "$p" || fatal "the workload did not print 'waiting $p'"
	start_tracer -p "$p" -o "$T/pid.gtrace"
	said_once "$T/tracer.err"
	kill -USR1 "$p"
	finish_workload wl "$p"
	# the recording ends by itself once the process has exited
	wait_exit "$TRACER_PID" 30 || fatal "gtrace-bpf -p did not stop after pid $p exited"
	[ "$WAIT_RC" -eq 0 ] || err "gtrace-bpf -p exited $WAIT_RC: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	dump_trace "$T/pid.gtrace" "$T/pid.json"
	every_call "-p of a process without libcuda at the start" "$T/pid.json" "$p" "$WJ"
}

# 5. --cgroup before any libcuda: it waits, then records every call of a
# process of the cgroup.
t_cgroup_waits() {
	local cg2 cg
	no_driver_libcuda
	cg2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	[ -n "$cg2" ] || fatal "no cgroup2 file system is mounted"
	cg=$cg2/gtrace-test-$$-hold
	mkdir "$cg" || fatal "cannot make the cgroup $cg"
	# shellcheck disable=SC2064
	trap "case_cleanup; rmdir '$cg' 2> /dev/null" EXIT
	start_tracer --cgroup "$cg" -o "$T/cg.gtrace"
	said_once "$T/tracer.err"
	IN_CGROUP=$cg copy_workload wl "$T/cglib" --launches $N --copies $M --syncs $K
	finish_workload wl "$WPID"
	stop_tracer INT
	dump_trace "$T/cg.gtrace" "$T/cg.json"
	every_call "--cgroup started before any libcuda" "$T/cg.json" "$WPID" "$WJ"
}

# 6. The daemon before any libcuda: it starts, its status says it waits; a
# snapshot holds every call of a program that loaded a copy afterwards, and
# status counts the hold.
t_daemon_waits() {
	local snap v
	no_driver_libcuda
	export GTRACE_RUN_DIR=$T/run
	mkdir -p -m 0700 "$T/snaps"
	"$GTRACE" daemon --mode full --dir "$T/snaps" > "$T/daemon.out" 2> "$T/tracer.err" &
	DPID=$!
	PIDS+=("$DPID")
	wait_line "$T/tracer.err" '^gtrace-bpf: recording' 30 "$DPID" ||
		fatal "the daemon did not start: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
	said_once "$T/tracer.err"
	"$GTRACE" status -v > "$T/st1" 2>&1 || fatal "status failed: $(cat "$T/st1")"
	grep -qx 'libcuda_waiting 1' "$T/st1" || err "status does not say it waits for a libcuda: $(grep libcuda "$T/st1" | tr '\n' '|')"
	grep -qx 'libcuda_files 0' "$T/st1" || err "status libcuda_files: $(grep libcuda_files "$T/st1")"
	copy_workload wl "$T/dlib" --launches $N --copies $M --syncs $K
	finish_workload wl "$WPID"
	snap=$("$GTRACE" snapshot 2> "$T/snap.err") || fatal "snapshot failed: $(cat "$T/snap.err")"
	"$GTRACE" status -v > "$T/st2" 2>&1 || fatal "status failed: $(cat "$T/st2")"
	grep -qx 'libcuda_waiting 0' "$T/st2" || err "status still waits after a libcuda was found: $(grep libcuda "$T/st2" | tr '\n' '|')"
	v=$(awk '$1 == "holds" { print $2 }' "$T/st2")
	[ "${v:-0}" -ge 1 ] || err "status holds '$v', expected 1 or more"
	v=$(awk '$1 == "probe_gaps" { print $2 }' "$T/st2")
	[ "$v" = 0 ] || err "status probe_gaps '$v', expected 0"
	kill -TERM "$DPID"
	wait_exit "$DPID" 30 || fatal "the daemon did not stop within 30 s of SIGTERM"
	dump_trace "$snap" "$T/d.json"
	every_call "the daemon started before any libcuda" "$T/d.json" "$WPID" "$WJ"
}

# 7. A foreground job of an interactive shell on a terminal is not held: the
# shell must not see it stop (it would take the terminal back and print
# "Stopped"). It finishes; the gap is in the trace.
t_job_not_held() {
	local p st
	start_tracer --all --libcuda "$MOCK_LIB" -o "$T/job.gtrace"
	printf '%s\n' "GT_LIBCUDA='$MOCK_LIB' GT_MOCK_SYNC_US=100 '$WORKLOAD' --copy-lib '$T/jl' --launches 200 --copies $M --syncs $K > '$T/job.out' 2> '$T/job.err'; echo \"status \$?\" > '$T/job.status'" \
		'exit' | timeout 60 script -qefc 'bash --norc --noprofile -i' "$T/typescript" > /dev/null 2>&1
	st=$(cat "$T/job.status" 2> /dev/null)
	[ "$st" = "status 0" ] || fatal "the job did not finish with status 0: '$st'; $(tail -n 3 "$T/job.err" | tr '\n' '|')"
	grep -q 'Stopped' "$T/typescript" && err "the interactive shell saw its job stop: $(grep Stopped "$T/typescript")"
	p=$(grep '^{' "$T/job.out" | tail -n 1 | jq .pid)
	stop_tracer INT
	summary "$T/job.gtrace" "$T/job.sum"
	gap_of "$T/job.sum" "$p" "$T/jl/libcuda.so.1" "not held: a job of a job-control shell"
	gap_said "$p" "$T/job.gtrace"
}

# 8. A ptraced process is not held (its tracer would see the stop).
t_ptrace_not_held() {
	local p
	command -v strace > /dev/null || fatal "strace is not installed (apt-get install strace)"
	start_tracer --all --libcuda "$MOCK_LIB" -o "$T/pt.gtrace"
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=100 strace -f -o /dev/null "$WORKLOAD" --copy-lib "$T/ptl" \
		--launches 40 --copies $M --syncs $K > "$T/pt.out" 2> "$T/pt.err" ||
		fatal "the workload under strace failed: $(tail -n 3 "$T/pt.err" | tr '\n' '|')"
	p=$(grep '^{' "$T/pt.out" | tail -n 1 | jq .pid)
	stop_tracer INT
	summary "$T/pt.gtrace" "$T/pt.sum"
	gap_of "$T/pt.sum" "$p" "$T/ptl/libcuda.so.1" "not held: ptraced"
	gap_said "$p" "$T/pt.gtrace"
}

# 9. A recorder that does not answer (stopped) holds nobody: the program
# runs to its end meanwhile; the gap is recorded once the recorder goes on.
# Its heartbeat is stale after 0.5 s (GT_HOLD_STALE_NS).
t_stale() {
	start_tracer --all --libcuda "$MOCK_LIB" -o "$T/st.gtrace"
	kill -STOP "$TRACER_PID"
	sleep 1
	copy_workload wl "$T/stl" --launches 40 --copies $M --syncs $K
	wait_exit "$WPID" 60
	kill -CONT "$TRACER_PID"
	[ "$WAIT_RC" -eq 0 ] || fatal "the workload did not finish while the recorder was stopped (status $WAIT_RC)"
	WJ=$(grep '^{' "$T/wl.out" | tail -n 1)
	stop_tracer INT
	summary "$T/st.gtrace" "$T/st.sum"
	gap_of "$T/st.sum" "$WPID" "$T/stl/libcuda.so.1" "not held: the recorder was not answering"
	gap_said "$WPID" "$T/st.gtrace"
}

# 10. An attach slower than the bound (made so: 3 s): the process continues
# at the bound (its own dlopen time is 1 s or more, less than the 3 s), and
# the trace says it was continued before its probes were in place.
t_timeout() {
	local dl
	GTRACE_TEST_ATTACH_DELAY_MS=3000 start_tracer --all --libcuda "$MOCK_LIB" -o "$T/to.gtrace"
	copy_workload wl "$T/tol" --launches 40 --copies $M --syncs $K
	finish_workload wl "$WPID"
	dl=$(jq -r .dlopen_ns <<< "$WJ")
	[ "$dl" -ge 1000000000 ] || err "the dlopen took $dl ns: the process was not held to the 1 s bound"
	[ "$dl" -lt 3000000000 ] || err "the dlopen took $dl ns: the process waited for the slow attach, not the bound"
	stop_tracer INT
	summary "$T/to.gtrace" "$T/to.sum"
	gap_of "$T/to.sum" "$WPID" "$T/tol/libcuda.so.1" "held, continued at the bound before its probes were attached"
	gap_said "$WPID" "$T/to.gtrace"
}

# 11. The recorder SIGKILLed while a process is held (its attach made to take
# a minute, the bound a minute too): the watchdog continues the process at
# once (its dlopen ends within a second of the kill), and ends itself.
t_sigkill() {
	local wd t0 end i
	GTRACE_TEST_ATTACH_DELAY_MS=60000 GTRACE_HOLD_BOUND_MS=60000 \
		start_tracer --all --libcuda "$MOCK_LIB" -o "$T/k.gtrace"
	wd=$(tracer_child gtrace-watchdog)
	[ -n "$wd" ] || fatal "no gtrace-watchdog child of the recorder $TRACER_PID"
	copy_workload wl "$T/kl" --launches 40 --copies $M --syncs $K
	for ((i = 0; i < 400; i++)); do
		[ "$(state_of "$WPID")" = T ] && break
		nap 0.05
	done
	[ "$(state_of "$WPID")" = T ] || fatal "the workload (pid $WPID) was not held: state $(state_of "$WPID")"
	t0=$(date +%s%N)
	kill -KILL "$TRACER_PID"
	finish_workload wl "$WPID"
	end=$(jq -r .dlopen_end_real_ns <<< "$WJ")
	[ $((end - t0)) -lt 1000000000 ] ||
		err "the held workload went on $(( (end - t0) / 1000000 )) ms after the recorder was killed, not within the 1 s bound"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$wd" 2> /dev/null || break
		nap 0.05
	done
	kill -0 "$wd" 2> /dev/null && err "the watchdog (pid $wd) still runs 10 s after the recorder was killed"
	return 0
}

add_case t_all_waits "--all before any libcuda: starts, says once it waits; every call of a copy loaded and called at once after the start, held meanwhile"
add_case t_all_copy "--all: a copy of the known libcuda in a new place, called right after its dlopen: every call, the process held while its probes were attached"
add_case t_cmd_copy "-- CMD: a copy CMD makes and dlopens after its start: every call"
add_case t_pid_waits "-p of a process without libcuda yet: waits, then every call"
add_case t_cgroup_waits "--cgroup before any libcuda: waits, then every call of its process"
add_case t_daemon_waits "daemon before any libcuda: starts, status says it waits, a snapshot holds every call, status counts the hold"
add_case t_job_not_held "a foreground job of an interactive shell is not held (no 'Stopped'): it finishes, the gap in dump --summary, analyze and the last lines"
add_case t_ptrace_not_held "a ptraced process is not held: the gap in dump --summary, analyze and the last lines"
add_case t_stale "a stopped recorder holds nobody: the program runs to its end, the gap recorded"
add_case t_timeout "an attach slower than the bound: the process continues at the 1 s bound, the gap recorded as such"
add_case t_sigkill "the recorder SIGKILLed while a process is held: the watchdog continues it at once and ends"
run_cases "$@"
