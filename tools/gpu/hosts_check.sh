#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# merge --hosts on the 1-GPU machine (issue 31): two PyTorch processes, each
# with its own NCCL communicator (world size 1: NCCL refuses two ranks of
# one communicator on one GPU, "Duplicate GPU detected"), each recorded by a
# recorder of its own with -p, the second as if on another host with its
# wall clock SHIFT_NS ahead (GTRACE_TEST_REALTIME_SHIFT_NS: another boot id,
# CLOCK_REALTIME shifted). Merged: the shift recovered within 50 us from the
# clock pairs alone (the two share no collective, so no collective
# alignment: said), both hosts' NCCL collectives, launches and GPU-free
# records all there, stats' host_sum, the Perfetto export valid, analyze
# runs. Prints PASS/FAIL lines and the figures; files under $OUT/hosts.
# As root with a static build at $GTRACE.
# Usage: tools/gpu/hosts_check.sh [ITERS [SHIFT_NS]]
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d)}
G=${GTRACE:-$PWD/gtrace-bpf}
PY=${PYTHON:-python3}
iters=${1:-200}
shift_ns=${2:-5000000}
d=$OUT/hosts
mkdir -p -m 0700 "$d"
rm -f "$d/go"
pids=()
for r in 0 1; do
	env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_PORT=$((29541 + r)) START_FILE="$d/go" GAP_MS=5 \
		"$PY" tools/gpu/nccl_job.py allreduce "$iters" 1048576 > "$d/job$r.out" 2> "$d/job$r.err" &
	pids+=($!)
done
for r in 0 1; do
	for _ in $(seq 600); do grep -q '^waiting' "$d/job$r.out" && break; sleep 0.1; done
	grep -q '^waiting' "$d/job$r.out" || { echo "FAIL hosts: job $r did not start: $(tail -n 2 "$d/job$r.err")"; kill "${pids[@]}"; exit 1; }
done
recs=()
for r in 0 1; do
	env GTRACE_TEST_REALTIME_SHIFT_NS=$((r * shift_ns)) "$G" -p "${pids[$r]}" -v -o "$d/h$r.gtrace" --force \
		> "$d/rec$r.out" 2> "$d/rec$r.err" &
	recs+=($!)
done
for r in 0 1; do
	for _ in $(seq 300); do grep -q 'recording' "$d/rec$r.err" && break; sleep 0.1; done
done
touch "$d/go"
for r in 0 1; do wait "${pids[$r]}"; echo "job $r exit $?: $(tail -n 1 "$d/job$r.out" | cut -c1-200)"; done
for r in 0 1; do
	wait "${recs[$r]}"
	echo "recorder $r exit $?: $(grep -E 'NCCL probes|events' "$d/rec$r.err" | head -n 2 | tr '\n' ' ' | cut -c1-300)"
done
"$G" merge --hosts "$d/h0.gtrace" "$d/h1.gtrace" -o "$d/job.gtrace" --force > "$d/merge.out" 2> "$d/merge.err"
mrc=$?
sed 's/^/   merge: /' "$d/merge.err" | cut -c1-300
[ $mrc -eq 0 ] || { echo "FAIL hosts: merge --hosts exited $mrc"; exit 1; }
for f in h0 h1 job; do "$G" dump "$d/$f.gtrace" > "$d/$f.jsonl" 2> "$d/$f.dump.err"; done
"$G" stats "$d/job.gtrace" -r host_sum,nccl_sum > "$d/stats.txt" 2>&1
sed 's/^/   /' "$d/stats.txt" | head -n 20
"$G" analyze "$d/job.gtrace" > "$d/analyze.txt" 2>&1
arc=$?
"$G" export "$d/job.gtrace" -f perfetto -o "$d/job.pftrace" --force 2> "$d/export.err" &&
	"$PY" tools/perfetto_lint.py --json "$d/job.pftrace" > "$d/lint.json" 2> "$d/lint.err"
lrc=$?
"$PY" - "$d" "$shift_ns" "$arc" "$lrc" "${pids[@]}" <<'PYEOF'
import json, sys
d, shift, arc, lrc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
pids = [int(p) for p in sys.argv[5:7]]
def load(f):
    return [json.loads(l) for l in open("%s/%s.jsonl" % (d, f))]
h = [load("h0"), load("h1")]
job = load("job")
ok = True
def check(cond, what):
    global ok
    print(("PASS" if cond else "FAIL") + " hosts: " + what)
    ok &= bool(cond)
hosts = {r.get("host"): r for r in job if r.get("type") == "host"}
print("   host records: %s" % json.dumps(list(hosts.values()))[:900])
h1 = hosts.get(1, {})
off = h1.get("offset_ns")
check(off is not None and abs(off - shift) < 50000,
      "host 1's offset %s ns, its wall clock shifted %d ns: recovered within %s us"
      % (off, shift, "%.1f" % (abs(off - shift) / 1e3) if off is not None else "?"))
check(h1.get("method") == "realtime", "host 1 aligned by its CLOCK_REALTIME pairs (method %s: no communicator shared)"
      % h1.get("method"))
merr = open(d + "/merge.err").read()
check("CLOCK_REALTIME pairs only" in merr, "the merge says host 1 was aligned by its wall clock alone")
def kinds(recs, pid=None):
    c = {}
    for r in recs:
        if r.get("type") in ("clock", "host"):
            continue
        c[r.get("type")] = c.get(r.get("type"), 0) + 1
    return c
n_in = sum(sum(kinds(x).values()) for x in h)
n_out = sum(kinds(job).values())
check(n_in == n_out, "every record of the two traces in the job trace (%d of %d)" % (n_out, n_in))
for i, x in enumerate(h):
    colls = [r for r in x if r.get("type") == "nccl" and r.get("kind") == "collective"]
    launches = [r for r in x if r.get("type") == "launch"]
    check(len(colls) >= 100 and launches, "host %d: %d NCCL collectives recorded with -p (uid %s, seq up to %s), %d launches"
          % (i, len(colls), colls[0].get("uid") if colls else None, max((r.get("seq") or 0 for r in colls), default=0),
             len(launches)))
hp = {}
for r in job:
    if r.get("type") == "nccl" and r.get("kind") == "collective":
        hp.setdefault(r.get("pid"), 0)
        hp[r["pid"]] += 1
check(len(hp) == 2, "the job trace's collectives in two processes, one per host: %s" % hp)
st = open(d + "/stats.txt").read()
check("host_sum" in st.lower() or "host" in st.lower(), "stats host_sum printed")
check(arc == 0, "analyze over the job trace exit %d" % arc)
lint = json.load(open(d + "/lint.json")) if lrc == 0 else {}
check(lrc == 0 and lint.get("machines") == [0, 1],
      "the Perfetto export of the job trace valid (lint exit %d), the hosts its machines %s" % (lrc, lint.get("machines")))
sys.exit(0 if ok else 1)
PYEOF
