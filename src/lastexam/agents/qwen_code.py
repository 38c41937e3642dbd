"""Qwen Code (`qwen -p --output-format stream-json`), headless, through the gateway's Chat
Completions API (its `openai` auth type)."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, write_home_file
from lastexam.agents.npm import NpmToolchain
from lastexam.trajectory.schema import Step

# 0.15.10 is the newest release whose package accepts Node 20 (0.21.2 and later need Node 22).
TOOLCHAIN = NpmToolchain("qwen-code", "@qwen-code/qwen-code", "0.15.10",
                         "@qwen-code/qwen-code/cli.js", min_node=20)
SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "telemetry": {"enabled": False},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


class QwenCodeAgent(GatewayAgent):
    name = "qwen-code"
    description = f"Qwen Code {TOOLCHAIN.version} (qwen -p, stream-json)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "qwen3-coder-plus"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        write_home_file(ctx.home, ".qwen/settings.json", json.dumps(SETTINGS, indent=2))
        argv = ["/usr/bin/node", self.executable(), "-p", ctx.instruction,
                "--output-format", "stream-json", "--yolo", "--auth-type", "openai",
                "-m", model, *self.extra_args(ctx)]
        env = {**QUIET_ENV, "OPENAI_API_KEY": gw.token, "OPENAI_BASE_URL": f"{gw.base_url}/v1",
               "OPENAI_MODEL": model}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        # Its stream-json is Claude Code's (system, assistant, user and result events).
        from lastexam.trajectory.native import claude_code_steps

        return claude_code_steps(logs / "agent.stdout.log")
