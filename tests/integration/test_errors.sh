#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Bad input: gtrace-bpf refuses with exactly one line on stderr and a
# non-zero status; a damaged trace is read up to the damage with a warning.
REQUIRES="root jq mock gtrace"
# --all only in command lines that end in a refusal, before anything is recorded
SHARED_CASES="t_limits t_usage t_unwritable_output"
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
# each cut dumps with status 0 and a warning, never more records than the
# whole file, more as the cut moves later, and some cut shows some but not
# all of them.
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
		[ $rc -eq 0 ] || { err "dump of the trace cut at $pct% exited $rc, expected 0"; continue; }
		[ -s "$T/cut$pct.err" ] || err "dump of the trace cut at $pct% printed no warning on stderr"
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
	for cmd in dump export stats merge census; do
		grep -q "gtrace-bpf $cmd " "$T/help" || missing="$missing $cmd"
	done
	[ -z "$missing" ] || err "gtrace-bpf --help does not show the usage of:$missing"
	grep -q '^EXIT STATUS' "$T/help" || err "gtrace-bpf --help says nothing of exit statuses"
	# the reports stats knows (its refusal of an unknown one lists them) are
	# the ones its --help lists, one a line
	"$GTRACE" stats x -r nope 2> "$T/names" > /dev/null
	known=$(sed -n "s/^gtrace-bpf stats: unknown report 'nope' (\(.*\))$/\1/p" "$T/names" | sed 's/, /\n/g')
	[ -n "$known" ] || err "stats -r nope does not list the reports: $(cat "$T/names")"
	"$GTRACE" stats --help > "$T/shelp" 2>&1 || err "gtrace-bpf stats --help exited non-zero"
	names=$(sed -n '/^REPORTS/,/^$/p' "$T/shelp" | sed -n 's/^  \([a-z_0-9]*\)$/\1/p')
	[ "$names" = "$known" ] || err "stats --help lists [$(tr '\n' ' ' <<< "$names")], stats knows [$(tr '\n' ' ' <<< "$known")]"
	[ "$(wc -l <<< "$names")" -eq 15 ] || err "stats --help lists $(wc -l <<< "$names") reports, expected 15"
	for cmd in cuda_api_sum cuda_launch_sum cuda_mem_size_sum cuda_sync_sum process_sum ioctl_sum \
		   cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum gpu_launch_latency \
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

add_case t_limits "--buffer-size above 2G and census --functions of an unknown name: one line naming the limit or the name"
add_case t_usage "bad command lines (unknown option, bad numbers, conflicting modes, bad formats, unknown reports): one line each, exit 2"
add_case t_help "--help shows every command and the exit statuses; stats --help lists all 15 reports"
add_case t_unknown_pid "-p of a pid that does not exist: one-line error, non-zero exit"
add_case t_unwritable_output "-o where a file cannot be created: one-line error, non-zero exit"
add_case t_no_libcuda "--libcuda of a missing or non-libcuda file: one-line error, command not run"
add_case t_dump_not_a_trace "dump of a text/empty/missing/random file: one-line error, non-zero exit"
add_case t_dump_truncated "dump of a trace cut short: warning, exit 0, fewer records"
run_cases "$@"
