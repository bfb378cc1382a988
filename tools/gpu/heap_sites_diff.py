#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a job's heap grew, from tools/gpu/heap_sites.c's log: the live
bytes of every block (seconds from the first), then the code that holds the
sites whose bytes moved most after the first quarter of the blocks (the
job's warm-up left out), each with its bytes in every block (MiB).

Usage: heap_sites_diff.py LOG [N] (N sites, 8 by default)."""
import sys


def blocks(path):
    out = []
    for line in open(path):
        if line.startswith("t "):
            p = line.split()
            out.append((int(p[1]), int(p[3]), {}))
        elif line.startswith("  ") and out:
            p = line.split(None, 2)
            out[-1][2][p[2].strip()] = int(p[0])
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: heap_sites_diff.py LOG [N]")
    b = blocks(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    if not b:
        sys.exit("heap_sites_diff: no blocks in %s" % sys.argv[1])
    t0 = b[0][0]
    print("heap sites: %d blocks; live MiB: %s" % (len(b), " ".join(
        "%.0fs:%.1f" % ((t - t0) / 1e9, v / 2**20) for t, v, _ in b)))
    rows = []
    for k in set(k for _, _, s in b for k in s):
        v = [s.get(k, 0) for _, _, s in b]
        tail = v[len(v) // 4:]
        rows.append((max(tail) - min(tail), k, v))
    for d, k, v in sorted(rows, reverse=True)[:n]:
        print("heap sites: %+.1f MiB %s\n    %s" % (d / 2**20, k, " ".join("%.1f" % (x / 2**20) for x in v)))


if __name__ == "__main__":
    main()
