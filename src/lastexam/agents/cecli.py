"""cecli (aider-ce, the community fork of aider, `cecli --agent`: aider with an agent mode that
calls tools), one message, confirmations off, through the gateway's Chat Completions (LiteLLM's
`openai/` provider)."""

from __future__ import annotations

import json

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import GatewayAgent, openai_env, write_home_file
from lastexam.agents.pypi import PypiToolchain
from lastexam.layout import AgentSandbox

TOOLCHAIN = PypiToolchain("cecli", "cecli-dev", "1.10.0", "cecli.main:main", "cecli")
METADATA = ".cecli-models.json"
RETRY_TIMEOUT_S = 2
MODEL = "openai/lastexam-gateway"
MODEL_INFO = {"mode": "chat", "litellm_provider": "openai", "max_input_tokens": 200_000,
              "max_output_tokens": 32_000, "supports_function_calling": True}


class CecliAgent(GatewayAgent):
    name = "cecli"
    description = f"cecli (aider-ce) {TOOLCHAIN.version} (cecli --agent --message)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        # The model under a name its model database does not know, declared a Chat Completions
        # model: it would take the Responses API for some (the gateway answers with the trial's
        # model whatever the name).
        write_home_file(ctx.home, METADATA, json.dumps({MODEL: MODEL_INFO}))
        argv = TOOLCHAIN.command(
            "--agent", "--message", ctx.instruction, "--model", MODEL,
            "--model-metadata-file", f"{AgentSandbox.HOME}/{METADATA}",
            "--openai-api-base", f"{gw.base_url}/v1",
            "--yes-always", "--yes-always-commands", "--no-auto-commits", "--no-dirty-commits",
            "--no-check-update", "--analytics-disable", "--no-show-model-warnings",
            "--no-pretty", "--no-fancy-input", "--no-stream",
            # It retries every failed call, a refusal by the budget included, until its backoff
            # passes this many seconds (30 by default: minutes of refused calls).
            "--retries", json.dumps({"retry_timeout": RETRY_TIMEOUT_S}),
            *self.extra_args(ctx))
        # It keeps its state in .cecli/ of the working directory: HOME, as /task is read-only. It
        # runs commands in the root of its repository (without one, in a folder named "").
        in_home = ["/bin/sh", "-c", 'cd "$HOME" && git init -q . && exec "$@"', "cecli", *argv]
        env = {**openai_env(gw), "SHELL": "/bin/bash"}  # its Command tool runs $SHELL
        return AgentLaunch(argv=self.bridged(ctx, in_home), env=env, mounts=self.mounts())
