"""Fixtures built at validation time: a fixture folder with `make.sh` and no committed output.

Large or binary deliverables (audio, production volumes, MARC files) would bloat the repository
if every variant were committed, so a fixture may instead say how to derive its output from the
oracle's. Contract, also in docs/task-format.md: `bash make.sh` runs in a sandbox with the task's
environment (its PATH and [env] variables), no network, cwd = a copy of the fixture folder, and
    ORACLE_OUTPUT  the oracle's output files (read-only)
    TASK_INPUTS    the task's inputs/ (read-only)
    OUT            an empty folder that make.sh fills; it is then graded like a committed output/
    FIXTURE_LIB    the task's fixtures/lib/ (read-only; empty if it has none): code the task's
                   make.sh scripts share, so that variants differ by their arguments, not by copies
    SOLUTION       the task's solution/ (read-only): a variant of the oracle's method edits the
                   oracle's own script instead of committing a near-copy of it
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lastexam.envs.manage import Environment
from lastexam.sandbox.base import Mount, SandboxProvider
from lastexam.validation.script_sandbox import ScriptRun, run_script

MAKE_SCRIPT = "make.sh"
MAKE_WALL_S = 600


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
    solution: Path,
    lib: Path,
    work: Path,
) -> tuple[Path | None, str]:
    """Run the fixture's make.sh; return (the folder it filled, "") or (None, why it failed)."""
    if not oracle_output.is_dir():
        return None, "make.sh needs the oracle's output, and the oracle left none"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(fixture_dir, work / "fixture", ignore=shutil.ignore_patterns("output", "__pycache__"))
    shutil.copytree(oracle_output, work / "oracle", symlinks=True)
    shutil.copytree(inputs, work / "inputs", symlinks=True)
    shutil.copytree(solution, work / "solution", ignore=shutil.ignore_patterns("__pycache__"))
    if lib.is_dir():
        shutil.copytree(lib, work / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        (work / "lib").mkdir()
    out, why = run_script(provider, env, ScriptRun(
        name=name,
        argv=["bash", f"/fixture/src/{MAKE_SCRIPT}"],
        work=work,
        mounts=[Mount(work / "fixture", "/fixture/src"), Mount(work / "oracle", "/fixture/oracle"),
                Mount(work / "inputs", "/fixture/inputs"), Mount(work / "lib", "/fixture/lib"),
                Mount(work / "solution", "/fixture/solution")],
        out_at="/fixture/out",
        cwd="/fixture/src",
        wall_s=MAKE_WALL_S,
        log="make",
        variables={"ORACLE_OUTPUT": "/fixture/oracle", "TASK_INPUTS": "/fixture/inputs",
                   "OUT": "/fixture/out", "FIXTURE_LIB": "/fixture/lib", "SOLUTION": "/fixture/solution"},
    ))
    return (None, f"make.sh: {why}") if why else (out, "")
