"""OpenAI Codex (`codex exec --json`), headless, through the gateway's Responses API."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import (
    COMPUTER_MCP,
    MCP_START_S,
    QUIET_ENV,
    GatewayAgent,
    write_home_file,
)
from lastexam.agents.npm import NpmToolchain
from lastexam.gateway.wire.base import COMPUTER_SERVER
from lastexam.layout import AgentSandbox
from lastexam.trajectory.schema import Step

TOOLCHAIN = NpmToolchain("codex", "@openai/codex", "0.171.0", "@openai/codex/bin/codex.js",
                         min_node=16)
TOKEN_VAR = "LASTEXAM_GATEWAY_TOKEN"


class CodexAgent(GatewayAgent):
    name = "codex"
    description = f"OpenAI Codex CLI {TOOLCHAIN.version} (codex exec --json)"
    wire = "responses"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"
    accepted_args = ("extra_args", "reasoning_effort")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        lines = [
            f"model = {json.dumps(model)}",
            'model_provider = "lastexam"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
        ]
        if ctx.args.get("reasoning_effort"):
            lines.append(f"model_reasoning_effort = {json.dumps(ctx.args['reasoning_effort'])}")
        lines += [
            "",
            "[model_providers.lastexam]",
            'name = "lastexam gateway"',
            f"base_url = {json.dumps(gw.base_url + '/v1')}",
            f'env_key = "{TOKEN_VAR}"',
            'wire_api = "responses"',
        ]
        if ctx.desktop:
            # Codex offers its tools in the namespace `mcp__computer`; it hands a server only
            # the variables named here; it waits for a required server before its first
            # request (an optional one gets a second). approval_policy "never" lets exec mode
            # call the tools.
            lines += [
                "",
                f"[mcp_servers.{COMPUTER_SERVER}]",
                f"command = {json.dumps(COMPUTER_MCP)}",
                "args = []",
                'env_vars = ["DISPLAY"]',
                "required = true",
                f"startup_timeout_sec = {MCP_START_S}",
                "tool_timeout_sec = 300",
            ]
        write_home_file(ctx.home, ".codex/config.toml", "\n".join(lines) + "\n")
        argv = [self.executable(), "exec", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", "--json", "--model", model,
                *self.extra_args(ctx), ctx.instruction]
        env = {**QUIET_ENV, "CODEX_HOME": f"{AgentSandbox.HOME}/.codex", TOKEN_VAR: gw.token}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native import codex_steps

        return codex_steps(logs / "agent.stdout.log")
