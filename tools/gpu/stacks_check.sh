#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --stacks sync on the GPU machine (issue 29's native part):
#  1. a CUDA C++ program built with frame pointers (nvcc -Xcompiler
#     -fno-omit-frame-pointer), synchronizing from sync_a <- step <- loop <-
#     main: each cuStreamSynchronize's stack names those functions, in order;
#     recorded again with the default (--stacks all in full mode), each
#     launch's stack names step <- loop <- main;
#  2. a PyTorch loop with torch.cuda.synchronize() at a known line: what the
#     native stacks name (libtorch is built without frame pointers: how far
#     they unwind is reported, not required) and analyze's sync_site;
#  3. the cost in one running process (tools/bench/inproc.py, the launch-bound
#     MLP step): --stacks sync against the same recorder without, paired per
#     round (ROUNDS, default 8); the GPT-2-like step: full mode as it records
#     by default (--stacks all) against full mode without stacks and against
#     no recorder.
# PARTS (default "fp torch cost") picks the parts.
# As root from the repository root with a static build at ./gtrace-bpf.
# OUT=DIR keeps the files. Prints PASS/FAIL lines and the figures.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d /tmp/stacks-check.XXXXXX)}
CUDA=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-8}
G=${GTRACE:-./gtrace-bpf}
PARTS=${PARTS:-fp torch cost}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
fail=0

if part fp; then

cat > "$OUT/fp.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void bump(float *x) { x[threadIdx.x] += 1.0f; }
__attribute__((noinline)) void sync_a(cudaStream_t s) { cudaStreamSynchronize(s); asm volatile("" ::: "memory"); }
__attribute__((noinline)) void step(float *d, cudaStream_t s) { bump<<<1, 32, 0, s>>>(d); sync_a(s); asm volatile("" ::: "memory"); }
__attribute__((noinline)) void loop(int n)
{
	float *d;
	cudaStream_t s;

	cudaMalloc(&d, 128 * sizeof(float));
	cudaStreamCreate(&s);
	for (int i = 0; i < n; i++)
		step(d, s);
	cudaFree(d);
	asm volatile("" ::: "memory");
}
int main() { loop(50); printf("fp done\n"); return 0; }
EOF
if "$CUDA/bin/nvcc" -O1 -Xcompiler -fno-omit-frame-pointer,-fno-optimize-sibling-calls -o "$OUT/fp" "$OUT/fp.cu" \
	2> "$OUT/fp.build"; then
	$G --stacks sync -q -o "$OUT/fp.gtrace" --force -- "$OUT/fp" > "$OUT/fp.out" 2> "$OUT/fp.err"
	$G dump "$OUT/fp.gtrace" > "$OUT/fp.json" 2> /dev/null
	"$PY" - "$OUT/fp.json" <<- 'PY' || fail=1
		import json, re, sys
		recs = [json.loads(l) for l in open(sys.argv[1])]
		stacks = {r["id"]: r["frames"] for r in recs if r.get("type") == "stack"}
		syncs = [r for r in recs if r.get("api") == "cuStreamSynchronize"]
		want = ["sync_a", "step", "loop", "main"]
		ok = 0
		for s in syncs:
		    fr = stacks.get(s.get("stack"), [])
		    names = [f for f in fr if "(fp)" in f]
		    pos = [next((i for i, f in enumerate(names) if re.search(w, f)), -1) for w in want]
		    ok += all(p >= 0 for p in pos) and pos == sorted(pos)
		first = stacks.get(syncs[0].get("stack"), []) if syncs else []
		print("stacks fp: %d cuStreamSynchronize, %d with sync_a <- step <- loop <- main in order; the first: %s"
		      % (len(syncs), ok, " | ".join(first[:8])))
		print("%s stacks fp: launches' synchronizations name their calling functions" %
		      ("PASS" if syncs and ok == len(syncs) else "FAIL"))
		sys.exit(0 if syncs and ok == len(syncs) else 1)
	PY
	grep -h 'stacks:' "$OUT/fp.err"
	# the default of full mode: every call's stack, launches once per call site
	$G -q -o "$OUT/fpall.gtrace" --force -- "$OUT/fp" > "$OUT/fpall.out" 2> "$OUT/fpall.err"
	$G dump "$OUT/fpall.gtrace" > "$OUT/fpall.json" 2> /dev/null
	"$PY" - "$OUT/fpall.json" <<- 'PY' || fail=1
		import json, re, sys
		recs = [json.loads(l) for l in open(sys.argv[1])]
		stacks = {r["id"]: r["frames"] for r in recs if r.get("type") == "stack"}
		launches = [r for r in recs if r.get("type") == "launch"]
		want = ["step", "loop", "main"]
		ok = 0
		for s in launches:
		    names = [f for f in stacks.get(s.get("stack"), []) if "(fp)" in f]
		    pos = [next((i for i, f in enumerate(names) if re.search(r"^%s\b" % w, f)), -1) for w in want]
		    ok += all(p >= 0 for p in pos) and pos == sorted(pos)
		first = stacks.get(launches[0].get("stack"), []) if launches else []
		print("stacks fp (default --stacks all): %d launches, %d with step <- loop <- main in order; the first: %s"
		      % (len(launches), ok, " | ".join(first[:8])))
		print("%s stacks fp: launches name their calling functions (the default of full mode)" %
		      ("PASS" if launches and ok == len(launches) else "FAIL"))
		sys.exit(0 if launches and ok == len(launches) else 1)
	PY
	grep -h 'stacks:' "$OUT/fpall.err"
else
	echo "FAIL stacks fp: nvcc failed: $(tail -n 3 "$OUT/fp.build" | tr '\n' '|')"
	fail=1
fi
fi

if part torch; then

cat > "$OUT/torch_sync.py" <<'EOF'
import torch
x = torch.randn(256, 256, device="cuda")
w = torch.randn(256, 256, device="cuda")
for i in range(60):
    y = x @ w
    torch.cuda.synchronize()   # line 6: the planted sync
print("torch done")
EOF
$G --stacks sync -q -o "$OUT/torch.gtrace" --force -- "$PY" "$OUT/torch_sync.py" > "$OUT/torch.out" 2> "$OUT/torch.err"
grep -h 'stacks:' "$OUT/torch.err"
$G dump "$OUT/torch.gtrace" > "$OUT/torch.json" 2> /dev/null
$G analyze --format json -o "$OUT/torch.az.json" --force "$OUT/torch.gtrace" 2> /dev/null
"$PY" - "$OUT/torch.json" "$OUT/torch.az.json" <<- 'PY'
	import collections, json, sys
	recs = [json.loads(l) for l in open(sys.argv[1])]
	stacks = {r["id"]: r["frames"] for r in recs if r.get("type") == "stack"}
	syncs = [r for r in recs if r.get("type") == "sync" and r.get("stack")]
	depth = collections.Counter(len(stacks.get(s["stack"], [])) for s in syncs)
	top = collections.Counter(tuple(stacks.get(s["stack"], [])[:6]) for s in syncs).most_common(1)
	print("stacks torch: %d synchronize calls with a stack, depths %s" % (len(syncs), dict(sorted(depth.items()))))
	if top:
	    print("stacks torch: the commonest, innermost first: %s" % " | ".join(top[0][0]))
	try:
	    az = json.load(open(sys.argv[2]))
	    f = [f for s in az["scopes"] if s["kind"] == "process" for f in s["findings"] if f["id"] == "sync_site"]
	    print("stacks torch: sync_site: %s" % (f[0]["summary"] if f else "none"))
	except (OSError, ValueError, KeyError) as e:
	    print("stacks torch: no analyze JSON (%s)" % e)
PY
fi

if part cost; then

"$PY" tools/bench/inproc.py --gtrace "$G" --workload torch --configs "base=--trace cuda --stacks none,stk=--trace cuda --stacks sync" \
	--pairs stk:base --rounds "$ROUNDS" --on 4 --off 4 --cpus-workload 2,3 --cpus-tool 4-7 \
	--max-seconds "${STACKS_MAX_S:-300}" --out "$OUT/inproc" > "$OUT/inproc.log" 2>&1 || fail=1
"$PY" - "$OUT/inproc/inproc.json" <<- 'PY' || fail=1
	import json, sys
	try:
	    js = json.load(open(sys.argv[1]))
	except (OSError, ValueError) as e:
	    print("FAIL stacks cost: no inproc.json (%s)" % e)
	    sys.exit(1)
	for wl, info in js["workloads"].items():
	    p = info.get("pairs", {}).get("stk:base", {})
	    s = info["summary"]
	    base = s.get("base", {}).get("ratio_median", {})
	    if p.get("median") is None:
	        print("FAIL stacks cost %s: no pair" % wl)
	        sys.exit(1)
	    print("stacks cost %s (%s ms a step): --stacks sync over the same recorder without, paired over %d rounds: "
	          "median %+.2f %%, range %+.2f .. %+.2f %%; the recorder without stacks: median %+.2f %%"
	          % (wl, "%.3f" % info["step_ms"] if info.get("step_ms") else "n/a", p.get("n", 0),
	             p["median"] * 100, p["min"] * 100, p["max"] * 100, (base.get("median") or 0) * 100))
PY
# --stacks all on the GPT-2-like step (tools/bench/transformer_step.py): full mode as it records by default
# (launch stacks) against full mode without stacks, and each against no recorder (the window's own ratio)
"$PY" tools/bench/inproc.py --gtrace "$G" --workload transformer --configs "none,full=--stacks none,all=--stacks all" \
	--pairs all:full --rounds "$ROUNDS" --on 4 --off 4 --cpus-workload 2,3 --cpus-tool 4-7 \
	--max-seconds "${STACKS_MAX_S:-300}" --out "$OUT/inproc-all" > "$OUT/inproc-all.log" 2>&1 || fail=1
grep -h 'stacks:' "$OUT"/inproc-all/*-all-r1.err 2> /dev/null | head -n 1
"$PY" - "$OUT/inproc-all/inproc.json" <<- 'PY' || fail=1
	import json, sys
	try:
	    js = json.load(open(sys.argv[1]))
	except (OSError, ValueError) as e:
	    print("FAIL stacks all cost: no inproc.json (%s)" % e)
	    sys.exit(1)
	for wl, info in js["workloads"].items():
	    s, p = info["summary"], info.get("pairs", {}).get("all:full", {})
	    def med(c):
	        r = s.get(c, {}).get("ratio_median", {})
	        return "n/a" if r.get("median") is None else "%+.2f %% (range %+.2f .. %+.2f)" % (
	            r["median"] * 100, r["min"] * 100, r["max"] * 100)
	    print("stacks all cost %s (%s ms a step) over no recorder: none %s; full %s; full --stacks all %s"
	          % (wl, "%.3f" % info["step_ms"] if info.get("step_ms") else "n/a", med("none"), med("full"),
	             med("all")))
	    if p.get("median") is not None:
	        print("stacks all cost %s: --stacks all over full without, paired over %d rounds: median %+.2f %%, "
	              "range %+.2f .. %+.2f %%" % (wl, p.get("n", 0), p["median"] * 100, p["min"] * 100, p["max"] * 100))
PY
fi
echo "files in $OUT"
exit $fail
