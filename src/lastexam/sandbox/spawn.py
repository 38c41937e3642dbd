"""Starting a sandbox's launcher without holding the interpreter's lock: glibc's posix_spawn
called through ctypes, which releases the lock for the call.

subprocess.Popen holds the lock from its vfork until the child's exec; on a loaded machine
the child first waits for a CPU, and every other thread of the harness waits with it (at 8
concurrent trials on 2 cores, 29 % of the time the lock was held went there: py-spy --gil).
The child gets what Popen would give it: standard streams, the listed descriptors under their
own numbers and nothing else, a session of its own, every signal at its default and none
blocked.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import subprocess
from collections.abc import Sequence

POSIX_SPAWN_SETSIGDEF, POSIX_SPAWN_SETSIGMASK, POSIX_SPAWN_SETSID = 0x04, 0x08, 0x80
# Opaque glibc types, larger here than their size on any architecture (80 and 336 bytes on x86_64).
FILE_ACTIONS_BYTES, ATTR_BYTES, SIGSET_BYTES = 512, 1024, 128

# The setup's calls keep the interpreter's lock (each release costs a wait for it on a busy
# harness); posix_spawn itself, where the child is made and waits for a CPU, releases it.
_libc = ctypes.PyDLL(None, use_errno=True)
_spawn_call = ctypes.CDLL(None, use_errno=True).posix_spawn


def available() -> bool:
    """posix_spawn_file_actions_addclosefrom_np: glibc 2.34 or later."""
    return hasattr(_libc, "posix_spawn_file_actions_addclosefrom_np")


def _checked(items: Sequence[str], what: str) -> list[bytes]:
    """As Popen: a NUL would cut the string short in the child."""
    encoded = [os.fsencode(s) for s in items]
    if any(b"\0" in b for b in encoded):
        raise ValueError(f"embedded null byte in the {what}")
    return encoded


class Process:
    """A started child: what the sandbox's supervision reads of a Popen."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def _check(result: int, what: str) -> None:
    if result != 0:  # posix_spawn's functions return the error number
        raise OSError(result, f"{what}: {os.strerror(result)}")


def _strings(items: list[bytes]) -> ctypes.Array:
    array = (ctypes.c_char_p * (len(items) + 1))()
    array[:-1] = items
    return array


def spawn(argv: Sequence[str], env: dict[str, str], stdout: int, stderr: int,
          pass_fds: Sequence[int] = ()) -> Process | subprocess.Popen:
    """argv[0] (a path, not searched) with stdin from /dev/null, `stdout` and `stderr`, and
    `pass_fds` open under their numbers (each above 2): every other descriptor closed. With
    an older glibc: through subprocess.Popen."""
    if not available():
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                env=env, start_new_session=True, pass_fds=tuple(pass_fds))
    keep = sorted(set(pass_fds))
    if keep and keep[0] < 3:
        raise ValueError(f"descriptor {keep[0]} cannot be passed: it is a standard stream")
    if any("=" in k or not k for k in env):
        raise ValueError("illegal environment variable name")
    args = _checked(argv, "arguments")
    environ = _checked([f"{k}={v}" for k, v in env.items()], "environment")
    # The streams' sources above 2 first (a harness started with a standard stream closed opens
    # its files there): the child's dup2 onto 0, 1 and 2 would otherwise overwrite one.
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in (stdout, stderr)]
    try:
        return _spawn(args, environ, moved[0], moved[1], keep)
    finally:
        for fd in moved:
            os.close(fd)


def _spawn(args: list[bytes], environ: list[bytes], stdout: int, stderr: int,
           keep: list[int]) -> Process:
    actions = ctypes.create_string_buffer(FILE_ACTIONS_BYTES)
    attr = ctypes.create_string_buffer(ATTR_BYTES)
    _check(_libc.posix_spawn_file_actions_init(actions), "file actions")
    try:
        _check(_libc.posix_spawnattr_init(attr), "attributes")
        try:
            _check(_libc.posix_spawn_file_actions_addopen(actions, 0, b"/dev/null", os.O_RDONLY, 0),
                   "stdin")
            _check(_libc.posix_spawn_file_actions_adddup2(actions, stdout, 1), "stdout")
            _check(_libc.posix_spawn_file_actions_adddup2(actions, stderr, 2), "stderr")
            low = 3
            for fd in keep:
                for gap in range(low, fd):  # an fd not open there is skipped by glibc
                    _check(_libc.posix_spawn_file_actions_addclose(actions, gap), "close")
                # The same number: glibc (2.29 on) clears close-on-exec instead of duplicating.
                _check(_libc.posix_spawn_file_actions_adddup2(actions, fd, fd), "pass")
                low = fd + 1
            _check(_libc.posix_spawn_file_actions_addclosefrom_np(actions, low), "closefrom")
            # Every signal at its default: the interpreter ignores SIGPIPE and SIGXFSZ, and
            # glibc would leave its own two internal signals ignored after the exec (its
            # sigfillset leaves them out: the set's bits are written here).
            defaults = ctypes.create_string_buffer(b"\xff" * SIGSET_BYTES, SIGSET_BYTES)
            empty = ctypes.create_string_buffer(SIGSET_BYTES)
            _libc.sigemptyset(empty)
            _check(_libc.posix_spawnattr_setsigdefault(attr, defaults), "signal defaults")
            _check(_libc.posix_spawnattr_setsigmask(attr, empty), "signal mask")
            _check(_libc.posix_spawnattr_setflags(
                attr, ctypes.c_short(POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)),
                "flags")
            pid = ctypes.c_int(0)
            _check(_spawn_call(ctypes.byref(pid), args[0], actions, attr, _strings(args),
                               _strings(environ)), f"cannot run {os.fsdecode(args[0])}")
            return Process(pid.value)
        finally:
            _libc.posix_spawnattr_destroy(attr)
    finally:
        _libc.posix_spawn_file_actions_destroy(actions)
