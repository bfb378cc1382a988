# Steady jobs of other frameworks for the --cupti=attach check (tools/gpu/
# attach_check.sh): a JAX or CuPy loop of matrix products and element-wise
# work, one synchronization a step, writing each step's end time to a step
# log as tools/bench/steady.py does (CLOCK_MONOTONIC ns a line, the first the
# start), "ready PID" once warmed up, for SECONDS or until SIGTERM.
#   python3 attach_jobs.py jax|cupy SECONDS STEP_LOG
# At the end one line "checksum X": the last matrix's sum, the same for the
# same number of steps. CRASH_REPORT_LIB=crash_report.so: a crash's native
# place on stderr too (tools/gpu/crash_report.c).
import ctypes, os, signal, sys, time

N = 1024


def jax_step():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    x = jax.random.normal(jax.random.PRNGKey(0), (N, N), dtype=jnp.float32)

    @jax.jit
    def f(a):
        b = jnp.tanh(a @ a * (1.0 / N))
        return b / (jnp.max(jnp.abs(b)) + 1.0) + 0.01 * a

    state = [x]

    def step():
        state[0] = f(state[0])
        state[0].block_until_ready()
    return step, lambda: float(jnp.sum(state[0]))


def cupy_step():
    import cupy as cp
    cp.random.seed(0)
    state = [cp.random.standard_normal((N, N), dtype=cp.float32)]

    def step():
        a = state[0]
        b = cp.tanh(a @ a * (1.0 / N))
        state[0] = b / (cp.abs(b).max() + 1.0) + 0.01 * a
        cp.cuda.Device().synchronize()
    return step, lambda: float(state[0].sum())


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("jax", "cupy"):
        raise SystemExit("usage: attach_jobs.py jax|cupy SECONDS STEP_LOG")
    if os.environ.get("CRASH_REPORT_LIB"):
        ctypes.CDLL(os.environ["CRASH_REPORT_LIB"]).crash_report_install()
    step, checksum = (jax_step if sys.argv[1] == "jax" else cupy_step)()
    for _ in range(50):
        step()
    stop = []
    signal.signal(signal.SIGTERM, lambda s, f: stop.append(s))
    log = open(sys.argv[3], "w", buffering=1 << 16)
    print("ready %d" % os.getpid(), flush=True)
    t = t0 = time.monotonic_ns()
    end = t0 + int(float(sys.argv[2]) * 1e9)
    log.write("%d\n" % t)
    n = 0
    while not stop and t < end:
        step()
        t = time.monotonic_ns()
        log.write("%d\n" % t)
        n += 1
        if n & 255 == 0:
            log.flush()
    log.close()
    print("steps %d checksum %r" % (n, checksum()), flush=True)


if __name__ == "__main__":
    main()
