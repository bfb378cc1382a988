# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Helpers shared by the integration tests (sourced, not run).
#
# A test script defines one shell function per test case, registers it with
#     add_case FUNCTION "what it checks"
# lists what it needs in REQUIRES (root gtrace mock jq), and ends with
#     run_cases "$@"
# Each case runs in its own bash process, under a timeout, with its own
# temporary directory $T.  Inside a case:
#     err "what differed"     records a mismatch and carries on
#     fatal "why"             records it and ends the case
# A case passes when it ends normally having recorded nothing.  The script
# prints one line per case, "PASS <script>: <what>" or "FAIL <script>: <what>"
# followed by indented details; tests/run-tests.sh counts those lines.
#
# tests/run-tests.sh runs cases of different scripts (and of the plain and
# the sanitized build) at the same time, each in its own process, but not
# all of them:
#   solo    a case that sees every process on the machine runs with no other
#           case beside it: one whose body, or a function of its script that
#           it calls, records system-wide (--all), runs the daemon or uses
#           the CUPTI run directory /run/gtrace-bpf; unless the script names
#           it in SHARED_CASES (a system-wide recording whose checks do not
#           depend on what else runs: no workload of its own, say)
#   quiet   a case the script names in QUIET_CASES (its checks assume an
#           otherwise idle machine) runs with nothing at all beside it
#   shared  every other case
#   scoped  a solo case the script names in SCOPED_CASES (one whose
#           subject is not the recording of every process): it runs beside
#           others in a cgroup of its own (GT_TEST_SCOPE=1), and
#           start_tracer and start_daemon record that cgroup (--cgroup)
#           instead of every process (--all, the daemon's default); run by
#           hand without GT_TEST_SCOPE it runs as written
#     bash test_x.sh __list      prints "CASE shared|solo|quiet" per case
#                                (and "scoped" after a solo one in SCOPED_CASES)
#     GT_TEST_ONLY="c1 c2"       runs only the cases named (exactly)

set -u
# run as plain root, even when the tests were started through sudo: a case
# that wants sudo's environment sets it itself (test_sudo.sh)
unset SUDO_UID SUDO_GID SUDO_USER SUDO_COMMAND
# The tests choose the libcuda and the mock's timing themselves: settings
# from the caller's environment would change what they measure.
unset GT_LIBCUDA GT_MOCK_SYNC_US GT_MOCK_INIT_US

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GTRACE=${GTRACE:-$ROOT/gtrace-bpf}
# the mock of the build under test (tests/run-tests.sh sets GT_OUTPUT)
MOCK_DIR=${GT_OUTPUT:-.output}/mock
case $MOCK_DIR in /*) ;; *) MOCK_DIR=$ROOT/$MOCK_DIR ;; esac
MOCK_LIB=$MOCK_DIR/libcuda.so.1
WORKLOAD=$MOCK_DIR/cuda_workload
# tools/gen_trace.c of the build under test: synthetic traces (gen_trace)
GEN_TRACE=${MOCK_DIR%/mock}/tools/gen_trace
API_H=$ROOT/bpf/gtrace_api.h
CASE_TIMEOUT=${GT_TEST_CASE_TIMEOUT:-150}
SCRIPT_NAME=$(basename "$0" .sh)
REQUIRES=${REQUIRES:-}
SHARED_CASES=${SHARED_CASES:-}
QUIET_CASES=${QUIET_CASES:-}
SCOPED_CASES=${SCOPED_CASES:-}
# the case's own cgroup when it runs scoped (GT_TEST_SCOPE=1), else empty
CASE_CGROUP=${CASE_CGROUP:-}

# Workload constants (tests/mock/cuda_workload.c).
N_ELEMS=1048576
BUF_BYTES=$((N_ELEMS * 4))
M_VECADD=_Z6vecAddPfS_S_i
M_SCALE=_Z5scaleIfEvPT_i
M_FILL=_Z4fillPfif
K_VECADD='vecAdd(float*, float*, float*, int)'
K_SCALE='void scale<float>(float*, int)'
K_FILL='fill(float*, int, float)'

# jq definitions used by the checks.  Handles and pointers may be printed as
# numbers or as "0x..." strings: num turns both into a number (exact below
# 2^53, which user-space addresses are); a missing field becomes -1.
JQ_DEFS='
def num:
  if type == "number" then .
  elif type == "string" then
    (if test("^0[xX][0-9a-fA-F]+$") then
       (.[2:] | ascii_downcase | explode
        | reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end)))
     else (tonumber? // -1) end)
  else -1 end;
def calls($pid): .[] | select(.pid == $pid and .type != "process" and (.api | type) == "string");
def tally: reduce .[] as $s ({}; .[$s] += 1);
def diffmaps($got; $want):
  [ ($got + $want) | keys[] | select(($got[.] // 0) != ($want[.] // 0))
    | "  \(.): got \($got[.] // 0), expected \($want[.] // 0)" ] | join("\n");
'

declare -a CASES=()
declare -A CASE_DESC=()
declare -a PIDS=()

add_case() {
	CASES+=("$1")
	CASE_DESC[$1]=$2
}

err() {
	printf '%s\n' "$*" >> "$ERRS"
	printf 'ERROR: %s\n' "$*" >&2
}

fatal() {
	err "$@"
	exit 1
}

log() {
	printf '[%s] %s\n' "$(date +%T.%N | cut -c1-12)" "$*" >&2
}

# --- prerequisites --------------------------------------------------------

# Prints why the script's cases cannot run, nothing when they can.
missing_prereqs() {
	local r
	for r in $REQUIRES; do
		case $r in
		root)
			[ "$(id -u)" -eq 0 ] || { echo "needs root (uprobes and BPF): run as root, e.g. sudo make test"; return; } ;;
		jq)
			command -v jq >/dev/null || { echo "needs jq (apt-get install jq)"; return; } ;;
		mock)
			[ -x "$WORKLOAD" ] && [ -f "$MOCK_LIB" ] ||
				{ echo "mock not built: $WORKLOAD / $MOCK_LIB missing (run make mock)"; return; } ;;
		gtrace)
			[ -x "$GTRACE" ] || { echo "recorder not built: $GTRACE missing (run make)"; return; } ;;
		esac
	done
}

# --- running cases ----------------------------------------------------------

# What makes a case see the processes of other tests: a system-wide
# recording, the daemon (system-wide too), the CUPTI run directory.
SOLO_RE='(^|[^[:alnum:]_-])--all([^[:alnum:]_-]|$)|daemon|/run/gtrace-bpf'

# case_kind CASE: how CASE may run beside others, "shared", "solo" or
# "quiet" (see the top of this file).  SOLO_RE is looked for in its body and
# in the bodies of the functions of the script (not of this file) that it
# calls, at any depth.
case_kind() {
	local -A seen=()
	local -a todo=("$1")
	local f body w
	if [[ " $QUIET_CASES " == *" $1 "* ]]; then echo quiet; return; fi
	if [[ " $SHARED_CASES " == *" $1 "* ]]; then echo shared; return; fi
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		[ -n "${seen[$f]:-}" ] && continue
		seen[$f]=1
		body=$(declare -f "$f")
		if grep -Eq -- "$SOLO_RE" <<< "$body"; then echo solo; return; fi
		for w in $(grep -oE '[A-Za-z_][A-Za-z0-9_]*' <<< "$body" | sort -u); do
			[ -z "${LIB_FUNCS[$w]:-}" ] && declare -F "$w" > /dev/null && todo+=("$w")
		done
	done
	echo shared
}

run_cases() {
	if [ "${1:-}" = __case ]; then
		case_main "$2"
		return
	fi
	local c
	if [ "${1:-}" = __list ]; then
		local k
		for c in "${CASES[@]}"; do
			k=$(case_kind "$c")
			[ "$k" = solo ] && case_scoped "$c" && k="solo scoped"
			echo "$c $k"
		done
		return 0
	fi
	local filter=${1:-} why dir rc status=0 t0 secs cg
	why=$(missing_prereqs)
	for c in "${CASES[@]}"; do
		[ -n "$filter" ] && [[ $c != *$filter* ]] && continue
		[ -n "${GT_TEST_ONLY:-}" ] && [[ " $GT_TEST_ONLY " != *" $c "* ]] && continue
		if [ -n "$why" ]; then
			echo "FAIL $SCRIPT_NAME: ${CASE_DESC[$c]}"
			echo "    cannot run: $why"
			status=1
			continue
		fi
		dir=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-itest.XXXXXX")
		: > "$dir/errors"
		t0=$(date +%s%N)
		cg=
		if [ "${GT_TEST_SCOPE:-}" = 1 ] && case_scoped "$c"; then
			cg=$(scope_make "$c") || { echo "cannot make a cgroup for the scoped case" >> "$dir/errors"; }
		fi
		CASE_CGROUP=$cg CASE_DIR=$dir timeout -k 10 "$CASE_TIMEOUT" bash "$0" __case "$c" > "$dir/output" 2>&1
		rc=$?
		[ -n "$cg" ] && scope_remove "$cg"
		secs=$(( ($(date +%s%N) - t0) / 1000000 ))
		secs="$((secs / 1000)).$((secs % 1000 / 100)) s"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "case timed out after ${CASE_TIMEOUT} s" >> "$dir/errors"
		elif [ $rc -ne 0 ] && [ ! -s "$dir/errors" ]; then
			echo "case ended with status $rc" >> "$dir/errors"
		fi
		if [ -s "$dir/errors" ]; then
			echo "FAIL $SCRIPT_NAME: ${CASE_DESC[$c]} [$secs]"
			sed 's/^/    /' "$dir/errors"
			if [ -s "$dir/output" ]; then
				echo "    --- last lines of the case's log ($c):"
				tail -n 15 "$dir/output" | sed 's/^/    | /'
			fi
			status=1
			if [ -n "${GT_TEST_KEEP:-}" ]; then
				echo "    (files kept in $dir)"
			else
				rm -rf "$dir"
			fi
		else
			echo "PASS $SCRIPT_NAME: ${CASE_DESC[$c]} [$secs]"
			rm -rf "$dir"
		fi
	done
	return $status
}

# case_scoped CASE: the script names CASE in SCOPED_CASES.
case_scoped() {
	[[ " $SCOPED_CASES " == *" $1 "* ]]
}

# The cgroup2 mount point, empty when there is none.
cg2_root() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo
}

# scope_make CASE: makes a cgroup for a scoped case, prints its path.
scope_make() {
	local root d
	root=$(cg2_root)
	[ -n "$root" ] || return 1
	d=$root/gtrace-itest-$$-$1
	mkdir "$d" 2> /dev/null || return 1
	echo "$d"
}

# scope_remove DIR: what is left in the case's cgroup goes to the root
# (the case ended them; one that outlived it stays alive), and it goes.
scope_remove() {
	local root p
	root=$(cg2_root)
	for p in $(cat "$1/cgroup.procs" 2> /dev/null); do
		echo "$p" > "$root/cgroup.procs" 2> /dev/null
	done
	rmdir "$1" 2> /dev/null
}

# scope_args ARGS...: ARGS into SCOPED_ARGS, with the case's cgroup for
# every process (--all, -a) when the case runs scoped.
scope_args() {
	local a
	SCOPED_ARGS=()
	for a in "$@"; do
		if [ -n "$CASE_CGROUP" ] && { [ "$a" = --all ] || [ "$a" = -a ]; }; then
			SCOPED_ARGS+=(--cgroup "$CASE_CGROUP")
		else
			SCOPED_ARGS+=("$a")
		fi
	done
}

case_main() {
	T=$CASE_DIR
	ERRS=$T/errors
	cd "$T" || exit 1
	# a scoped case: this process, and so all it starts, in its cgroup
	if [ -n "$CASE_CGROUP" ] && ! echo "$BASHPID" > "$CASE_CGROUP/cgroup.procs"; then
		printf '%s\n' "cannot join the case's cgroup $CASE_CGROUP" >> "$ERRS"
		exit 1
	fi
	trap case_cleanup EXIT
	trap 'exit 143' TERM INT
	log "case $1 in $T"
	"$1"
	exit 0
}

# Ends what the case started that is still running, by pid.
case_cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -INT "$p" 2>/dev/null
			sleep 0.5
			kill -KILL "$p" 2>/dev/null
		fi
	done
}

# --- processes --------------------------------------------------------------

# The polls below run 20 times a second in every case: they sleep and match
# in the shell itself, with no process started (a fork of the test's shell
# was most of the CPU the shell scripts took, and the shared cases are
# bound by the CPU).
# nap SECONDS: read's timeout on a FIFO nobody writes, opened (read and
# write, unlinked at once) at the first nap and inherited by subshells
# (sleep where one cannot be made).
NAP_FD=
nap() {
	local f
	if [ -z "$NAP_FD" ]; then
		f=$(mktemp -u "${TMPDIR:-/tmp}/gtrace-nap.XXXXXX")
		if ! mkfifo -m 600 "$f" 2>/dev/null || ! exec {NAP_FD}<>"$f"; then
			rm -f "$f"
			NAP_FD=
			sleep "$1"
			return 0
		fi
		rm -f "$f"
	fi
	read -r -t "$1" -u "$NAP_FD" _ || :
}

# has_line FILE REGEX: a line of FILE matches REGEX (extended, as grep -E)
has_line() {
	local line
	[ -r "$1" ] || return 1
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ $2 ]] && return 0
	done < "$1"
	return 1
}

# wait_line FILE REGEX SECONDS [PID]: waits until a line of FILE matches
# REGEX; fails after SECONDS, or as soon as PID has exited.
wait_line() {
	local file=$1 re=$2 secs=$3 pid=${4:-} i
	for ((i = 0; i < secs * 20; i++)); do
		has_line "$file" "$re" && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			has_line "$file" "$re" && return 0
			return 1
		fi
		nap 0.05
	done
	return 1
}

# wait_exit PID SECONDS: waits for a child; its status in WAIT_RC (124 when
# it was still running after SECONDS, and it is then killed).
wait_exit() {
	local pid=$1 secs=$2 i
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		nap 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		WAIT_RC=124
		return 1
	fi
	wait "$pid"
	WAIT_RC=$?
	return 0
}

# tracer_child NAME: the pid of the recorder's child named NAME, looked for
# until it has that name (a command runs its exec, the watchdog names itself,
# after the 'recording' line), for at most 10 s or until the recorder has
# exited; empty when none came.
tracer_child() {
	local i c
	for ((i = 0; i < 200; i++)); do
		c=$(pgrep -P "$TRACER_PID" -x "$1")
		[ -n "$c" ] || ! kill -0 "$TRACER_PID" 2>/dev/null && break
		nap 0.05
	done
	echo "$c"
}

# start_tracer ARGS...: starts gtrace-bpf in the background (stdout and
# stderr in $T/tracer.out, $T/tracer.err) and waits for its
# "gtrace-bpf: recording" line.  Sets TRACER_PID.
start_tracer() {
	scope_args "$@"
	log "start: $GTRACE ${SCOPED_ARGS[*]}"
	# a case's second tracer: the first one's stderr moved aside here, not
	# truncated by the background shell's redirection, which can come after
	# wait_line has read the old "recording" line
	[ -f "$T/tracer.err" ] && mv "$T/tracer.err" "$T/tracer.err.$(date +%s%N)"
	"$GTRACE" "${SCOPED_ARGS[@]}" > "$T/tracer.out" 2> "$T/tracer.err" &
	TRACER_PID=$!
	PIDS+=("$TRACER_PID")
	if ! wait_line "$T/tracer.err" '^gtrace-bpf: recording' 30 "$TRACER_PID"; then
		if kill -0 "$TRACER_PID" 2>/dev/null; then
			fatal "gtrace-bpf did not print 'gtrace-bpf: recording' within 30 s; stderr: $(tail -n 5 "$T/tracer.err" | tr '\n' '|')"
		fi
		wait "$TRACER_PID"
		fatal "gtrace-bpf exited with status $? before recording; stderr: $(tail -n 5 "$T/tracer.err" | tr '\n' '|')"
	fi
	log "tracer $TRACER_PID recording"
}

# stop_tracer [SIGNAL]: stops the tracer (default SIGINT), waits up to 30 s.
# Sets TRACER_RC.
stop_tracer() {
	local sig=${1:-INT}
	kill -"$sig" "$TRACER_PID" 2>/dev/null
	if ! wait_exit "$TRACER_PID" 30; then
		fatal "gtrace-bpf did not exit within 30 s of SIG$sig"
	fi
	TRACER_RC=$WAIT_RC
	log "tracer exited with $TRACER_RC"
	[ "$TRACER_RC" -eq 0 ] || err "gtrace-bpf exited with status $TRACER_RC after SIG$sig (expected 0); stderr: $(tail -n 3 "$T/tracer.err" | tr '\n' '|')"
}

# start_daemon ARGS...: gtrace-bpf daemon ARGS over the mock libcuda in the
# background, its control socket in $T/run (GTRACE_RUN_DIR), snapshots in
# $T/snaps, stderr in $T/daemon.err (an earlier daemon's is moved aside);
# waits for its recording line (in the --log FILE of ARGS if there is one).
# Sets DPID.
start_daemon() {
	local a prev= log=$T/daemon.err
	for a in "$@"; do
		[ "$prev" = --log ] && log=$a
		case $a in --log=*) log=${a#--log=} ;; esac
		prev=$a
	done
	export GTRACE_RUN_DIR=$T/run
	mkdir -p -m 0700 "$T/snaps"
	[ -f "$T/daemon.err" ] && mv "$T/daemon.err" "$T/daemon.err.$(date +%s%N)"
	log "daemon: $GTRACE daemon --libcuda $MOCK_LIB --dir $T/snaps ${CASE_CGROUP:+--cgroup $CASE_CGROUP }$*"
	"$GTRACE" daemon --libcuda "$MOCK_LIB" --dir "$T/snaps" ${CASE_CGROUP:+--cgroup "$CASE_CGROUP"} "$@" \
		> "$T/daemon.out" 2> "$T/daemon.err" &
	DPID=$!
	PIDS+=("$DPID")
	wait_line "$log" '^gtrace-bpf: recording' 30 "$DPID" ||
		fatal "the daemon did not start: $(tail -n 3 "$T/daemon.err" "$log" | tr '\n' '|')"
}

# stop_daemon: SIGTERM to the daemon of start_daemon; it must exit 0.
stop_daemon() {
	kill -TERM "$DPID"
	wait_exit "$DPID" 30 || fatal "the daemon did not stop within 30 s of SIGTERM"
	[ "$WAIT_RC" -eq 0 ] || err "the daemon exited $WAIT_RC after SIGTERM: $(tail -n 3 "$T/daemon.err" | tr '\n' '|')"
}

# run_wl NAME [VAR=VALUE...] ARGS...: the workload over the mock libcuda, to
# its end, with the environment given; sets WP (its pid).
run_wl() {
	local name=$1
	shift
	local -a envs=("GT_LIBCUDA=$MOCK_LIB")
	while [[ ${1:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
		envs+=("$1")
		shift
	done
	env "${envs[@]}" "$WORKLOAD" "$@" > "$T/$name.out" 2> "$T/$name.err" ||
		fatal "workload $name failed: $(tail -n 2 "$T/$name.err" | tr '\n' '|')"
	WP=$(grep '^{' "$T/$name.out" | tail -n 1 | jq .pid)
}

# snap ARGS...: gtrace-bpf snapshot ARGS; sets SNAP (the path it printed).
snap() {
	SNAP=$("$GTRACE" snapshot "$@" 2> "$T/snap.err") || fatal "snapshot $* failed: $(cat "$T/snap.err")"
	[ -f "$SNAP" ] || fatal "snapshot printed '$SNAP', not a file"
}

# launches_of DUMP PID: the launches of PID in a dump.
launches_of() {
	jq -s --argjson p "$2" '[.[] | select(.pid == $p and .type == "launch")] | length' "$1"
}

# start_workload NAME [VAR=VALUE...] -- ARGS...: runs the workload in the
# background with the environment given, output in $T/NAME.out/.err;
# $PROG instead of the mock workload when set, inside the cgroup v2
# directory $IN_CGROUP when set. Sets WPID.
start_workload() {
	local name=$1
	shift
	local -a envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	if [ -n "${IN_CGROUP:-}" ]; then
		# a shell that moves itself into the cgroup, then execs: the same pid
		env "${envs[@]}" bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$IN_CGROUP" \
			"${PROG:-$WORKLOAD}" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	else
		env "${envs[@]}" "${PROG:-$WORKLOAD}" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	fi
	WPID=$!
	PIDS+=("$WPID")
	log "workload $name pid $WPID: ${envs[*]} $*"
}

# wait_ready NAME PID: waits for "ready PID" of a --wait-signal workload.
wait_ready() {
	wait_line "$T/$1.out" "^ready $2\$" 20 "$2" ||
		fatal "workload $1 (pid $2) did not print 'ready $2' within 20 s; stderr: $(tail -n 3 "$T/$1.err" | tr '\n' '|')"
}

# finish_workload NAME PID: waits for it (it must be a child of this shell:
# not from a $(...) subshell), checks exit 0; its JSON line in WJ.
finish_workload() {
	local name=$1 pid=$2
	wait_exit "$pid" 60 || fatal "workload $name (pid $pid) still running after 60 s"
	[ "$WAIT_RC" -eq 0 ] || fatal "workload $name exited with status $WAIT_RC: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/$name.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "no JSON line in the output of workload $name"
	jq -e --argjson pid "$pid" '.pid == $pid' <<< "$WJ" > /dev/null ||
		fatal "the JSON line of workload $name does not have pid $pid: $WJ"
}

# --- traces -----------------------------------------------------------------

# record_named NAME ARGS...: records `cuda_workload ARGS` with the libcuda
# mock into $T/NAME.gtrace (its synchronizations RECORD_SYNC_US long, 1000
# unless set) and dumps it into $T/NAME.dump; sets WJ (the workload's JSON
# line) and WL_PID.
record_named() {
	local name=$1 rc
	shift
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=${RECORD_SYNC_US:-1000} \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" --force -- "$WORKLOAD" "$@" \
		> "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -- cuda_workload $* exited with status $rc; stderr: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/$name.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no JSON line; stdout: $(head -c 300 "$T/$name.out")"
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/$name.gtrace" "$T/$name.dump"
}

# dump_trace FILE OUT: gtrace-bpf dump FILE > OUT; checks exit 0 and that
# every line is a JSON object.
# gtrace_ok OUT COMMAND ARGS...: gtrace-bpf COMMAND ARGS > OUT; checks status
# 0 and an empty stderr (in OUT.err).
gtrace_ok() {
	local out=$1 cmd=$2 rc
	shift 2
	"$GTRACE" "$cmd" "$@" > "$out" 2> "$out.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf $cmd $* exited with status $rc: $(head -n 3 "$out.err" | tr '\n' '|')"
	[ -s "$out.err" ] && err "gtrace-bpf $cmd $* wrote to stderr: $(head -n 3 "$out.err" | tr '\n' '|')"
	return 0
}

dump_trace() {
	local file=$1 out=$2 rc
	"$GTRACE" dump "$file" > "$out" 2> "$out.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf dump $file exited with status $rc: $(head -n 3 "$out.err" | tr '\n' '|')"
	jq -e -s 'all(type == "object")' "$out" > /dev/null ||
		fatal "gtrace-bpf dump $file printed lines that are not JSON objects: $(grep -v '^{' "$out" | head -n 2 | tr '\n' '|')"
	log "dump: $(wc -l < "$out") lines"
}

# gen_trace ARGS...: tools/gen_trace ARGS; the case ends when it is not built.
gen_trace() {
	[ -x "$GEN_TRACE" ] || fatal "gen_trace not built: $GEN_TRACE missing (make $GEN_TRACE)"
	"$GEN_TRACE" "$@"
}

# text_ok WHAT KIND FILE...: tests/integration/text_check.py KIND FILE...
# (valid UTF-8, no control character but the line break, CSV cells that are
# no formulas, JSON that parses); err with what it found.
text_ok() {
	local what=$1 out
	shift
	out=$(python3 "$ROOT/tests/integration/text_check.py" "$@" 2>&1) ||
		err "$what: $(head -n 5 <<< "$out" | tr '\n' '|')"
	return 0
}

# page_data PAGE: the JSON document a page of gtrace-bpf report holds (its
# #gt-data script), on stdout.
page_data() {
	python3 -c 'import html.parser, sys
class P(html.parser.HTMLParser):
    on = False
    def handle_starttag(self, tag, attrs):
        self.on = ("id", "gt-data") in attrs
    def handle_data(self, data):
        if self.on:
            sys.stdout.write(data)
    def handle_endtag(self, tag):
        self.on = False
P().feed(open(sys.argv[1]).read())' "$1"
}

# counts_of DUMP PID: {"api": calls} of one process in a dump.
# counts_of DUMP PID: {"api": calls} of PID in the dump. The recorder drops
# the kernel lookups' probes once their names are checked (a lookups_off
# record, tested exactly in test_record_cmd's t_lookups): a process whose
# first launch came after that may have made lookups no probe saw; its map
# then says so ("_lookups_relaxed") and compare_counts takes its
# cuKernelGetFunction count as an upper bound.
counts_of() {
	jq -s -c --argjson pid "$2" "$JQ_DEFS
		([.[] | select(.type == \"capture\" and .kind == \"lookups_off\") | .ts] | min) as \$off
		| ([calls(\$pid) | select(.type == \"launch\") | .ts] | min) as \$first
		| [calls(\$pid) | .api] | tally
		| if \$off != null and (\$first == null or \$first > \$off) then . + {\"_lookups_relaxed\": true}
		  else . end" "$1"
}

# summary_counts SUMMARY: calls per api, as counts_of makes them, from the
# api table of `dump --summary` (a recording of one program, -- CMD): for a
# trace of millions of calls, whose JSON dump jq takes tens of seconds to
# read and check.
summary_counts() {
	awk '$1 == "api" && $2 == "calls" { t = 1; next }
	     t && $1 == "total" { exit }
	     t { n = ($2 == "*" || $2 == "+") ? $3 : $2; printf "%s\"%s\":%d", (k++ ? "," : "{"), $1, n }
	     END { print (k ? "}" : "{}") }' "$1"
}

# compare_counts LABEL GOT WANT: records the apis whose counts differ.
compare_counts() {
	local d
	d=$(jq -n -r --argjson got "$2" --argjson want "$3" "$JQ_DEFS
		(\$got | del(._lookups_relaxed)
		 | if \$got._lookups_relaxed and (.cuKernelGetFunction // 0) <= (\$want.cuKernelGetFunction // 0)
		   then del(.cuKernelGetFunction) else . end) as \$g
		| (if \$got._lookups_relaxed and \$g.cuKernelGetFunction == null then \$want | del(.cuKernelGetFunction)
		   else \$want end) as \$w
		| diffmaps(\$g; \$w)")
	[ -z "$d" ] || err "$1 differ:
$d"
}

# sig_check LABEL DUMP PID SELECT SIGNATURE WANT: turns every call of PID
# that SELECT keeps into the string SIGNATURE (jq expressions) and compares
# how often each string occurs with WANT ({"signature": count}).
sig_check() {
	local label=$1 dump=$2 pid=$3 sel=$4 sig=$5 want=$6 d
	d=$(jq -s -r --argjson pid "$pid" --argjson want "$want" \
		"$JQ_DEFS [calls(\$pid) | select($sel) | ($sig)] | tally as \$got | diffmaps(\$got; \$want)" "$dump") ||
		fatal "jq failed on $dump ($label)"
	[ -z "$d" ] || err "$label differ:
$d"
}

# The libcuda symbols gtrace-bpf probes, from bpf/gtrace_api.h as it is now:
# {"cuInit": true, ...}.
probed_apis() {
	if [ -z "${PROBED_JSON:-}" ]; then
		PROBED_JSON=$(grep -oE '^[[:space:]]*X\(cu[A-Za-z0-9_]+' "$API_H" | sed 's/.*X(//' |
			jq -R -s -c 'split("\n") | map(select(length > 0) | {(.): true}) | add // {}')
	fi
	printf '%s\n' "$PROBED_JSON"
}

# expected_counts N M K [FAIL THREADS AFTER_READY]: the calls of
#   cuda_workload --launches N --copies M --syncs K [--fail] [--threads T]
# per probed api, by the sequence in tests/mock/cuda_workload.c;
# AFTER_READY=1 leaves out the calls made before --wait-signal's signal.
expected_counts() {
	local n=$1 m=$2 k=$3 fail=${4:-0} th=${5:-1} ready=${6:-0}
	jq -n -c --argjson q $((n / 4)) --argjson r $((n % 4)) --argjson m "$m" --argjson k "$k" \
		--argjson fail "$fail" --argjson th "$th" --argjson ready "$ready" \
		--argjson probed "$(probed_apis)" '
	def ge($a; $b): if $a >= $b then 1 else 0 end;
	(if $ready == 1 then {} else
	   {cuInit: 1, cuDeviceGet: 1, cuDeviceGetName: 1, cuDevicePrimaryCtxRetain: 1,
	    cuCtxSetCurrent: 1, cuModuleLoadData: 1, cuModuleGetFunction: 2,
	    cuLibraryLoadData: 1, cuLibraryGetKernel: 1, cuKernelGetFunction: 1} end)
	+ {cuStreamCreate: $th, cuMemAlloc_v2: (3 + $fail), cuMemAllocHost_v2: 1, cuMemcpyHtoD_v2: $m,
	   cuLaunchKernel: ($th * (2 * $q + ge($r; 1))),
	   cuLaunchKernel_ptsz: ($th * ($q + ge($r; 2))),
	   cuLaunchKernelEx: ($th * ($q + ge($r; 3))),
	   cuMemsetD32_v2: 1, cuMemcpyDtoHAsync_v2: 1, cuStreamSynchronize: $k, cuEventCreate: 1,
	   cuEventRecord: 1, cuEventSynchronize: 1, cuCtxSynchronize: 1, cuProfilerStart: 1,
	   cuProfilerStop: 1, cuMemFree_v2: 3, cuMemFreeHost: 1, cuEventDestroy_v2: 1,
	   cuStreamDestroy_v2: $th, cuModuleUnload: 1, cuLibraryUnload: 1,
	   cuDevicePrimaryCtxRelease_v2: 1}
	# each launch thread but the main one makes the context current first
	| .cuCtxSetCurrent = ((.cuCtxSetCurrent // 0) + (if $th > 1 then $th else 0 end))
	| with_entries(select(.value > 0 and $probed[.key]))'
}

# wl_counts JSON [after_ready]: the probed calls the workload reports (all,
# or only those after --wait-signal's signal), by the current table.
wl_counts() {
	local sfx=
	[ "${2:-}" = after_ready ] && sfx=_after_ready
	jq -c --argjson probed "$(probed_apis)" \
		"(.calls$sfx // {}) + (.other_calls$sfx // {}) | with_entries(select(\$probed[.key]))" <<< "$1"
}

# check_launches LABEL DUMP PID WJSON N: every launch of PID has the api,
# kernel name (demangled and mangled), grid, block, shared memory, stream
# and function handle the workload used, as many times as N launches give.
check_launches() {
	local label=$1 dump=$2 pid=$3 wj=$4 n=$5 want
	want=$(jq -c -n --argjson w "$wj" --argjson q $((n / 4)) --argjson r $((n % 4)) \
		--arg kv "$K_VECADD" --arg ks "$K_SCALE" --arg kf "$K_FILL" \
		--arg mv "$M_VECADD" --arg ms "$M_SCALE" --arg mf "$M_FILL" '
	def ge($a; $b): if $a >= $b then 1 else 0 end;
	($w.handles.streams[0]) as $s | ($w.n) as $n |
	{ "cuLaunchKernel \($kv) [\($mv)] grid=[\($n / 256),1,1] block=[256,1,1] shmem=0 stream=\($s) func=\($w.handles.vecAdd)": ($q + ge($r; 1)),
	  "cuLaunchKernel_ptsz \($ks) [\($ms)] grid=[\($n / 256),1,1] block=[256,1,1] shmem=0 stream=\($s) func=\($w.handles.scale)": ($q + ge($r; 2)),
	  "cuLaunchKernelEx \($kf) [\($mf)] grid=[\($n / 128),1,1] block=[128,1,1] shmem=256 stream=\($s) func=\($w.handles.fill)": ($q + ge($r; 3)),
	  "cuLaunchKernel \($kf) [\($mf)] grid=[\($n / 1024),2,2] block=[256,1,1] shmem=64 stream=\($s) func=\($w.handles.fill)": $q }
	| with_entries(select(.value > 0))')
	sig_check "$label" "$dump" "$pid" '.type == "launch"' \
		'"\(.api) \(.kernel) [\(.mangled)] grid=\(.grid | tojson) block=\(.block | tojson) shmem=\(.shmem) stream=\(.stream | num) func=\(.func | num)"' \
		"$want"
}

# check_clean LABEL DUMP PID [FAILED_OK]: no call of PID is incomplete, and
# every one returned CUDA_SUCCESS unless listed in FAILED_OK (api names);
# only launches may lack a result (recorded at entry only, the default).
check_clean() {
	local label=$1 dump=$2 pid=$3 ok=${4:-} d
	d=$(jq -s -r --argjson pid "$pid" --arg ok " $ok " "$JQ_DEFS
		[calls(\$pid) | . as \$c
		 | select(\$c.incomplete == true
		          or (\$c.ret == null and \$c.type != \"launch\")
		          or (\$c.ret != null
		              and ((\$c.ret != 0 and ((\$ok | contains(\" \" + \$c.api + \" \")) | not))
		                   or (\$c.failed != (\$c.ret != 0)))))
		 | \"  \(.api) ts=\(.ts) ret=\(.ret) failed=\(.failed) incomplete=\(.incomplete // false)\"]
		| .[:10] | join(\"\n\")" "$dump")
	[ -z "$d" ] || err "$label: calls incomplete, failed or with a failed flag that does not match ret:
$d"
}

# today: the date part of default file names, YYYYMMDD.
today() {
	date +%Y%m%d
}

# the functions above are this file's: case_kind follows only the script's
declare -A LIB_FUNCS=()
for _f in $(declare -F | awk '{ print $3 }'); do LIB_FUNCS[$_f]=1; done
unset _f
