# A small launch-bound PyTorch training loop for checking the recorder:
#   python3 torch_loop.py STEPS [--wait SECONDS]
# With --wait it first sleeps so a tracer can be started after CUDA is up.
import os, sys, time
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
wait = float(sys.argv[sys.argv.index("--wait") + 1]) if "--wait" in sys.argv else 0.0
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
for _ in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f'{{"pid":{os.getpid()},"steps":{steps},"ms_per_step":{(time.time()-t0)*1000/steps:.3f},"loss":{loss.item():.4f}}}', flush=True)
