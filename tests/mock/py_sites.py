# SPDX-License-Identifier: MIT
"""py_sites: one helper that launches, called from two lines, for --stacks'
call-site cache: a hot call's site is its whole Python stack, not its
innermost frame. Drives the libcuda of GT_LIBCUDA (the mock) through ctypes.

  <module> -> site_a -> helper -> cuLaunchKernel   (N times, from line @loop_a)
  <module> -> site_b -> helper -> cuLaunchKernel   (N times, from line @loop_b)
  <module> -> map (C) -> helper -> cuLaunchKernel  (N times, from line @loop_c)
  <module> -> map (C) -> helper -> cuLaunchKernel  (N times, from line @loop_d)

site_a and site_b have the same frame size, so helper's frame is at the
same place in both: only the frames below it tell the two apart. The
calls through map put C between helper and <module> (from 3.12 an entry
frame on the C stack in the frames' chain): only <module>'s line, below
it, tells those two apart.

Usage: py_sites.py [N] (default 40). Prints one JSON line: the calls made.
"""
import json
import sys

from py_workload import check, lib, setup

calls = {"a": 0, "b": 0, "c": 0, "d": 0}


def helper(fn):
    check(lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None), "cuLaunchKernel")  # @helper


def site_a(fn):
    helper(fn)  # @site_a
    calls["a"] += 1


def site_b(fn):
    helper(fn)  # @site_b
    calls["b"] += 1


_, _, kernel = setup()
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
    site_a(kernel)  # @loop_a
    site_b(kernel)  # @loop_b
    calls["c"] += len(list(map(helper, [kernel])))  # @loop_c
    calls["d"] += len(list(map(helper, [kernel])))  # @loop_d
print(json.dumps(calls))
