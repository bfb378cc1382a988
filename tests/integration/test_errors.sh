#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Bad input: gtrace-bpf refuses with exactly one line on stderr and a
# non-zero status; a damaged trace is read up to the damage: every reader
# writes what it read, says in one line how much, and exits 1.
REQUIRES="root jq mock gtrace"
# --all only in command lines that end in a refusal, before anything is recorded
SHARED_CASES="t_limits t_usage t_unwritable_output t_shared_options"
. "$(dirname "$0")/lib.sh"

# expect_refusal LABEL RC STDERR-FILE: non-zero status, one stderr line.
expect_refusal() {
	local label=$1 rc=$2 file=$3 lines
	lines=$(wc -l < "$file")
	[ "$rc" -ne 0 ] || err "$label: exit status 0, expected non-zero"
	[ "$rc" -ne 124 ] || err "$label: still running after the timeout"
	[ "$lines" -eq 1 ] || err "$label: $lines lines on stderr, expected exactly 1: $(head -n 5 "$file" | tr '\n' '|')"
	log "$label: status $rc, stderr: $(head -n 2 "$file")"
}

t_unknown_pid() {
	local pid rc
	pid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
	while [ -e "/proc/$pid" ]; do pid=$((pid - 1)); done
	timeout 30 "$GTRACE" -p "$pid" --libcuda "$MOCK_LIB" -o "$T/x.gtrace" > "$T/out" 2> "$T/err"
	rc=$?
	expect_refusal "-p $pid (no such process)" $rc "$T/err"
}

t_unwritable_output() {
	local rc
	timeout 30 "$GTRACE" --all --libcuda "$MOCK_LIB" -d 1 -o "$T/no/such/dir/x.gtrace" > "$T/out" 2> "$T/err"
	rc=$?
	expect_refusal "-o in a directory that does not exist" $rc "$T/err"
	[ ! -e "$T/no" ] || err "gtrace-bpf created $T/no"
	mkdir "$T/ro"
	echo data > "$T/ro/file"
	timeout 30 "$GTRACE" --all --libcuda "$MOCK_LIB" -d 1 -o "$T/ro/file/x.gtrace" > "$T/out2" 2> "$T/err2"
	rc=$?
	expect_refusal "-o below a regular file" $rc "$T/err2"
}

t_no_libcuda() {
	local rc
	timeout 30 "$GTRACE" --libcuda "$T/nonexistent/libcuda.so.1" -o "$T/x.gtrace" -- "$WORKLOAD" \
		> "$T/out" 2> "$T/err"
	rc=$?
	expect_refusal "--libcuda of a file that does not exist" $rc "$T/err"
	grep -q '^{' "$T/out" && err "the command ran although gtrace-bpf refused to start"
	: > "$T/empty.so"
	timeout 30 "$GTRACE" --libcuda "$T/empty.so" -o "$T/y.gtrace" -- "$WORKLOAD" > "$T/out2" 2> "$T/err2"
	rc=$?
	expect_refusal "--libcuda of an empty file (not a libcuda)" $rc "$T/err2"
}

t_dump_not_a_trace() {
	local rc
	printf 'hello, I am not a trace\n' > "$T/text.gtrace"
	"$GTRACE" dump "$T/text.gtrace" > "$T/out1" 2> "$T/err1"
	rc=$?
	expect_refusal "dump of a text file" $rc "$T/err1"
	[ ! -s "$T/out1" ] || err "dump of a text file printed to stdout: $(head -c 200 "$T/out1")"
	: > "$T/empty.gtrace"
	"$GTRACE" dump "$T/empty.gtrace" > "$T/out2" 2> "$T/err2"
	rc=$?
	expect_refusal "dump of an empty file" $rc "$T/err2"
	"$GTRACE" dump "$T/missing.gtrace" > "$T/out3" 2> "$T/err3"
	rc=$?
	expect_refusal "dump of a missing file" $rc "$T/err3"
	head -c 4096 /dev/urandom > "$T/random.gtrace"
	"$GTRACE" dump "$T/random.gtrace" > "$T/out4" 2> "$T/err4"
	rc=$?
	expect_refusal "dump of random bytes" $rc "$T/err4"
}

# A real recording spread over ~3 s (several chunks), cut at several points:
# each cut dumps with status 1 and the one line of the readers' rule, never
# more records than the whole file, more as the cut moves later, and some
# cut shows some but not all of them; the line's count is the dump's.
t_dump_truncated() {
	local rc size full pct n prev=0 partial=0
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=50000 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/full.gtrace" -- \
		"$WORKLOAD" --launches 400 --copies 10 --syncs 60 > "$T/rec.out" 2> "$T/rec.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "recording failed with status $rc: $(tail -n 3 "$T/rec.err" | tr '\n' '|')"
	dump_trace "$T/full.gtrace" "$T/full.json"
	full=$(wc -l < "$T/full.json")
	size=$(stat -c %s "$T/full.gtrace")
	log "full trace: $size bytes, $full records"
	compare_counts "calls in the whole trace" \
		"$(counts_of "$T/full.json" "$(grep '^{' "$T/rec.out" | jq .pid)")" "$(expected_counts 400 10 60)"
	for pct in 25 50 75 90 99; do
		head -c $((size * pct / 100)) "$T/full.gtrace" > "$T/cut$pct.gtrace"
		"$GTRACE" dump "$T/cut$pct.gtrace" > "$T/cut$pct.json" 2> "$T/cut$pct.err"
		rc=$?
		n=$(wc -l < "$T/cut$pct.json")
		log "cut at $pct%: status $rc, $n records, stderr: $(head -n 1 "$T/cut$pct.err")"
		[ $rc -eq 1 ] || err "dump of the trace cut at $pct% exited $rc, expected 1"
		damage_line "dump of the trace cut at $pct%" "$T/cut$pct.gtrace" "$T/cut$pct.err" "" \
			"showing the records read"
		jq -e -s 'all(type == "object")' "$T/cut$pct.json" > /dev/null ||
			err "dump of the trace cut at $pct% printed lines that are not JSON objects"
		if [ "$pct" -le 75 ]; then
			[ "$n" -lt "$full" ] || err "dump of the trace cut at $pct% shows $n records, as many as the whole file"
		else
			[ "$n" -le "$full" ] || err "dump of the trace cut at $pct% shows $n records, more than the whole file ($full)"
		fi
		[ "$n" -ge "$prev" ] || err "cut at $pct% shows $n records, fewer than an earlier cut ($prev)"
		[ "$n" -gt 0 ] && [ "$n" -lt "$full" ] && partial=1
		prev=$n
	done
	[ $partial -eq 1 ] || err "no cut showed part of the records (the trace seems to be one chunk)"
}

# damage_line WHAT TRACE ERRFILE RECORDS KEPT: ERRFILE is the one line of
# the readers' rule for TRACE, RECORDS read (empty: any number), ending in
# KEPT.
damage_line() {
	local what=$1 trace=$2 file=$3 n=${4:-[0-9]+} kept=$5
	[ "$(wc -l < "$file")" -eq 1 ] ||
		{ err "$what: $(wc -l < "$file") lines on stderr, expected 1: $(head -n 4 "$file" | tr '\n' '|')"; return; }
	grep -Eq "^gtrace-bpf: $trace is damaged: .+; read $n records? (before it )?\([0-9]+ whole chunks?, [0-9]+ of [0-9]+ bytes\)(, [0-9]+ records? of the damaged chunk lost)?(, .*skipped)?; $kept\$" "$file" ||
		err "$what: stderr '$(cat "$file")', expected the damage line with $n records read and '$kept'"
}

# make_damaged TRACE PREFIX: the damaged files every reader gets, $T/PREFIX
# + cut (in its last chunk), corrupt (a byte of chunk 1's frame), killed (no
# trailer, as a killed recorder leaves it), hdr (the header alone).
make_damaged() {
	python3 - "$1" "$T/$2" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
d = open(src, 'rb').read()
off = hl = struct.unpack('<I', d[12:16])[0]
chunks = []
while off + 40 <= len(d):
    kind, cs = struct.unpack('<H', d[off + 4:off + 6])[0], struct.unpack('<I', d[off + 8:off + 12])[0]
    chunks.append((off, kind, cs))
    off += 40 + cs
data = [c for c in chunks if c[1] == 1]
trailer = [c for c in chunks if c[1] == 2][0]
assert len(data) >= 2, "too few chunks"
last = data[-1]
open(out + 'cut.gtrace', 'wb').write(d[:last[0] + 40 + last[2] // 2])
open(out + 'killed.gtrace', 'wb').write(d[:trailer[0]])
open(out + 'hdr.gtrace', 'wb').write(d[:hl])
b = bytearray(d)
c = data[1]
b[c[0] + 40 + c[2] // 2] ^= 0x55
open(out + 'corrupt.gtrace', 'wb').write(bytes(b))
PY
}

# Every reader, every damage: the output of what was read is written (a
# killed recorder's trace whole: all its records), one line says how much
# was read, status 1.
t_damaged_readers() {
	local f rc n full nrec what
	nrec=$(gen_trace -g -p 2 -k 12 -i 500 "$T/w.gtrace" 30000 3 | sed -n 's/.*: \([0-9]*\) records$/\1/p')
	[ -n "$nrec" ] || fatal "gen_trace failed"
	gen_trace -p 2 -k 12 "$T/m.gtrace" 30000 3 > /dev/null || fatal "gen_trace failed"
	make_damaged "$T/w.gtrace" "" || fatal "could not make the damaged files"
	make_damaged "$T/m.gtrace" m || fatal "could not make the damaged files"
	dump_trace "$T/w.gtrace" "$T/w.json"
	full=$(wc -l < "$T/w.json")
	for f in cut corrupt killed hdr; do
		"$GTRACE" dump "$T/$f.gtrace" > "$T/$f.json" 2> "$T/$f.err"
		rc=$?
		n=$(wc -l < "$T/$f.json")
		[ $rc -eq 1 ] || err "dump of $f.gtrace: status $rc, expected 1"
		case $f in
		killed) [ "$n" -eq "$full" ] && cmp -s "$T/w.json" "$T/$f.json" ||
				err "dump of the trace without its trailer: $n lines, not the whole trace's $full"
			# every record of the file: none lost but the trailer
			damage_line "dump of $f.gtrace" "$T/$f.gtrace" "$T/$f.err" "$nrec" "showing the records read" ;;
		hdr) [ "$n" -eq 0 ] || err "dump of the header alone printed $n lines"
			damage_line "dump of $f.gtrace" "$T/$f.gtrace" "$T/$f.err" 0 "showing the records read" ;;
		*) [ "$n" -gt 0 ] && [ "$n" -lt "$full" ] || err "dump of $f.gtrace: $n lines of $full"
			damage_line "dump of $f.gtrace" "$T/$f.gtrace" "$T/$f.err" "" "showing the records read" ;;
		esac
		for what in "dump --summary|the summary covers the records read" \
			    "export -f json -o $T/$f.out.json --force|exported the records read" \
			    "export -f csv -o $T/$f.csv --force|exported the records read" \
			    "export -o $T/$f.pftrace --force|exported the records read" \
			    "stats|the reports cover the records read" \
			    "stats --format json -r cuda_api_sum|the reports cover the records read" \
			    "analyze|the analysis covers the records read" \
			    "report -o $T/$f.html --force|the report covers the records read" \
			    "diff $T/w.gtrace|compared the records read" \
			    "merge -q -o $T/$f.merged.gtrace --force $T|merged the records read"; do
			local cmd=${what%%|*} kept=${what#*|} first rest in=$T/$f.gtrace
			first=${cmd%% *}
			rest=${cmd#"$first"}
			# merge takes a trace that is not merged yet, the spool directory $T holds none
			[ "$first" = merge ] && in=$T/m$f.gtrace
			[ "$f" = hdr ] && case $first in analyze) kept="it holds no CUDA calls: nothing to analyze" ;; diff) kept="it holds no CUDA calls" ;; esac
			# shellcheck disable=SC2086
			"$GTRACE" $first "$in" $rest > "$T/o.out" 2> "$T/o.err"
			rc=$?
			[ $rc -eq 1 ] || { err "$first$rest of $in: status $rc, expected 1: $(head -n 3 "$T/o.err" | tr '\n' '|')"; continue; }
			damage_line "$first$rest of $in" "$in" "$T/o.err" "" "$kept"
		done
		# what was read is written
		for o in "$f.out.json" "$f.csv" "$f.pftrace" "$f.merged.gtrace"; do
			[ -s "$T/$o" ] || err "no $o written for $f.gtrace"
		done
		[ -s "$T/$f.html" ] || err "no report written for $f.gtrace"
	done
}

# A recorder killed with SIGKILL leaves a trace without its trailer: every
# reader reads it up to its last complete chunk, says that the recording
# did not finish, and exits 1.
t_killed_recorder() {
	local rc n i
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=50000 start_tracer --libcuda "$MOCK_LIB" -o "$T/k.gtrace" -- \
		"$WORKLOAD" --launches 400 --syncs 200
	# the recorder writes a chunk about once a second: wait for launches in it
	for ((i = 0; i < 200; i++)); do
		n=$("$GTRACE" dump "$T/k.gtrace" 2> /dev/null | grep -c '"type":"launch"')
		[ "$n" -gt 0 ] && break
		sleep 0.1
	done
	[ "$n" -gt 0 ] || fatal "no launch in the trace after 20 s of recording"
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" 2> /dev/null
	"$GTRACE" dump "$T/k.gtrace" > "$T/k.json" 2> "$T/k.err"
	rc=$?
	[ $rc -eq 1 ] || err "dump of the killed recorder's trace: status $rc, expected 1"
	damage_line "dump of the killed recorder's trace" "$T/k.gtrace" "$T/k.err" "" "showing the records read"
	n=$(sed -n 's/.*; read \([0-9]*\) records.*/\1/p' "$T/k.err")
	grep -q "with no trailer: recording did not finish" "$T/k.err" || err "the line does not say the recording did not finish: $(cat "$T/k.err")"
	[ "$(grep -c '"type":"launch"' "$T/k.json")" -gt 0 ] || err "no launch read from the killed recorder's trace"
	for c in stats analyze; do
		"$GTRACE" $c "$T/k.gtrace" > "$T/k.$c" 2> "$T/k.$c.err"
		rc=$?
		[ $rc -eq 1 ] && [ -s "$T/k.$c" ] || err "$c of the killed recorder's trace: status $rc, output $(wc -c < "$T/k.$c") bytes"
		grep -q "is damaged: .*recording did not finish; read $n records" "$T/k.$c.err" ||
			err "$c of the killed recorder's trace: $(cat "$T/k.$c.err")"
	done
}

# A recorder killed while its program waits in a synchronize call: analyze
# counts the call up to the trace's end (the host waited, GPU-bound as far
# as the calls show) and says the trace ends inside it, in a note, in the
# answer and in the CPU figures; the wait's time is the trace's own end
# minus the call's entry, exactly.
t_killed_in_sync() {
	local rc i n size wl
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=120000000 start_tracer --libcuda "$MOCK_LIB" -o "$T/k.gtrace" -- \
		"$WORKLOAD" --launches 4 --syncs 1
	# the sync's entry in a chunk on disk, then a later chunk (the recorder
	# writes its counters and a chunk about once a second)
	for ((i = 0; i < 300; i++)); do
		n=$("$GTRACE" dump "$T/k.gtrace" 2> /dev/null | grep -c '"type":"sync"')
		[ "$n" -gt 0 ] && break
		sleep 0.1
	done
	[ "$n" -gt 0 ] || fatal "no synchronize call in the trace after 30 s of recording"
	# the workload, in its 120 s sync: the process the trace names, killed
	# at the case's end whatever happens
	wl=$("$GTRACE" dump "$T/k.gtrace" 2> /dev/null | jq -r 'select(.type == "sync") | .pid' | head -n 1)
	grep -q cuda_workload "/proc/$wl/cmdline" 2> /dev/null && PIDS+=("$wl")
	size=$(stat -c %s "$T/k.gtrace")
	for ((i = 0; i < 300; i++)); do
		[ "$(stat -c %s "$T/k.gtrace")" -gt "$size" ] && break
		sleep 0.1
	done
	[ "$(stat -c %s "$T/k.gtrace")" -gt "$size" ] || fatal "no chunk written after the sync's in 30 s"
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" 2> /dev/null
	"$GTRACE" dump "$T/k.gtrace" 2> /dev/null | jq -c 'select(.type == "sync")' > "$T/sync.json"
	grep -q cuda_workload "/proc/$wl/cmdline" 2> /dev/null && kill -KILL "$wl" 2> /dev/null
	jq -e '.incomplete == true' "$T/sync.json" > /dev/null || fatal "the sync is not open in the trace: $(cat "$T/sync.json")"
	"$GTRACE" analyze --format json -o "$T/a.json" "$T/k.gtrace" 2> "$T/a.err"
	rc=$?
	[ $rc -eq 1 ] || err "analyze of the trace cut inside a sync: status $rc, expected 1 (damaged)"
	jq -e --slurpfile s "$T/sync.json" '
		(.notes | any(test("^the trace ends inside 1 call in flight \\(cuStreamSynchronize of pid [0-9]+ tid [0-9]+ from \\+[0-9.]+ s\\): counted up to its end at")))
		and (.scopes | map(select(.kind == "process"))[0] as $w
			| $w.cpu.cut == 1 and $w.cpu.sync_cut_ns > 0
			and $w.cpu.sync_cut_ns == $w.end_ns - $s[0].ts
			and ($w.answers.busy | test("The trace ends inside 1 call, counted up to its end"))
			and ($w.answers.busy | test("^GPU busy at least"))
			and ($w.answers.bound | test("^GPU-bound")))' "$T/a.json" > /dev/null ||
		err "analyze of the trace cut inside a sync: $(jq -c '{notes, s: [.scopes[] | {kind, end_ns, cpu, answers}]}' "$T/a.json" | head -c 1500)"
	"$GTRACE" analyze "$T/k.gtrace" > "$T/a.txt" 2> /dev/null
	grep -q "1 in flight at the trace's end (counted up to it)" "$T/a.txt" || err "the table does not count the call in flight: $(grep 'CPU:' "$T/a.txt")"
}

t_usage() {
	local rc i=0 args
	# bad command lines: each gets one line on stderr and a non-zero exit
	while IFS= read -r args; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		timeout 30 "$GTRACE" $args > "$T/out$i" 2> "$T/err$i"
		rc=$?
		expect_refusal "gtrace-bpf $args" $rc "$T/err$i"
		# one scheme (--help, EXIT STATUS): a bad command line exits 2
		[ "$rc" -eq 2 ] || err "gtrace-bpf $args: exit status $rc, expected 2 (bad command line)"
	done <<'ARGS'
--bogus-option
-p notapid
-p 1 --all
-p 1 -p 2 --libcuda x --cupti-lib y
-p 1 --libcuda x --
-d -3 --all
--buffer-size 12Q --all
--max-size 0 --all
--max-size 12Q --all
--trace cuda,gpu --all
dump
dump a b
stats x --format yaml
stats x --timeunit h
export x -f svg
merge
merge x
stats x -r nope
stats x -r cuda_api_sum,nope
census
census --libcuda x
census --functions
record
ARGS
}

# the help texts name every command and every stats report
t_help() {
	local cmd names known missing=
	"$GTRACE" --help > "$T/help" 2>&1 || err "gtrace-bpf --help exited non-zero"
	for cmd in record dump export stats analyze report diff merge census daemon snapshot status help; do
		grep -qE "^  $cmd +[a-z]" "$T/help" || missing="$missing $cmd"
	done
	[ -z "$missing" ] || err "gtrace-bpf --help's list of commands does not show:$missing"
	grep -q '^EXIT STATUS' "$T/help" || err "gtrace-bpf --help says nothing of exit statuses"
	# the reports stats knows (its refusal of an unknown one lists them) are
	# the ones its --help lists, one a line
	"$GTRACE" stats x -r nope 2> "$T/names" > /dev/null
	known=$(sed -n "s/^gtrace-bpf stats: unknown report 'nope' (\(.*\))$/\1/p" "$T/names" | sed 's/, /\n/g')
	[ -n "$known" ] || err "stats -r nope does not list the reports: $(cat "$T/names")"
	"$GTRACE" stats --help > "$T/shelp" 2>&1 || err "gtrace-bpf stats --help exited non-zero"
	names=$(sed -n '/^REPORTS/,/^$/p' "$T/shelp" | sed -n 's/^  \([a-z_0-9]*\)$/\1/p')
	[ "$names" = "$known" ] || err "stats --help lists [$(tr '\n' ' ' <<< "$names")], stats knows [$(tr '\n' ' ' <<< "$known")]"
	[ "$(wc -l <<< "$names")" -eq 18 ] || err "stats --help lists $(wc -l <<< "$names") reports, expected 18"
	for cmd in cuda_api_sum cuda_launch_sum cuda_mem_size_sum cuda_sync_sum process_sum ioctl_sum \
		   cuda_gpu_kern_sum cuda_gpu_site_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum gpu_launch_latency \
		   capture_sum gpu_metrics_sum; do
		grep -qx "$cmd" <<< "$names" || err "stats --help does not list $cmd"
	done
}

# Values the kernel or the libcuda would refuse: one line naming the limit
# or the name, before anything is loaded or run.
t_limits() {
	local rc b
	for b in 3G 4G; do
		timeout 30 "$GTRACE" --all --buffer-size $b -d 1 -o "$T/b$b.gtrace" > /dev/null 2> "$T/b$b.err"
		rc=$?
		expect_refusal "--buffer-size $b" $rc "$T/b$b.err"
		[ "$rc" -eq 2 ] || err "--buffer-size $b: exit $rc, expected 2 (bad command line)"
		grep -q 'at most 2G' "$T/b$b.err" || err "--buffer-size $b: the error does not name the limit: $(head -n 2 "$T/b$b.err")"
		[ ! -e "$T/b$b.gtrace" ] || err "--buffer-size $b wrote a trace"
	done
	for f in bogus cuInit,bogus; do
		timeout 30 "$GTRACE" census --libcuda "$MOCK_LIB" --functions $f -- "$WORKLOAD" > "$T/c.out" 2> "$T/c.err"
		rc=$?
		expect_refusal "census --functions $f" $rc "$T/c.err"
		grep -q "'bogus'" "$T/c.err" || err "census --functions $f: the error does not name bogus: $(head -n 2 "$T/c.err")"
		grep -q '^{' "$T/c.out" && err "census --functions $f ran the command"
	done
}

# The recording options record and daemon share are one set: the same in
# both --help's, and a bad value gets the same line and status from both
# (nothing is recorded: every command line here stops at its parsing).
t_shared_options() {
	local rsec dsec args rc1 rc2 e1 e2
	rsec=$("$GTRACE" --help | sed -n '/^ Recording (record and daemon alike):/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	dsec=$("$GTRACE" daemon --help | sed -n '/^ Recording (record and daemon alike):/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	[ "$(wc -l <<< "$rsec")" -ge 10 ] || err "record --help's shared options: [$(tr '\n' ' ' <<< "$rsec")], expected 10 or more"
	[ "$rsec" = "$dsec" ] || err "the shared options differ: record [$(tr '\n' ' ' <<< "$rsec")], daemon [$(tr '\n' ' ' <<< "$dsec")]"
	for args in "--mode nosuch" "--buffer-size 3G" "--light-window 5s/1s" "--gpu-metrics=5000" "--cupti=always" \
		    "--cupti-lib /x" "--mode full --light-window 100ms/1s" "--cupti-lib="; do
		# a command line taken would record until stopped: 124 then says so
		# shellcheck disable=SC2086 # the words of args
		timeout 30 "$GTRACE" $args --all > /dev/null 2> "$T/r.err"
		rc1=$?
		# shellcheck disable=SC2086
		timeout 30 "$GTRACE" daemon $args > /dev/null 2> "$T/d.err"
		rc2=$?
		e1=$(head -n 1 "$T/r.err" | sed 's/^gtrace-bpf: //')
		e2=$(head -n 1 "$T/d.err" | sed 's/^gtrace-bpf\( daemon\)\?: //')
		[ "$rc1" = 2 ] && [ "$rc2" = 2 ] || err "'$args': record exited $rc1, daemon $rc2, expected 2 from both"
		[ -n "$e1" ] && [ "$e1" = "$e2" ] || err "'$args': record says '$e1', daemon '$e2'"
	done
	# an option record takes, the daemon takes: the line is about --window, not --cupti
	timeout 30 "$GTRACE" daemon --cupti=optional --window 0 > /dev/null 2> "$T/d.err"
	grep -q -- '--window' "$T/d.err" || err "daemon --cupti=optional: $(head -n 1 "$T/d.err")"
}

add_case t_limits "--buffer-size above 2G and census --functions of an unknown name: one line naming the limit or the name"
add_case t_usage "bad command lines (unknown option, bad numbers, conflicting modes, bad formats, unknown reports): one line each, exit 2"
add_case t_shared_options "record and daemon: the same shared recording options in both --help's, the same line and status 2 for the same bad value"
add_case t_help "--help shows every command and the exit statuses; stats --help lists all 18 reports"
add_case t_unknown_pid "-p of a pid that does not exist: one-line error, non-zero exit"
add_case t_unwritable_output "-o where a file cannot be created: one-line error, non-zero exit"
add_case t_no_libcuda "--libcuda of a missing or non-libcuda file: one-line error, command not run"
add_case t_dump_not_a_trace "dump of a text/empty/missing/random file: one-line error, non-zero exit"
add_case t_dump_truncated "dump of a trace cut short: the records before the damage, one line saying how many, exit 1"
add_case t_damaged_readers "every reader on a cut, corrupt, trailer-less and header-only trace: its output of what was read, one line, exit 1"
add_case t_killed_in_sync "a recorder killed while its program waits in a sync: analyze counts the call up to the trace's end and says the trace ends inside it"
add_case t_killed_recorder "a SIGKILLed recorder's trace: read to its last chunk, one line saying the recording did not finish, exit 1"
run_cases "$@"
