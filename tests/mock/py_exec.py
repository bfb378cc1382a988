# SPDX-License-Identifier: MIT
"""py_exec: launches from one Python image, then from the image it execs.

Drives the libcuda of GT_LIBCUDA (the mock) through ctypes, as py_workload.py
does. Run as `py_exec.py first [PYTHON]`: 20 launches from the line marked
@first_launch, then the process execs PYTHON (default: the same interpreter)
on this file with `second`, which prints "ready PID", waits for SIGUSR1 (the
test knows then that the recorder has read the new interpreter; 60 s at
most) and makes 20 launches from @second_launch: one pid, one main thread
id, two interpreters' frames. Each image prints one JSON line: its mode, pid
and launches.
"""
import ctypes
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from py_workload import lib, setup  # noqa: E402


def first(fn):
    for _ in range(20):
        lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None)  # @first_launch


def second(fn):
    for _ in range(20):
        lib.cuLaunchKernel(fn, 2, 1, 1, 32, 1, 1, 0, None, None, None)  # @second_launch


def main():
    mode = sys.argv[1]
    if mode == "second":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        print("ready %d" % os.getpid(), flush=True)
        # bounded: a test that failed before sending it leaves nothing behind
        if signal.sigtimedwait({signal.SIGUSR1}, 60) is None:
            sys.exit("py_exec: no SIGUSR1 in 60 s")
    _, _, fn = setup()
    (first if mode == "first" else second)(fn)
    print(json.dumps({"mode": mode, "pid": os.getpid(), "launches": 20}), flush=True)
    if mode == "first":
        py = sys.argv[2] if len(sys.argv) > 2 else sys.executable
        os.execv(py, [py, os.path.abspath(__file__), "second"])


if __name__ == "__main__":
    main()
