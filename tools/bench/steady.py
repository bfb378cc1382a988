# The steady mode shared by torch_step.py and transformer_step.py: run the
# step for SECONDS (or until SIGTERM / SIGINT) and write the end time of each
# step to a step log, for tools/bench/inproc.py.
#
# Step log: text, one CLOCK_MONOTONIC time in ns per line (Python's
# time.monotonic_ns() on Linux). The first line is the start of the first
# step, every later line the end of one step (and so the start of the next).
# The file is written through a 64 KiB buffer and flushed every 256 steps
# and at the end: one write() per 256 steps, nothing else per step but the
# clock read and the formatting of one integer.
#
# --loss-log FILE (with --steady): every 200th step's loss, "STEP LOSS" a
# line (its .item(): one synchronization per 200 steps), for a check that a
# tool attached to the job left its results as they were (tools/gpu/
# attach_check.sh: the same steps of a run without it).
#
# Once warmed up (the caller's business) and with the log open, it prints
# "ready PID" on stdout; at the end one JSON line:
#   {"mode": NAME, "steady": true, "pid": PID, "steps": N, "seconds": S,
#    "ms_per_step": ..}
#
# GT_MALLOC_LOG=FILE in the environment: SIGUSR2 appends the C heap's state
# (glibc's mallinfo2, summed over its arenas: bytes taken from the system,
# in use, free) to FILE, SIGHUP does the same after malloc_trim(0), for
# tools/gpu/attach_check.sh: whether memory a tool left grew in use (held)
# or free (kept by the allocator).
import ctypes, json, os, signal, time


LOSS_EVERY = 200


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]


def _malloc_log(path):
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _Mallinfo2

    def log(signum, frame):
        if signum == signal.SIGHUP:
            libc.malloc_trim(0)
        m = libc.mallinfo2()
        with open(path, "a") as f:
            f.write("%s system_kb %d mmapped_kb %d in_use_kb %d free_kb %d\n" % (
                "trimmed" if signum == signal.SIGHUP else "heap", m.arena >> 10, m.hblkhd >> 10,
                m.uordblks >> 10, m.fordblks >> 10))

    signal.signal(signal.SIGUSR2, log)
    signal.signal(signal.SIGHUP, log)


def run_steady(name, step, seconds, log_path, sync, loss_log=None):
    stop = []
    losses = open(loss_log, "w", buffering=1) if loss_log else None

    def on_signal(signum, frame):
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if os.environ.get("GT_MALLOC_LOG"):
        _malloc_log(os.environ["GT_MALLOC_LOG"])
    log = open(log_path, "w", buffering=1 << 16)
    write, now = log.write, time.monotonic_ns
    print("ready %d" % os.getpid(), flush=True)
    t0 = t = now()
    end = t0 + int(seconds * 1e9)
    write("%d\n" % t)
    n = 0
    while not stop and t < end:
        r = step()
        if losses and n % LOSS_EVERY == 0 and r is not None:
            losses.write("%d %r\n" % (n, float(r.item() if hasattr(r, "item") else r)))
        t = now()
        write("%d\n" % t)
        n += 1
        if n & 255 == 0:
            log.flush()
    sync()
    log.close()
    if losses:
        losses.close()
    secs = (t - t0) / 1e9
    print(json.dumps({"mode": name, "steady": True, "pid": os.getpid(), "steps": n,
                      "seconds": round(secs, 3),
                      "ms_per_step": round(secs * 1e3 / n, 4) if n else None}), flush=True)


def run_timed(name, step, steps, sync, profile=False, cuda=True):
    """The measured mode: STEPS steps timed together, then one JSON line
    {"mode": NAME, "ops": STEPS, "ns_per_op": .., "ms": .., "loss": ..}; with
    profile under torch.profiler (CPU, and CUDA when cuda), the process
    ending without the profiler's post-processing."""
    def timed():
        t0 = time.perf_counter_ns()
        loss = None
        for _ in range(steps):
            loss = step()
        sync()
        return time.perf_counter_ns() - t0, loss

    def report(ns, loss):
        print(json.dumps({"mode": name, "ops": steps, "ns_per_op": round(ns / steps, 1),
                          "ms": round(ns / 1e6, 3), "loss": round(loss.item(), 4)}), flush=True)

    if profile:
        from torch.profiler import profile as tprofile, ProfilerActivity
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with tprofile(activities=acts):
            report(*timed())
            os._exit(0)
    report(*timed())


def parse_args(argv, usage):
    """Splits argv into positional arguments and the options of the scripts:
    --profile, --steady SECONDS, --step-log FILE, --device DEV, --warmup N,
    --item (the step reads its loss back, as a loop that logs it: one
    synchronization a step). Returns (positional, options dict)."""
    pos, opts = [], {"profile": False, "steady": None, "step_log": None, "device": "cuda",
                     "warmup": 20, "item": False, "loss_log": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--profile":
            opts["profile"] = True
        elif a == "--item":
            opts["item"] = True
        elif a in ("--steady", "--step-log", "--device", "--warmup", "--loss-log"):
            if i + 1 >= len(argv):
                raise SystemExit("%s needs a value\n%s" % (a, usage))
            i += 1
            opts[a[2:].replace("-", "_")] = argv[i]
        elif a.startswith("--"):
            raise SystemExit("unknown option %s\n%s" % (a, usage))
        else:
            pos.append(a)
        i += 1
    try:
        opts["warmup"] = int(opts["warmup"])
    except ValueError:
        raise SystemExit("--warmup needs a number of steps\n" + usage)
    if opts["steady"] is not None:
        try:
            opts["steady"] = float(opts["steady"])
        except ValueError:
            raise SystemExit("--steady needs seconds\n" + usage)
        if opts["step_log"] is None:
            raise SystemExit("--steady needs --step-log FILE\n" + usage)
    return pos, opts
