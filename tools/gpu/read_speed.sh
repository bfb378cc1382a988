#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# How fast analyze and diff read a trace on one CPU (issue 16: >= 1 M
# records/s of CPU, on the generated trace and on a real GPU trace): each
# command RUNS times (default 3), pinned with taskset to CPU (default 8), its
# CPU time (user + sys, from the kernel's rusage of the child) and what that
# makes in records/s; diff is the trace against itself, both sides' records
# counted once, as docs/PERFORMANCE.md counts them. Prints INFO lines with
# the figures and a PASS or FAIL line for diff against the 1 M records/s
# target (its slowest run decides).
#
#   tools/gpu/read_speed.sh TRACE [RUNS] [CPU]
#
# From the repository root, with ./gtrace-bpf. Exit 1 when a command failed
# or diff is under the target, 2 on bad arguments.
set -u
cd "$(dirname "$0")/../.." || exit 2
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: tools/gpu/read_speed.sh TRACE [RUNS] [CPU]" >&2; exit 2; }
TRACE=$1 RUNS=${2:-3} CPU=${3:-8}
[ -x ./gtrace-bpf ] || { echo "FAIL read_speed: no ./gtrace-bpf" >&2; exit 1; }
exec python3 - "$TRACE" "$RUNS" "$CPU" <<- 'PY'
	import json, os, resource, subprocess, sys
	trace, runs, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
	g = "./gtrace-bpf"
	def cpu_of(args):
	    """CPU seconds of one run of args pinned to cpu, and its stdout."""
	    before = resource.getrusage(resource.RUSAGE_CHILDREN)
	    r = subprocess.run(["taskset", "-c", cpu, g] + args, stdout=subprocess.PIPE,
	                       stderr=subprocess.PIPE, text=True, errors="replace")
	    after = resource.getrusage(resource.RUSAGE_CHILDREN)
	    if r.returncode:
	        print("FAIL read_speed: gtrace-bpf %s exited %d: %s" % (" ".join(args), r.returncode,
	              r.stderr.strip().splitlines()[-1:] or ""))
	        sys.exit(1)
	    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout
	_, out = cpu_of(["analyze", trace, "--format", "json"])
	records = json.loads(out)["records"]
	print("INFO read_speed: %s, %d records (%.1f MB)" % (trace, records, os.path.getsize(trace) / 1e6))
	worst = None
	for name, args, n in (("analyze", ["analyze", trace], records),
	                      ("diff", ["diff", trace, trace], 2 * records)):
	    secs = sorted(cpu_of(args)[0] for _ in range(runs))
	    rate = [n / s / 1e6 if s > 0 else float("inf") for s in secs]
	    print("INFO read_speed %s: CPU %.3f .. %.3f s over %d runs on CPU %s: %.2f .. %.2f M records/s"
	          % (name, secs[0], secs[-1], runs, cpu, min(rate), max(rate)))
	    if name == "diff":
	        worst = min(rate)
	verdict = "PASS" if worst >= 1.0 else "FAIL"
	print("%s read_speed: diff at %.2f M records/s of one CPU in its slowest run (target >= 1 M)" % (verdict, worst))
	sys.exit(0 if verdict == "PASS" else 1)
	PY
