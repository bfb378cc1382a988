#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --gpu-metrics against the mock NVML (tests/mock/libnvml_mock.c, loaded
# through GTRACE_NVML_LIB): samples at the rate asked (within 20 %), the
# mock's scripted values exactly in dump (GPU 0 with GPM, GPU 1 without),
# Perfetto counter tracks holding them, gpu_metrics_sum's figures equal to
# the statistics of the samples, NVML errors mid-run counted with the
# recording going on; a GPU that falls off mid-run and one in MIG mode:
# said, counted, the rest recorded; each process' memory at about 1 Hz on
# its own thread (a slow listing slows neither the rate nor the workload),
# on the timeline in the process' own track; the sampler's CPU time in the
# summary, in the daemon's status and overhead records, apart from the
# estimate; no NVML library: one info line, the recording as usual, no
# samples; light mode samples only when asked; bad rates: status 2 and one
# line. Each GPU's SM count (nvmlDeviceGetAttributes_v2, else the CUDA
# cores over the architecture's cores per SM) and its source in the header,
# and what analyze and report judge grids against without --sms.
#
# The mock's script: gpu_util of GPU d, its call k (the probe is k = 0):
# 10 * (k % 4 + 1) + d; mem_util 25; mem used (d + 1) GiB of 80 GiB; clocks
# 1980 / 2619 MHz; power 350.123 W; temperature 45 + d; throttle reasons 4;
# GPM (GPU 0): sm_active 50.5, sm_occupancy 25.25, tensor_active 87.125,
# fp16 1.5, fp32 2.5, fp64 3.5, int 4.5, dram_bw 15.75 %; PCIe tx 100.5, rx
# 200.25, NVLink tx 300, rx 400 MiB/s. GTRACE_MOCK_NVML_LOST=D:K: GPU D
# falls off at its utilization call K; GTRACE_MOCK_NVML_MIG=D: GPU D in MIG
# mode (no utilization, GPM refused); GTRACE_MOCK_NVML_PROCS=FILE: lines "D
# PID BYTES", the processes listed; GTRACE_MOCK_NVML_PROCS_DELAY_MS: a
# listing's extra time; SM counts 132 (GPU 0) and 114 (GPU 1),
# GTRACE_MOCK_NVML_SMS=A,B scripts them ("-": nvmlDeviceGetAttributes_v2
# fails, "-N": it fails on a GPU of N SMs); Hopper GPUs of SMs x 128 CUDA
# cores, GTRACE_MOCK_NVML_ARCH=A,B (NVML_DEVICE_ARCH_* values) and
# GTRACE_MOCK_NVML_CORES=A,B script them ("-": the query fails);
# GTRACE_MOCK_NVML_IDLE=1: utilization 0 at the odd calls, and the GPM
# activity metrics 0 after them (test_analyze's).
REQUIRES="root jq mock gtrace python3"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
# t_status reads the sampler's CPU time, which a loaded machine changes: solo
# in both passes
SCOPED_CASES="t_bad"
. "$(dirname "$0")/lib.sh"

NVML_MOCK=$MOCK_DIR/nvml/libnvidia-ml.so.1
OUT_DIR=$(dirname "$MOCK_DIR")
AGENT=$OUT_DIR/libgtrace-cupti.so
CUPTI_MOCK=$OUT_DIR/cupti/mock

# rec NAME SECONDS [OPTIONS...]: records the workload flooding for SECONDS
# (with WL_ARGS, default 200 launches a second) into $T/NAME.gtrace with the
# mock NVML, dumps it into $T/NAME.dump; the recorder's stderr in
# $T/NAME.err.
rec() {
	local name=$1 secs=$2 rc
	shift 2
	[ -f "$NVML_MOCK" ] || fatal "no mock NVML at $NVML_MOCK (make mock)"
	GT_LIBCUDA=$MOCK_LIB GTRACE_NVML_LIB=${NVML:-$NVML_MOCK} \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" --force "$@" -- "$WORKLOAD" \
		--flood "$secs" ${WL_ARGS:---rate 200} > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf $* -- cuda_workload exited with status $rc: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	dump_trace "$T/$name.gtrace" "$T/$name.dump"
}

# samples DUMP GPU METRIC: the values of one metric, one a line, in order.
samples() {
	jq -r --argjson d "$2" --arg m "$3" 'select(.type == "gpu_metric" and .device == $d and .metric == $m) | .value' "$1"
}

t_rate() {
	rec a 2 --gpu-metrics=20
	python3 - "$T/a.dump" <<- 'EOF' || err "the samples are not at 20 Hz within 20 %"
		import json, sys
		ts = [r["ts"] for r in map(json.loads, open(sys.argv[1]))
		      if r.get("type") == "gpu_metric" and r["device"] == 0 and r["metric"] == "gpu_util"]
		assert len(ts) >= 10, "only %d samples" % len(ts)
		rate = (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9)
		print("%d samples at %.2f Hz" % (len(ts), rate), file=sys.stderr)
		assert 16 <= rate <= 24, rate
		# a round's records share one timestamp: GPU 1's too
		rounds = sorted(set(r["ts"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "gpu_metric"))
		assert rounds == ts, "rounds and GPU 0's samples differ"
	EOF
	grep -q "^gtrace-bpf: GPU metrics: 2 GPUs at 20 Hz, each process' memory once a second$" "$T/a.err" ||
		err "no line 'GPU metrics: 2 GPUs at 20 Hz, each process' memory once a second': $(grep -i 'gpu metrics' "$T/a.err" | tr '\n' '|')"
	grep -Eq '^gtrace-bpf: GPU metrics: [0-9]+ samples, [0-9]+ missed \(the sampler late\), [0-9]+ records \(0 of process memory\), 0 read errors, 0 dropped, 0 GPUs lost mid-run, 0 in MIG mode; the sampler.s threads used [0-9.]+ ms of CPU in [0-9.]+ s \([0-9.]+% of one CPU, measured: the recorder.s own cost\)$' "$T/a.err" ||
		err "no summary line with 0 errors, 0 dropped and the sampler's CPU: $(grep -i 'gpu metrics' "$T/a.err" | tr '\n' '|')"
}

t_values() {
	local got want m v
	rec v 1
	# gpu_util cycles from the probe's call on: 20 30 40 10 20 ... (+1 on GPU 1)
	got=$(samples "$T/v.dump" 0 gpu_util | head -n 6 | tr '\n' ' ')
	[ "$got" = "20 30 40 10 20 30 " ] || err "GPU 0 gpu_util: got [$got], expected [20 30 40 10 20 30 ]"
	got=$(samples "$T/v.dump" 1 gpu_util | head -n 4 | tr '\n' ' ')
	[ "$got" = "21 31 41 11 " ] || err "GPU 1 gpu_util: got [$got], expected [21 31 41 11 ]"
	for want in "0 mem_util 25" "0 mem_used 1073741824" "1 mem_used 2147483648" "0 mem_total 85899345920" \
		    "0 sm_clock 1980" "1 mem_clock 2619" "0 power 350.123" "1 power 350.123" \
		    "0 temperature 45" "1 temperature 46" "0 throttle_reasons 4" "0 sm_active 50.5" \
		    "0 sm_occupancy 25.25" "0 tensor_active 87.125" "0 fp16_active 1.5" "0 fp32_active 2.5" \
		    "0 fp64_active 3.5" "0 int_active 4.5" "0 dram_bw 15.75" "0 pcie_tx 100.5" \
		    "0 pcie_rx 200.25" "0 nvlink_tx 300" "0 nvlink_rx 400"; do
		set -- $want
		got=$(samples "$T/v.dump" "$1" "$2" | sort -u | tr '\n' ' ')
		[ "$got" = "$3 " ] || err "GPU $1 $2: got [$got], expected [$3 ]"
	done
	# GPU 1 has no GPM: none of its metrics
	got=$(jq -r 'select(.type == "gpu_metric" and .device == 1) | .metric' "$T/v.dump" | sort -u | tr '\n' ' ')
	[ "$got" = "gpu_util mem_clock mem_total mem_used mem_util power sm_clock temperature throttle_reasons " ] ||
		err "GPU 1's metrics: [$got], expected the basic nine"
	# the probe in the header
	"$GTRACE" dump --summary "$T/v.gtrace" > "$T/v.sum" 2>&1
	grep -q 'gpu_metrics=10 gpu_metrics_devs=2 gpu_metrics_dev0=0xfff03ff gpu_metrics_dev0_sms=132 gpu_metrics_dev0_sms_from=attributes gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=114 gpu_metrics_dev1_sms_from=attributes' "$T/v.sum" ||
		err "the header's options lack the probe: $(grep -o 'gpu_metrics[^ ]*' "$T/v.sum" | tr '\n' ' ')"
}

t_perfetto() {
	rec p 1
	command -v protoc > /dev/null || fatal "needs protoc (apt-get install protobuf-compiler)"
	"$GTRACE" export "$T/p.gtrace" -f perfetto -o "$T/p.pftrace" 2> "$T/p.xerr" ||
		fatal "export -f perfetto failed: $(head -n 3 "$T/p.xerr" | tr '\n' '|')"
	python3 "$ROOT/tools/perfetto_lint.py" --json "$T/p.pftrace" > "$T/p.lint" 2> "$T/p.linterr" ||
		fatal "perfetto_lint rejects p.pftrace: $(head -n 3 "$T/p.linterr" | tr '\n' '|')"
	protoc --decode_raw < "$T/p.pftrace" > "$T/p.raw" || fatal "protoc --decode_raw cannot read p.pftrace"
	# one counter value per sample, the values those of dump
	python3 - "$T/p.dump" "$T/p.raw" "$T/p.lint" <<- 'EOF' || err "the Perfetto counters are not dump's samples"
		import collections, json, re, struct, sys
		dump = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "gpu_metric"]
		raw = open(sys.argv[2]).read()
		lint = json.load(open(sys.argv[3]))
		assert lint["counters"] == len(dump), (lint["counters"], len(dump))
		# TrackEvent.double_counter_value = 44, a fixed64
		vals = [struct.unpack("<d", struct.pack("<Q", int(x, 16)))[0]
		        for x in re.findall(r"^\s*44: (0x[0-9a-f]+)$", raw, re.M)]
		want = collections.Counter(float(r["value"]) for r in dump)
		assert collections.Counter(vals) == want, (collections.Counter(vals), want)
		for name in ("GPU 0 metrics", "GPU 1 metrics", "tensor_active (%)", "power (W)", "gpu_util (%)"):
		    assert '"%s"' % name in raw, name
	EOF
}

t_stats() {
	rec s 2
	"$GTRACE" stats "$T/s.gtrace" -r gpu_metrics_sum --format json > "$T/s.json" 2> "$T/s.serr" ||
		fatal "stats -r gpu_metrics_sum failed: $(head -n 3 "$T/s.serr" | tr '\n' '|')"
	python3 - "$T/s.dump" "$T/s.json" <<- 'EOF' || err "gpu_metrics_sum is not the statistics of the samples"
		import json, math, sys
		from decimal import Decimal, ROUND_HALF_UP
		series = {}
		for r in map(json.loads, open(sys.argv[1])):
		    if r.get("type") == "gpu_metric":
		        series.setdefault((r["device"], r["metric"]), []).append(Decimal(str(r["value"])))
		rows = [r for r in json.load(open(sys.argv[2]))["reports"][0]["rows"] if r["scope"] == "run"]
		assert len(rows) == len(series) == 9 + 12 + 9, (len(rows), len(series))
		assert all(r["of"] is None and r["attribution"] == "whole GPU" for r in rows)
		for row in rows:
		    v = sorted(series[(row["gpu"], row["metric"])])
		    n = len(v)
		    mean = (sum(v) / n).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
		    rank = lambda p: v[max(math.ceil(p * n / 100) - 1, 0)]
		    want = {"samples": n, "mean": mean, "p50": rank(50), "p95": rank(95), "max": v[-1]}
		    got = {k: Decimal(str(row[k])) if k != "samples" else row[k] for k in want}
		    assert got == want, (row["gpu"], row["metric"], got, want)
		util = [r for r in rows if r["gpu"] == 0 and r["metric"] == "gpu_util"][0]
		print("GPU 0 gpu_util: %s" % util, file=sys.stderr)
	EOF
}

t_errors() {
	GTRACE_MOCK_NVML_FAIL_AFTER=6 rec e 1 --gpu-metrics=20
	grep -q 'GPU metrics: [0-9]* samples, [0-9]* missed (the sampler late), [0-9]* records ([0-9]* of process memory), [1-9][0-9]* read errors' "$T/e.err" ||
		err "the read errors are not counted: $(grep -i 'gpu metrics' "$T/e.err" | tr '\n' '|')"
	# utilization stopped after two rounds; power went on
	[ "$(samples "$T/e.dump" 0 gpu_util | wc -l)" -eq 2 ] ||
		err "GPU 0 gpu_util: $(samples "$T/e.dump" 0 gpu_util | wc -l) samples, expected 2"
	[ "$(samples "$T/e.dump" 0 power | wc -l)" -ge 10 ] ||
		err "GPU 0 power: $(samples "$T/e.dump" 0 power | wc -l) samples after the errors began, expected them to go on"
}

t_no_nvml() {
	NVML=$T/none/libnvidia-ml.so.1 rec n 1
	[ "$(grep -c 'no GPU metrics' "$T/n.err")" -eq 1 ] ||
		err "expected one 'no GPU metrics' line: $(grep -i 'gpu metrics' "$T/n.err" | tr '\n' '|')"
	grep -q '^gtrace-bpf: no GPU metrics: cannot load .*; recording goes on without them$' "$T/n.err" ||
		err "the line does not say what could not be loaded: $(grep 'no GPU metrics' "$T/n.err")"
	[ "$(grep -c '"type":"gpu_metric"' "$T/n.dump")" -eq 0 ] || err "samples without an NVML library"
	[ "$(jq -s '[.[] | select(.api == "cuLaunchKernel")] | length' "$T/n.dump")" -gt 0 ] ||
		err "the recording without NVML has no launches"
}

t_modes() {
	# light mode: off unless asked
	rec l 1 --mode light
	[ "$(grep -c '"type":"gpu_metric"' "$T/l.dump")" -eq 0 ] || err "light mode sampled without --gpu-metrics"
	grep -qi 'gpu metrics' "$T/l.err" && err "light mode without --gpu-metrics said: $(grep -i 'gpu metrics' "$T/l.err")"
	rec l2 1 --mode light --gpu-metrics=50
	[ "$(samples "$T/l2.dump" 0 gpu_util | wc -l)" -ge 10 ] ||
		err "light mode with --gpu-metrics=50: $(samples "$T/l2.dump" 0 gpu_util | wc -l) samples"
	rec o 1 --gpu-metrics=off
	[ "$(grep -c '"type":"gpu_metric"' "$T/o.dump")" -eq 0 ] || err "--gpu-metrics=off sampled"
}

t_bad() {
	local v rc
	for v in 0 1001 ten -1 5x ''; do
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/bad.gtrace" "--gpu-metrics=$v" -- "$WORKLOAD" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "--gpu-metrics=$v: status $rc, expected 2"
		[ "$(wc -l < "$T/bad.err")" -eq 1 ] || err "--gpu-metrics=$v: expected one line on stderr: $(head -n 3 "$T/bad.err" | tr '\n' '|')"
		grep -q 'invalid --gpu-metrics' "$T/bad.err" || err "--gpu-metrics=$v: the line does not say so: $(head -n 1 "$T/bad.err")"
		[ -e "$T/bad.gtrace" ] && err "--gpu-metrics=$v left a trace"
	done
	"$GTRACE" daemon --gpu-metrics=2000 > /dev/null 2> "$T/dbad.err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l < "$T/dbad.err")" -eq 1 ] ||
		err "daemon --gpu-metrics=2000: status $rc, stderr $(head -n 3 "$T/dbad.err" | tr '\n' '|')"
}

t_lost() {
	local got
	GTRACE_MOCK_NVML_LOST=1:4 rec lo 2 --gpu-metrics=20
	[ "$(grep -c 'GPU 1 (Mock T4) fell off the bus' "$T/lo.err")" -eq 1 ] ||
		err "expected one line saying GPU 1 fell off: $(grep -i 'gpu' "$T/lo.err" | tr '\n' '|')"
	grep -q 'GPU metrics: .*, 0 read errors, 0 dropped, 1 GPU lost mid-run,' "$T/lo.err" ||
		err "the summary does not count the lost GPU: $(grep 'GPU metrics:' "$T/lo.err")"
	got=$(jq -c 'select(.type == "gpu_metric" and .metric == "gpu_lost") | [.device, .value, .unit]' "$T/lo.dump" | tr '\n' ' ')
	[ "$got" = '[1,1,"flag"] ' ] || err "gpu_lost records: [$got], expected one of GPU 1 with value 1"
	# GPU 1's utilization calls 1-3 (0 was the probe's), then nothing of it
	[ "$(samples "$T/lo.dump" 1 gpu_util | wc -l)" -eq 3 ] ||
		err "GPU 1 gpu_util: $(samples "$T/lo.dump" 1 gpu_util | wc -l) samples, expected 3 before it fell off"
	python3 - "$T/lo.dump" <<- 'EOF' || err "GPU 1 has samples after its gpu_lost record, or GPU 0 stopped"
		import json, sys
		recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "gpu_metric"]
		lost = [r["ts"] for r in recs if r["metric"] == "gpu_lost"][0]
		assert not [r for r in recs if r["device"] == 1 and r["ts"] > lost]
		after = [r for r in recs if r["device"] == 0 and r["metric"] == "gpu_util" and r["ts"] > lost]
		assert len(after) >= 20, len(after)
	EOF
	[ "$(jq -s '[.[] | select(.api == "cuLaunchKernel")] | length' "$T/lo.dump")" -gt 0 ] ||
		err "the recording with a GPU lost has no launches"
}

t_mig() {
	GTRACE_MOCK_NVML_MIG=0 rec mg 1 --gpu-metrics=20
	grep -q '^gtrace-bpf: GPU 0 (Mock H200) is in MIG mode: sampled for what NVML gives of the whole GPU (metrics 0x3fc, no GPM), not per instance$' "$T/mg.err" ||
		err "no line saying GPU 0 is in MIG mode: $(grep -i 'mig\|gpu metrics' "$T/mg.err" | tr '\n' '|')"
	grep -q 'GPU metrics: .*, 0 read errors, 0 dropped, 0 GPUs lost mid-run, 1 in MIG mode;' "$T/mg.err" ||
		err "the summary does not count the MIG GPU: $(grep 'GPU metrics:' "$T/mg.err")"
	# no SM count for the GPU in MIG mode (though the mock's attributes and
	# cores give the whole GPU's): its programs run on an instance
	"$GTRACE" dump --summary "$T/mg.gtrace" | grep -q ' gpu_metrics_dev0=0x3fc gpu_metrics_dev0_mig=1 gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=114 gpu_metrics_dev1_sms_from=attributes$' ||
		err "the header does not hold GPU 0's MIG probe (and no SM count of it): $("$GTRACE" dump --summary "$T/mg.gtrace" | grep -o 'gpu_metrics[^ ]*' | tr '\n' ' ')"
	[ "$(samples "$T/mg.dump" 0 gpu_util | wc -l)" -eq 0 ] || err "GPU 0 in MIG mode has gpu_util samples"
	[ "$(samples "$T/mg.dump" 0 sm_active | wc -l)" -eq 0 ] || err "GPU 0 in MIG mode has GPM samples"
	[ "$(samples "$T/mg.dump" 0 power | wc -l)" -ge 10 ] || err "GPU 0 in MIG mode lost its power samples"
	[ "$(samples "$T/mg.dump" 1 gpu_util | wc -l)" -ge 10 ] || err "GPU 1 lost its samples"
}

# rec_procs NAME SECONDS BYTES [OPTIONS...]: rec with the workload listed by
# the mock NVML on GPU 0 with BYTES and on GPU 1 without a figure, with
# the workload's arguments WL_ARGS (default: 200 launches a second); its pid
# in $T/NAME.pid.
rec_procs() {
	local name=$1 secs=$2 bytes=$3 rc
	shift 3
	GT_LIBCUDA=$MOCK_LIB GTRACE_NVML_LIB=$NVML_MOCK GTRACE_MOCK_NVML_PROCS=$T/$name.procs \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" --force "$@" -- sh -c \
		'echo $$ > "$1.pid"; printf "0 %s %s\n1 %s -\n" $$ "$2" $$ > "$1.procs"; shift 2; exec "$@"' \
		sh "$T/$name" "$bytes" "$WORKLOAD" --flood "$secs" ${WL_ARGS:---rate 200} > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf -- cuda_workload exited with status $rc: $(tail -n 3 "$T/$name.err" | tr '\n' '|')"
	dump_trace "$T/$name.gtrace" "$T/$name.dump"
}

t_procs() {
	local pid got n
	rec_procs pm 3 123456789 --gpu-metrics=20
	pid=$(cat "$T/pm.pid")
	grep -q 'GPU metrics: 2 GPUs at 20 Hz, each process. memory once a second' "$T/pm.err" ||
		err "the start line does not say the processes are sampled: $(grep 'GPU metrics' "$T/pm.err" | head -n 1)"
	got=$(jq -r --argjson p "$pid" 'select(.type == "gpu_metric" and .metric == "proc_mem_used") | [.pid, .device, .value, .unit] | @tsv' "$T/pm.dump" | sort -u | tr '\t\n' ', ')
	[ "$got" = "$pid,0,123456789,B " ] || err "proc_mem_used records: [$got], expected $pid on GPU 0 with 123456789 B (GPU 1 has no figure)"
	# about once a second for the ~3 s the workload ran
	n=$(jq -r 'select(.type == "gpu_metric" and .metric == "proc_mem_used") | .ts' "$T/pm.dump" | wc -l)
	[ "$n" -ge 3 ] && [ "$n" -le 5 ] || err "$n proc_mem_used samples in ~3 s, expected 3-5 (1 Hz)"
	grep -Eq 'GPU metrics: .* records \([1-9][0-9]* of process memory\)' "$T/pm.err" ||
		err "the summary does not count the process records: $(grep 'GPU metrics:' "$T/pm.err")"
	# Perfetto: a counter track in the workload's process track
	"$GTRACE" export "$T/pm.gtrace" -f perfetto -o "$T/pm.pftrace" 2> "$T/pm.xerr" ||
		fatal "export -f perfetto failed: $(head -n 3 "$T/pm.xerr" | tr '\n' '|')"
	python3 - "$ROOT/tools" "$T/pm.pftrace" "$pid" "$n" <<- 'EOF' || err "no counter track 'GPU 0 memory (B)' in the workload's process track holding its values"
		import struct, sys
		sys.path.insert(0, sys.argv[1])
		import perfetto_lint as pl
		data, pid, n = open(sys.argv[2], "rb").read(), int(sys.argv[3]), int(sys.argv[4])
		s = pl.lint_bytes(data)
		proc = [p for p in s["processes"] if p["pid"] == pid]
		mem = [o for o in s["other"] if o["name"] == "GPU 0 memory (B)"]
		assert len(proc) == 1 and len(mem) == 1, (proc, mem)
		assert mem[0]["parent"] == proc[0]["uuid"], "its parent is not the process track"
		vals = []
		for _, pkt in pl.packets(data):
		    for f, _, v in pl.fields(pkt):
		        if f != 11:  # TracePacket.track_event
		            continue
		        track = val = None
		        for ff, _, vv in pl.fields(v):
		            if ff == 11:  # track_uuid
		                track = vv
		            elif ff == 44:  # double_counter_value
		                val = struct.unpack("<d", struct.pack("<Q", vv))[0]
		        if track == mem[0]["uuid"]:
		            vals.append(val)
		assert len(vals) == n and set(vals) == {123456789.0}, vals
	EOF
	# JSON: counters of the workload's process
	"$GTRACE" export "$T/pm.gtrace" -f json -o "$T/pm.json" 2> /dev/null || fatal "export -f json failed"
	[ "$(jq --argjson p "$pid" '[.traceEvents[] | select(.ph == "C" and .name == "GPU 0 memory (B)" and .pid == $p)] | length' "$T/pm.json")" -eq "$n" ] ||
		err "the JSON does not hold $n counters 'GPU 0 memory (B)' of pid $pid"
}

# A listing that takes 400 ms, on its own thread: the 20 Hz rounds keep
# their rate and the workload makes all its launches at its rate.
t_procs_slow() {
	local want got
	GTRACE_MOCK_NVML_PROCS_DELAY_MS=400 rec_procs ps 3 4096 --gpu-metrics=20
	python3 - "$T/ps.dump" <<- 'EOF' || err "a slow process listing slowed the 20 Hz samples"
		import json, sys
		ts = [r["ts"] for r in map(json.loads, open(sys.argv[1]))
		      if r.get("type") == "gpu_metric" and r["device"] == 0 and r["metric"] == "gpu_util"]
		rate = (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9)
		print("%d samples at %.2f Hz beside 400 ms listings" % (len(ts), rate), file=sys.stderr)
		assert 16 <= rate <= 24, rate
	EOF
	[ "$(jq -r 'select(.type == "gpu_metric" and .metric == "proc_mem_used") | .ts' "$T/ps.dump" | wc -l)" -ge 2 ] ||
		err "the slow listing gave fewer than 2 process samples"
	want=$(grep '^{' "$T/ps.out" | tail -n 1 | jq '[.launches[]] | add')
	got=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/ps.dump")
	[ "$got" -eq "$want" ] || err "launches: $got recorded of the workload's $want"
	# the flood kept its 200 a second
	[ "$want" -ge 540 ] || err "the workload made $want launches in 3 s at 200/s"
}

# --cupti over the mock CUPTI (GT_MOCK_INJECTION=1), kernels of 480 ms
# launched every 500 ms (no copies before them, which the mock's serial GPU
# would run first, 480 ms each), the workload listed by NVML on GPU 0: the kernel
# rows of gpu_metrics_sum are exactly the samples whose interval's GPU time
# was at least 95 % one kernel's (every GPU record clipped to the interval),
# worked out again here from dump; each of the workload's three kernels has
# 3 sm_active samples or more.
t_sole() {
	[ -f "$AGENT" ] && ls "$CUPTI_MOCK"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($AGENT, $CUPTI_MOCK): build them with make cupti-mock (needs cupti.h)"
	GT_MOCK_INJECTION=1 LD_LIBRARY_PATH=$CUPTI_MOCK GT_MOCK_GPU_NS=480000000 WL_ARGS="--rate 2 --copies 0" \
		rec_procs so 5 1048576 --gpu-metrics=20 --cupti --cupti-lib "$AGENT"
	"$GTRACE" stats "$T/so.gtrace" -r gpu_metrics_sum --format json > "$T/so.json" 2> "$T/so.serr" ||
		fatal "stats -r gpu_metrics_sum failed: $(head -n 3 "$T/so.serr" | tr '\n' '|')"
	"$GTRACE" stats "$T/so.gtrace" -r gpu_metrics_sum > "$T/so.txt" 2>&1
	python3 - "$T/so.dump" "$T/so.json" <<- 'EOF' || err "the kernel rows are not the samples each kernel was 95 % of"
		import collections, json, sys
		recs = list(map(json.loads, open(sys.argv[1])))
		work = [(r["ts"], r["ts"] + r["dur"], r.get("kernel") if r["type"] == "gpu_kernel" else None)
		        for r in recs if r.get("type") in ("gpu_kernel", "gpu_memcpy", "gpu_memset")]
		assert len([w for w in work if w[2]]) >= 8, "too few kernels: %d" % len(work)
		gpm = {"sm_active", "sm_occupancy", "tensor_active", "fp16_active", "fp32_active", "fp64_active",
		       "int_active", "dram_bw", "pcie_tx", "pcie_rx", "nvlink_tx", "nvlink_rx"}
		skip = {"mem_total", "throttle_reasons", "proc_mem_used", "gpu_lost"}
		series = collections.defaultdict(list)
		for r in recs:
		    if r.get("type") == "gpu_metric" and r["device"] == 0 and r["metric"] not in skip:
		        series[r["metric"]].append(r["ts"])
		want = collections.Counter()
		for m, ts in series.items():
		    ts.sort()
		    for a, t in zip(ts, ts[1:]):
		        lo = a if m in gpm or t - a >= 10**9 else max(t - 10**9, 0)
		        ns = collections.Counter()
		        for s, e, k in work:
		            if s < t and e > lo:
		                ns[k] += min(e, t) - max(s, lo)
		        top = max(((n, k) for k, n in ns.items() if k), default=None)
		        if top and top[0] > 0 and top[0] * 100 >= sum(ns.values()) * 95:
		            want[(top[1], m)] += 1
		want = {k: n for k, n in want.items() if n >= 3}
		rows = [r for r in json.load(open(sys.argv[2]))["reports"][0]["rows"] if r["scope"] == "kernel"]
		got = {(r["of"], r["metric"]): r["samples"] for r in rows}
		assert all(r["attribution"] == "sole occupancy (>= 95 %)" and r["gpu"] == 0 for r in rows), rows
		assert got == want, (sorted(got.items()), sorted(want.items()))
		names = {k for k, m in got if m == "sm_active"}
		print("kernel rows: %d; sm_active samples by kernel: %s" % (len(rows), sorted(
		      (k, n) for (k, m), n in got.items() if m == "sm_active")), file=sys.stderr)
		assert len(names) == 3, names
	EOF
	grep -q "sole occupancy: that kernel was at least 95 % of the GPU's work in the sample's interval" "$T/so.txt" ||
		err "the table has no note saying what sole occupancy is"
}

# sms_of NAME [ARGS...]: analyze of $T/NAME.gtrace (ARGS added) as JSON
# into $T/NAME.az; prints its SM count, whether it was assumed and the
# small grids: "132 false 400".
sms_of() {
	gtrace_ok "$T/$1.az" analyze "$T/$1.gtrace" --format json "${@:2}"
	# every launch small: "all" (the flood's launch count follows its
	# clock: 197 of a second's 200 in a sanitized run)
	jq -r '[.scopes[] | select(.kind == "process")][0] | "\(.parallelism.sm_count) \(.parallelism.sm_assumed) \(if .parallelism.small_kernels > 0 and .parallelism.small_kernels == .work.launches then "all" else .parallelism.small_kernels end)"' "$T/$1.az"
}

# sms_notes NAME: the notes of $T/NAME.az that speak of SMs, one a line.
sms_notes() {
	jq -r '.notes[] | select(test("SM"))' "$T/$1.az"
}

# sms_keys NAME [PATTERN]: the header keys of $T/NAME.gtrace matching
# PATTERN (default the SM counts and their sources), space-separated.
sms_keys() {
	"$GTRACE" dump --summary "$T/$1.gtrace" | grep -o "${2:-gpu_metrics_dev[0-9]*_sms[^ ]*}" | tr '\n' ' '
}

# sms_judged NAME WANT WHAT: analyze of $T/NAME.gtrace without --sms gives
# WANT (sms_of's "132 false all") and no note on SMs.
sms_judged() {
	local got
	got=$(sms_of "$1")
	[ "$got" = "$2" ] || err "$3: analyze's SMs, assumed, small grids: got '$got', expected '$2'"
	[ -z "$(sms_notes "$1")" ] || err "$3: a note on SMs: $(sms_notes "$1")"
}

# Each GPU's SM count in the header with its source
# (nvmlDeviceGetAttributes_v2; where that fails, as on driver 580's whole
# GPUs, the CUDA cores over the architecture's cores per SM), and what
# analyze (and report's analysis) judges grids against without --sms: the
# GPUs' count; the smallest when they differ, said in a note; the assumed
# 40 when NVML gave none (both calls failing, an Ampere GPU, cores not a
# multiple of the cores per SM). The workload's grids of 120 blocks are
# small on 132 SMs, not on 114 or 7. A merged trace (--cupti over the mock
# CUPTI) keeps the counts.
t_sms() {
	local got sum kernels small want
	GTRACE_MOCK_NVML_SMS=132,132 WL_ARGS="--rate 200 --grid 120" rec same 1
	sum=$(sms_keys same 'gpu_metrics[^ ]*')
	[ "$sum" = "gpu_metrics=10 gpu_metrics_devs=2 gpu_metrics_dev0=0xfff03ff gpu_metrics_dev0_sms=132 gpu_metrics_dev0_sms_from=attributes gpu_metrics_dev1=0x3ff gpu_metrics_dev1_sms=132 gpu_metrics_dev1_sms_from=attributes " ] ||
		err "same counts: the header's GPU options are [$sum]"
	sms_judged same "132 false all" "same counts"
	jq -r '[.scopes[] | select(.kind == "process")][0].answers.parallelism' "$T/same.az" | grep -Eq "([0-9,]+) of \\1 launches had grids of fewer blocks than the GPU's 132 SMs" ||
		err "the parallelism answer does not judge against 132 SMs: $(jq -r '[.scopes[] | select(.kind == "process")][0].answers.parallelism' "$T/same.az")"
	gtrace_ok "$T/same.txt" analyze "$T/same.gtrace"
	grep -q 'small grids (under 132 SMs, ' "$T/same.txt" || err "the table does not say 132 SMs: $(grep 'small grids' "$T/same.txt")"
	grep -q 'assumes 40' "$T/same.txt" && err "the table still says small_grid assumes 40"
	got=$(sms_of same --sms 7)
	[ "$got" = "7 false 0" ] || err "--sms 7: got '$got', expected '7 false 0'"
	[ -z "$(sms_notes same)" ] || err "--sms 7: a note on SMs: $(sms_notes same)"
	# report's analysis is analyze's
	gtrace_ok "$T/same.html.out" report "$T/same.gtrace" -o "$T/same.html"
	got=$(page_data "$T/same.html" | jq -r '[.analyze.scopes[] | select(.kind == "process")][0].parallelism | "\(.sm_count) \(.sm_assumed) \(.small_kernels)"')
	want="132 false $(jq -r '[.scopes[] | select(.kind == "process")][0].work.launches' "$T/same.az")"	# every launch small
	[ "$got" = "$want" ] || err "report's analysis: got '$got', expected '$want'"

	# the mock's own, different counts: the smallest, said
	WL_ARGS="--rate 200 --grid 120" rec differ 1
	got=$(sms_of differ)
	[ "$got" = "114 false 0" ] || err "different counts: got '$got', expected '114 false 0'"
	got=$(sms_notes differ)
	[ "$got" = "GPUs of different SM counts (132, 114): small_grid uses 114; give --sms N" ] ||
		err "different counts: the notes on SMs are [$got]"

	# the H200 on driver 580: GPU 0's attributes fail, its 16896 Hopper
	# cores make 132 SMs; GPU 1's attributes say 132
	GTRACE_MOCK_NVML_SMS=-132,132 GTRACE_MOCK_NVML_CORES=16896 WL_ARGS="--rate 200 --grid 120" rec cores 1
	sum=$(sms_keys cores)
	[ "$sum" = "gpu_metrics_dev0_sms=132 gpu_metrics_dev0_sms_from=cores gpu_metrics_dev1_sms=132 gpu_metrics_dev1_sms_from=attributes " ] ||
		err "attributes failing, 16896 Hopper cores: the header's SM keys are [$sum]"
	sms_judged cores "132 false all" "SMs from the cores"

	# no count from the cores: GPU 0 Ampere (8448 cores, 132 SMs of 64,
	# but 64 or 128 a SM on Ampere), GPU 1 Hopper of 14600 cores (not a
	# multiple of 128)
	GTRACE_MOCK_NVML_SMS=-,- GTRACE_MOCK_NVML_ARCH=7 GTRACE_MOCK_NVML_CORES=,14600 \
		WL_ARGS="--rate 200 --grid 120" rec nocores 1
	[ -z "$(sms_keys nocores)" ] ||
		err "an SM count in the header from an Ampere GPU's or an odd count of cores: $(sms_keys nocores)"

	# NVML gives none (attributes and cores fail): no key, the assumption
	# and its note
	GTRACE_MOCK_NVML_SMS=-,- GTRACE_MOCK_NVML_CORES=-,- WL_ARGS="--rate 200 --grid 120" rec none 1
	[ -z "$(sms_keys none)" ] || err "an SM count in the header though NVML gave none: $(sms_keys none)"
	for n in none nocores; do
		got=$(sms_of $n)
		[ "$got" = "40 true 0" ] || err "$n: got '$got', expected '40 true 0'"
		got=$(sms_notes $n)
		[ "$got" = "the trace does not say how many SMs the GPU has: small_grid assumes 40 (give --sms N)" ] ||
			err "$n: the notes on SMs are [$got]"
	done

	# merged: the header's counts kept beside cupti=merged
	[ -f "$AGENT" ] && ls "$CUPTI_MOCK"/libcupti.so.* > /dev/null 2>&1 ||
		fatal "cannot run: no CUPTI agent or mock ($AGENT, $CUPTI_MOCK): build them with make cupti-mock (needs cupti.h)"
	GTRACE_MOCK_NVML_SMS=132,132 GT_MOCK_INJECTION=1 LD_LIBRARY_PATH=$CUPTI_MOCK GT_MOCK_GPU_NS=100000 \
		WL_ARGS="--rate 200 --grid 120 --copies 0" rec merged 1 --cupti --cupti-lib "$AGENT"
	grep -q 'merged .* GPU records' "$T/merged.err" || fatal "no merge: $(tail -n 3 "$T/merged.err" | tr '\n' '|')"
	sum=$(sms_keys merged 'gpu_metrics_dev[0-9]*_sms[^ ]*\|cupti=[^ ]*')
	[ "$sum" = "gpu_metrics_dev0_sms=132 gpu_metrics_dev0_sms_from=attributes gpu_metrics_dev1_sms=132 gpu_metrics_dev1_sms_from=attributes cupti=merged " ] ||
		err "the merged trace's header: [$sum], expected both SM counts and cupti=merged"
	got=$(sms_of merged)
	[ "${got% *}" = "132 false" ] || err "merged: got '$got', expected 132 SMs, not assumed"
	[ "$(jq -r '.merged' "$T/merged.az")" = true ] || err "the merged trace was analyzed as not merged"
	# every kernel on the GPU had the launches' 120 blocks
	kernels=$(jq -r '[.scopes[] | select(.kind == "process")][0].work.kernels' "$T/merged.az")
	small=$(jq -r '[.scopes[] | select(.kind == "process")][0].parallelism.small_kernels' "$T/merged.az")
	[ "$kernels" -ge 100 ] && [ "$small" = "$kernels" ] ||
		err "merged: $small small kernels of $kernels on the GPU, all of 120 blocks under 132 SMs"
}

# The daemon: status has the sampler's figures, its CPU time measured; its
# overhead records carry it apart from the estimate: with no workload the
# estimate is of the machine's other processes only (their scheduler and
# ioctl records), far below the 100 Hz sampler's CPU, which it would exceed
# if it held it.
# GTRACE_GPUM_BURST (the benchmarks' knob): samples only in the first ON ms
# of every PERIOD ms; a malformed value is said and ignored.
t_burst() {
	local missed
	GTRACE_GPUM_BURST=200/600 rec b 2 --gpu-metrics=100
	grep -q "GPU metrics sampled only in the first 200 ms of every 600 ms (GTRACE_GPUM_BURST)" "$T/b.err" ||
		err "no line naming the burst schedule: $(grep -i 'gpu metrics' "$T/b.err" | tr '\n' '|')"
	missed=$(sed -n 's/.*GPU metrics: [0-9]* samples, \([0-9]*\) missed (the sampler late).*/\1/p' "$T/b.err")
	[ -n "$missed" ] || fatal "no summary line of the sampler: $(grep -i 'gpu metrics' "$T/b.err" | tr '\n' '|')"
	python3 - "$T/b.dump" "$missed" <<- 'EOF' || err "the samples are not in bursts of 200 ms every 600 ms"
		import json, math, sys
		ts = sorted(set(r["ts"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "gpu_metric"
		                and r["metric"] == "gpu_util"))
		# a burst's samples lie in the first 200 ms of its period, 400 ms
		# without any follow: samples under 300 ms apart are one burst,
		# however long the sampler stalled inside it (CI: 150 ms once)
		bursts = [[ts[0]]]
		for a, b in zip(ts, ts[1:]):
		    (bursts[-1].append(b) if b - a < 300e6 else bursts.append([b]))
		full = bursts[:-1]	# the last may be cut by the end
		print("%d bursts: %s samples, spans %s ms" % (len(bursts), [len(x) for x in bursts],
		      [round((x[-1] - x[0]) / 1e6) for x in bursts]), file=sys.stderr)
		assert len(full) >= 2, "fewer than 3 bursts"
		# a sample is due every 10 ms while the burst is on; a loaded machine
		# takes it late by up to L, which the bursts' own intervals show (the
		# longest one past its 10 ms)
		late = max([max(0, b - a - 10e6) for x in bursts for a, b in zip(x, x[1:])] + [0])
		# the schedule's origin: the burst start earliest in the 600 ms period
		# (a burst's first sample may be taken late too, and then the burst
		# has only the rest of its 200 ms)
		P, ON = 600e6, 200e6
		ref = bursts[0][0]
		d = [((x[0] - ref + P / 2) % P) - P / 2 for x in bursts]
		origin = ref + min(d)
		phase = lambda t: (t - origin) % P
		print("lateness %.1f ms, burst starts at %s ms of the period" % (late / 1e6,
		      [round(phase(x[0]) / 1e6) for x in bursts]), file=sys.stderr)
		assert all(phase(t) <= ON + late for t in ts), "a sample in the off part of the period: %s ms" % \
		       [round(phase(t) / 1e6) for t in ts if phase(t) > ON + late][:8]
		# a burst begun at phase s holds the ticks of s .. 200 ms, (200 - s) / 10
		# of them, less those a late sample skipped: it samples to its end
		for x in full:
		    due = math.ceil((ON - phase(x[0])) / 10e6)	# the 10 ms grid from where it began
		    skipped = sum(max(0, round((b - a) / 10e6) - 1) for a, b in zip(x, x[1:]))
		    assert due - skipped - 2 <= len(x) <= due + 1, "%d samples (%d ticks skipped) in a burst begun %d ms into its 200 ms" % \
		           (len(x), skipped, phase(x[0]) / 1e6)
		# at 100 Hz: every round of the full bursts taken, or counted missed
		# by the sampler (a late sampler's own count, not this machine's guess)
		due = sum(math.ceil((ON - phase(x[0])) / 10e6) for x in full)
		got, missed = sum(len(x) for x in full), int(sys.argv[2])
		assert got + missed >= due - 2 * len(full), "%d samples and %d missed where %d were due at 100 Hz" % \
		       (got, missed, due)
	EOF
	GTRACE_GPUM_BURST=600/200 rec bb 1 --gpu-metrics=20
	grep -q "warning: GTRACE_GPUM_BURST=600/200 ignored: it takes ON_MS/PERIOD_MS, 0 < ON < PERIOD" "$T/bb.err" ||
		err "a malformed GTRACE_GPUM_BURST not said: $(grep -i 'burst' "$T/bb.err" | tr '\n' '|')"
	# sampled as without it: 20 Hz over the sampler's time, each round taken or counted missed
	awk '/GPU metrics: [0-9]+ samples, [0-9]+ missed/ { for (i = 1; i < NF; i++) if ($(i + 1) == "samples,") s = $i;
		else if ($(i + 1) == "missed") m = $i; else if ($i == "in" && $(i + 2) == "s") w = $(i + 1) }
		END { exit !(s != "" && s + m >= w * 20 - 3) }' "$T/bb.err" ||
		err "a malformed GTRACE_GPUM_BURST changed the sampling: $(grep 'GPU metrics: [0-9]' "$T/bb.err")"
	[ "$(samples "$T/bb.dump" 0 gpu_util | wc -l)" -ge 1 ] || err "a malformed GTRACE_GPUM_BURST stopped sampling"
}

t_status() {
	local ms pct up
	GTRACE_NVML_LIB=$NVML_MOCK start_daemon --mode full --gpu-metrics=100
	sleep 6
	"$GTRACE" status -v > "$T/st" 2>&1 || fatal "status failed: $(cat "$T/st")"
	"$GTRACE" status --json > "$T/st.json" 2>&1 || fatal "status --json failed: $(cat "$T/st.json")"
	for k in "gpu_metrics_hz 100" "gpu_metrics_gpus 2" "gpu_metrics_mig 0" "gpu_metrics_lost 0" \
		 "gpu_metrics_errors 0" "gpu_metrics_dropped 0"; do
		grep -qx "$k" "$T/st" || err "status lacks '$k': $(grep '^gpu_metrics' "$T/st" | tr '\n' '|')"
	done
	ms=$(awk '$1 == "gpu_metrics_cpu_ms" { print $2 }' "$T/st")
	pct=$(awk '$1 == "gpu_metrics_cpu_pct" { print $2 }' "$T/st")
	up=$(awk '$1 == "uptime_s" { print $2 }' "$T/st")
	awk -v m="$ms" -v p="$pct" -v u="$up" 'BEGIN { exit !(m > 0 && p > 0 && p < 100 && m / 1000 / u * 100 <= p * 1.5 + 0.01) }' ||
		err "status: gpu_metrics_cpu_ms $ms, gpu_metrics_cpu_pct $pct over ${up} s do not agree"
	[ "$(awk '$1 == "gpu_metrics_samples" { print $2 }' "$T/st")" -ge 400 ] ||
		err "status: $(grep gpu_metrics_samples "$T/st") after 6 s at 100 Hz"
	jq -e '(.gpu_metrics_cpu_pct | type) == "number" and .gpu_metrics_hz == 100' "$T/st.json" > /dev/null ||
		err "status --json lacks the sampler's figures: $(jq -c 'with_entries(select(.key | startswith("gpu_metrics")))' "$T/st.json")"
	SNAP=$("$GTRACE" snapshot 2> "$T/snap.err") || fatal "snapshot failed: $(cat "$T/snap.err")"
	stop_daemon
	dump_trace "$SNAP" "$T/sn.dump"
	jq -e -s '[.[] | select(.type == "overhead" and .interval_ns > 0)] | length >= 1 and all(.sampler_ppm > 0 and .estimate_ppm * 4 < .sampler_ppm)' "$T/sn.dump" > /dev/null ||
		err "the overhead records do not carry the sampler apart from the estimate: $(jq -c 'select(.type == "overhead") | [.reason, .interval_ns, .estimate_ppm, .sampler_ppm]' "$T/sn.dump" | tr '\n' ' ')"
	[ "$(jq -s '[.[] | select(.type == "gpu_metric" and .metric == "gpu_util")] | length' "$T/sn.dump")" -ge 400 ] ||
		err "the snapshot holds too few samples"
	grep -Eq 'overhead \(estimated\): .*; the GPU-metrics sampler [0-9.]+% of one CPU on average \(measured: the recorder.s own threads, not in the estimate\)$' "$T/daemon.err" ||
		err "the daemon's last overhead line does not give the sampler's figure: $(grep 'overhead (estimated)' "$T/daemon.err")"
}

add_case t_rate "--gpu-metrics=20: samples at 20 Hz (within 20 %), a round's records at one timestamp, the summary line"
add_case t_values "the mock NVML's scripted values exactly in dump; GPU 1 (no GPM) the basic nine; the probe in the header"
add_case t_perfetto "Perfetto: one counter value per sample, the values of dump, on tracks per GPU and metric"
add_case t_stats "stats -r gpu_metrics_sum: count, mean, p50, p95, max of every GPU's metric as the samples give"
add_case t_errors "NVML failing mid-run: read errors counted, the other metrics and the recording go on"
add_case t_lost "a GPU falling off mid-run (GPU_IS_LOST): one line, counted, one gpu_lost record, nothing of it after, the rest recorded"
add_case t_mig "a GPU in MIG mode: said, in the header, sampled for what still works, counted"
add_case t_procs "each process' memory at ~1 Hz with its pid: dump, a counter in its Perfetto process track, JSON counters"
add_case t_procs_slow "a 400 ms process listing on its own thread: the 20 Hz rate and the workload's launches unchanged"
add_case t_sole "--cupti over the mock CUPTI: gpu_metrics_sum's kernel rows are the samples each kernel was at least 95 % of the GPU's work in, worked out again from dump"
add_case t_status "daemon status and overhead records: the sampler's measured CPU apart from the probes' estimate, its last line"
add_case t_burst "GTRACE_GPUM_BURST=200/600 at 100 Hz: bursts of ~20 samples 400 ms apart; a malformed value said and ignored"
add_case t_sms "each GPU's SM count in the header with its source (attributes; the cores over the cores per SM where they fail, none for Ampere or an odd count); analyze and report judge grids against it without --sms (the smallest when they differ, said; 40 assumed when none), --sms wins; kept by the merge"
add_case t_no_nvml "no NVML library: one info line, the recording as usual, no samples"
add_case t_modes "light mode samples only with --gpu-metrics; --gpu-metrics=off samples nothing"
add_case t_bad "--gpu-metrics=0, 1001, ten, -1, 5x, empty: status 2, one line, no trace; daemon too"
run_cases "$@"
