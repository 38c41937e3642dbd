"""The exec log's channel out of the sandbox: a FIFO the agent can write to but not read (its
mode), remove, replace or truncate (it sits on a read-only mount), drained on the host into
memory and, past MEMORY_BYTES, into a file outside everything the sandbox can reach. The shim
(execlog.c) and the Python hook write one line per event, each in one write() shorter than
PIPE_BUF, so lines never interleave.

Inside the sandbox:
    /run/lastexam/exec/exec.fifo      the channel (read-only mount of a host folder)
    /run/lastexam/usage/execlog.so    the shim, preloaded into every dynamic program
    /run/lastexam/usage/hook/         sitecustomize.py, first on PYTHONPATH
The usage mounts are the request's last: no mount of an agent or environment can hide them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from lastexam import background
from lastexam.layout import AgentSandbox
from lastexam.sandbox.base import Mount

FIFO_NAME = "exec.fifo"
HOST_LOG = "exec.log"  # the drained copy, beside (not inside) the FIFO's folder
MAX_LOG_BYTES = 64 << 20  # kept; past it the log is marked flooded and the rest discarded
# Kept in memory up to this, written to the host's file past it: most trials' logs are a few
# kilobytes, and a file made and removed per trial costs about a millisecond on some disks
# (docs/performance.md).
MEMORY_BYTES = 1 << 20
PIPE_BYTES = 1 << 20  # the FIFO's buffer: absorbs bursts while the drain thread is busy
DISCARD_PAUSE_S = 0.01  # past the cap, drain at most 1 MB per pause: a flood costs the host little
F_SETPIPE_SZ = 1031


def check_not_hidden(mounts: list[Mount]) -> None:
    """No other mount may sit on or under the usage places, nor over them once they are
    mounted (a harness bug, not the agent's doing)."""
    own = {AgentSandbox.EXEC_DIR, AgentSandbox.EXEC_SHIM, AgentSandbox.USAGE_HOOK}
    reserved = (AgentSandbox.EXEC_DIR, AgentSandbox.USAGE_DIR)
    mounted: set[str] = set()
    for m in mounts:
        if m.target in own - mounted:
            mounted.add(m.target)
            continue
        under = any(m.target == r or m.target.startswith(r + "/") for r in reserved)
        over = any(r.startswith(m.target.rstrip("/") + "/") for r in reserved)
        if under or (mounted and over):
            raise ValueError(f"the mount {m.target} would hide the exec-log shim or channel")


@dataclass
class ChannelResult:
    bytes: int  # kept in the host log
    discarded: int  # bytes past the cap
    log: Path
    error: str | None = None  # the host could not keep the log (the harness's failure)
    data: bytes | None = None  # the whole log, when it stayed in memory (log is then not made)

    @property
    def flooded(self) -> bool:
        return self.discarded > 0

    @property
    def source(self) -> Path | bytes:
        return self.data if self.data is not None else self.log


def pythonpath_env(pythonpath: str) -> dict[str, str]:
    """A sandbox's environment without the exec log (no shim: usage unknown)."""
    return {"PYTHONPATH": pythonpath} if pythonpath else {}


def write_all(f: BinaryIO, data: bytes) -> None:
    """An unbuffered file's write() may take part of the bytes (a full disk, a signal): the
    rest is written, or OSError raised; a log with a hole would read as another log."""
    view = memoryview(data)
    while view:
        n = f.write(view)
        if not n:
            raise OSError(errno.ENOSPC, "the exec log's host file took no more bytes")
        view = view[n:]


class ExecLogChannel:
    """Create with the shim and the trial's exec folder (host side, the harness's own);
    `open()` before the sandbox starts, `close()` once every process of the sandbox is gone."""

    def __init__(self, shim: Path, root: Path, uid: int | None, max_bytes: int = MAX_LOG_BYTES,
                 log: Path | None = None):
        self.shim = shim
        self.root = root
        self.fifo_dir = root / "fifo"
        self.log = log or root / HOST_LOG  # up to max_bytes: on disk, not in a small /dev/shm
        self.uid = uid
        self.max_bytes = max_bytes
        self._kept = self._discarded = 0
        self._error: str | None = None
        self._stop = threading.Event()
        self._job: background.Job | None = None
        self._fds: list[int] = []
        self._wake: tuple[int, int] | None = None
        self._memory: bytearray | None = bytearray()  # None once spilled to self.log
        self._file: BinaryIO | None = None  # self.log, opened by the drain thread when it spills

    def env(self, pythonpath: str = "") -> dict[str, str]:
        """What turns the exec log on in the sandbox; `pythonpath` is the agent's own, kept
        after the hook."""
        return {
            "LD_PRELOAD": AgentSandbox.EXEC_SHIM,
            "LASTEXAM_EXEC_LOG": f"{AgentSandbox.EXEC_DIR}/{FIFO_NAME}",
            "PYTHONPATH": ":".join(p for p in (AgentSandbox.USAGE_HOOK, pythonpath) if p),
        }

    def mounts(self, hook_dir: Path) -> list[Mount]:
        """The usage mounts, all read-only, to be placed after every other mount."""
        return [
            Mount(self.fifo_dir, AgentSandbox.EXEC_DIR),
            Mount(self.shim, AgentSandbox.EXEC_SHIM),
            Mount(hook_dir, AgentSandbox.USAGE_HOOK),
        ]

    def open(self) -> None:
        self.root.mkdir(mode=0o711, exist_ok=True)
        self.fifo_dir.mkdir(mode=0o755, exist_ok=True)
        fifo = self.fifo_dir / FIFO_NAME
        os.mkfifo(fifo, 0o600)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # Held open by the host so that the reader never sees end-of-file while the sandbox
        # runs, however often its processes come and go.
        keeper = os.open(fifo, os.O_WRONLY | os.O_CLOEXEC)
        # The drain thread waits on the FIFO and on this pipe, which close() writes to: it
        # wakes at once instead of at its next poll timeout.
        self._wake = os.pipe()
        self._fds = [reader, keeper, *self._wake]
        # Opened by the host, the FIFO becomes write-only for the sandbox's uid (its owner): a
        # reader inside would take events before the drain (the read-only mount keeps the mode).
        if self.uid is not None:
            os.chown(fifo, self.uid, self.uid)
        fifo.chmod(0o200)
        with contextlib.suppress(OSError):
            import fcntl

            fcntl.fcntl(reader, F_SETPIPE_SZ, PIPE_BYTES)
        self._job = background.run(lambda: self._drain(reader))

    def close(self) -> ChannelResult:
        self._stop.set()
        if self._wake is not None:
            os.write(self._wake[1], b"x")
        if self._job is not None:
            self._job.join()
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []
        data = bytes(self._memory) if self._memory is not None else None
        self._memory = None  # the copy above is the result's: not held twice while the trial goes on
        return ChannelResult(self._kept, self._discarded, self.log, self._error, data)

    def _keep(self, data: bytes) -> None:
        """Into memory, or once past MEMORY_BYTES into the host's file (opened then)."""
        if self._memory is not None and len(self._memory) + len(data) <= MEMORY_BYTES:
            self._memory += data
            return
        if self._file is None:
            self._file = open(self.log, "wb", buffering=0)  # noqa: SIM115 (closed by _drain)
            held, self._memory = self._memory or b"", None
            write_all(self._file, held)
        write_all(self._file, data)

    def _drain(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if self._wake is not None:
            poller.register(self._wake[0], select.POLLIN)
        after_stop = 0
        try:
            while True:
                stopping = self._stop.is_set()
                if stopping:
                    after_stop += 1
                    if after_stop > 64:  # a writer that survived the sandbox: stop anyway
                        return
                else:
                    poller.poll(200)
                try:
                    data = os.read(fd, 1 << 20)
                except BlockingIOError:
                    if stopping:
                        return
                    continue
                except OSError:
                    return
                if not data:
                    if stopping:
                        return
                    continue
                room = self.max_bytes - self._kept
                if room > 0 and self._error is None:
                    try:  # a failure here must not stop the draining: writers would block
                        self._keep(data[:room])
                        self._kept += min(room, len(data))
                    except OSError as e:
                        self._error = f"cannot write the exec log on the host: {e}"
                if len(data) > room:
                    self._discarded += len(data) - max(room, 0)
                    time.sleep(DISCARD_PAUSE_S)
        finally:
            if self._file is not None:
                self._file.close()
