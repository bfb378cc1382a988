#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a process' anonymous memory grew between two copies of its
/proc/PID/smaps (attach_check.sh, issue 30): one line with the total and its
parts ([heap], unnamed mappings kept, unnamed mappings new since the first
copy and gone from it, each file's mappings), then the mappings that grew
most, by address, size and name.

    smaps_diff.py TAG BEFORE AFTER
"""
import re
import sys

HEAD = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$")


def regions(path):
    """{start: (size_kb, name, anonymous_kb)} of one smaps copy."""
    out = {}
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                start, end = int(m.group(1), 16), int(m.group(2), 16)
                cur = [(end - start) // 1024, m.group(3).strip(), 0]
                out[start] = cur
            elif cur is not None and line.startswith("Anonymous:"):
                cur[2] = int(line.split()[1])
    return {k: tuple(v) for k, v in out.items()}


def group(name):
    if not name:
        return "unnamed"
    if name.startswith("["):
        return name
    return name.rsplit("/", 1)[-1]


def main():
    if len(sys.argv) != 4:
        print("usage: smaps_diff.py TAG BEFORE AFTER", file=sys.stderr)
        return 2
    tag = sys.argv[1]
    try:
        a, b = regions(sys.argv[2]), regions(sys.argv[3])
    except OSError as e:
        print(f"smaps_diff: {e}", file=sys.stderr)
        return 1
    parts = {}
    grew = []
    for start in set(a) | set(b):
        sa, na, ka = a.get(start, (0, None, 0))
        sb, nb, kb = b.get(start, (0, None, 0))
        name = nb if nb is not None else na
        g = group(name)
        if g == "unnamed":
            g = "unnamed kept" if start in a and start in b else (
                "unnamed new" if start in b else "unnamed gone")
        parts[g] = parts.get(g, 0) + kb - ka
        if kb != ka:
            grew.append((kb - ka, start, sb or sa, name or ""))
    total = sum(parts.values())
    shown = sorted((k for k, v in parts.items() if v), key=lambda k: -abs(parts[k]))
    print(f"{tag}: anonymous {total:+d} KiB; " +
          ", ".join(f"{k} {parts[k]:+d}" for k in shown[:8]) +
          f"; mappings {len(a)} -> {len(b)}")
    grew.sort(key=lambda g: -abs(g[0]))
    for d, start, size, name in grew[:6]:
        print(f"{tag}:   {d:+d} KiB at {start:x} ({size} KiB mapping) {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
