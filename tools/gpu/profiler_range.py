# A PyTorch training loop with a profiler range around some of its steps,
# for checking -c cudaProfilerApi on the GPU machine:
#   python3 profiler_range.py [STEPS [FIRST LAST]]
# Runs STEPS steps (default 30) of a small MLP with Adam; steps FIRST..LAST
# (default 10..19) run between torch.cuda.profiler.start() and stop(), which
# call cudaProfilerStart/Stop, so cuProfilerStart/Stop in libcuda. Prints one
# JSON line with the steps in the range and the time per step.
import json, os, sys, time
import torch

args = [int(a) for a in sys.argv[1:]]
steps = args[0] if args else 30
first, last = (args[1], args[2]) if len(args) >= 3 else (10, 19)
dev = torch.device("cuda")
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(512, 512), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
x = torch.randn(64, 512, device=dev)
t = torch.randint(0, 10, (64,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
    return loss


t0 = time.time()
for i in range(steps):
    if i == first:
        torch.cuda.profiler.start()
    loss = step()
    if i == last:
        torch.cuda.profiler.stop()
torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "steps": steps, "range": [first, last],
                  "range_steps": last - first + 1,
                  "ms_per_step": round((time.time() - t0) * 1000 / steps, 3),
                  "loss": round(loss.item(), 4)}), flush=True)
