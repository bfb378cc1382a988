#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf run with sudo: root, with SUDO_UID, SUDO_GID and SUDO_USER set
# as sudo sets them, for the user nobody. What it writes is that user's
# (still 0600) and opens as them; -- CMD runs as them (--as-root: as root);
# the daemon's snapshots stay root's unless --owner USER.
REQUIRES="root jq mock gtrace"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_daemon"
. "$(dirname "$0")/lib.sh"

SU_USER=nobody
SU_UID=$(id -u "$SU_USER" 2> /dev/null)
SU_GID=$(id -g "$SU_USER" 2> /dev/null)

# as_sudo CMD...: as sudo would run it for the user
as_sudo() { env SUDO_UID="$SU_UID" SUDO_GID="$SU_GID" SUDO_USER="$SU_USER" "$@"; }
# as_user CMD...: as the user themself, later, without sudo
as_user() { setpriv --reuid "$SU_UID" --regid "$SU_GID" --clear-groups "$@"; }

# A directory of the user's, as their home would be, inside the case's.
user_dir() {
	[ -n "$SU_UID" ] || fatal "no user $SU_USER on this machine"
	chmod 711 "$T"
	mkdir -m 700 "$T/w" && chown "$SU_UID:$SU_GID" "$T/w" || fatal "cannot make the user's directory"
}

# is_theirs FILE: owned by the user, mode 600
is_theirs() {
	local got
	got=$(stat -c '%u:%g %a' "$1" 2> /dev/null)
	[ "$got" = "$SU_UID:$SU_GID 600" ] || err "$(basename "$1"): owner and mode $got, expected $SU_UID:$SU_GID 600"
}

# The trace of sudo gtrace-bpf -- CMD: the user's, readable by them; CMD
# ran as the user (its uid, HOME and USER), or as root with --as-root.
t_record() {
	local rc
	user_dir
	as_sudo env GT_LIBCUDA="$MOCK_LIB" "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/w/r.gtrace" -- \
		"$WORKLOAD" --launches 4 --syncs 1 > "$T/wl.out" 2> "$T/wl.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "sudo gtrace-bpf -- WORKLOAD: exit $rc: $(tail -n 2 "$T/wl.err" | tr '\n' '|')"
	is_theirs "$T/w/r.gtrace"
	as_user "$GTRACE" dump --summary "$T/w/r.gtrace" > "$T/sum" 2> "$T/sum.err" ||
		err "the user cannot read their trace: $(head -n 2 "$T/sum.err" | tr '\n' '|')"
	as_user "$GTRACE" dump "$T/w/r.gtrace" 2> /dev/null | jq -s -e '[.[] | select(.type == "launch")] | length == 4' > /dev/null ||
		err "the user's dump of their trace does not hold the 4 launches"
	# as whom CMD ran
	as_sudo "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/w/id.gtrace" -- sh -c 'echo "$(id -u) $(id -g) $USER $HOME"' \
		> "$T/id.out" 2> "$T/id.err" || err "sudo gtrace-bpf -- id: exit $?: $(tail -n 2 "$T/id.err" | tr '\n' '|')"
	[ "$(cat "$T/id.out")" = "$SU_UID $SU_GID $SU_USER $(getent passwd "$SU_USER" | cut -d: -f6)" ] ||
		err "-- CMD ran as '$(cat "$T/id.out")', expected the user $SU_UID $SU_GID $SU_USER"
	grep -q 'made no CUDA call' "$T/id.err" || err "-- id: no line that it made no CUDA call: $(tr '\n' '|' < "$T/id.err")"
	as_sudo "$GTRACE" --as-root --libcuda "$MOCK_LIB" -o "$T/w/root.gtrace" -- id -u > "$T/root.out" 2> /dev/null ||
		err "sudo gtrace-bpf --as-root -- id: exit $?"
	[ "$(cat "$T/root.out")" = 0 ] || err "--as-root: CMD ran as uid $(cat "$T/root.out"), expected 0"
	is_theirs "$T/w/root.gtrace"
	# without sudo's variables: root's, as before
	"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/w/plain.gtrace" -- true > /dev/null 2>&1
	[ "$(stat -c '%u %a' "$T/w/plain.gtrace")" = "0 600" ] ||
		err "without sudo: $(stat -c '%u %a' "$T/w/plain.gtrace"), expected root's 600"
}

# The readers' outputs under sudo: the user's, and they open them; one the
# user already has is replaced with --force.
t_readers() {
	local f
	user_dir
	gen_trace -g -S eager:10000 "$T/t.gtrace" 20 > /dev/null || fatal "gen_trace failed"
	chmod 644 "$T/t.gtrace"
	as_sudo "$GTRACE" export "$T/t.gtrace" -o "$T/w/t.json" > "$T/e.out" 2> "$T/e.err" || err "export: $(cat "$T/e.err")"
	as_sudo "$GTRACE" report "$T/t.gtrace" -o "$T/w/t.html" > /dev/null 2> "$T/r.err" || err "report: $(cat "$T/r.err")"
	as_sudo "$GTRACE" stats "$T/t.gtrace" -o "$T/w/t.txt" > /dev/null 2> "$T/s.err" || err "stats: $(cat "$T/s.err")"
	as_sudo "$GTRACE" analyze "$T/t.gtrace" -o "$T/w/a.json" --format json > /dev/null 2> "$T/a.err" || err "analyze: $(cat "$T/a.err")"
	for f in t.json t.html t.txt a.json; do
		is_theirs "$T/w/$f"
		as_user head -c 1 "$T/w/$f" > /dev/null 2>&1 || err "the user cannot open $f"
	done
	as_user jq -e .traceEvents "$T/w/t.json" > /dev/null || err "t.json is not the Chrome JSON the extension asks for"
	as_sudo "$GTRACE" export "$T/t.gtrace" -o "$T/w/t.json" --force > /dev/null 2> "$T/e2.err" ||
		err "export --force over the user's own file: $(cat "$T/e2.err")"
	is_theirs "$T/w/t.json"
}

# The daemon's snapshots: root's under sudo, the user's with --owner.
t_daemon() {
	user_dir
	SUDO_UID=$SU_UID SUDO_GID=$SU_GID SUDO_USER=$SU_USER start_daemon --mode full --window 30s --memory 16M
	run_wl a --launches 20
	sleep 1.5
	snap -o "$T/root.gtrace"
	[ "$(stat -c '%u %a' "$SNAP")" = "0 600" ] || err "a snapshot of sudo gtrace-bpf daemon: $(stat -c '%u %a' "$SNAP"), expected root's 600"
	stop_daemon
	start_daemon --mode full --window 30s --memory 16M --owner "$SU_USER"
	run_wl b --launches 20
	sleep 1.5
	snap -o "$T/w/user.gtrace"
	is_theirs "$SNAP"
	stop_daemon
	"$GTRACE" daemon --owner no-such-user-here > /dev/null 2> "$T/bad.err"
	[ $? -eq 2 ] && [ "$(wc -l < "$T/bad.err")" -eq 1 ] || err "--owner of no user: $(cat "$T/bad.err")"
}

add_case t_record "sudo gtrace-bpf -- CMD: the trace is the user's (0600) and they read it; CMD runs as them (uid, HOME, USER), --as-root as root"
add_case t_readers "sudo gtrace-bpf export, report, stats, analyze -o: the user's files, opened by them; --force over their own file"
add_case t_daemon "sudo gtrace-bpf daemon: snapshots root's, with --owner USER the user's; --owner of no user refused"
run_cases "$@"
