# A PyTorch training job for the daemon's flight-recorder check on the GPU
# machine: the MLP step of tools/bench/torch_step.py for SECONDS, and at
# SLOW_AT seconds one planted slow synchronization: a kernel that spins
# SLOW_S seconds on the GPU (torch.cuda._sleep) followed by
# torch.cuda.synchronize(), which then waits that long. Prints one JSON
# line: steps, the planted wait's start and end (CLOCK_MONOTONIC ns), pid.
#   python3 slow_sync_job.py [SECONDS] [SLOW_AT] [SLOW_S]
import json, os, sys, time
import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 150
slow_at = float(sys.argv[2]) if len(sys.argv) > 2 else 100
slow_s = float(sys.argv[3]) if len(sys.argv) > 3 else 2.5
dev = torch.device("cuda")
layers = [torch.nn.Linear(512, 512, device=dev) for _ in range(16)]
model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.ReLU())])
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
x = torch.randn(64, 512, device=dev)

def step():
    opt.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    return loss

# cycles per second of the GPU's clock, for _sleep
torch.cuda.synchronize()
t = time.perf_counter()
torch.cuda._sleep(100_000_000)
torch.cuda.synchronize()
hz = 100_000_000 / (time.perf_counter() - t)
print("ready %d" % os.getpid(), flush=True)
start = time.monotonic()
steps, planted = 0, None
while time.monotonic() - start < seconds:
    step()
    steps += 1
    if steps % 20 == 0:
        torch.cuda.synchronize()
    if planted is None and time.monotonic() - start >= slow_at:
        torch.cuda.synchronize()
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        torch.cuda._sleep(int(hz * slow_s))
        torch.cuda.synchronize()
        planted = (t0, time.clock_gettime_ns(time.CLOCK_MONOTONIC))
torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "steps": steps, "slow_start_ns": planted[0] if planted else None,
                  "slow_end_ns": planted[1] if planted else None}), flush=True)
