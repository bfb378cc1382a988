#!/usr/bin/env bash
# What tracing costs a program, gtrace-bpf beside the tools users would
# otherwise pick. Run on the GPU machine from the repository root, with a
# static build at ./gtrace-bpf (`make STATIC=1` elsewhere):
#   tools/bench/overhead.sh [-r ROUNDS] [-w WORKLOADS] [-c CONFIGS]
# WORKLOADS (comma-separated, default all; tools/bench/workload.cu and
# tools/bench/torch_step.py):
#   launch   200,000 empty-kernel launches with <<<>>> (runtime API)
#   driver   200,000 launches through the driver API's cuLaunchKernel
#   sync     20,000 x (launch + cudaStreamSynchronize)
#   memcpy   500 round trips of 4 MiB (cudaMemcpy HtoD + DtoH, pinned)
#   streams  GPU-bound: 100 kernels of 1 ms on each of 4 streams
#   torch    200 steps of a launch-bound MLP training step (5-7 ms each here)
# CONFIGS (default: per workload, see wl_cfgs; -c replaces them for all):
#   none         the workload alone
#   bare         a bare counting uprobe on the workload's libcuda functions
#                (gtrace-bpf census --functions): the floor of any uprobe tracer
#   ebpf         gtrace-bpf --all, eBPF only, running beside the workload
#   ebpf_exit    the same with --launch-exit (launch durations and results)
#   gtrace_cupti gtrace-bpf --cupti -- CMD (eBPF + the CUPTI agent, merged)
#   gtrace_cupti_order  the same with GTRACE_CUPTI_API=none (no API records
#                of the launch calls: the merger links by launch order)
#   cupti_bare   a bare CUPTI agent: CONCURRENT_KERNEL only, records counted
#                (tools/bench/bare_cupti.c): the floor of any CUPTI tracer
#   nsys         nsys profile -t cuda (the nsys binary of the Nsight Compute
#                install; its other settings at their defaults)
#   torchprof    torch.profiler (CPU + CUDA activities), torch workload only
# Within each round every workload runs under every configuration, the
# configurations in a rotated order; workloads on CPUs WL_CPUS (default 2,3),
# recorders and nsys on TOOL_CPUS (default 4-7). Each workload times its own
# measured loop (after a warm-up), so start-up and attach are left out.
# Prints a table per workload: median time per operation, min..max over the
# rounds, added time and % over "none" (the median of the per-round
# differences), and the ratios the targets name.
# Raw rows (with each run's wall time in ms, start-up included) in
# $OUT/overhead.csv and logs in $OUT/overhead-logs.tgz when OUT is set;
# tools/bench/overhead_table.py prints the tables again from such a CSV.
set -u
cd "$(dirname "$0")/../.." || exit 2
rounds=5
wls=launch,driver,sync,memcpy,streams,torch
cfgs=
while getopts "r:w:c:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	w) wls=$OPTARG ;;
	c) cfgs=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-w WORKLOADS] [-c CONFIGS]" >&2; exit 2 ;;
	esac
done
B=$(readlink -f "${GTRACE:-./gtrace-bpf}")
CUDA=${CUDA_HOME:-/usr/local/cuda}
W=$(mktemp -d /tmp/gtrace-bench.XXXXXX)
LOGS=$W/logs
mkdir -p "$LOGS"
csv=${OUT:+$OUT/overhead.csv}
csv=${csv:-$W/overhead.csv}
WL="taskset -c ${WL_CPUS:-2,3}"
TOOL="taskset -c ${TOOL_CPUS:-4-7}"
LAUNCH_FNS=cuLaunchKernel,cuLaunchKernel_ptsz,cuLaunchKernelEx,cuLaunchKernelEx_ptsz

# builds: the workload, the bare CUPTI agent and gtrace-bpf's agent
"$CUDA/bin/nvcc" -O2 -o "$W/workload" tools/bench/workload.cu -L"$CUDA/lib64/stubs" -lcuda ||
	exit 1
gcc -O2 -shared -fPIC -I"$CUDA/include" tools/bench/bare_cupti.c -L"$CUDA/lib64" \
	-Wl,-rpath,"$CUDA/lib64" -lcupti -o "$W/bare_cupti.so" || exit 1
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread -o "$W/agent.so" || exit 1
NSYS=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -n 1)
NSYS=${NSYS:-$(command -v nsys)}
wl_cfgs() { # workload -> its configurations
	[ -n "$cfgs" ] && { echo "$cfgs"; return; }
	case $1 in
	launch | driver) echo none,bare,ebpf,ebpf_exit,gtrace_cupti,gtrace_cupti_order,cupti_bare,nsys ;;
	torch) echo none,bare,ebpf,gtrace_cupti,cupti_bare,nsys,torchprof ;;
	*) echo none,bare,ebpf,gtrace_cupti,cupti_bare,nsys ;;
	esac
}
echo "INFO $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1); kernel $(uname -r); $(nproc) CPUs; nsys: ${NSYS:-none}; $(date -u +%F)"

wl_cmd() { # workload -> its command line
	case $1 in
	launch) echo "$W/workload launch 200000" ;;
	driver) echo "$W/workload driver 200000" ;;
	sync) echo "$W/workload sync 20000" ;;
	memcpy) echo "$W/workload memcpy 500" ;;
	streams) echo "$W/workload streams 100" ;;
	torch) echo "python3 tools/bench/torch_step.py 200" ;;
	esac
}
wl_fns() { # workload -> the libcuda functions its loop calls (the bare probe's)
	case $1 in
	sync) echo "$LAUNCH_FNS,cuStreamSynchronize" ;;
	memcpy) echo "cuMemcpyHtoD_v2,cuMemcpyDtoH_v2" ;;
	*) echo "$LAUNCH_FNS" ;;
	esac
}

# record_beside LOG OPTS... -- CMD...: gtrace-bpf --all OPTS while CMD runs
record_beside() {
	local log=$1 rp i
	shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	$TOOL "$B" --all "${opts[@]}" -o "$W/all.gtrace" --force 2> "$log.rec" &
	rp=$!
	for i in $(seq 1 200); do grep -q 'recording to' "$log.rec" && break; sleep 0.05; done
	"$@"
	kill -INT $rp
	wait $rp
}

# nsys_run LOG ARGS...: nsys profile ARGS in its own process group, ended
# once the workload has printed its figure: the report step after it does
# not finish on a machine without the Nsight Systems host tools (it waits
# until killed), and a lingering nsys would run into the next measurement.
nsys_run() {
	local log=$1 np i
	shift
	setsid $TOOL "$NSYS" profile "$@" &
	np=$!
	for i in $(seq 1 1800); do
		grep -q '"ns_per_op"' "$log.out" 2> /dev/null && break
		kill -0 "$np" 2> /dev/null || break
		sleep 0.1
	done
	for i in $(seq 1 30); do # its own end, if it comes soon
		kill -0 "$np" 2> /dev/null || break
		sleep 0.1
	done
	kill -TERM -- -"$np" 2> /dev/null && sleep 1 && kill -KILL -- -"$np" 2> /dev/null
	wait "$np" 2> /dev/null
	return 0
}

run_one() { # workload config round -> prints ns per operation, or nothing
	local wl=$1 c=$2 log="$LOGS/$1.$2.$3" cmd
	read -r -a cmd <<< "$(wl_cmd "$wl")"
	cmd=($WL "${cmd[@]}")
	case $c in
	none) "${cmd[@]}" ;;
	bare) $TOOL "$B" census --functions "$(wl_fns "$wl")" -- "${cmd[@]}" ;;
	ebpf) record_beside "$log" -- "${cmd[@]}" ;;
	ebpf_exit) record_beside "$log" --launch-exit -- "${cmd[@]}" ;;
	gtrace_cupti)
		$TOOL "$B" -q --cupti --cupti-lib "$W/agent.so" -o "$W/cupti.gtrace" --force -- "${cmd[@]}" ;;
	gtrace_cupti_order)
		GTRACE_CUPTI_API=none $TOOL "$B" -q --cupti --cupti-lib "$W/agent.so" -o "$W/cupti.gtrace" \
			--force -- "${cmd[@]}" ;;
	cupti_bare) CUDA_INJECTION64_PATH=$W/bare_cupti.so "${cmd[@]}" ;;
	nsys)
		[ -n "$NSYS" ] || return 0
		rm -f "$W"/nsys.*
		nsys_run "$log" -t cuda -o "$W/nsys" --force-overwrite=true "${cmd[@]}" ;;
	torchprof) "${cmd[@]}" --profile ;;
	esac > "$log.out" 2> "$log.err"
	grep -o '"ns_per_op": *[0-9.]*' "$log.out" | tail -n 1 | sed 's/.*: *//'
}

# The tables, from the rows so far; also when the run is stopped (a time
# limit) part way: the rounds done are still worth reading.
summary() {
	python3 tools/bench/overhead_table.py "$csv"
	[ -n "${OUT:-}" ] && tar czf "$OUT/overhead-logs.tgz" -C "$W" logs
	rm -rf "$W"
}
trap 'echo "INFO stopped in round ${r:-0}: the tables hold the rounds done"; summary; exit 1' TERM INT

echo "round,workload,config,ns_per_op,wall_ms" > "$csv"
IFS=, read -r -a WLS <<< "$wls"
for r in $(seq 1 "$rounds"); do
	t0=$(date +%s)
	for wl in "${WLS[@]}"; do
		IFS=, read -r -a CFGS <<< "$(wl_cfgs "$wl")"
		n=${#CFGS[@]}
		for k in $(seq 0 $((n - 1))); do
			c=${CFGS[$(((k + r) % n))]}
			[ "$c" = torchprof ] && [ "$wl" != torch ] && continue
			t1=$(date +%s%N)
			v=$(run_one "$wl" "$c" "$r")
			echo "$r,$wl,$c,${v:-nan},$((($(date +%s%N) - t1) / 1000000))" >> "$csv"
			[ -n "$v" ] || echo "INFO no result: $wl under $c in round $r: $(tail -n 2 "$LOGS/$wl.$c.$r.err" | tr '\n' '|')"
		done
		# what the last eBPF recording of this workload held
		if [ "$r" -eq "$rounds" ] && [ -f "$W/all.gtrace" ]; then
			"$B" dump --summary "$W/all.gtrace" > "$LOGS/$wl.ebpf.summary" 2>&1
			echo "INFO $wl: last --all recording: $(awk '$1 == "total" { print $2 " calls" } $1 == "records_written" { print $2 " records" } $1 ~ /^drop_/ { d += $2 } END { print d + 0 " dropped" }' "$LOGS/$wl.ebpf.summary" | tr '\n' ' ')$(stat -c %s "$W/all.gtrace") bytes"
			rm -f "$W/all.gtrace"
		fi
	done
	echo "INFO round $r: $(($(date +%s) - t0)) s"
done
summary
