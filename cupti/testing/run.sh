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

# idle: nothing asks for a recording (skipped while a recorder runs here)
if [ -d /run/gtrace-bpf/cupti ]; then
	echo "note: /run/gtrace-bpf/cupti exists (a recorder runs): idle case skipped"
else
	env -u GTRACE_CUPTI_DIR "$driver" "$agent" iqnq > "$tmp/idle.out" 2> "$tmp/idle.err"
	if [ $? -eq 0 ] && grep -q 'subscribes=0' "$tmp/idle.out" && grep -q '^nvtx=0' "$tmp/idle.out" &&
		grep -q 'nvtx_inits=0' "$tmp/idle.out" && [ ! -s "$tmp/idle.err" ]; then
		ok "idle: no subscription, NVTX declined, silent"
	else
		bad "idle" "$(cat "$tmp/idle.out" "$tmp/idle.err" | tr '\n' ' ')"
	fi
fi

run record iqeeecenq
expect_spool "record until exit: every record, stats last" \
	"k == 400 and api == 400 and copies == 4 and sets == 4 and nvtx == 4 and stats and stats['records'] == 816 and stats['unknown'] == 4 and stats['dropped'] == 0 and len(corr) == 400 and names == {'_Z10mockKernelv'} and all(r[1] > 0 and r[2] == 'mock range' for r in ranges) and len(pid) == 1"
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
GTRACE_CUPTI_DIR=$tmp/exists sh -c 'touch "$GTRACE_CUPTI_DIR/gtrace-cupti.$$.spool"; exec "$0" "$1" iq' \
	"$driver" "$agent" > "$tmp/exists.out" 2> "$tmp/exists.err"
if grep -q 'File exists' "$tmp/exists.err" && grep -q 'subscribed=0' "$tmp/exists.out"; then
	ok "spool file exists: said, subscriber slot given back"
else
	bad "spool file exists" "$(cat "$tmp/exists.out" "$tmp/exists.err" | tr '\n' ' ')"
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
	$check "$spool" "stats is None" > /dev/null && ok "_exit: no exit handler, file without stats (the recorder waits for the pid)" ||
		bad "_exit" "stats written?"
else
	bad "_exit" "no spool file"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
