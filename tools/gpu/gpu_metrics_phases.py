#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Three phases on GPU 0 for the --gpu-metrics check (issue 15): a bf16 GEMM
loop, a large device-to-device copy loop, a loop of empty kernels, SECONDS
each. Prints {"pid"} first, then one JSON line per phase: {"phase",
"start", "end"} in CLOCK_MONOTONIC ns, the clock of the trace."""
import json
import os
import sys
import time

import torch


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def run(name, secs, step):
    torch.cuda.synchronize()
    t0 = now()
    while now() - t0 < secs * 1e9:
        for _ in range(20):
            step()
        torch.cuda.synchronize()
    print(json.dumps({"phase": name, "start": t0, "end": now()}), flush=True)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(json.dumps({"pid": os.getpid()}), flush=True)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    src = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    tiny = torch.zeros(1, device="cuda")
    run("gemm", secs, lambda: torch.matmul(a, b))
    run("copy", secs, lambda: dst.copy_(src))
    run("empty", secs, lambda: tiny.add_(0))


if __name__ == "__main__":
    main()
