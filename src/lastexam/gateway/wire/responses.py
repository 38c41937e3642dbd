"""The OpenAI Responses API (POST /v1/responses), spoken by Codex."""

from __future__ import annotations

import json
import time
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
from lastexam.gateway.wire.openai_common import openai_error, openai_usage


def _usage_json(u: Usage) -> dict[str, Any]:
    return {
        "input_tokens": u.prompt_tokens,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        "total_tokens": u.total_tokens,
    }


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        items.append({"type": "reasoning", "id": new_id("rs_"),
                      "summary": [{"type": "summary_text", "text": reply.reasoning}]})
    if reply.text or not reply.tool_calls:
        items.append({"type": "message", "id": new_id("msg_"), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
    for call in reply.tool_calls:
        item = {"type": "function_call", "id": new_id("fc_"), "call_id": call.call_id,
                "name": call.name, "arguments": args_json(call.arguments), "status": "completed"}
        if call.namespace:
            item["namespace"] = call.namespace
        items.append(item)
    return items


def _functions(tools: Any, namespace: str | None = None) -> list[ToolDecl]:
    out = []
    for t in tools if isinstance(tools, list) else []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "function" and "name" in t:
            props = (t.get("parameters") or {}).get("properties") or {}
            out.append(ToolDecl(t["name"], props, namespace))
        elif t.get("type") == "namespace" and namespace is None and isinstance(t.get("name"), str):
            # Codex groups each MCP server's tools in a namespace named `mcp__<server>`.
            out += _functions(t.get("tools"), t["name"])
    return out


class ResponsesWire(Wire):
    name = "responses"
    max_output_fields = (("max_output_tokens",),)

    def tools(self, req: WireRequest) -> list[ToolDecl]:
        return _functions(req.body.get("tools"))

    def render(self, reply: Reply, model: str, stream: bool) -> Iterator[bytes]:
        rid, created = new_id("resp_"), int(time.time())
        items = _items(reply)
        base = {"id": rid, "object": "response", "created_at": created, "model": model,
                "error": None, "incomplete_details": None}
        done = {**base, "status": "completed", "output": items,
                "usage": _usage_json(reply.usage)}
        if not stream:
            yield json.dumps(done).encode()
            return
        seq = iter(range(1_000_000))

        def ev(kind: str, **fields: Any) -> bytes:
            return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

        yield ev("response.created", response={**base, "status": "in_progress", "output": []})
        for i, item in enumerate(items):
            kind = item["type"]
            if kind == "message":
                yield ev("response.output_item.added", output_index=i,
                         item={**item, "status": "in_progress", "content": []})
                part = item["content"][0]
                yield ev("response.content_part.added", item_id=item["id"], output_index=i,
                         content_index=0, part={**part, "text": ""})
                if part["text"]:
                    yield ev("response.output_text.delta", item_id=item["id"], output_index=i,
                             content_index=0, delta=part["text"])
                yield ev("response.output_text.done", item_id=item["id"], output_index=i,
                         content_index=0, text=part["text"])
                yield ev("response.content_part.done", item_id=item["id"], output_index=i,
                         content_index=0, part=part)
            elif kind == "function_call":
                yield ev("response.output_item.added", output_index=i,
                         item={**item, "status": "in_progress", "arguments": ""})
                yield ev("response.function_call_arguments.delta", item_id=item["id"],
                         output_index=i, delta=item["arguments"])
                yield ev("response.function_call_arguments.done", item_id=item["id"],
                         output_index=i, arguments=item["arguments"])
            else:
                yield ev("response.output_item.added", output_index=i, item=item)
            yield ev("response.output_item.done", output_index=i, item=item)
        yield ev("response.completed", response=done)

    def usage_from_body(self, body: Any) -> Usage | None:
        if not isinstance(body, dict) or not isinstance(body.get("usage"), dict):
            return None
        return openai_usage(body["usage"], prompt_key="input_tokens", completion_key="output_tokens")

    def usage_from_events(self, events: list[Any]) -> Usage | None:
        for e in reversed(events):
            if isinstance(e, dict) and e.get("type") in (
                "response.completed", "response.incomplete", "response.failed"
            ):
                usage = (e.get("response") or {}).get("usage")
                if isinstance(usage, dict):
                    return openai_usage(usage, prompt_key="input_tokens", completion_key="output_tokens")
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message, param=None)
