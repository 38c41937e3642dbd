"""Fixtures built at validation time: a fixture folder with `make.sh` and no committed output.

Large or binary deliverables (audio, production volumes, MARC files) would bloat the repository
if every variant were committed, so a fixture may instead say how to derive its output from the
oracle's. Contract, also in docs/task-format.md: `bash make.sh` runs in a sandbox with the task's
environment (its PATH and [env] variables), no network, cwd = a copy of the fixture folder, and
    ORACLE_OUTPUT  the oracle's output files (read-only)
    TASK_INPUTS    the task's inputs/ (read-only)
    OUT            an empty folder that make.sh fills; it is then graded like a committed output/
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from lastexam.envs.manage import Environment
from lastexam.sandbox.base import (
    Mount,
    SandboxError,
    SandboxLimits,
    SandboxProvider,
    SandboxRequest,
    SandboxResult,
)

MAKE_SCRIPT = "make.sh"
MAKE_LIMITS = SandboxLimits(wall_s=600, memory_mb=4096, max_processes=256, watch_bytes=4 * 1024**3)
LOG_TAIL_CHARS = 400


def has_make_script(fixture_dir: Path) -> bool:
    return (fixture_dir / MAKE_SCRIPT).is_file()


def build_fixture_output(
    provider: SandboxProvider,
    env: Environment,
    *,
    name: str,
    fixture_dir: Path,
    oracle_output: Path,
    inputs: Path,
    work: Path,
) -> tuple[Path | None, str]:
    """Run the fixture's make.sh; return (the folder it filled, "") or (None, why it failed)."""
    if not oracle_output.is_dir():
        return None, "make.sh needs the oracle's output, and the oracle left none"
    shutil.rmtree(work, ignore_errors=True)
    src, oracle, out = work / "fixture", work / "oracle", work / "out"
    shutil.copytree(fixture_dir, src, ignore=shutil.ignore_patterns("output", "__pycache__"))
    # The run folder (and maybe the checkout) is private to the harness: the sandbox uid reads copies.
    shutil.copytree(oracle_output, oracle, symlinks=True)
    shutil.copytree(inputs, work / "inputs", symlinks=True)
    out.mkdir(parents=True)
    for p in [work, *work.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    uid = provider.uid
    if uid is not None:
        os.chown(out, uid, uid)
    try:
        result = _run(provider, env, name, src, oracle, work / "inputs", out, work)
    except SandboxError as e:
        return None, f"make.sh sandbox did not start: {e}"
    if result.exit_code != 0 or result.killed:
        tail = (work / "make.stderr.log").read_text(errors="replace")[-LOG_TAIL_CHARS:]
        return None, f"make.sh failed (exit {result.exit_code}{', ' + result.killed if result.killed else ''}): {tail}"
    return out, ""


def _run(
    provider: SandboxProvider, env: Environment, name: str, src: Path, oracle: Path, inputs: Path,
    out: Path, work: Path,
) -> SandboxResult:
    return provider.run(
        SandboxRequest(
            name=name,
            argv=["bash", f"/fixture/src/{MAKE_SCRIPT}"],
            mounts=[
                Mount(src, "/fixture/src"),
                Mount(oracle, "/fixture/oracle"),
                Mount(inputs, "/fixture/inputs"),
                Mount(out, "/fixture/out", writable=True),
                *env.mounts(),
            ],
            env={
                **env.variables(),
                "HOME": "/tmp",
                "LANG": "C.UTF-8",
                "PYTHONHASHSEED": "0",
                "ORACLE_OUTPUT": "/fixture/oracle",
                "TASK_INPUTS": "/fixture/inputs",
                "OUT": "/fixture/out",
            },
            cwd="/fixture/src",
            limits=MAKE_LIMITS,
            stdout=work / "make.stdout.log",
            stderr=work / "make.stderr.log",
            watch=[out],
        )
    )
