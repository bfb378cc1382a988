#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PyTorch workload for checking NVTX capture ranges (record -c nvtx
--nvtx-capture=NAME) on the GPU machine: STEPS steps of K kernel launches
each, the steps FIRST..LAST inside NVTX ranges named NAME
(torch.cuda.nvtx.range_push/range_pop: nvtxRangePushA/nvtxRangePop in NVTX's
default domain).  Ends with one JSON line saying how many kernels it
launched inside and outside the ranges.

Usage: tools/gpu/nvtx_capture.py [--steps 30] [--first 10] [--last 19]
           [--ops 8] [--name capture] [--one-range]
  default     each step FIRST..LAST in a range of its own (push, step, pop)
  --one-range one range around the steps FIRST..LAST together

Each step is K in-place additions to one float32 tensor on the GPU: one
elementwise kernel each, so K launches per step and nothing else.  The
tensor is made on the CPU and copied over (a copy, no kernel), and the
result is read back with a copy, so the program launches STEPS * K kernels
in all.  Every step ends with torch.cuda.synchronize(), inside its range:
its GPU work ends before the range does.  The result is checked (each
element = number of additions), so a launch that did not run is noticed.

Checked on the H200 (torch 2.11, CUPTI 13) with the agent alone
(CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH = the agent,
GTRACE_CUPTI_DIR, GTRACE_NVTX_CAPTURE=capture) and uprobes counting the
agent's gtrace_capture_open/close: 10 opens and 10 closes by default, 1 and
1 with --one-range, none with another name or without the variable.
"""
import argparse
import json
import os
import sys

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--first", type=int, default=10, help="first step inside (0-based)")
    ap.add_argument("--last", type=int, default=19, help="last step inside")
    ap.add_argument("--ops", type=int, default=8, help="kernel launches per step")
    ap.add_argument("--name", default="capture", help="the ranges' message")
    ap.add_argument("--one-range", action="store_true",
                    help="one range around the steps FIRST..LAST, not one per step")
    a = ap.parse_args()
    if not (0 <= a.first <= a.last < a.steps) or a.ops < 1:
        ap.error("need 0 <= FIRST <= LAST < STEPS and OPS >= 1")

    dev = torch.device("cuda")
    x = torch.zeros(1 << 16, dtype=torch.float32).to(dev)  # a copy, not a kernel
    torch.cuda.synchronize()
    inside = outside = ranges = 0
    for step in range(a.steps):
        captured = a.first <= step <= a.last
        opens = captured and (not a.one_range or step == a.first)
        closes = captured and (not a.one_range or step == a.last)
        if opens:
            torch.cuda.nvtx.range_push(a.name)
            ranges += 1
        for _ in range(a.ops):
            x.add_(1.0)
        torch.cuda.synchronize()
        if closes:
            torch.cuda.nvtx.range_pop()
        if captured:
            inside += a.ops
        else:
            outside += a.ops
    got = x.cpu()  # a copy, not a kernel
    want = float(a.steps * a.ops)
    ok = bool((got == want).all())
    print(json.dumps({
        "pid": os.getpid(), "name": a.name, "mode": "one-range" if a.one_range else "per-step",
        "steps": a.steps, "first": a.first, "last": a.last, "ops_per_step": a.ops, "ranges": ranges,
        "launches_inside": inside, "launches_outside": outside, "launches": inside + outside,
        "result_ok": ok}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
