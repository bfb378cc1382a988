#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Multi-GPU jobs on the mock libcuda's two devices: every launch, copy, set
# and wait carries the device of its context (the workload's cuCtxSetCurrent
# switching, per thread), peer copies both devices and their bytes, the
# exports and stats say the same per device, a recording that attached
# after the process set its devices says "unknown" (counted), never a
# guess; with the CUPTI agent over the mock libcupti the GPU records carry
# their device and the Perfetto export groups a process' stream tracks per
# device.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

OUT_DIR=$(dirname "$MOCK_DIR")
AGENT=$OUT_DIR/libgtrace-cupti.so
CUPTI_MOCK=$OUT_DIR/cupti/mock
LINT=$ROOT/tools/perfetto_lint.py
RECORD_SYNC_US=200

# The calls that run on a device (decode.h: gt_callrec__on_device).
ON_DEV='(.type | IN("launch", "memcpy", "memset", "sync", "alloc", "free"))'

t_devices() {
	local d
	record_named a --devices 2 --threads 2 --launches 10 --copies 2 --syncs 2
	jq -e '.devices == 2 and .device_launches == [10, 10]' <<< "$WJ" > /dev/null ||
		fatal "the workload did not launch 10 per device: $(jq -c '{devices, device_launches}' <<< "$WJ")"
	compare_counts "calls per api" "$(counts_of "$T/a.dump" "$WL_PID")" "$(wl_counts "$WJ")"
	# every launch on the device of the stream it went to, as the workload made them
	d=$(jq -s -r --argjson pid "$WL_PID" --argjson w "$WJ" "$JQ_DEFS"'
		([ $w.handles.device_streams | to_entries[] | .key as $d | .value[] | {(tostring): $d} ] | add) as $dev_of
		| [ calls($pid) | select(.type == "launch") ] as $l
		| [ ($l[] | select(.device != $dev_of[.stream | num | tostring])
		        | "  \(.api) stream \(.stream | num) on device \(.device // "none"), its stream is device \($dev_of[.stream | num | tostring])"),
		    (if ([ $l[] | select(.device == 0) ] | length) != 10 or ([ $l[] | select(.device == 1) ] | length) != 10
		     then "  launches per device \([ $l[] | .device ] | tally), expected 10 and 10" else empty end)
		  ] | .[:10] | join("\n")' "$T/a.dump") || fatal "jq failed on a.dump"
	[ -z "$d" ] || err "launches and their devices:
$d"
	# every call that runs on a device has one; the contexts name theirs
	sig_check "calls without a device" "$T/a.dump" "$WL_PID" "$ON_DEV and .device == null" '.api' '{}'
	sig_check "context calls per device" "$T/a.dump" "$WL_PID" '.type == "context" and .api != "cuCtxSetCurrent"' \
		'"\(.api) \(.device)"' '{"cuDevicePrimaryCtxRetain 0": 1, "cuDevicePrimaryCtxRetain 1": 1,
		"cuDevicePrimaryCtxRelease_v2 0": 1, "cuDevicePrimaryCtxRelease_v2 1": 1}'
	sig_check "context switches without a device" "$T/a.dump" "$WL_PID" '.api == "cuCtxSetCurrent" and .device == null' '.api' '{}'
	sig_check "streams per device" "$T/a.dump" "$WL_PID" '.api == "cuStreamCreate"' '"\(.device)"' '{"0": 2, "1": 2}'
	sig_check "allocations per device" "$T/a.dump" "$WL_PID" '.api == "cuMemAlloc_v2"' '"\(.device)"' '{"0": 3, "1": 3}'
	# the summary: per device, nothing unknown
	"$GTRACE" dump --summary "$T/a.gtrace" > "$T/sum" 2>&1 || fatal "dump --summary failed: $(head -n 3 "$T/sum" | tr '\n' '|')"
	grep -Eq '^  device 0 +10 ' "$T/sum" || err "dump --summary: no 'device 0' row with 10 launches: $(grep device "$T/sum" | tr '\n' '|')"
	grep -Eq '^  device 1 +10 ' "$T/sum" || err "dump --summary: no 'device 1' row with 10 launches: $(grep device "$T/sum" | tr '\n' '|')"
	grep -q 'device unknown' "$T/sum" && err "dump --summary has calls of unknown device: $(grep device "$T/sum" | tr '\n' '|')"
	grep -Eq '^  device_unknown +0$' "$T/sum" || err "dump --summary: the decoder's device_unknown is not 0: $(grep device_unknown "$T/sum")"
	# stats: a row per device; launches split by device
	"$GTRACE" stats "$T/a.gtrace" -r cuda_device_sum --format csv > "$T/dev.csv" 2> "$T/stats.err" ||
		fatal "stats -r cuda_device_sum failed: $(head -n 3 "$T/stats.err" | tr '\n' '|')"
	grep -q "^$WL_PID,0,10," "$T/dev.csv" || err "cuda_device_sum: no row of device 0 with 10 launches: $(tr '\n' '|' < "$T/dev.csv")"
	grep -q "^$WL_PID,1,10," "$T/dev.csv" || err "cuda_device_sum: no row of device 1 with 10 launches: $(tr '\n' '|' < "$T/dev.csv")"
	grep -q ",unknown," "$T/dev.csv" && err "cuda_device_sum has an unknown row: $(tr '\n' '|' < "$T/dev.csv")"
	"$GTRACE" stats "$T/a.gtrace" -r cuda_launch_sum --format json > "$T/ls.json" 2> "$T/stats.err" ||
		fatal "stats -r cuda_launch_sum failed: $(head -n 3 "$T/stats.err" | tr '\n' '|')"
	jq -e --arg k "$K_VECADD" '[.reports[0].rows[] | select(.name == $k) | {(.device): .launches}] | add == {"0": 3, "1": 3}' \
		"$T/ls.json" > /dev/null || err "cuda_launch_sum: vecAdd per device $(jq -c '[.reports[0].rows[] | {name, device, launches}]' "$T/ls.json")"
	# the JSON export's events carry the same device as dump
	"$GTRACE" export "$T/a.gtrace" -f json -o "$T/a.json" 2> "$T/x.err" || fatal "export -f json failed: $(head -n 3 "$T/x.err" | tr '\n' '|')"
	d=$(jq -r --argjson pid "$WL_PID" "$JQ_DEFS"'
		[.traceEvents[] | select(.pid == $pid and .cat == "launch") | .args.device | tostring] | tally
		| if . == {"0": 10, "1": 10} then empty else "JSON export: launches per device \(tojson), expected 10 and 10" end' "$T/a.json")
	[ -z "$d" ] || err "$d"
}

t_peer() {
	local mib=$((BUF_BYTES))
	record_named p --devices 2 --peer 3 --launches 4 --copies 2 --syncs 1
	sig_check "copies with their devices" "$T/p.dump" "$WL_PID" '.type == "memcpy"' \
		'"\(.api) \(.kind) \(.src_device // "-")->\(.dst_device // "-") \(.bytes) on \(.device)"' \
		"$(jq -n -c --argjson b "$mib" '{
		  "cuMemcpyPeer PtoP 1->0 \($b) on 0": 3, "cuMemcpyDtoD_v2 PtoP 0->1 \($b) on 0": 3,
		  "cuMemcpy PtoP 1->0 \($b) on 0": 3, "cuMemcpyHtoD_v2 HtoD -->0 \($b) on 0": 2,
		  "cuMemcpyDtoHAsync_v2 DtoH 0->- \($b) on 0": 1}')"
	"$GTRACE" stats "$T/p.gtrace" -r cuda_device_sum --format json > "$T/dev.json" 2> "$T/stats.err" ||
		fatal "stats -r cuda_device_sum failed: $(head -n 3 "$T/stats.err" | tr '\n' '|')"
	jq -e --argjson b "$mib" '[.reports[0].rows[] | {(.device): [.peer_out, .peer_in]}] | add
		== {"0": [3 * $b, 6 * $b], "1": [6 * $b, 3 * $b]}' "$T/dev.json" > /dev/null ||
		err "cuda_device_sum: peer bytes out/in per device $(jq -c '[.reports[0].rows[] | {device, peer_out, peer_in}]' "$T/dev.json"), expected 0: 3 and 6 buffers, 1: 6 and 3"
	# the CSV has the sides' columns
	"$GTRACE" export "$T/p.gtrace" -f csv -o "$T/p.csv" 2> "$T/x.err" || fatal "export -f csv failed: $(head -n 3 "$T/x.err" | tr '\n' '|')"
	python3 - "$T/p.csv" << 'EOF' || err "CSV: the peer copies' src_device/dst_device columns do not match"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["api"] == "cuMemcpyPeer"]
sys.exit(0 if len(rows) == 3 and all(r["src_device"] == "1" and r["dst_device"] == "0" and r["kind"] == "PtoP" for r in rows) else 1)
EOF
}

# Attached after the process set up its device: the contexts were retained
# before the recording, so no call's device is known (but the primary
# context's release, which names its device), though its launch threads'
# cuCtxSetCurrent are seen; counted and said.
t_attach_late() {
	local pid n
	start_workload w LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_SYNC_US=200 -- --wait-signal --threads 2 --launches 8 --copies 1 --syncs 1
	pid=$WPID
	wait_ready w "$pid"
	start_tracer --libcuda "$MOCK_LIB" -p "$pid" -o "$T/l.gtrace"
	kill -USR1 "$pid"
	finish_workload w "$pid"
	stop_tracer
	dump_trace "$T/l.gtrace" "$T/l.dump"
	n=$(jq -s --argjson pid "$pid" "[.[] | select(.pid == \$pid and (.api | type) == \"string\" and $ON_DEV)] | length" "$T/l.dump")
	[ "$n" -ge 16 ] || fatal "only $n calls on a device recorded after the signal"
	# but the one that names its device itself
	sig_check "calls with a device though none was shown" "$T/l.dump" "$pid" '.device != null' '"\(.api) \(.device)"' \
		'{"cuDevicePrimaryCtxRelease_v2 0": 1}'
	sig_check "the threads' context switches" "$T/l.dump" "$pid" '.api == "cuCtxSetCurrent"' '"\(.device // "unknown")"' '{"unknown": 2}'
	"$GTRACE" dump --summary "$T/l.gtrace" > "$T/sum" 2>&1 || fatal "dump --summary failed"
	grep -Eq "^  device_unknown +$n\$" "$T/sum" || err "dump --summary: device_unknown is not $n: $(grep device_unknown "$T/sum")"
	grep -Eq '^  device unknown +16 ' "$T/sum" || err "dump --summary: no 'device unknown' row with the 16 launches: $(grep device "$T/sum" | tr '\n' '|')"
	grep -q 'device unknown: no context call' "$T/sum" || err "dump --summary does not say why the device is unknown"
	"$GTRACE" stats "$T/l.gtrace" -r cuda_device_sum --format csv > "$T/dev.csv" 2>&1 || fatal "stats failed"
	grep -q "^$pid,unknown,16," "$T/dev.csv" || err "cuda_device_sum: no unknown row with the 16 launches: $(tr '\n' '|' < "$T/dev.csv")"
}

# The GPU side: the agent over the mock libcupti, the mock's two "GPUs".
t_gpu_tracks() {
	local d rc
	[ -f "$AGENT" ] && ls "$CUPTI_MOCK"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($AGENT, $CUPTI_MOCK): build them with make cupti-mock (needs cupti.h)"
	command -v python3 > /dev/null || fatal "needs python3 for tools/perfetto_lint.py"
	env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$CUPTI_MOCK" GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=200 \
		"$GTRACE" --libcuda "$MOCK_LIB" --cupti --cupti-lib "$AGENT" -o "$T/g.gtrace" -- \
		"$WORKLOAD" --devices 2 --launches 6 --copies 1 --syncs 1 > "$T/g.out" 2> "$T/g.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "record --cupti exited $rc: $(tail -n 3 "$T/g.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/g.out" | tail -n 1)
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/g.gtrace" "$T/g.dump"
	d=$(jq -s -c --argjson pid "$WL_PID" "$JQ_DEFS"'[.[] | select(.pid == $pid and .type == "gpu_kernel") | .device | tostring] | tally' "$T/g.dump")
	[ "$d" = '{"0":3,"1":3}' ] || err "GPU kernels per device: $d, expected 3 and 3"
	# every linked kernel on the device of the launch it came from
	d=$(jq -s -r --argjson pid "$WL_PID" '
		([ .[] | select(.pid == $pid and .type == "launch") | {key: "\(.tid) \(.ts)", value: .device} ] | from_entries) as $dev
		| [ .[] | select(.pid == $pid and .type == "gpu_kernel" and .launch_ts != null)
		    | select($dev["\(.launch_tid) \(.launch_ts)"] != .device)
		    | "  kernel at \(.ts) on device \(.device), its launch on \($dev["\(.launch_tid) \(.launch_ts)"])" ] | join("\n")' "$T/g.dump")
	[ -z "$d" ] || err "GPU kernels and their launches' devices:
$d"
	"$GTRACE" export "$T/g.gtrace" -f perfetto -o "$T/g.pftrace" 2> "$T/x.err" || fatal "export -f perfetto failed: $(head -n 3 "$T/x.err" | tr '\n' '|')"
	python3 "$LINT" --json "$T/g.pftrace" > "$T/g.lint" 2> "$T/lint.err" || fatal "perfetto_lint rejects the export: $(head -n 3 "$T/lint.err" | tr '\n' '|')"
	# in Python: the uuids are 64-bit, beyond jq's doubles
	d=$(python3 - "$T/g.lint" "$WL_PID" << 'EOF'
import json, sys
lint, pid = json.load(open(sys.argv[1])), int(sys.argv[2])
proc = [p["uuid"] for p in lint["processes"] if p["pid"] == pid][:1]
by = {t["uuid"]: t for t in lint["other"]}
groups = [t for t in lint["other"] if t["name"] in ("GPU 0", "GPU 1")]
out = ["group track %s is not under the process" % t["name"] for t in groups if [t["parent"]] != proc]
if len(groups) != 2:
    out.append("no group tracks GPU 0 and GPU 1: %s" % [t["name"] for t in lint["other"]])
for t in lint["other"]:
    if t["name"].startswith("GPU ") and " stream" in t["name"]:
        parent = by.get(t["parent"], {}).get("name", "?")
        if parent != t["name"].split(" stream")[0]:
            out.append("%s is under %s" % (t["name"], parent))
print("\n".join(out))
EOF
)
	[ -z "$d" ] || err "Perfetto tracks per device: $d"
	"$GTRACE" stats "$T/g.gtrace" -r cuda_gpu_kern_sum --format csv > "$T/k.csv" 2>&1 || fatal "stats failed"
	head -n 1 "$T/k.csv" | grep -q ',Device,Name$' || err "cuda_gpu_kern_sum of two devices has no Device column: $(head -n 1 "$T/k.csv")"
}

t_workload_devices_bad() {
	local rc
	env LD_LIBRARY_PATH="$MOCK_DIR" "$WORKLOAD" --devices 3 > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 1 ] || err "--devices 3 on the mock's two: exit $rc, expected 1"
	grep -q 'the driver has 2 device' "$T/e" || err "--devices 3: $(cat "$T/e")"
	env LD_LIBRARY_PATH="$MOCK_DIR" "$WORKLOAD" --peer 1 > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 2 ] || err "--peer without --devices 2: exit $rc, expected 2"
}

add_case t_devices "two devices: every launch, copy, set, wait on its context's device; dump --summary, stats, JSON per device"
add_case t_peer "peer copies (cuMemcpyPeer, DtoD and cuMemcpy across devices): PtoP with both devices and bytes; stats peer out/in"
add_case t_attach_late "attached after the contexts were set: every device unknown, counted in dump --summary and stats, none guessed"
add_case t_gpu_tracks "--cupti on two devices: GPU kernels on their launch's device, Perfetto stream tracks grouped per device"
add_case t_workload_devices_bad "workload: --devices beyond the driver's count exits 1, --peer without two devices exits 2"
run_cases "$@"
