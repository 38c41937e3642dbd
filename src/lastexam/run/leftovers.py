"""A run's claim on its work area, and the removal of what killed runs left behind.

A run holds an exclusive lock on LASTEXAM_HOME/work/<run-id>.lock while it runs (so a second
process cannot run or resume it at the same time). A run killed at any moment may leave
sandboxes whose setup was cut short (a bwrap blocked forever, no longer tied to its parent),
cgroups, its work area and its gateway's socket folder. A lock that nobody holds marks such a
run: every run, when it starts, removes the leftovers of those runs, and of its own when it is
resumed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox import cgroups

LOCK_SUFFIX = ".lock"


@dataclass
class RunClaim:
    area: RunWorkArea
    fd: int

    @property
    def path(self) -> Path:
        return lock_path(self.area)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)


@contextlib.contextmanager
def private_area(prefix: str) -> Iterator[Path]:
    """A folder under LASTEXAM_HOME/work that only the harness's user can open (0700), claimed
    like a run's work area: removed on exit and, if the process is killed first, by the next
    run's sweep of dead runs."""
    area = RunWorkArea.for_run(f"{prefix}-{secrets.token_hex(6)}")
    claim = claim_run(area)
    try:
        area.root.mkdir(mode=0o700)
        yield area.root
    finally:
        area.remove()
        claim.release()


def lock_path(area: RunWorkArea) -> Path:
    return area.root.with_name(area.root.name + LOCK_SUFFIX)


def claim_run(area: RunWorkArea) -> RunClaim:
    """Lock the run's work area; fails when another process holds it. The lock file is locked
    before it takes its name, so that no sweeper ever sees it unlocked."""
    final = lock_path(area)
    final.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            fd = os.open(final, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            tmp = final.with_name(f".{final.name}.{os.getpid()}")
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(tmp, final)
            return RunClaim(area, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LastexamError(
                f"run {area.root.name} is being run by another lastexam process; wait for it "
                "to end"
            ) from None
        if _same_file(fd, final):
            return RunClaim(area, fd)
        os.close(fd)  # a sweeper removed that lock file meanwhile: take a new one


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False


def sweep_dead_runs(work_root: Path, skip: str = "") -> list[str]:
    """Remove the leftovers of every run whose lock nobody holds; returns their run ids."""
    dead = []
    for lock in sorted(work_root.glob(f"*{LOCK_SUFFIX}")):
        run_id = lock.name.removesuffix(LOCK_SUFFIX)
        if run_id == skip or run_id.startswith("."):
            continue
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        area = RunWorkArea(work_root / run_id)
        remove_leftovers(area)
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)
        dead.append(run_id)
    return dead


def remove_leftovers(area: RunWorkArea) -> dict[str, int]:
    """Kill the run's orphaned sandbox processes, remove its cgroups and its work area. Only for
    a run no live process owns (its lock is held by the caller)."""
    killed = kill_processes(f"{area.root}/".encode())
    removed = 0
    manager = cgroups.detect()
    if manager is not None:
        for cg in manager.leftovers():
            if cg.dirs[0].name.startswith(f"{area.root.name}."):
                cg.kill_all()
                cg.remove()
                removed += 1
    area.remove()
    return {"processes": killed, "cgroups": removed}


def kill_processes(marker: bytes, wait_s: float = 5.0) -> int:
    """SIGKILL every process whose command line holds `marker` (a run's work-area path: every
    bwrap of the run binds files from it), and wait for them to go."""
    pids = [pid for pid in _pids() if marker in _cmdline(pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + wait_s
    while time.monotonic() < end and any(marker in _cmdline(p) for p in pids):
        time.sleep(0.02)
    return len(pids)


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
