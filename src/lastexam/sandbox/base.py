"""The sandbox contract. A provider runs one command in a fresh, isolated view of the OS and
returns only after every process it started is gone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lastexam.envs.manage import Environment


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    writable: bool = False


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float
    memory_mb: int
    max_processes: int
    watch_bytes: int  # cap on bytes written under SandboxRequest.watch
    watch_files: int = 200_000  # cap on entries (files, folders, links...) under watch
    watch_dirs: int = 20_000  # cap on folders under SandboxRequest.watch
    tmp_mb: int = 1024  # size of the private /tmp (memory-backed, counted in memory_mb)


@dataclass
class SandboxRequest:
    name: str  # unique per sandbox; names its cgroup
    argv: list[str]
    mounts: list[Mount]
    env: dict[str, str]
    cwd: str
    limits: SandboxLimits
    stdout: Path
    stderr: Path
    watch: list[Path] = field(default_factory=list)
    # Host descriptors the command inherits under the same numbers (e.g. the write end of a
    # pipe the host reads); the caller keeps and closes its own copies.
    pass_fds: tuple[int, ...] = ()


@dataclass
class SandboxResult:
    exit_code: int | None
    killed: str | None  # None, "timeout", "memory", "output_limit"
    wall_s: float
    peak_memory_bytes: int | None = None
    survivors: int | None = None  # processes still alive after teardown: must be 0


class SandboxError(Exception):
    """The sandbox could not be set up or started: an infrastructure failure."""


class SandboxProvider(Protocol):
    name: str
    # The host uid the sandbox's processes run as, which must own what they may write
    # (None: the caller's own uid, nothing to hand over).
    uid: int | None

    def preflight(self) -> list[str]:
        """Problems that stop this provider from working here; empty when ready."""
        ...

    def settings(self) -> dict[str, object]:
        """What a result depends on: isolation and limit mechanisms, versions."""
        ...

    def environment_problems(self, env: Environment) -> list[str]:
        """What stops this provider's sandboxes from running in the environment."""
        ...

    def run(self, request: SandboxRequest) -> SandboxResult: ...
