"""Shared fixtures: the real CLI in a subprocess, the harness test task, run helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_TASKS = ROOT / "tests" / "data" / "tasks"
COLUMN_TOTAL = TEST_TASKS / "other" / "column-total"
LASTEXAM = [sys.executable, "-m", "lastexam"]


def run_cli(*args: str | Path, check: bool = True, timeout: float = 600, env: dict | None = None,
            cwd: Path = ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [*LASTEXAM, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lastexam {args} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return proc


def run_json(*args: str | Path, **kw) -> dict:
    proc = run_cli(*args, "--json", **kw)
    return json.loads(proc.stdout)


def run_command_agent(cmd: str, out: Path, task: Path = COLUMN_TOTAL, *extra: str) -> dict:
    """Run the `command` agent with a shell command on a task; return the single trial."""
    result = run_json("run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--out", out, *extra)
    assert len(result["trials"]) == 1
    return result["trials"][0]


def trial_dir(run_dir: Path, trial: dict) -> Path:
    return run_dir / "trials" / trial["trial_id"]


@pytest.fixture(scope="session")
def base_env_ready() -> None:
    proc = run_cli("env", "check", "base", check=False)
    if proc.returncode != 0:
        run_cli("env", "install", "base", timeout=1200)
