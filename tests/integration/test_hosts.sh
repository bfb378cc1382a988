#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# merge --hosts: the two ranks of a mock NCCL job, each recorded by its own
# recorder as if on its own host, one with its wall clock 5 ms ahead
# (GTRACE_TEST_REALTIME_SHIFT_NS: another boot id, CLOCK_REALTIME shifted),
# and a third host without NCCL 5 ms behind: merged into one job trace, the
# NCCL host's offset recovered within 50 us (its CLOCK_MONOTONIC is in truth
# the same), every collective's ends together, no collective ending before a
# rank entered it, the planted late rank named with its wait, the host
# without NCCL aligned by its wall clock and said so; the records all there,
# their processes numbered by host; stats' host_sum, the exports' process
# names and analyze's findings (rank 0 waited for rank 1) say the hosts.  Bad input: one line, status 1 or 2.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

NCCL_MOCK=$MOCK_DIR/libnccl.so.2
ROUNDS=40

# rank R SHIFT_NS: rank R of the job recorded into $T/hR.gtrace, its clock
# shifted; in the background (RPIDS)
rank() {
	env GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=200 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_NCCL_DIR="$T" \
		GTRACE_TEST_REALTIME_SHIFT_NS="$2" RANK="$1" LOCAL_RANK="$1" WORLD_SIZE=2 \
		"$GTRACE" --libcuda "$MOCK_LIB" --libnccl "$NCCL_MOCK" -o "$T/h$1.gtrace" -- \
		"$WORKLOAD" --launches 4 --syncs 1 --nccl "$ROUNDS" --nccl-id "$T/job.id" --nccl-late 1:2 \
		> "$T/h$1.out" 2> "$T/h$1.err" &
	RPIDS+=($!)
}

# two_ranks SHIFT: rank 1's wall clock SHIFT ns off, the host without NCCL -SHIFT
two_ranks() {
	local p off said shift=$1
	RPIDS=()
	[ -f "$NCCL_MOCK" ] || fatal "the mock libnccl is not built ($NCCL_MOCK): make mock"
	rank 0 0
	rank 1 "$shift"
	for p in "${RPIDS[@]}"; do
		wait "$p" || fatal "a rank's recording exited $?: $(tail -n 2 "$T"/h*.err | tr '\n' '|')"
	done
	GTRACE_TEST_REALTIME_SHIFT_NS=$((-shift)) "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/h2.gtrace" -- \
		env GT_LIBCUDA="$MOCK_LIB" "$WORKLOAD" --launches 10 > /dev/null 2> "$T/h2.err" ||
		fatal "the third host's recording failed: $(tail -n 2 "$T/h2.err")"
	# the collectives the ranks meet at: those outside groups (a group meets at its end)
	COLLS=$("$GTRACE" dump "$T/h0.gtrace" | jq -s '[.[] | select(.type == "nccl" and .kind == "collective" and .group != true)] | length')
	[ "$COLLS" -ge "$ROUNDS" ] || fatal "rank 0 made $COLLS collectives outside groups in $ROUNDS rounds"
	"$GTRACE" merge --hosts "$T/h0.gtrace" "$T/h1.gtrace" "$T/h2.gtrace" -o "$T/job.gtrace" \
		> "$T/m.out" 2> "$T/m.err" || fatal "merge --hosts exited $?: $(cat "$T/m.err")"
	log "$(cat "$T/m.err")"
	dump_trace "$T/job.gtrace" "$T/job.json"
	jq -s -e '[.[] | select(.type == "host")] | length == 3' "$T/job.json" > /dev/null ||
		err "not three host records: $(jq -s -c '[.[] | select(.type == "host")]' "$T/job.json")"
	# the NCCL host: its wall clock said +5 ms, the collectives took it back
	off=$(jq -s '.[] | select(.type == "host" and .host == 1) | .offset_ns' "$T/job.json")
	jq -s -e '.[] | select(.type == "host" and .host == 1) |
		.method == "collectives" and .collectives == '"$COLLS"' and
		(.realtime_offset_ns - '"$shift"' | fabs) < 10000 and (.offset_ns | fabs) < 50000' "$T/job.json" > /dev/null ||
		err "host 1: $(jq -s -c '.[] | select(.type == "host" and .host == 1)' "$T/job.json")"
	log "host 1's offset after the alignment: $off ns (its wall clock said $shift)"
	jq -s -e '.[] | select(.type == "host" and .host == 2) | .method == "realtime" and
		(.offset_ns + '"$shift"' | fabs) < 10000' "$T/job.json" > /dev/null ||
		err "host 2: $(jq -s -c '.[] | select(.type == "host" and .host == 2)' "$T/job.json")"
	# the offset said in ms, as near the planted shift as the record's (10 us)
	said=$(sed -n 's/.*host 2 (.*): offset \([-+]\?[0-9.]*\) ms by its CLOCK_REALTIME pairs only (no NCCL collective shared.*/\1/p' "$T/m.err")
	[ -n "$said" ] && awk -v s="$said" -v w="$shift" 'BEGIN { d = s * 1e6 + w; exit !(d < 10000 && d > -10000) }' ||
		err "host 2 not said to be aligned by its wall clock, by -$shift ns: $(grep 'host 2' "$T/m.err")"
	grep -Eq "^gtrace-bpf: $COLLS collectives seen on two hosts or more: [1-9][0-9]* ended somewhere before a rank entered them by the wall clocks alone, 0 after the alignment$" "$T/m.err" ||
		err "causality: $(grep collectives "$T/m.err")"
	# rank 1 sleeps 2 ms before each round's first collective: last to those
	# at least; what the others waited for it is what the merged records say
	# (the last entry of each collective less the first, summed where rank 1
	# came last: a loaded machine can hold rank 0 back too, so the planted
	# 2 ms a round is not a bound)
	grep -Eq "^gtrace-bpf: straggler: rank 1 \(pid [0-9]+\) on host 1 \(.*\) came last to [0-9]+ of $COLLS collectives; the first rank waited for it [0-9.]+ ms in all" "$T/m.err" ||
		err "the late rank not named: $(grep straggler "$T/m.err")"
	local last waited
	last=$(sed -n 's/.* came last to \([0-9]*\) of .*/\1/p' "$T/m.err")
	waited=$(sed -n 's/.* waited for it \([0-9.]*\) ms in all.*/\1/p' "$T/m.err")
	local rec
	rec=$(jq -s -c '[.[] | select(.type == "nccl" and .kind == "collective" and .group != true)]
		| group_by([.uid, .seq]) | map(select(length == 2) | max_by(.ts) as $l
			| {last: $l.rank, skew: ($l.ts - (min_by(.ts) | .ts))})
		| {n: length, last: (map(select(.last == 1)) | length),
		   waited: (map(select(.last == 1) | .skew) | add / 1e6)}' "$T/job.json")
	[ "$last" -ge "$ROUNDS" ] ||
		err "the late rank came last to $last collectives, at least the $ROUNDS it was planted late to"
	jq -e --argjson l "$last" --argjson w "$waited" --argjson c "$COLLS" \
		'.n == $c and .last == $l and (.waited - $w | fabs) <= 0.0005' <<< "$rec" > /dev/null ||
		err "the straggler line (last to $last, the others waited $waited ms) against the merged records: $rec"
	# every record of the three, the processes of host 1 and 2 numbered by host
	local n0 n1 n2 nj
	n0=$("$GTRACE" dump "$T/h0.gtrace" | jq -s '[.[] | select(.type != "clock")] | length')
	n1=$("$GTRACE" dump "$T/h1.gtrace" | jq -s '[.[] | select(.type != "clock")] | length')
	n2=$("$GTRACE" dump "$T/h2.gtrace" | jq -s '[.[] | select(.type != "clock")] | length')
	nj=$(jq -s '[.[] | select(.type != "host")] | length' "$T/job.json")
	[ "$nj" -eq $((n0 + n1 + n2)) ] || err "the job trace holds $nj records, the hosts' $n0 + $n1 + $n2"
	jq -s -e '[.[] | select(.type == "nccl") | .pid / 4194304 | floor] | unique == [0, 1]' "$T/job.json" > /dev/null ||
		err "the NCCL calls' processes are not numbered by host: $(jq -s -c '[.[] | select(.type == "nccl") | .pid] | unique' "$T/job.json")"
	jq -s -e '[.[] | select(.type == "launch") | .pid / 4194304 | floor] | unique == [0, 1, 2]' "$T/job.json" > /dev/null ||
		err "the launches' processes are not numbered by host"
	# stats per host and rank; the exports name each process' host
	"$GTRACE" stats -r host_sum --format json "$T/job.gtrace" > "$T/hs.json" 2> "$T/hs.err" ||
		fatal "stats -r host_sum failed: $(cat "$T/hs.err")"
	jq -e --argjson c "$COLLS" '.reports[0].rows | length == 3 and
		(.[0].aligned_by == "reference" and .[0].ranks == "0" and .[0].nccl_calls > 0) and
		(.[1].aligned_by == "collectives" and .[1].collectives == $c and .[1].ranks == "1" and .[1].nccl_calls > 0) and
		(.[2].aligned_by == "realtime" and .[2].ranks == "-" and .[2].launches == 10)' "$T/hs.json" > /dev/null ||
		err "host_sum: $(jq -c '.reports[0].rows' "$T/hs.json")"
	"$GTRACE" export -f json "$T/job.gtrace" -o "$T/job.trace.json" > /dev/null 2>&1 || fatal "export -f json failed"
	jq -e '[.traceEvents[] | select(.ph == "M" and .name == "process_name") | .args.name |
		capture("@ host (?<h>[0-9]+) ") | .h] | unique == ["0", "1", "2"]' "$T/job.trace.json" > /dev/null ||
		err "the JSON export's process names do not say their hosts"
	# Perfetto: each host a machine (TracePacket.machine_id: host 0 the
	# trace's own, no id), every process on its host's, the lint's rules
	# for machines kept (a track's events from its machine, a thread's
	# machine its process', a clock snapshot per machine)
	"$GTRACE" export "$T/job.gtrace" -o "$T/job.pftrace" > /dev/null 2>&1 || fatal "export -f perfetto failed"
	python3 "$ROOT/tools/perfetto_lint.py" --json "$T/job.pftrace" > "$T/job.lint" 2> "$T/lint.err" ||
		err "the lint rejects the job's Perfetto export: $(cat "$T/lint.err")"
	jq -e '.machines == [0, 1, 2] and (.processes | length > 0) and
		all(.processes[]; .machine == ((.pid / 4194304) | floor)) and .clock_snapshots == 3' "$T/job.lint" > /dev/null ||
		err "the Perfetto export's machines: $(jq -c '{machines, clock_snapshots, p: [.processes[] | {pid, machine}]}' "$T/job.lint")"
	# analyze across the hosts: rank 0 waited for rank 1, named with its host
	"$GTRACE" analyze "$T/job.gtrace" > "$T/az.out" 2> "$T/az.err" || fatal "analyze failed: $(tail -n 2 "$T/az.err")"
	grep -Eq "nccl_wait: waited [0-9.]+ ms for later ranks .* for rank 1 \(pid [0-9]+ on host 1\)" "$T/az.out" ||
		err "analyze does not say rank 0 waited for rank 1 on host 1: $(grep -E 'nccl_|== Process' "$T/az.out" | tr '\n' '|')"
	grep -Eq "^== Process [0-9]+ on host 1, whole run" "$T/az.out" || err "analyze's process of host 1 not named so"
}

# diff of two job traces: the rank compared is said (the busiest by
# default), --rank R compares rank R of each, named with its host; a rank
# no trace holds, and --rank with -p: one line, status 2
t_diff() {
	local rc
	two_ranks 5000000
	mv "$T/job.gtrace" "$T/ja.gtrace"
	rm -f "$T"/job.* "$T"/h*.gtrace
	two_ranks -5000000
	"$GTRACE" diff "$T/ja.gtrace" "$T/job.gtrace" > "$T/d.out" 2> "$T/d.err" || fatal "diff failed: $(cat "$T/d.err")"
	[ "$(grep -c "holds 2 ranks: rank [01] (pid [0-9]*\( on host 1\)\?) compared, the busiest; --rank R picks another" "$T/d.err")" -eq 2 ] ||
		err "the rank compared not said once per trace: $(tr '\n' '|' < "$T/d.err")"
	"$GTRACE" diff "$T/ja.gtrace" "$T/job.gtrace" --rank 1 > "$T/d1.out" 2> "$T/d1.err" || fatal "diff --rank 1 failed: $(cat "$T/d1.err")"
	[ "$(grep -Ec "^(Baseline|Optimized): .*\(pid [0-9]+ on host 1: .*--nccl" "$T/d1.out")" -eq 2 ] ||
		err "--rank 1: not host 1's rank on both sides: $(head -n 2 "$T/d1.out" | tr '\n' '|')"
	grep -q "holds 2 ranks" "$T/d1.err" && err "--rank 1: the default's choice said anyway"
	"$GTRACE" diff "$T/ja.gtrace" "$T/job.gtrace" --rank 7 > /dev/null 2> "$T/d7.err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(grep -c . "$T/d7.err")" -eq 1 ] && grep -q -- "--rank 7: no process of that rank made CUDA calls in" "$T/d7.err" ||
		err "--rank 7: status $rc, $(tr '\n' '|' < "$T/d7.err")"
	"$GTRACE" diff "$T/ja.gtrace" "$T/job.gtrace" --rank 1 -p 5 > /dev/null 2> "$T/dp.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "-p and --rank both say which process" "$T/dp.err" || err "--rank with -p: status $rc, $(head -n 1 "$T/dp.err")"
}

t_ahead() { two_ranks 5000000; }
t_behind() { two_ranks -5000000; }

# one trace, a job trace again, a file that is not a trace: one line each
t_bad() {
	"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/a.gtrace" -- env GT_LIBCUDA="$MOCK_LIB" "$WORKLOAD" --launches 2 \
		> /dev/null 2>&1 || fatal "recording failed"
	"$GTRACE" merge --hosts "$T/a.gtrace" -o "$T/j.gtrace" > /dev/null 2> "$T/e1"
	[ $? -eq 2 ] && [ "$(wc -l < "$T/e1")" -le 2 ] && grep -q 'two traces or more' "$T/e1" || err "one trace: $(cat "$T/e1")"
	"$GTRACE" merge --hosts "$T/a.gtrace" "$T/a.gtrace" -o "$T/j.gtrace" > /dev/null 2> "$T/e2" ||
		fatal "merge of a trace with itself failed: $(cat "$T/e2")"
	"$GTRACE" merge --hosts "$T/j.gtrace" "$T/a.gtrace" -o "$T/k.gtrace" > /dev/null 2> "$T/e3"
	[ $? -eq 1 ] && [ "$(wc -l < "$T/e3")" -eq 1 ] && grep -q 'is a job trace already' "$T/e3" || err "job trace in: $(cat "$T/e3")"
	echo "not a trace" > "$T/x.gtrace"
	"$GTRACE" merge --hosts "$T/a.gtrace" "$T/x.gtrace" -o "$T/k.gtrace" > /dev/null 2> "$T/e4"
	[ $? -eq 1 ] && [ "$(wc -l < "$T/e4")" -eq 1 ] && [ ! -e "$T/k.gtrace" ] || err "not a trace: $(cat "$T/e4")"
	"$GTRACE" merge --hosts "$T/a.gtrace" "$T/a.gtrace" -o "$T/j.gtrace" > /dev/null 2> "$T/e5"
	[ $? -eq 1 ] && grep -q 'exists: use --force' "$T/e5" || err "existing output: $(cat "$T/e5")"
}

add_case t_ahead "merge --hosts: two ranks recorded apart, one wall clock 5 ms ahead, a host without NCCL 5 ms behind: offsets recovered within 50 us, no collective ending before an entry, the late rank named, every record there numbered by host"
add_case t_behind "merge --hosts: the same, the rank's wall clock 5 ms behind, the host without NCCL 5 ms ahead"
add_case t_diff "diff of two job traces: the rank compared said, --rank R compares rank R of each with its host; an absent rank and --rank with -p refused"
add_case t_bad "merge --hosts: one trace, a job trace, not a trace, an existing output: one line, status 2 or 1"
run_cases "$@"
