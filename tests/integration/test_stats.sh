#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf stats: the reports of a recorded mock workload agree with what
# the workload did (its own counts) and with dump; the three formats parse;
# --timeunit scales exactly; bad input gives one line and status 2 (command line) or 1 (file), a cut
# file one warning and the reports of what was read.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

N=100 M=10 K=5
SYNC_US=20000
SYNC_NS=$((SYNC_US * 1000))
TITLES=('CUDA API Summary (cuda_api_sum)' 'CUDA Launch Summary (cuda_launch_sum)'
	'CUDA Memory Operation Summary (by Size) (cuda_mem_size_sum)'
	'CUDA Synchronization Summary (cuda_sync_sum)'
	'CUDA Synchronization by Call Site (cuda_sync_site_sum)' 'Process Summary (process_sum)'
	'NVIDIA Driver ioctl Summary (ioctl_sum)' 'CUDA GPU Kernel Summary (cuda_gpu_kern_sum)'
	'CUDA GPU Kernel Time by Launch Site (cuda_gpu_site_sum)'
	'CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum)'
	'CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum)'
	'NVTX Range Summary (nvtx_sum)' 'GPU Launch Latency (gpu_launch_latency)'
	'Capture Ranges and Windows (capture_sum)' 'GPU Metrics Summary (gpu_metrics_sum)'
	'CUDA Device Summary (cuda_device_sum)' 'NCCL Summary (nccl_sum)'
	'Host Summary (job trace) (host_sum)')

# Records `cuda_workload ARGS` into $T/a.gtrace; sets WJ (the workload's
# JSON line) and WL_PID.
record() {
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=$SYNC_US \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/a.gtrace" --force -- "$WORKLOAD" "$@" \
		> "$T/cmd.out" 2> "$T/cmd.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf -- cuda_workload $* exited with status $RC; stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/cmd.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no JSON line; stdout: $(head -c 300 "$T/cmd.out")"
	WL_PID=$(jq -r .pid <<< "$WJ")
}

# stats OUT ARGS...: gtrace-bpf stats ARGS > OUT; checks status 0 and an
# empty stderr.
stats() {
	gtrace_ok "$1" stats "${@:2}"
}

# rows JSON REPORT: the rows of one report of a --format json document.
rows() {
	jq -c --arg r "$2" '.reports[] | select(.report == $r) | .rows' "$1"
}

need_python() {
	command -v python3 > /dev/null || fatal "needs python3 to parse the CSV and JSON output"
}

t_api_counts() {
	local got want
	record --launches $N --copies $M --syncs $K
	stats "$T/s.json" "$T/a.gtrace" --format json -r cuda_api_sum
	want=$(expected_counts $N $M $K)
	got=$(jq -c '[.[] | {(.name): .num_calls}] | add // {}' <<< "$(rows "$T/s.json" cuda_api_sum)")
	compare_counts "cuda_api_sum Num Calls vs the workload's calls" "$got" "$want"
	# and the same as dump sees them, every api and process of the file
	dump_trace "$T/a.gtrace" "$T/a.dump"
	compare_counts "cuda_api_sum Num Calls vs dump" "$got" \
		"$(jq -s -c '[.[] | select((.api | type) == "string") | .api] | reduce .[] as $a ({}; .[$a] += 1)' "$T/a.dump")"
	jq -e --argjson n "$(jq '.calls.cuLaunchKernel' <<< "$WJ")" \
		'.[] | select(.name == "cuLaunchKernel") | .num_calls == $n and .incomplete == 0' \
		<<< "$(rows "$T/s.json" cuda_api_sum)" > /dev/null ||
		err "cuda_api_sum cuLaunchKernel: $(rows "$T/s.json" cuda_api_sum | jq -c '.[] | select(.name == "cuLaunchKernel")'), the workload made $(jq .calls.cuLaunchKernel <<< "$WJ")"
	# the table says the same
	stats "$T/s.txt" "$T/a.gtrace" -r cuda_api_sum
	awk '$NF == "cuLaunchKernel" { print $3 }' "$T/s.txt" | grep -qx "$(jq '.calls.cuLaunchKernel' <<< "$WJ")" ||
		err "the table's Num Calls for cuLaunchKernel is not the workload's $(jq '.calls.cuLaunchKernel' <<< "$WJ"): $(grep cuLaunchKernel "$T/s.txt" | tr '\n' '|')"
}

t_launches() {
	local got want
	record --launches $N --copies $M --syncs $K
	stats "$T/s.json" "$T/a.gtrace" --format json -r cuda_launch_sum
	got=$(jq -c '[.[] | {(.name): "\(.launches) \(.shapes) \(.grid) \(.block) \(.launch_api)"}] | add // {}' \
		<<< "$(rows "$T/s.json" cuda_launch_sum)")
	want=$(jq -n -c --arg v "$K_VECADD" --arg s "$K_SCALE" --arg f "$K_FILL" \
		--argjson g $((N_ELEMS / 256)) --argjson gx $((N_ELEMS / 128)) '
		{ ($v): "25 1 \($g)x1x1 256x1x1 cuLaunchKernel",
		  ($s): "25 1 \($g)x1x1 256x1x1 cuLaunchKernel_ptsz",
		  ($f): "50 2 \($gx)x1x1 128x1x1 cuLaunchKernel, cuLaunchKernelEx" }')
	[ "$(jq -S . <<< "$got")" = "$(jq -S . <<< "$want")" ] ||
		err "cuda_launch_sum (launches shapes grid block apis per kernel): got $got, expected $want"
}

t_sync_proc() {
	local d
	record --launches $N --copies $M --syncs $K
	stats "$T/s.json" "$T/a.gtrace" --format json -r cuda_sync_sum,process_sum,cuda_mem_size_sum
	d=$(jq -r --argjson pid "$WL_PID" --argjson k $K --argjson lo $SYNC_NS '
		[.reports[] | select(.report == "cuda_sync_sum") | .rows[]
		 | select(.pid == $pid and .name == "cuStreamSynchronize")] as $r
		| if ($r | length) != 1 then "cuStreamSynchronize rows of pid \($pid): \($r)"
		  elif $r[0].num_calls != $k or $r[0].incomplete != 0 then "cuStreamSynchronize: \($r[0]), expected \($k) complete calls"
		  elif $r[0].min < $lo then "cuStreamSynchronize min \($r[0].min) ns, the mock sleeps \($lo) ns"
		  elif $r[0].avg < $r[0].min or $r[0].avg > $r[0].max or $r[0].med < $r[0].min or $r[0].med > $r[0].max
		    then "cuStreamSynchronize avg/med outside [min, max]: \($r[0])"
		  else empty end' "$T/s.json")
	[ -z "$d" ] || err "$d"
	d=$(jq -r --argjson pid "$WL_PID" --argjson n $N '
		[.reports[] | select(.report == "process_sum") | .rows[] | select(.pid == $pid)] as $r
		| if ($r | length) != 1 then "process_sum rows of pid \($pid): \($r)"
		  elif $r[0].launches != $n then "process_sum launches \($r[0].launches), expected \($n)"
		  elif ($r[0].command | tostring | test("cuda_workload")) | not then "process_sum command \($r[0].command)"
		  elif $r[0].sync_time > $r[0].api_time or $r[0].calls < $n or $r[0].events < 2 * $r[0].calls - $n
		    then "process_sum numbers do not add up: \($r[0])"
		  else empty end' "$T/s.json")
	[ -z "$d" ] || err "$d"
	# HtoD: M copies of the buffer; memset: n/2 floats; DtoH: one buffer
	d=$(jq -r --argjson m $M --argjson b $BUF_BYTES '
		[.reports[] | select(.report == "cuda_mem_size_sum") | .rows[] | {(.operation): "\(.count) \(.total) \(.min) \(.max)"}] | add
		| if . != {"HtoD": "\($m) \($m * $b) \($b) \($b)", "DtoH": "1 \($b) \($b) \($b)", "memset": "1 \($b / 2) \($b / 2) \($b / 2)"}
		  then "cuda_mem_size_sum (count total min max): \(.)" else empty end' "$T/s.json")
	[ -z "$d" ] || err "$d"
}

t_formats() {
	local t
	need_python
	record --launches 8 --copies 2 --syncs 1
	stats "$T/s.txt" "$T/a.gtrace"
	for t in "${TITLES[@]}"; do
		grep -qxF " ** $t:" "$T/s.txt" || err "no title line ' ** $t:' in the table output"
	done
	stats "$T/s.json" "$T/a.gtrace" --format json
	python3 - "$T/s.json" <<'EOF' || err "the --format json output is not the expected JSON document"
import json, sys
d = json.load(open(sys.argv[1]))
names = [r["report"] for r in d["reports"]]
assert names == ["cuda_api_sum", "cuda_launch_sum", "cuda_mem_size_sum", "cuda_sync_sum", "cuda_sync_site_sum", "process_sum",
                 "ioctl_sum", "cuda_gpu_kern_sum", "cuda_gpu_site_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                 "nvtx_sum", "gpu_launch_latency", "capture_sum", "gpu_metrics_sum", "cuda_device_sum",
                 "nccl_sum", "host_sum"], names
assert d["timeunit"] == "ns" and d["truncated"] is False
for r in d["reports"]:
    # no NVIDIA device on a machine without a GPU: ioctl_sum may be empty;
    # no CUPTI agent in this recording: the GPU side's reports are, and
    # no capture range either: capture_sum is; no NVML here: gpu_metrics_sum
    # may be empty; no libnccl in the workload: nccl_sum is; not a job trace:
    # host_sum is (full mode takes the stacks: cuda_sync_site_sum has the
    # workload's sync sites)
    if r["report"] in ("ioctl_sum", "gpu_metrics_sum") and not r["rows"]:
        continue
    if r["report"] in ("cuda_gpu_kern_sum", "cuda_gpu_site_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                       "nvtx_sum", "gpu_launch_latency", "capture_sum", "nccl_sum", "host_sum"):
        assert not r["rows"], r["report"]
        continue
    assert r["rows"], r["report"] + " has no rows"
    keys = set(r["rows"][0])
    assert all(set(row) == keys for row in r["rows"]), r["report"]
EOF
	# CSV: one report a call on stdout, or one file a report with -o BASE
	"$GTRACE" stats "$T/a.gtrace" --format csv > "$T/o.csv" 2> "$T/e.csv"
	[ $? -eq 2 ] && [ ! -s "$T/o.csv" ] && [ "$(wc -l < "$T/e.csv")" -eq 1 ] &&
		grep -q -- '-o BASE' "$T/e.csv" ||
		err "csv of every report on stdout: not status 2 and one line saying -o BASE: $(head -n 3 "$T/e.csv" | tr '\n' '|')"
	stats "$T/s.csv" "$T/a.gtrace" --format csv -o "$T/s"
	# stdout: the files written, a line each, and nothing else
	[ "$(grep -c '^wrote ' "$T/s.csv")" -eq 18 ] && [ "$(grep -vc '^wrote ' "$T/s.csv")" -eq 0 ] ||
		err "stats --format csv -o BASE: stdout is not the 18 paths written: $(head -c 200 "$T/s.csv")"
	python3 - "$T/s" <<'EOF' || err "stats --format csv -o BASE: not eighteen loadable CSV files, 0600"
import csv, os, sys
gpu = ["cuda_gpu_kern_sum", "cuda_gpu_site_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum",
       "gpu_launch_latency", "capture_sum", "gpu_metrics_sum", "nccl_sum", "host_sum"]
for name in ["cuda_api_sum", "cuda_launch_sum", "cuda_mem_size_sum", "cuda_sync_sum", "process_sum",
             "ioctl_sum", "cuda_device_sum"] + gpu:
    path = "%s_%s.csv" % (sys.argv[1], name)
    assert os.stat(path).st_mode & 0o7777 == 0o600, path
    rows = list(csv.reader(open(path, newline="")))
    # a header and rows; ioctl_sum may have only its header (no NVIDIA device
    # here), the GPU side's reports have only theirs (no CUPTI agent), and
    # capture_sum (no capture range)
    assert rows[0][0] in ("Time (%)", "Launches", "Total (bytes)", "PID", "Count", "Number", "GPU", "Host"), (name, rows[0])
    assert (len(rows) > 1 or name == "ioctl_sum" or name in gpu) and all(len(r) == len(rows[0]) for r in rows), name
    assert name not in gpu or len(rows) == 1, name
EOF
	# launches at entry only (the default): counted, with no time, not 0
	stats "$T/api.csv" "$T/a.gtrace" --format csv -r cuda_api_sum
	grep -qx ',,4,,,,,,0,cuLaunchKernel' "$T/api.csv" ||
		err "cuda_api_sum csv: cuLaunchKernel is not ',,4,,,,,,0,cuLaunchKernel' (4 calls, no time): $(grep cuLaunchKernel, "$T/api.csv" | head -n 1)"
	jq -e '.reports[0].rows[] | select(.name == "cuLaunchKernel") | .total_time == null and .time_pct == null and .num_calls == 4' \
		"$T/s.json" > /dev/null || err "cuda_api_sum json: cuLaunchKernel has a time: $(jq -c '.reports[0].rows[] | select(.name == "cuLaunchKernel")' "$T/s.json")"
	# the same totals in us, exactly: 1500 ns is 1.500 us
	stats "$T/us.json" "$T/a.gtrace" --format json --timeunit us -r cuda_api_sum
	python3 - "$T/s.json" "$T/us.json" <<'EOF' || err "--timeunit us: totals are not the ns ones / 1000"
import json, sys
from decimal import Decimal
ns = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"][0]["rows"]}
us = {r["name"]: r for r in json.load(open(sys.argv[2]), parse_float=Decimal)["reports"][0]["rows"]}
assert ns.keys() == us.keys()
for k in ns:
    if ns[k]["total_time"] is None:
        assert us[k]["total_time"] is None, k
        continue
    assert Decimal(ns[k]["total_time"]) == us[k]["total_time"] * 1000, (k, ns[k], us[k])
    if ns[k]["max"] is not None:
        assert Decimal(ns[k]["max"]) == us[k]["max"] * 1000, k
EOF
	grep -q 'Total Time (us)' <("$GTRACE" stats "$T/a.gtrace" --timeunit us -r cuda_api_sum) ||
		err "--timeunit us: no 'Total Time (us)' column title"
}

t_errors() {
	local rc size
	record --launches 8 --copies 2 --syncs 1
	"$GTRACE" stats "$T/a.gtrace" -r cuda_api_sum,nope > "$T/o1" 2> "$T/e1"
	rc=$?
	[ $rc -eq 2 ] || err "an unknown report: status $rc, expected 2 (a bad command line)"
	[ "$(wc -l < "$T/e1")" -eq 1 ] && grep -q "unknown report 'nope'" "$T/e1" ||
		err "an unknown report: stderr is not one line naming it: $(head -n 3 "$T/e1" | tr '\n' '|')"
	[ -s "$T/o1" ] && err "an unknown report: something on stdout"

	printf 'not a trace\n' > "$T/bad.gtrace"
	"$GTRACE" stats "$T/bad.gtrace" > "$T/o2" 2> "$T/e2"
	rc=$?
	[ $rc -eq 1 ] || err "a file that is not a trace: status $rc, expected 1"
	[ "$(wc -l < "$T/e2")" -eq 1 ] || err "a file that is not a trace: $(wc -l < "$T/e2") lines on stderr, expected 1"
	[ -s "$T/o2" ] && err "a file that is not a trace: something on stdout"

	# cut inside the last chunk: the reports of what is left, one line of
	# the readers' rule, status 1
	size=$(stat -c %s "$T/a.gtrace")
	head -c $((size - 100)) "$T/a.gtrace" > "$T/cut.gtrace"
	"$GTRACE" stats "$T/cut.gtrace" --format json > "$T/o3" 2> "$T/e3"
	rc=$?
	[ $rc -eq 1 ] || err "a cut trace: status $rc, expected 1"
	[ "$(wc -l < "$T/e3")" -eq 1 ] &&
		grep -q "^gtrace-bpf: $T/cut.gtrace is damaged: .*; read [0-9]* records before it .*; the reports cover the records read\$" "$T/e3" ||
		err "a cut trace: stderr is not the one line of the damage: $(head -n 3 "$T/e3" | tr '\n' '|')"
	jq -e '.truncated == true and (.damage | length > 0) and (.reports | length == 18)' "$T/o3" > /dev/null ||
		err "a cut trace: the JSON does not say truncated with eighteen reports: $(head -c 300 "$T/o3")"

	# a full disk is named so, on one line, status 1: stats and export
	for f in table json csv; do
		"$GTRACE" stats "$T/a.gtrace" --format $f -r cuda_api_sum > /dev/full 2> "$T/e4"
		rc=$?
		[ $rc -eq 1 ] && [ "$(wc -l < "$T/e4")" -eq 1 ] && grep -q 'No space left on device' "$T/e4" ||
			err "stats --format $f > /dev/full: status $rc, stderr: $(head -n 3 "$T/e4" | tr '\n' '|') (expected 1 and one line 'No space left on device')"
	done
	for f in perfetto json csv; do
		"$GTRACE" export "$T/a.gtrace" -f $f -o - > /dev/full 2> "$T/e5"
		rc=$?
		[ $rc -eq 1 ] && [ "$(wc -l < "$T/e5")" -eq 1 ] && grep -q 'No space left on device' "$T/e5" ||
			err "export -f $f -o - > /dev/full: status $rc, stderr: $(head -n 3 "$T/e5" | tr '\n' '|') (expected 1 and one line 'No space left on device')"
	done
}

# Names a hostile program gives its kernels, threads and command line
# (gen_trace -H): the tables show their escapes written out, CSV cells are
# no formulas (the formulas kept as text), every format valid UTF-8 with no
# control character.
t_hostile_text() {
	local f
	gen_trace -H -g -p 2 -k 24 -i 500 "$T/h.gtrace" 10000 3 > /dev/null || fatal "gen_trace -H failed"
	gtrace_ok "$T/h.txt" stats "$T/h.gtrace"
	text_ok "stats" text "$T/h.txt"
	grep -qF 'ctl\x01\x7f\xc2\x9b31m\x1b[31mred' "$T/h.txt" || err "stats: the escapes of a kernel name are not written out"
	gtrace_ok "$T/h.json" stats "$T/h.gtrace" --format json
	text_ok "stats --format json" json "$T/h.json"
	gtrace_ok "$T/h.out" stats "$T/h.gtrace" --format csv -o "$T/h"
	for f in "$T"/h_*.csv; do
		text_ok "stats --format csv ($f)" csv "$f"
	done
	grep -qF "\"'=HYPERLINK(\"\"http://evil.example/" "$T/h_cuda_gpu_kern_sum.csv" ||
		err "stats --format csv: the formula of a kernel name is not there as text"
	grep -qF "\"'-1+1_k3" "$T/h_cuda_gpu_kern_sum.csv" || err "stats --format csv: '-1+1' is not text"
}

add_case t_hostile_text "hostile names: tables show escapes written out, CSV cells no formulas, every format UTF-8 with no control character"
add_case t_api_counts "stats: cuda_api_sum Num Calls equal the workload's calls and dump's (json and table)"
add_case t_launches "stats: cuda_launch_sum kernel names, launches, shapes, grid, block, launch apis"
add_case t_sync_proc "stats: cuda_sync_sum waits >= the mock's sleep, process_sum and cuda_mem_size_sum of the workload"
add_case t_formats "stats: table titles, json parses, csv is one loadable file per report (-o BASE), entry-only launches have no time, --timeunit us is exact"
add_case t_errors "stats: unknown report and non-trace give one line and status 2 and 1; a cut trace warns once; a full disk says so (stats, export)"
run_cases "$@"
