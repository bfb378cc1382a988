#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NCCL on the 1-GPU machine: a PyTorch process group of world size 1 over
# NCCL (tools/gpu/nccl_job.py allreduce) recorded with --cupti: the probes on
# the real libnccl (found when PyTorch loads it) must see exactly the loop's
# all-reduces with their count, type, op and device, the communicator's init
# (rank 0 of 1, a uid), the rank record from the environment, every call on
# device 0 and the NCCL kernels on the GPU.  Prints PASS/FAIL lines; files
# under $OUT/nccl_single.
# Usage: tools/gpu/nccl_single.sh [ITERS [NUMEL]]
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d)}
G=$PWD/gtrace-bpf
PY=${PYTHON:-python3}
iters=${1:-50}
numel=${2:-1048576}
d=$OUT/nccl_single
mkdir -p -m 0700 "$d"
agent=$(ls "$PWD"/.output/libgtrace-cupti.so "$PWD"/libgtrace-cupti.so 2> /dev/null | head -n 1)
[ -n "$agent" ] || { echo "FAIL nccl_single: no CUPTI agent (make cupti-agent)"; exit 1; }
env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 "$G" -v --cupti --cupti-lib "$agent" -o "$d/s.gtrace" -- \
	"$PY" tools/gpu/nccl_job.py allreduce "$iters" "$numel" > "$d/job.out" 2> "$d/rec.err"
rc=$?
echo "record exit $rc; $(grep -E 'NCCL probes|libnccl' "$d/rec.err" | head -n 3 | tr '\n' ' ')"
grep -Eq 'attached [0-9]+ NCCL probes' "$d/rec.err" && echo "PASS nccl_single: probes attached to a libnccl" ||
	echo "FAIL nccl_single: no libnccl attached (a PyTorch with NCCL linked in statically has none: see $d/rec.err)"
"$G" dump "$d/s.gtrace" > "$d/s.jsonl" 2> "$d/dump.err" || { echo "FAIL nccl_single: dump failed"; exit 1; }
"$G" dump --summary "$d/s.gtrace" | sed -n '/^devices/,/^$/p;/^nccl/,/^$/p;/device_unknown/p;/nccl_comm_unknown/p'
"$G" stats "$d/s.gtrace" -r nccl_sum,cuda_device_sum > "$d/stats.txt" 2>&1
grep -A8 'NCCL Summary' "$d/stats.txt" | head -n 10
"$PY" tools/gpu/nccl_check.py single "$d/s.jsonl" "$d/job.out"
