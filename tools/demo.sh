#!/usr/bin/env bash
# The main job, for a fresh Debian 12 machine as root: installs what gtrace-bpf
# needs to build and run (not the test tools), builds it, traces the bundled
# demo workload, prints a summary, the statistics and analyze's answers, and
# writes the offline HTML report.
# On a machine with an NVIDIA GPU the workload runs on the real driver;
# without one it runs against the mock libcuda of tests/mock, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --run
make -j"$(nproc)" >/dev/null
make mock >/dev/null
mkdir -p demo-output
trace=demo-output/demo.gtrace
args=(--launches 200 --copies 10 --syncs 5)
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	echo "demo: tracing the bundled workload on the real GPU: $gpu"
	cupti=()
	# GPU-side kernel times too, when the CUPTI agent could be built
	[ -f .output/libgtrace-cupti.so ] && cupti=(--cupti)
	./gtrace-bpf -o "$trace" --force "${cupti[@]}" -- .output/mock/cuda_workload "${args[@]}"
else
	echo "demo: no NVIDIA GPU here: tracing the bundled workload against the MOCK libcuda"
	echo "demo: (tests/mock/libcuda_mock.c, a stand-in with the real signatures, no GPU work)"
	LD_LIBRARY_PATH=$PWD/.output/mock ./gtrace-bpf -o "$trace" --force \
		--libcuda .output/mock/libcuda.so.1 -- .output/mock/cuda_workload "${args[@]}"
fi
echo
echo "demo: summary of $trace"
./gtrace-bpf dump --summary "$trace"
echo
echo "demo: the first launches (gtrace-bpf dump $trace):"
./gtrace-bpf dump "$trace" > demo-output/demo.jsonl
grep -m3 '"type":"launch"' demo-output/demo.jsonl
echo
./gtrace-bpf stats "$trace"
echo
echo "demo: what bounds it, and what to fix (gtrace-bpf analyze $trace):"
./gtrace-bpf analyze "$trace"
echo
./gtrace-bpf report "$trace" -o demo-output/demo.html --force > /dev/null
echo "demo: the report, one self-contained page that needs no network:"
echo "demo:   $PWD/demo-output/demo.html"
echo "demo: (open it in any browser: timeline, charts, the answers above)"
