"""A GUI copy of the harness test task, and running it through the real CLI and sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_json, trial_dir

DESKTOP_TABLE = """
[desktop]
screen = "1024x768"
apps = [{ name = "Note", exec = "xmessage -name note 'hello from the panel'", wm_class = "Xmessage" }]
"""


def gui_task(parent: Path, *, gui: bool = True, timeout_s: int = 60, table: str = DESKTOP_TABLE) -> Path:
    """column-total with gui = true and a [desktop] table (or, gui=False, without both)."""
    task = parent / "tasks" / COLUMN_TOTAL.name
    shutil.copytree(COLUMN_TOTAL, task)
    toml = (task / "task.toml").read_text()
    toml = toml.replace("gui = false", f"gui = {'true' if gui else 'false'}")
    toml = toml.replace("timeout_s = 60", f"timeout_s = {timeout_s}")
    (task / "task.toml").write_text(toml + (table if gui else ""))
    return task


def run_trial(task: Path, out: Path, cmd: str, *extra: str) -> tuple[dict, Path]:
    """The `command` agent on `task`; the trial's JSON and folder."""
    result = run_json("run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--out", out,
                      *extra)
    trial = result["trials"][0]
    return trial, trial_dir(out, trial)


def record(folder: Path) -> dict:
    return json.loads((folder / "trial.json").read_text())


def ffprobe(path: Path) -> dict:
    proc = subprocess.run(
        ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
        capture_output=True, text=True, check=False,
    )
    return json.loads(proc.stdout or "{}") if proc.returncode == 0 else {}


@pytest.fixture(scope="session")
def desktop_ready(base_env_ready) -> None:
    from lastexam.desktop.launch import missing

    problems = missing()
    if problems:
        pytest.fail("the desktop cannot run here: " + "; ".join(problems))
