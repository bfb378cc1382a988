#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The output file: never overwritten without --force, default names
# {name}_{scenario}_{YYYYMMDD}_v{N}.gtrace with the next free N, mode 0600;
# -d SECONDS ends a recording by itself.
REQUIRES="root jq mock gtrace"
# --all without a workload: only the file's name and mode checked
SHARED_CASES="t_default_names"
. "$(dirname "$0")/lib.sh"

t_no_overwrite() {
	local rc
	printf 'precious\n' > "$T/exist.gtrace"
	cp "$T/exist.gtrace" "$T/orig"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/exist.gtrace" -- "$WORKLOAD" --launches 4 --syncs 1 \
		> "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -ne 0 ] || err "-o of an existing file without --force: exit status 0, expected non-zero"
	[ "$(wc -l < "$T/err")" -eq 1 ] || err "-o of an existing file: $(wc -l < "$T/err") lines on stderr, expected 1: $(head -n 5 "$T/err" | tr '\n' '|')"
	cmp -s "$T/exist.gtrace" "$T/orig" || err "the existing file was modified without --force"
	grep -q '^{' "$T/out" && err "the command ran although gtrace-bpf refused the output file"

	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --force --libcuda "$MOCK_LIB" -o "$T/exist.gtrace" -- "$WORKLOAD" --launches 4 --syncs 1 \
		> "$T/out2" 2> "$T/err2"
	rc=$?
	[ $rc -eq 0 ] || fatal "-o of an existing file with --force: exit status $rc: $(tail -n 3 "$T/err2" | tr '\n' '|')"
	cmp -s "$T/exist.gtrace" "$T/orig" && err "--force did not replace the file"
	dump_trace "$T/exist.gtrace" "$T/exist.json"
	local pid
	pid=$(grep '^{' "$T/out2" | jq .pid)
	compare_counts "calls recorded with --force" "$(counts_of "$T/exist.json" "$pid")" "$(expected_counts 4 10 1)"
}

# mode_is FILE MODE
mode_is() {
	local m
	m=$(stat -c %a "$1")
	[ "$m" = "$2" ] || err "$(basename "$1") has mode $m, expected $2"
}

t_default_names() {
	local d0 d1 rc i f ino
	mkdir "$T/cwd"
	cd "$T/cwd" || exit 1
	d0=$(today)
	for i in 1 2; do
		GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --scenario itest -- "$WORKLOAD" --launches 4 --syncs 1 \
			> "$T/out$i" 2> "$T/err$i"
		rc=$?
		[ $rc -eq 0 ] || fatal "recording $i without -o: exit status $rc: $(tail -n 3 "$T/err$i" | tr '\n' '|')"
		[ $i -eq 1 ] && ino=$(stat -c %i "$(ls | head -n 1)" 2>/dev/null)
	done
	d1=$(today)
	log "files: $(ls -l | tr '\n' '|')"
	for i in 1 2; do
		f=cuda_workload_itest_${d0}_v$i.gtrace
		[ -e "$f" ] || f=cuda_workload_itest_${d1}_v$i.gtrace
		if [ -e "$f" ]; then
			mode_is "$f" 600
			dump_trace "$f" "$T/v$i.json"
			[ "$(wc -l < "$T/v$i.json")" -gt 0 ] || err "$f holds no records"
		else
			err "no file $f after recording $i; the directory holds: $(ls | tr '\n' ' ')"
		fi
	done
	[ "$(ls | wc -l)" -eq 2 ] || err "expected exactly 2 files, found: $(ls | tr '\n' ' ')"
	[ -z "$ino" ] || [ "$(stat -c %i "cuda_workload_itest_${d0}_v1.gtrace" 2>/dev/null)" = "$ino" ] ||
		err "the first file was replaced by the second recording"

	# --all: the name is "system"
	mkdir "$T/cwd2"
	cd "$T/cwd2" || exit 1
	d0=$(today)
	timeout 60 "$GTRACE" --all --libcuda "$MOCK_LIB" --scenario itest -d 1 > "$T/out3" 2> "$T/err3"
	rc=$?
	d1=$(today)
	[ $rc -eq 0 ] || fatal "--all -d 1 without -o: exit status $rc: $(tail -n 3 "$T/err3" | tr '\n' '|')"
	f=system_itest_${d0}_v1.gtrace
	[ -e "$f" ] || f=system_itest_${d1}_v1.gtrace
	if [ -e "$f" ]; then
		mode_is "$f" 600
	else
		err "no file system_itest_${d0}_v1.gtrace after --all; the directory holds: $(ls | tr '\n' ' ')"
	fi
}

t_mode_with_o() {
	local rc
	(umask 000 && GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/m.gtrace" -- "$WORKLOAD" --launches 4 --syncs 1 \
		> "$T/out" 2> "$T/err")
	rc=$?
	[ $rc -eq 0 ] || fatal "recording with -o failed with status $rc: $(tail -n 3 "$T/err" | tr '\n' '|')"
	mode_is "$T/m.gtrace" 600
}

t_duration() {
	local start end rc ms pid
	start=$(date +%s%N)
	timeout 60 "$GTRACE" --all --libcuda "$MOCK_LIB" -d 1 -o "$T/d.gtrace" > "$T/out" 2> "$T/err" &
	pid=$!
	PIDS+=("$pid")
	wait_line "$T/err" '^gtrace-bpf: recording' 30 "$pid" || err "no 'gtrace-bpf: recording' line"
	# a workload within the second gets recorded
	start_workload w1 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=1000 -- --launches 4 --syncs 1
	finish_workload w1 "$WPID"
	wait "$pid"
	rc=$?
	end=$(date +%s%N)
	ms=$(( (end - start) / 1000000 ))
	log "-d 1 ran $ms ms, status $rc"
	[ $rc -ne 124 ] || fatal "-d 1 was still running after 60 s"
	[ $rc -eq 0 ] || err "-d 1 exited with status $rc, expected 0: $(tail -n 3 "$T/err" | tr '\n' '|')"
	[ $ms -ge 1000 ] || err "-d 1 stopped after $ms ms, before 1 s"
	[ $ms -lt 20000 ] || err "-d 1 took $ms ms to stop (startup included), expected well under 20 s"
	dump_trace "$T/d.gtrace" "$T/d.json"
	compare_counts "calls of the workload run during -d 1" "$(counts_of "$T/d.json" "$WPID")" "$(expected_counts 4 10 1)"
}

add_case t_no_overwrite "-o of an existing file: refused and untouched without --force, replaced with it"
# Another user planted every default name up to v99999 in a directory both
# can write to (files, then a link and a FIFO): the recording takes the next
# free name at once (the directory read once, not 100,000 names tried), and
# nothing planted is touched.
t_planted_names() {
	local d rc f
	mkdir -m 1777 "$T/shared"
	cd "$T/shared" || exit 1
	d=$(today)
	python3 - "$d" <<'PY' || fatal "cannot plant the names"
import sys
for v in range(1, 100000):
    open("cuda_workload_itest_%s_v%d.gtrace" % (sys.argv[1], v), "w").close()
PY
	chown 65534 "cuda_workload_itest_${d}_v1.gtrace"
	ln -s /etc/passwd "cuda_workload_itest_${d}_v100000.gtrace"
	mkfifo "cuda_workload_itest_${d}_v100001.gtrace"
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" --scenario itest -- "$WORKLOAD" --launches 4 \
		> "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 0 ] || fatal "recording among 99,999 planted names: exit $rc: $(tail -n 3 "$T/err" | tr '\n' '|')"
	f=cuda_workload_itest_${d}_v100002.gtrace
	[ -f "$f" ] && [ ! -L "$f" ] || err "the trace is not the next free name $f: $(grep -o 'wrote [^:]*' "$T/err")"
	[ -f "$f" ] && mode_is "$f" 600
	[ "$(stat -c %U "cuda_workload_itest_${d}_v1.gtrace")" = nobody ] || err "a planted file changed owner"
	[ -L "cuda_workload_itest_${d}_v100000.gtrace" ] && [ -p "cuda_workload_itest_${d}_v100001.gtrace" ] ||
		err "a planted link or FIFO was replaced"
}

add_case t_planted_names "default names: 99,999 planted names (files, a link, a FIFO) take one readdir, the next free name, nothing planted touched"
add_case t_default_names "default names: cuda_workload_itest_DATE_v1 then _v2, system_itest_DATE_v1 for --all, mode 0600"
add_case t_mode_with_o "-o file has mode 0600 whatever the umask"
add_case t_duration "-d 1 stops by itself after about a second, with what happened in it recorded"
run_cases "$@"
