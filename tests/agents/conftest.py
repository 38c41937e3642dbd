"""Real agent clients in the real sandbox, driven by the scripted upstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

SCRIPTS = Path(__file__).resolve().parent / "scripts"
COLUMN_TOTAL_SCRIPT = SCRIPTS / "column-total.yaml"
NPM_AGENTS = ("claude-code", "codex", "gemini-cli")
CLIENTS = (*NPM_AGENTS, "lastexam-agent")


@pytest.fixture(scope="session")
def agents_ready(base_env_ready: None) -> None:
    """Installs the pinned CLIs (and socat) once; a no-op when they are installed."""
    run_cli("agents", "install", *NPM_AGENTS, timeout=1800)


def oracle_script(task: Path, dest: Path) -> Path:
    """The task's oracle as a script, made by the CLI a user would use."""
    dest.write_text(run_cli("agents", "oracle-script", task).stdout)
    return dest


def trajectory(folder: Path) -> dict:
    return json.loads((folder / "trajectory.json").read_text())


def tool_commands(traj: dict) -> list[str]:
    return [json.dumps(c["arguments"]) for s in traj["steps"] for c in s.get("tool_calls") or []]


__all__ = ["CLIENTS", "COLUMN_TOTAL_SCRIPT", "ROOT", "oracle_script", "tool_commands", "trajectory"]
