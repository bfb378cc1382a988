# Checks a recorded NCCL job (tools/gpu/nccl_single.sh, ddp_two_rank.sh) from
# its dump, the jobs' JSON lines, analyze's JSON and the Perfetto lint:
#   python3 nccl_check.py single DUMP JOBJSON...
#   python3 nccl_check.py ddp DUMP ANALYZE_JSON LINT_JSON JOBJSON...
# Prints PASS/FAIL lines with the figures; exits 1 on a FAIL.
import collections, json, sys

mode, dump = sys.argv[1], sys.argv[2]
rest = sys.argv[3:]
az = lint = None
if mode == "ddp":
    try:
        az = json.load(open(rest[0]))
    except (OSError, ValueError) as e:
        az = None
        print("   analyze's JSON is missing or unreadable (%s): its checks fail" % e)
    lint = json.load(open(rest[1]))
    rest = rest[2:]
jobs = [json.loads(open(p).read().strip().splitlines()[-1]) for p in rest]
recs = [json.loads(l) for l in open(dump)]
ok = True

def check(cond, what):
    global ok
    print(("PASS" if cond else "FAIL") + " nccl_%s: %s" % (mode, what))
    ok &= bool(cond)

by_pid = collections.defaultdict(list)
for r in recs:
    by_pid[r.get("pid")].append(r)
colls = {}
for j in jobs:
    pid, rank = j["pid"], j["rank"]
    rs = by_pid[pid]
    nc = [r for r in rs if r.get("type") == "nccl"]
    apis = collections.Counter(r["api"] for r in nc)
    print("   rank %d pid %d NCCL %s: %s" % (rank, pid, j["nccl_version"], dict(apis)))
    ranks = [r for r in rs if r.get("type") == "rank"]
    check(ranks and ranks[0].get("rank") == rank and ranks[0].get("world_size") == j["world"],
          "rank %d: its rank record from the environment: %s" % (rank, ranks[:1]))
    inits = [r for r in nc if r.get("kind") == "init"]
    check(inits and all(r.get("rank") == rank and r.get("nranks") == j["world"] and r.get("uid") for r in inits[:1]),
          "rank %d: its communicator's init (%s) with rank %d of %d and a uid" %
          (rank, inits[0]["api"] if inits else "none", rank, j["world"]))
    launches = [r for r in rs if r.get("type") == "launch"]
    ondev = [r for r in rs if r.get("type") in ("launch", "memcpy", "memset", "sync") and "api" in r]
    nodev = [r for r in ondev if "device" not in r]
    check(launches and not nodev and all(r["device"] == j["local_rank"] for r in launches),
          "rank %d: %d launches, every call on device %d (%d without a device)" %
          (rank, len(launches), j["local_rank"], len(nodev)))
    ar = sorted((r for r in nc if r["api"] == "ncclAllReduce"), key=lambda r: r["ts"])
    if mode == "single":
        check(len(ar) == j["iters"], "ncclAllReduce calls %d, the loop's %d" % (len(ar), j["iters"]))
        check(all(r.get("count") == j["numel"] and r.get("datatype") == "float32" and r.get("op") == "sum"
                  and r.get("device") == 0 and not r.get("failed") for r in ar),
              "every ncclAllReduce: count %d float32 sum on device 0, none failed" % j["numel"])
        check([r.get("seq") for r in ar] == list(range(1, len(ar) + 1)),
              "collectives numbered 1..%d on their communicator" % len(ar))
    gk = [r for r in rs if r.get("type") == "gpu_kernel" and "nccl" in r.get("kernel", "").lower()]
    print("   rank %d: %d NCCL kernels on the GPU, e.g. %s" % (rank, len(gk), gk[0]["kernel"][:90] if gk else "-"))
    if mode == "single":
        # one rank: an in-place all-reduce is a no-op, NCCL 2.28 puts no
        # work on the GPU for it (seen on the H200: 0 kernels, 0 copies)
        print("INFO nccl_single: rank %d of 1: %d NCCL kernels for %d in-place all-reduces "
              "(NCCL does no GPU work for them with one rank; the kernels are checked by ddp_two_rank.sh)"
              % (rank, len(gk), len(ar)))
        check(all(r.get("device") == j["local_rank"] for r in gk),
              "rank %d: any NCCL kernel on device %d" % (rank, j["local_rank"]))
    else:
        check(len(gk) >= len(ar) and all(r.get("device") == j["local_rank"] for r in gk),
              "rank %d: NCCL kernels on the GPU (%d) for its %d all-reduces, on device %d" %
              (rank, len(gk), len(ar), j["local_rank"]))
    colls[rank] = [(r.get("uid"), r.get("seq"), r["api"]) for r in nc if r.get("kind") == "collective"]
if mode == "ddp":
    a, b = colls.get(0, []), colls.get(1, [])
    check(a and a == b, "both ranks made the same %d collectives (uid, number, api)" % len(a))
    slow = jobs[0]["slow_rank"]
    pid_of = {j["rank"]: j["pid"] for j in jobs}
    # the straggler from the dump alone: the last entry of each collective
    entry = collections.defaultdict(dict)
    for j in jobs:
        for r in by_pid[j["pid"]]:
            if r.get("type") == "nccl" and r.get("kind") == "collective" and r.get("uid") and r.get("seq"):
                entry[(r["uid"], r["seq"])][j["rank"]] = r["ts"]
    full = [v for v in entry.values() if len(v) == 2]
    lasts = collections.Counter(max(v, key=v.get) for v in full)
    check(full and lasts[slow] >= 0.9 * len(full),
          "from the dump: rank %d came last to %d of %d matched collectives" % (slow, lasts[slow], len(full)))
    # and on the GPU: each rank's first NCCL kernel launched inside the call
    # (launch_ts of the kernel = ts of a launch whose nccl_ts is the call's)
    gpu = collections.defaultdict(dict)
    for j in jobs:
        rs = by_pid[j["pid"]]
        call_of = {(r["tid"], r["ts"]): r.get("nccl_ts") for r in rs if r.get("type") == "launch" and r.get("nccl_ts")}
        coll_at = {(r["tid"], r["ts"]): (r["uid"], r["seq"]) for r in rs if r.get("type") == "nccl"
                   and r.get("kind") == "collective" and r.get("uid") and r.get("seq") and not r.get("group")}
        for k in rs:
            if k.get("type") == "gpu_kernel" and k.get("launch_ts"):
                c = coll_at.get((k.get("launch_tid"), call_of.get((k.get("launch_tid"), k["launch_ts"]))))
                if c and (j["rank"] not in gpu[c] or k["ts"] < gpu[c][j["rank"]]):
                    gpu[c][j["rank"]] = k["ts"]
    gfull = [v for v in gpu.values() if len(v) == 2]
    glasts = collections.Counter(max(v, key=v.get) for v in gfull)
    gwait = sum(max(v.values()) - min(v.values()) for v in gfull)
    print("   on the GPU: %d collectives with both ranks' kernels, rank %d last to %d, waits %.1f ms in all" %
          (len(gfull), slow, glasts[slow], gwait / 1e6))
    check(gfull and glasts[slow] >= 0.9 * len(gfull),
          "from the dump, by the kernels' GPU starts: rank %d came last to %d of %d collectives" %
          (slow, glasts[slow], len(gfull)))
    az = az or {}
    scopes = {s["pid"]: s for s in az.get("scopes", []) if s.get("kind") == "process"}
    fs = {pid: {f["id"]: f for f in s.get("findings", [])} for pid, s in scopes.items()}
    other = 1 - slow
    st = fs.get(pid_of[slow], {}).get("nccl_straggler")
    wt = fs.get(pid_of[other], {}).get("nccl_wait")
    check(st is not None, "analyze: nccl_straggler on the slow rank %d: %s" % (slow, st and st["summary"]))
    check(wt is not None and ("rank %d" % slow) in wt["summary"],
          "analyze: nccl_wait on rank %d naming rank %d: %s" % (other, slow, wt and wt["summary"]))
    comm = scopes.get(pid_of[other], {}).get("communication", {})
    print("   analyze: rank %d matched %s collectives, %s by the GPU" % (other, comm.get("matched"), comm.get("matched_gpu")))
    steps = jobs[0]["steps"]
    check(comm.get("waited_ns", 0) >= 0.5 * steps * jobs[0]["slow_ms"] * 1e6,
          "rank %d waited %.1f ms in all for the slow rank (planted %d x %.0f ms)" %
          (other, comm.get("waited_ns", 0) / 1e6, steps, jobs[0]["slow_ms"]))
    procs = {p["pid"]: p for p in lint.get("processes", [])}
    other_tr = {t["uuid"]: t for t in lint.get("other", [])}
    for j in jobs:
        p = procs.get(j["pid"], {})
        gpu = [t for t in lint.get("other", []) if t["name"] == "GPU %d" % j["local_rank"] and t["parent"] == p.get("uuid")]
        streams = [t for t in lint.get("other", []) if gpu and t["parent"] == gpu[0]["uuid"]]
        check((p.get("name") or "").endswith("[rank %d/2]" % j["rank"]) and gpu and streams,
              "Perfetto: process %s, its track GPU %d with %d stream tracks" %
              (p.get("name"), j["local_rank"], len(streams)))
    comms = [t for t in lint.get("other", []) if t["name"].startswith("NCCL communicator") and "(2 ranks)" in t["name"]]
    check(comms, "Perfetto: a communicator track of 2 ranks: %s" % [t["name"] for t in comms][:3])
sys.exit(0 if ok else 1)
