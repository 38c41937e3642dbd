"""Per-sandbox cgroups for memory and process limits and for killing every process at the end.

Supports cgroup v2 (a writable unified hierarchy) and v1 (separate memory and pids hierarchies).
When neither is writable (an unprivileged user without delegation) `detect()` returns None and
the provider falls back to rlimits and the pid namespace.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import signal
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT_NAME = "lastexam"
WAITED_PIDS = 32  # at most this many processes' exits are waited on at once


def _own_path(controller: str) -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path.lstrip("/")
    return ""


@dataclass
class Cgroup:
    version: int
    dirs: list[Path]  # v2: [dir]; v1: [memory dir, pids dir]

    @cached_property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for f in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in f.read_text().split())
        return found

    def kill_all(self, deadline_s: float = 10.0) -> int:
        """SIGKILL every process until none is left; returns how many remained at the deadline."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.dirs[0] / "cgroup.kill").write_text("1")
        end = time.monotonic() + deadline_s
        pause = 0.0002  # processes of a namespace that just died leave within a millisecond
        exited: set[int] = set()
        while True:
            pids = self.pids()
            if not pids:
                return 0
            if time.monotonic() > end:
                return len(pids)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            # Woken as soon as they have exited, not after a fixed pause; one listed again after
            # its exit is a zombie waiting to be reaped: only the pause for it.
            exited |= _await_exit(pids - exited, pause)
            pause = min(pause * 2, 0.01)

    def oom_killed(self) -> bool:
        mem = self.dirs[0]
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError):
            for line in (mem / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        return False

    def peak_memory(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.dirs[0] / name).read_text().strip())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()


def _await_exit(pids: set[int], timeout_s: float) -> set[int]:
    """Wait until every process of `pids` has exited (as its pidfd tells) or timeout_s has
    passed; returns those seen to exit. Without pidfds (none of them left, or a kernel before
    5.3), a plain pause."""
    fds: dict[int, int] = {}
    try:
        # A few are enough to wake on (the caller lists the cgroup again): a descriptor per
        # process of a full cgroup could run the harness out of descriptors.
        for pid in itertools.islice(pids, WAITED_PIDS):
            with contextlib.suppress(OSError):  # gone already, or no pidfd here
                fds[os.pidfd_open(pid)] = pid
        if not fds:
            time.sleep(timeout_s)
            return set()
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        done: set[int] = set()
        stop = time.monotonic() + timeout_s
        while len(done) < len(fds) and (wait_ms := (stop - time.monotonic()) * 1000) > 0:
            for fd, _ in poller.poll(max(wait_ms, 0.01)):
                poller.unregister(fd)
                done.add(fds[fd])
        return done
    finally:
        for fd in fds:
            os.close(fd)


class CgroupManager:
    def __init__(self, version: int, bases: list[Path]):
        self.version = version
        self.bases = bases  # v2: [base]; v1: [memory base, pids base]

    def create(self, name: str, memory_bytes: int, max_pids: int) -> Cgroup:
        dirs = [b / name for b in self.bases]
        for d in dirs:
            if d.exists():  # left over from a killed run: empty it and start again
                Cgroup(self.version, [d]).kill_all()
                d.rmdir()
            d.mkdir()
        cg = Cgroup(self.version, dirs)
        if self.version == 2:
            d = dirs[0]
            (d / "memory.max").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):
                (d / "memory.swap.max").write_text("0")
            (d / "pids.max").write_text(str(max_pids))
        else:
            mem, pids = dirs
            (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):
                (mem / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            (pids / "pids.max").write_text(str(max_pids))
        return cg

    def leftovers(self) -> list[Cgroup]:
        """Sandbox cgroups left by runs that were killed (for cleanup on resume)."""
        names = {p.name for b in self.bases if b.is_dir() for p in b.iterdir() if p.is_dir()}
        return [Cgroup(self.version, [b / n for b in self.bases]) for n in sorted(names)]


def favours_dynmods() -> bool | None:
    """Whether the kernel keeps cgroup moves fast (the cgroup2 mount's favordynmods, set by
    scripts/setup.sh; it covers the v1 hierarchies too). None: no cgroup2 mount to tell."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 3 and fields[2] == "cgroup2":
                return "favordynmods" in fields[3].split(",")
    return None


def detect() -> CgroupManager | None:
    if os.geteuid() != 0:
        return None
    unified = ROOT / "cgroup.controllers"
    if unified.exists():
        own = ROOT / _own_path("")
        base = own.parent / PARENT_NAME if own != ROOT else ROOT / PARENT_NAME
        try:
            base.mkdir(exist_ok=True)
            controllers = (base.parent / "cgroup.subtree_control").read_text().split()
            for c in ("memory", "pids"):
                if c not in controllers:
                    (base.parent / "cgroup.subtree_control").write_text(f"+{c}")
            (base / "cgroup.subtree_control").write_text("+memory +pids")
        except OSError:
            return None
        return CgroupManager(2, [base])
    bases = []
    for controller in ("memory", "pids"):
        root = ROOT / controller
        if not (root / "cgroup.procs").exists():
            return None
        base = root / _own_path(controller) / PARENT_NAME
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        bases.append(base)
    if bases and (bases[0].parent / "memory.use_hierarchy").exists():
        with contextlib.suppress(OSError):
            (bases[0] / "memory.use_hierarchy").write_text("1")
    return CgroupManager(1, bases)
