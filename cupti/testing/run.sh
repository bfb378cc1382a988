#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs the CUPTI agent over the mock libcupti (no GPU needed): one PASS/FAIL
# line per case, then "N passed, N failed".
#   cupti/testing/run.sh AGENT DRIVER
# AGENT: libgtrace-cupti.so; DRIVER: agent_driver linked to the mock
# (make cupti-check builds both and runs this).  GTRACE_CUPTI_CHECK=nvtx
# runs the NVTX capture range cases (nvtx_capture.sh; root) instead.
set -u
agent=$1 driver=$2
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/spool_check.py"
tmp=$(mktemp -d /tmp/gtrace-cupti-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# run NAME STEPS [VAR=VALUE...]: the driver with GTRACE_CUPTI_DIR=$tmp/NAME;
# its stdout in $out, stderr in $err, the spool file in $spool
run() {
	local name=$1 steps=$2
	shift 2
	dir=$tmp/$name
	mkdir -p "$dir"
	out=$tmp/$name.out err=$tmp/$name.err
	env GTRACE_CUPTI_DIR="$dir" "$@" "$driver" "$agent" "$steps" > "$out" 2> "$err"
	rc=$?
	spool=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
}
expect_spool() { # case expr
	local why
	if [ $rc -ne 0 ]; then bad "$1" "exit status $rc: $(tail -n 3 "$err")"; return; fi
	if [ -z "$spool" ]; then bad "$1" "no spool file; stderr: $(cat "$err")"; return; fi
	if why=$($check "$spool" "$2"); then ok "$1"; else bad "$1" "$(echo "$why" | tr '\n' ' ')"; fi
}
# state KEY: its last value in $out (whole keys: subscribes is not unsubscribes)
state() { grep -oE "(^| )$1=[0-9-]*" "$out" | tail -n 1 | cut -d= -f2; }

if [ "${GTRACE_CUPTI_CHECK:-}" = nvtx ]; then
	. "$here/nvtx_capture.sh"
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ]
	exit
fi

# idle: nothing asks for a recording (no private directory, no run directory)
env -u GTRACE_CUPTI_DIR GTRACE_RUN_DIR="$tmp/no-run-dir" "$driver" "$agent" iqnq > "$tmp/idle.out" 2> "$tmp/idle.err"
if [ $? -eq 0 ] && grep -q 'subscribes=0' "$tmp/idle.out" && grep -q '^nvtx=0' "$tmp/idle.out" &&
	grep -q 'nvtx_inits=0' "$tmp/idle.out" && [ ! -s "$tmp/idle.err" ]; then
	ok "idle: no subscription, NVTX declined, silent"
else
	bad "idle" "$(cat "$tmp/idle.out" "$tmp/idle.err" | tr '\n' ' ')"
fi

# rundir NAME STEPS [VAR=VALUE...]: the driver with the run directory
# $tmp/NAME/cupti (root's, 1733, as the recorder makes it), no private one;
# its spool file in $spool
rundir() {
	local name=$1 steps=$2
	shift 2
	dir=$tmp/$name/cupti
	mkdir -p "$dir" && chmod 1733 "$dir"
	out=$tmp/$name.out err=$tmp/$name.err
	env -u GTRACE_CUPTI_DIR GTRACE_RUN_DIR="$tmp/$name" "$@" "$driver" "$agent" "$steps" > "$out" 2> "$err"
	rc=$?
	spool=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
}

# armed in the run directory: records while a recorder holds the lock and
# its session wants the process; pauses (counters flagged paused, CUPTI off,
# the slot given back) and records again into the same file
rundir armed ieLAseesPseAseesUsesq
expect_spool "run directory: two stretches of 200 kernels, each closed by paused counters, nothing while paused" \
	"kseg == [200, 200] and [s['flags'] for s in allstats] == [2, 2] and [s['records'] for s in allstats] == [408, 408] and marks >= 2"
[ "$(state subscribed)" = 0 ] && [ "$(state kinds)" = 0 ] && [ "$(state subscribes)" = 2 ] && [ ! -s "$err" ] &&
	ok "run directory: paused, CUPTI off and the subscriber slot given back; silent" ||
	bad "run directory: paused" "$(cat "$out" "$err" | tr '\n' ' ')"

# attached to a running process (gt_agent_attach, as --cupti=attach): records
# while its recorder wants it, then detaches (its counters final and
# detached; CUPTI finalized in the exit callback of the next driver call,
# which is not recorded); a second attach records again into a new file
rundir attach LAawsUDwsqLawsUDwsq
spools=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | wc -l)
second=$(ls "$dir"/gtrace-cupti.*.1.spool 2>/dev/null | head -n 1)
expect_spool "attach: 100 kernels recorded, then detached (final, detached)" "k == 100 and stats['flags'] == 17"
spool=$second expect_spool "attach again: 100 kernels into a file of its own, detached again" \
	"k == 100 and stats['flags'] == 17"
[ "$spools" = 2 ] && [ "$(grep -c '^attach=1$' "$out")" = 2 ] && [ "$(state finalizes)" = 2 ] &&
	[ "$(state subscribed)" = 0 ] && [ "$(state api_domains)" = 0 ] &&
	[ "$(grep -c 'cuptiFinalize in an API exit callback' "$err")" = 2 ] &&
	[ "$(grep -vc 'cuptiFinalize in an API exit callback' "$err")" = 0 ] &&
	ok "attach, detach, twice: CUPTI finalized in an API exit callback each time, nothing left watching" ||
	bad "attach and detach" "spools=$spools $(cat "$out" "$err" | tr '\n' ' ')"

# a detach while the program makes no CUDA call: the agent waits 2 s, then
# leaves the finalize to the next call (nothing runs until then); an
# attach before that call takes CUPTI back as it is; a fork child's calls
# finalize nothing and write nothing
rundir attachidle LAawsUDFsssssqLawsUDwsq
first=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | grep -v '\.1\.spool' | head -n 1)
second=$(ls "$dir"/gtrace-cupti.*.1.spool 2>/dev/null | head -n 1)
spool=$first expect_spool "attach, no call after the detach: 100 kernels, detached" "k == 100 and stats['flags'] == 17"
spool=$second expect_spool "attach again before any call: 100 kernels, detached" "k == 100 and stats['flags'] == 17"
[ "$(grep -o 'finalizes=[0-9]*' "$out" | tr '\n' ' ')" = "finalizes=0 finalizes=1 " ] &&
	[ "$(grep -c 'cuptiFinalize' "$err")" = 1 ] && [ "$(grep -c '^attach=1$' "$out")" = 2 ] &&
	ok "detach without a CUDA call: CUPTI left to the next call, attached again as it was, a fork child finalizes nothing" ||
	bad "detach without a call" "$(cat "$out" "$err" | tr '\n' ' ')"

# attached while the program replays a CUDA graph: recorded, then detached
# without cuptiFinalize (its instrumentation of the graph's kernels points
# into memory a finalize frees: the H200 faulted, Xid 31, under JAX): CUPTI
# stays loaded, idle, the subscriber slot given back, said once; a later
# attach records again
rundir attachgraph LAaWsUDwsqLawsUDwsq
first=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | grep -v '\.1\.spool' | head -n 1)
second=$(ls "$dir"/gtrace-cupti.*.1.spool 2>/dev/null | head -n 1)
spool=$first expect_spool "attach under a CUDA graph: 100 graph kernels, detached" "k == 100 and stats['flags'] == 17"
spool=$second expect_spool "attach again after it: 100 kernels, detached" "k == 100 and stats['flags'] == 17"
[ "$(state finalizes)" = 0 ] && [ "$(state subscribed)" = 0 ] && [ "$(grep -c '^attach=1$' "$out")" = 2 ] &&
	[ "$(grep -c 'ran CUDA graphs while attached: CUPTI is left loaded and idle, not finalized' "$err")" = 1 ] &&
	! grep -q cuptiFinalize "$err" &&
	ok "attach under a CUDA graph: CUPTI never finalized, said once, the slot given back, attached again" ||
	bad "attach under a CUDA graph" "$(cat "$out" "$err" | tr '\n' ' ')"

# attached, never admitted by its recorder (it died first): after 30 s
# without a recording the agent detaches by itself; not run here (30 s)

# no recorder: armed, nothing recorded, no file
rundir norecorder iAseesq
[ $rc -eq 0 ] && [ -z "$spool" ] && [ "$(state subscribes)" = 0 ] && ok "run directory without a live recorder: no file, CUPTI never started" ||
	bad "run directory without a live recorder" "rc=$rc spool=$spool $(cat "$out" "$err" | tr '\n' ' ')"

# "scope listed": the file says the process is there, it records from its go file on
rundir listed ieLlseesgseesq
expect_spool "scope listed: there (its file) from the start, records from its go file on" \
	"kseg == [200] and stats['flags'] == 1"

# what another user planted does not count: a session, a go file
mkdir -p "$tmp/planted/cupti" && chmod 1733 "$tmp/planted/cupti"
printf 'scope all\n' > "$tmp/planted/cupti/session"
chown 65534 "$tmp/planted/cupti/session"
rundir planted iLseesq
[ $rc -eq 0 ] && [ -z "$spool" ] && [ "$(state subscribes)" = 0 ] && ok "run directory: another user's session file is not the recorder's" ||
	bad "planted session file" "rc=$rc spool=$spool $(cat "$out" "$err" | tr '\n' ' ')"
mkdir -p "$tmp/plantgo/cupti" && chmod 1733 "$tmp/plantgo/cupti"
env -u GTRACE_CUPTI_DIR GTRACE_RUN_DIR="$tmp/plantgo" sh -c '
	touch "$GTRACE_RUN_DIR/cupti/go.$$" && chown 65534 "$GTRACE_RUN_DIR/cupti/go.$$" && exec "$0" "$1" iLlseesq' \
	"$driver" "$agent" > "$tmp/plantgo.out" 2> "$tmp/plantgo.err"
spool=$(ls "$tmp"/plantgo/cupti/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
[ -n "$spool" ] && $check "$spool" "k == 0" > /dev/null && grep -q 'subscribes=0' "$tmp/plantgo.out" &&
	ok "scope listed: another user's go file does not admit the process" ||
	bad "planted go file" "spool=$spool $(cat "$tmp/plantgo.out" "$tmp/plantgo.err" | tr '\n' ' ')"

# the spool's bound on what nobody read: the rest is counted, never half-written
run backlog iEq GTRACE_CUPTI_SPOOL_MAX=2000000
expect_spool "unread bound (2 MB): 406000 records written or counted lost, flagged, said once" \
	"stats['lost_backlog'] > 0 and stats['flags'] & 8 and k + api + copies + sets + nvtx + stats['lost_backlog'] == 406000"
[ "$(grep -c 'nobody read: GPU records of pid' "$err")" = 1 ] || bad "backlog message" "$(cat "$err")"

# a full file system: what does not fit is counted, the counters still
# written (the room kept for them), the file whole
if [ "$(id -u)" -eq 0 ] && mkdir -p "$tmp/full" && mount -t tmpfs -o size=4m tmpfs "$tmp/full" 2> /dev/null; then
	run full iEq GTRACE_CUPTI_DIR="$tmp/full"
	spool=$(ls "$tmp"/full/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
	expect_spool "full file system: 406000 records written or counted lost, flagged, counters written" \
		"stats is not None and stats['lost_disk'] > 0 and stats['flags'] & 4 and k + api + copies + sets + nvtx + stats['lost_disk'] == 406000"
	[ "$(grep -c 'is full: GPU records of pid' "$err")" = 1 ] || bad "full disk message" "$(cat "$err")"
	umount "$tmp/full"
else
	bad "full file system" "cannot mount a 4 MiB tmpfs (needs root)"
fi

run record iqeeecenq
expect_spool "record until exit: every record, stats last" \
	"k == 400 and api == 400 and copies == 4 and sets == 4 and nvtx == 4 and stats and stats['records'] == 816 and stats['unknown'] == 4 and stats['dropped'] == 0 and stats['flags'] == 1 and stats['lost_disk'] == 0 and len(corr) == 400 and names == {'_Z10mockKernelv'} and all(r[1] > 0 and r[2] == 'mock range' for r in ranges) and len(pid) == 1"
[ "$(state order_errors)" = 0 ] && [ "$(state driver_ids)" -gt 100 ] && grep -q '^nvtx=1' "$out" &&
	[ "$(state nvtx_inits)" = 1 ] && [ "$(state subscribed)" = 1 ] &&
	ok "record: timestamp callback first, launch/copy/set driver ids, NVTX forwarded" ||
	bad "record: CUPTI calls" "$(cat "$out" | tr '\n' ' ')"
[ "$(stat -c %a "$spool" 2>/dev/null)" = 600 ] && ok "spool mode 0600" || bad "spool mode" "$(stat -c %a "$spool")"

run noapi iqeeecenq GTRACE_CUPTI_API=none
expect_spool "GTRACE_CUPTI_API=none: kernels, copies, sets, NVTX; no API records" \
	"k == 400 and api == 0 and copies == 4 and sets == 4 and nvtx == 4 and stats and stats['dropped'] == 0"
[ "$(state driver_ids)" = 0 ] && [ "$(state kinds)" = 5 ] && [ ! -s "$err" ] &&
	ok "GTRACE_CUPTI_API=none: no driver API ids enabled, silent" ||
	bad "GTRACE_CUPTI_API=none: CUPTI calls" "$(cat "$out" "$err" | tr '\n' ' ')"

run badapi iq GTRACE_CUPTI_API=bogus
[ "$(state driver_ids)" -gt 100 ] && [ "$(grep -c "unknown GTRACE_CUPTI_API='bogus' (calls, all or none): recording the calls'" "$err")" = 1 ] &&
	ok "GTRACE_CUPTI_API=bogus: said once, the calls' records" ||
	bad "GTRACE_CUPTI_API=bogus" "$(cat "$out" "$err" | tr '\n' ' ')"

run flood iE
expect_spool "200000 kernels, none lost" \
	"k == 200000 and api == 200000 and nvtx == 2000 and len(corr) == 200000 and stats['dropped'] == 0"

run stop ieeSsqeq
expect_spool "stop file: flushed and closed while the program runs" \
	"k == 200 and stats and stats['records'] == 408"
[ "$(state unsubscribes)" = 1 ] && [ "$(state kinds)" = 0 ] && [ "$(state driver_ids)" = 0 ] &&
	ok "stop file: CUPTI switched off, subscriber slot given back" ||
	bad "stop file: CUPTI calls" "$(cat "$out" | tr '\n' ' ')"

mkdir -p "$tmp/gone"
GTRACE_CUPTI_DIR=$tmp/gone "$driver" "$agent" iees > "$tmp/gone.out" 2>&1 &
sleep 0.2
mv "$tmp/gone" "$tmp/gone.moved"
wait $!
rc=$? spool=$(ls "$tmp"/gone.moved/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
expect_spool "spool directory removed: stops, file complete" "k == 200 and stats is not None"

run fork iefecq
expect_spool "fork: the child's exit leaves the parent's recording alone" "k == 200 and stats is not None and len(pid) == 1"

run allapi iq GTRACE_CUPTI_ALL_API=1
[ "$(state driver_ids)" = 0 ] && [ "$(state kinds)" = 6 ] && ok "GTRACE_CUPTI_ALL_API=1: the DRIVER kind instead of ids" ||
	bad "GTRACE_CUPTI_ALL_API=1" "$(cat "$out" | tr '\n' ' ')"

run conflict iqeq MOCK_CONFLICT=1
if [ $rc -eq 0 ] && [ -z "$spool" ] && [ "$(grep -c 'another CUPTI client (nsys, torch.profiler?) is active; GPU-side recording off for pid' "$err")" = 1 ]; then
	ok "another CUPTI client: said once, no spool"
else
	bad "another CUPTI client" "rc=$rc spool=$spool $(cat "$err")"
fi

mkdir -p "$tmp/exists"
GTRACE_CUPTI_DIR=$tmp/exists sh -c 'touch "$GTRACE_CUPTI_DIR/gtrace-cupti.$$.spool"; exec "$0" "$1" ieq' \
	"$driver" "$agent" > "$tmp/exists.out" 2> "$tmp/exists.err"
spool=$(ls "$tmp"/exists/gtrace-cupti.*.1.spool 2>/dev/null | head -n 1)
if [ -n "$spool" ] && $check "$spool" "k == 100" > /dev/null && [ ! -s "$tmp/exists/$(ls "$tmp/exists" | grep -v '\.1\.spool' | head -n 1)" ]; then
	ok "spool name taken (a stale or planted file): the next name, recorded, the taken one untouched"
else
	bad "spool file exists" "spool=$spool $(cat "$tmp/exists.out" "$tmp/exists.err" | tr '\n' ' ')"
fi

if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	mkdir -p "$tmp/ro" && chmod 755 "$tmp/ro" && chmod 711 "$tmp"
	su nobody -s /bin/sh -c "GTRACE_CUPTI_DIR='$tmp/ro' '$driver' '$agent' iq" > "$tmp/ro.out" 2> "$tmp/ro.err"
	chmod 700 "$tmp"
	if ! grep -q '^init=' "$tmp/ro.out"; then
		echo "note: user nobody cannot run $driver here: the unwritable directory case is skipped"
	elif grep -q 'subscribes=0' "$tmp/ro.out" && grep -q 'cannot create files in' "$tmp/ro.err"; then
		ok "directory not writable: said, CUPTI never started"
	else
		bad "directory not writable" "$(cat "$tmp/ro.out" "$tmp/ro.err" | tr '\n' ' ')"
	fi
fi

mkdir -p "$tmp/stopped" && touch "$tmp/stopped/stop"
GTRACE_CUPTI_DIR=$tmp/stopped "$driver" "$agent" iq > "$tmp/stopped.out" 2>&1
grep -q 'subscribes=0' "$tmp/stopped.out" && ok "stop file present at start: idle" ||
	bad "stop file present at start" "$(cat "$tmp/stopped.out")"

run nokernel iq MOCK_FAIL_KIND=10
[ -z "$spool" ] && grep -q 'failed to enable kernel records' "$err" && [ "$(state subscribed)" = 0 ] &&
	ok "kernel records refused: off, spool removed" || bad "kernel records refused" "$(cat "$out" "$err" | tr '\n' ' ')"

run nofine iqeq MOCK_NO_FINE=1
expect_spool "no fine-grained driver API: kernels still recorded" "k == 100"
grep -q 'GTRACE_CUPTI_API=all' "$err" && ok "no fine-grained driver API: says what to do" ||
	bad "no fine-grained driver API message" "$(cat "$err")"

run exit_ iecx
if [ -n "$spool" ]; then
	# _exit while the writer thread writes may cut the last chunk short
	SPOOL_CUT_OK=1 $check "$spool" "stats is None" > /dev/null && ok "_exit: no exit handler, file without stats (the recorder waits for the pid)" ||
		bad "_exit" "stats written?"
else
	bad "_exit" "no spool file"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
