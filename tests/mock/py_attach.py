# SPDX-License-Identifier: MIT
"""py_attach: a Python job for --cupti=attach, driving the libcuda of
GT_LIBCUDA (the mock) through ctypes, started without anything of ours.

Usage: py_attach.py GO_FILE [LAUNCHES]. Prints "ready PID", then runs Python
code (a 5 ms sleep at a time: where the interpreter takes a remote script)
until GO_FILE exists, then launches LAUNCHES kernels (default 40) with a
stream synchronize after each tenth, and prints one JSON line: its pid and
the launches made.
"""
import ctypes
import json
import os
import sys
import time

lib = ctypes.CDLL(os.environ.get("GT_LIBCUDA", "libcuda.so.1"))
lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
PTX = b".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry vecAdd(\n)\n{\n\tret;\n}\n"


def check(rc, what):
    if rc:
        sys.exit(f"py_attach: {what} failed: {rc}")


def main():
    go = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    check(lib.cuInit(0), "cuInit")
    check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    check(lib.cuModuleLoadData(ctypes.byref(mod), PTX), "cuModuleLoadData")
    check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"vecAdd"), "cuModuleGetFunction")
    print(f"ready {os.getpid()}", flush=True)
    end = time.monotonic() + 60
    while not os.path.exists(go):
        if time.monotonic() > end:
            sys.exit("py_attach: no go in 60 s")
        time.sleep(0.005)
    for i in range(n):
        check(lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None), "cuLaunchKernel")
        if i % 10 == 9:
            check(lib.cuStreamSynchronize(None), "cuStreamSynchronize")
    print(json.dumps({"pid": os.getpid(), "launches": n}), flush=True)


main()
