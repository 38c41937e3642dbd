"""Qwen Code (`qwen -p --output-format stream-json`), headless, through the gateway's Chat
Completions API (its `openai` auth type)."""

from __future__ import annotations

import json

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, write_home_file
from lastexam.agents.npm import NpmToolchain

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
