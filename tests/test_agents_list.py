"""`lastexam agents list --json`: every registered agent with its name, version and wires."""

from __future__ import annotations

import json

from conftest import run_cli
from lastexam.agents import get_agent

NPM_HARNESSES = {"opencode": "1.18.33", "qwen-code": "0.15.10", "droid": "0.225.2",
                 "grok-cli": "0.0.34", "cline": "3.0.65"}


def test_list_json_names_versions_and_wires() -> None:
    agents = {a["name"]: a for a in json.loads(run_cli("agents", "list", "--json").stdout)["agents"]}
    assert {"oracle", "nop", "command", "claude-code", "codex", "gemini-cli",
            "lastexam-agent", *NPM_HARNESSES} <= set(agents)
    for name, version in NPM_HARNESSES.items():
        assert agents[name]["version"] == version
        assert agents[name]["wires"] == ["chat"]
    assert agents["claude-code"]["wires"] == ["anthropic"]
    assert agents["lastexam-agent"]["wires"] == ["anthropic", "chat"]
    assert agents["oracle"]["wires"] == []
    for name, entry in agents.items():
        assert entry["version"] == get_agent(name).version()
        assert isinstance(entry["missing"], list)
