"""The native logs of opencode, Qwen Code, Factory Droid, Grok CLI and Cline CLI as trajectory
steps. The logs were recorded by `lastexam agents check NAME` (the oracle's turn of
column-total, then "Done.") with the pinned clients."""

from __future__ import annotations

from pathlib import Path

import pytest

from lastexam.agents import get_agent

DATA = Path(__file__).resolve().parent / "agents" / "data"
SHELL = {"opencode": "bash", "qwen-code": "run_shell_command", "droid": "Execute",
         "grok-cli": "bash", "cline": "run_commands"}


@pytest.mark.parametrize("agent", sorted(SHELL))
def test_a_recorded_log_gives_the_call_its_result_and_the_answer(agent: str, tmp_path: Path) -> None:
    (tmp_path / "agent.stdout.log").write_bytes((DATA / f"{agent}.native.jsonl").read_bytes())
    steps = get_agent(agent).native_steps(tmp_path)
    assert steps is not None
    calls = [c for s in steps for c in s.tool_calls or []]
    assert [c.function_name for c in calls] == [SHELL[agent]]
    assert "solution/solve.sh" in str(calls[0].arguments)
    acting = next(s for s in steps if s.tool_calls)
    assert acting.observation is not None
    assert [r.source_call_id for r in acting.observation.results] == [calls[0].tool_call_id]
    assert steps[-1].message == "Done." and not steps[-1].tool_calls


@pytest.mark.parametrize("agent", sorted(SHELL))
def test_a_log_with_nothing_readable_gives_no_steps(agent: str, tmp_path: Path) -> None:
    (tmp_path / "agent.stdout.log").write_text("not json\n{\"type\": \"unknown\"}\n[1, 2]\n")
    assert get_agent(agent).native_steps(tmp_path) is None


# Lines each client's parser reads, with a count that is no number or a field of the wrong
# kind: what an agent (or a client's bug) can print on the stdout its log is read from.
MALFORMED = [
    '{"type": "step_finish", "part": {"tokens": {"input": "many", "output": 1e999, "cache": {"read": [1]}}}}',
    '{"type": "agent_event", "event": {"type": "usage", "inputTokens": "x", "outputTokens": {}}}',
    '{"role": "assistant", "content": "x", "tool_calls": 5}',
    '{"type": "assistant", "message": "not an object"}',
    '{"type": "assistant", "message": {"id": "m0", "content": ["text"], "usage": {"input_tokens": "x"}}}',
    '{"type": "user", "message": {"content": ["not a block"]}}',
]


@pytest.mark.parametrize("agent", sorted(SHELL))
def test_a_malformed_line_is_skipped_not_the_whole_log(agent: str, tmp_path: Path) -> None:
    log = "\n".join(MALFORMED) + "\n" + (DATA / f"{agent}.native.jsonl").read_text()
    (tmp_path / "agent.stdout.log").write_text(log)
    steps = get_agent(agent).native_steps(tmp_path)
    assert steps is not None
    calls = [c for s in steps for c in s.tool_calls or []]
    assert [c.function_name for c in calls] == [SHELL[agent]]
    assert all(m is None or min(m.prompt_tokens or 0, m.completion_tokens or 0) >= 0
               for m in (s.metrics for s in steps))
