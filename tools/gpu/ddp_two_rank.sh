#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A two-rank DDP job on the 2-GPU machine (nvidia-h200-x2): torchrun
# --nproc-per-node 2 of tools/gpu/nccl_job.py ddp, rank SLOW_RANK sleeping
# SLOW_MS before every step, NVLink multicast off (NCCL_NVLS_ENABLE=0, as
# the machine's notes say), recorded with --cupti.  Checks: both ranks'
# rank records, inits, launches on their own device (none unknown), the
# same collectives in both (uid, number, api), NCCL kernels on each GPU,
# per-device GPU tracks and a communicator track in the Perfetto export,
# and analyze naming the slow rank (nccl_straggler there, nccl_wait on the
# other naming it, the wait near the planted sleep).  Prints PASS/FAIL
# lines; files under $OUT/ddp_two_rank.
# Usage: tools/gpu/ddp_two_rank.sh [STEPS [SLOW_RANK [SLOW_MS]]]
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d)}
G=$PWD/gtrace-bpf
PY=${PYTHON:-python3}
steps=${1:-40}
slow=${2:-1}
slow_ms=${3:-30}
d=$OUT/ddp_two_rank
mkdir -p -m 0700 "$d"
agent=$(ls "$PWD"/.output/libgtrace-cupti.so "$PWD"/libgtrace-cupti.so 2> /dev/null | head -n 1)
[ -n "$agent" ] || { echo "FAIL ddp_two_rank: no CUPTI agent (make cupti-agent)"; exit 1; }
ngpu=$(nvidia-smi -L 2> /dev/null | wc -l)
[ "$ngpu" -ge 2 ] || { echo "FAIL ddp_two_rank: needs 2 GPUs, nvidia-smi lists $ngpu"; exit 1; }
# each rank writes its JSON line to a file of its own (torchrun mixes stdout)
cat > "$d/rank.sh" <<RANK
#!/bin/sh
exec "$PY" "$PWD/tools/gpu/nccl_job.py" ddp "$steps" "$slow" "$slow_ms" > "$d/job.\$RANK.out"
RANK
chmod +x "$d/rank.sh"
env NCCL_NVLS_ENABLE=0 "$G" -v --cupti --cupti-lib "$agent" -o "$d/ddp.gtrace" -- \
	torchrun --standalone --nproc-per-node 2 --no-python "$d/rank.sh" > "$d/torchrun.out" 2> "$d/rec.err"
echo "record exit $?; $(grep -E 'NCCL probes' "$d/rec.err" | head -n 2 | tr '\n' ' ')"
"$G" dump "$d/ddp.gtrace" > "$d/ddp.jsonl" 2> "$d/dump.err" || { echo "FAIL ddp_two_rank: dump failed"; exit 1; }
"$G" dump --summary "$d/ddp.gtrace" | sed -n '/^devices/,/^$/p;/^nccl/,/^$/p;/device_unknown/p;/nccl_comm_unknown/p'
"$G" analyze "$d/ddp.gtrace" --format json -o "$d/analyze.json" --force 2> "$d/analyze.err" ||
	echo "FAIL ddp_two_rank: analyze failed: $(head -n 2 "$d/analyze.err")"
"$G" analyze "$d/ddp.gtrace" 2> /dev/null | grep -E 'rank|Communication|nccl_' | head -n 12
"$G" export "$d/ddp.gtrace" -f perfetto -o "$d/ddp.pftrace" --force 2> "$d/export.err" &&
	"$PY" tools/perfetto_lint.py --json "$d/ddp.pftrace" > "$d/lint.json" 2> "$d/lint.err" ||
	echo "FAIL ddp_two_rank: the Perfetto export or its lint failed: $(head -n 2 "$d/export.err" "$d/lint.err")"
"$G" stats "$d/ddp.gtrace" -r nccl_sum,cuda_device_sum > "$d/stats.txt" 2>&1
"$PY" tools/gpu/nccl_check.py ddp "$d/ddp.jsonl" "$d/analyze.json" "$d/lint.json" "$d/job.0.out" "$d/job.1.out"
