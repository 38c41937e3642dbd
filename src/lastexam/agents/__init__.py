"""Agent adapters, looked up by name (see registry.py for where they come from)."""

from __future__ import annotations

from lastexam.agents.base import Agent, AgentContext, AgentLaunch
from lastexam.agents.registry import agent_class, registered


def get_agent(name: str) -> Agent:
    """A registered agent by name, or an outside one given as `module:Class`."""
    return agent_class(name)()


def all_agents() -> list[Agent]:
    return [cls() for cls in registered()]


__all__ = ["Agent", "AgentContext", "AgentLaunch", "all_agents", "get_agent"]
