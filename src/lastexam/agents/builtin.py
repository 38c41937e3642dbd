"""The calibration agents (oracle, nop) and the `command` agent."""

from __future__ import annotations

from lastexam.agents.base import Agent, AgentContext, AgentLaunch
from lastexam.errors import LastexamError
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox
from lastexam.sandbox.base import Mount


class OracleAgent(Agent):
    name = "oracle"
    description = "runs the task's solution/solve.sh (calibration: must score 1.0)"
    sees_solution = True
    calibration = True

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        if ctx.solution_dir is None:
            raise LastexamError(f"task {ctx.task_id} has no solution/ for the oracle")
        return AgentLaunch(
            argv=["/bin/bash", f"{AgentSandbox.ORACLE}/solve.sh"],
            mounts=[Mount(ctx.solution_dir, AgentSandbox.ORACLE)],
        )


class NopAgent(Agent):
    name = "nop"
    description = "does nothing (calibration: must score 0)"
    calibration = True

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        return AgentLaunch(argv=["/bin/true"])


class CommandAgent(Agent):
    name = "command"
    description = "runs --agent-arg cmd=SHELL with sh -c in the sandbox"
    accepted_args = ("cmd",)

    def check_args(self, model: ModelSpec | None, args: dict[str, str]) -> None:
        super().check_args(model, args)
        if not args.get("cmd"):
            raise LastexamError("agent 'command' needs --agent-arg cmd='SHELL COMMAND'")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        return AgentLaunch(
            argv=["/bin/sh", "-c", ctx.args["cmd"]],
            env={"LASTEXAM_INSTRUCTION": ctx.instruction},
        )
