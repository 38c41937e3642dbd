"""gptme (`gptme --non-interactive`, confirmations off), with its tools called natively
(`--tool-format tool`), through the gateway's Chat Completions as its `local` provider (an
OpenAI-compatible server named by OPENAI_BASE_URL)."""

from __future__ import annotations

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import GatewayAgent, openai_env
from lastexam.agents.pypi import PypiToolchain
from lastexam.layout import AgentSandbox

TOOLCHAIN = PypiToolchain("gptme", "gptme", "0.35.1", "gptme.cli.main:main", "gptme")
# Its tools that work offline in the sandbox (browser, vision, rag and the like need services).
TOOLS = "shell,save,append,patch,read"


class GptmeAgent(GatewayAgent):
    name = "gptme"
    description = f"gptme {TOOLCHAIN.version} (gptme -n, native tool calls)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"
    accepted_args = ("extra_args", "tools")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        argv = TOOLCHAIN.command(
            "--non-interactive", "--no-confirm", "--tool-format", "tool",
            "-m", f"local/{self.client_model(ctx)}", "-t", ctx.args.get("tools") or TOOLS,
            "-w", AgentSandbox.TASK, *self.extra_args(ctx), ctx.instruction)
        env = {**openai_env(gw), "GPTME_TELEMETRY_ENABLED": "false"}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())
