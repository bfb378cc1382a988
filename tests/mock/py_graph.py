# SPDX-License-Identifier: MIT
"""py_graph: a CUDA graph captured from known Python lines, then replayed.

Drives the libcuda of GT_LIBCUDA (the mock) through ctypes. Every call site
ends with a marker comment (`# @NAME`) that the tests look up to know its line:

  main -> capture -> attention   cuLaunchKernel on a capturing stream
                  -> mlp         cuLaunchKernel on it (twice, one line)
  main -> replay                 cuGraphLaunch      (REPLAYS times)
  main -> eager                  cuLaunchKernel     (once, no graph)

Each replay runs the graph's three kernels; the tests check that their GPU
time goes to the capture's lines (attention, mlp), not to the replay's.

Usage: py_graph.py [REPLAYS] (default 10). Prints one JSON line: the calls made.
"""
import ctypes
import json
import os
import sys

lib = ctypes.CDLL(os.environ.get("GT_LIBCUDA", "libcuda.so.1"))
lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
lib.cuStreamCreate.argtypes = [ctypes.c_void_p, ctypes.c_uint]
lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
lib.cuStreamBeginCapture_v2.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.cuStreamEndCapture.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.cuGraphInstantiateWithFlags.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong]
lib.cuGraphLaunch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
PTX = (b".version 7.0\n.target sm_80\n.address_size 64\n"
       b".visible .entry attn(\n)\n{\n\tret;\n}\n.visible .entry mlp(\n)\n{\n\tret;\n}\n")
calls = {"captured": 0, "replays": 0, "eager": 0}


def check(rc, what):
    if rc:
        sys.exit(f"py_graph: {what} failed: {rc}")


def setup():
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    mod = ctypes.c_void_p()
    attn = ctypes.c_void_p()
    mlp_fn = ctypes.c_void_p()
    stream = ctypes.c_void_p()
    check(lib.cuInit(0), "cuInit")
    check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    check(lib.cuModuleLoadData(ctypes.byref(mod), PTX), "cuModuleLoadData")
    check(lib.cuModuleGetFunction(ctypes.byref(attn), mod, b"attn"), "cuModuleGetFunction")
    check(lib.cuModuleGetFunction(ctypes.byref(mlp_fn), mod, b"mlp"), "cuModuleGetFunction")
    check(lib.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")
    return attn, mlp_fn, stream


def attention(fn, stream):
    check(lib.cuLaunchKernel(fn, 4, 1, 1, 32, 1, 1, 0, stream, None, None), "cuLaunchKernel")  # @attention


def mlp(fn, stream):
    for _ in range(2):
        check(lib.cuLaunchKernel(fn, 8, 1, 1, 32, 1, 1, 0, stream, None, None), "cuLaunchKernel")  # @mlp


def eager(fn, stream):
    check(lib.cuLaunchKernel(fn, 2, 1, 1, 32, 1, 1, 0, stream, None, None), "cuLaunchKernel")  # @eager


def capture(attn, mlp_fn, stream):
    graph = ctypes.c_void_p()
    exe = ctypes.c_void_p()
    check(lib.cuStreamBeginCapture_v2(stream, 0), "cuStreamBeginCapture")
    attention(attn, stream)  # @capture_attention
    mlp(mlp_fn, stream)  # @capture_mlp
    check(lib.cuStreamEndCapture(stream, ctypes.byref(graph)), "cuStreamEndCapture")
    calls["captured"] = 3
    check(lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0), "cuGraphInstantiate")
    return exe


def main():
    replays = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    attn, mlp_fn, stream = setup()
    exe = capture(attn, mlp_fn, stream)  # @main_capture
    for _ in range(replays):
        check(lib.cuGraphLaunch(exe, stream), "cuGraphLaunch")  # @replay
        calls["replays"] += 1
    eager(attn, stream)  # @main_eager
    calls["eager"] += 1
    check(lib.cuStreamSynchronize(stream), "cuStreamSynchronize")
    print(json.dumps(calls))


if __name__ == "__main__":
    main()
