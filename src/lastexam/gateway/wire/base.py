"""What every wire format (API dialect) provides to the gateway.

A wire format knows how to read a client's request (is it streamed, which tools does it
declare, which model does it name), how to render a reply the gateway composes itself (the
scripted upstream and errors) in that dialect, streamed or not, and how to read token usage
from a provider's answer, whole or as server-sent events.
"""

from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lastexam.gateway.models import Usage

# Shell tools of the known clients: tool name -> the argument holding the command line.
SHELL_TOOLS: dict[str, str] = {
    "Bash": "command",  # Claude Code
    "exec_command": "cmd",  # Codex
    "run_shell_command": "command",  # Gemini CLI
    "bash": "command",  # lastexam-agent
    "shell": "command",
    "run_commands": "commands",  # Cline CLI: a list of commands
    "terminal": "command",  # Hermes Agent
    "local--Command": "command",  # cecli (aider-ce)
}


# The MCP server of computer use, as every client's configuration names it, and how the
# clients name its tools in their requests: Claude Code `mcp__computer__click`, Gemini CLI
# `mcp_computer_click`, Codex `click` in the namespace `mcp__computer`, lastexam-agent `click`.
COMPUTER_SERVER = "computer"
COMPUTER_PREFIXES = (f"mcp__{COMPUTER_SERVER}__", f"mcp_{COMPUTER_SERVER}_")
COMPUTER_NAMESPACE = f"mcp__{COMPUTER_SERVER}"


def computer_tool_names(action: str) -> list[tuple[str, str | None]]:
    """(tool name, namespace) under which a client may offer the computer server's tool
    `action`, most specific first (a plain `action` last)."""
    claude, gemini = (p + action for p in COMPUTER_PREFIXES)
    return [(claude, None), (action, COMPUTER_NAMESPACE), (gemini, None), (action, None)]


@dataclass(frozen=True)
class ToolDecl:
    name: str
    properties: dict[str, Any]
    namespace: str | None = None  # the group a tool is declared in (Responses namespaces)


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: "call_" + secrets.token_hex(8))
    namespace: str | None = None


@dataclass
class Reply:
    """A model answer composed by the gateway: optional reasoning, then text or tool calls."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass
class WireRequest:
    path: str  # without the query string
    query: dict[str, str]
    body: dict[str, Any]
    size: int  # bytes of the body as received


class WireError(Exception):
    """The client's request is not valid for its wire format."""


def new_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(12)}"


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class SSEParser:
    """Feeds on raw bytes of an event stream; collects each event's JSON payload."""

    def __init__(self) -> None:
        self._buf = b""
        self.events: list[Any] = []

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        while True:
            cut = _event_end(self._buf)
            if cut is None:
                return
            block, self._buf = self._buf[: cut[0]], self._buf[cut[1] :]
            self._parse(block)

    def close(self) -> None:
        if self._buf.strip():
            self._parse(self._buf)
        self._buf = b""

    def _parse(self, block: bytes) -> None:
        data = [
            line[5:].lstrip()
            for line in block.decode("utf-8", errors="replace").splitlines()
            if line.startswith("data:")
        ]
        if not data:
            return
        text = "\n".join(data)
        if text == "[DONE]":
            return
        try:
            self.events.append(json.loads(text))
        except ValueError:
            self.events.append({"unparsed": text[:2000]})


def _event_end(buf: bytes) -> tuple[int, int] | None:
    best = None
    for sep in (b"\r\n\r\n", b"\n\n", b"\r\r"):
        i = buf.find(sep)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, i + len(sep))
    return best


class Wire(ABC):
    name: str
    # Header a provider speaking this wire expects the key in, and how it is written.
    key_header: str = "authorization"
    key_prefix: str = "Bearer "

    def is_stream(self, req: WireRequest) -> bool:
        """The JSON APIs (Anthropic, Chat Completions, Responses) say so in the body."""
        return bool(req.body.get("stream"))

    def requested_model(self, req: WireRequest) -> str:
        return str(req.body.get("model", ""))

    @abstractmethod
    def tools(self, req: WireRequest) -> list[ToolDecl]: ...

    @abstractmethod
    def render(self, reply: Reply, model: str, stream: bool) -> Iterator[bytes]:
        """The reply as a JSON body (one chunk) or as server-sent events."""

    @abstractmethod
    def usage_from_body(self, body: Any) -> Usage | None: ...

    @abstractmethod
    def usage_from_events(self, events: list[Any]) -> Usage | None: ...

    @abstractmethod
    def error_body(self, status: int, message: str) -> dict[str, Any]: ...

    def is_model_call(self, req: WireRequest) -> bool:
        """False for requests that only count tokens."""
        return True

    # The body fields that limit the answer's output, as paths of keys.
    max_output_fields: tuple[tuple[str, ...], ...] = (("max_tokens",),)
    # The body fields that ask for several answers to one request, each billed.
    answers_fields: tuple[tuple[str, ...], ...] = ()

    def upper_bound(self, req: WireRequest) -> Usage:
        """The most a provider can bill for this request: its input estimated from the body's
        size, its output at the largest limit the client set (DEFAULT_MAX_OUTPUT if none),
        for each answer it asked for."""
        limit = _largest(req.body, self.max_output_fields) or DEFAULT_MAX_OUTPUT
        answers = _largest(req.body, self.answers_fields) or 1
        return Usage(input_tokens=-(-req.size // BYTES_PER_TOKEN_BOUND),
                     output_tokens=limit * answers)

    def with_model(self, req: WireRequest, model: str) -> tuple[str, dict[str, Any]]:
        """Path and body to send upstream so that `model` answers."""
        return req.path, {**req.body, "model": model}

    def computer_tool(self, req: WireRequest, action: str) -> ToolDecl | None:
        """The tool the client declared for the computer server's `action`, if any."""
        declared = {(d.name, d.namespace): d for d in self.tools(req)}
        for key in computer_tool_names(action):
            if key in declared:
                return declared[key]
        return None

    def shell_tool(self, req: WireRequest) -> tuple[str, str] | None:
        """(tool name, command argument) of the shell tool the client declared, if any."""
        decls = [d for d in self.tools(req) if d.namespace is None]
        for d in decls:
            if d.name in SHELL_TOOLS:
                return d.name, SHELL_TOOLS[d.name]
        for d in decls:
            lowered = d.name.lower()
            if any(w in lowered for w in ("shell", "bash", "exec")):
                for arg in ("command", "cmd"):
                    if d.properties.get(arg, {}).get("type") == "string":
                        return d.name, arg
        return None

    def shell_call(self, req: WireRequest, command: str) -> ToolCall | None:
        """A call of the client's shell tool running `command` (in a one-item list when the
        tool takes a list of commands), if it declared one."""
        found = self.shell_tool(req)
        if found is None:
            return None
        name, arg = found
        props = next(d.properties for d in self.tools(req) if d.name == name and d.namespace is None)
        value: Any = [command] if props.get(arg, {}).get("type") == "array" else command
        return ToolCall(name, {arg: value})


# An upper-bound estimate of a body's tokens: JSON text rarely packs a token in under two
# bytes (quotes, keys and escapes count as bytes, not tokens).
BYTES_PER_TOKEN_BOUND = 2
# The output bound of a request that sets no limit of its own.
DEFAULT_MAX_OUTPUT = 32_768


def _largest(body: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> int:
    """The largest positive number at these paths of keys in the body (0 if none)."""
    found = [0]
    for path in paths:
        value: Any = body
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            found.append(int(value))
    return max(found)


def estimate_tokens(n_bytes: int) -> int:
    """The scripted upstream's stand-in for a tokenizer: about four bytes a token."""
    return max(1, n_bytes // 4)


def args_json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, separators=(",", ":"))
