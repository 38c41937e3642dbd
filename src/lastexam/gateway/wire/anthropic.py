"""The Anthropic Messages API (POST /v1/messages)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lastexam.gateway.models import Usage
from lastexam.gateway.wire.base import (
    Reply,
    ToolDecl,
    Wire,
    WireRequest,
    args_json,
    new_id,
    sse,
)


def _usage_json(u: Usage) -> dict[str, Any]:
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": u.cache_write_tokens - u.cache_write_1h_tokens,
            "ephemeral_1h_input_tokens": u.cache_write_1h_tokens,
        },
    }


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": "scripted"})
    if reply.text or not reply.tool_calls:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": "toolu_" + call.call_id, "name": call.name,
             "input": call.arguments}
        )
    return blocks


class AnthropicWire(Wire):
    name = "anthropic"
    key_header = "x-api-key"
    key_prefix = ""

    def is_model_call(self, req: WireRequest) -> bool:
        return not req.path.endswith("/count_tokens")

    def tools(self, req: WireRequest) -> list[ToolDecl]:
        return [
            ToolDecl(t["name"], (t.get("input_schema") or {}).get("properties") or {})
            for t in req.body.get("tools") or []
            if isinstance(t, dict) and "name" in t
        ]

    def render(self, reply: Reply, model: str, stream: bool) -> Iterator[bytes]:
        blocks = _blocks(reply)
        stop = "tool_use" if reply.tool_calls else "end_turn"
        msg_id = new_id("msg_")
        if not stream:
            yield json.dumps(
                {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                 "content": blocks, "stop_reason": stop, "stop_sequence": None,
                 "usage": _usage_json(reply.usage)}
            ).encode()
            return
        start_usage = _usage_json(reply.usage.model_copy(update={"output_tokens": 1}))
        yield sse(
            {"type": "message_start",
             "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                         "content": [], "stop_reason": None, "stop_sequence": None,
                         "usage": start_usage}},
            "message_start",
        )
        for i, block in enumerate(blocks):
            kind = block["type"]
            empty = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                     "text": {"type": "text", "text": ""},
                     "tool_use": {**block, "input": {}}}[kind]
            yield sse({"type": "content_block_start", "index": i, "content_block": empty},
                      "content_block_start")
            if kind == "thinking":
                deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                          {"type": "signature_delta", "signature": block["signature"]}]
            elif kind == "text":
                deltas = [{"type": "text_delta", "text": block["text"]}] if block["text"] else []
            else:
                deltas = [{"type": "input_json_delta", "partial_json": args_json(block["input"])}]
            for d in deltas:
                yield sse({"type": "content_block_delta", "index": i, "delta": d},
                          "content_block_delta")
            yield sse({"type": "content_block_stop", "index": i}, "content_block_stop")
        yield sse(
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": reply.usage.output_tokens}},
            "message_delta",
        )
        yield sse({"type": "message_stop"}, "message_stop")

    def usage_from_body(self, body: Any) -> Usage | None:
        if not isinstance(body, dict) or not isinstance(body.get("usage"), dict):
            return None
        return _usage(body["usage"])

    def usage_from_events(self, events: list[Any]) -> Usage | None:
        found: dict[str, Any] = {}
        for e in events:
            if not isinstance(e, dict):
                continue
            if e.get("type") == "message_start":
                found.update((e.get("message") or {}).get("usage") or {})
            elif e.get("type") == "message_delta":
                # message_delta's counts are cumulative for the message.
                found.update({k: v for k, v in (e.get("usage") or {}).items() if v is not None})
        return _usage(found) if found else None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 401: "authentication_error",
                404: "not_found_error", 429: "rate_limit_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


def _usage(u: dict[str, Any]) -> Usage:
    written = int(u.get("cache_creation_input_tokens") or 0)
    ttl = u.get("cache_creation") if isinstance(u.get("cache_creation"), dict) else {}
    return Usage(
        input_tokens=int(u.get("input_tokens") or 0),
        output_tokens=int(u.get("output_tokens") or 0),
        cache_read_tokens=int(u.get("cache_read_input_tokens") or 0),
        cache_write_tokens=written,
        cache_write_1h_tokens=max(0, min(written, int(ttl.get("ephemeral_1h_input_tokens") or 0))),
    )
