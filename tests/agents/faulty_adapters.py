"""Adapters that each break one conformance rule, for tests/agents/test_conformance.py (loaded
as `faulty_adapters:Class`). Each wraps the reference agent, which needs no install."""

from __future__ import annotations

import os
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.lastexam_agent import LastexamAgent
from lastexam.trajectory.schema import Step

SUM = ("awk -F, 'NR > 1 { s += $1; n++ } END { printf \"{\\\"total\\\": %.6f, \\\"count\\\": %d}\\n\", s, n }' "
       "/task/inputs/data.csv > /task/output/result.json")


def before(first: str, launch: AgentLaunch) -> AgentLaunch:
    """The launch with a shell command run before the agent starts."""
    launch.argv = ["/bin/sh", "-c", f'{first}; exec "$@"', "sh", *launch.argv]
    return launch


class LeakyAgent(LastexamAgent):
    """Writes its environment (the gateway token with it) into the task's outputs."""

    name = "faulty-leaky"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        return before("env > /task/output/env.txt", super().launch(ctx))


class StepLosingAgent(LastexamAgent):
    """Reports no steps from its native log."""

    name = "faulty-steps"

    def native_steps(self, logs: Path) -> list[Step] | None:
        return []


class LogLosingAgent(LastexamAgent):
    """Reads a native log, but its converter cannot read it (the gateway log stands in)."""

    name = "faulty-log"

    def native_steps(self, logs: Path) -> list[Step] | None:
        return None


class SoloAgent(LastexamAgent):
    """Solves the test task by itself before the model says anything."""

    name = "faulty-solo"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        return before(SUM, super().launch(ctx))


class MuteAgent(LastexamAgent):
    """Never calls the model."""

    name = "faulty-mute"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        return AgentLaunch(argv=["/bin/true"])


class KeyPassingAgent(LastexamAgent):
    """Hands the host's OpenAI key to its sandbox, which writes it into the task's outputs."""

    name = "faulty-key"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        launch = super().launch(ctx)
        launch.env["HOST_KEY"] = os.environ.get("OPENAI_API_KEY", "")
        return before('echo "$HOST_KEY" > /task/output/key.txt', launch)
