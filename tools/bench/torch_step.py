# A launch-bound PyTorch training step for the overhead benchmark: a small
# MLP (16 Linear(512, 512) + ReLU, batch 64) with Adam in its per-parameter
# form: 377 kernel launches per step (328 cuLaunchKernel, 49 cuLaunchKernelEx),
# 5-7 ms per step on the H200 machine with the process on two CPUs (launch-
# bound: the GPU work is a fraction of that).
#   python3 torch_step.py STEPS [--profile]
#   python3 torch_step.py --steady SECONDS --step-log FILE
# --item reads each step's loss back (.item(): one synchronization a step).
# --profile runs the measured steps under torch.profiler (CPU and CUDA
# activities); the trace it collects is left unexported, and the process
# ends without the profiler's post-processing (which does not touch the
# measured steps but takes longer than the run itself).
# Prints one JSON line: {"mode":"torch","ops":STEPS,"ns_per_op":..,"ms":..};
# only the measured steps are timed (after warm-up steps).
# --steady runs the step for SECONDS after the warm-up (or until SIGTERM or
# SIGINT), writing each step's end time to FILE, for tools/bench/inproc.py;
# it prints "ready PID" when it starts and a JSON line at the end
# (tools/bench/steady.py says how). --warmup N changes the 20 warm-up
# steps; --device cpu runs it without a GPU (a check of the script, not a
# benchmark).
import sys
import torch
from steady import parse_args, run_steady, run_timed

USAGE = "usage: torch_step.py [STEPS] [--profile] | --steady SECONDS --step-log FILE"
args, opts = parse_args(sys.argv[1:], USAGE)
steps = int(args[0]) if args else 300
profile = opts["profile"]
dev = torch.device(opts["device"])
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
layers = []
for _ in range(16):
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
    # --item: the loss read back, as a loop that logs it (a sync a step)
    return loss.item() if opts["item"] else loss


for _ in range(opts["warmup"]):
    step()
sync()

if opts["steady"] is not None:
    run_steady("torch", step, opts["steady"], opts["step_log"], sync)
    sys.exit(0)


run_timed("torch", step, steps, sync, profile, dev.type == "cuda")
