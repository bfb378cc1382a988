#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NCCL jobs on the mock libnccl: two processes of the workload, ranks 0
# and 1 of one communicator (RANK, LOCAL_RANK, WORLD_SIZE as torchrun sets
# them), recorded together: every collective, point-to-point and group call
# of each rank with its fields (count, datatype, op, root or peer,
# communicator, stream, device), the communicator's uid the same in both,
# collectives numbered alike, the ranks from the environment in dump, the
# process names and the exports, a track per communicator with a lane per
# rank, nccl_sum, and the launches the library made inside its calls.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

NCCL_MOCK=$MOCK_DIR/libnccl.so.2
LINT=$ROOT/tools/perfetto_lint.py
ROUNDS=4
N=$N_ELEMS

# job NAME LATE ARGS...: the two ranks under one recording into
# $T/NAME.gtrace, dumped into $T/NAME.dump; rank R's JSON line in $T/NAME.rR.
# LATE: --nccl-late's value, "" none.  The mock libnccl is probed from the
# start (--libnccl: the workload calls it right after loading it), unless
# DISCOVER is set: then found when the ranks open it.
job() {
	local name=$1 late=$2 rc lib=(--libnccl "$NCCL_MOCK")
	shift 2
	[ -n "${DISCOVER:-}" ] && lib=()
	[ -f "$NCCL_MOCK" ] || fatal "the mock libnccl is not built ($NCCL_MOCK): make mock"
	# --gpu-idle 300: each rank lives 300 ms more than its 40 ms of calls; the
	# recorder reads a rank's name and environment (its rank) from /proc when
	# it takes the exec, and a 40 ms rank had sometimes exited by then on the
	# loaded VM (no rank record, no rank in its Perfetto name)
	local wl="$WORKLOAD --launches 8 --copies 2 --syncs 1 --gpu-idle 300 --nccl $ROUNDS --nccl-id $T/$name.id ${late:+--nccl-late $late} $*"
	env GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=200 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_NCCL_DIR="$T" \
		"$GTRACE" --libcuda "$MOCK_LIB" "${lib[@]}" -o "$T/$name.gtrace" --force -- sh -c "
		RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 $wl > $T/$name.o0 2> $T/$name.e0 &
		RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 $wl > $T/$name.o1 2> $T/$name.e1; r=\$?
		wait \$! && exit \$r" > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "the job exited $rc: $(tail -n 2 "$T/$name.err" | tr '\n' '|') $(tail -n 2 "$T/$name.e0" "$T/$name.e1" 2> /dev/null | tr '\n' '|')"
	for r in 0 1; do
		grep '^{' "$T/$name.o$r" | tail -n 1 > "$T/$name.r$r"
		[ -s "$T/$name.r$r" ] || fatal "rank $r printed no JSON line"
	done
	dump_trace "$T/$name.gtrace" "$T/$name.dump"
	ls "$T"/gt-mock-nccl-* > /dev/null 2>&1 && err "the mock left its rendezvous file: $(ls "$T"/gt-mock-nccl-*)"
	return 0
}

# NCCL calls of a dump per (pid, api)
nccl_counts() { # DUMP PID
	jq -s -c --argjson pid "$2" "$JQ_DEFS"'[.[] | select(.pid == $pid and .type == "nccl") | .api] | tally' "$1"
}

t_collectives() {
	local r pid wj dev comm stream want d uids
	job a ""
	for r in 0 1; do
		wj=$(cat "$T/a.r$r")
		pid=$(jq .pid <<< "$wj")
		dev=$(jq .nccl.device <<< "$wj")
		comm=$(jq .nccl.comm <<< "$wj")
		stream=$(jq '.handles.streams[0]' <<< "$wj")
		jq -e --argjson r "$r" '.nccl.rank == $r and .nccl.world == 2 and .nccl.device == $r' <<< "$wj" > /dev/null ||
			err "rank $r's workload: $(jq -c .nccl <<< "$wj")"
		# every call it made, but ncclGetUniqueId (not probed)
		compare_counts "rank $r's NCCL calls" "$(nccl_counts "$T/a.dump" "$pid")" \
			"$(jq -c '.nccl.calls | del(.ncclGetUniqueId)' <<< "$wj")"
		want=$(jq -n -c --argjson n "$N" --argjson k "$ROUNDS" --argjson r "$r" \
			--argjson c "$comm" --argjson s "$stream" --argjson d "$dev" '
			{ "ncclAllReduce collective float32 sum count=\($n) bytes=\($n * 4) peer=- group=false comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclAllGather collective float32 - count=\($n / 2) bytes=\($n * 2) peer=- group=true comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclReduceScatter collective float32 sum count=\($n / 2) bytes=\($n * 2) peer=- group=true comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclBroadcast collective bfloat16 - count=\($n / 4) bytes=\($n / 2) peer=0 group=false comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclReduce collective float32 max count=\($n / 4) bytes=\($n) peer=0 group=false comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclSend p2p float32 - count=\($n / 8) bytes=\($n / 2) peer=\(1 - $r) group=true comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k,
			  "ncclRecv p2p float32 - count=\($n / 8) bytes=\($n / 2) peer=\(1 - $r) group=true comm=\($c) stream=\($s) device=\($d) rank=\($r)/2": $k }')
		sig_check "rank $r's data calls" "$T/a.dump" "$pid" '.type == "nccl" and (.kind == "collective" or .kind == "p2p")' \
			'"\(.api) \(.kind) \(.datatype) \(.op // "-") count=\(.count) bytes=\(.bytes) peer=\(.peer // "-") group=\(.group // false) comm=\(.communicator) stream=\(.stream) device=\(.device) rank=\(.rank)/\(.nranks)"' \
			"$want"
		# collectives numbered 1.. per communicator, in order, none failed
		d=$(jq -s -r --argjson pid "$pid" --argjson k "$ROUNDS" '
			[.[] | select(.pid == $pid and .type == "nccl" and .kind == "collective")] | sort_by(.ts) as $c
			| [ (if ([$c[] | .seq] != [range(1; 5 * $k + 1)]) then "seq \([$c[] | .seq] | tojson), expected 1..\(5 * $k)" else empty end),
			    ($c[] | select(.failed or .incomplete) | "\(.api) at \(.ts) failed or incomplete") ] | join("\n")' "$T/a.dump")
		[ -z "$d" ] || err "rank $r's collectives: $d"
		sig_check "rank $r's init and destroy" "$T/a.dump" "$pid" '.type == "nccl" and (.kind == "init" or .kind == "free")' \
			'"\(.api) \(.kind) rank=\(.rank) nranks=\(.nranks) comm=\(.communicator)"' \
			"{\"ncclCommInitRank init rank=$r nranks=2 comm=$comm\": 1, \"ncclCommDestroy free rank=$r nranks=2 comm=$comm\": 1}"
		# the rank from the environment, once
		d=$(jq -s -c --argjson pid "$pid" '[.[] | select(.pid == $pid and .type == "rank") | [.rank, .local_rank, .world_size]]' "$T/a.dump")
		[ "$d" = "[[$r,$r,2]]" ] || err "rank $r's rank records: $d, expected [[$r,$r,2]]"
		# the library's own launches, inside its calls: 5 a round, beside the workload's
		d=$(jq -s -r --argjson pid "$pid" --argjson k "$ROUNDS" --argjson w "$wj" '
			($w.launches | add) as $own
			| [.[] | select(.pid == $pid and .type == "launch")] as $all
			| [$all[] | select(.kernel | startswith("ncclDevKernel_"))] as $nc
			| [ (if ($all | length) != $own + 5 * $k then "\($all | length) launches, expected the workload'"'"'s \($own) and the library'"'"'s \(5 * $k)" else empty end),
			    (if ($nc | length) != 5 * $k then "\($nc | length) launches of NCCL kernels, expected \(5 * $k)" else empty end) ] | join("; ")' "$T/a.dump")
		[ -z "$d" ] || err "rank $r: $d"
		# each of those made inside its NCCL call (nccl_ts: that call's entry): a collective, or a group's end
		want=$(jq -n -c --argjson k "$ROUNDS" '{
			"ncclDevKernel_AllReduce_Sum_f32_RING_LL in ncclAllReduce": $k,
			"ncclDevKernel_AllGather_RING_LL in ncclGroupEnd": $k,
			"ncclDevKernel_Broadcast_RING_LL in ncclBroadcast": $k,
			"ncclDevKernel_Reduce_Sum_f32_RING_LL in ncclReduce": $k,
			"ncclDevKernel_SendRecv in ncclGroupEnd": $k }')
		d=$(jq -s -r --argjson pid "$pid" --argjson want "$want" "$JQ_DEFS"'
			[.[] | select(.pid == $pid)] as $p
			| [$p[] | select(.type == "nccl") | {key: "\(.tid) \(.ts)", value: .api}] | from_entries as $at
			| [$p[] | select(.type == "launch" and (.kernel | startswith("ncclDevKernel_")))
			    | "\(.kernel) in \($at["\(.tid) \(.nccl_ts)"] // "no NCCL call")"] | tally as $got
			| diffmaps($got; $want)' "$T/a.dump") || fatal "jq failed on $T/a.dump (NCCL kernels)"
		[ -z "$d" ] || err "rank $r's NCCL kernels and the calls they were launched in differ:
$d"
		d=$(jq -s -r --argjson pid "$pid" '[.[] | select(.pid == $pid and .type == "launch" and
			(.kernel | startswith("ncclDevKernel_") | not) and .nccl_ts != null)] | length' "$T/a.dump")
		[ "$d" = 0 ] || err "rank $r: $d of the workload's own launches say they were made inside an NCCL call"
	done
	# one communicator: the same uid in both ranks, and nothing unknown
	uids=$(jq -s -c '[.[] | select(.type == "nccl" and .kind == "collective") | .uid] | unique | length' "$T/a.dump")
	[ "$uids" = 1 ] || err "the ranks' collectives have $uids uids, expected 1"
	"$GTRACE" dump --summary "$T/a.gtrace" > "$T/sum" 2>&1 || fatal "dump --summary failed"
	grep -Eq "^  ncclAllReduce +$((2 * ROUNDS)) +0 +0 " "$T/sum" || err "dump --summary: no ncclAllReduce row with $((2 * ROUNDS)) calls: $(grep -A12 '^nccl' "$T/sum" | tr '\n' '|')"
	grep -Eq '^  nccl_comm_unknown +0$' "$T/sum" || err "dump --summary: nccl_comm_unknown is not 0"
	"$GTRACE" stats "$T/a.gtrace" -r nccl_sum --format json > "$T/ns.json" 2> "$T/stats.err" || fatal "stats -r nccl_sum failed: $(cat "$T/stats.err")"
	d=$(jq -c --argjson n "$N" --argjson k "$ROUNDS" '[.reports[0].rows[] | select(.name == "ncclAllReduce") | {rank, num_calls, bytes}] | sort_by(.rank)' "$T/ns.json")
	[ "$d" = "[{\"rank\":\"0/2\",\"num_calls\":$ROUNDS,\"bytes\":$((ROUNDS * N * 4))},{\"rank\":\"1/2\",\"num_calls\":$ROUNDS,\"bytes\":$((ROUNDS * N * 4))}]" ] ||
		err "nccl_sum's ncclAllReduce rows: $d"
	# the stacks full mode takes by default: every NCCL call of both ranks
	# carries one, whose frames name the workload's nccl_phase (frame
	# pointers); the collectives of a round, from known call sites, are a
	# lookup (the same stack each round)
	d=$(jq -s -r '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $st
		| [.[] | select(.type == "nccl")] as $n
		| "\($n | length) \([$n[] | select(.stack != null and ($st[.stack | tostring] // [] | any(test("^nccl_phase\\+0x[0-9a-f]+ \\(cuda_workload\\)$"))))] | length)"' "$T/a.dump")
	[ "${d% *}" -gt 0 ] && [ "${d% *}" = "${d#* }" ] || err "NCCL calls with a stack naming nccl_phase (calls, with): $d"
	d=$(jq -s -r '[.[] | select(.type == "nccl" and .api == "ncclAllReduce") | .stack] | unique | length' "$T/a.dump")
	[ "$d" -ge 1 ] && [ "$d" -le 2 ] || err "ncclAllReduce's stacks: $d distinct, expected one call site (per rank at most)"
}

t_exports() {
	local p0 p1 d
	command -v python3 > /dev/null || fatal "needs python3"
	job x ""
	p0=$(jq .pid "$T/x.r0")
	p1=$(jq .pid "$T/x.r1")
	"$GTRACE" export "$T/x.gtrace" -f json -o "$T/x.json" 2> "$T/x.jerr" || fatal "export -f json failed: $(cat "$T/x.jerr")"
	d=$(jq -r --argjson p0 "$p0" --argjson p1 "$p1" --argjson k "$ROUNDS" '
		.traceEvents as $e
		| ([$e[] | select(.ph == "M" and .name == "process_name" and .pid == $p0) | .args.name] | last) as $n0
		| ([$e[] | select(.ph == "M" and .name == "process_name" and .pid == $p1) | .args.name] | last) as $n1
		| ([$e[] | select(.ph == "M" and .name == "process_name" and (.args.name | startswith("NCCL communicator")))]) as $comms
		| ($comms[0].pid) as $cp
		| [ (if ($n0 | endswith("[rank 0/2]")) | not then "rank 0 process name: \($n0)" else empty end),
		    (if ($n1 | endswith("[rank 1/2]")) | not then "rank 1 process name: \($n1)" else empty end),
		    (if ($comms | length) != 1 or $comms[0].args.name != "NCCL communicator 1 (2 ranks)" then "communicator processes: \([$comms[] | .args.name])" else empty end),
		    (if ([$e[] | select(.pid == $cp and .ph == "M" and .name == "thread_name") | .args.name] | sort)
		        != ["rank 0 (pid \($p0))", "rank 1 (pid \($p1))"]
		     then "communicator lanes: \([$e[] | select(.pid == $cp and .ph == "M" and .name == "thread_name") | .args.name])" else empty end),
		    (if ([$e[] | select(.pid == $cp and .cat == "nccl" and (.name | startswith("AllReduce")))] | length) != 2 * $k
		     then "AllReduce events on the communicator: \([$e[] | select(.pid == $cp and .cat == "nccl" and (.name | startswith("AllReduce")))] | length), expected \(2 * $k)" else empty end),
		    (if ([$e[] | select(.pid == $p0 and .cat == "nccl" and .name == "AllReduce float32 4 MiB")] | length) != $k
		     then "rank 0 thread AllReduce events: expected \($k)" else empty end)
		  ] | join("\n")' "$T/x.json")
	[ -z "$d" ] || err "JSON export: $d"
	"$GTRACE" export "$T/x.gtrace" -f perfetto -o "$T/x.pftrace" 2> "$T/x.perr" || fatal "export -f perfetto failed: $(cat "$T/x.perr")"
	python3 "$LINT" --json "$T/x.pftrace" > "$T/x.lint" 2> "$T/lint.err" || fatal "perfetto_lint rejects it: $(head -n 3 "$T/lint.err" | tr '\n' '|')"
	# in Python: the uuids are 64-bit, beyond jq's doubles
	# per rank: whether its rank record comes before its first off-CPU or
	# ioctl record in the file, and the names the JSON gives it
	known=$(jq -s -c --argjson p0 "$p0" --argjson p1 "$p1" --slurpfile j "$T/x.json" '
		to_entries as $r
		| [$p0, $p1] | map(. as $p
		  | ([$r[] | select(.value.pid == $p and .value.type == "rank") | .key] | first) as $rk
		  | ([$r[] | select(.value.pid == $p and (.value.type == "offcpu" or .value.type == "ioctl")) | .key] | first) as $tk
		  | {key: ($p | tostring), value: {rank_first: ($rk != null and ($tk == null or $rk < $tk)),
		     names: [$j[0].traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name]}})
		| from_entries' "$T/x.dump")
	d=$(python3 - "$T/x.lint" "$p0" "$p1" "$ROUNDS" "$known" << 'EOF'
import json, sys
lint = json.load(open(sys.argv[1]))
p0, p1, k = map(int, sys.argv[2:5])
out = []
c = [t for t in lint["other"] if t["name"] == "NCCL communicator 1 (2 ranks)"]
if len(c) != 1 or c[0]["parent"] is not None:
    out.append("no root track NCCL communicator 1 (2 ranks): %s" % [t["name"] for t in lint["other"]])
else:
    ranks = sorted(t["name"] for t in lint["other"] if t["parent"] == c[0]["uuid"])
    if ranks != ["rank 0 (pid %d)" % p0, "rank 1 (pid %d)" % p1]:
        out.append("rank tracks: %s" % ranks)
# A process is described once, with the name known when its first track is
# needed (FORMAT.md): with the rank when its rank record came before its first
# track (in the dump's order, the file's), else one of the names it had
known = json.loads(sys.argv[5])
for r, pid in ((0, p0), (1, p1)):
    names = [p["name"] for p in lint["processes"] if p["pid"] == pid]
    k = known[str(pid)]
    if not names:
        out.append("rank %d: no process track" % r)
    elif k["rank_first"] and not (names[0] or "").endswith("[rank %d/2]" % r):
        out.append("rank %d process track (its rank known before its first track): %s" % (r, names))
    elif names[0] not in k["names"]:
        out.append("rank %d process track: %s, none of the names the JSON gives it: %s" % (r, names, k["names"]))
n = lint.get("slice_names", {}).get("AllReduce float32 4 MiB", 0)
if n != 4 * k:
    out.append("AllReduce slices %d, expected %d (thread and communicator tracks of both ranks)" % (n, 4 * k))
print("\n".join(out))
EOF
)
	[ -z "$d" ] || err "Perfetto export: $d"
	"$GTRACE" export "$T/x.gtrace" -f csv -o "$T/x.csv" 2> "$T/x.cerr" || fatal "export -f csv failed: $(cat "$T/x.cerr")"
	python3 - "$T/x.csv" "$ROUNDS" << 'EOF' || err "CSV: the NCCL rows do not have their fields"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["type"] == "nccl" and r["api"] == "ncclReduce"]
ok = len(rows) == 2 * int(sys.argv[2]) and all(r["op"] == "max" and r["peer"] == "0" and r["datatype"] == "float32" and r["nranks"] == "2" for r in rows)
sys.exit(0 if ok else 1)
EOF
}

# A late rank: the others wait for it in every collective (the mock waits
# on the host), which the calls' durations show. Who arrives first in a
# round is the machine's doing (a rank stalled 40 ms arrives late too); what
# the trace must show whatever the timing: in every round the first to
# arrive stays in its AllReduce until the other arrives, the late rank
# comes 40 ms or more after its previous call (its sleep cannot end early),
# and the late rank waits less than the other over the rounds.
t_late_rank() {
	local d
	job l "1:40"
	d=$(jq -s -r --argjson p0 "$(jq .pid "$T/l.r0")" --argjson p1 "$(jq .pid "$T/l.r1")" --argjson k "$ROUNDS" '
		[.[] | select(.type == "nccl")] as $n
		| [$n[] | select(.api == "ncclAllReduce")] as $a
		| ([$a[] | select(.pid == $p0)] | sort_by(.ts)) as $r0 | ([$a[] | select(.pid == $p1)] | sort_by(.ts)) as $r1
		| ([$n[] | select(.pid == $p1)] | sort_by(.ts)) as $n1
		| if ($r0 | length) != $k or ($r1 | length) != $k then "AllReduce calls: \($r0 | length) and \($r1 | length), expected \($k) each"
		  else [ range($k) as $i | ([$r0[$i], $r1[$i]] | sort_by(.ts)) as $p
			 | (if $p[0].ts + $p[0].dur < $p[1].ts then "round \($i): the rank first in (pid \($p[0].pid)) left its AllReduce \($p[1].ts - $p[0].ts - $p[0].dur) ns before the other came" else empty end),
			   ([$n1[] | select(.ts + .dur <= $r1[$i].ts) | .ts + .dur] | max) as $e
			 | (if $e == null or $r1[$i].ts - $e < 40000000 then "round \($i): the late rank came \(if $e == null then "with no call before" else "\(($r1[$i].ts - $e) / 1e6) ms after its previous call" end), not 40 ms or more" else empty end) ]
			 + (([$r0[].dur] | add) as $w0 | ([$r1[].dur] | add) as $w1
			    | if $w1 >= $w0 then ["the late rank waited \($w1) ns in its AllReduce calls, the other \($w0) ns"] else [] end)
		  | join("\n") end' "$T/l.dump")
	[ -z "$d" ] || err "$d"
}

# Found by the openat discovery: the ranks load the library and call it
# half a second later (as PyTorch loads it at import): every call recorded.
t_discovery() {
	local r wj pid
	DISCOVER=1 job o "" --nccl-open-ms 500
	for r in 0 1; do
		wj=$(cat "$T/o.r$r")
		pid=$(jq .pid <<< "$wj")
		compare_counts "rank $r's NCCL calls (the library found when opened)" "$(nccl_counts "$T/o.dump" "$pid")" \
			"$(jq -c '.nccl.calls | del(.ncclGetUniqueId)' <<< "$wj")"
	done
}

# A rank that is gone before the recorder reads /proc: the recorder stopped
# (SIGSTOP) while the process execs with a rank in its environment, runs and
# exits; its rank is the one BPF read at the exec (/proc has nothing left of
# it when the recorder goes on). Without a pid filter (--all) BPF reads no
# environment: the rank comes from /proc or is missing, said in FORMAT.md.
t_short_rank() {
	local pid
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/s.gtrace" --force -- sh -c '
		kill -STOP $PPID
		RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 "$1" --launches 2 --copies 0 --syncs 0 > "$2"
		kill -CONT $PPID' sh "$WORKLOAD" "$T/s.out" > /dev/null 2> "$T/s.err" ||
		fatal "the recording: $(tail -n 3 "$T/s.err" | tr '\n' '|')"
	pid=$(grep '^{' "$T/s.out" | tail -n 1 | jq .pid)
	[ -n "$pid" ] || fatal "the workload printed no JSON line"
	dump_trace "$T/s.gtrace" "$T/s.dump"
	# gone before the recorder read it: its stacks' frames in no file
	grep -Eq 'stacks: .*, [1-9][0-9]* frames in no file' "$T/s.err" ||
		err "the workload was not gone when the recorder read its mappings: $(grep 'stacks:' "$T/s.err")"
	[ "$(jq -s -c --argjson p "$pid" '[.[] | select(.type == "rank" and .pid == $p) | [.rank, .local_rank, .world_size, .local_world]]' "$T/s.dump")" = "[[3,1,4,2]]" ] ||
		err "the rank of a process gone before /proc was read: $(jq -c --argjson p "$pid" 'select(.type == "rank")' "$T/s.dump" | tr '\n' ' ')"
	"$GTRACE" export "$T/s.gtrace" -f json -o "$T/s.json" 2> /dev/null || fatal "export -f json failed"
	jq -e --argjson p "$pid" '[.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name] | last | endswith("[rank 3/4]")' "$T/s.json" > /dev/null ||
		err "the JSON's process name lacks the rank: $(jq -c --argjson p "$pid" '[.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name]' "$T/s.json")"
}

add_case t_collectives "two ranks: every NCCL call per rank with its fields, one uid, collectives numbered, ranks from the environment, nccl_sum, the library's launches; each call's stack names the workload's function"
add_case t_exports "two ranks: process names with their rank, a communicator track with a lane per rank in JSON and Perfetto, NCCL rows in CSV"
add_case t_late_rank "a late rank (--nccl-late): the other rank's collectives wait for it, its own do not"
add_case t_discovery "a libnccl opened after the recording began (no --libnccl): found, every call of both ranks"
add_case t_short_rank "a rank gone before the recorder read /proc (the recorder stopped meanwhile): its rank from the environment BPF read at its exec"
run_cases "$@"
