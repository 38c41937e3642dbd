"""Hermes Agent (`hermes -z`, one-shot mode: approvals bypassed, only the final answer printed),
through the gateway's Chat Completions as its `custom` provider (an OpenAI-compatible server
named in its config.yaml)."""

from __future__ import annotations

import json

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import GatewayAgent, openai_env, write_home_file
from lastexam.agents.pypi import PypiToolchain
from lastexam.layout import AgentSandbox

TOOLCHAIN = PypiToolchain("hermes-agent", "hermes-agent", "0.19.0", "hermes_cli.main:main", "hermes")
# Its tools that work offline in the sandbox (web, browser, vision and messaging need services).
TOOLSETS = "terminal,file,todo"
TOKEN_VAR = "LASTEXAM_GATEWAY_TOKEN"


class HermesAgent(GatewayAgent):
    name = "hermes-agent"
    description = f"Hermes Agent {TOOLCHAIN.version} (hermes -z, terminal and file tools)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"
    accepted_args = ("extra_args", "toolsets")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        # Its `custom` provider takes the server and key from config.yaml only (the key as a
        # reference to the variable, expanded when read). JSON is YAML.
        config = {"model": {"provider": "custom", "base_url": f"{gw.base_url}/v1", "default": model,
                            "api_key": "${" + TOKEN_VAR + "}"}}
        write_home_file(ctx.home, ".hermes/config.yaml", json.dumps(config, indent=2))
        argv = TOOLCHAIN.command(
            "-z", ctx.instruction, "--provider", "custom", "-m", model,
            "-t", ctx.args.get("toolsets") or TOOLSETS, "--yolo", *self.extra_args(ctx))
        env = {**openai_env(gw), "HERMES_HOME": f"{AgentSandbox.HOME}/.hermes",
               "HERMES_YOLO_MODE": "1", "HERMES_ACCEPT_HOOKS": "1", TOKEN_VAR: gw.token}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())
