"""`lastexam agents check`: every registered model agent passes it; adapters that each break
one rule (tests/agents/faulty_adapters.py) fail exactly the check of that rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from lastexam.agents import all_agents, get_agent
from lastexam.agents.base import Agent

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("base_env_ready")]

HERE = Path(__file__).resolve().parent
MODEL_AGENTS = [a.name for a in all_agents() if a.needs_model]
CHECKS = {
    "solve": "scores 1.0 with the oracle's turn",
    "gateway": "calls the model through the gateway",
    "trajectory": "trajectory has every tool call",
    "budget": "stops at --max-tokens 1000",
    "secrets": "no key or token in any artifact",
}


def check(agent: str, out: Path, *, faulty: bool = False) -> tuple[int, dict[str, dict]]:
    env = {"PYTHONPATH": str(HERE)} if faulty else None
    proc = run_cli("agents", "check", agent, "--out", out, "--json", check=False, timeout=1800,
                   env=env)
    report = json.loads(proc.stdout)
    assert report["passed"] == (proc.returncode == 0), proc.stderr[-2000:]
    return proc.returncode, {c["check"]: c for c in report["checks"]}


def failed(rows: dict[str, dict]) -> set[str]:
    names = {v: k for k, v in CHECKS.items()}
    return {names.get(name, name) for name, row in rows.items() if not row["ok"]}


@pytest.mark.per_client
@pytest.mark.parametrize("agent", MODEL_AGENTS)
def test_every_model_agent_passes_its_check(agent: str, tmp_path: Path) -> None:
    run_cli("agents", "install", agent, timeout=1800)
    code, rows = check(agent, tmp_path / "check")
    assert set(CHECKS.values()) <= set(rows), rows
    assert code == 0, {k: v["detail"] for k, v in rows.items() if not v["ok"]}
    detail = rows[CHECKS["trajectory"]]["detail"]
    assert "1 of 1 scripted tool calls" in detail
    if type(get_agent(agent)).native_steps is not Agent.native_steps:  # it reads its own log
        assert "from the native log" in detail


@pytest.mark.parametrize(("adapter", "breaks"), [
    ("LeakyAgent", {"secrets"}),
    ("KeyPassingAgent", {"secrets"}),
    ("StepLosingAgent", {"trajectory"}),
    ("LogLosingAgent", {"trajectory"}),
    ("SoloAgent", {"budget"}),
    ("MuteAgent", {"solve", "gateway", "trajectory", "budget"}),
])
def test_a_faulty_adapter_fails_the_check_of_its_fault(adapter: str, breaks: set[str],
                                                        tmp_path: Path) -> None:
    code, rows = check(f"faulty_adapters:{adapter}", tmp_path / "check", faulty=True)
    assert code == 1
    assert failed(rows) == breaks, {k: v["detail"] for k, v in rows.items()}


def test_an_agent_without_a_model_is_refused(tmp_path: Path) -> None:
    code, rows = check("nop", tmp_path / "check")
    assert code == 1
    assert not rows["talks to a model"]["ok"]
    assert not (tmp_path / "check" / "solve").exists()  # nothing was run


def test_a_folder_holding_a_checks_runs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "check" / "budget").mkdir(parents=True)
    proc = run_cli("agents", "check", "lastexam-agent", "--out", tmp_path / "check", check=False)
    assert proc.returncode == 2  # could not run, rather than failed
    assert "already there: give another --out" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "check" / "solve").exists()
