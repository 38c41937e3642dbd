"""Where agents come from: the entry-point group `lastexam.agents` (lastexam's own agents are
declared there in pyproject.toml, like any other package's), or `module:Class` named on the
command line for an agent that no installed package declares."""

from __future__ import annotations

import importlib
import os
import re
import sys
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from lastexam.agents.base import Agent
from lastexam.errors import LastexamError

GROUP = "lastexam.agents"
# Declared by lastexam itself: their absence means its installed metadata is out of date.
BUILTIN = ("oracle", "nop", "command", "claude-code", "codex", "gemini-cli", "lastexam-agent")
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,47}")


def is_reference(name: str) -> bool:
    """`module:Class` rather than a registered name."""
    return ":" in name


@cache
def declared() -> dict[str, EntryPoint]:
    """Registered agent names -> their entry points."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        other = found.setdefault(ep.name, ep)
        if other.value != ep.value:
            raise LastexamError(
                f"agent {ep.name!r} is declared twice in the {GROUP!r} entry points: "
                f"{other.value} and {ep.value}"
            )
    absent = [n for n in BUILTIN if n not in found]
    if absent:
        raise LastexamError(
            f"lastexam's installed metadata does not declare its agents {absent}: reinstall "
            "lastexam (pip install -e .) so that its entry points are current"
        )
    return found


def agent_class(name: str) -> type[Agent]:
    """The class of the agent `name`: a registered name, or `module:Class`."""
    if is_reference(name):
        cls = _import(name)
        ep = declared().get(cls.name)
        if ep is not None and _load(ep) is not cls:
            raise LastexamError(
                f"agent {name!r} is named {cls.name!r}, the name of the registered agent "
                f"{ep.value}: give it another `name`"
            )
        return cls
    ep = declared().get(name)
    if ep is None:
        known = ", ".join(sorted(declared()))
        raise LastexamError(f"unknown agent {name!r} (known: {known}; or give module:Class)")
    cls = _load(ep)
    if cls.name != name:
        raise LastexamError(
            f"entry point {name} = {ep.value} (group {GROUP}) loads an agent named "
            f"{cls.name!r}: the two names must be the same"
        )
    return cls


def registered() -> list[type[Agent]]:
    """Every registered agent: lastexam's own first, in the order of BUILTIN."""
    names = sorted(declared(), key=lambda n: (BUILTIN.index(n) if n in BUILTIN else len(BUILTIN), n))
    return [agent_class(name) for name in names]


@cache
def _load(ep: EntryPoint) -> type[Agent]:
    return _import(ep.value)


def _import(ref: str) -> type[Agent]:
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise LastexamError(f"agent {ref!r}: expected module:Class, e.g. my_agents:MyAgent")
    if os.getcwd() not in sys.path:  # as `python -m` would: the working directory, last
        sys.path.append(os.getcwd())
    try:
        obj: object = importlib.import_module(module)
    except ImportError as e:
        raise LastexamError(f"agent {ref!r}: cannot import {module}: {e}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LastexamError(f"agent {ref!r}: {module} has no {attr}") from None
    if not (isinstance(obj, type) and issubclass(obj, Agent)):
        raise LastexamError(f"agent {ref!r}: not a subclass of lastexam.agents.Agent")
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise LastexamError(
            f"agent {ref!r}: its `name` ({name!r}) must be 1-48 of a-z 0-9 . _ -, starting "
            "with a letter or digit (it names trial folders)"
        )
    return obj
