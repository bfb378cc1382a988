# SPDX-License-Identifier: MIT
"""py_workload: CUDA calls from known Python lines, for --stacks' Python frames.

Drives the libcuda of GT_LIBCUDA (the mock) through ctypes. Every call site
ends with a marker comment (`# @NAME`) that the tests look up to know its line:

  main -> train -> step -> launch       cuLaunchKernel        (STEPS times)
                       -> sync_here     cuStreamSynchronize   (STEPS times)
  main -> (generator) gen_syncs         cuCtxSynchronize      (3 times)
  main -> Worker.run (a thread)         cuCtxSynchronize      (once)
  main -> deep(DEPTH) -> ... deep(0)    cuCtxSynchronize      (once, deeper than
                                                               the recorder keeps)
  main -> lookup_missing                cuModuleGetFunction   (once, fails)
  main -> pool_call -> libpool's native thread -> cuCtxSynchronize
                                        (once, with GT_POOL_LIB: a thread that runs
                                         no Python calls for the waiting main thread)
  main -> pool_hot -> libpool's thread with a Python state of its own (as
          autograd's) -> cuLaunchKernel  (GT_POOL_HOT times, with GT_POOL_LIB)
                   -> hook (Python on that thread's state) -> cuLaunchKernel (once)
                   -> cuLaunchKernel     (GT_POOL_HOT times more)

Usage: py_workload.py [STEPS [DEPTH]] (defaults 12 and 80). Prints one JSON line:
the calls made.
"""
import ctypes
import json
import os
import sys
import threading

lib = ctypes.CDLL(os.environ.get("GT_LIBCUDA", "libcuda.so.1"))
lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
PTX = b".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry vecAdd(\n)\n{\n\tret;\n}\n"
calls = {"launches": 0, "stream_syncs": 0, "ctx_syncs": 0, "pool_syncs": 0, "failed": 0, "pool_launches": 0,
         "hook_launches": 0}


def check(rc, what):
    if rc:
        sys.exit(f"py_workload: {what} failed: {rc}")


def setup():
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    mod = ctypes.c_void_p()
    fn = ctypes.c_void_p()
    check(lib.cuInit(0), "cuInit")
    check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    check(lib.cuModuleLoadData(ctypes.byref(mod), PTX), "cuModuleLoadData")
    check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"vecAdd"), "cuModuleGetFunction")
    return ctx, mod, fn


def lookup_missing(mod):
    fn = ctypes.c_void_p()
    # a call that fails: its stack is taken at its exit when its entry took none
    calls["failed"] = int(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"no_such_kernel") != 0)  # @lookup_fail


def launch(fn):
    check(lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None), "cuLaunchKernel")  # @launch
    calls["launches"] += 1


def sync_here():
    check(lib.cuStreamSynchronize(None), "cuStreamSynchronize")  # @sync_here
    calls["stream_syncs"] += 1


def step(fn):
    launch(fn)  # @step_launch
    sync_here()  # @step_sync


def train(fn, steps):
    for _ in range(steps):
        step(fn)  # @train_step


def gen_syncs(n):
    for i in range(n):
        check(lib.cuCtxSynchronize(), "cuCtxSynchronize")  # @gen_sync
        calls["ctx_syncs"] += 1
        yield i


class Worker(threading.Thread):
    def __init__(self, ctx):
        super().__init__(name="py-worker")
        self.ctx = ctx

    def run(self):
        check(lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        check(lib.cuCtxSynchronize(), "cuCtxSynchronize")  # @thread_sync
        calls["ctx_syncs"] += 1


def deep(n):
    if n == 0:
        check(lib.cuCtxSynchronize(), "cuCtxSynchronize")  # @deep_sync
        calls["ctx_syncs"] += 1
        return
    deep(n - 1)  # @deep_rec


def pool_call():
    pool = ctypes.CDLL(os.environ["GT_POOL_LIB"])
    pool.pool_sync.argtypes = [ctypes.c_char_p]
    # its result is the mock's (no context on the new thread): a call all the same
    pool.pool_sync(os.environ.get("GT_LIBCUDA", "libcuda.so.1").encode())  # @pool_sync
    calls["pool_syncs"] += 1


def pool_hot(ctx, fn, n):
    pool = ctypes.CDLL(os.environ["GT_POOL_LIB"])
    hook_t = ctypes.CFUNCTYPE(None)

    def hook():
        check(lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None), "the hook's launch")  # @hook_launch
        calls["hook_launches"] += 1

    cb = hook_t(hook)
    pool.pool_launches.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, hook_t]
    rc = pool.pool_launches(os.environ.get("GT_LIBCUDA", "libcuda.so.1").encode(), ctx, fn, n, cb)  # @pool_hot
    check(rc, "pool_launches")
    calls["pool_launches"] += 2 * n


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    ctx, mod, fn = setup()
    lookup_missing(mod)  # @main_lookup
    train(fn, steps)  # @main_train
    for _ in gen_syncs(3):  # @main_gen
        pass
    w = Worker(ctx)
    w.start()
    w.join()
    sys.setrecursionlimit(max(1000, depth + 100))
    deep(depth)  # @main_deep
    if os.environ.get("GT_POOL_LIB"):
        pool_call()  # @main_pool
        if os.environ.get("GT_POOL_HOT"):
            pool_hot(ctx, fn, int(os.environ["GT_POOL_HOT"]))  # @main_pool_hot
    print(json.dumps(calls))


if __name__ == "__main__":
    main()  # @module_main
