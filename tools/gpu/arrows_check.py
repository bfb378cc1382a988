#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One launch -> GPU arrow per linked GPU record, in both exports of a merged
trace (python3 stdlib only; the Perfetto side through tools/perfetto_lint.py).

Usage: tools/gpu/arrows_check.py DUMP.jsonl TRACE.pftrace TRACE.json

DUMP.jsonl is `gtrace-bpf dump` of the merged trace; the two exports are of
the same trace.  Linked GPU records are the kernels, copies and sets that
name their call (launch_ts).  Perfetto flows are the distinct flow ids (the
lint checks each is on two events at least; here, on exactly two); JSON
flows the 's' and 'f' flow events, one of each per id.  Prints one line,
"PASS timeline arrows: ..." or "FAIL timeline arrows: ...", with the figures,
and exits 1 on FAIL.
"""

import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import perfetto_lint  # noqa: E402

GPU_TYPES = ("gpu_kernel", "gpu_memcpy", "gpu_memset")


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    dump, pf, js = argv[1:4]
    ev = [json.loads(line) for line in open(dump) if line.startswith("{")]
    linked = [e for e in ev if e.get("type") in GPU_TYPES and "launch_ts" in e]
    kernels = sum(1 for e in linked if e["type"] == "gpu_kernel")
    with open(pf, "rb") as f:
        lint = perfetto_lint.lint_bytes(f.read())
    pf_flows, pf_max = lint["flows"], lint["flow_events_max"]
    events = json.load(open(js))["traceEvents"]
    ph = collections.Counter((e["ph"], e["id"]) for e in events
                             if e.get("cat") == "flow" and e.get("ph") in ("s", "f"))
    js_s = sum(n for (p, _), n in ph.items() if p == "s")
    js_f = sum(n for (p, _), n in ph.items() if p == "f")
    ids = {i for (_, i) in ph}
    one_each = all(ph[("s", i)] == 1 and ph[("f", i)] == 1 for i in ids)
    ok = (pf_flows == len(linked) and pf_max == (2 if linked else 0) and
          js_s == len(linked) and js_f == len(linked) and one_each)
    print("%s timeline arrows: %d linked GPU records (%d kernels), %d Perfetto flows "
          "(at most %d events each), %d JSON flows (%d 's', %d 'f'%s)" %
          ("PASS" if ok else "FAIL", len(linked), kernels, pf_flows, pf_max, len(ids), js_s, js_f,
           "" if one_each else ", not one of each per id"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
