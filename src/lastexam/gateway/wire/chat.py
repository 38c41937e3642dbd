"""The OpenAI Chat Completions API (POST /v1/chat/completions), also spoken by OpenRouter
and local servers (vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from lastexam.gateway.models import Usage
from lastexam.gateway.wire.base import Reply, ToolDecl, Wire, WireRequest, args_json, new_id
from lastexam.gateway.wire.openai_common import openai_error, openai_usage


def _usage_json(u: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
    }


def _chunk(cid: str, model: str, created: int, choices: list, usage: Any = None) -> bytes:
    body: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created,
                            "model": model, "choices": choices}
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body, separators=(',', ':'))}\n\n".encode()


class ChatWire(Wire):
    name = "chat"
    max_output_fields = (("max_completion_tokens",), ("max_tokens",))

    def tools(self, req: WireRequest) -> list[ToolDecl]:
        out = []
        for t in req.body.get("tools") or []:
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(fn, dict) and "name" in fn:
                out.append(ToolDecl(fn["name"], (fn.get("parameters") or {}).get("properties") or {}))
        return out

    def with_model(self, req: WireRequest, model: str) -> tuple[str, dict[str, Any]]:
        body = {**req.body, "model": model}
        if body.get("stream"):
            # Without it a streamed answer carries no usage, and the call could not be counted.
            body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        return req.path, body

    def render(self, reply: Reply, model: str, stream: bool) -> Iterator[bytes]:
        cid, created = new_id("chatcmpl-"), int(time.time())
        calls = [
            {"id": c.call_id, "type": "function",
             "function": {"name": c.name, "arguments": args_json(c.arguments)}}
            for c in reply.tool_calls
        ]
        finish = "tool_calls" if calls else "stop"
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if reply.reasoning:
                message["reasoning_content"] = reply.reasoning
            if calls:
                message["tool_calls"] = calls
            yield json.dumps(
                {"id": cid, "object": "chat.completion", "created": created, "model": model,
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                 "usage": _usage_json(reply.usage)}
            ).encode()
            return
        yield _chunk(cid, model, created,
                     [{"index": 0, "delta": {"role": "assistant", "content": ""},
                       "finish_reason": None}])
        if reply.reasoning:
            yield _chunk(cid, model, created,
                         [{"index": 0, "delta": {"reasoning_content": reply.reasoning},
                           "finish_reason": None}])
        if reply.text:
            yield _chunk(cid, model, created,
                         [{"index": 0, "delta": {"content": reply.text}, "finish_reason": None}])
        for i, call in enumerate(calls):
            yield _chunk(cid, model, created,
                         [{"index": 0, "delta": {"tool_calls": [{"index": i, **call}]},
                           "finish_reason": None}])
        yield _chunk(cid, model, created, [{"index": 0, "delta": {}, "finish_reason": finish}])
        yield _chunk(cid, model, created, [], _usage_json(reply.usage))
        yield b"data: [DONE]\n\n"

    def usage_from_body(self, body: Any) -> Usage | None:
        if not isinstance(body, dict) or not isinstance(body.get("usage"), dict):
            return None
        return openai_usage(body["usage"], prompt_key="prompt_tokens", completion_key="completion_tokens")

    def usage_from_events(self, events: list[Any]) -> Usage | None:
        for e in reversed(events):
            if isinstance(e, dict) and isinstance(e.get("usage"), dict):
                return openai_usage(e["usage"], prompt_key="prompt_tokens", completion_key="completion_tokens")
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message)
