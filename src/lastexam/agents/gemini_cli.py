"""Gemini CLI (`gemini -p --output-format stream-json`), headless, through the gateway's
Gemini API."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, computer_server, write_home_file
from lastexam.agents.npm import NpmToolchain
from lastexam.layout import AgentSandbox
from lastexam.trajectory.schema import Step

TOOLCHAIN = NpmToolchain("gemini-cli", "@google/gemini-cli", "0.61.0",
                         "@google/gemini-cli/bundle/gemini.js", min_node=20)
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "telemetry": {"enabled": False},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}
DISPLAY_RC = ".gemini/lastexam-display.sh"


class GeminiCliAgent(GatewayAgent):
    name = "gemini-cli"
    description = f"Gemini CLI {TOOLCHAIN.version} (gemini -p, stream-json)"
    wire = "gemini"
    toolchain = TOOLCHAIN
    default_model = "gemini-2.5-pro"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        settings: dict[str, object] = dict(SETTINGS)
        env = {**QUIET_ENV, "GEMINI_API_KEY": gw.token, "GOOGLE_GEMINI_BASE_URL": gw.base_url}
        if ctx.desktop:
            # Its tools are `mcp_computer_<action>`; a trusted server's calls are never confirmed.
            settings["mcpServers"] = {n: {**v, "trust": True}
                                      for n, v in computer_server().items()}
            # Its shell tool runs every command with DISPLAY emptied (against GUI prompts):
            # bash reads BASH_ENV first, which gives the desktop's display back, so that an
            # application can be started by a command as with the other clients.
            rc = f'export DISPLAY="${{DISPLAY:-{AgentSandbox.DISPLAY}}}"\n'
            write_home_file(ctx.home, DISPLAY_RC, rc)
            env["BASH_ENV"] = f"{AgentSandbox.HOME}/{DISPLAY_RC}"
        write_home_file(ctx.home, ".gemini/settings.json", json.dumps(settings, indent=2))
        argv = ["/usr/bin/node", self.executable(), "-p", ctx.instruction,
                "--output-format", "stream-json", "--yolo", "--skip-trust",
                "-m", self.client_model(ctx), *self.extra_args(ctx)]
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native import gemini_cli_steps

        return gemini_cli_steps(logs / "agent.stdout.log")
