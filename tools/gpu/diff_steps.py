#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A baseline/optimized pair for `gtrace-bpf diff` on the GPU machine: the
program times its own steps, so that diff's speedup can be checked against
the speedup the program measured (tools/gpu/diff_check.sh).

Usage: tools/gpu/diff_steps.py --case graph|bf16|host|compile|amp|loader --variant baseline|optimized
           [--steps 60] [--warmup 10] [--no-markers]

Cases (the same computation in both variants):
  graph  20 Linear+ReLU layers of 512 on a batch of 64, 5 forward passes a
         step (no grad): the baseline launches each kernel itself (eager,
         launch-bound); the optimized replays a CUDA graph of the 5 passes.
  bf16   a chain of 8 matrix products of 4096 x 4096: float32 in the
         baseline, bfloat16 (tensor cores) in the optimized.
  host   20 launches of one small kernel, then host work on the CPU (a spin
         of 30 ms in the baseline, 5 ms in the optimized) before the
         synchronize: the step is bound by the host.

  compile  a training step of 12 Linear(1024)+GELU layers (forward, backward,
         AdamW): eager in the baseline, torch.compile'd in the optimized.
  amp    a GPT-2 training step (transformers, 6 layers of 768, a batch of
         8 x 256): float32 in the baseline, bfloat16 autocast in the optimized.
  loader each step waits 8 ms for its batch (the loading's I/O) then trains
         a small model on it: in the baseline the step loads its own batch,
         in the optimized a thread loads the next ones ahead (a queue of 2).

--no-markers: no NVTX range at all (diff must find the iterations in the
calls themselves).

Each step is one NVTX range "step <i>" (torch.cuda.nvtx.range_push/pop)
that ends with torch.cuda.synchronize(): its GPU work is inside it.  The
program reads time.perf_counter_ns() just before the push and just after
the synchronize: the time it prints for the step is that of the range.
Warm-up steps come first, in ranges named "warmup <i>" (another series).
The last line on stdout is one JSON object: {"case", "variant", "steps",
"step_ns": [...], "step_median_ns"}.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def graph_case(variant):
    layers = []
    for _ in range(20):
        layers += [torch.nn.Linear(512, 512), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda().eval()
    x = torch.randn(64, 512, device="cuda")

    def eager():
        with torch.no_grad():
            y = x
            for _ in range(5):
                y = model(y)
        return y

    if variant == "baseline":
        return eager
    # capture the same 5 passes once (after a warm-up on a side stream, as
    # CUDA graphs want), then replay them each step
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            eager()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        eager()
    return g.replay


def bf16_case(variant):
    dtype = torch.float32 if variant == "baseline" else torch.bfloat16
    # b scaled by 1/sqrt(4096): each product keeps the entries' magnitude
    a = torch.randn(4096, 4096, device="cuda", dtype=dtype)
    b = torch.randn(4096, 4096, device="cuda", dtype=dtype) / 64

    def step():
        y = a
        for _ in range(8):
            y = y @ b
        return y

    return step


def host_case(variant):
    x = torch.zeros(1024, device="cuda")
    spin_ns = (30 if variant == "baseline" else 5) * 1000000

    def step():
        for _ in range(20):
            x.add_(1.0)
        t = time.perf_counter_ns() + spin_ns
        while time.perf_counter_ns() < t:
            pass

    return step


def compile_case(variant):
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, 1024, device="cuda")
    fwd = torch.compile(model) if variant == "optimized" else model

    def step():
        opt.zero_grad(set_to_none=True)
        fwd(x).square().mean().backward()
        opt.step()

    return step


def amp_case(variant):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_head=12, n_embd=768, n_positions=256, vocab_size=16384)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (8, 256), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        if variant == "optimized":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(ids, labels=ids).loss
        else:
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()

    return step


def loader_case(variant):
    import queue
    import threading
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def load():
        time.sleep(0.008)    # the batch's I/O
        return torch.randn(512, 512).pin_memory()

    if variant == "optimized":
        q = queue.Queue(maxsize=2)

        def ahead():
            while True:
                q.put(load())

        threading.Thread(target=ahead, daemon=True).start()
        get = q.get
    else:
        get = load

    def step():
        x = get().cuda(non_blocking=True)
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()

    return step


class NoRange:
    @staticmethod
    def range_push(_name):
        pass

    @staticmethod
    def range_pop():
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=("graph", "bf16", "host", "compile", "amp", "loader"), required=True)
    ap.add_argument("--no-markers", action="store_true")
    ap.add_argument("--variant", choices=("baseline", "optimized"), required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    o = ap.parse_args()
    if not torch.cuda.is_available():
        print("diff_steps: no CUDA device", file=sys.stderr)
        return 1
    work = {"graph": graph_case, "bf16": bf16_case, "host": host_case, "compile": compile_case,
            "amp": amp_case, "loader": loader_case}[o.case](o.variant)
    nvtx = NoRange if o.no_markers else torch.cuda.nvtx
    for i in range(o.warmup):
        nvtx.range_push(f"warmup {i}")
        work()
        torch.cuda.synchronize()
        nvtx.range_pop()
    times = []
    for i in range(o.steps):
        t0 = time.perf_counter_ns()
        nvtx.range_push(f"step {i}")
        work()
        torch.cuda.synchronize()
        t1 = time.perf_counter_ns()
        nvtx.range_pop()
        times.append(t1 - t0)
    print(json.dumps({"case": o.case, "variant": o.variant, "steps": o.steps, "step_ns": times,
                      "step_median_ns": statistics.median(times)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
