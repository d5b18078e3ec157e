#!/usr/bin/env python3
"""Seeds for the rdma-sim-driver fuzz target from qtest runs.

    qtest-seeds.py LOG OUTDIR PREFIX MAX_LEN

LOG is what a qtest program printed with QTEST_LOG=1: the qtest protocol
as its QEMUs received it.  Each QEMU that touched the rdma-sim function at
00:04.0 becomes one input in OUTDIR/PREFIX-N, in the operations of
tests/qtest/fuzz/rdma-sim-fuzz.h: writes to the function's BARs and PCI
configuration, guest memory writes, clock steps; register reads, but not
the polling of guest memory.  BAR addresses become (BAR, offset), so the
input still works where the fuzz target's BARs are.  An input is cut
after the operations that fit in MAX_LEN bytes.
"""

import base64
import os
import re
import struct
import sys

SEPARATOR = b"FUZZ"
(OP_READ, OP_WRITE, OP_CFG_READ, OP_CFG_WRITE, OP_MEM, OP_MEMSET, OP_CLOCK,
 OP_FRAME) = range(8)
DEVFN = 4 << 3
RAM = 128 << 20                 # the default of -M pc, as the fuzz target
# The bytes of one memory write kept: buffer contents hardly matter to the
# device's paths, and seeds stay small
MAX_MEM = 512
SIZES = {"b": 0, "w": 1, "l": 2, "q": 3}


class Qemu:
    """One QEMU's commands, turned into operations."""

    def __init__(self):
        self.ops = []
        self.cfg_addr = 0
        self.bars = {}          # BAR register offset -> last value written
        self.masks = {}         # BAR register offset -> size mask read back
        self.sizing = None      # the BAR register set to all ones
        self.reading = None     # ... whose mask the next reply is
        self.touched = False

    def op(self, code, args):
        if self.ops and self.ops[-1] == (code, args) and code == OP_READ:
            return              # polling a register: once is enough
        if self.ops and code == OP_CLOCK and self.ops[-1][0] == OP_CLOCK:
            prev = struct.unpack("<I", self.ops[-1][1])[0]
            ns = struct.unpack("<I", args)[0]
            if prev and ns:
                self.ops[-1] = (OP_CLOCK,
                                struct.pack("<I", min(prev + ns, 2**32 - 1)))
                return
        self.ops.append((code, args))

    def bar_of(self, addr):
        """(BAR, offset) of a guest address in one of our memory BARs."""
        for reg in range(0x10, 0x28, 4):
            val, mask = self.bars.get(reg), self.masks.get(reg)
            if val is None or not mask or val & 1:
                continue
            base = val & ~0xf
            if (val >> 1) & 3 == 2:             # 64-bit: the next register
                base |= self.bars.get(reg + 4, 0) << 32
            size = (~(mask & ~0xf) & 0xffffffff) + 1
            if base <= addr < base + size:
                return (reg - 0x10) // 4, addr - base
        return None

    def access(self, addr, size, data):
        """A read (data None) or write of size bytes at addr."""
        where = self.bar_of(addr)
        if where and size in (1, 2, 4, 8):
            self.touched = True
            bar, off = where
            code = size.bit_length() - 1
            if data is None:
                self.op(OP_READ, struct.pack("<BBI", bar, code, off))
            else:
                self.op(OP_WRITE, struct.pack("<BBIQ", bar, code, off,
                                              int.from_bytes(data, "little")))
        elif data is not None and addr < RAM:
            self.op(OP_MEM, struct.pack("<I", addr) + data[:MAX_MEM])

    def ours(self):
        return self.cfg_addr >> 31 and (self.cfg_addr >> 8) & 0xffff == DEVFN

    def command(self, words):
        cmd, args = words[0], words[1:]
        if cmd.startswith("out") and len(args) == 2:
            port, val = int(args[0], 0), int(args[1], 0)
            size = {"outb": 0, "outw": 1, "outl": 2}[cmd]
            if port == 0xcf8 and size == 2:
                self.cfg_addr = val
            elif 0xcfc <= port < 0xd00 and self.ours():
                reg = (self.cfg_addr & 0xfc) + (port - 0xcfc)
                self.touched = True
                self.op(OP_CFG_WRITE,
                        struct.pack("<BBI", size, reg, val))
                if size == 2 and 0x10 <= reg < 0x28:
                    self.bars[reg] = val
                    self.sizing = reg if val == 0xffffffff else None
        elif cmd.startswith("in") and len(args) == 1:
            if int(args[0], 0) == 0xcfc and self.sizing is not None:
                self.reading = self.sizing
        elif re.fullmatch(r"(read|write)[bwlq]", cmd):
            size = SIZES[cmd[-1]]
            val = int(args[1], 0).to_bytes(1 << size, "little") \
                if cmd.startswith("write") else None
            self.access(int(args[0], 0), 1 << size, val)
        elif cmd == "read" and len(args) == 2:
            self.access(int(args[0], 0), int(args[1], 0), None)
        elif cmd in ("write", "b64write") and len(args) == 3:
            if cmd == "write":
                data = bytes.fromhex(args[2][2:])
            else:
                data = base64.b64decode(args[2])
            self.access(int(args[0], 0), len(data), data)
        elif cmd == "memset" and len(args) == 3:
            addr = int(args[0], 0)
            if addr < RAM:
                self.op(OP_MEMSET, struct.pack("<IIB", addr,
                                               int(args[1], 0),
                                               int(args[2], 0)))
        elif cmd == "clock_step":
            self.op(OP_CLOCK, struct.pack("<I", int(args[0]) if args else 0))

    def reply(self, words):
        """The answer to an inl of 0xcfc while sizing a BAR."""
        reg = self.reading
        if reg is not None and len(words) == 2 and words[0] == "OK":
            self.masks[reg] = int(words[1], 0)
        self.reading = None

    def input(self, max_len):
        out = b""
        for code, args in self.ops:
            op = (SEPARATOR if out else b"") + bytes([code]) + args
            if len(out) + len(op) > max_len:
                break
            out += op
        return out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    log, outdir, prefix, max_len = sys.argv[1:]
    qemus, cur = [], None
    line_re = re.compile(r"^\[([RSI]) \+?[0-9.]+\] ?(.*)$")
    with open(log, errors="replace") as f:
        for line in f:
            m = line_re.match(line.strip())
            if not m:
                continue
            kind, words = m.group(1), m.group(2).split()
            if kind == "I" and words == ["OPENED"]:
                cur = Qemu()
                qemus.append(cur)
            elif cur and kind == "R" and words:
                cur.command(words)
            elif cur and kind == "S":
                cur.reply(words)
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for q in qemus:
        if q.touched:
            with open(os.path.join(outdir, "%s-%d" % (prefix, n)), "wb") as f:
                f.write(q.input(int(max_len)))
            n += 1
    print("%s: %d inputs from %d QEMUs" % (prefix, n, len(qemus)))


if __name__ == "__main__":
    main()
