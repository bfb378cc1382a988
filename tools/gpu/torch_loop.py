# A small launch-bound PyTorch training loop for checking the recorder:
#   python3 torch_loop.py STEPS [--wait SECONDS] [--profiler-range FIRST LAST]
# With --wait it first sleeps so a tracer can be started after CUDA is up.
# With --profiler-range the steps FIRST..LAST (0-based) run between
# torch.cuda.profiler.start() and stop() (cudaProfilerStart/Stop, so
# cuProfilerStart/Stop in libcuda), for checking -c cudaProfilerApi.
import os, sys, time
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
wait = float(sys.argv[sys.argv.index("--wait") + 1]) if "--wait" in sys.argv else 0.0
prange = None
if "--profiler-range" in sys.argv:
    i = sys.argv.index("--profiler-range")
    prange = (int(sys.argv[i + 1]), int(sys.argv[i + 2]))
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
t = torch.randint(0, 10, (64,), device=dev)
loss = torch.nn.functional.cross_entropy(model(x), t)
loss.backward()
opt.step()
torch.cuda.synchronize()
if wait:
    print(f"ready {os.getpid()}", flush=True)
    time.sleep(wait)
t0 = time.time()
for i in range(steps):
    if prange and i == prange[0]:
        torch.cuda.profiler.start()
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
    if prange and i == prange[1]:
        torch.cuda.profiler.stop()
torch.cuda.synchronize()
print(f'{{"pid":{os.getpid()},"steps":{steps},"ms_per_step":{(time.time()-t0)*1000/steps:.3f},"loss":{loss.item():.4f}}}', flush=True)
