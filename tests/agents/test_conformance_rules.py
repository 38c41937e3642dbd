"""`lastexam agents check`'s rules that need no trial: an adapter that reads a native log passes
the trajectory check only from that log, and an adapter that is handed the solution is refused
before anything runs. (tests/agents/test_conformance.py runs the whole check.)"""

from __future__ import annotations

from pathlib import Path

from lastexam.agents.base import Agent
from lastexam.agents.conformance import TrialRun, check_agent, scripts, tool_calls_kept
from lastexam.agents.lastexam_agent import LastexamAgent
from lastexam.store.models import TrialRecord
from lastexam.trajectory import build_trajectory, write_trajectory
from lastexam.trajectory.schema import Step, ToolCall
from tests.agents.conftest import ROOT

TASK = ROOT / "tests" / "data" / "tasks" / "other" / "column-total"


class SolutionSeeingAgent(LastexamAgent):
    """Handed the task's solution/ (as the oracle is): it could solve without the model."""

    name = "rules-solution-seeing"
    sees_solution = True


class NoLogAgent(LastexamAgent):
    """Reads no native log: its trajectory is the gateway log's."""

    name = "rules-no-log"
    native_steps = Agent.native_steps


def _run(folder: Path, *, from_gateway: bool) -> TrialRun:
    """A trial folder whose trajectory holds the oracle's tool call, its steps from the agent's
    native log or (that log unreadable) rebuilt from the gateway log."""
    command = next(t.shell for t in scripts(TASK)[0].turns if t.shell)
    step = Step(source="agent", tool_calls=[ToolCall(tool_call_id="1", function_name="bash",
                                                     arguments={"command": command})])
    traj = build_trajectory(session_id="t", agent="a", agent_version="1", model="m",
                            instruction="do it", native=[step], calls=[], summary=None,
                            duration_s=1.0, from_gateway=from_gateway)
    folder.mkdir(parents=True)
    write_trajectory(traj, folder / "trajectory.json")
    return TrialRun(record=TrialRecord.model_construct(), folder=folder, run_dir=folder.parent)


def test_an_adapter_reading_a_native_log_passes_only_from_it(tmp_path: Path) -> None:
    solve = scripts(TASK)[0]
    agent = LastexamAgent()  # reads its own log (native_steps)
    assert tool_calls_kept(_run(tmp_path / "native", from_gateway=False), solve, agent).ok
    fallback = tool_calls_kept(_run(tmp_path / "fallback", from_gateway=True), solve, agent)
    assert not fallback.ok and "native log" in fallback.detail


def test_an_adapter_without_a_native_log_passes_from_the_gateway_log(tmp_path: Path) -> None:
    row = tool_calls_kept(_run(tmp_path / "gw", from_gateway=True), scripts(TASK)[0], NoLogAgent())
    assert row.ok, row.detail


def test_an_adapter_that_sees_the_solution_is_refused(tmp_path: Path) -> None:
    report = check_agent(f"{__name__}:SolutionSeeingAgent", TASK, {}, tmp_path / "check",
                         log=lambda _m: None)
    assert not report.passed
    row = next(c for c in report.checks if c.check == "does not see the solution")
    assert not row.ok
    assert not (tmp_path / "check" / "solve").exists()  # nothing was run
