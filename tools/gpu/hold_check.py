#!/usr/bin/env python3
"""A libcuda loaded after the recorder started, from a place nobody knew of,
and called at once: are all its calls recorded, and what does holding the
process while the probes are attached cost? (issue 25, defect 7)

Run as root from the repository root, with the recorder as ./gtrace-bpf
(a `make STATIC=libs` build on the GPU machine):

  python3 tools/gpu/hold_check.py [--libcuda PATH] [--runs 3] [--rounds 20] [--out DIR]

1. Counts: `./gtrace-bpf --all` is started first; then, --runs times, a
   program (this file, --child) copies libcuda to a new directory under
   DIR (a new inode, no path the recorder knows), dlopens the copy and calls
   it at once with ctypes: cuInit, the device, its primary context, a
   module from PTX (a cubin built with ptxas when the driver refuses the
   PTX), cuModuleGetFunction, a stream, allocations, copies, a set, 24
   launches, an event, synchronizations, the frees and unloads (57 calls),
   counting its own calls per api. The trace's calls of each run's process
   are compared with the program's own counts, per api probed
   (bpf/gtrace_api.h): PASS when every one is equal. The holds are read
   from `dump --summary` (libcuda loads): each run's process held once,
   the hold's time (the stop at the open's return to the SIGCONT).
2. Cost: `./gtrace-bpf --cgroup CG` runs while a program times the dlopen
   of a fresh copy (a new inode each time), --rounds pairs, inside CG (held
   while the copy's probes are attached) and outside it (not traced: the
   openat probes run, nothing else), interleaved with the order alternating:
   median and range of each, of the paired differences, and the holds the
   trace measured.

Prints PASS/FAIL/INFO lines and a short summary; writes under DIR (default
$OUT, else /tmp/gtrace-hold): hold_check.log, the recorders' stderr, the
traces, their dumps and summaries, hold_check.json. Exit 1 when a count
check failed. Against the mock here: --libcuda .output/mock/libcuda.so.1.
"""
import argparse, ctypes, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry gt_hold_inc(.param .u64 p_a, .param .u32 p_n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<7>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [p_a];
	ld.param.u32 %r1, [p_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r6, [%rd4];
	add.s32 %r6, %r6, 1;
	st.global.u32 [%rd4], %r6;
DONE:
	ret;
}
"""
N = 1 << 16          # elements
LAUNCHES = 24
MOCK_DEVICE = "gtrace mock device"


def log(msg, f=None):
    print(msg, flush=True)
    if f:
        f.write(msg + "\n")
        f.flush()


# ---------------------------------------------------------------- the child

def copy_lib(src, d):
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, "libcuda.so.1")
    shutil.copyfile(os.path.realpath(src), dst)
    os.chmod(dst, 0o755)
    return dst


def child_calls(path, out):
    """Copies libcuda, dlopens the copy and calls it at once, counting."""
    counts = {}
    t0 = time.monotonic_ns()
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    t1 = time.monotonic_ns()
    c_uint64 = ctypes.c_uint64

    def cu(name, *args):
        r = getattr(lib, name)(*args)
        counts[name] = counts.get(name, 0) + 1
        if r != 0:
            raise SystemExit(f"{name} failed: CUresult {r}")

    cu("cuInit", 0)
    ver, ndev, dev = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    cu("cuDriverGetVersion", ctypes.byref(ver))
    cu("cuDeviceGetCount", ctypes.byref(ndev))
    cu("cuDeviceGet", ctypes.byref(dev), 0)
    name = ctypes.create_string_buffer(256)
    cu("cuDeviceGetName", name, 256, dev)
    ctx, mod, fn, stream, ev = (ctypes.c_void_p() for _ in range(5))
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)
    r = lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(PTX.encode()))
    counts["cuModuleLoadData"] = 1
    how = "ptx"
    if r != 0:
        # a driver that refuses this PTX: the same kernel as a cubin
        ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
        tmp = tempfile.mkdtemp()
        with open(os.path.join(tmp, "k.ptx"), "w") as f:
            f.write(PTX)
        subprocess.run([ptxas, "-arch=sm_90", os.path.join(tmp, "k.ptx"), "-o",
                        os.path.join(tmp, "k.cubin")], check=True)
        data = open(os.path.join(tmp, "k.cubin"), "rb").read()
        cu("cuModuleLoadData", ctypes.byref(mod), ctypes.c_char_p(data))
        how = f"cubin (PTX refused: {r})"
    cu("cuModuleGetFunction", ctypes.byref(fn), mod, b"gt_hold_inc")
    cu("cuStreamCreate", ctypes.byref(stream), 0)
    da, db = c_uint64(), c_uint64()
    cu("cuMemAlloc_v2", ctypes.byref(da), N * 4)
    cu("cuMemAlloc_v2", ctypes.byref(db), N * 4)
    host = ctypes.c_void_p()
    cu("cuMemAllocHost_v2", ctypes.byref(host), N * 4)
    ctypes.memset(host, 0, N * 4)
    cu("cuMemcpyHtoD_v2", da, host, N * 4)
    cu("cuMemsetD32_v2", db, 7, N)
    pa, pn = c_uint64(da.value), ctypes.c_uint32(N)
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(pa), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(pn), ctypes.c_void_p))
    for _ in range(LAUNCHES):
        cu("cuLaunchKernel", fn, N // 256, 1, 1, 256, 1, 1, 0, stream, params, None)
    cu("cuMemcpyDtoHAsync_v2", host, da, N * 4, stream)
    cu("cuStreamSynchronize", stream)
    cu("cuEventCreate", ctypes.byref(ev), 0)
    cu("cuEventRecord", ev, stream)
    cu("cuEventSynchronize", ev)
    cu("cuCtxSynchronize")
    got = (ctypes.c_uint32 * 1)()
    cu("cuMemcpyDtoH_v2", got, da, 4)
    ok = name.value.decode(errors="replace") == MOCK_DEVICE or got[0] == LAUNCHES
    cu("cuMemFree_v2", da)
    cu("cuMemFree_v2", db)
    cu("cuMemFreeHost", host)
    cu("cuEventDestroy_v2", ev)
    cu("cuStreamDestroy_v2", stream)
    cu("cuModuleUnload", mod)
    cu("cuDevicePrimaryCtxRelease_v2", dev)
    json.dump({"pid": os.getpid(), "lib": path, "dlopen_ns": t1 - t0, "device": name.value.decode(errors="replace"),
               "module": how, "result_ok": ok, "calls": counts}, out)


def child_dlopen(path, out):
    t0 = time.monotonic_ns()
    ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    json.dump({"pid": os.getpid(), "dlopen_ns": time.monotonic_ns() - t0}, out)


# ---------------------------------------------------------------- the parent

class Recorder:
    def __init__(self, gtrace, args, trace, err):
        self.err = open(err, "w")
        self.p = subprocess.Popen([gtrace] + args + ["-o", trace, "--force"], stdout=subprocess.DEVNULL,
                                  stderr=self.err)
        self.errpath = err
        for _ in range(600):
            if "gtrace-bpf: recording" in open(err).read():
                return
            if self.p.poll() is not None:
                raise SystemExit(f"gtrace-bpf {' '.join(args)} exited {self.p.returncode}: {open(err).read()[-600:]}")
            time.sleep(0.05)
        raise SystemExit("gtrace-bpf did not start recording within 30 s")

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        rc = self.p.wait(timeout=120)
        self.err.close()
        return rc


def probed_apis():
    names = set()
    for line in open("bpf/gtrace_api.h"):
        m = re.match(r"\s*X\((\w+),", line)
        if m:
            names.add(m.group(1))
    return names


def recorded_counts(gtrace, trace, dump_path):
    with open(dump_path, "w") as f:
        subprocess.run([gtrace, "dump", trace], stdout=f, check=True)
    per = {}
    for line in open(dump_path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r.get("api"), str) and r.get("type") != "process":
            c = per.setdefault(r["pid"], {})
            c[r["api"]] = c.get(r["api"], 0) + 1
    return per


def loads_of(gtrace, trace, sum_path):
    """The summary's libcuda load lines: pid -> [(kind, ns or text, path)]."""
    with open(sum_path, "w") as f:
        subprocess.run([gtrace, "dump", "--summary", trace], stdout=f, check=True)
    loads = {}
    for line in open(sum_path):
        m = re.match(r"  pid (\d+) held (\d+) ns: (.*)$", line)
        if m:
            loads.setdefault(int(m.group(1)), []).append(("held", int(m.group(2)), m.group(3)))
        m = re.match(r"  pid (\d+) gap (\S+) s \((.*)\): (.*)$", line)
        if m:
            loads.setdefault(int(m.group(1)), []).append(("gap", m.group(2) + " " + m.group(3), m.group(4)))
    return loads


def cgroup2_root():
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        i = f.index("-")
        if f[i + 1] == "cgroup2":
            return f[4]
    raise SystemExit("no cgroup2 file system is mounted")


def spread(v):
    v = sorted(v)
    return f"median {statistics.median(v) / 1e6:.3f} ms [{v[0] / 1e6:.3f} .. {v[-1] / 1e6:.3f}]"


def run_child(mode, d, lib, cgroup=None):
    def into_cgroup():
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
    r = subprocess.run([sys.executable, os.path.abspath(__file__), mode, d, lib], capture_output=True,
                       text=True, preexec_fn=into_cgroup, timeout=120)
    if r.returncode:
        raise SystemExit(f"{mode} {d}: status {r.returncode}: {r.stderr[-600:]}")
    return json.loads(r.stdout)


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("--child", "--child-dlopen"):
        path = copy_lib(sys.argv[3], sys.argv[2])
        (child_calls if sys.argv[1] == "--child" else child_dlopen)(path, sys.stdout)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libcuda", default="/usr/local/nvidia/lib64/libcuda.so.1")
    ap.add_argument("--gtrace", default="./gtrace-bpf")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out", default=os.environ.get("OUT") or "/tmp/gtrace-hold")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lf = open(os.path.join(a.out, "hold_check.log"), "w")
    probed = probed_apis()
    res = {"runs": [], "cost": {}}
    fails = 0

    # 1. counts
    rec = Recorder(a.gtrace, ["--all"], os.path.join(a.out, "counts.gtrace"), os.path.join(a.out, "counts.err"))
    progs = []
    for i in range(a.runs):
        d = tempfile.mkdtemp(prefix=f"unlisted{i}.", dir=a.out)
        progs.append(run_child("--child", d, a.libcuda))
    rc = rec.stop()
    log(f"INFO recorder --all exited {rc}: " + " | ".join(open(rec.errpath).read().strip().split("\n")[-3:]), lf)
    per = recorded_counts(a.gtrace, os.path.join(a.out, "counts.gtrace"), os.path.join(a.out, "counts.json"))
    loads = loads_of(a.gtrace, os.path.join(a.out, "counts.gtrace"), os.path.join(a.out, "counts.sum"))
    for i, p in enumerate(progs):
        got = per.get(p["pid"], {})
        rows, bad = [], 0
        for api in sorted(p["calls"]):
            want = p["calls"][api]
            if api not in probed:
                rows.append(f"  {api:32s} program {want:4d}  (not probed)")
                continue
            g = got.get(api, 0)
            bad += g != want
            rows.append(f"  {api:32s} program {want:4d}  recorded {g:4d}{'' if g == want else '  <--'}")
        extra = {k: v for k, v in got.items() if k not in p["calls"]}
        bad += len(extra)
        n_want = sum(v for k, v in p["calls"].items() if k in probed)
        n_got = sum(got.values())
        held = [x for x in loads.get(p["pid"], []) if x[2].endswith(p["lib"].split("/")[-2] + "/libcuda.so.1")]
        hs = ", ".join(f"{x[0]} {x[1] / 1e6:.3f} ms" if x[0] == "held" else f"gap {x[1]}" for x in held) or "none"
        log(f"{'PASS' if not bad else 'FAIL'} run {i + 1}: pid {p['pid']} recorded {n_got} of the program's "
            f"{n_want} probed calls ({sum(p['calls'].values())} in all; module from {p['module']}; result "
            f"{'ok' if p['result_ok'] else 'WRONG'}); dlopen {p['dlopen_ns'] / 1e6:.3f} ms; its load: {hs}", lf)
        for r in rows:
            lf.write(r + "\n")
        if extra:
            log(f"  recorded but not made by the program: {extra}", lf)
        fails += bad > 0
        res["runs"].append({"program": p, "recorded": got, "loads": held, "pass": not bad})

    # 2. cost: inside the cgroup (held) against outside it (untraced), interleaved
    cg = os.path.join(cgroup2_root(), f"gtrace-hold-{os.getpid()}")
    os.mkdir(cg)
    try:
        rec = Recorder(a.gtrace, ["--cgroup", cg, "-t", "cuda"], os.path.join(a.out, "cost.gtrace"),
                       os.path.join(a.out, "cost.err"))
        held, free, pids = [], [], []
        for i in range(a.rounds):
            order = (True, False) if i % 2 == 0 else (False, True)
            for traced in order:
                d = tempfile.mkdtemp(prefix="cost.", dir=a.out)
                r = run_child("--child-dlopen", d, a.libcuda, cg if traced else None)
                (held if traced else free).append(r["dlopen_ns"])
                if traced:
                    pids.append(r["pid"])
                shutil.rmtree(d)
        rec.stop()
    finally:
        os.rmdir(cg)
    loads = loads_of(a.gtrace, os.path.join(a.out, "cost.gtrace"), os.path.join(a.out, "cost.sum"))
    # the copies' loads (the first child's read of the original is one too)
    mine = [x for p in pids for x in loads.get(p, []) if "/cost." in x[2]]
    holds = [x[1] for x in mine if x[0] == "held"]
    gaps = [x for x in mine if x[0] == "gap"]
    diffs = [h - f for h, f in zip(held, free)]
    log(f"INFO cost, {a.rounds} pairs: dlopen of a fresh copy untraced {spread(free)}; traced and held "
        f"{spread(held)}; paired difference {spread(diffs)}", lf)
    if holds:
        log(f"INFO holds in the trace ({len(holds)} of {len(pids)} traced dlopens): {spread(holds)}"
            + (f"; {len(gaps)} gaps: {gaps[:3]}" if gaps else ""), lf)
    else:
        log(f"FAIL no holds in the cost trace ({len(gaps)} gaps)", lf)
        fails += 1
    res["cost"] = {"untraced_ns": free, "held_ns": held, "holds_ns": holds, "gaps": gaps}
    json.dump(res, open(os.path.join(a.out, "hold_check.json"), "w"), indent=1)
    log(f"summary: {sum(r['pass'] for r in res['runs'])} of {a.runs} runs recorded every call; "
        f"a hold costs the dlopen {statistics.median(diffs) / 1e6:.3f} ms (median paired difference); "
        f"logs in {a.out}", lf)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
