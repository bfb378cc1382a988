#!/usr/bin/env bash
# Extra CUPTI agent checks on the GPU machine (static gtrace-bpf in the repo
# root): the idle agent's cost on a launch loop (CUDA_INJECTION64_PATH set,
# no recording), the recording agent's cost, and NVTX ranges from PyTorch.
set -u
CUDA=${CUDA_HOME:-/usr/local/cuda}
W=$(mktemp -d /tmp/gtrace-cx.XXXXXX)
B=./gtrace-bpf
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread -o "$W/agent.so" || exit 1
"$CUDA/bin/nvcc" -O2 -o "$W/loop" tools/bench/workload.cu -L"$CUDA/lib64/stubs" -lcuda || exit 1
mkdir -p "$W/spool"
for r in 1 2 3 4 5 6 7; do
	for c in none idle rec; do
		case $c in
		none) v=$("$W/loop" launch 200000) ;;
		idle) v=$(CUDA_INJECTION64_PATH="$W/agent.so" "$W/loop" launch 200000) ;;
		rec) rm -f "$W/spool"/*; v=$(CUDA_INJECTION64_PATH="$W/agent.so" GTRACE_CUPTI_DIR="$W/spool" "$W/loop" launch 200000) ;;
		esac
		echo "$r $c $(echo "$v" | grep -o '"ns_per_op":[0-9.]*' | cut -d: -f2)"
	done
done > "$W/rows"
python3 - "$W/rows" <<'PY'
import statistics, sys
by = {}
for l in open(sys.argv[1]):
    r, c, v = l.split()
    by.setdefault(c, []).append(float(v))
base = statistics.median(by["none"])
for c, v in by.items():
    m = statistics.median(v)
    print(f"INFO agent {c:5}: median {m:7.1f} ns/launch ({min(v):.1f}..{max(v):.1f}), added {m - base:+7.1f} ns, {len(v)} rounds")
PY
cat > "$W/nvtx.py" <<'PY'
import torch
x = torch.randn(256, 256, device="cuda")
for i in range(20):
    torch.cuda.nvtx.range_push(f"step {i}")
    with torch.cuda.nvtx.range("matmul"):
        y = x @ x
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("done")
PY
"$B" -q --cupti --cupti-lib "$W/agent.so" -o "$W/n.gtrace" -- python3 "$W/nvtx.py" > /dev/null 2> "$W/n.err"
echo "INFO nvtx run: exit $?; $(tail -1 "$W/n.err")"
"$B" dump "$W/n.gtrace" | python3 -c "
import sys, json, collections
ev = [json.loads(l) for l in sys.stdin]
n = [e for e in ev if e['type'] == 'nvtx']
c = collections.Counter(e['name'].split(' ')[0] for e in n)
ok = c.get('step', 0) == 20 and c.get('matmul', 0) == 20 and all(e['dur'] > 0 for e in n)
print(('PASS' if ok else 'FAIL') + ' nvtx ranges: %d (%s), all with a duration: %s' % (len(n), dict(c), all(e['dur'] > 0 for e in n)))
"
"$B" stats "$W/n.gtrace" -r nvtx_sum | head -8
rm -rf "$W"
