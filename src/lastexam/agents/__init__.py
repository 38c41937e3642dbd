"""Agent adapters, looked up by name."""

from __future__ import annotations

from lastexam.agents.base import Agent, AgentContext, AgentLaunch
from lastexam.agents.builtin import CommandAgent, NopAgent, OracleAgent
from lastexam.agents.claude_code import ClaudeCodeAgent
from lastexam.agents.codex import CodexAgent
from lastexam.agents.gemini_cli import GeminiCliAgent
from lastexam.agents.lastexam_agent import LastexamAgent
from lastexam.errors import LastexamError

_AGENTS: dict[str, type[Agent]] = {
    a.name: a
    for a in (OracleAgent, NopAgent, CommandAgent, ClaudeCodeAgent, CodexAgent, GeminiCliAgent,
              LastexamAgent)
}


def register(cls: type[Agent]) -> type[Agent]:
    _AGENTS[cls.name] = cls
    return cls


def get_agent(name: str) -> Agent:
    try:
        return _AGENTS[name]()
    except KeyError:
        raise LastexamError(f"unknown agent {name!r} (known: {', '.join(sorted(_AGENTS))})") from None


def all_agents() -> list[Agent]:
    return [cls() for cls in _AGENTS.values()]


__all__ = ["Agent", "AgentContext", "AgentLaunch", "all_agents", "get_agent", "register"]
