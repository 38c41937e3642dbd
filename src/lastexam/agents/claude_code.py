"""Claude Code (`claude -p`), headless, through the gateway's Anthropic Messages API."""

from __future__ import annotations

import json
from pathlib import Path

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import MCP_START_S, QUIET_ENV, GatewayAgent, computer_server
from lastexam.agents.npm import NpmToolchain
from lastexam.gateway.wire.base import COMPUTER_SERVER
from lastexam.trajectory.schema import Step

# 2.1.197 is the newest release whose package accepts Node 20 (2.1.198+ require Node 22).
TOOLCHAIN = NpmToolchain("claude-code", "@anthropic-ai/claude-code", "2.1.197",
                         "@anthropic-ai/claude-code/bin/claude.exe", min_node=18,
                         place_binary="@anthropic-ai/claude-code/install.cjs")


class ClaudeCodeAgent(GatewayAgent):
    name = "claude-code"
    description = f"Claude Code {TOOLCHAIN.version} (claude -p, stream-json)"
    wire = "anthropic"
    toolchain = TOOLCHAIN
    default_model = "claude-sonnet-4-5"
    accepted_args = ("extra_args", "max_turns")

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        model = self.client_model(ctx)
        argv = [self.executable(), "-p", ctx.instruction, "--output-format", "stream-json",
                "--verbose", "--dangerously-skip-permissions", "--model", model]
        if ctx.args.get("max_turns"):
            argv += ["--max-turns", ctx.args["max_turns"]]
        if ctx.desktop:
            # Its tools are `mcp__computer__<action>`; both options take several values, hence
            # the `=` form.
            servers = {n: {"type": "stdio", **v} for n, v in computer_server().items()}
            argv += [f"--mcp-config={json.dumps({'mcpServers': servers})}", "--strict-mcp-config",
                     f"--allowedTools=mcp__{COMPUTER_SERVER}"]
        env = {
            **QUIET_ENV,
            "ANTHROPIC_BASE_URL": gw.base_url,
            "ANTHROPIC_API_KEY": gw.token,
            # Side requests (titles, summaries) go to the model under test as well.
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
        }
        if ctx.desktop:
            env["ENABLE_TOOL_SEARCH"] = "false"  # every MCP tool in every request, none deferred
            # The first request waits for the server (it is sent without it otherwise).
            env["MCP_CONNECTION_NONBLOCKING"] = "false"
            env["MCP_TIMEOUT"] = str(MCP_START_S * 1000)
        return AgentLaunch(argv=self.bridged(ctx, argv + self.extra_args(ctx)), env=env,
                           mounts=self.mounts())

    def native_steps(self, logs: Path) -> list[Step] | None:
        from lastexam.trajectory.native import claude_code_steps

        return claude_code_steps(logs / "agent.stdout.log")
