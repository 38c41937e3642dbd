"""Agents from outside lastexam: `--agent module:Class`, and the `lastexam.agents` entry points.
AwkSumAgent below is the example agent of docs/agents.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_cli, run_json
from lastexam.agents import Agent, AgentContext, AgentLaunch, get_agent
from lastexam.errors import LastexamError

TESTS = ROOT / "tests"


class AwkSumAgent(Agent):
    """Sums the first column of /task/inputs/data.csv with awk: no model, one command."""

    name = "awk-sum"
    description = "sums a CSV column with awk (the example outside agent)"
    accepted_args = ("column",)

    def version(self) -> str:
        return "awk-sum-1.0"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        column = ctx.args.get("column", "1")
        script = (
            f"awk -F, 'NR > 1 {{ s += ${column}; n++ }} "
            'END { printf "{\\"total\\": %.6f, \\"count\\": %d}\\n", s, n }\' '
            "/task/inputs/data.csv > /task/output/result.json"
        )
        return AgentLaunch(argv=["/bin/sh", "-c", script],
                           env={"LASTEXAM_INSTRUCTION": ctx.instruction})


class NamedLikeOracle(AwkSumAgent):
    name = "oracle"


class BadName(AwkSumAgent):
    name = "Awk Sum/1"


class NotAnAgent:
    name = "not-an-agent"


def plugin_site(tmp_path: Path) -> Path:
    """A folder holding one installed distribution (only its metadata) that declares
    AwkSumAgent in the `lastexam.agents` entry-point group."""
    site = tmp_path / "site"
    info = site / "awk_sum_agent-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: awk-sum-agent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[lastexam.agents]\nawk-sum = test_agent_plugins:AwkSumAgent\n"
    )
    return site


def python_path(*folders: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(map(str, folders))}


def the_trial(result: dict) -> dict:
    assert len(result["trials"]) == 1
    return result["trials"][0]


def test_outside_agent_runs_by_module_and_class(tmp_path: Path, base_env_ready: None) -> None:
    result = run_json("run", COLUMN_TOTAL, "--agent", "test_agent_plugins:AwkSumAgent",
                      "--out", tmp_path / "run", env=python_path(TESTS))
    trial = the_trial(result)
    assert (trial["agent"], trial["status"], trial["score"]) == ("awk-sum", "completed", 1.0)
    assert trial["trial_id"].startswith("column-total__awk-sum__")


def test_outside_agent_runs_from_an_entry_point(tmp_path: Path, base_env_ready: None) -> None:
    env = python_path(plugin_site(tmp_path), TESTS)
    listed = run_cli("agents", "list", env=env).stdout
    assert "awk-sum" in listed and "awk-sum-1.0" in listed
    trial = the_trial(run_json("run", COLUMN_TOTAL, "--agent", "awk-sum",
                               "--out", tmp_path / "run", env=env))
    assert (trial["agent"], trial["status"], trial["score"]) == ("awk-sum", "completed", 1.0)
    # without the distribution the name is unknown, and said so
    proc = run_cli("run", COLUMN_TOTAL, "--agent", "awk-sum", "--out", tmp_path / "r2",
                   env=python_path(TESTS), check=False)
    assert proc.returncode == 2
    assert "unknown agent 'awk-sum'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_module_here:Agent", "cannot import no_such_module_here"),
        ("test_agent_plugins:Missing", "test_agent_plugins has no Missing"),
        ("test_agent_plugins:NotAnAgent", "not a subclass of lastexam.agents.Agent"),
        ("test_agent_plugins:BadName", "its `name` ('Awk Sum/1') must be"),
        ("test_agent_plugins:NamedLikeOracle", "the name of the registered agent"),
        ("test_agent_plugins:", "expected module:Class"),
    ],
)
def test_a_bad_outside_agent_is_refused_with_a_message(ref: str, message: str) -> None:
    with pytest.raises(LastexamError, match=None) as info:
        get_agent(ref)
    assert message in info.value.render()


def test_builtin_agents_come_from_the_entry_points() -> None:
    from importlib.metadata import entry_points

    declared = {ep.name: ep.value for ep in entry_points(group="lastexam.agents")}
    assert declared["oracle"] == "lastexam.agents.builtin:OracleAgent"
    assert type(get_agent("codex")).__name__ == "CodexAgent"


def test_an_experiment_file_names_an_outside_agent(tmp_path: Path) -> None:
    from lastexam.cli.run_cmd import _experiment
    from lastexam.run.runner import plan_trials
    from lastexam.task.load import load_task

    exp = tmp_path / "exp.yaml"
    exp.write_text(f"tasks: [{COLUMN_TOTAL}]\nagents:\n  - name: test_agent_plugins:AwkSumAgent\n"
                   "    args: {column: '1'}\n")
    config = _experiment(exp, None, None, None, {}, None, None, None, None, None)
    assert [c.agent for c in config.cells] == ["test_agent_plugins:AwkSumAgent"]
    plans = plan_trials([load_task(COLUMN_TOTAL)], config)
    assert [p.key.agent for p in plans] == ["awk-sum"]
