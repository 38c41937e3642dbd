"""The container provider (`--sandbox podman`): one fresh container per sandbox, from the
image of the request's environment (`lastexam env build-image`), with the bubblewrap
provider's contract: the same mounts at the same paths, the same identity files, the
environment built from scratch, no network (loopback only; the gateway only through its
unix-socket mount), no capabilities and no new user namespaces, the fallocate/io_uring
refusal, a read-only root, a private size-capped /tmp, memory and process limits, the write
cap, and the wall-time cap that kills every process of the container.

As root the container's uid 1000 is the dedicated host uid of the bubblewrap provider (its
root an unprivileged uid just below), so outputs are owned as the harness expects; rootless,
it is the caller's uid (`--userns keep-id`). Whether the container was set up is read from
the engine's record of it (it started or not), not from anything the agent can write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lastexam.paths import home_subdir
from lastexam.sandbox import engine as engines
from lastexam.sandbox.base import SandboxError, SandboxLimits, SandboxRequest, SandboxResult
from lastexam.sandbox.bwrap import (
    ETC_FILES,
    SANDBOX_UID,
    WATCH_EVERY_S,
    BwrapProvider,
    _over_quota,
    uid_in_use,
)
from lastexam.untrusted import tail

if TYPE_CHECKING:
    from lastexam.envs.manage import Environment

UID_RANGE = 65536  # container uids mapped, root included, onto host uids below and above uid
# conmon, which starts the container, runs with this hard RLIMIT_NPROC: the container may not
# ask for more (process counts are capped by the pids cgroup, not by this).
NPROC_CAP = 32768
# The engine's own variables kept in its environment (the sandbox's come from an env file).
ENGINE_VARS = ("PATH", "HOME", "USER", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
               "CONTAINER_HOST", "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "DOCKER_HOST")
TEARDOWN_S = 10.0
BACKSTOP_S = 30.0
NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
LABEL = "lastexam.area"  # its value: the full path of the container's work area
DEFAULT_ENVIRONMENT = "base"


def uid_range_problem(uid: int | None) -> str | None:
    """Why the host uid cannot carry a container's uids (None: it can). The container's uids
    0 to UID_RANGE - 1 map onto the host's from uid - SANDBOX_UID, so that the container's
    SANDBOX_UID is the host's `uid`: that range must lie within the host's uids."""
    if uid is None:
        return None
    low, high = SANDBOX_UID, 2**32 - 2 - (UID_RANGE - 1 - SANDBOX_UID)
    if low <= uid <= high:
        return None
    return (f"LASTEXAM_SANDBOX_UID={uid}: podman maps the container's uids 0-{UID_RANGE - 1} "
            f"onto host uids from {uid - SANDBOX_UID}, which needs a uid from {low} to {high}")


class PodmanProvider(BwrapProvider):
    """Shares the bubblewrap provider's identity: its host uid and generated /etc files."""

    name = "podman"

    def __init__(self, etc_dir: Path):
        super().__init__(etc_dir)
        self.engine = engines.detect()
        self._tags: dict[str, str] = {}
        self._seccomp: Path | None = None

    def preflight(self) -> list[str]:
        if (problem := uid_range_problem(self.uid)) is not None:
            return [problem]
        if self.engine is None:
            return [engines.missing_engine()]
        if self.engine.name == "docker":
            return ["Docker cannot hand the grading sandbox its result descriptor "
                    "(no --preserve-fds): install Podman"]
        if self.uid is not None and (user := uid_in_use(self.uid)):
            return [f"the sandbox uid {self.uid} is used by {user}: choose a uid of its own "
                    "with LASTEXAM_SANDBOX_UID"]
        try:
            self._seccomp_file()
        except (OSError, ValueError) as e:
            return [f"no default seccomp profile to start from ({engines.DEFAULT_SECCOMP}): {e}"]
        try:
            tag = self.image_for(DEFAULT_ENVIRONMENT)
        except SandboxError as e:
            return [str(e)]
        self._remove_leftovers()
        req = SandboxRequest(
            name=f"{self.etc_dir.parent.name}.preflight-{os.getpid()}",
            argv=["/bin/true"], mounts=[], env={"PATH": "/usr/bin:/bin"}, cwd="/",
            limits=SandboxLimits(wall_s=60, memory_mb=256, max_processes=16, watch_bytes=0),
            stdout=Path(os.devnull), stderr=self.etc_dir / "preflight.err",
        )
        try:
            result = self.run(req)
        except SandboxError as e:
            return [f"{self.engine.name} cannot start a container of {tag}: {e}"]
        if result.exit_code != 0:
            return [f"a containerised /bin/true exited {result.exit_code}: {tail(req.stderr, 400)}"]
        return []

    def settings(self) -> dict[str, object]:
        return {
            "provider": self.name,
            "engine": self.engine.version() if self.engine else "none",
            "runtime": _runtime() or "default",
            "host_uid": self.uid if self.uid is not None else os.getuid(),
            "limits": "cgroup (engine)",
            "network": "none (loopback only)",
            # the images checked so far: before a run, those of every environment it needs
            "images": dict(sorted(self._tags.items())),
        }

    def environment_problems(self, env: Environment) -> list[str]:
        """The venv (the Debian packages are the image's) and the image."""
        problems = env.missing(system=False)
        try:
            self.image_for(env.name)
        except SandboxError as e:
            problems.append(str(e))
        return problems

    def image_for(self, environment: str) -> str:
        """The tag of the environment's image, which must exist (never pulled)."""
        if environment not in self._tags:
            from lastexam.envs import manage
            from lastexam.envs.image import image_tag
            from lastexam.errors import LastexamError

            try:
                tag = image_tag(manage.load(environment))
            except LastexamError as e:
                raise SandboxError(str(e)) from None
            if self.engine is None or not self.engine.image_exists(tag):
                raise SandboxError(f"no image {tag} for the environment {environment!r}: "
                                   f"build it with `lastexam env build-image {environment}`")
            self._tags[environment] = tag
        return self._tags[environment]

    def _seccomp_file(self) -> Path:
        if self._seccomp is None:
            self.etc_dir.mkdir(parents=True, exist_ok=True)
            path = self.etc_dir / "seccomp.json"
            path.write_text(json.dumps(engines.seccomp_profile()))
            self._seccomp = path
        return self._seccomp

    def _remove_leftovers(self) -> None:
        """Containers of runs that are gone: this run's own (a killed run resumed) and those
        whose work area the sweep of dead runs has removed (their harness was killed). Only
        this LASTEXAM_HOME's: the label is the area's full path, and another home's areas
        (another node or run on this machine, same container storage) are not seen here."""
        assert self.engine is not None
        listed = self.engine.call("ps", "-a", "--filter", f"label={LABEL}", "--format", "json")
        try:
            containers = json.loads(listed.stdout or "[]")
        except ValueError:
            return
        own = self._area_label()
        for c in containers if isinstance(containers, list) else []:
            area = Path((c.get("Labels") or {}).get(LABEL, "") or "/")
            if str(area) == own or (area.parent == Path(own).parent and not area.exists()):
                self.engine.call("rm", "-f", str(c.get("Id", "")))

    def _area_label(self) -> str:
        return str(self.etc_dir.parent.absolute())

    def run(self, req: SandboxRequest) -> SandboxResult:
        if self.engine is None:
            raise SandboxError(engines.missing_engine())
        self._write_identity_files()
        image = self.image_for(environment_of(req))
        cname = container_name(req.name)
        # The container's own folder: its id, its environment file, and conmon's working
        # folder, where conmon writes "oom" when the kernel's OOM killer acted in it.
        box = self.etc_dir / "containers" / cname
        shutil.rmtree(box, ignore_errors=True)
        box.mkdir(mode=0o700, parents=True)
        cidfile, envfile = box / "cid", box / "env"
        in_file, by_name = _split_env(req.env)
        _write_env_file(envfile, in_file)
        fds = sorted(set(req.pass_fds))
        argv = [*self._run_args(req, cname, cidfile, envfile, fds)]
        argv += [a for key in by_name for a in ("--env", key)] + [image, *req.argv]
        if fds:  # descriptors 3..max are all handed over: the gaps are /dev/null
            gaps = " ".join(f"{fd}</dev/null" for fd in range(3, fds[-1] + 1) if fd not in fds)
            argv = ["/bin/bash", "-c", f"exec {gaps}; exec \"$@\"" if gaps else 'exec "$@"',
                    "launch", *argv]
        start = time.monotonic()
        try:
            try:
                with open(req.stdout, "wb") as out, open(req.stderr, "wb") as err:
                    proc = subprocess.Popen(
                        argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                        env={**{k: os.environ[k] for k in ENGINE_VARS if k in os.environ},
                             **by_name},
                        start_new_session=True, pass_fds=tuple(fds),
                        cwd=box,
                    )
            except OSError as e:
                raise SandboxError(f"cannot start {self.engine.name}: {e}") from e
            killed = self._supervise_container(proc, req, start, cname)
            state = self._state(cname)
            wall = time.monotonic() - start
            survivors = self._teardown(cname, cidfile)
            oom = (box / "oom").exists()
        finally:
            shutil.rmtree(box, ignore_errors=True)
        if state is None or state.get("StartedAt", "").startswith("0001-"):
            if killed is None:
                raise SandboxError(f"{self.engine.name} failed to set up the container: "
                                   f"{tail(req.stderr, 400)}")
            state = {}
        if killed is None and (oom or state.get("OOMKilled")):
            killed = "memory"
        exit_code = state.get("ExitCode") if killed is None else proc.returncode
        return SandboxResult(exit_code=exit_code, killed=killed, wall_s=wall, survivors=survivors)

    def _run_args(self, req: SandboxRequest, cname: str, cidfile: Path, envfile: Path,
                  fds: list[int]) -> list[str]:
        limits = req.limits
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1] % 2**63, NPROC_CAP)
        args = self.engine.cmd("run") if self.engine else []
        if runtime := _runtime():
            args += ["--runtime", runtime]
        args += [
            "--name", cname, "--cidfile", str(cidfile), "--label",
            f"{LABEL}={self._area_label()}", "--pull", "never", "--init",
            # conmon's own kill, should the harness die before the cap (bwrap's
            # --die-with-parent); the harness stops the container itself at the cap.
            "--timeout", str(math.ceil(limits.wall_s + BACKSTOP_S)),
            "--read-only", "--read-only-tmpfs=false", "--network", "none",
            "--hostname", "sandbox", "--ipc", "private", "--cgroupns", "private",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--security-opt", f"seccomp={self._seccomp_file()}",
            "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
            "--pids-limit", str(limits.max_processes),
            "--ulimit", f"nofile={nofile[0]}:{nofile[1]}", "--ulimit", f"nproc={nproc}:{nproc}",
            "--user", f"{SANDBOX_UID}:{SANDBOX_UID}", *self._userns_args(),
            "--log-driver", "passthrough", "--env-file", str(envfile), "--unsetenv-all",
            "--tmpfs", f"/tmp:rw,exec,nosuid,nodev,size={limits.tmp_mb}m,mode=1777",
            "--workdir", req.cwd,
        ]
        if limits.watch_bytes > 0:
            args += ["--ulimit", f"fsize={limits.watch_bytes}:{limits.watch_bytes}"]
        for name in ETC_FILES:
            args += ["--mount", _bind(self.etc_dir / name, f"/etc/{name}", False)]
        for m in req.mounts:
            args += ["--mount", _bind(m.source, m.target, m.writable)]
        if fds:
            args += ["--preserve-fds", str(fds[-1] - 2)]
        return args

    def _userns_args(self) -> list[str]:
        if self.uid is None:
            return ["--userns", f"keep-id:uid={SANDBOX_UID},gid={SANDBOX_UID}"]
        base = self.uid - SANDBOX_UID
        return ["--uidmap", f"0:{base}:{UID_RANGE}", "--gidmap", f"0:{base}:{UID_RANGE}"]

    def _supervise_container(self, proc: subprocess.Popen, req: SandboxRequest, start: float,
                             cname: str) -> str | None:
        """Wait for the engine's client to return, or stop the container at the wall-time
        cap or when the watched folders pass the write cap."""
        deadline = start + req.limits.wall_s
        next_watch = start + WATCH_EVERY_S if req.watch else float("inf")
        pidfd = os.pidfd_open(proc.pid)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while True:
                now = time.monotonic()
                why = "timeout" if now >= deadline else None
                if why is None and now >= next_watch:
                    next_watch = now + WATCH_EVERY_S
                    why = "output_limit" if _over_quota(req.watch, req.limits) else None
                if why:
                    self._kill(proc, cname)
                    return why
                wake = min(deadline, next_watch) - now
                if poller.poll(max(1, int(wake * 1000) + 1)):
                    proc.wait()
                    return None
        finally:
            os.close(pidfd)

    def _kill(self, proc: subprocess.Popen, cname: str) -> None:
        assert self.engine is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.engine.call("kill", "--signal", "KILL", cname, timeout=TEARDOWN_S)
        try:
            proc.wait(timeout=TEARDOWN_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def _state(self, cname: str) -> dict | None:
        assert self.engine is not None
        proc = self.engine.call("inspect", "--type", "container", "--format", "{{json .State}}",
                                cname)
        if proc.returncode != 0:
            return None
        try:
            state = json.loads(proc.stdout)
        except ValueError:
            return None
        return state if isinstance(state, dict) else None

    def _teardown(self, cname: str, cidfile: Path) -> int:
        """Remove the container (killing what is left in it); returns how many of its
        processes are still alive after that and after SIGKILL to each, at the deadline."""
        assert self.engine is not None
        for pause in (0.0, 0.5, 2.0):  # unmounting its /dev/shm may be busy a moment
            time.sleep(pause)
            with contextlib.suppress(subprocess.TimeoutExpired):
                if self.engine.call("rm", "--force", "--ignore", cname,
                                    timeout=TEARDOWN_S * 3).returncode == 0:
                    break
        try:
            cid = cidfile.read_text().strip()
        except OSError:
            return 0
        end = time.monotonic() + TEARDOWN_S
        while True:
            pids = processes_of(cid)
            if not pids or time.monotonic() > end:
                return len(pids)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)


def container_name(name: str) -> str:
    """The engine's name of a sandbox, one per sandbox name (replacing the characters it cannot
    hold, or cutting it, alone would make two sandboxes one)."""
    digest = hashlib.sha256(name.encode(errors="surrogateescape")).hexdigest()[:12]
    return f"lastexam-{NAME_CHARS.sub('_', name)[-180:]}-{digest}"


def environment_of(req: SandboxRequest) -> str:
    """The environment whose venv the request mounts (its image); base when none."""
    envs = home_subdir("envs")
    for m in req.mounts:
        if m.source.parent == envs:
            return m.source.name
    return DEFAULT_ENVIRONMENT


def processes_of(cid: str) -> list[int]:
    """Host processes in a cgroup of the container (its full id names them)."""
    found = []
    needle = cid.encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if needle in Path(f"/proc/{pid}/cgroup").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def _runtime() -> str | None:
    """runc where cgroups are v1 or hybrid (crun, Podman's default, refuses hybrid ones)."""
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return None
    return "runc" if shutil.which("runc") else None


def _bind(source: Path, target: str, writable: bool) -> str:
    for text in (str(source), target):
        if "," in text or "=" in text:
            raise SandboxError(f"cannot mount a path holding ',' or '=' in a container: {text}")
    return f"type=bind,source={source},target={target}" + ("" if writable else ",readonly=true")


def _split_env(env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The sandbox's environment as (the env file's variables, those the engine takes from
    its own environment by name: values an env file cannot hold). Never on a command line."""
    in_file, by_name = {}, {}
    for key, value in env.items():
        if "\0" in value or "=" in key or "\n" in key:
            raise SandboxError(f"the variable {key!r} cannot be passed to a container")
        if "\n" not in value:
            in_file[key] = value
        elif key in ENGINE_VARS or key.startswith("LD_"):
            raise SandboxError(f"the variable {key} cannot hold a line break in a container")
        else:
            by_name[key] = value
    return in_file, by_name


def _write_env_file(path: Path, env: dict[str, str]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.writelines(f"{key}={value}\n" for key, value in env.items())
