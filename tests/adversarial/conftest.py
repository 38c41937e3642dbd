"""One run of every attack, side by side with honest bystander trials, shared by the tests."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import TEST_TASKS, run_cli

from .attacks import ATTACKS, HONEST_TOTAL, Attack

BYSTANDERS = {
    "bystander-column-total": ("column-total", HONEST_TOTAL),
    "bystander-deliverable-parse": (
        "deliverable-parse",
        (TEST_TASKS / "other" / "deliverable-parse" / "solution" / "solve.sh").read_text(),
    ),
}


@dataclass
class Outcome:
    trial: dict  # as `lastexam run --json` printed it
    record: dict  # trial.json
    folder: Path

    @property
    def log(self) -> str:
        return (self.folder / "agent" / "agent.stdout.log").read_text(errors="replace")

    @property
    def dropped(self) -> list[dict[str, str]]:
        return self.record["outputs"]["dropped"]


@dataclass
class AttackRun:
    proc: subprocess.CompletedProcess
    result: dict
    run_dir: Path
    mark: str
    outcomes: dict[str, Outcome]

    def run_id(self) -> str:
        return self.result["run_id"]


def make_task(dest: Path, task_id: str, base: str, script: str, attack: Attack | None = None) -> None:
    folder = dest / task_id
    shutil.copytree(TEST_TASKS / "other" / base, folder, ignore=shutil.ignore_patterns("fixtures"))
    toml = folder / "task.toml"
    lines = [f'id = "{task_id}"' if line.startswith("id = ") else line
             for line in toml.read_text().splitlines()]
    if attack and attack.timeout_s:
        lines = [f"timeout_s = {attack.timeout_s}" if line.startswith("timeout_s") else line
                 for line in lines]
    if attack and attack.limits:
        if "[limits]" not in lines:
            lines.append("[limits]")
        lines += [f"{k} = {v}" for k, v in attack.limits.items()]
    toml.write_text("\n".join(lines) + "\n")
    (folder / "inputs" / "attack.sh").write_text(script)


def command_run(tasks: Path, run_dir: Path, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return run_cli("run", tasks, "--agent", "command", "--agent-arg", "cmd=bash /task/inputs/attack.sh",
                   "--concurrency", "2", "--out", run_dir, "--json", *extra, check=False, timeout=timeout)


def outcomes_of(result: dict, run_dir: Path) -> dict[str, Outcome]:
    found = {}
    for trial in result["trials"]:
        folder = run_dir / "trials" / trial["trial_id"]
        record = json.loads((folder / "trial.json").read_text())
        found[trial["task"]] = Outcome(trial, record, folder)
    return found


@pytest.fixture(scope="session")
def attack_run(tmp_path_factory: pytest.TempPathFactory, base_env_ready: None) -> AttackRun:
    root = tmp_path_factory.mktemp("attacks")
    mark = f"lxatk{secrets.token_hex(4)}"
    tasks = root / "tasks" / "other"
    tasks.mkdir(parents=True)
    for a in ATTACKS:
        make_task(tasks, a.task_id, a.base, a.script.replace("@MARK@", mark), a)
    for task_id, (base, script) in BYSTANDERS.items():
        make_task(tasks, task_id, base, script)
    run_dir = root / "run"
    proc = command_run(root / "tasks", run_dir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    return AttackRun(proc, result, run_dir, mark, outcomes_of(result, run_dir))


def processes_with(text: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(f"{pid}: {cmdline[:200]!r}")
    return found


def trial_rows(run_dir: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(run_dir / "results.db") as db:
        return db.execute("SELECT trial_id, COUNT(*) FROM trials GROUP BY trial_id").fetchall()
