#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Python frames of --stacks on the GPU machine (issue 29):
#  1. a PyTorch loop with a .item() planted at a known line, and one with
#     torch.cuda.synchronize(): analyze's sync_in_loop and sync_site name
#     that file:line;
#  2. transformers GPT-2 training (tools/gpu/gpt2_step.py) recorded with
#     --cupti --stacks all: the share of GPU kernel time whose launch's call
#     site is a line of the script (stats' cuda_gpu_site_sum), wanted >= 95 %,
#     and the model's forward layer norms at their own lines of
#     modeling_gpt2.py (ln_1, ln_2, ln_f: at least 3), not all at the first;
#  4. CUDA graphs (PARTS graph): a model's forward captured by hand
#     (torch.cuda.graph) and by torch.compile(mode="reduce-overhead"), then
#     replayed, recorded with --cupti --stacks all: the share of the replayed
#     kernels' GPU time whose capturing launch's stack holds a line of the
#     script, wanted >= 95 %;
#  3. the cost in one running process (tools/bench/inproc.py): --stacks sync
#     over the same recorder without on the launch-bound MLP step that reads
#     its loss back each step (--item: a sync a step), and full
#     mode with --stacks all over no recorder on the GPT-2-like step.
# As root from the repository root with a static build at ./gtrace-bpf.
# OUT=DIR keeps the files. Prints PASS/FAIL lines and the figures.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d /tmp/pystacks-check.XXXXXX)}
CUDA=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-6}
PARTS=${PARTS:-item gpt2 graph cost}	# which of the parts to run
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
G=${GTRACE:-./gtrace-bpf}
mkdir -p "$OUT"
fail=0
"$PY" -c 'import sys; print("python", sys.version.split()[0], sys.executable)'

# 1. the planted syncs
if part item; then
cat > "$OUT/item_loop.py" <<'EOF'
import torch
x = torch.randn(512, 512, device="cuda")
total = 0.0


def train_step(i):
    global x
    x = x * 1.0001
    return x[0, 0].item()  # @item


for i in range(200):
    total += train_step(i)  # @loop
for i in range(100):
    x = x + 1.0
    torch.cuda.synchronize()  # @sync
print("done", total > 0)
EOF
$G --stacks sync -q -o "$OUT/item.gtrace" --force -- "$PY" "$OUT/item_loop.py" > "$OUT/item.out" 2> "$OUT/item.err"
grep -h 'stacks:' "$OUT/item.err"
$G analyze --format json -o "$OUT/item.az.json" --force "$OUT/item.gtrace" 2> "$OUT/item.az.err"
$G analyze "$OUT/item.gtrace" > "$OUT/item.az.txt" 2>&1
"$PY" - "$OUT/item_loop.py" "$OUT/item.az.json" <<- 'PY' || fail=1
	import json, re, sys
	src, az = sys.argv[1], json.load(open(sys.argv[2]))
	lines = {m.group(1): i + 1 for i, l in enumerate(open(src)) for m in [re.search(r"# @(\w+)$", l)] if m}
	finds = [f for s in az["scopes"] if s["kind"] == "process" for f in s["findings"]]
	ok = True
	for fid in ("sync_in_loop", "sync_site"):
	    f = [x for x in finds if x["id"] == fid]
	    text = json.dumps(f)
	    item = "%s:%d" % (src, lines["item"]) in text
	    sync = "%s:%d" % (src, lines["sync"]) in text
	    print("pystacks item: %s names the .item() line: %s, the synchronize line: %s; %s"
	          % (fid, item, sync, (f[0]["summary"] if f else "no finding")[:300]))
	    if f:
	        print("pystacks item: %s examples: %s" % (fid, " | ".join(e["what"] for e in f[0].get("examples", []))[:600]))
	    ok = ok and item and sync
	print("%s pystacks item: sync_in_loop and sync_site name the planted lines" % ("PASS" if ok else "FAIL"))
	sys.exit(0 if ok else 1)
PY
fi

# the CUPTI agent, built once for parts 2 and 4
agent() {
	[ -f "$OUT/libgtrace-cupti.so" ] || CUDA_HOME=$CUDA tools/gpu/build_agent.sh "$OUT/libgtrace-cupti.so" "$OUT/agent.build"
}

# 2. GPT-2 training: GPU time by the Python line that launched it
if ! part gpt2; then
	:
elif [ -d cupti ] && ls cupti/*.c > /dev/null 2>&1; then
	agent
	$G -q --cupti --cupti-lib "$OUT/libgtrace-cupti.so" --stacks all -o "$OUT/gpt2.gtrace" --force -- \
		"$PY" "$PWD/tools/gpu/gpt2_step.py" 12 > "$OUT/gpt2.out" 2> "$OUT/gpt2.err"
	grep -h 'stacks:\|merged\|wrote' "$OUT/gpt2.err" | head -n 6
	$G stats -r cuda_gpu_site_sum --format json "$OUT/gpt2.gtrace" > "$OUT/gpt2.sites.json" 2> "$OUT/gpt2.stats.err"
	"$PY" - "$OUT/gpt2.sites.json" "$PWD/tools/gpu/gpt2_step.py" <<- 'PY' || fail=1
		import json, sys
		rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
		total = sum(r["total_time"] for r in rows)
		mine = sum(r["total_time"] for r in rows if (sys.argv[2] + ":") in r["site"])
		share = 100.0 * mine / total if total else 0
		for r in rows[:6]:
		    print("pystacks gpt2: %5.1f %% %s" % (r["time_pct"], r["site"][:160]))
		print("pystacks gpt2: %.1f %% of %.1f ms of GPU kernel time launched from a line of gpt2_step.py (%d sites)"
		      % (share, total / 1e6, mine and len(rows)))
		print("%s pystacks gpt2: >= 95 %% of GPU time attributed to a line of the user's script" %
		      ("PASS" if share >= 95 else "FAIL"))
		sys.exit(0 if share >= 95 else 1)
	PY
	# a call site is the whole stack: the model's layer norms (ln_1, ln_2 of
	# each block, ln_f) reach the kernel through one line of torch's
	# functional.py, and must each name their own line of modeling_gpt2.py
	$G dump "$OUT/gpt2.gtrace" > "$OUT/gpt2.jsonl" 2> /dev/null
	"$PY" - "$OUT/gpt2.jsonl" <<- 'PY' || fail=1
		import collections, json, re, sys
		stacks, lines = {}, collections.Counter()
		for l in open(sys.argv[1]):
		    r = json.loads(l)
		    if r.get("type") == "stack":
		        stacks[r["id"]] = r["frames"]
		    elif r.get("type") == "launch" and re.search(r"layer_norm_kernel", r.get("kernel") or "") \
		            and not re.search(r"[Bb]ackward", r.get("kernel") or ""):
		        own = [f for f in stacks.get(r.get("stack"), []) if "modeling_gpt2.py:" in f]
		        lines[own[0] if own else "(none)"] += 1
		for k, n in lines.most_common():
		    print("pystacks gpt2 layer norms: %5d %s" % (n, k[:160]))
		ok = len([k for k in lines if k != "(none)"]) >= 3 and "(none)" not in lines
		print("%s pystacks gpt2: the forward layer norms at %d lines of modeling_gpt2.py (ln_1, ln_2, ln_f: >= 3)"
		      % ("PASS" if ok else "FAIL", len([k for k in lines if k != "(none)"])))
		sys.exit(0 if ok else 1)
	PY
else
	echo "FAIL pystacks gpt2: no cupti/ sources"
	fail=1
fi

# 4. CUDA graphs: replayed kernels traced back to the line that captured them
if part graph; then
agent
cat > "$OUT/graph_step.py" <<'EOF'
import sys
import torch

torch.manual_seed(0)
mode, steps = sys.argv[1], int(sys.argv[2])
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024),
                            torch.nn.LayerNorm(1024)).cuda()
x = torch.randn(256, 1024, device="cuda")


def forward(inp):
    with torch.no_grad():
        h = model(inp)  # @model
        return (h.relu() * 0.5).sum(dim=0)  # @tail


if mode == "manual":
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            forward(x)  # @warmup
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = forward(x)  # @capture
    for _ in range(steps):
        g.replay()  # @replay
else:
    f = torch.compile(forward, mode="reduce-overhead")
    for _ in range(steps):
        out = f(x)  # @call
        out = out.clone()
torch.cuda.synchronize()
print("done", float(out.sum()) != 0.0)
EOF
for mode in manual compile; do
	$G -q --cupti --cupti-lib "$OUT/libgtrace-cupti.so" --stacks all -o "$OUT/graph_$mode.gtrace" --force -- \
		"$PY" "$OUT/graph_step.py" "$mode" 200 > "$OUT/graph_$mode.out" 2> "$OUT/graph_$mode.err"
	echo "pystacks graph $mode: exit $?; $(grep -h 'merged' "$OUT/graph_$mode.err" | head -n 1)"
	$G dump "$OUT/graph_$mode.gtrace" > "$OUT/graph_$mode.jsonl" 2> "$OUT/graph_$mode.dump.err"
	"$PY" - "$OUT/graph_$mode.jsonl" "$OUT/graph_step.py" "$mode" <<- 'PY' || fail=1
		import json, sys
		stacks, kernels = {}, []
		for line in open(sys.argv[1]):
		    r = json.loads(line)
		    if r.get("type") == "stack":
		        stacks[r["id"]] = r["frames"]
		    elif r.get("type") == "gpu_kernel":
		        kernels.append(r)
		script, mode = sys.argv[2], sys.argv[3]
		graph = [k for k in kernels if "graph_node" in k]
		total = sum(k["dur"] for k in kernels)
		gtime = sum(k["dur"] for k in graph)
		traced = sum(k["dur"] for k in graph if "capture_ts" in k)
		mine = sum(k["dur"] for k in graph if any(script + ":" in f for f in stacks.get(k.get("stack"), [])))
		share = 100.0 * mine / gtime if gtime else 0
		lines = {}
		for k in graph:
		    fr = [f for f in stacks.get(k.get("stack"), []) if script + ":" in f]
		    key = fr[0] if fr else "(no line of the script)"
		    lines[key] = lines.get(key, 0) + k["dur"]
		for key, ns in sorted(lines.items(), key=lambda x: -x[1])[:4]:
		    print("pystacks graph %s: %5.1f %% %s" % (mode, 100.0 * ns / gtime if gtime else 0, key[:150]))
		print("pystacks graph %s: %d replayed kernels, %.1f ms of %.1f ms GPU time; traced back to their capture %.1f %%, "
		      "to a line of graph_step.py %.1f %%" % (mode, len(graph), gtime / 1e6, total / 1e6,
		      100.0 * traced / gtime if gtime else 0, share))
		ok = len(graph) > 0 and share >= 95
		print("%s pystacks graph %s: >= 95 %% of replayed kernels' GPU time carries the capture-time line" %
		      ("PASS" if ok else "FAIL", mode))
		sys.exit(0 if ok else 1)
	PY
done
fi

# 3. the cost, in one running process each
if part cost; then
"$PY" tools/bench/inproc.py --gtrace "$G" --workload torch --workload-args=--item --configs "base=--trace cuda --stacks none,stk=--trace cuda --stacks sync" \
	--pairs stk:base --rounds "$ROUNDS" --on 4 --off 4 --cpus-workload 2,3 --cpus-tool 4-7 \
	--max-seconds "${STACKS_MAX_S:-200}" --out "$OUT/inproc" > "$OUT/inproc.log" 2>&1 || fail=1
grep -h 'stacks:' "$OUT"/inproc/*stk*-r1.err 2> /dev/null | head -n 2
"$PY" tools/bench/inproc.py --gtrace "$G" --workload transformer --configs "none,full=--stacks none,all=--stacks all" \
	--pairs all:full --rounds "$ROUNDS" --on 4 --off 4 --cpus-workload 2,3 --cpus-tool 4-7 \
	--max-seconds "${STACKS_MAX_S:-200}" --out "$OUT/inproc-all" > "$OUT/inproc-all.log" 2>&1 || fail=1
grep -h 'stacks:' "$OUT"/inproc-all/*-all-r1.err 2> /dev/null | head -n 2
"$PY" - "$OUT/inproc/inproc.json" "$OUT/inproc-all/inproc.json" <<- 'PY' || fail=1
	import json, sys
	for path, pair in ((sys.argv[1], "stk:base"), (sys.argv[2], "all:full")):
	    try:
	        js = json.load(open(path))
	    except (OSError, ValueError) as e:
	        print("FAIL pystacks cost: no %s (%s)" % (path, e))
	        sys.exit(1)
	    for wl, info in js["workloads"].items():
	        s, p = info["summary"], info.get("pairs", {}).get(pair, {})
	        def med(c):
	            r = s.get(c, {}).get("ratio_median", {})
	            return "n/a" if r.get("median") is None else "%+.2f %% (range %+.2f .. %+.2f)" % (
	                r["median"] * 100, r["min"] * 100, r["max"] * 100)
	        print("pystacks cost %s (%s ms a step), each over no recorder: %s"
	              % (wl, "%.3f" % info["step_ms"] if info.get("step_ms") else "n/a",
	                 "; ".join("%s %s" % (c, med(c)) for c in s)))
	        if p.get("median") is not None:
	            print("pystacks cost %s: %s paired over %d rounds: median %+.2f %%, range %+.2f .. %+.2f %%"
	                  % (wl, pair, p.get("n", 0), p["median"] * 100, p["min"] * 100, p["max"] * 100))
PY
fi
echo "files in $OUT"
exit $fail
