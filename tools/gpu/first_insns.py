#!/usr/bin/env python3
"""The first bytes of exported functions of an x86-64 shared library, where
a uprobe on the function's entry lands. The kernel emulates a few
instructions there (push of a register, nops, jumps and calls); any other
it executes out of line with a single step: a second trap per hit, which a
VM can make several microseconds dearer (docs/PERFORMANCE.md). endbr64 is
one it single-steps; gtrace-bpf probes the instruction after it, so for
such an entry the guess is about that next instruction.
  first_insns.py [--dump DIR] LIB SYMBOL...
Prints one line per symbol: name, file offset, first 8 bytes, and a guess
(emulated or single-stepped) from the first instruction's opcode. --dump
also writes the first 128 bytes of each to DIR/SYMBOL.bin, for a
disassembler (objdump -D -b binary -m i386:x86-64 DIR/SYMBOL.bin).
"""
import struct, sys


def load_symbols(path):
    """Dynamic symbols (name -> (vaddr, size)) and PT_LOAD segments."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_vaddr, p_offset, p_filesz))
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    syms = {}
    for s in secs:
        if s[1] != 11:  # SHT_DYNSYM
            continue
        strtab = secs[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            name_off, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", data, off)
            if shndx == 0 or (info & 0xf) != 2:  # defined functions only
                continue
            end = data.index(b"\0", strtab[4] + name_off)
            syms[data[strtab[4] + name_off:end].decode()] = (value, size)
    return data, segs, syms


def guess(b):
    """Whether the kernel emulates the instruction starting at b (roughly)."""
    i = 0
    if b[:4] == b"\xf3\x0f\x1e\xfa":
        return "endbr64, probed after it: " + guess(b[4:])
    if b[0] in (0x41, 0x40):  # REX.B for push r8..r15
        i = 1
    op = b[i]
    if 0x50 <= op <= 0x57:
        return "push reg (emulated)"
    if op == 0x90 or (op == 0x0f and b[i + 1] == 0x1f):
        return "nop (emulated)"
    if op in (0xe8, 0xe9, 0xeb) or 0x70 <= op <= 0x7f:
        return "call/jmp (emulated)"
    return "single-stepped"


def main():
    argv = sys.argv[1:]
    dump = None
    if argv[:1] == ["--dump"] and len(argv) > 1:
        dump, argv = argv[1], argv[2:]
    if len(argv) < 2:
        raise SystemExit("usage: first_insns.py [--dump DIR] LIB SYMBOL...")
    data, segs, syms = load_symbols(argv[0])
    for name in argv[1:]:
        if name not in syms:
            print(f"{name:28} not exported")
            continue
        va = syms[name][0]
        off = next((va - v + o for v, o, n in segs if v <= va < v + n), None)
        if off is None:
            print(f"{name:28} not in a loaded segment")
            continue
        b = data[off:off + 12]
        if dump:
            with open(f"{dump}/{name}.bin", "wb") as f:
                f.write(data[off:off + 128])
        print(f"{name:28} 0x{off:08x}  {b.hex(' ')}  {guess(b)}")


main()
