"""lastexam-agent: the reference tool-loop agent (bash, read, write and edit file tools).

It runs inside the sandbox with the task environment's python3 and the standard library
only, and talks to the gateway's unix socket directly (no bridge): the Anthropic Messages
API for Anthropic models, Chat Completions for every other provider.
"""

from __future__ import annotations

from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import GatewayAgent
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox
from lastexam.trajectory.schema import Step

SCRIPT = f"{AgentSandbox.FILES}/lastexam_agent.py"


class LastexamAgent(GatewayAgent):
    name = "lastexam-agent"
    description = "lastexam's reference tool-loop agent (bash, read, write, edit)"
    default_model = "reference-model"
    accepted_args = ("max_steps", "max_output_tokens", "api")

    @property
    def uses_bridge(self) -> bool:
        return False

    def wire_for(self, model: ModelSpec | None) -> str | None:
        if model is not None and model.provider == "anthropic":
            return "anthropic"
        return "chat"

    def wires(self) -> tuple[str, ...]:
        return ("anthropic", "chat")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        api = ctx.args.get("api") or self.wire_for(ctx.model)
        argv = ["python3", SCRIPT, "--socket", gw.socket, "--api", str(api),
                "--model", self.client_model(ctx),
                "--max-steps", ctx.args.get("max_steps", "100"),
                "--max-output-tokens", ctx.args.get("max_output_tokens", "16000")]
        env = {"LASTEXAM_GATEWAY_TOKEN": gw.token, "LASTEXAM_INSTRUCTION": ctx.instruction,
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        return AgentLaunch(argv=argv, env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native import lastexam_agent_steps

        return lastexam_agent_steps(logs / "agent.stdout.log")
