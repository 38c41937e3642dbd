"""Running a task author's script (a fixture's make.sh, a task's generate.py) in a sandbox with
the task's environment: read-only copies in, one empty writable folder out, and on failure the
tail of the script's stderr."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.envs.manage import Environment
from lastexam.sandbox.base import (
    Mount,
    SandboxError,
    SandboxLimits,
    SandboxProvider,
    SandboxRequest,
)
from lastexam.untrusted import tail

MEMORY_MB = 4096
MAX_PROCESSES = 256
OUT_MAX_BYTES = 4 * 1024**3
LOG_TAIL_BYTES = 400


@dataclass(frozen=True)
class ScriptRun:
    name: str  # the sandbox's unique name
    argv: list[str]
    work: Path  # holds the caller's copies; out/ and the logs are made here
    mounts: list[Mount]  # the caller's copies, read-only
    out_at: str  # where work/out is mounted, writable
    cwd: str
    wall_s: float
    log: str  # the logs are work/<log>.stdout.log and work/<log>.stderr.log
    variables: dict[str, str] = field(default_factory=dict)  # on top of the environment's


def run_script(provider: SandboxProvider, env: Environment, run: ScriptRun) -> tuple[Path, str]:
    """(work/out, "") when the script exits 0 within its limits, else (work/out, what went wrong)."""
    out = run.work / "out"
    out.mkdir(parents=True)
    # The work area (and maybe the checkout) is private to the harness: the sandbox uid reads copies.
    for p in [run.work, *run.work.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    if provider.uid is not None:
        os.chown(out, provider.uid, provider.uid)
    stderr = run.work / f"{run.log}.stderr.log"
    try:
        result = provider.run(SandboxRequest(
            name=run.name,
            argv=run.argv,
            mounts=[*run.mounts, Mount(out, run.out_at, writable=True), *env.mounts()],
            env={**env.variables(), "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
                 **run.variables},
            cwd=run.cwd,
            limits=SandboxLimits(wall_s=run.wall_s, memory_mb=MEMORY_MB, max_processes=MAX_PROCESSES,
                                 watch_bytes=OUT_MAX_BYTES),
            stdout=run.work / f"{run.log}.stdout.log",
            stderr=stderr,
            watch=[out],
        ))
    except SandboxError as e:
        return out, f"sandbox did not start: {e}"
    if result.exit_code != 0 or result.killed:
        killed = f", {result.killed}" if result.killed else ""
        return out, f"exit {result.exit_code}{killed}: {tail(stderr, LOG_TAIL_BYTES)}"
    return out, ""
