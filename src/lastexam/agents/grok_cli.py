"""Grok CLI (`grok --prompt`, headless), through the gateway's Chat Completions API (its
OpenAI client with GROK_BASE_URL)."""

from __future__ import annotations

from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent
from lastexam.agents.npm import NpmToolchain
from lastexam.trajectory.schema import Step

TOOLCHAIN = NpmToolchain("grok-cli", "@vibe-kit/grok-cli", "0.0.34",
                         "@vibe-kit/grok-cli/dist/index.js", min_node=18)


class GrokCliAgent(GatewayAgent):
    name = "grok-cli"
    description = f"Grok CLI {TOOLCHAIN.version} (grok --prompt, messages as JSON lines)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "grok-code-fast-1"
    accepted_args = ("extra_args", "max_tool_rounds")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        # The key and base URL go by environment: given as options, they would be saved in
        # ~/.grok/user-settings.json.
        argv = ["/usr/bin/node", self.executable(), "--prompt", ctx.instruction,
                "--model", self.client_model(ctx),
                "--max-tool-rounds", ctx.args.get("max_tool_rounds", "400"),
                *self.extra_args(ctx)]
        env = {**QUIET_ENV, "GROK_API_KEY": gw.token, "GROK_BASE_URL": f"{gw.base_url}/v1"}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native_clients import grok_cli_steps

        return grok_cli_steps(logs / "agent.stdout.log")
