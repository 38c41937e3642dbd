"""Warm grading workers: the host side of warm_worker.py.

A grading's sandbox, without a fresh bwrap and a fresh Python per trial: one worker per run
and environment (the grading library imported) forks a process per grading that gets the
same isolation as a bwrap sandbox (new pid, mount, network, ipc, uts and cgroup namespaces;
the worker's user namespace, with a Landlock domain of its own, which keeps it from tracing
another grading's processes; a root holding only the system read-only and the grading's own
mounts, no capabilities, no nested user namespaces, the seccomp filter) in a cgroup of its
own made here, with the same limits and supervision: wall time, memory, processes, the write
quota, every process killed at the end. A grading's slot (its cgroup, with a child of the
worker already in it, and the pipe the worker reports that child's wait status on) is
prepared ahead, when its trial is staged. Used when the sandbox provider is bwrap running as
root with cgroups (the normal case); otherwise `worker` returns None and each grading starts
a fresh sandbox.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import socket
import struct
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lastexam.layout import GradingSandbox
from lastexam.sandbox import bwrap, cgroups
from lastexam.sandbox.base import SandboxError, SandboxLimits, SandboxRequest, SandboxResult
from lastexam.sandbox.seccomp import filter_program
from lastexam.untrusted import tail

WORKER_SOURCE = Path(__file__).with_name("warm_worker.py")
WORKER_MODULES = [WORKER_SOURCE.with_name("warm_networks.py")]  # what the worker imports beside it


class WarmWorker:
    """One worker process and the socket it takes jobs on."""

    def __init__(self, provider: bwrap.BwrapProvider, folder: Path, env: dict[str, str],
                 lib_host: Path, lib: str, preload: tuple[str, ...] = ()):
        self.provider = provider
        self.folder = folder  # the worker's script, its log and the mount point of its jobs' roots
        self.env = env
        self.lib_host, self.lib = lib_host, lib
        self.preload = preload  # modules imported once, before any fork (a task's grader's)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        # Slots are made off the trial's path, in threads of their own.
        self._slots: dict[str, Future[_Slot]] = {}
        # A few threads: one slot slow to make (a leftover cgroup to empty) delays no other.
        self._preparer = ThreadPoolExecutor(max_workers=4, thread_name_prefix="warm-slots")
        self._closed = False

    def _spec(self) -> dict[str, object]:
        etc = self.provider.etc_dir
        return {
            "uid": bwrap.SANDBOX_UID,
            "root": str(self.folder / "root"),
            "system": list(bwrap.system_layout()),
            "etc_files": [(str(etc / name), f"/etc/{name}") for name in bwrap.ETC_FILES],
            "seccomp": (filter_program() or b"").hex(),
            "lib_host": str(self.lib_host), "lib": self.lib, "job_root": GradingSandbox.ROOT,
            "preload": list(self.preload), "status": STATUS.format,
        }

    def _start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o755)
        (self.folder / "root").mkdir(exist_ok=True)
        for source in (WORKER_SOURCE, *WORKER_MODULES):
            shutil.copyfile(source, self.folder / source.name)
            (self.folder / source.name).chmod(0o644)
        script = self.folder / WORKER_SOURCE.name
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        path = self.env["PATH"]
        python = shutil.which("python3", path=path) or "/usr/bin/python3"
        pythonpath = self.env.get("PYTHONPATH", "").replace(self.lib, str(self.lib_host), 1)
        uid = self.provider.uid
        assert uid is not None
        # The dynamic loader's variables are the sandbox's (bwrap sets them inside only).
        env = {k: v for k, v in self.env.items() if not k.startswith("LD_")}
        try:
            with open(self.folder / "worker.log", "ab") as log:
                self._proc = subprocess.Popen(
                    [python, "-S", "-B", str(script), str(theirs.fileno())],
                    env={**env, "PYTHONPATH": pythonpath}, pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    user=uid, group=uid, extra_groups=[], start_new_session=True, cwd="/",
                )
            ours.send(json.dumps(self._spec()).encode())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock = ours

    def start(self) -> None:
        """Start the worker unless it is running (it then loads without blocking the caller)."""
        with self._lock:
            self._ensure_running()

    def _ensure_running(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._start()

    def _send(self, fds: list[int], grader: Path | None) -> None:
        """Hand the worker a slot's descriptors, starting it (again) when it is not running,
        and the grader the slot's job will run, which it compiles once (None: not named)."""
        message = json.dumps({"grader": None if grader is None else [GradingSandbox.GRADER, str(grader)]})
        with self._lock:
            if self._closed:
                raise SandboxError("the warm grading worker is closed")
            for attempt in (1, 2):
                self._ensure_running()
                assert self._sock is not None
                try:
                    socket.send_fds(self._sock, [message.encode()], fds)
                    return
                except OSError as e:
                    if attempt == 2:
                        raise SandboxError(f"the warm grading worker does not take jobs: {e}") from e
                    self._stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def close(self) -> None:
        """Drop the slots no grading took, and stop the worker."""
        with self._lock:
            self._closed = True  # a slot still being made now fails, and is dropped
        self._preparer.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            pending, self._slots = list(self._slots.values()), {}
        for future in pending:  # while the worker runs: it reaps the slots' children
            _drop(future)
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()  # the worker leaves when its socket ends
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def prepare(self, name: str, limits: SandboxLimits, grader: Path | None = None) -> None:
        """Get the grading sandbox `name` ready ahead of its job: its cgroup made and a child
        of the worker already in it (see warm_worker._slot), in the background; `grader`, the
        host's copy of the grader the job will run, is compiled in the worker before it forks
        that child. A slot that cannot be made is made again, or its failure reported, when
        the grading comes."""
        with self._lock:
            if self._closed:
                return
            future = self._preparer.submit(self._new_slot, name, limits, grader)
            earlier, self._slots[name] = self._slots.get(name), future
        if earlier is not None:
            _drop(earlier)

    def release(self, name: str) -> None:
        """Drop the slot prepared for `name` if no grading took it (once it is made)."""
        with self._lock:
            future = self._slots.pop(name, None)
        if future is not None:
            _drop(future)

    def _new_slot(self, name: str, limits: SandboxLimits, grader: Path | None = None) -> _Slot:
        cgroups = self.provider.cgroups
        assert cgroups is not None
        try:
            cg = cgroups.create(name, limits.memory_mb * 1024 * 1024, limits.max_processes)
        except OSError as e:
            raise SandboxError(f"cannot create cgroup {name}: {e}") from e
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        status_r, status_w = os.pipe()
        slot = _Slot(cg, ours, status_r, (limits.memory_mb, limits.max_processes))
        procs: list[int] = []
        try:
            procs = [os.open(f, os.O_WRONLY) for f in cg.procs_files]
            self._send([theirs.fileno(), status_w, *procs], grader)
        except BaseException:
            slot.drop()
            raise
        finally:
            theirs.close()
            for fd in (status_w, *procs):
                os.close(fd)
        return slot

    def _take_slot(self, req: SandboxRequest) -> _Slot:
        with self._lock:
            future = self._slots.pop(req.name, None)
        slot = _made(future)
        if slot is not None and slot.limits != (req.limits.memory_mb, req.limits.max_processes):
            slot.drop()
            slot = None
        return slot or self._new_slot(req.name, req.limits)

    def run(self, req: SandboxRequest) -> SandboxResult:
        """Run `req`, a grading harness's sandbox (python3 -S -B .../harness.py CONTEXT RESULT:
        only the last two arguments are read), in its slot (prepared now if it was not)."""
        limits = req.limits
        header = json.dumps({
            "mounts": [(str(m.source), m.target, m.writable, *_identity(m.source)) for m in req.mounts],
            "env": req.env, "cwd": req.cwd, "argv": req.argv[-2:],
            "fsize": limits.watch_bytes, "tmp_bytes": limits.tmp_mb * 1024 * 1024,
            "pass_fds": list(req.pass_fds),
        }).encode()
        fds: list[int] = []
        slot = None
        try:
            fds = [os.open(req.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                   os.open(req.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
            for attempt in (1, 2):  # a slot of a worker that has died meanwhile: a new one
                slot = self._take_slot(req)
                start = time.monotonic()
                try:
                    socket.send_fds(slot.channel, [header], fds + list(req.pass_fds))
                    break
                except OSError as e:
                    slot.drop()
                    if attempt == 2:
                        raise SandboxError(f"the warm grading worker does not take jobs: {e}") from e
        except BaseException:
            if slot is not None:
                slot.drop()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        slot.channel.close()
        cg, status_r = slot.cgroup, slot.take_status()
        killed = _supervise(status_r, req, start, cg)
        raw = _read_all(status_r)
        wall = time.monotonic() - start
        survivors = cg.kill_all()
        if killed is None and cg.oom_killed():
            killed = "memory"
        peak = cg.peak_memory()
        if survivors == 0:
            cg.remove()
        if len(raw) != STATUS.size:  # written by the worker, never by the grading: it has gone
            raise SandboxError(f"the warm grading worker gave no status for {req.name} "
                               f"(its log: {self.folder / 'worker.log'})")
        status, ready = STATUS.unpack(raw)
        if not ready and killed is None:  # it failed before the job's code could run
            raise SandboxError(f"the grading sandbox {req.name} could not be set up: {tail(req.stderr, 1500)}")
        exit_code = os.waitstatus_to_exitcode(status)
        return SandboxResult(exit_code=exit_code, killed=killed, wall_s=wall,
                             peak_memory_bytes=peak, survivors=survivors)


def _identity(path: Path) -> tuple[int, int]:
    """The device and inode a mount's source has on the host: the grading checks that what it
    mounted is that file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise SandboxError(f"cannot mount {path} into the grading: {e.strerror}") from e
    return st.st_dev, st.st_ino


@dataclass
class _Slot:
    """A child of the worker waiting in its cgroup for one job, sent on `channel`; its wait
    status comes, from the worker, on `status_r`."""

    cgroup: cgroups.Cgroup
    channel: socket.socket
    status_r: int
    limits: tuple[int, int]  # memory_mb, max_processes: what the cgroup was made with

    def take_status(self) -> int:
        """The status pipe, now the grading's to close."""
        fd, self.status_r = self.status_r, -1
        return fd

    def drop(self) -> None:
        self.channel.close()  # the child leaves when its channel ends
        if self.status_r >= 0:  # not taken by a grading
            os.close(self.status_r)
            self.status_r = -1
        self.cgroup.kill_all()
        self.cgroup.remove()


def _made(future: Future[_Slot] | None) -> _Slot | None:
    """The slot a preparation made, once it is done (None: none asked, or it failed)."""
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # cancelled or failed: reported, if it persists, by the grading itself
        return None


def _drop(future: Future[_Slot]) -> None:
    if (slot := _made(future)) is not None:
        slot.drop()


def _supervise(status_r: int, req: SandboxRequest, start: float, cg: cgroups.Cgroup) -> str | None:
    """Wait for the job's status (its end), enforcing the wall-time cap and the write quota."""
    limits = req.limits
    deadline = start + limits.wall_s
    next_watch = start + bwrap.WATCH_EVERY_S if req.watch else float("inf")
    poller = select.poll()
    poller.register(status_r, select.POLLIN | select.POLLHUP)
    while True:
        now = time.monotonic()
        if now >= deadline:
            cg.kill_all()
            return "timeout"
        if now >= next_watch:
            next_watch = now + bwrap.WATCH_EVERY_S
            if bwrap._over_quota(req.watch, limits):
                cg.kill_all()
                return "output_limit"
        wake = min(deadline, next_watch) - now
        if poller.poll(max(1, int(wake * 1000) + 1)):
            return None


# A grading's end as the worker reports it on the slot's status pipe (its spec carries the
# format): its wait status, and whether its sandbox was set up before the job's code ran.
STATUS = struct.Struct("=iB")
STATUS_WAIT_S = 30  # for the worker's report once the grading's processes are gone


def _read_all(fd: int) -> bytes:
    """The status pipe's bytes until the worker closes it, or what came within STATUS_WAIT_S
    (a wedged worker must not hold the trial)."""
    chunks = []
    deadline = time.monotonic() + STATUS_WAIT_S
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    try:
        while (left := deadline - time.monotonic()) > 0 and poller.poll(int(left * 1000) + 1):
            if not (data := os.read(fd, 64)):
                break
            chunks.append(data)
    finally:
        os.close(fd)
    return b"".join(chunks)


class WarmPool:
    """The warm workers of one run's work area: one per environment, grading variables and
    preloaded modules."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._workers: dict[str, WarmWorker] = {}
        self._labels: dict[tuple[str, tuple[str, ...]], tuple[dict[str, str], str]] = {}
        self._lock = threading.Lock()

    def worker(self, provider: bwrap.BwrapProvider, env_name: str, env: dict[str, str],
               lib_host: Path, lib: str, preload: tuple[str, ...] = ()) -> WarmWorker:
        # A module imported before the fork keeps what the worker's variables made of it
        # (OpenBLAS reads OPENBLAS_CORETYPE when NumPy loads it), so gradings under other
        # variables (validation's BLAS reruns) get a worker of their own; so does another set of
        # modules, lest one task's preloaded module shadow another task's own of that name.
        # The label of the same variables (the very dict, grading.py's cached one) is
        # remembered, one per environment and module set.
        known = self._labels.get((env_name, preload))
        if known is not None and known[0] is env:
            label = known[1]
        else:
            key = json.dumps([env_name, sorted(env.items()), list(preload)])
            label = f"{env_name}.{hashlib.sha256(key.encode()).hexdigest()[:12]}"
            self._labels[(env_name, preload)] = (env, label)
        with self._lock:
            if label not in self._workers:
                self._workers[label] = WarmWorker(provider, self.folder / label, env, lib_host, lib,
                                                  preload)
            return self._workers[label]

    def pids(self) -> dict[str, int | None]:
        """Each worker's process (None: not running), by its label: environment.digest."""
        with self._lock:
            return {name: w.pid for name, w in self._workers.items()}

    def close(self) -> None:
        with self._lock:
            for w in self._workers.values():
                w.close()
            self._workers.clear()


_POOLS: dict[Path, WarmPool] = {}
_POOLS_LOCK = threading.Lock()


def usable(provider: object) -> bool:
    """Whether gradings can run warm under this provider (else: a fresh sandbox each)."""
    return (isinstance(provider, bwrap.BwrapProvider) and provider.uid is not None
            and provider.cgroups is not None and os.environ.get("LASTEXAM_WARM_GRADING", "1") != "0")


def worker(provider: object, area_root: Path, env_name: str, env: dict[str, str],
           lib_host: Path, lib: str, preload: tuple[str, ...] = ()) -> WarmWorker | None:
    """The run's warm worker for an environment (its gradings' variables `env`, the grading
    library at `lib`, from `lib_host`, the modules `preload` imported before any fork), or None
    when gradings cannot run warm here."""
    if not usable(provider):
        return None
    assert isinstance(provider, bwrap.BwrapProvider)
    with _POOLS_LOCK:
        pool = _POOLS.setdefault(area_root, WarmPool(area_root / "warm"))
    return pool.worker(provider, env_name, env, lib_host, lib, preload)


def pool(area_root: Path) -> WarmPool | None:
    with _POOLS_LOCK:
        return _POOLS.get(area_root)


def close(area_root: Path) -> None:
    """Stop the run's warm workers (when its work area goes)."""
    with _POOLS_LOCK:
        pool = _POOLS.pop(area_root, None)
    if pool is not None:
        pool.close()
