#!/usr/bin/env bash
# gtrace-bpf report of a real GPU run, on the GPU machine from the repo root
# with a static build made elsewhere (`make STATIC=libs`; the binary travels as
# ./gtrace-bpf): records a few PyTorch training steps (NVTX ranges per step
# and phase, a loss read back each step) with --cupti, writes the report,
# and checks that its page holds the GPU side as stats and analyze see it.
# One PASS/FAIL line per check with its figures; the trace, the page and the
# logs stay in $OUT (default /tmp/gtrace-report) for the screenshot, which
# is made on a machine with chromium (tools/report_screenshot.sh).  Exit 1 if
# any check failed.
set -u
OUT=${OUT:-/tmp/gtrace-report}
B=${GTRACE:-./gtrace-bpf}
CUDA=${CUDA_HOME:-/usr/local/cuda}
STEPS=${STEPS:-12}
mkdir -p "$OUT"
fails=0
result() { # name rc detail
	if [ "$2" -eq 0 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; fails=$((fails + 1)); fi
}
[ -x "$B" ] || { echo "FAIL setup: no $B (make STATIC=libs first)"; exit 1; }
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Wall -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread \
	-o "$OUT/libgtrace-cupti.so" 2> "$OUT/build.log"
result "build CUPTI agent" $? "gcc against $CUDA/include/cupti.h"

cat > "$OUT/step.py" <<'PY'
# A small transformer-like training step: attention, MLP, an optimizer
# step, each step and phase in NVTX ranges, the loss read back (a sync).
import sys, time, torch
steps = int(sys.argv[1])
dev = torch.device("cuda")
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
model = torch.nn.Sequential(layer, torch.nn.Linear(512, 512)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
host = torch.randn(32, 128, 512).pin_memory()
t0 = time.time()
for i in range(steps):
    torch.cuda.nvtx.range_push(f"step {i}")
    x = host.to(dev, non_blocking=True)
    with torch.cuda.nvtx.range("forward"):
        loss = model(x).pow(2).mean()
    with torch.cuda.nvtx.range("backward"):
        loss.backward()
    with torch.cuda.nvtx.range("optimizer"):
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"step {i} loss {loss.item():.4f}", flush=True)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(f"{(time.time() - t0) * 1000 / steps:.2f} ms per step")
PY
rm -f "$OUT/report_gpu.gtrace" "$OUT/report_gpu.html"
"$B" -q --cupti --cupti-lib "$OUT/libgtrace-cupti.so" -o "$OUT/report_gpu.gtrace" -- \
	python3 "$OUT/step.py" "$STEPS" > "$OUT/step.out" 2> "$OUT/step.err"
result "record PyTorch steps with --cupti" $? "$(tail -1 "$OUT/step.out"); $(tail -1 "$OUT/step.err")"

"$B" stats "$OUT/report_gpu.gtrace" --format json > "$OUT/stats.json" 2> "$OUT/stats.err"
kern=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r={x["report"]: x["rows"] for x in d["reports"]}; print(len(r["cuda_gpu_kern_sum"]), sum(x["instances"] for x in r["cuda_gpu_kern_sum"]), len(r["nvtx_sum"]))' "$OUT/stats.json")
set -- $kern
[ "${2:-0}" -gt 0 ]
result "GPU kernels in the trace" $? "${1:-0} kernel names, ${2:-0} kernels, ${3:-0} NVTX range names (stats)"

/usr/bin/time -f "%e s %M KB" "$B" report "$OUT/report_gpu.gtrace" -o "$OUT/report_gpu.html" --force \
	2> "$OUT/report.err"
result "report" $? "$(stat -c %s "$OUT/report_gpu.html" 2>/dev/null) bytes, mode $(stat -c %a "$OUT/report_gpu.html" 2>/dev/null), $(tail -1 "$OUT/report.err")"

# the page's data: the GPU side on the timeline, stats' kernel rows, analyze's answers
python3 - "$OUT/report_gpu.html" "$OUT/stats.json" <<'PY'
import html.parser, json, sys
class P(html.parser.HTMLParser):
    on, data = False, ""
    def handle_starttag(self, tag, attrs): self.on = ("id", "gt-data") in attrs
    def handle_data(self, d):
        if self.on: self.data += d
    def handle_endtag(self, tag): self.on = False
p = P(); p.feed(open(sys.argv[1]).read())
d = json.loads(p.data)
stats = {r["report"]: r["rows"] for r in json.load(open(sys.argv[2]))["reports"]}
page = {r["report"]: r["rows"] for r in d["stats"]["reports"]}
tl = d["timeline"]
gpu_lanes = [l for l in tl["lanes"] if l["kind"] == "gpu"]
linked = sum(1 for l in gpu_lanes for i in range(0, len(l["ev"]), 7) if l["ev"][i + 3] >= 0)
same = page["cuda_gpu_kern_sum"] == stats["cuda_gpu_kern_sum"]
az = d.get("analyze") or {}
answers = [s["answers"]["busy"] for s in az.get("scopes", []) if s.get("answers")]
ok = same and tl["gpu_records"] > 0 and gpu_lanes and linked > 0 and answers
print(("PASS" if ok else "FAIL") + " report page: %d GPU records on %d stream lanes, %d linked kernels drawn with arrows, "
      "%d of %d events drawn exactly, kernel rows equal to stats: %s; analyze: %s" % (
          tl["gpu_records"], len(gpu_lanes), linked, tl["kept"], tl["events"], same,
          answers[0] if answers else d.get("analyze_missing")))
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || fails=$((fails + 1))
echo "INFO bring back $OUT/report_gpu.gtrace (and report_gpu.html); on a machine with chromium:"
echo "INFO   tools/report_screenshot.sh report_gpu.gtrace docs/report-gpu.png"
exit $((fails > 0))
