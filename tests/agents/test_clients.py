"""Each real client (Claude Code, Codex, Gemini CLI, lastexam-agent) solves a starter task in
the bwrap sandbox, driven through the gateway by the scripted upstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_json, trial_dir
from lastexam.agents import get_agent

from .conftest import CLIENTS, COLUMN_TOTAL_SCRIPT, oracle_script, tool_commands, trajectory

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("agents_ready")]


@pytest.mark.parametrize("agent", CLIENTS)
def test_client_solves_column_total(agent: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_json("run", COLUMN_TOTAL, "--agent", agent, "--model",
                      f"scripted:{COLUMN_TOTAL_SCRIPT}", "--out", out, "--max-tokens", "10000000")
    trial = result["trials"][0]
    assert trial["status"] == "completed", trial["error"]
    assert trial["score"] == 1.0
    usage = trial["gateway"]
    assert usage["model_calls"] >= 3 and usage["refused_calls"] == 0
    assert usage["usage"]["input_tokens"] > 0 and usage["usage"]["output_tokens"] > 0
    assert usage["cost_usd"] is None  # the script names no price: unknown, not zero

    folder = trial_dir(out, trial)
    traj = trajectory(folder)
    assert traj["schema_version"] == "ATIF-v1.6"
    assert traj["agent"]["name"] == agent
    assert traj["steps"][0]["source"] == "user" and "Column total" in traj["steps"][0]["message"]
    commands = tool_commands(traj)
    assert any("awk" in c and "/task/inputs/data.csv" in c for c in commands), commands
    assert any("cat /task/output/result.json" in c for c in commands), commands
    final = traj["final_metrics"]
    assert final["total_prompt_tokens"] == usage["usage"]["input_tokens"]
    assert final["total_completion_tokens"] == usage["usage"]["output_tokens"]
    assert final["total_cost_usd"] is None
    assert final["extra"]["model_calls"] == usage["model_calls"]
    calls = [json.loads(line) for line in (folder / "gateway.jsonl").read_text().splitlines()]
    assert sum(c["counted"] for c in calls) == usage["model_calls"]
    record = json.loads((folder / "trial.json").read_text())
    assert record["repro"]["agent_version"] == get_agent(agent).version()


def test_reference_agent_speaks_anthropic_too(tmp_path: Path) -> None:
    result = run_json("run", COLUMN_TOTAL, "--agent", "lastexam-agent", "--agent-arg", "api=anthropic",
                      "--model", f"scripted:{COLUMN_TOTAL_SCRIPT}", "--out", tmp_path / "run")
    trial = result["trials"][0]
    assert trial["score"] == 1.0
    calls = (trial_dir(tmp_path / "run", trial) / "gateway.jsonl").read_text().splitlines()
    assert {json.loads(c)["wire"] for c in calls} == {"anthropic"}


def test_claude_code_solves_a_real_starter_task(tmp_path: Path) -> None:
    task = ROOT / "tasks" / "social-sciences" / "returns-to-schooling-iv-panel"
    if not (task / "solution" / "solve.sh").is_file():
        pytest.skip("the starter task is not in this checkout")
    from conftest import run_cli

    run_cli("env", "install", "econ", timeout=1800)
    script = oracle_script(task, tmp_path / "oracle.yaml")
    result = run_json("run", task, "--agent", "claude-code", "--model", f"scripted:{script}",
                      "--out", tmp_path / "run")
    trial = result["trials"][0]
    assert trial["status"] == "completed", trial["error"]
    assert trial["score"] == 1.0
    commands = tool_commands(trajectory(trial_dir(tmp_path / "run", trial)))
    assert any("solve.sh" in c for c in commands)
