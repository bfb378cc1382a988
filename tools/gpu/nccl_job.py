# A PyTorch job over NCCL for the multi-GPU checks (tools/gpu/nccl_single.sh,
# tools/gpu/ddp_two_rank.sh):
#   python3 nccl_job.py allreduce ITERS NUMEL       # dist.all_reduce loop
#   python3 nccl_job.py ddp STEPS SLOW_RANK SLOW_MS  # a DDP training loop
# Rank, world size and device from the environment (torchrun's RANK,
# WORLD_SIZE, LOCAL_RANK; 0, 1, 0 when unset).  In ddp mode rank SLOW_RANK
# sleeps SLOW_MS on the host before every step, so the others wait for it
# in the gradients' all-reduce.  The last line on stdout is one JSON object
# with what the job did, for the check.  START_FILE=PATH (tools/gpu/
# hosts_check.sh): say "waiting PID" and wait for PATH before the process
# group exists (a recorder attached with -p sees the communicator made);
# GAP_MS=N: sleep N ms between the all-reduces.
import json, os, sys, time
import torch
import torch.distributed as dist

mode = sys.argv[1]
rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
start_file = os.environ.get("START_FILE")
if start_file:
    print("waiting %d" % os.getpid(), flush=True)
    while not os.path.exists(start_file):
        time.sleep(0.02)
gap = float(os.environ.get("GAP_MS", "0")) / 1000
dist.init_process_group("nccl", rank=rank, world_size=world)
out = {"pid": os.getpid(), "rank": rank, "world": world, "local_rank": local, "mode": mode,
       "nccl_version": ".".join(map(str, torch.cuda.nccl.version()))}
if mode == "allreduce":
    iters, numel = int(sys.argv[2]), int(sys.argv[3])
    x = torch.ones(numel, device=dev)
    for i in range(iters):
        dist.all_reduce(x)
        if gap:
            time.sleep(gap)
    torch.cuda.synchronize()
    out.update(iters=iters, numel=numel, value=float(x[0]))
else:
    steps, slow_rank, slow_ms = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device=dev)
    t = torch.randint(0, 10, (256,), device=dev)
    starts = []
    for i in range(steps):
        if rank == slow_rank:
            time.sleep(slow_ms / 1000)
        starts.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(ddp(x), t)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    out.update(steps=steps, slow_rank=slow_rank, slow_ms=slow_ms, step_starts_ns=starts)
dist.destroy_process_group()
print(json.dumps(out), flush=True)
