"""The bubblewrap provider: one fresh set of namespaces per sandbox.

Isolation: new user, pid, net (loopback only), ipc, uts and cgroup namespaces; no capabilities;
no nested user namespaces; read-only system toolchain; only the mounts the request names.
When the harness runs as root, the sandbox runs as a dedicated host uid (setpriv) that no host
account or other process uses, so its files and processes carry no host privilege. Teardown:
the pid namespace dies with bwrap's init, and the cgroup (when available) is emptied with
SIGKILL and checked to be empty.

Whether the sandbox was set up is read only from channels the agent cannot write: the
harness's own cgroup attach (done on the host before the launcher may go on), and bwrap's
--json-status-fd. The agent's exit code, whatever it is, is the agent's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import select
import shutil
import signal
import subprocess
import threading
import time
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from lastexam.errors import LastexamError
from lastexam.sandbox import cgroups, launcher, spawn
from lastexam.sandbox.base import SandboxError, SandboxLimits, SandboxRequest, SandboxResult
from lastexam.sandbox.seccomp import filter_fd
from lastexam.untrusted import tail

if TYPE_CHECKING:
    from lastexam.envs.manage import Environment

SANDBOX_UID = 1000  # the uid and gid seen inside
SANDBOX_USER = "agent"
WATCH_EVERY_S = 0.5
# The launcher (launch.c, else this line before prlimit and setpriv) waits until the harness has put it
# in the sandbox's cgroups and says "go" on the gate (a pipe), closes it, then becomes the sandbox.
GATE = 'fd=$1; shift; read -r -u "$fd" go; [ "$go" = go ] || exit 1; exec {fd}<&-; exec "$@"'
DEFAULT_HOST_UID = 1_990_000_000  # far above any account's uid or a subordinate uid range
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


@cache
def system_layout() -> tuple[tuple[str, str | None], ...]:
    """The host's system folders that sandboxes see, each (path, the link's target, or None
    for a folder bound read-only): /usr, the SYSTEM_DIRS there are, /etc. Looked up once per
    process (ten calls per sandbox otherwise)."""
    found: list[tuple[str, str | None]] = [("/usr", None)]
    for d in SYSTEM_DIRS:
        host = Path("/") / d
        if host.is_symlink():
            found.append((f"/{d}", os.readlink(host)))
        elif host.is_dir():
            found.append((f"/{d}", None))
    return (*found, ("/etc", None))


# The sandbox's /etc/profile: Debian's sets PATH anew, so a login shell (`bash -lc`, as Codex
# runs its commands) would lose the environment's tools; this one only reads profile.d.
PROFILE = (
    "# lastexam sandbox: keeps the PATH the sandbox was started with\n"
    'for i in /etc/profile.d/*.sh; do [ -r "$i" ] && . "$i"; done; unset i\n'
)
ETC_FILES = ("passwd", "group", "profile")


def host_sandbox_uid() -> int | None:
    """The host uid sandboxes run as when the harness is root (None: run as the caller);
    LASTEXAM_SANDBOX_UID chooses another."""
    if os.geteuid() != 0:
        return None
    raw = os.environ.get("LASTEXAM_SANDBOX_UID", str(DEFAULT_HOST_UID))
    uid = int(raw) if raw.isdigit() else -1
    if not 0 < uid < 2**32 - 1:
        raise LastexamError(f"{raw!r} is not a usable uid (1 to 4294967294)",
                            field="LASTEXAM_SANDBOX_UID")
    return uid


def uid_in_use(uid: int) -> str | None:
    """Who else on the host has this uid: an account, or a process that is not part of a
    sandbox (None: nobody). Sandbox processes are bwrap and its launchers, or live in a user
    namespace of their own."""
    try:
        return f"the account {pwd.getpwuid(uid).pw_name!r}"
    except KeyError:
        pass
    own_ns = os.readlink("/proc/self/ns/user")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            uids = next(ln.split()[1:] for ln in status.splitlines() if ln.startswith("Uid:"))
            if str(uid) not in uids or os.readlink(f"/proc/{pid}/ns/user") != own_ns:
                continue
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
        except (OSError, StopIteration):
            continue
        # An empty command line: a zombie, or a sandbox being set up (between fork and exec).
        if argv0 and os.path.basename(argv0) not in (b"bwrap", b"setpriv", b"prlimit", launcher.NAME.encode()):
            return f"process {pid} ({argv0.decode(errors='replace')})"
    return None


class BwrapProvider:
    name = "bwrap"

    def __init__(self, etc_dir: Path):
        self.etc_dir = etc_dir  # holds the generated passwd and group files
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.uid = host_sandbox_uid()
        self._lock = threading.Lock()
        self._identity_written = False

    @cached_property
    def cgroups(self) -> cgroups.CgroupManager | None:
        return cgroups.detect()

    def preflight(self) -> list[str]:
        if not shutil.which("bwrap"):
            return ["bubblewrap is not installed (apt-get install bubblewrap)"]
        if self.uid is not None and not shutil.which("setpriv"):
            return ["setpriv is not installed (apt-get install util-linux)"]
        if self.uid is not None and (user := uid_in_use(self.uid)):
            return [f"the sandbox uid {self.uid} is used by {user}: choose a uid of its own "
                    "with LASTEXAM_SANDBOX_UID"]
        self._write_identity_files()
        req = SandboxRequest(
            # Named, like the run's other sandboxes, after the run's work area (etc_dir's
            # parent): a run killed during this finds its cgroup when it is cleaned up.
            name=f"{self.etc_dir.parent.name}.preflight-{os.getpid()}",
            argv=["/bin/true"],
            mounts=[],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            limits=SandboxLimits(wall_s=20, memory_mb=256, max_processes=16, watch_bytes=0),
            stdout=Path(os.devnull),
            stderr=self.etc_dir / "preflight.err",
        )
        try:
            result = self.run(req)
        except SandboxError as e:
            return [f"bwrap cannot create a sandbox here: {e}"]
        if result.exit_code != 0:
            return [f"a sandboxed /bin/true exited {result.exit_code}: {_tail(req.stderr)}"]
        return []

    def settings(self) -> dict[str, object]:
        version = subprocess.run([self.bwrap, "--version"], capture_output=True, text=True)
        cg = self.cgroups
        return {
            "provider": self.name,
            "bwrap": version.stdout.strip(),
            "host_uid": self.uid if self.uid is not None else os.getuid(),
            "limits": f"cgroup v{cg.version}" if cg else "rlimits (no writable cgroup)",
            "cgroup_favordynmods": cgroups.favours_dynmods() if cg else None,
            "network": "none (loopback only)",
        }

    def environment_problems(self, env: Environment) -> list[str]:
        return env.missing()  # the host's Debian packages and the venv

    def _write_identity_files(self) -> None:
        with self._lock:
            if not self._identity_written:
                self._write_identity_files_once()
                self._identity_written = True

    def _write_identity_files_once(self) -> None:
        self.etc_dir.mkdir(parents=True, exist_ok=True)
        passwd = (
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:agent:/home/{SANDBOX_USER}:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        group = f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n"
        for name, text in zip(ETC_FILES, (passwd, group, PROFILE), strict=True):
            p = self.etc_dir / name
            if not p.exists() or p.read_text() != text:
                tmp = p.with_suffix(".tmp")
                tmp.write_text(text)
                tmp.chmod(0o644)
                os.replace(tmp, p)

    def _prefix(self) -> list[str]:
        if self.uid is None:
            return [self.bwrap]
        return [
            "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
            "--", self.bwrap,
        ]

    def _isolation_args(self) -> list[str]:
        return [
            "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--disable-userns",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        ]

    def _filesystem_args(self, req: SandboxRequest) -> list[str]:
        args = []
        for path, link in system_layout():
            args += ["--symlink", link, path] if link is not None else ["--ro-bind", path, path]
        for name in ETC_FILES:
            args += ["--ro-bind", str(self.etc_dir / name), f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--size", str(req.limits.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        args += ["--dir", "/var", "--symlink", "../tmp", "/var/tmp"]
        for m in req.mounts:
            args += ["--bind" if m.writable else "--ro-bind", str(m.source), m.target]
        # The sandbox's own root (a tmpfs holding the mount points) is read-only too: only the
        # writable mounts and /tmp take writes.
        args += ["--remount-ro", "/", "--chdir", req.cwd]
        return args

    def run(self, req: SandboxRequest) -> SandboxResult:
        self._write_identity_files()
        limits = req.limits
        cg = None
        if self.cgroups is not None:
            try:
                cg = self.cgroups.create(
                    req.name, limits.memory_mb * 1024 * 1024, limits.max_processes
                )
            except OSError as e:
                raise SandboxError(f"cannot create cgroup {req.name}: {e}") from e
        status_r, status_w = os.pipe()
        gate_r, gate_w = os.pipe() if cg is not None else (-1, -1)
        seccomp_fd = filter_fd()
        # The dynamic loader's variables (LD_PRELOAD, LD_LIBRARY_PATH, ...) name paths inside
        # the sandbox: they are set there only, so that the host-side launchers ignore them.
        env = {k: v for k, v in req.env.items() if not k.startswith("LD_")}
        inner = [a for k, v in req.env.items() if k.startswith("LD_") for a in ("--setenv", k, v)]
        argv = self._isolation_args() + self._filesystem_args(req) + inner
        if seccomp_fd >= 0:
            argv += ["--seccomp", str(seccomp_fd)]
        argv += ["--json-status-fd", str(status_w), "--", *req.argv]
        nproc = None if cg is not None else limits.max_processes
        program = launcher.build_launcher()
        if program is not None:  # it becomes the sandbox uid itself: no setpriv
            uid = -1 if self.uid is None else self.uid
            argv = [str(program), str(uid), str(gate_r), str(limits.watch_bytes), str(nproc or 0),
                    self.bwrap, *argv]
        else:
            argv = _limits_prefix(nproc, limits.watch_bytes) + self._prefix() + argv
            if cg is not None:
                argv = ["/bin/bash", "-c", GATE, "gate", str(gate_r), *argv]
        start = time.monotonic()
        try:
            program = shutil.which(argv[0], path=os.pathsep.join(os.get_exec_path(env)))
            if program is None:
                raise FileNotFoundError(f"{argv[0]} not found")
            with open(req.stdout, "wb") as out, open(req.stderr, "wb") as err:
                proc = spawn.spawn(
                    [program, *argv[1:]], env, out.fileno(), err.fileno(),
                    pass_fds=tuple(fd for fd in (status_w, gate_r, seccomp_fd) if fd >= 0) + req.pass_fds,
                )
        except (OSError, ValueError) as e:  # ValueError: a NUL in an argument or variable
            for fd in (status_r, gate_w):
                if fd >= 0:
                    os.close(fd)
            if cg:
                cg.remove()
            raise SandboxError(f"cannot start bwrap: {e}") from e
        finally:
            for fd in (status_w, gate_r, seccomp_fd):
                if fd >= 0:
                    os.close(fd)
        if cg is not None:
            self._attach(proc, cg, gate_w, req.name, status_r)
        try:
            killed = self._supervise(proc, req, start)
        except BaseException:  # no sandbox left running unsupervised (e.g. no pidfd to be had)
            _kill_group(proc)
            raise
        started = _command_ran(status_r)
        wall = time.monotonic() - start
        survivors = None
        peak = None
        if cg is not None:
            survivors = cg.kill_all()
            if killed is None and cg.oom_killed():
                killed = "memory"
            peak = cg.peak_memory()
            if survivors == 0:
                cg.remove()
        if not started and killed is None:
            raise SandboxError(f"bwrap failed to set up the sandbox: {_tail(req.stderr)}")
        return SandboxResult(
            exit_code=proc.returncode, killed=killed, wall_s=wall, peak_memory_bytes=peak,
            survivors=survivors,
        )

    @staticmethod
    def _attach(
        proc: spawn.Process | subprocess.Popen, cg: cgroups.Cgroup, gate: int, name: str, status_r: int
    ) -> None:
        """Put the waiting launcher in the sandbox's cgroups, then open its gate. A failure is
        the harness's, seen here on the host: the launcher is killed before anything runs."""
        try:
            for f in cg.procs_files:
                f.write_text(str(proc.pid))
            os.write(gate, b"go\n")
        except OSError as e:
            _kill_group(proc)
            os.close(status_r)
            cg.kill_all()
            cg.remove()
            raise SandboxError(f"could not attach sandbox {name} to its cgroup: {e}") from e
        finally:
            os.close(gate)

    def _supervise(self, proc: spawn.Process | subprocess.Popen, req: SandboxRequest, start: float) -> str | None:
        """Wait for the sandbox to exit, waking exactly on its exit (pidfd) or to enforce the
        wall-time cap and the output quota."""
        limits = req.limits
        deadline = start + limits.wall_s
        next_watch = start + WATCH_EVERY_S if req.watch else float("inf")
        pidfd = os.pidfd_open(proc.pid)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while True:
                now = time.monotonic()
                if now >= deadline:
                    _kill_group(proc)
                    return "timeout"
                if now >= next_watch:
                    next_watch = now + WATCH_EVERY_S
                    if _over_quota(req.watch, limits):
                        _kill_group(proc)
                        return "output_limit"
                wake = min(deadline, next_watch) - now
                if poller.poll(max(1, int(wake * 1000) + 1)):
                    proc.wait()
                    return None
        finally:
            os.close(pidfd)


def _kill_group(proc: spawn.Process | subprocess.Popen) -> None:
    # The launcher's group holds bwrap's outer process; killing it takes the pid namespace's
    # init with it (--die-with-parent), and the kernel then kills every process inside.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _over_quota(dirs: list[Path], limits: SandboxLimits) -> bool:
    """Whether the watched trees hold more bytes, entries or folders than the caps. A path
    too long to scan counts as over: what lies below it could not be counted."""
    total = entries = folders = 0
    stack = [str(d) for d in dirs]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                            folders += 1
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError as e:
                        if e.errno == errno.ENAMETOOLONG:
                            return True
                        continue
                    entries += 1
                    if (total > limits.watch_bytes or entries > limits.watch_files
                            or folders > limits.watch_dirs):
                        return True
        except OSError as e:
            if e.errno == errno.ENAMETOOLONG:
                return True
            continue
    return False


def _limits_prefix(max_processes: int | None, max_file_bytes: int) -> list[str]:
    """prlimit before the sandbox starts (not a preexec_fn, which may deadlock a threaded
    parent): RLIMIT_NPROC when there is no pids cgroup; RLIMIT_FSIZE so that no single file
    (output, HOME, the agent's own stdout log) outgrows the write cap between two scans."""
    limits = []
    if max_processes is not None:
        limits.append(f"--nproc={max_processes}")
    if max_file_bytes > 0:
        limits.append(f"--fsize={max_file_bytes}")
    return ["prlimit", *limits, "--"] if limits else []


def _tail(path: Path, n: int = 400) -> str:
    return tail(path, n)


def _command_ran(status_fd: int) -> bool:
    """bwrap writes {"exit-code": N} on --json-status-fd when the sandboxed command exits, and
    nothing of the kind when setting up the sandbox failed. Reading it (not stderr, which the
    agent controls) tells a setup failure from the agent's own."""
    chunks = []
    try:
        os.set_blocking(status_fd, False)
        while True:
            try:
                data = os.read(status_fd, 65536)
            except BlockingIOError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(status_fd)
    return b'"exit-code"' in b"".join(chunks)
