#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Python frames of --stacks on the GPU machine (issue 29):
#  1. a PyTorch loop with a .item() planted at a known line, and one with
#     torch.cuda.synchronize(): analyze's sync_in_loop and sync_site name
#     that file:line;
#  2. transformers GPT-2 training (tools/gpu/gpt2_step.py) recorded with
#     --cupti --stacks all: the share of GPU kernel time whose launch's call
#     site is a line of the script (stats' cuda_gpu_site_sum), wanted >= 95 %;
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
PARTS=${PARTS:-item gpt2 cost}	# which of the three to run
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

# 2. GPT-2 training: GPU time by the Python line that launched it
if ! part gpt2; then
	:
elif [ -d cupti ] && ls cupti/*.c > /dev/null 2>&1; then
	CUDA_HOME=$CUDA tools/gpu/build_agent.sh "$OUT/libgtrace-cupti.so" "$OUT/agent.build"
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
else
	echo "FAIL pystacks gpt2: no cupti/ sources"
	fail=1
fi

# 3. the cost, in one running process each
if part cost; then
"$PY" tools/bench/inproc.py --workload torch --workload-args=--item --configs "base=--trace cuda,stk=--trace cuda --stacks sync" \
	--pairs stk:base --rounds "$ROUNDS" --on 4 --off 4 --cpus-workload 2,3 --cpus-tool 4-7 \
	--max-seconds "${STACKS_MAX_S:-200}" --out "$OUT/inproc" > "$OUT/inproc.log" 2>&1 || fail=1
grep -h 'stacks:' "$OUT"/inproc/*stk*-r1.err 2> /dev/null | head -n 2
"$PY" tools/bench/inproc.py --workload transformer --configs "none,full,all=--stacks all" \
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
