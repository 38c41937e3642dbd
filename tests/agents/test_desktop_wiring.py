"""In a desktop trial each npm client is given the computer-use MCP server through its own
configuration (nothing when the trial has no desktop). The names the clients then give the
tools were read from the real clients (tests/agents/data/*.computer.jsonl, recorded from
these launches with a stand-in server): see tests/gateway/test_scripted_computer.py."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from lastexam.agents import get_agent
from lastexam.agents.base import AgentContext, GatewayAccess
from lastexam.agents.harness import COMPUTER_MCP

GATEWAY = GatewayAccess(socket="/run/lastexam/gateway/g.sock", token="tok", model="scripted:x",
                        model_id="")


def launch(agent: str, home: Path, desktop: bool):
    ctx = AgentContext(task_id="t", instruction="do it", model=None, args={}, timeout_s=60,
                       solution_dir=None, home=home, logs=home, gateway=GATEWAY, desktop=desktop)
    return get_agent(agent).launch(ctx)


def _option(argv: list[str], name: str) -> str | None:
    values = [a.split("=", 1)[1] for a in argv if a.startswith(f"{name}=")]
    assert len(values) <= 1
    return values[0] if values else None


def test_claude_code_gets_the_server_and_its_permission(tmp_path: Path) -> None:
    out = launch("claude-code", tmp_path, desktop=True)
    config = json.loads(_option(out.argv, "--mcp-config") or "{}")
    assert config == {"mcpServers": {"computer": {"type": "stdio", "command": COMPUTER_MCP,
                                                   "args": []}}}
    assert "--strict-mcp-config" in out.argv
    assert _option(out.argv, "--allowedTools") == "mcp__computer"
    # Claude Code defers MCP tools behind a search tool unless told not to.
    assert out.env["ENABLE_TOOL_SEARCH"] == "false"
    # ... and sends its first request before a slow server is up unless told to wait.
    assert out.env["MCP_CONNECTION_NONBLOCKING"] == "false"
    # The instruction is still the prompt, after -p, and no value is left dangling.
    assert out.argv[out.argv.index("-p") + 1] == "do it"


def test_codex_gets_the_server_in_its_config(tmp_path: Path) -> None:
    out = launch("codex", tmp_path, desktop=True)
    config = tomllib.loads((tmp_path / ".codex" / "config.toml").read_text())
    server = config["mcp_servers"]["computer"]
    assert server["command"] == COMPUTER_MCP and server["args"] == []
    assert server["env_vars"] == ["DISPLAY"]  # Codex passes a server no other variable
    assert server["required"] is True  # else its first request goes without a slow server
    assert config["approval_policy"] == "never"
    assert config["model_providers"]["lastexam"]["wire_api"] == "responses"
    assert out.env["CODEX_HOME"] == "/home/agent/.codex"


def test_gemini_cli_gets_a_trusted_server_in_its_settings(tmp_path: Path) -> None:
    launch("gemini-cli", tmp_path, desktop=True)
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"] == {"computer": {"command": COMPUTER_MCP, "args": [],
                                                   "trust": True}}
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_no_server_without_a_desktop(agent: str, tmp_path: Path) -> None:
    out = launch(agent, tmp_path, desktop=False)
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert "computer" not in " ".join(out.argv) + written
    assert "ENABLE_TOOL_SEARCH" not in out.env


def test_gemini_cli_shell_gets_the_display_back(tmp_path: Path) -> None:
    """Gemini CLI empties DISPLAY in every shell command; bash's BASH_ENV restores it."""
    import subprocess

    out = launch("gemini-cli", tmp_path, desktop=True)
    rc = out.env["BASH_ENV"].removeprefix("/home/agent/")
    script = tmp_path / rc
    env = {"PATH": "/usr/bin:/bin", "BASH_ENV": str(script)}
    shown = subprocess.run(["bash", "-c", 'sh -c "echo $DISPLAY"'], env={**env, "DISPLAY": ""},
                           capture_output=True, text=True, check=True).stdout
    assert shown.strip() == ":0"
    kept = subprocess.run(["bash", "-c", "echo $DISPLAY"], env={**env, "DISPLAY": ":7"},
                          capture_output=True, text=True, check=True).stdout
    assert kept.strip() == ":7"
