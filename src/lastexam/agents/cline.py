"""Cline CLI (`cline --json PROMPT`, act mode, tools auto-approved), through the gateway's
Chat Completions API as its `openai-compatible` provider."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, write_home_file
from lastexam.agents.npm import NpmToolchain
from lastexam.trajectory.schema import Step

# The platform binary (Bun inside) that the package's node launcher would find and run.
TOOLCHAIN = NpmToolchain("cline", "cline", "3.0.65", "@cline/cli-linux-x64/bin/cline",
                         min_node=0)
PROVIDER = "openai-compatible"
# What `cline auth -p openai -k KEY -m MODEL -b URL` writes, written before the start instead
# so that the token is in no command line. An entry without `updatedAt` is ignored, and
# --provider or --model on the command line replace the entry with one without key and URL:
# the provider and model are the file's.
PROVIDERS_FILE = ".cline/data/settings/providers.json"
OFFLINE_ENV = {
    "CLINE_NO_AUTO_UPDATE": "1",
    "CLINE_NO_INTERACTIVE": "1",
    # The session runs in the CLI's own process, not in a background hub daemon it would start.
    "CLINE_SESSION_BACKEND_MODE": "local",
}


class ClineAgent(GatewayAgent):
    name = "cline"
    description = f"Cline CLI {TOOLCHAIN.version} (cline --json, auto-approve)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        providers = {
            "version": 1,
            "lastUsedProvider": PROVIDER,
            "modes": {},
            "providers": {PROVIDER: {
                "settings": {"provider": PROVIDER, "apiKey": gw.token, "model": model,
                             "baseUrl": f"{gw.base_url}/v1"},
                "updatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),  # Z, no offset
                "tokenSource": "manual",
            }},
        }
        write_home_file(ctx.home, PROVIDERS_FILE, json.dumps(providers, indent=2))
        argv = [self.executable(), "--json", "--auto-approve", "true", *self.extra_args(ctx),
                ctx.instruction]
        env = {**QUIET_ENV, **OFFLINE_ENV}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native_clients import cline_steps

        return cline_steps(logs / "agent.stdout.log")
