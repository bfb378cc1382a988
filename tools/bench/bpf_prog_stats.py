#!/usr/bin/env python3
# Run time per call of the loaded BPF programs, from the kernel's own
# accounting (kernel.bpf_stats_enabled must be 1 while they run), for
# machines without bpftool. As root:
#   bpf_prog_stats.py [NAME...]     (default: every program that ran)
# Prints "NAME  RUNS  NS_PER_RUN" per program, busiest first.
import ctypes, os, struct, sys

SYS_BPF = 321                     # x86-64
BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 11, 13, 15
INFO_LEN = 232                    # struct bpf_prog_info up to run_cnt and beyond
OFF_NAME, OFF_RUN_TIME, OFF_RUN_CNT = 64, 192, 200

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    return r, buf


def main():
    want = set(sys.argv[1:])
    rows, pid = [], 0
    while True:
        r, buf = bpf(BPF_PROG_GET_NEXT_ID, struct.pack("<I", pid))
        if r < 0:
            break
        pid = struct.unpack_from("<I", buf.raw, 4)[0]
        fd, _ = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<I", pid))
        if fd < 0:
            continue
        info = ctypes.create_string_buffer(INFO_LEN)
        r, _ = bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("<IIQ", fd, INFO_LEN, ctypes.addressof(info)))
        os.close(fd)
        if r < 0:
            continue
        name = info.raw[OFF_NAME:OFF_NAME + 16].split(b"\0")[0].decode()
        t, n = struct.unpack_from("<QQ", info.raw, OFF_RUN_TIME)
        if n and (not want or name in want):
            rows.append((n, name, t / n))
    if not rows:
        print("no BPF program has run time recorded (is kernel.bpf_stats_enabled 1?)", file=sys.stderr)
        return 1
    for n, name, ns in sorted(rows, reverse=True):
        print(f"{name:20} {n:10d} {ns:8.1f}")
    return 0


sys.exit(main())
