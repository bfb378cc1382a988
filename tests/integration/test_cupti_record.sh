#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf record --cupti against the mock libcuda, which loads the real
# CUPTI agent over the mock libcupti (GT_MOCK_INJECTION=1) as the driver
# would: the GPU side of -- CMD and of programs that join --all, -p and
# --cgroup, read into the trace as it is written and linked to the calls; a
# recorder after a SIGKILLed one takes the running programs' agents over and
# records their GPU side from its own start; spool files of programs that
# ended meanwhile are removed, said once; --cupti=optional; a private spool
# directory swapped for a link steers root nowhere; programs of other users
# join; a full file system is said as what it is; the agent library is
# checked. Each case has its own run directory ($T/run, GTRACE_RUN_DIR, which
# the agents read too).
REQUIRES="root jq mock gtrace"
# memory measured on the plain build only: see t_attach_memory
QUIET_CASES="t_attach_memory"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
# the --all --cupti cases that check the session of every process (scope all)
# run solo in both passes
SCOPED_CASES="t_spool_empty t_attach_all t_unjoined"
. "$(dirname "$0")/lib.sh"

OUT_DIR=$(dirname "$MOCK_DIR")
AGENT=$OUT_DIR/libgtrace-cupti.so
CUPTI_MOCK=$OUT_DIR/cupti/mock

need_cupti() {
	[ -f "$AGENT" ] && ls "$CUPTI_MOCK"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($AGENT, $CUPTI_MOCK): build them with make cupti-mock (needs cupti.h)"
	export GTRACE_RUN_DIR=$T/run
}

# the environment of a program started with the agent
AGENT_ENV=(GT_MOCK_INJECTION=1 "CUDA_INJECTION64_PATH=$AGENT" "LD_LIBRARY_PATH=$CUPTI_MOCK")

# summary FILE: the merge's summary line in a recorder's stderr
summary() { grep '^gtrace-bpf: merged' "$1"; }
# field N FILE: the merge summary's number before WORD
field() { summary "$2" | grep -oE "[0-9]+ $1" | head -n 1 | cut -d' ' -f1; }

# tell FILE: the recorder's last lines of FILE (its stderr, CMD's too), and
# before them what else spoke there (the agent, "gtrace-cupti: ...", and the
# mock libcuda that loads it, "libcuda mock: ...", whose dlopen error says
# why no agent ran), on one line.
tell() {
	{ grep -E '^(gtrace-cupti|libcuda mock):' "$1" | head -n 4; tail -n 3 "$1"; } | tr '\n' '|'
}

one_line() {
	local n
	n=$(wc -l < "$2")
	[ "$n" -eq 1 ] || err "$1: $n lines on stderr, expected one: $(head -n 4 "$2" | tr '\n' '|')"
}

# -- CMD: the agent's environment reaches CMD, a private directory (root's,
# 0700) that goes at the end, every kernel, copy and set linked.
t_cmd() {
	local dir
	need_cupti
	cat > "$T/wrap.sh" <<EOF
#!/bin/sh
env | grep -E '^(CUDA_INJECTION64_PATH|GTRACE_CUPTI_DIR|NVTX_INJECTION64_PATH)=' | sort > "$T/env.txt"
stat -c '%a %U' "\$GTRACE_CUPTI_DIR" > "$T/dir.txt"
exec "\$@"
EOF
	chmod +x "$T/wrap.sh"
	GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" \
		-o "$T/c.gtrace" -- env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$CUPTI_MOCK" "$T/wrap.sh" \
		"$WORKLOAD" --launches 40 --copies 3 > "$T/c.out" 2> "$T/c.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf --cupti -- CMD exited with $RC: $(tell "$T/c.err")"
	dir=$(sed -n 's/^GTRACE_CUPTI_DIR=//p' "$T/env.txt")
	[ -n "$dir" ] || fatal "CMD did not get GTRACE_CUPTI_DIR: $(tr '\n' '|' < "$T/env.txt")"
	grep -qx "CUDA_INJECTION64_PATH=$AGENT" "$T/env.txt" || err "CUDA_INJECTION64_PATH in CMD: $(grep CUDA_INJ "$T/env.txt"), expected $AGENT"
	grep -qx "NVTX_INJECTION64_PATH=$AGENT" "$T/env.txt" || err "NVTX_INJECTION64_PATH in CMD: $(grep NVTX "$T/env.txt")"
	[ "$(cat "$T/dir.txt")" = "700 root" ] || err "the spool directory was $(cat "$T/dir.txt"), expected 700 root"
	[ ! -e "$dir" ] || err "the spool directory $dir is still there after the recording"
	want="gtrace-bpf: merged 45 GPU records from 1 processes: 45 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/c.err")
	[ "$got" = "$want" ] || err "--cupti -- CMD summary:
  got      $got
  expected $want
  stderr   $(tell "$T/c.err")"
	"$GTRACE" dump --summary "$T/c.gtrace" > "$T/sum.out" 2>&1
	grep -q 'cupti=merged' "$T/sum.out" || err "the trace's options do not say cupti=merged: $(grep options "$T/sum.out")"
	[ "$(stat -c %a "$T/c.gtrace")" = 600 ] || err "the merged trace has mode $(stat -c %a "$T/c.gtrace")"
}

# --all --cupti: the run directory (root's, 1733) and its session while the
# recorder runs; a program started with the agent joins; its file goes with
# it; at the end the session goes, the directory stays, and a program
# started then stays armed without a file.
t_all() {
	local run=$T/run/cupti
	need_cupti
	start_tracer --all --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" -o "$T/all.gtrace"
	[ "$(stat -c '%a %U' "$run")" = "1733 root" ] || err "$run is $(stat -c '%a %U' "$run"), expected 1733 root"
	[ "$(cat "$run/session")" = "scope all" ] || err "the session says '$(cat "$run/session")', expected 'scope all'"
	grep -q OFDLCK /proc/locks || err "no OFD lock held while recording: $(cat /proc/locks)"
	run_wl w "${AGENT_ENV[@]}" --launches 40 --copies 3
	stop_tracer INT
	want="gtrace-bpf: merged 45 GPU records from 1 processes: 45 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/tracer.err")
	[ "$got" = "$want" ] || err "--all --cupti summary:
  got      $got
  expected $want"
	[ ! -e "$run/gtrace-cupti.$WP.spool" ] || err "the spool file of the exited program is still there"
	[ ! -e "$run/session" ] || err "the session is still there after the recording"
	[ -d "$run" ] || err "the run directory went (programs started later find no recorder to wait for)"
	run_wl late "${AGENT_ENV[@]}" --launches 4
	[ -z "$(ls "$run" | grep spool)" ] || err "an agent without a recorder made a file: $(ls "$run")"
}

# A recorder SIGKILLed while a program records with the agent; the next one
# takes the agent over at once: exit 0, every launch it recorded linked, no
# GPU record left over; the unread part of the killed recorder's and what
# came before its own start left out, counted; a spool file of a program
# that ended while no recorder ran removed, said once; what it read it gave
# back (the spool of the program, still running, holds at most a page).
t_takeover() {
	local run=$T/run/cupti dead launches linked blocks size last
	need_cupti
	start_tracer --all --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" -o "$T/a.gtrace"
	start_workload w "GT_LIBCUDA=$MOCK_LIB" "${AGENT_ENV[@]}" -- --flood 8 --rate 500 --launch-log "$T/launch.log"
	# recording under the first recorder: its spool has grown
	for _ in $(seq 100); do
		[ "$(stat -c %s "$run/gtrace-cupti.$WPID.spool" 2>/dev/null || echo 0)" -gt 20000 ] && break
		sleep 0.1
	done
	kill -KILL "$TRACER_PID"
	wait_exit "$TRACER_PID" 10 || fatal "the first recorder did not die"
	# a program that ended while no recorder ran: its file, an hour old
	bash -c 'exit 0' & dead=$!
	wait $dead
	printf 'GTCUPTI1' > "$run/gtrace-cupti.$dead.spool"
	touch -d '1 hour ago' "$run/gtrace-cupti.$dead.spool"
	mv "$T/tracer.err" "$T/a.err"
	GT_LIBCUDA="$MOCK_LIB" start_tracer --all --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" \
		-o "$T/b.gtrace"
	sleep 1
	# the program stopped before the recorder is: what its agent wrote is
	# all read when the recorder ends, and nothing more is written while
	# the spool's room is measured below
	kill -STOP "$WPID"
	stop_tracer INT
	blocks=$(stat -c %b "$run/gtrace-cupti.$WPID.spool")
	size=$(stat -c %s "$run/gtrace-cupti.$WPID.spool")
	kill -CONT "$WPID"
	cp "$T/tracer.err" "$T/b.err"
	kill -0 "$WPID" 2>/dev/null || fatal "the workload ended before the second recording did: make its flood longer"
	dump_trace "$T/b.gtrace" "$T/b.json"
	# the launches up to the last one whose kernel the agent had written
	# when the program was stopped: the records of the last few it still
	# held in its buffer never came, which the merger knows (its API
	# records are missing too): it counts them as no anomaly, and neither
	# does this
	last=$(jq -s --argjson p "$WPID" '[.[] | select(.pid == $p and .type == "gpu_kernel" and .launch_ts != null) | .launch_ts] | max // 0' "$T/b.json")
	launches=$(jq -s --argjson p "$WPID" --argjson l "$last" '[.[] | select(.pid == $p and .type == "launch" and .ts <= $l)] | length' "$T/b.json")
	linked=$(jq -s --argjson p "$WPID" '[.[] | select(.pid == $p and .type == "gpu_kernel" and .launch_ts != null)] | length' "$T/b.json")
	[ "$launches" -gt 0 ] || err "no launch of the program with its kernel recorded in a second at 500/s"
	[ "$linked" -eq "$launches" ] || err "$linked GPU kernels linked of the $launches launches recorded up to the last linked one"
	[ "$(field unmatched "$T/b.err")" = 0 ] && [ "$(field 'launches without' "$T/b.err")" = 0 ] ||
		err "not every GPU record and launch paired: $(summary "$T/b.err")"
	grep -q 'GPU records of programs that ran before this recording began left out' "$T/b.err" ||
		err "the records from before its start are not said: $(tr '\n' '|' < "$T/b.err")"
	[ "$(grep -c 'removed 1 spool file of programs that ended while no recorder read them' "$T/b.err")" = 1 ] ||
		err "the spool file of the program that ended is not said once: $(tr '\n' '|' < "$T/b.err")"
	[ ! -e "$run/gtrace-cupti.$dead.spool" ] || err "the spool file of the program that ended is still there"
	# the running program's file: what was read was given back; it holds
	# the room its agent keeps for its last records (64 KiB) and a page or
	# two at most (152 blocks in CI before a give-back freed the page the
	# one before it ended in); none given back, it would hold its length
	# (~250 KB here) and the room
	log "the running program's spool: $size bytes long, $blocks blocks on disk"
	[ "$blocks" -le $(((65536 + 8192) / 512)) ] ||
		err "the spool of the running program holds $blocks blocks after the recording ($size bytes long)"
	finish_workload w "$WPID"
}

# --cupti=optional when no program joins: exit 0 with the warning; plain
# --cupti: exit 1.
t_optional() {
	local rc
	need_cupti
	"$GTRACE" --all --libcuda "$MOCK_LIB" --trace cuda --cupti=optional --cupti-lib "$AGENT" -d 1 \
		-o "$T/o.gtrace" > "$T/o.out" 2> "$T/o.err"
	rc=$?
	[ "$rc" -eq 0 ] || err "--all --cupti=optional, nobody joining: exit $rc, expected 0: $(tell "$T/o.err")"
	grep -q 'warning: --cupti: no GPU records: no program joined' "$T/o.err" || err "--cupti=optional: no warning: $(cat "$T/o.err")"
	"$GTRACE" --all --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" -d 1 \
		-o "$T/p.gtrace" > "$T/p.out" 2> "$T/p.err"
	rc=$?
	[ "$rc" -eq 1 ] || err "--all --cupti, nobody joining: exit $rc, expected 1"
	[ -s "$T/p.gtrace" ] || err "--all --cupti, nobody joining: the trace of the calls is lost"
}

# -p PID --cupti: the agent of the process traced records; another
# program's agent, not traced, records nothing (its file says it is there).
t_listed() {
	local a b run=$T/run/cupti
	need_cupti
	# the run directory exists at the programs' cuInit: they are armed
	mkdir -p "$T/run" && mkdir -m 1733 "$run"
	start_workload a "GT_LIBCUDA=$MOCK_LIB" "${AGENT_ENV[@]}" -- --wait-signal --launches 40 --copies 3
	a=$WPID
	start_workload b "GT_LIBCUDA=$MOCK_LIB" "${AGENT_ENV[@]}" -- --wait-signal --launches 40 --copies 3
	b=$WPID
	wait_ready a "$a"
	wait_ready b "$b"
	start_tracer -p "$a" --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" -o "$T/l.gtrace"
	[ "$(cat "$run/session")" = "scope listed" ] || err "the session says '$(cat "$run/session")', expected 'scope listed'"
	# wait for both agents' files: the traced one admitted (its go file)
	for _ in $(seq 100); do
		[ -e "$run/go.$a" ] && [ -e "$run/gtrace-cupti.$b.spool" ] && break
		sleep 0.1
	done
	kill -USR1 "$a" "$b"
	finish_workload a "$a"
	finish_workload b "$b"
	stop_tracer INT
	want="gtrace-bpf: merged 45 GPU records from 1 processes: 45 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/tracer.err")
	[ "$got" = "$want" ] || err "-p --cupti summary:
  got      $got
  expected $want"
	[ -e "$run/go.$b" ] && err "a go file for the process not traced"
	[ ! -e "$run/go.$a" ] || err "the go file stayed after the recording"
}

# --cupti -- CMD with a TMPDIR others can write to: CMD's user (here the
# test, playing another user) swaps the private directory for a link to a
# directory with files and a planted spool file. Root deletes nothing
# there and merges nothing from it.
t_swapped_dir() {
	local pid
	need_cupti
	mkdir -m 0777 "$T/tmp" "$T/victim"
	echo keep > "$T/victim/precious.txt"
	cat > "$T/swap.sh" <<'EOF'
#!/bin/sh
mv "$GTRACE_CUPTI_DIR" "$GTRACE_CUPTI_DIR.moved"
ln -s "$VICTIM" "$GTRACE_CUPTI_DIR"
printf 'GTCUPTI1planted' > "$VICTIM/gtrace-cupti.$$.spool"
exec "$@"
EOF
	chmod +x "$T/swap.sh"
	TMPDIR=$T/tmp VICTIM=$T/victim GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda --cupti \
		--cupti-lib "$AGENT" -o "$T/s.gtrace" -- "$T/swap.sh" "$WORKLOAD" --launches 4 > "$T/s.out" 2> "$T/s.err"
	[ -f "$T/victim/precious.txt" ] || err "root deleted a file in the directory the link pointed to"
	pid=$(grep '^{' "$T/s.out" | jq .pid)
	[ -f "$T/victim/gtrace-cupti.$pid.spool" ] || err "root deleted the planted file in the link's target"
	[ -z "$(summary "$T/s.err")" ] || err "root merged GPU records from the link's target: $(summary "$T/s.err")"
	[ -n "$(find "$T/tmp" -maxdepth 1 -type l)" ] || err "the link in TMPDIR was touched"
	grep -q 'not where it was made' "$T/s.err" || err "the swap is not said: $(tr '\n' '|' < "$T/s.err")"
	dump_trace "$T/s.gtrace" "$T/s.json"
	[ "$(launches_of "$T/s.json" "$pid")" -eq 4 ] || err "the calls of the recording were lost"
}

# A program of another user (nobody) joins --all --cupti: its kernels are
# linked; its spool file is its own and is read (the recorder sees whose it
# is while the program runs: it lives a second here).
t_nonroot() {
	local nb=$T/nb
	need_cupti
	id nobody > /dev/null 2>&1 || fatal "no user nobody"
	# what the program runs, where nobody can read it
	mkdir -p "$nb" && chmod 711 "$T" && chmod 755 "$nb"
	cp "$WORKLOAD" "$MOCK_LIB" "$AGENT" "$CUPTI_MOCK"/libcupti.so.* "$nb/"
	start_tracer --all --libcuda "$nb/libcuda.so.1" --trace cuda --cupti --cupti-lib "$nb/libgtrace-cupti.so" -o "$T/n.gtrace"
	su nobody -s /bin/sh -c "GTRACE_RUN_DIR='$T/run' GT_LIBCUDA='$nb/libcuda.so.1' GT_MOCK_INJECTION=1 \
		CUDA_INJECTION64_PATH='$nb/libgtrace-cupti.so' LD_LIBRARY_PATH='$nb' '$nb/cuda_workload' --launches 40 --copies 3 \
		--gpu-idle 1000" \
		> "$T/w.out" 2> "$T/w.err" || fatal "the workload as nobody failed: $(tell "$T/w.err")"
	stop_tracer INT
	want="gtrace-bpf: merged 45 GPU records from 1 processes: 45 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/tracer.err")
	[ "$got" = "$want" ] || err "a program of nobody's: summary
  got      $got
  expected $want
  its stderr: $(tr '\n' '|' < "$T/w.err")"
}

# A program whose agent cannot join (the run directory's file system is
# full when it starts): the recorder counts it and names it.
t_unjoined() {
	local pid
	need_cupti
	mkdir -p "$T/run"
	mount -t tmpfs -o size=1m tmpfs "$T/run" || fatal "cannot mount a tmpfs"
	start_tracer --all --libcuda "$MOCK_LIB" --trace cuda --cupti=optional --cupti-lib "$AGENT" -o "$T/u.gtrace"
	dd if=/dev/zero of="$T/run/fill" bs=64k > /dev/null 2>&1
	start_workload u "GT_LIBCUDA=$MOCK_LIB" "${AGENT_ENV[@]}" -- --wait-signal --launches 8
	pid=$WPID
	wait_ready u "$pid"
	stop_tracer INT
	kill -USR1 "$pid"
	finish_workload u "$pid"
	umount "$T/run"
	grep -q "CUPTI: 1 process ran the agent but did not join.*(pid $pid;" "$T/tracer.err" ||
		err "the process whose agent could not join is not named: $(tr '\n' '|' < "$T/tracer.err")"
	grep -q 'the file system is full' "$T/u.err" || err "its agent did not say why: $(cat "$T/u.err")"
}

# A full file system where the agent spools: every GPU record it could not
# write counted in its counters (written in the room kept for them), the
# recorder says so as what it is.
t_full() {
	local pid lost
	need_cupti
	mkdir -p "$T/tmp"
	mount -t tmpfs -o size=2m tmpfs "$T/tmp" || fatal "cannot mount a tmpfs"
	TMPDIR=$T/tmp GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" \
		-o "$T/f.gtrace" -- env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$CUPTI_MOCK" "$WORKLOAD" --wait-signal \
		--launches 400 > "$T/f.out" 2> "$T/f.err" &
	TRACER_PID=$!
	PIDS+=("$TRACER_PID")
	wait_line "$T/f.out" '^ready ' 30 "$TRACER_PID" || fatal "the workload did not start: $(tell "$T/f.err")"
	pid=$(sed -n 's/^ready //p' "$T/f.out")
	# the agent's file is there with its room kept: now the disk fills
	dd if=/dev/zero of="$T/tmp/fill" bs=4k > /dev/null 2>&1
	kill -USR1 "$pid"
	wait_exit "$TRACER_PID" 60 || fatal "the recording did not end"
	umount "$T/tmp"
	grep -q "CUPTI: pid $pid lost [0-9]* GPU records: the file system of .* was full" "$T/f.err" ||
		err "the full file system is not said: $(tr '\n' '|' < "$T/f.err")"
	"$GTRACE" dump --summary "$T/f.gtrace" > "$T/sum.out" 2>&1
	lost=$(awk '$1 == "lost_disk" { print $2 }' "$T/sum.out")
	[ -n "$lost" ] && [ "$lost" -ge 800 ] ||
		err "the trace does not count what the full disk lost (400 kernels, 400 API records): $(grep -A9 'cupti agent' "$T/sum.out" | tr '\n' '|')"
}

# --cupti-lib must be the agent: a shared object that exports
# InitializeInjection. One line, status 1, no trace.
t_agent_lib() {
	local rc f
	echo 'int not_the_agent(void) { return 1; }' > "$T/other.c"
	cc -shared -fPIC "$T/other.c" -o "$T/other.so" || fatal "cannot build a library"
	for f in /etc/passwd "$T/other.so" "$(command -v true)" "$T/nope.so"; do
		"$GTRACE" --cupti --cupti-lib "$f" -o "$T/x.gtrace" -- true > "$T/o" 2> "$T/e"
		rc=$?
		[ "$rc" -eq 1 ] || err "--cupti-lib $f: exit $rc, expected 1"
		one_line "--cupti-lib $f" "$T/e"
		grep -q "$f" "$T/e" || err "--cupti-lib $f: the error does not name the file: $(cat "$T/e")"
		[ ! -e "$T/x.gtrace" ] || err "--cupti-lib $f wrote a trace"
	done
	grep -q 'not an ELF file' <("$GTRACE" --cupti --cupti-lib /etc/passwd -o "$T/x.gtrace" -- true 2>&1) ||
		err "a text file is not called what it is"
	# a gtrace-bpf with no agent beside it, in ../lib/gtrace-bpf or .output
	mkdir -p "$T/bin"
	cp "$GTRACE" "$T/bin/gtrace-bpf"
	"$T/bin/gtrace-bpf" --cupti -o "$T/y.gtrace" -- true > "$T/o" 2> "$T/e"
	rc=$?
	[ "$rc" -ne 0 ] || err "--cupti without an agent library: exit 0"
	one_line "--cupti without an agent library" "$T/e"
	grep -q "libgtrace-cupti.so" "$T/e" || err "--cupti without an agent: $(cat "$T/e")"
	[ ! -e "$T/y.gtrace" ] || err "--cupti without an agent wrote a trace"
}

# --cupti -- CMD where the agent never loads (the mock libcuda without its
# injection, as a static binary or a program under another injection):
# never a silent "0 GPU records" with status 0.
t_never_loaded() {
	local rc
	GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" \
		-o "$T/n.gtrace" -- "$WORKLOAD" --launches 4 --copies 1 --syncs 1 > "$T/n.out" 2> "$T/n.err"
	rc=$?
	[ "$rc" -eq 1 ] || err "--cupti with an agent that never loaded: exit $rc, expected 1"
	grep -q '^gtrace-bpf: warning: --cupti: no GPU records: the agent never loaded although the command used CUDA' "$T/n.err" ||
		err "no warning naming why there are no GPU records; stderr: $(tr '\n' '|' < "$T/n.err")"
	dump_trace "$T/n.gtrace" "$T/n.json"
	jq -s -e '[.[] | select(.type == "launch")] | length == 4' "$T/n.json" > /dev/null ||
		err "the trace of a --cupti recording without GPU records lost its 4 launches"
	GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda --cupti=optional --cupti-lib "$AGENT" \
		-o "$T/o.gtrace" -- "$WORKLOAD" --launches 4 --copies 1 --syncs 1 > "$T/o.out" 2> "$T/o.err"
	rc=$?
	[ "$rc" -eq 0 ] || err "--cupti=optional with an agent that never loaded: exit $rc, expected 0; stderr: $(tell "$T/o.err")"
	grep -q 'warning: --cupti: no GPU records' "$T/o.err" || err "--cupti=optional: no warning about the missing GPU records"
	"$GTRACE" --cupti=maybe -o "$T/m.gtrace" -- true > /dev/null 2> "$T/m.err"
	rc=$?
	[ "$rc" -eq 2 ] || err "--cupti=maybe: exit $rc, expected 2"
	one_line "--cupti=maybe" "$T/m.err"
}

# -p PID --cupti=attach: a program started without the agent (its
# environment names none; LD_LIBRARY_PATH only finds the mock libcupti the
# agent needs) takes it while it waits: every GPU record of its calls after
# the signal linked; the process ends as it would have. Refused, said once,
# status 1: a process whose CUPTI another subscriber holds (MOCK_CONFLICT),
# a static program.
# attach_to NAME ENV...: a mock CUDA program with ENV that waits for
# SIGUSR1 (its pid in WPID), and one recording of 1 s attached to it:
# $T/NAME.gtrace, the recorder's stderr in $T/NAME.rec, its status in RC.
attach_to() {
	local name=$1
	shift
	start_workload "$name" "GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK" "$@" -- --wait-signal --launches 8
	wait_ready "$name" "$WPID"
	"$GTRACE" record -p "$WPID" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -d 1 \
		-o "$T/$name.gtrace" > /dev/null 2> "$T/$name.rec"
	RC=$?
}

t_attach() {
	local a want got run=$T/run/cupti
	need_cupti
	start_workload a "GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK" -- --wait-signal --launches 40 --copies 3
	a=$WPID
	wait_ready a "$a"
	grep -q gtrace-cupti "/proc/$a/maps" && fatal "the agent is in the program before the attach"
	start_tracer -p "$a" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -o "$T/at.gtrace"
	grep -q "^gtrace-bpf: --cupti=attach: the agent is in pid $a (" "$T/tracer.err" ||
		err "no attach line: $(grep -i attach "$T/tracer.err" | tr '\n' '|')"
	grep -q 'memfd:gtrace-agent' "/proc/$a/maps" || err "the agent is not mapped in the program"
	for _ in $(seq 100); do
		[ -e "$run/go.$a" ] && break
		sleep 0.1
	done
	kill -USR1 "$a"
	finish_workload a "$a"
	stop_tracer INT
	want="gtrace-bpf: merged 45 GPU records from 1 processes: 45 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/tracer.err")
	[ "$got" = "$want" ] || err "-p --cupti=attach summary:
  got      $got
  expected $want"
	# another subscriber holds CUPTI: the agent stays inert, said, status 1
	attach_to b MOCK_CONFLICT=1
	[ "$RC" -eq 1 ] || err "--cupti=attach into a process whose CUPTI is held exited $RC, expected 1"
	[ "$(grep -c 'another CUPTI subscriber holds CUPTI' "$T/b.rec")" -eq 1 ] ||
		err "the other subscriber not said once: $(grep -i 'attach\|cupti' "$T/b.rec" | tr '\n' '|')"
	kill -USR1 "$WPID"
	finish_workload b "$WPID"
	# CUPTI faults in the agent's start (a read of address 0x5c): the
	# program dies of it as it would have; the recorder says where (the
	# signal, the file and offset, the address), in one line, status 1,
	# and the trace's attach record says "died"
	ulimit -c 0
	attach_to f MOCK_FAULT=1
	[ "$RC" -eq 1 ] || err "--cupti=attach into a process that faulted in it exited $RC, expected 1"
	[ "$(grep -c -- "^gtrace-bpf: warning: --cupti=attach: pid $WPID died while gt_agent_attach ran in it (thread [0-9]*): SIGSEGV at libcupti.so[.0-9]*+0x[0-9a-f]*, address 0x5c; killed by SIGSEGV (11)\$" "$T/f.rec")" -eq 1 ] ||
		err "the fault not said once, with where: $(grep -i 'attach' "$T/f.rec" | tr '\n' '|')"
	kill -0 "$WPID" 2> /dev/null && err "the program that faulted is still there"
	wait_exit "$WPID" 10
	[ "$WAIT_RC" -eq $((128 + 11)) ] || err "the program that faulted ended with $WAIT_RC, expected $((128 + 11)) (SIGSEGV)"
	got=$("$GTRACE" dump "$T/f.gtrace" | jq -c 'select(.type == "cupti_attach") | [.event, (.dur > 0)]')
	[ "$got" = '["died",true]' ] || err "the trace's attach record: $got, expected [\"died\",true] (held for some time)"
	# ... and later, once the attached agent recorded GPU work (its flush):
	# said once
	start_workload g "GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK" MOCK_FAULT=flush -- --wait-signal --launches 8
	wait_ready g "$WPID"
	start_tracer -p "$WPID" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -o "$T/late.gtrace"
	for _ in $(seq 100); do
		[ -e "$run/go.$WPID" ] && break
		sleep 0.1
	done
	kill -USR1 "$WPID"
	wait_exit "$WPID" 10
	stop_tracer INT
	cp "$T/tracer.err" "$T/late.err"
	[ "$(grep -c "^gtrace-bpf: warning: pid $WPID was killed by SIGSEGV [0-9.]* s after the CUPTI agent was attached to it" "$T/late.err")" -eq 1 ] ||
		err "the later fault not said once: $(grep -i 'attach\|killed' "$T/late.err" | tr '\n' '|')"
	# a static program: refused before anything is done
	# it runs until told (SIGUSR1) after the recorder has answered, however slow
	PROG=$MOCK_DIR/inject_target_static start_workload s -- 600
	wait_line "$T/s.out" "^ready $WPID\$" 20 "$WPID" || fatal "the static program did not start"
	"$GTRACE" record -p "$WPID" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -d 1 \
		-o "$T/st.gtrace" > /dev/null 2> "$T/st.err"
	RC=$?
	[ "$RC" -eq 1 ] || err "--cupti=attach into a static program exited $RC, expected 1"
	[ "$(grep -c -- "--cupti=attach: pid $WPID is a static program" "$T/st.err")" -eq 1 ] ||
		err "the static program not said once: $(grep -i 'attach' "$T/st.err" | tr '\n' '|')"
	kill -USR1 "$WPID" 2> /dev/null || err "the static program was gone after the refused attach"
	wait_exit "$WPID" 10
	[ "$WAIT_RC" -eq 0 ] || err "the static program exited $WAIT_RC after the refused attach"
}

# -p PID --cupti=attach into a CPython 3.14 job (Debian unstable's, from
# tools/python314.sh): its interpreter loads the agent itself, in its main
# thread (PEP 768's remote script: no thread stopped), said on the attach
# line and in the trace's attach record; every GPU record linked, the job
# ends well, nothing of the attempt left in its /tmp. With its remote debugging switched off
# (PYTHON_DISABLE_REMOTE_DEBUG) a thread is held instead, as for any program.
t_attach_py314() {
	local py a mode run=$T/run/cupti got left
	need_cupti
	py=$("$ROOT/tools/python314.sh" 2> "$T/py314.err") ||
		fatal "no CPython 3.14 for the test (tools/python314.sh): $(tail -n 2 "$T/py314.err" | tr '\n' '|')"
	for mode in remote held; do
		local -a envs=("GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK")
		[ $mode = held ] && envs+=(PYTHON_DISABLE_REMOTE_DEBUG=1)
		rm -f "$T/go"
		PROG=$py start_workload "p$mode" "${envs[@]}" -- "$ROOT/tests/mock/py_attach.py" "$T/go" 40
		a=$WPID
		wait_ready "p$mode" "$a"
		start_tracer -p "$a" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -o "$T/$mode.gtrace"
		got=$(grep "^gtrace-bpf: --cupti=attach: the agent is in pid $a (" "$T/tracer.err")
		if [ $mode = remote ]; then
			[[ $got == *"by its interpreter (Python's remote debugging: no thread stopped)"* ]] ||
				err "3.14: the attach line does not say the interpreter loaded the agent: ${got:-$(grep -i attach "$T/tracer.err" | tr '\n' '|')}"
		else
			[ -n "$got" ] && [[ $got != *"by its interpreter"* ]] ||
				err "remote debugging off: not attached by a held thread: ${got:-$(grep -i attach "$T/tracer.err" | tr '\n' '|')}"
		fi
		grep -q 'memfd:gtrace-agent' "/proc/$a/maps" || err "$mode: the agent is not mapped in the job"
		for _ in $(seq 100); do
			[ -e "$run/go.$a" ] && break
			sleep 0.1
		done
		touch "$T/go"
		finish_workload "p$mode" "$a"
		stop_tracer INT
		got=$("$GTRACE" dump "$T/$mode.gtrace" | jq -s -c --argjson p "$a" '[.[] | select(.type == "cupti_attach" and .pid == $p) | [.event, .kind]]')
		if [ $mode = remote ]; then
			[ "$got" = '[["attached","interpreter"]]' ] || err "3.14: the trace's attach record: $got, expected attached by the interpreter"
		else
			[ "$got" = '[["attached","thread"]]' ] || err "remote debugging off: the trace's attach record: $got, expected attached by a held thread"
		fi
		left=$(ls -d /tmp/.gtrace-attach-"$a"-* 2> /dev/null)
		[ -z "$left" ] || err "$mode: the attempt's directory left in /tmp: $left"
		[ "$(field linked "$T/tracer.err")" -ge 40 ] && [ "$(field linked "$T/tracer.err")" = "$(field 'GPU records' "$T/tracer.err")" ] ||
			err "$mode: not every GPU record of the 40 launches linked: $(summary "$T/tracer.err")"
	done
}

# -p PID --cupti=attach, three times into one running program, then a
# recorder SIGKILLed while attached: each recording links all its GPU
# records; after each the agent detaches (CUPTI finalized in the exit
# callback of the program's next call, as the mock libcupti says on its
# stderr) and the program's threads and descriptors are as before the first
# attach; the program runs on to its end.
# finalized FILE N: FILE (a program's stderr over the mock libcupti) says
# CUPTI was finalized N times in an API exit callback; waits 20 s at most
finalized() {
	local i
	for ((i = 0; i < 400; i++)); do
		[ "$(grep -c 'cuptiFinalize in an API exit callback' "$1")" -ge "$2" ] && break
		nap 0.05
	done
	[ "$(grep -c 'cuptiFinalize in an API exit callback' "$1")" -eq "$2" ]
}

# flood_program SECS: a mock program started without the agent, launching
# 400 times a second for SECS seconds: its pid in W (its stderr $T/w.err),
# its threads and descriptors in N0 and F0.
flood_program() {
	start_workload w "GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK" -- --wait-signal --flood "$1" --rate 400 --steady 50
	W=$WPID
	wait_ready w "$W"
	kill -USR1 "$W"
	N0=$(ls "/proc/$W/task" | wc -l)
	F0=$(ls "/proc/$W/fd" | wc -l)
}

# attach_cycle TAG [OPTION...]: one recording of 1 s attached to W with the
# options (the trace $T/TAG.gtrace, its stderr $T/TAG.err, its dump
# --summary $T/TAG.sum): status 0, every GPU record linked and at least 50
# of them, the detach in the agent's counters; then the program's threads
# and descriptors back to N0 and F0.
attach_cycle() {
	local tag=$1
	shift
	"$GTRACE" record -p "$W" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach "$@" --cupti-lib "$AGENT" -d 1 \
		-o "$T/$tag.gtrace" > /dev/null 2> "$T/$tag.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "attach $tag exited $RC: $(tell "$T/$tag.err")"
	summary "$T/$tag.err" | grep -qE 'from 1 processes: ([1-9][0-9]*) linked \(100\.0 %\), 0 unmatched, 0 causality violations' ||
		err "attach $tag: not every GPU record linked: $(summary "$T/$tag.err")"
	[ "$(field linked "$T/$tag.err")" -ge 50 ] || err "attach $tag: fewer than 50 GPU records in 1 s at 400 launches/s"
	"$GTRACE" dump --summary "$T/$tag.gtrace" > "$T/$tag.sum"
	grep -Eq '^ +ended +detached$' "$T/$tag.sum" || err "attach $tag: the agent's counters do not say it detached"
	for _ in $(seq 100); do
		[ "$(ls "/proc/$W/task" | wc -l)" -eq "$N0" ] && break
		sleep 0.1
	done
	[ "$(ls "/proc/$W/task" | wc -l)" -eq "$N0" ] ||
		err "attach $tag: the program has $(ls "/proc/$W/task" | wc -l) threads after the detach, $N0 before the first attach"
	[ "$(ls "/proc/$W/fd" | wc -l)" -eq "$F0" ] ||
		err "attach $tag: the program has $(ls "/proc/$W/fd" | wc -l) descriptors after the detach, $F0 before: $(ls -l "/proc/$W/fd" | tr '\n' '|')"
}

t_attach_cycles() {
	local w c want=0
	need_cupti
	flood_program 60
	w=$W
	for c in 1 2 3; do
		attach_cycle "c$c"
		want=$((want + 1))
		finalized "$T/w.err" "$want" ||
			fatal "attach $c: CUPTI not finalized once more in an API exit callback: $(grep -c cuptiFinalize "$T/w.err") times"
	done
	grep -q 'outside an API callback' "$T/w.err" && err "CUPTI finalized outside an API callback"
	# SIGKILL of the recorder while attached: the agent sees its lock go and detaches
	[ "$(find "$T/run/cupti" -name "gtrace-cupti.$w.*spool" | wc -l)" -eq 0 ] ||
		err "spool files of the detached agents left: $(ls "$T/run/cupti" | tr '\n' ' ')"
	start_tracer record -p "$w" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -o "$T/k.gtrace"
	wait_line "$T/tracer.err" "the agent is in pid $w" 20 || fatal "no attach line: $(tell "$T/tracer.err")"
	# recording: the agent's spool holds records (a flush mark every 500 ms)
	for _ in $(seq 200); do
		find "$T/run/cupti" -name "gtrace-cupti.$w.*spool" -size +1k 2> /dev/null | grep -q . && break
		sleep 0.1
	done
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" 2> /dev/null
	want=$((want + 1))
	finalized "$T/w.err" "$want" ||
		err "after the recorder's SIGKILL: CUPTI not finalized ($(grep -c cuptiFinalize "$T/w.err") times)"
	kill -0 "$w" || fatal "the program died after the recorder's SIGKILL"
	kill -TERM "$w"
	wait_exit "$w" 20
}

# --cupti-detach=idle, three times into one running program: every GPU
# record of each linked, each detach said in the agent's counters, CUPTI
# never finalized (left loaded and idle, as a paused agent), the program's
# threads and descriptors as before; then one attach without it: finalized
# once (the flag is the session's, not the agent's for good).
t_attach_idle() {
	local w c
	need_cupti
	flood_program 60
	w=$W
	for c in 1 2 3 4; do
		if [ "$c" != 4 ]; then
			attach_cycle "i$c" --cupti-detach=idle
			[ "$(grep -c ' cupti_detach=idle\( \|$\)' "$T/i$c.sum")" -eq 1 ] ||
				err "attach $c: the header's options do not say cupti_detach=idle: $(grep options "$T/i$c.sum")"
			[ "$(grep -c cuptiFinalize "$T/w.err")" -eq 0 ] ||
				err "attach $c with --cupti-detach=idle: CUPTI finalized: $(grep cuptiFinalize "$T/w.err" | tr '\n' '|')"
		else
			attach_cycle "i$c"
			grep -q ' cupti_detach=' "$T/i$c.sum" && err "attach $c: the header's options say cupti_detach: $(grep options "$T/i$c.sum")"
			finalized "$T/w.err" 1 ||
				err "the attach without --cupti-detach=idle: CUPTI finalized $(grep -c cuptiFinalize "$T/w.err") times, expected once"
		fi
	done
	kill -0 "$w" || fatal "the program died"
	kill -TERM "$w"
	wait_exit "$w" 20
}

# -p PID --cupti=attach eight times into one running program: after the
# first cycles (the agent's memory, made once: its buffers, converter and
# writer's stack) the program's anonymous memory stays where it was, cycle
# after cycle. Memory of the plain build only (QUIET_CASES): a sanitizer's
# allocator keeps what is freed in quarantine.
anon_kb() { awk '/^Anonymous:/ { print $2 }' "/proc/$1/smaps_rollup"; }

t_attach_memory() {
	local w c seen=() grow
	need_cupti
	flood_program 90
	w=$W
	seen+=("$(anon_kb "$w")")
	for c in 1 2 3 4 5 6 7 8; do
		"$GTRACE" record -p "$w" --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -d 1 \
			-o "$T/m$c.gtrace" > /dev/null 2> "$T/m$c.err"
		RC=$?
		[ "$RC" -eq 0 ] || fatal "attach $c exited $RC: $(tell "$T/m$c.err")"
		finalized "$T/w.err" "$c" ||
			fatal "attach $c: CUPTI not finalized once more: $(grep -c cuptiFinalize "$T/w.err") times"
		rm -f "$T/m$c.gtrace"
		seen+=("$(anon_kb "$w")")
	done
	# what the agent makes once is made by the end of the second cycle;
	# after it, less than a page a cycle on average. A leak grows in cycle
	# after cycle; a single step of at most 64 kB in one of them, flat
	# before and after, is not one (seen in 2 of ~26 runs here: 40 and
	# 48 kB, at cycles 3 and 6; what allocates it is not known), said
	grow=$((seen[8] - seen[2]))
	steps=0
	for c in 3 4 5 6 7 8; do
		[ "${seen[c]}" -gt "${seen[c - 1]}" ] && steps=$((steps + 1))
	done
	if [ "$grow" -ge $((4 * 6)) ] && { [ "$steps" -gt 1 ] || [ "$grow" -gt 64 ]; }; then
		err "the program's anonymous memory grew by $grow kB over attach cycles 3-8, in $steps of them (kB before and after each cycle: ${seen[*]})"
	elif [ "$grow" -ge $((4 * 6)) ]; then
		log "one step of $grow kB in one cycle of 3-8, flat before and after (kB: ${seen[*]})"
	fi
	kill -0 "$w" || fatal "the program died during the attach cycles"
	kill -TERM "$w"
	wait_exit "$w" 20
}

# --all --cupti=attach: every CUDA process running at the start takes the
# agent (here the one program, started without it), its GPU records linked;
# the trace says so (a cupti_attach record).
t_attach_all() {
	local a want got
	need_cupti
	start_workload a "GT_LIBCUDA=$MOCK_LIB" "LD_LIBRARY_PATH=$CUPTI_MOCK" -- --wait-signal --launches 30 --copies 2
	a=$WPID
	wait_ready a "$a"
	start_tracer --all --libcuda "$MOCK_LIB" --trace cuda --cupti=attach --cupti-lib "$AGENT" -o "$T/all.gtrace"
	grep -q "^gtrace-bpf: --cupti=attach: the agent is in pid $a (" "$T/tracer.err" ||
		fatal "no attach line for pid $a: $(grep -i attach "$T/tracer.err" | tr '\n' '|')"
	# the session says "scope all": the agent records once it looked
	for _ in $(seq 100); do
		find "$T/run/cupti" -name "gtrace-cupti.$a.*spool" -size +1k 2> /dev/null | grep -q . && break
		sleep 0.1
	done
	kill -USR1 "$a"
	finish_workload a "$a"
	stop_tracer INT
	# 30 launches, 2 copies up and the workload's own copy back and set
	want="gtrace-bpf: merged 34 GPU records from 1 processes: 34 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work"
	got=$(summary "$T/tracer.err")
	[ "$got" = "$want" ] || err "--all --cupti=attach summary:
  got      $got
  expected $want"
	got=$("$GTRACE" dump "$T/all.gtrace" | jq -s --argjson p "$a" '[.[] | select(.type == "cupti_attach" and .pid == $p and .event == "attached")] | length')
	[ "$got" -eq 1 ] || err "$got attach records of pid $a, expected 1"
	# started without NVTX_INJECTION64_PATH: its NVTX ranges cannot come,
	# said on the line and in the record
	grep -q "^gtrace-bpf: --cupti=attach: the agent is in pid $a (.*); no NVTX ranges (NVTX_INJECTION64_PATH was not set" "$T/tracer.err" ||
		err "the attach line does not say there are no NVTX ranges: $(grep 'agent is in' "$T/tracer.err")"
	"$GTRACE" dump "$T/all.gtrace" | jq -s -e --argjson p "$a" '[.[] | select(.type == "cupti_attach" and .pid == $p)][0].reason |
		startswith("pid \($p): no NVTX ranges")' > /dev/null || err "the attach record does not say there are no NVTX ranges"
}

# A spool file the recorder finds before its agent wrote a byte (the agent
# makes it, then writes its magic): read from its magic once that comes,
# every record there taken. The recorder says (verbose) that it waits; the
# test writes the agent's bytes only after that line, so the case is the
# race CI met once (the magic taken for a record at offset 0, reading
# skipped to the first flush mark, the records before it lost).
t_spool_empty() {
	local run=$T/run/cupti s
	need_cupti
	sleep 600 &
	s=$!
	PIDS+=("$s")
	start_tracer -v --all --libcuda "$MOCK_LIB" --trace cuda --cupti --cupti-lib "$AGENT" -o "$T/e.gtrace"
	install -m 600 /dev/null "$run/gtrace-cupti.$s.spool"
	wait_line "$T/tracer.err" "gtrace-cupti.$s.spool: empty: waiting for pid $s's agent to write its first bytes" 30 "$TRACER_PID" ||
		fatal "the recorder never looked at the empty spool: $(grep -i cupti "$T/tracer.err" | tr '\n' '|')"
	# the agent's bytes: its magic, its counters (7 records), then a flush mark
	python3 - "$run/gtrace-cupti.$s.spool" "$s" <<'PY'
import struct, sys, time
path, pid = sys.argv[1], int(sys.argv[2])
now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
def hdr(ts, typ, size):
    return struct.pack("<QIIHHHH", ts, pid, 0, typ, size, 0, 0)
stats = hdr(now, 45, 24 + 8 * 8) + struct.pack("<8Q", 7, 0, 1, 0, 0, 1, 0, 0)
mark = hdr(now + 1000, 50, 24 + 16) + struct.pack("<QQ", 7, 1000)
with open(path, "ab") as f:
    f.write(b"GTCUPTI1" + stats + mark)
PY
	kill "$s"
	wait "$s" 2> /dev/null
	stop_tracer INT
	grep -q "damaged record" "$T/tracer.err" && err "the magic taken for a record: $(grep damaged "$T/tracer.err")"
	"$GTRACE" dump --summary "$T/e.gtrace" > "$T/e.sum" 2>&1
	grep -A1 "^cupti agent (pid $s)" "$T/e.sum" | grep -Eq "^ *records +7$" ||
		err "the agent's counters written before its first flush mark are not in the trace: $(grep -A3 'cupti agent' "$T/e.sum" | tr '\n' '|')"
}

add_case t_cmd "--cupti -- CMD: the agent's environment, a private directory that goes, every GPU record linked"
add_case t_all "--all --cupti: the run directory (1733) and session while recording, a program joins, armed after"
add_case t_spool_empty "--all --cupti: a spool file found empty (its agent about to write its magic) is read from its magic once it comes, nothing before the first flush mark lost"
add_case t_takeover "--all --cupti after a SIGKILLed recorder: the agents taken over, every launch of its own linked, exit 0"
add_case t_optional "--all --cupti=optional with nobody joining exits 0, plain --cupti 1"
add_case t_listed "-p PID --cupti: only the traced process' agent records"
add_case t_attach "-p PID --cupti=attach: a program started without the agent takes it, every GPU record linked; refused and said: another CUPTI subscriber, a static program; CUPTI faulting in the agent's start: the program dies as it would, the fault said with where; a fault later said"
add_case t_attach_py314 "-p PID --cupti=attach into a CPython 3.14 job: its interpreter loads the agent in its main thread (PEP 768, no thread stopped), every GPU record linked; with remote debugging off a thread is held instead"
add_case t_attach_idle "-p PID --cupti=attach --cupti-detach=idle three times into one running program: all linked, CUPTI never finalized, threads and descriptors as before; without it again: finalized once"
add_case t_attach_cycles "-p PID --cupti=attach three times into one running program and a SIGKILLed recorder: all linked, CUPTI finalized in an API exit callback after each, threads and descriptors as before"
add_case t_attach_memory "-p PID --cupti=attach eight times into one running program: its anonymous memory after the second cycle grows by less than a page a cycle"
add_case t_attach_all "--all --cupti=attach: the CUDA program running at the start takes the agent, every GPU record linked, the attach in the trace, its missing NVTX ranges said"
add_case t_swapped_dir "--cupti -- CMD: a private directory swapped for a link steers root nowhere"
add_case t_nonroot "--all --cupti: a program of another user joins, its kernels linked"
add_case t_unjoined "--all --cupti: a program whose agent could not join is counted and named"
add_case t_full "--cupti on a full file system: what the agent could not write counted, said as a full disk"
add_case t_agent_lib "--cupti-lib: not an ELF shared object exporting InitializeInjection, one line, no trace"
add_case t_never_loaded "--cupti -- CMD where the agent never loads: a warning naming why, status 1 unless --cupti=optional"
run_cases "$@"
