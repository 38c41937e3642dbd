"""Real agent clients in the real sandbox, driven by the scripted upstream."""

from __future__ import annotations

import base64
import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

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
    """A script whose one shell turn unpacks the task's solution/ in the sandbox and runs
    its solve.sh: the oracle's steps, carried out through the client's own shell tool."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(task / "solution", arcname="solution")
    packed = base64.b64encode(buf.getvalue()).decode()
    command = (f"mkdir -p /tmp/oracle && cd /tmp/oracle && echo {packed} | base64 -d | tar xz "
               "&& bash /tmp/oracle/solution/solve.sh")
    dest.write_text(yaml.safe_dump({"turns": [{"shell": command}, {"text": "Done."}]}))
    return dest


def trajectory(folder: Path) -> dict:
    return json.loads((folder / "trajectory.json").read_text())


def tool_commands(traj: dict) -> list[str]:
    return [json.dumps(c["arguments"]) for s in traj["steps"] for c in s.get("tool_calls") or []]


__all__ = ["CLIENTS", "COLUMN_TOTAL_SCRIPT", "ROOT", "oracle_script", "tool_commands", "trajectory"]
