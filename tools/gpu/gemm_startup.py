#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A GEMM loop after a slow start-up, for analyze's steady state on the GPU
machine (tools/gpu/steady_check.sh): a 16 GiB allocation and cuBLAS's
first-call initialisation, then 40 bf16 8192 x 8192 products back to back
and one synchronize.  The program times the loop itself and prints one JSON
line: {"gemms", "loop_ns", "tflops"}.
"""
import json
import time

import torch

big = torch.empty(16 << 30, dtype=torch.uint8, device="cuda")
big.fill_(1)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90
torch.cuda.synchronize()
n = 40
t0 = time.perf_counter_ns()
c = a
for _ in range(n):
    c = a @ b
torch.cuda.synchronize()
t1 = time.perf_counter_ns()
print(json.dumps({"gemms": n, "loop_ns": t1 - t0, "tflops": 2 * 8192 ** 3 * n / ((t1 - t0) / 1e9) / 1e12}))
