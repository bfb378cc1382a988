#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf daemon under faults: a run directory, socket or pid file not
# ours, a full --dir disk, control clients that never send, never read or
# hang up, a snapshot of a pid never seen, a SIGKILL (no probes left, the
# next daemon starts), a process forking 1000 children, and large
# snapshots written while a flood is recorded. Each case says what it
# expected and got; each has its own run directory (GTRACE_RUN_DIR) and
# snapshot directory.
REQUIRES="root jq mock gtrace"
# they time the recording loop or the probes: nothing else may run beside
# them, and they measure the plain build (the sanitized pass leaves them out)
QUIET_CASES="t_stall t_sigkill"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
# t_fork runs solo in both passes: scoped beside others once in CI, 84 of its
# 1000 children came out with off-CPU intervals after their exit (not
# explained yet). t_pid_reuse runs solo too: it sets the machine's next pid
# (ns_last_pid), and beside others a process of theirs took the pid wanted
# and kept it for all 40 tries (CI, sanitized pass)
SCOPED_CASES="t_full_disk t_clients"
. "$(dirname "$0")/lib.sh"

alive() {
	kill -0 "$DPID" 2> /dev/null || fatal "the daemon died: $(tail -n 3 "$T/daemon.err" | tr '\n' '|')"
}

# stat_of KEY: that line of gtrace-bpf status.
stat_of() {
	"$GTRACE" status -v 2> /dev/null | awk -v k="$1" '$1 == k { print $2 }'
}

# one_line FILE LABEL: FILE holds exactly one line.
one_line() {
	[ "$(grep -c . "$1")" -eq 1 ] || err "$2: expected one line on stderr, got: $(tr '\n' '|' < "$1")"
}

# 1. A --dir on a 64 KiB tmpfs, nearly full: an asked snapshot and a
# triggered one fail with one line, leave nothing there, are counted; the
# daemon records on, and a snapshot elsewhere holds the workload exactly.
t_full_disk() {
	local mnt=$T/full rc left
	mkdir -m 0700 "$mnt"
	mount -t tmpfs -o size=64k,mode=0700 gtrace-itest "$mnt" || fatal "cannot mount a tmpfs on $mnt"
	# the daemon goes first (it may hold a file there), then the mount
	# shellcheck disable=SC2064
	trap "case_cleanup; umount '$mnt' 2> /dev/null || umount -l '$mnt'" EXIT
	head -c 61440 /dev/zero > "$mnt/filler" 2> /dev/null
	start_daemon -v --mode full --window 30s --memory 16M --dir "$mnt" --trigger signal --post 0
	run_wl a --launches 2000 --copies 2
	sleep 1.5
	"$GTRACE" snapshot > "$T/full.out" 2> "$T/full.err"
	rc=$?
	[ $rc -eq 1 ] || err "a snapshot into a full --dir exited $rc, expected 1"
	one_line "$T/full.err" "a snapshot into a full --dir"
	grep -Eq "^error: cannot write $mnt/system_snapshot_[0-9]+_v1\.gtrace: No space left on device\$" "$T/full.err" ||
		err "the full-disk line: $(cat "$T/full.err")"
	[ ! -s "$T/full.out" ] || err "a failed snapshot printed a path on stdout: $(cat "$T/full.out")"
	kill -USR1 "$DPID"
	wait_line "$T/daemon.err" 'snapshot \(signal_trigger\) failed' 10 "$DPID" ||
		err "no log line for the triggered snapshot that failed: $(tail -n 3 "$T/daemon.err" | tr '\n' '|')"
	grep -E 'snapshot \(signal_trigger\) failed' "$T/daemon.err" | grep -q 'No space left on device' ||
		err "the triggered snapshot's failure does not say why: $(grep 'signal_trigger' "$T/daemon.err")"
	left=$(ls -A "$mnt" | grep -v '^filler$' | tr '\n' ' ')
	[ -z "$left" ] || err "files left in the full --dir: $left"
	alive
	[ "$(stat_of snapshots_failed)" = 2 ] || err "status snapshots_failed: '$(stat_of snapshots_failed)', expected 2"
	[ "$(stat_of snapshots)" = 0 ] || err "status snapshots: '$(stat_of snapshots)', expected 0"
	run_wl b --launches 300
	sleep 1.5
	snap -o "$T/roomy.gtrace"
	dump_trace "$SNAP" "$T/roomy.json"
	[ "$(launches_of "$T/roomy.json" "$WP")" -eq 300 ] || err "the snapshot after the failures: $(launches_of "$T/roomy.json" "$WP") of 300 launches"
	jq -s -e '[.[] | select(.type == "trigger" and .kind == "signal")] | length == 1' "$T/roomy.json" > /dev/null ||
		err "the trigger whose snapshot failed is not an instant in the window"
	# room again: the default name in --dir works
	rm -f "$mnt/filler"
	snap
	case $SNAP in "$mnt/system_snapshot_"*_v1.gtrace) ;; *) err "after the disk had room: $SNAP" ;; esac
	"$GTRACE" dump --summary "$SNAP" > /dev/null 2>&1 || err "the snapshot written once there was room does not read"
	stop_daemon
}

# 2. Clients that connect and never send, that send and never read, that
# send and hang up at once: the daemon answers others at once and records
# on; the silent ones are dropped at their deadline, counted, said at -v.
t_clients() {
	local ms got
	start_daemon -v --mode full --window 30s --memory 16M
	python3 - "$T/run/control.sock" 12 4 3 > "$T/clients.out" 2> "$T/clients.err" <<- 'EOF' &
		import socket, sys, time
		path, silent, unread, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
		def conn():
		    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		    s.connect(path)                        # blocking: waits while the backlog is full
		    return s
		held = [conn() for _ in range(silent)]     # never send
		for _ in range(unread):                    # send, never read
		    s = conn(); s.sendall(b"status\n"); held.append(s)
		for req in (b"status\n", b"snapshot last_ns=0 pid=0\n"):
		    for _ in range(3):                     # send, hang up at once
		        s = conn(); s.sendall(req); s.close()
		print("connected", flush=True)
		time.sleep(hold)
	EOF
	PIDS+=($!)
	wait_line "$T/clients.out" '^connected' 10 || fatal "the clients did not connect: $(tail -n 3 "$T/clients.err" | tr '\n' '|')"
	ms=$(date +%s%N)
	"$GTRACE" status -v > "$T/st" 2> "$T/st.err" || err "status failed while the silent clients were connected: $(cat "$T/st.err")"
	ms=$((($(date +%s%N) - ms) / 1000000))
	# a daemon that served its clients in turn would make status wait for the
	# 12 silent ones' deadlines (READ_MS, 1 s each, user/daemon/control.c):
	# 12 s; one that serves them together answers long before half that,
	# however loaded the machine
	[ "$ms" -lt 6000 ] || err "status took $ms ms with 12 silent clients connected: were they waited for in turn (12 x 1 s)?"
	run_wl a --launches 400
	sleep 1.5
	snap -o "$T/c.gtrace"
	dump_trace "$SNAP" "$T/c.json"
	[ "$(launches_of "$T/c.json" "$WP")" -eq 400 ] || err "with silent clients connected: $(launches_of "$T/c.json" "$WP") of 400 launches recorded"
	alive
	wait_line "$T/daemon.err" 'no request within' 5 "$DPID" || err "no -v line for a client that sent nothing"
	got=$(stat_of clients_timed_out)
	[ "${got:-0}" -ge 12 ] || err "status clients_timed_out: '$got', expected >= 12"
	got=$(stat_of clients_gone)
	[ "${got:-0}" -ge 3 ] || err "status clients_gone: '$got', expected >= 3 (the snapshot askers that hung up)"
	grep -q 'hung up before' "$T/daemon.err" || err "no -v line for a client that hung up before its reply"
	[ "$(stat_of dropped)" = 0 ] || err "status dropped: $(stat_of dropped)"
	stop_daemon
}

# 3. A snapshot of a pid never seen, and bad snapshot arguments: one line,
# non-zero status, no file.
t_nopid() {
	local rc bad
	start_daemon -v --mode full --window 10s
	for pid in 4000000 $$; do
		"$GTRACE" snapshot -p "$pid" > "$T/np.out" 2> "$T/np.err"
		rc=$?
		[ $rc -eq 1 ] || err "snapshot -p $pid (never seen) exited $rc, expected 1"
		one_line "$T/np.err" "snapshot -p $pid"
		grep -q "^error: pid $pid was never seen making CUDA calls\$" "$T/np.err" || err "snapshot -p $pid: $(cat "$T/np.err")"
		[ ! -s "$T/np.out" ] || err "snapshot -p $pid printed: $(cat "$T/np.out")"
	done
	while IFS= read -r bad; do
		# shellcheck disable=SC2086
		"$GTRACE" snapshot $bad > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "snapshot $bad exited $rc, expected 2"
		one_line "$T/bad.err" "snapshot $bad"
	done <<- 'EOF'
		-p 0
		-p x
		-p 99999999
		--last 0
		--last 2x
		extra
	EOF
	[ -z "$(ls -A "$T/snaps")" ] || err "refused snapshots left files: $(ls -A "$T/snaps" | tr '\n' ' ')"
	alive
	stop_daemon
}

# refused DIR LINE LABEL: a daemon with its run directory (GTRACE_RUN_DIR)
# in DIR exits 1 within 10 s with one line that ends with LINE, and leaves
# no pid file there.
refused() {
	local dir=$1 line=$2 label=$3 rc
	GTRACE_RUN_DIR=$dir timeout 10 "$GTRACE" daemon --libcuda "$MOCK_LIB" --dir "$T/snaps" > /dev/null 2> "$T/ref.err"
	rc=$?
	[ $rc -eq 1 ] || err "$label: the daemon exited $rc, expected 1 (124: it hung)"
	one_line "$T/ref.err" "$label"
	grep -q -- "in $dir: $line\$" "$T/ref.err" || err "$label: $(cat "$T/ref.err")"
	[ -L "$dir/daemon.pid" ] || [ -p "$dir/daemon.pid" ] || [ ! -e "$dir/daemon.pid" ] ||
		err "$label: a refused daemon left $dir/daemon.pid ($(cat "$dir/daemon.pid" 2> /dev/null))"
}

# 0. A run directory, control socket or pid file that is not ours: one line
# each, exit 1, no hang on a FIFO, nothing there changed or followed; then
# a run directory of ours works.
t_run_dir() {
	local r=$T/r
	mkdir -m 0700 "$T/snaps" "$r"
	mkdir -m 0777 "$r/open"
	refused "$r/open" "not a directory of ours that only we may write in" "a run directory of mode 0777"
	mkdir -m 0700 "$r/other"
	chown nobody "$r/other"
	refused "$r/other" "not a directory of ours that only we may write in" "a run directory of nobody's"
	mkdir -m 0700 "$r/real"
	ln -s "$r/real" "$r/link"
	refused "$r/link" "not a directory of ours that only we may write in" "a run directory through a symlink"
	mkdir -m 0700 "$r/file"
	echo "not a socket" > "$r/file/control.sock"
	refused "$r/file" "control.sock there is not our socket" "control.sock a regular file"
	[ "$(cat "$r/file/control.sock")" = "not a socket" ] || err "the regular file at control.sock was changed"
	mkdir -m 0700 "$r/fifo"
	mkfifo "$r/fifo/control.sock"
	refused "$r/fifo" "control.sock there is not our socket" "control.sock a FIFO"
	mkdir -m 0700 "$r/sock"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$r/sock/control.sock" ||
		fatal "cannot make a socket"
	chown nobody "$r/sock/control.sock"
	refused "$r/sock" "control.sock there is not our socket" "control.sock a socket of nobody's"
	[ -S "$r/sock/control.sock" ] || err "nobody's socket at control.sock was removed"
	mkdir -m 0700 "$r/pidlink"
	echo "keep" > "$T/target"
	ln -s "$T/target" "$r/pidlink/daemon.pid"
	refused "$r/pidlink" "daemon.pid there is not a regular file of ours" "daemon.pid a symlink"
	[ "$(cat "$T/target")" = keep ] || err "the daemon wrote through the symlink at daemon.pid"
	mkdir -m 0700 "$r/pidfifo"
	mkfifo "$r/pidfifo/daemon.pid"
	refused "$r/pidfifo" "daemon.pid there is not a regular file of ours" "daemon.pid a FIFO"
	mkdir -m 0700 "$r/piddir"
	mkdir "$r/piddir/daemon.pid"
	GTRACE_RUN_DIR=$r/piddir timeout 10 "$GTRACE" daemon --libcuda "$MOCK_LIB" --dir "$T/snaps" > /dev/null 2> "$T/ref.err"
	[ $? -eq 1 ] || err "daemon.pid a directory: not exit 1"
	one_line "$T/ref.err" "daemon.pid a directory"
	start_daemon --window 10s
	"$GTRACE" status -v > /dev/null 2>&1 || err "a daemon with a run directory of its own does not answer"
	stop_daemon
}

# The ids of the BPF links held by PID (fdinfo's link_id).
link_ids() {
	grep -h '^link_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' | sort -u
}

# time_wl: ms the workload takes for 50000 launches, the least of three
# runs (the least is what a busy machine disturbs least). Traced, every
# launch costs a probe hit (about 1 us here, 20 us on kernels that trap).
time_wl() {
	local i t0 ms best=
	for i in 1 2 3; do
		t0=$(date +%s%N)
		GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --launches 50000 --copies 0 --syncs 0 --ranges 0 > /dev/null 2>&1 || fatal "the timed workload failed"
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
	done
	echo "$best"
}

# 4. SIGKILL: every BPF link the daemon held is gone with it, the workload
# runs at its untraced speed again, the pid file and socket it left are
# taken over by the next daemon, which records.
t_sigkill() {
	local base traced after ids id holders pid_left
	base=$(time_wl)
	start_daemon -v --mode full --window 10s
	traced=$(time_wl)
	ids=$(link_ids "$DPID")
	[ -n "$ids" ] || fatal "the daemon holds no BPF links: nothing to check"
	log "untraced ${base} ms, traced ${traced} ms, links $(echo $ids)"
	kill -KILL "$DPID"
	wait "$DPID" 2> /dev/null
	[ -S "$T/run/control.sock" ] && [ -f "$T/run/daemon.pid" ] || err "SIGKILL left no socket or pid file: the takeover is not tested"
	pid_left=$(cat "$T/run/daemon.pid" 2> /dev/null)
	[ "$pid_left" = "$DPID" ] || err "the pid file left says '$pid_left', expected $DPID"
	for id in $ids; do
		holders=$(grep -l "^link_id:[[:space:]]*$id\$" /proc/[0-9]*/fdinfo/* 2> /dev/null | head -n 3 | tr '\n' ' ')
		[ -z "$holders" ] || err "BPF link $id of the killed daemon is still held: $holders"
	done
	after=$(time_wl)
	log "after SIGKILL ${after} ms"
	# what the probes cost it: at least 50000 hits of about a microsecond
	[ $((traced - base)) -ge 25 ] || fatal "the workload took ${traced} ms traced, ${base} ms untraced: too close to tell probes left behind"
	[ $(((after - base) * 3)) -lt $((traced - base)) ] ||
		err "the workload took ${base} ms untraced, ${traced} ms traced, ${after} ms after the SIGKILL: more than a third of the probes' cost is left"
	"$GTRACE" status -v > /dev/null 2> "$T/dead.err" && err "status answered with the daemon killed"
	start_daemon -v --mode full --window 10s
	[ "$(stat_of pid)" = "$DPID" ] || err "the next daemon's status gives pid '$(stat_of pid)', expected $DPID"
	[ "$(cat "$T/run/daemon.pid")" = "$DPID" ] || err "the pid file was not taken over: $(cat "$T/run/daemon.pid")"
	run_wl a --launches 50
	sleep 1.5
	snap
	dump_trace "$SNAP" "$T/k.json"
	[ "$(launches_of "$T/k.json" "$WP")" -eq 50 ] || err "the next daemon recorded $(launches_of "$T/k.json" "$WP") of 50 launches"
	stop_daemon
}

# 5. A traced process forks 1000 children, each making 4 calls: the daemon
# lives, status counts 1001 processes (none alive at the end), the
# snapshot holds each child with its 2 launches and its process record,
# no record of its threads after its exit, and nothing is lost uncounted.
t_fork() {
	local want=1000 got dropped
	start_daemon -v --mode full --window 60s --memory 64M
	run_wl f --fork "$want" --launches 4 --copies 0 --syncs 0
	[ "$(jq .fork_failed "$T/f.out" | tail -n 1)" = 0 ] || fatal "children failed: $(tail -n 1 "$T/f.out")"
	sleep 1.5
	alive
	dropped=$(stat_of dropped)
	[ "$(stat_of processes)" = $((want + 1)) ] || err "status processes: '$(stat_of processes)', expected $((want + 1))"
	[ "$(stat_of processes_alive)" = 0 ] || err "status processes_alive: '$(stat_of processes_alive)', expected 0"
	snap
	dump_trace "$SNAP" "$T/f.json"
	jq -s -c --argjson p "$WP" '
		[.[] | select(.type == "launch" and .pid != $p)] | group_by(.pid)
		| {children: length, launches: (map(length) | add), wrong: map(select(length != 2)) | length}' "$T/f.json" > "$T/kids"
	log "children in the snapshot: $(cat "$T/kids"), dropped $dropped"
	if [ "$dropped" = 0 ]; then
		jq -e --argjson n "$want" '.children == $n and .launches == 2 * $n and .wrong == 0' "$T/kids" > /dev/null ||
			err "children in the snapshot (none dropped): $(cat "$T/kids"), expected $want with 2 launches each"
	else
		jq -e --argjson n "$want" '.launches < 2 * $n' "$T/kids" > /dev/null || err "$dropped dropped but every launch is there"
	fi
	got=$(jq -s --argjson p "$WP" '[.[] | select(.type == "process" and .ppid == $p and .event == "fork")] | length' "$T/f.json")
	[ "$got" -eq "$want" ] || err "fork records of the parent: $got, expected $want"
	got=$(jq -s --argjson p "$WP" '[.[] | select(.type == "process" and .ppid == $p and .event == "exit" and .exit_code == 0)] | length' "$T/f.json")
	[ "$got" -eq "$want" ] || err "exit records of the children: $got, expected $want"
	[ "$(jq -s --argjson p "$WP" '[.[] | select(.pid == $p and .type == "launch")] | length' "$T/f.json")" -eq 4 ] ||
		err "the parent's own launches are not 4"
	# a thread's time off the CPU ends before its process' exit (a start
	# left behind was once read in the child's teardown, after it): each
	# interval against the first exit of its pid at or after its start, so
	# that a pid the kernel gave to a later child (pid_max wraps on a busy
	# machine) is that child's
	got=$(jq -s -c --argjson p "$WP" '
		[.[] | select(.pid != $p)] | group_by(.pid)
		| map([.[] | select(.type == "process" and .event == "exit") | .ts] as $xs
		      | .[] | select(.type == "offcpu") | . as $o
		      | ([$xs[] | select(. >= $o.ts)] | min) as $x
		      | select($x != null and $o.ts + $o.dur > $x))
		| .[:3]' "$T/f.json")
	[ "$got" = "[]" ] || err "off-CPU intervals of children ending after their exit: $got"
	log "child pids given twice in the run: $(jq -s --argjson p "$WP" '[.[] | select(.type == "process" and .ppid == $p and .event == "fork") | .pid] | (length - (unique | length))' "$T/f.json")"
	stop_daemon
}

# spawn_as PID NAME CMD...: CMD, waited for, with pid PID (the kernel's next
# pid set through ns_last_pid, tried again while other processes on the
# machine take it first); a try that missed the pid runs nothing (a shell
# that checks its pid before it execs CMD). Sets SP_RC; fails the case
# after 40 tries.
spawn_as() {
	local want=$1 name=$2 i sp
	shift 2
	for ((i = 0; i < 40; i++)); do
		echo $((want - 1)) > /proc/sys/kernel/ns_last_pid || fatal "cannot write ns_last_pid"
		# shellcheck disable=SC2016
		GT_LIBCUDA=$MOCK_LIB sh -c '[ "$$" = "$0" ] || exit 99; exec "$@"' "$want" "$@" > "$T/$name.out" 2> "$T/$name.err" &
		sp=$!
		wait "$sp"
		SP_RC=$?
		[ "$sp" = "$want" ] && return 0
	done
	fatal "no process got pid $want again in 40 tries"
}

# A traced process exits; a process that makes no CUDA call gets its pid
# and dies with status 3: not traced, no exit trigger. A CUDA process gets
# it next: a new process, counted, named by its own command line.
t_pid_reuse() {
	local p got
	start_daemon -v --mode full --window 30s --trigger exit --post 0
	run_wl a --launches 8
	p=$WP
	sleep 0.5
	spawn_as "$p" other sh -c 'exit 3'
	[ "$SP_RC" = 3 ] || err "the stranger exited $SP_RC, expected 3"
	sleep 1.5
	[ "$(stat_of triggers_fired)" = 0 ] || err "an untraced process with a traced one's old pid fired the exit trigger"
	[ "$(stat_of processes)" = 1 ] || err "status processes: '$(stat_of processes)' after the stranger, expected 1"
	spawn_as "$p" second "$WORKLOAD" --launches 12 --copies 1
	[ "$SP_RC" = 0 ] || fatal "the second workload failed: $(tail -n 2 "$T/second.err" | tr '\n' '|')"
	sleep 1.5
	[ "$(stat_of processes)" = 2 ] || err "status processes: '$(stat_of processes)' after a second CUDA process with pid $p, expected 2"
	[ "$(stat_of processes_alive)" = 0 ] || err "status processes_alive: '$(stat_of processes_alive)', expected 0"
	snap -p "$p"
	dump_trace "$SNAP" "$T/r.json"
	[ "$(launches_of "$T/r.json" "$p")" -eq 20 ] || err "pid $p: $(launches_of "$T/r.json" "$p") launches, expected 8 + 12"
	got=$(jq -s -c --argjson p "$p" '[.[] | select(.pid == $p and .type == "process" and .event == "exit") | .exit_code]' "$T/r.json")
	[ "$got" = '[0,0]' ] || err "exit codes of pid $p: $got, expected the two workloads' [0,0] (not the stranger's 3)"
	"$GTRACE" export -f json -o "$T/r.trace.json" "$SNAP" 2> /dev/null || fatal "export of the snapshot failed"
	got=$(jq -c --argjson p "$p" '[.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name | sub("^.*/"; "")] | unique' "$T/r.trace.json")
	jq -e 'index("cuda_workload --launches 8") and index("cuda_workload --launches 12 --copies 1") and
	       all(.[]; startswith("cuda_workload"))' <<< "$got" > /dev/null ||
		err "names of pid $p: $got, expected each workload's command line and nothing of the stranger's"
	stop_daemon
}

# 6. Snapshots written while a flood is recorded (two threads as fast as
# the traps let them, and 40000 launches a second): the whole window (about
# 1M records) and three per-process ones (each recompressing all of it, a
# quarter to a few seconds' work here) each hold the loop a few ms (the
# daemon's log says), its longest pass while they are written stays far
# below what writing one takes (status loop_stall_snapshot_max_ms; the
# loop's own once-a-second chunk flush makes passes of tens of ms on a busy
# machine, with or without snapshots), none dropped with a ring buffer of a
# fraction of a second, every launch of the paced flood recorded.
t_stall() {
	local a b i want got held locked stall
	start_daemon -v --mode full --window 60s --memory 256M --buffer-size 16M
	run_wl a --flood 4 --threads 2 --ranges 0
	a=$WP
	sleep 1.2
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --flood 5 --rate 40000 --ranges 0 > "$T/b.out" 2> "$T/b.err" &
	b=$!
	PIDS+=("$b")
	sleep 1
	# not fatal: the drops are what this case is about
	"$GTRACE" snapshot -o "$T/whole.gtrace" > /dev/null 2> "$T/s0.err" || err "the whole window under the flood: $(cat "$T/s0.err")"
	for i in 1 2 3; do
		"$GTRACE" snapshot -p "$a" -o "$T/a$i.gtrace" > /dev/null 2> "$T/s$i.err" ||
			err "snapshot -p $a under the flood (#$i): $(cat "$T/s$i.err")"
	done
	wait_exit "$b" 30 || fatal "the paced flood did not end"
	[ "$WAIT_RC" -eq 0 ] || fatal "the paced flood failed: $(tail -n 2 "$T/b.err" | tr '\n' '|')"
	sleep 1.5
	alive
	[ "$(stat_of dropped)" = 0 ] || err "status dropped: $(stat_of dropped) events lost while snapshots were written"
	[ "$(stat_of window_dropped_chunks)" = 0 ] || err "the window dropped chunks: the test's bounds are wrong"
	want=$(jq '.launches | add' "$T/b.out")
	snap -p "$b" -o "$T/b.gtrace"
	got=$("$GTRACE" dump --summary "$SNAP" | awk '$1 ~ /^cuLaunchKernel/ { n += $2 } END { print n + 0 }')
	[ "$got" = "$want" ] || err "the paced flood made $want launches, the snapshot holds $got"
	"$GTRACE" dump --summary "$T/a3.gtrace" > /dev/null 2>&1 || err "a per-process snapshot written under the flood does not read"
	stall=$(stat_of loop_stall_snapshot_max_ms)
	log "the loop's longest pass with a snapshot asked or being written: ${stall:-?} ms (any pass: $(stat_of loop_stall_max_ms) ms)"
	held=$(sed -n 's/.*the recording loop held \([0-9.]*\) ms.*/\1/p' "$T/daemon.err" | sort -g | tail -n 1)
	locked=$(sed -n 's/.*the window locked \([0-9.]*\) ms.*/\1/p' "$T/daemon.err" | sort -g | tail -n 1)
	log "longest hold of the loop ${held:-?} ms, of the window's lock ${locked:-?} ms"
	[ -n "$held" ] && awk -v h="$held" 'BEGIN { exit !(h < 30) }' || err "a snapshot held the recording loop ${held:-?} ms, expected < 30"
	[ -n "$locked" ] && awk -v l="$locked" 'BEGIN { exit !(l < 5) }' || err "a snapshot locked the window ${locked:-?} ms, expected < 5"
	[ -n "$stall" ] && awk -v s="$stall" 'BEGIN { exit !(s < 200) }' || err "a pass of the loop took ${stall:-?} ms while snapshots were written, expected < 200"
	stop_daemon
}

add_case t_run_dir "daemon faults: a run directory, control.sock or daemon.pid not ours (open, nobody's, a symlink, a file, a FIFO): one line, exit 1, nothing changed; one of ours works"
add_case t_full_disk "daemon faults: a full --dir: asked and triggered snapshots fail with one line, leave nothing, are counted; recording goes on"
add_case t_clients "daemon faults: clients that never send, never read or hang up: others answered at once, recording goes on, dropped clients counted"
add_case t_nopid "daemon faults: snapshot -p of a pid never seen and bad snapshot arguments: one line, non-zero, no file"
add_case t_sigkill "daemon faults: after SIGKILL no BPF link is left, the workload runs untraced, the next daemon takes over and records"
add_case t_fork "daemon faults: a process forking 1000 children: counted, each child whole in the snapshot, losses counted"
add_case t_pid_reuse "daemon faults: a traced process' pid reused by an untraced one (no trigger, not counted), then by a CUDA one (counted anew)"
add_case t_stall "daemon faults: snapshots written under a flood hold the loop a few ms: nothing dropped, every launch recorded"
run_cases "$@"
