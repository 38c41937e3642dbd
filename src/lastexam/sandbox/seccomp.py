"""The seccomp filter every sandbox runs under (bwrap --seccomp): fallocate fails with
EOPNOTSUPP. fallocate allocates disk without writing (a gigabyte in milliseconds), so between
two polls of the write cap an agent could fill the host's disk with files each under the
per-file cap; refused, glibc's posix_fallocate writes zeros instead, at the speed of a write.
io_uring_setup is refused too: an io_uring's IORING_OP_FALLOCATE allocates without the
fallocate system call, out of the filter's sight (programs that can use io_uring fall back
to plain system calls without it). On x86_64 the x32 system calls are refused as well (they
would reach fallocate by another number). The kernel's keyrings (add_key, request_key, keyctl)
are refused too, as in container runtimes' default profiles: a user's keyring belongs to its
user namespace, which a run's gradings share with their warm worker (sandbox/warm_worker.py),
so a key left by one grading would be read by the next.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# Classic BPF, as the kernel reads it: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}.
LD_ABS_W, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
ARCH_OFFSET, NR_OFFSET = 4, 0  # in struct seccomp_data
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
X32_BIT = 0x40000000
IO_URING_SETUP = 425  # one number on every architecture (system calls added since Linux 5.1)
# Audit arch -> the refused numbers under it: fallocate's, io_uring_setup, then add_key,
# request_key and keyctl (the 32-bit ABIs a 64-bit kernel runs too).
REFUSED = {
    "x86_64": {0xC000003E: (285, IO_URING_SETUP, 248, 249, 250),
               0x40000003: (324, IO_URING_SETUP, 286, 287, 288)},
    "aarch64": {0xC00000B7: (47, IO_URING_SETUP, 217, 218, 219),
                0x40000028: (352, IO_URING_SETUP, 309, 310, 311)},
}


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return code, jt, jf, k


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter program for this machine (None: an architecture this module does not know,
    where sandboxes run without it)."""
    table = REFUSED.get(machine or platform.machine())
    if table is None:
        return None
    # Jumps to the final "refuse" are resolved once the program's length is known.
    prog: list[tuple[int, int, int, int] | tuple[str, int, int]] = [_ins(LD_ABS_W, ARCH_OFFSET)]
    for arch, numbers in table.items():
        block: list = [_ins(LD_ABS_W, NR_OFFSET)]
        if arch == 0xC000003E:
            block.append(("refuse-if", JGE, X32_BIT))
        block += [("refuse-if", JEQ, nr) for nr in numbers]
        block.append(_ins(RET, RET_ALLOW))
        prog.append(_ins(JEQ, arch, 0, len(block)))
        prog += block
    prog.append(_ins(RET, RET_ALLOW))
    refuse = len(prog)
    prog.append(_ins(RET, RET_ERRNO | errno.EOPNOTSUPP))
    out = b""
    for i, ins in enumerate(prog):
        if isinstance(ins[0], str):
            _, code, k = ins
            ins = _ins(code, k, refuse - i - 1, 0)
        out += struct.pack("=HBBI", *ins)
    return out


def filter_fd() -> int:
    """A pipe's read end holding the filter, for bwrap's --seccomp (-1: none here). The
    caller passes it to bwrap and closes it."""
    program = filter_program()
    if program is None:
        return -1
    r, w = os.pipe()  # the program (a few hundred bytes) fits in the pipe's buffer
    os.write(w, program)
    os.close(w)
    return r
