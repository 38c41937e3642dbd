"""opencode (`opencode run --format json`), headless, through the gateway's Chat Completions
API as a custom OpenAI-compatible provider."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import QUIET_ENV, GatewayAgent, write_home_file
from lastexam.agents.npm import NpmToolchain
from lastexam.trajectory.schema import Step

# The package's launcher is replaced by the platform binary (opencode-linux-x64) at install.
TOOLCHAIN = NpmToolchain("opencode", "opencode-ai", "1.18.33", "opencode-ai/bin/opencode.exe",
                         place_binary="opencode-ai/postinstall.mjs")
PROVIDER = "lastexam"
TOKEN_VAR = "LASTEXAM_GATEWAY_TOKEN"
# Nothing fetched or installed at run time: no model list from models.dev, no default plugins
# (installed from npm on start), no language servers, no update, no sharing.
OFFLINE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
}


class OpencodeAgent(GatewayAgent):
    name = "opencode"
    description = f"opencode {TOOLCHAIN.version} (opencode run --format json)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": f"{PROVIDER}/{model}",
            "small_model": f"{PROVIDER}/{model}",
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow",
                           "external_directory": "allow"},
            "provider": {PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "lastexam gateway",
                "options": {"baseURL": f"{gw.base_url}/v1", "apiKey": f"{{env:{TOKEN_VAR}}}"},
                "models": {model: {"name": model, "tool_call": True}},
            }},
        }
        write_home_file(ctx.home, ".config/opencode/opencode.json", json.dumps(config, indent=2))
        argv = [self.executable(), "run", "--format", "json", "--auto",
                "--model", f"{PROVIDER}/{model}", *self.extra_args(ctx), ctx.instruction]
        env = {**QUIET_ENV, **OFFLINE_ENV, TOKEN_VAR: gw.token}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native_clients import opencode_steps

        return opencode_steps(logs / "agent.stdout.log")
