# A small GPT-2 training loop for checking the recorder on a transformers
# model: randomly initialised from a config (no weights to download).
#   python3 gpt2_step.py STEPS
import os, sys, time
import torch
from transformers import GPT2Config, GPT2LMHeadModel

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
dev = torch.device("cuda")
torch.manual_seed(0)
cfg = GPT2Config(n_layer=4, n_head=8, n_embd=512, n_positions=256, vocab_size=8192)
model = GPT2LMHeadModel(cfg).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, cfg.vocab_size, (8, 128), device=dev)
t0 = time.time()
# each step's time on the CPU (no synchronize: the GPU runs behind, the
# host is what paces a launch-bound step), the first one's included
step_ns = []
for _ in range(steps):
    s0 = time.perf_counter_ns()
    opt.zero_grad(set_to_none=True)
    loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    step_ns.append(time.perf_counter_ns() - s0)
torch.cuda.synchronize()
med = sorted(step_ns)[len(step_ns) // 2] / 1e6
print(f'{{"pid":{os.getpid()},"steps":{steps},"ms_per_step":{(time.time()-t0)*1000/steps:.3f},"median_step_ms":{med:.3f},"loss":{loss.item():.4f}}}', flush=True)
