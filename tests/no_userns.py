"""Run a command where namespaces are refused, as in a container under Docker's default seccomp
profile or on Ubuntu 24.04 with ``kernel.apparmor_restrict_unprivileged_userns``:

    python tests/no_userns.py python -m autograder grade ...

A seccomp filter (installed with ``PR_SET_NO_NEW_PRIVS``, so no privilege is needed) makes
``unshare`` fail with EPERM, ``clone`` with any namespace flag fail with EPERM and ``clone3`` fail
with ENOSYS (so libc falls back to ``clone``). bubblewrap then cannot start, and the grader's
children cannot make namespaces of their own: what is left is what such machines really give.
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

# syscall numbers per machine: (unshare, clone, clone3), and the seccomp audit arch
SYSCALLS = {"x86_64": (272, 56, 435, 0xC000003E), "aarch64": (97, 220, 435, 0xC00000B7)}
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
EPERM, ENOSYS = 1, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program() -> bytes:
    unshare, clone, clone3, arch = SYSCALLS[platform.machine()]
    return b"".join([
        _insn(LD_W_ABS, 0, 0, 4),              # 0: A = arch
        _insn(JEQ_K, 1, 0, arch),              # 1: our arch? go on : allow
        _insn(RET_K, 0, 0, ALLOW),             # 2
        _insn(LD_W_ABS, 0, 0, 0),              # 3: A = syscall number
        _insn(JEQ_K, 5, 0, unshare),           # 4: unshare -> 10 (EPERM)
        _insn(JEQ_K, 6, 0, clone3),            # 5: clone3 -> 12 (ENOSYS)
        _insn(JEQ_K, 1, 0, clone),             # 6: clone -> 8
        _insn(RET_K, 0, 0, ALLOW),             # 7
        _insn(LD_W_ABS, 0, 0, 16),             # 8: A = low 32 bits of clone's flags
        _insn(JSET_K, 0, 1, NAMESPACE_FLAGS),  # 9: any namespace flag -> 10, else -> 11
        _insn(RET_K, 0, 0, ERRNO | EPERM),     # 10
        _insn(RET_K, 0, 0, ALLOW),             # 11
        _insn(RET_K, 0, 0, ERRNO | ENOSYS),    # 12
    ])


def install() -> None:
    code = program()
    n = len(code) // 8
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(n, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} COMMAND [ARGS...]")
    install()
    os.execvp(sys.argv[1], sys.argv[1:])
