"""Wire formats by name, and which one a request path speaks."""

from __future__ import annotations

from lastexam.gateway.wire.anthropic import AnthropicWire
from lastexam.gateway.wire.base import (
    Reply,
    SSEParser,
    ToolCall,
    Wire,
    WireError,
    WireRequest,
    estimate_tokens,
)
from lastexam.gateway.wire.chat import ChatWire
from lastexam.gateway.wire.gemini import PATH as GEMINI_PATH
from lastexam.gateway.wire.gemini import GeminiWire
from lastexam.gateway.wire.responses import ResponsesWire

WIRES: dict[str, Wire] = {w.name: w for w in (AnthropicWire(), ChatWire(), ResponsesWire(), GeminiWire())}


def wire_for_path(path: str) -> Wire | None:
    """The wire format a request path belongs to (a base URL may or may not end in /v1)."""
    if path in ("/v1/messages", "/messages", "/v1/messages/count_tokens"):
        return WIRES["anthropic"]
    if path in ("/v1/chat/completions", "/chat/completions"):
        return WIRES["chat"]
    if path in ("/v1/responses", "/responses"):
        return WIRES["responses"]
    if GEMINI_PATH.match(path):
        return WIRES["gemini"]
    return None


__all__ = [
    "WIRES",
    "Reply",
    "SSEParser",
    "ToolCall",
    "Wire",
    "WireError",
    "WireRequest",
    "estimate_tokens",
    "wire_for_path",
]
