"""Factory Droid (`droid exec --output-format stream-json`), headless, through the gateway's
Chat Completions API as a bring-your-own-key custom model."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, write_home_file
from lastexam.agents.npm import NpmToolchain
from lastexam.trajectory.schema import Step

# The platform package itself: the registry here serves @factory/cli 0.225.1 only, whose
# binary package (same version) it does not have, and whose install script would download
# it; @factory/cli-linux-x64 0.225.2 is the droid binary, with no dependencies.
TOOLCHAIN = NpmToolchain("droid", "@factory/cli-linux-x64", "0.225.2",
                         "@factory/cli-linux-x64/bin/droid", min_node=0)
DISPLAY_NAME = "lastexam"
MODEL_ID = f"custom:{DISPLAY_NAME}-0"  # how droid names the first custom model of that name
OFFLINE_ENV = {
    "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false",
    "FACTORY_DISABLE_KEYRING": "1",
}


class DroidAgent(GatewayAgent):
    name = "droid"
    description = f"Factory Droid {TOOLCHAIN.version} (droid exec, stream-json)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        settings = {
            "customModels": [{
                "model": self.client_model(ctx),
                "displayName": DISPLAY_NAME,
                "baseUrl": f"{gw.base_url}/v1",
                "apiKey": gw.token,
                "provider": "generic-chat-completion-api",
                "maxOutputTokens": 16384,
            }],
            "model": MODEL_ID,
        }
        write_home_file(ctx.home, ".factory/settings.json", json.dumps(settings, indent=2))
        argv = [self.executable(), "exec", "--output-format", "stream-json",
                "--skip-permissions-unsafe", "--model", MODEL_ID, *self.extra_args(ctx),
                ctx.instruction]
        env = {**QUIET_ENV, **OFFLINE_ENV}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native_clients import droid_steps

        return droid_steps(logs / "agent.stdout.log")
