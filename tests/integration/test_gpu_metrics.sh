#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --gpu-metrics against the mock NVML (tests/mock/libnvml_mock.c, loaded
# through GTRACE_NVML_LIB): samples at the rate asked (within 20 %), the
# mock's scripted values exactly in dump (GPU 0 with GPM, GPU 1 without),
# Perfetto counter tracks holding them, gpu_metrics_sum's figures equal to
# the statistics of the samples, NVML errors mid-run counted with the
# recording going on; no NVML library: one info line, the recording as
# usual, no samples; light mode samples only when asked; bad rates: status
# 2 and one line.
#
# The mock's script: gpu_util of GPU d, its call k (the probe is k = 0):
# 10 * (k % 4 + 1) + d; mem_util 25; mem used (d + 1) GiB of 80 GiB; clocks
# 1980 / 2619 MHz; power 350.123 W; temperature 45 + d; throttle reasons 4;
# GPM (GPU 0): sm_active 50.5, sm_occupancy 25.25, tensor_active 87.125,
# fp16 1.5, fp32 2.5, fp64 3.5, int 4.5, dram_bw 15.75 %; PCIe tx 100.5, rx
# 200.25, NVLink tx 300, rx 400 MiB/s.
REQUIRES="root jq mock gtrace python3"
. "$(dirname "$0")/lib.sh"

NVML_MOCK=$MOCK_DIR/nvml/libnvidia-ml.so.1

# rec NAME SECONDS [OPTIONS...]: records the workload flooding for SECONDS
# into $T/NAME.gtrace with the mock NVML, dumps it into $T/NAME.dump; the
# recorder's stderr in $T/NAME.err.
rec() {
	local name=$1 secs=$2 rc
	shift 2
	[ -f "$NVML_MOCK" ] || fatal "no mock NVML at $NVML_MOCK (make mock)"
	GT_LIBCUDA=$MOCK_LIB GTRACE_NVML_LIB=${NVML:-$NVML_MOCK} \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/$name.gtrace" --force "$@" -- "$WORKLOAD" \
		--flood "$secs" --rate 200 > "$T/$name.out" 2> "$T/$name.err"
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
	grep -q '^gtrace-bpf: GPU metrics: 2 GPUs at 20 Hz$' "$T/a.err" ||
		err "no line 'GPU metrics: 2 GPUs at 20 Hz': $(grep -i 'gpu metrics' "$T/a.err" | tr '\n' '|')"
	grep -q '^gtrace-bpf: GPU metrics: [0-9]* samples, [0-9]* records, 0 read errors, 0 dropped$' "$T/a.err" ||
		err "no summary line with 0 errors and 0 dropped: $(grep -i 'gpu metrics' "$T/a.err" | tr '\n' '|')"
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
	grep -q 'gpu_metrics=10 gpu_metrics_devs=2 gpu_metrics_dev0=0xfff01ff gpu_metrics_dev1=0x1ff' "$T/v.sum" ||
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
		rows = json.load(open(sys.argv[2]))["reports"][0]["rows"]
		assert len(rows) == len(series) == 9 + 12 + 9, (len(rows), len(series))
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
	grep -q 'GPU metrics: [0-9]* samples, [0-9]* records, [1-9][0-9]* read errors' "$T/e.err" ||
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

add_case t_rate "--gpu-metrics=20: samples at 20 Hz (within 20 %), a round's records at one timestamp, the summary line"
add_case t_values "the mock NVML's scripted values exactly in dump; GPU 1 (no GPM) the basic nine; the probe in the header"
add_case t_perfetto "Perfetto: one counter value per sample, the values of dump, on tracks per GPU and metric"
add_case t_stats "stats -r gpu_metrics_sum: count, mean, p50, p95, max of every GPU's metric as the samples give"
add_case t_errors "NVML failing mid-run: read errors counted, the other metrics and the recording go on"
add_case t_no_nvml "no NVML library: one info line, the recording as usual, no samples"
add_case t_modes "light mode samples only with --gpu-metrics; --gpu-metrics=off samples nothing"
add_case t_bad "--gpu-metrics=0, 1001, ten, -1, 5x, empty: status 2, one line, no trace; daemon too"
run_cases "$@"
