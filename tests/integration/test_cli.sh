#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What a new user types: times with units, pid lists, -h, a command without
# --, a command that does not exist; and what the recorder says back (the
# header's options, the summary line, the status line on a terminal).
REQUIRES="root jq mock gtrace"
# --all, but no workload of their own and only the header and the time checked
SHARED_CASES="t_duration t_wording"
. "$(dirname "$0")/lib.sh"

# header_options FILE: the "options:" line of dump --summary.
header_options() {
	"$GTRACE" dump --summary "$1" 2> /dev/null | sed -n 's/^options: //p'
}

# -d takes 500ms, 1s, 0.02m, a plain number of seconds; a unit it does not
# know is a bad command line.
t_duration() {
	local d t0 ms rc opts
	for d in 500ms 0.02m 1; do
		t0=$(date +%s%N)
		timeout 30 "$GTRACE" --all --trace cuda --libcuda "$MOCK_LIB" -d $d -o "$T/d$d.gtrace" \
			> /dev/null 2> "$T/d.err"
		rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ $rc -eq 0 ] || { err "-d $d: exit $rc; stderr: $(head -n 2 "$T/d.err" | tr '\n' '|')"; continue; }
		opts=$(header_options "$T/d$d.gtrace")
		case $d in
		500ms) want=0.5 ;; 0.02m) want=1.2 ;; 1) want=1 ;;
		esac
		grep -qw "duration=$want" <<< "$opts" || err "-d $d: the header says [$opts], expected duration=$want"
		[ $ms -lt 15000 ] || err "-d $d took $ms ms"
		log "-d $d: $ms ms, $(grep -o 'duration=[^ ]*' <<< "$opts")"
	done
	for d in 5x 10sec -1s ms 1e9h; do
		timeout 30 "$GTRACE" --all -d "$d" -o "$T/bad.gtrace" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "-d $d: exit $rc, expected 2 (bad command line)"
		[ "$(wc -l < "$T/bad.err")" -eq 1 ] || err "-d $d: expected one line on stderr: $(head -n 3 "$T/bad.err" | tr '\n' '|')"
		[ ! -e "$T/bad.gtrace" ] || err "-d $d wrote a trace"
	done
}

# -p 1,2 traces both, as -p 1 -p 2 does: the recording lasts until the
# later of the two has exited.
t_pid_list() {
	local a b rc t0 ms form
	for form in comma repeated; do
		sleep 1 & a=$!
		sleep 3 & b=$!
		PIDS+=("$a" "$b")
		t0=$(date +%s%N)
		if [ $form = comma ]; then
			timeout 30 "$GTRACE" -p "$a,$b" --trace cuda --libcuda "$MOCK_LIB" -o "$T/$form.gtrace" \
				> /dev/null 2> "$T/$form.err"
		else
			timeout 30 "$GTRACE" -p "$a" -p "$b" --trace cuda --libcuda "$MOCK_LIB" -o "$T/$form.gtrace" \
				> /dev/null 2> "$T/$form.err"
		fi
		rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		wait "$a" "$b" 2> /dev/null
		[ $rc -eq 0 ] || { err "-p ($form): exit $rc; stderr: $(head -n 2 "$T/$form.err" | tr '\n' '|')"; continue; }
		[ $ms -ge 2000 ] || err "-p ($form) stopped after $ms ms, before the second process (3 s) exited"
		grep -q 'every traced process has exited' "$T/$form.err" || err "-p ($form): no line saying every process exited"
		log "-p ($form): $ms ms"
	done
	for p in 1,x 1,,2 , 1,0; do
		"$GTRACE" -p "$p" -o "$T/bad.gtrace" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "-p $p: exit $rc, expected 2 (bad command line)"
		[ "$(wc -l < "$T/bad.err")" -eq 1 ] || err "-p $p: expected one line on stderr: $(head -n 3 "$T/bad.err" | tr '\n' '|')"
	done
}

# -h is --help for every command.
t_help_short() {
	local c rc
	for c in "" record dump export stats analyze merge census; do
		# shellcheck disable=SC2086
		"$GTRACE" $c -h > "$T/h.out" 2> "$T/h.err"
		rc=$?
		# shellcheck disable=SC2086
		"$GTRACE" $c --help > "$T/help.out" 2>&1
		[ $rc -eq 0 ] || { err "gtrace-bpf $c -h: exit $rc; stderr: $(head -n 2 "$T/h.err" | tr '\n' '|')"; continue; }
		cmp -s "$T/h.out" "$T/help.out" || err "gtrace-bpf $c -h does not print what --help prints: $(head -n 2 "$T/h.out" | tr '\n' '|')"
	done
}

# A first word that is not a command of gtrace-bpf is the command to run,
# with its own options (perf record's way); -- is still accepted.
t_implicit_cmd() {
	local rc wj pid n
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda -o "$T/imp.gtrace" \
		"$WORKLOAD" --launches 3 --copies 1 --syncs 1 > "$T/imp.out" 2> "$T/imp.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf WORKLOAD --launches 3 (no --): exit $rc; stderr: $(head -n 3 "$T/imp.err" | tr '\n' '|')"
	wj=$(grep '^{' "$T/imp.out" | tail -n 1)
	pid=$(jq -r .pid <<< "$wj")
	dump_trace "$T/imp.gtrace" "$T/imp.json"
	n=$(jq -s --argjson p "$pid" '[.[] | select(.pid == $p and (.api // "" | startswith("cuLaunchKernel")))] | length' "$T/imp.json")
	[ "$n" -ge 1 ] || err "no launches of pid $pid recorded with the command given without --"
	grep -qw 'mode=command' <<< "$(header_options "$T/imp.gtrace")" || err "the header does not say mode=command"
	# a word that is neither a command of ours nor a program: one line
	(cd "$T" && timeout 30 "$GTRACE" qqzzx x.gtrace > "$T/typo.out" 2> "$T/typo.err")
	rc=$?
	[ $rc -eq 127 ] || err "gtrace-bpf qqzzx: exit $rc, expected 127 (command not found)"
	[ "$(wc -l < "$T/typo.err")" -eq 1 ] || err "gtrace-bpf qqzzx: expected one line: $(head -n 3 "$T/typo.err" | tr '\n' '|')"
	grep -q 'not a command of gtrace-bpf' "$T/typo.err" || err "gtrace-bpf qqzzx does not say it is no command of ours: $(cat "$T/typo.err")"
	[ -z "$(ls "$T" | grep '\.gtrace$' | grep -v imp.gtrace)" ] || err "gtrace-bpf qqzzx left a trace: $(ls "$T")"
}

# A first word a typo away from a command (stat, analyse, dupm), or a trace
# file, is refused with the command meant, status 2, nothing run or
# recorded; -- runs the program all the same.
t_typos() {
	local w want rc
	for w in stat:stats analyse:analyze dupm:dump reprot:report stauts:status; do
		want=${w#*:}
		w=${w%%:*}
		(cd "$T" && timeout 30 "$GTRACE" "$w" run.gtrace > "$T/t.out" 2> "$T/t.err")
		rc=$?
		[ $rc -eq 2 ] || err "gtrace-bpf $w run.gtrace: exit $rc, expected 2"
		[ "$(wc -l < "$T/t.err")" -eq 1 ] && grep -q "^gtrace-bpf: '$w' is not a command: did you mean $want? (to run the program, write gtrace-bpf -- $w" "$T/t.err" ||
			err "gtrace-bpf $w: $(tr '\n' '|' < "$T/t.err")"
	done
	(cd "$T" && timeout 30 "$GTRACE" run.gtrace > "$T/t.out" 2> "$T/t.err")
	rc=$?
	[ $rc -eq 2 ] && grep -q "^gtrace-bpf: 'run.gtrace' is a trace, not a command: give the command first, e.g. gtrace-bpf stats run.gtrace" "$T/t.err" ||
		err "gtrace-bpf run.gtrace: exit $rc: $(tr '\n' '|' < "$T/t.err")"
	[ -z "$(ls "$T" | grep '\.gtrace$')" ] || err "a refused word left a trace: $(ls "$T")"
	# -- stat: the program, recorded; it used no CUDA: said, its own status
	(cd "$T" && timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o s.gtrace -- stat -c %n /dev/null > "$T/t.out" 2> "$T/t.err")
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$T/t.out")" = /dev/null ] || err "-- stat: exit $rc, output '$(cat "$T/t.out")'"
	grep -q '^gtrace-bpf: warning: stat made no CUDA call' "$T/t.err" || err "-- stat: $(tr '\n' '|' < "$T/t.err")"
	(cd "$T" && timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o f.gtrace -- sh -c 'exit 3' > /dev/null 2>&1)
	rc=$?
	[ $rc -eq 3 ] || err "-- sh -c 'exit 3' (no CUDA): exit $rc, expected its own 3"
	# an optional value after a space: refused, nothing run
	(cd "$T" && timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o g.gtrace --gpu-metrics 5 > "$T/t.out" 2> "$T/t.err")
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "--gpu-metrics 5: write --gpu-metrics=5" "$T/t.err" ||
		err "--gpu-metrics 5: exit $rc: $(head -n 2 "$T/t.err" | tr '\n' '|')"
	[ ! -e "$T/g.gtrace" ] || err "--gpu-metrics 5 left a trace"
}

# Bare gtrace-bpf, gtrace-bpf help and --help list every command by group;
# help COMMAND is COMMAND --help; every command's help fits 80 columns, an
# example's comment whole on its line, one Usage block.
t_help() {
	local c out n
	"$GTRACE" > "$T/bare" 2> "$T/bare.err" || err "bare gtrace-bpf: exit $?"
	"$GTRACE" help > "$T/help" 2> /dev/null || err "gtrace-bpf help: exit $?"
	cmp -s "$T/bare" "$T/help" || err "bare gtrace-bpf and gtrace-bpf help differ"
	for c in "Record:" "Read a trace:" "Analyse:" "Daemon (always on):" "Help:"; do
		grep -qx "$c" "$T/help" || err "the overview has no group '$c'"
	done
	n=$(grep -cE '^  [a-z]+ +[a-z]' "$T/help")
	[ "$n" -eq 14 ] || err "the overview lists $n commands, expected 14: $(tr '\n' '|' < "$T/help")"
	"$GTRACE" --help > "$T/top" 2> /dev/null
	for c in $(grep -E '^  [a-z]+ +[a-z]' "$T/help" | awk '{ print $1 }'); do
		grep -qE "^  $c +" "$T/top" || err "--help does not list $c"
		"$GTRACE" help "$c" > "$T/h1" 2>&1
		if [ "$c" = help ]; then
			cmp -s "$T/h1" "$T/help" || err "help help is not the overview"
			continue
		fi
		"$GTRACE" "$c" --help > "$T/h2" 2>&1
		cmp -s "$T/h1" "$T/h2" || err "gtrace-bpf help $c is not gtrace-bpf $c --help"
		out=$(awk -v c="$c" 'length($0) > 80 { print c ": " length($0) ": " $0 }' "$T/h2" | head -n 2)
		[ -z "$out" ] || err "over 80 columns: $out"
		out=$(grep -n '#' "$T/h2" | grep -vE '^[0-9]+:  ' | head -n 2)
		[ -z "$out" ] || err "$c --help: a comment broken off its example: $out"
		[ "$(grep -ci '^usage:' "$T/h2")" -eq 1 ] || err "$c --help: $(grep -ci '^usage:' "$T/h2") Usage lines"
	done
	"$GTRACE" help nosuch > /dev/null 2> "$T/e"
	[ $? -eq 2 ] && [ "$(wc -l < "$T/e")" -eq 1 ] || err "help nosuch: $(cat "$T/e")"
}

# A command that cannot run leaves no trace and says so, with a shell's 127.
t_nonexistent() {
	local rc form
	for form in dash-o default; do
		mkdir "$T/$form"
		if [ $form = dash-o ]; then
			(cd "$T/$form" && timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o out.gtrace -- /nonexistent/prog > out 2> err)
		else
			(cd "$T/$form" && timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -- /nonexistent/prog > out 2> err)
		fi
		rc=$?
		[ $rc -eq 127 ] || err "-- /nonexistent/prog ($form): exit $rc, expected 127"
		[ "$(wc -l < "$T/$form/err")" -eq 1 ] || err "-- /nonexistent/prog ($form): expected one line: $(head -n 3 "$T/$form/err" | tr '\n' '|')"
		grep -q 'cannot run /nonexistent/prog: No such file or directory' "$T/$form/err" || err "($form) the line does not say why: $(cat "$T/$form/err")"
		[ -z "$(ls "$T/$form" | grep -v '^out$\|^err$')" ] || err "-- /nonexistent/prog ($form) left: $(ls "$T/$form" | tr '\n' ' ')"
	done
	: > "$T/noexec"
	chmod 644 "$T/noexec"
	timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/ne.gtrace" -- "$T/noexec" > /dev/null 2> "$T/ne.err"
	rc=$?
	[ $rc -eq 126 ] || err "-- a file that is not executable: exit $rc, expected 126"
	[ ! -e "$T/ne.gtrace" ] || err "-- a file that is not executable left a trace"
}

# The header lists the sources without a stray comma; the summary line
# reads as a sentence: "1 process", small sizes in KiB.
t_wording() {
	local t opts rc
	for t in cuda cuda,ioctl sched cuda,sched; do
		timeout 30 "$GTRACE" --all --trace $t --libcuda "$MOCK_LIB" -d 0.2 -o "$T/w.gtrace" --force > /dev/null 2> "$T/w.err" ||
			{ err "--trace $t: failed: $(tail -n 2 "$T/w.err")"; continue; }
		opts=$(header_options "$T/w.gtrace")
		grep -Eq -- "(^| )trace=$t( |$)" <<< "$opts" || err "--trace $t: the header says [$(grep -o 'trace=[^ ]*' <<< "$opts")]"
	done
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/one.gtrace" -- \
		"$WORKLOAD" --launches 2 --copies 1 --syncs 1 > /dev/null 2> "$T/one.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "-- WORKLOAD: exit $rc: $(tail -n 2 "$T/one.err")"
	grep -q '^gtrace-bpf: wrote ' "$T/one.err" || fatal "no 'wrote' line: $(cat "$T/one.err")"
	log "$(grep '^gtrace-bpf: wrote ' "$T/one.err")"
	grep -q ' 1 processes' "$T/one.err" && err "the summary says '1 processes'"
	grep -q ', 1 process$' "$T/one.err" || err "the summary does not end ', 1 process': $(grep wrote "$T/one.err")"
	grep -q ' 0\.0 MiB' "$T/one.err" && err "the summary says '0.0 MiB'"
	grep -Eq ': [0-9]+ records, [0-9.]+ KiB,' "$T/one.err" || err "a trace under 0.1 MiB is not given in KiB: $(grep wrote "$T/one.err")"
}

# On a terminal, a message printed while the status line shows starts on a
# line of its own: the status line is cleared first.
t_status_line() {
	local raw
	mkdir "$T/wheel"
	cp "$MOCK_LIB" "$T/wheel/libcuda.so.1"
	# the libcuda is found (a -v line) after the first status line (1 s)
	# (the mock's cuInit lives long enough for the attacher to look at it;
	# the workload's own output goes elsewhere, so that only ours is judged)
	GT_LIBCUDA=$T/wheel/libcuda.so.1 GT_MOCK_INIT_US=500000 timeout 60 script -qec \
		"$GTRACE -v -o $T/st.gtrace -- sh -c 'sleep 1.6; exec $WORKLOAD --launches 2 --copies 1 --syncs 1 > $T/wl.out 2>&1'" \
		/dev/null > "$T/pty.out" 2>&1 < /dev/null
	grep -aEq 'gtrace-bpf: [0-9]+s  [0-9]+ events' "$T/pty.out" || fatal "no status line on the terminal: $(head -c 400 "$T/pty.out" | cat -v)"
	grep -aq 'gtrace-bpf: tracing ' "$T/pty.out" || fatal "no 'tracing' line: $(cat -v "$T/pty.out" | head -n 20)"
	# what comes before the message on its line (after the last CR or LF)
	raw=$(python3 - "$T/pty.out" <<'EOF'
import sys, re
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
bad = []
# every message of ours but the status line itself ("gtrace-bpf: 1s  7 events...")
for m in re.finditer(r'gtrace-bpf: (?![0-9]+s  )', data):
    head = data[:m.start()]
    line = re.split(r'[\r\n]', head)[-1]
    if line not in ('', '\x1b[K'):
        bad.append(repr(line))
print(' | '.join(bad))
EOF
)
	[ -z "$raw" ] || err "a message shares its line with the status line: it follows [$raw]"
}

# Threads that live a few milliseconds and rename themselves after their
# first call (the mock's launch threads, gtw-N) still get their names.
t_thread_names() {
	local rc wj pid got
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/th.gtrace" -- \
		"$WORKLOAD" --launches 4 --copies 1 --syncs 1 --threads 4 > "$T/th.out" 2> "$T/th.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "-- WORKLOAD --threads 4: exit $rc: $(tail -n 2 "$T/th.err")"
	wj=$(grep '^{' "$T/th.out" | tail -n 1)
	pid=$(jq -r .pid <<< "$wj")
	"$GTRACE" export "$T/th.gtrace" -f json -o "$T/th.json" 2> "$T/exp.err" || fatal "export failed: $(cat "$T/exp.err")"
	# the last name given to each launching thread (not the main one)
	got=$(jq -c --argjson p "$pid" '
		[.traceEvents[] | select(.pid == $p and .tid != $p)] as $ev
		| ([$ev[] | select(.ph != "M" and ((.name // "") | test("^cuLaunch|^vecAdd|^scale|^fill")))
		    | .tid] | unique) as $launchers
		| [$launchers[] as $t | [$ev[] | select(.ph == "M" and .name == "thread_name" and .tid == $t)
		    | .args.name] | last // "none"] | sort' "$T/th.json")
	log "launch threads' names: $got"
	[ "$got" = '["gtw-0","gtw-1","gtw-2","gtw-3"]' ] ||
		err "the 4 launch threads are named $got, expected [gtw-0..gtw-3]"
}

add_case t_thread_names "threads that live milliseconds and rename themselves after their first call are named"
add_case t_duration "-d 500ms, 0.02m and 1 (seconds) are taken; 5x, 10sec, -1s refused (exit 2)"
add_case t_pid_list "-p A,B and -p A -p B trace both until the last exits; bad lists refused (exit 2)"
add_case t_help_short "-h prints --help for every command"
add_case t_implicit_cmd "a command given without -- is run and traced; a word that is no program says so (127)"
add_case t_typos "a typo of a command (stat, analyse, dupm) or a trace as first word: did you mean, status 2, nothing recorded; -- runs it; no CUDA: said, its own status; --gpu-metrics 5 refused"
add_case t_help "bare gtrace-bpf, help, --help: every command grouped; help COMMAND; 80 columns, comments whole, one Usage"
add_case t_nonexistent "-- /nonexistent: no trace file, one line saying why, exit 127 (126 not executable)"
add_case t_wording "header trace= has no trailing comma; summary says '1 process' and KiB under 0.1 MiB"
add_case t_status_line "on a terminal, messages printed during the status line start on a cleared line"
run_cases "$@"
