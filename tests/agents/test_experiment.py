"""Experiment files: the matrix, budgets by precedence, command-line overrides, strictness."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_cli, run_json
from lastexam.errors import LastexamError
from lastexam.run.experiment import experiment_config, load_experiment

from .conftest import COLUMN_TOTAL_SCRIPT

NEEDS_MODEL = {"claude-code": True, "codex": True, "lastexam-agent": True, "oracle": False}

EXPERIMENT = f"""
name: demo
tasks: [{COLUMN_TOTAL}]
attempts: 2
concurrency: 2
budget: {{max_tokens: 1000, max_cost_usd: 5}}
agents:
  - name: claude-code
    args: {{max_turns: 7, verbose: true}}
    budget: {{max_tokens: 2000}}
  - name: codex
  - name: oracle
models:
  - id: anthropic:claude-sonnet-4-5
    budget: {{max_cost_usd: 1}}
  - id: openai:gpt-5
exclude:
  - {{agent: claude-code, model: openai:gpt-5}}
  - {{agent: codex, model: anthropic:claude-sonnet-4-5}}
"""


def test_matrix_and_budget_precedence(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    config = experiment_config(path, load_experiment(path), NEEDS_MODEL)
    cells = {(c.agent, c.model): c for c in config.cells}
    assert set(cells) == {("claude-code", "anthropic:claude-sonnet-4-5"), ("codex", "openai:gpt-5"),
                          ("oracle", "")}
    claude = cells[("claude-code", "anthropic:claude-sonnet-4-5")]
    assert claude.agent_args == {"max_turns": "7", "verbose": "true"}
    assert (claude.max_tokens, claude.max_cost_usd) == (2000, 1.0)  # model > agent > experiment
    codex = cells[("codex", "openai:gpt-5")]
    assert (codex.max_tokens, codex.max_cost_usd) == (1000, 5.0)
    assert config.attempts == 2 and config.concurrency == 2 and config.agent == "demo"


@pytest.mark.parametrize("bad, field", [
    ("tasks: [x]\nagents: [{name: oracle}]\nattempt: 2\n", "attempt"),
    ("tasks: [x]\nagents: [{name: oracle, budjet: {}}]\n", "budjet"),
    ("tasks: [x]\nagents: []\n", "agents"),
])
def test_unknown_keys_and_empty_lists_are_rejected(tmp_path: Path, bad: str, field: str) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(bad)
    with pytest.raises(LastexamError) as e:
        load_experiment(path)
    assert field in str(e.value)


def test_scripted_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "exp.yaml"
    path.parent.mkdir()
    path.write_text("tasks: [t]\nagents: [{name: codex}]\nmodels: [{id: 'scripted:s.yaml'}]\n")
    config = experiment_config(path, load_experiment(path), NEEDS_MODEL)
    assert config.cells[0].model == f"scripted:{tmp_path / 'sub' / 's.yaml'}"
    assert config.task_paths == [str(tmp_path / "sub" / "t")]


@pytest.mark.slow
@pytest.mark.usefixtures("base_env_ready")
def test_flags_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""
tasks: [{COLUMN_TOTAL}]
attempts: 3
agents: [{{name: lastexam-agent}}, {{name: oracle}}]
models: [{{id: 'scripted:{COLUMN_TOTAL_SCRIPT}'}}]
budget: {{max_tokens: 10}}
""")
    out = tmp_path / "run"
    result = run_json("run", "--config", path, "--attempts", "1", "--max-tokens", "1000000",
                      "--concurrency", "2", "--out", out)
    trials = {(t["agent"], t["attempt"]): t for t in result["trials"]}
    assert set(trials) == {("lastexam-agent", 1), ("oracle", 1)}
    assert all(t["score"] == 1.0 for t in trials.values())
    assert trials[("lastexam-agent", 1)]["gateway"]["budget"]["max_tokens"] == 1000000
    assert trials[("oracle", 1)]["gateway"] is None


def test_example_experiments_are_valid() -> None:
    for path in (ROOT / "experiments").glob("*.yaml"):
        from lastexam.agents import all_agents

        config = experiment_config(path, load_experiment(path), {a.name: a.needs_model for a in all_agents()})
        assert config.cells


def test_cost_budget_needs_a_price(tmp_path: Path) -> None:
    proc = run_cli("run", COLUMN_TOTAL, "--agent", "lastexam-agent", "--model",
                   f"scripted:{COLUMN_TOTAL_SCRIPT}", "--max-cost-usd", "1", "--out", tmp_path / "r",
                   check=False)
    assert proc.returncode == 2 and "cannot be enforced" in proc.stderr
    assert not (tmp_path / "r" / "results.db").exists()
