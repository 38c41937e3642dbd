"""The Gemini API (POST /v1beta/models/MODEL:generateContent and :streamGenerateContent),
spoken by Gemini CLI. The model is named in the path, not the body."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lastexam.gateway.models import Usage
from lastexam.gateway.wire.base import Reply, ToolDecl, Wire, WireRequest

# Only these methods are served: any other would reach the provider as an uncounted call.
PATH = re.compile(r"^/(?P<ver>v1beta|v1|v1alpha)/models/(?P<model>[^/:]+)"
                  r":(?P<method>generateContent|streamGenerateContent|countTokens)$")


def _usage_json(u: Usage) -> dict[str, int]:
    return {
        "promptTokenCount": u.prompt_tokens,
        "candidatesTokenCount": u.output_tokens - u.reasoning_tokens,
        "thoughtsTokenCount": u.reasoning_tokens,
        "cachedContentTokenCount": u.cache_read_tokens,
        "totalTokenCount": u.total_tokens,
    }


class GeminiWire(Wire):
    name = "gemini"
    max_output_fields = (("generationConfig", "maxOutputTokens"),
                         ("generation_config", "max_output_tokens"))
    answers_fields = (("generationConfig", "candidateCount"),
                      ("generation_config", "candidate_count"))
    key_header = "x-goog-api-key"
    key_prefix = ""

    def _method(self, req: WireRequest) -> str:
        m = PATH.match(req.path)
        return m.group("method") if m else ""

    def is_stream(self, req: WireRequest) -> bool:
        return self._method(req) == "streamGenerateContent"

    def is_model_call(self, req: WireRequest) -> bool:
        return self._method(req) in ("generateContent", "streamGenerateContent")

    def requested_model(self, req: WireRequest) -> str:
        m = PATH.match(req.path)
        return m.group("model") if m else ""

    def with_model(self, req: WireRequest, model: str) -> tuple[str, dict[str, Any]]:
        m = PATH.match(req.path)
        if not m:
            return req.path, req.body
        return f"/{m.group('ver')}/models/{model}:{m.group('method')}", req.body

    def tools(self, req: WireRequest) -> list[ToolDecl]:
        out = []
        for t in req.body.get("tools") or []:
            for fn in (t.get("functionDeclarations") or []) if isinstance(t, dict) else []:
                schema = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
                out.append(ToolDecl(fn.get("name", ""), schema.get("properties") or {}))
        return out

    def render(self, reply: Reply, model: str, stream: bool) -> Iterator[bytes]:
        parts: list[dict[str, Any]] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        if reply.text or not reply.tool_calls:
            parts.append({"text": reply.text})
        for call in reply.tool_calls:
            parts.append({"functionCall": {"id": call.call_id, "name": call.name,
                                           "args": call.arguments}})
        body = {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": _usage_json(reply.usage),
            "modelVersion": model,
        }
        text = json.dumps(body, separators=(",", ":"))
        yield f"data: {text}\r\n\r\n".encode() if stream else text.encode()

    def usage_from_body(self, body: Any) -> Usage | None:
        if not isinstance(body, dict) or not isinstance(body.get("usageMetadata"), dict):
            return None
        return _usage(body["usageMetadata"])

    def usage_from_events(self, events: list[Any]) -> Usage | None:
        for e in reversed(events):
            if isinstance(e, dict) and isinstance(e.get("usageMetadata"), dict):
                return _usage(e["usageMetadata"])
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": kind}}


def _usage(u: dict[str, Any]) -> Usage:
    prompt = int(u.get("promptTokenCount") or 0)
    cached = int(u.get("cachedContentTokenCount") or 0)
    thoughts = int(u.get("thoughtsTokenCount") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(u.get("candidatesTokenCount") or 0) + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )
