"""Trajectory steps rebuilt from the gateway's log, for an agent whose own log could not be
read: the conversation the client sent in its last model call that declared tools (every
client sends the whole conversation each time), then that call's answer.

The conversation is the client's as it sent it: a client that compacts its context sends
less. Tool calls get the trajectory's names (a computer tool's is its action) and images in
tool results are left out, a saved screenshot's referenced by its path, as for native logs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lastexam.gateway.models import MAX_LOG_LINE
from lastexam.gateway.wire import WIRES
from lastexam.trajectory.build import MAX_LOG_READ
from lastexam.trajectory.computer import mcp_name
from lastexam.trajectory.native import StepBuilder
from lastexam.trajectory.schema import Step
from lastexam.untrusted import iter_lines


def _last_call(path: Path) -> dict[str, Any] | None:
    """The last answered model call whose request declared tools and was logged whole."""
    last = None
    for line in iter_lines(path, MAX_LOG_LINE, MAX_LOG_READ):
        try:
            call = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(call, dict) or not call.get("counted", True):
            continue
        req = call.get("request")
        if (isinstance(req, dict) and req.get("tools") and isinstance(call.get("status"), int)
                and call["status"] < 400 and call.get("wire") in WIRES):
            last = call
    return last


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Any wire's message content as text and image blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text") or (kind is None and "text" in part):
            out.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind in ("image", "image_url", "input_image") or "inlineData" in part:
            out.append({"type": "image"})
    return out


def _text(content: Any) -> str:
    return "".join(b["text"] for b in _blocks(content) if b["type"] == "text")


def _anthropic(body: dict[str, Any], b: StepBuilder) -> None:
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if msg.get("role") == "assistant":
            b.close()
            for block in content if isinstance(content, list) else _blocks(content):
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "text":
                    b.text(str(block.get("text", "")))
                elif kind == "thinking":
                    b.reasoning(str(block.get("thinking", "")))
                elif kind == "tool_use":
                    b.call(str(block.get("id", "")), str(block.get("name", "")),
                           block.get("input") or {})
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    b.result(str(block.get("tool_use_id", "")), _blocks(block.get("content")),
                             {"is_error": True} if block.get("is_error") else None)


def _chat(body: dict[str, Any], b: StepBuilder) -> None:
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            b.close()
            b.text(_text(msg.get("content")))
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    b.call(str(call.get("id", "")), str(fn.get("name", "")),
                           _arguments(fn.get("arguments")))
        elif msg.get("role") == "tool":
            b.result(str(msg.get("tool_call_id", "")), _blocks(msg.get("content")))


def _responses(body: dict[str, Any], b: StepBuilder) -> None:
    for item in _items(body.get("input")):
        kind = item.get("type")
        if kind == "reasoning":
            b.close()
            b.reasoning("".join(str(s.get("text", "")) for s in item.get("summary") or []
                                if isinstance(s, dict)))
        elif kind == "message" and item.get("role") == "assistant":
            b.text(_text(item.get("content")))
            b.close()
        elif kind == "function_call":
            namespace = str(item.get("namespace") or "")
            name = str(item.get("name", ""))
            if namespace.startswith("mcp__"):
                name = mcp_name(namespace.removeprefix("mcp__"), name)
            b.call(str(item.get("call_id", "")), name, _arguments(item.get("arguments")))
        elif kind == "function_call_output":
            b.result(str(item.get("call_id", "")), _blocks(item.get("output")))


def _gemini(body: dict[str, Any], b: StepBuilder) -> None:
    pending: list[str] = []  # ids of calls not answered yet, for answers that name none
    for n, content in enumerate(_items(body.get("contents"))):
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            b.close()
            for i, part in enumerate(parts):
                call = part.get("functionCall")
                if isinstance(call, dict):
                    call_id = str(call.get("id") or f"{n}.{i}")
                    pending.append(call_id)
                    b.call(call_id, str(call.get("name", "")), call.get("args") or {})
                elif not part.get("thought"):
                    b.text(str(part.get("text", "")))
            continue
        images = [{"type": "image"} for p in parts if "inlineData" in p]
        for part in parts:
            answer = part.get("functionResponse")
            if isinstance(answer, dict):
                call_id = str(answer.get("id") or (pending[0] if pending else ""))
                if call_id in pending:
                    pending.remove(call_id)
                output = answer.get("response")
                if isinstance(output, dict) and "output" in output:
                    output = output["output"]
                text = output if isinstance(output, str) else json.dumps(output)
                b.result(call_id, [{"type": "text", "text": text}, *images])
                images = []


def _items(value: Any) -> Iterator[dict[str, Any]]:
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            yield item


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return {"input": raw}
    return raw or {}


def _answer_text(wire: str, response: Any, stream: bool) -> str:
    """The text of a logged answer (whole body, or the payloads of its streamed events)."""
    events = response if stream and isinstance(response, list) else [response]
    out = []
    for e in events:
        if not isinstance(e, dict):
            continue
        if wire == "anthropic":
            if stream and e.get("type") == "content_block_delta":
                out.append(str((e.get("delta") or {}).get("text", "")))
            elif not stream:
                out.append(_text(e.get("content")))
        elif wire == "chat":
            for choice in e.get("choices") or []:
                msg = (choice.get("delta") if stream else choice.get("message")) or {}
                out.append(str(msg.get("content") or ""))
        elif wire == "responses":
            done = e.get("response") if stream else e
            if not stream or e.get("type") == "response.completed":
                for item in _items((done or {}).get("output")):
                    if item.get("type") == "message":
                        out.append(_text(item.get("content")))
        else:
            for cand in (e.get("candidates") or [])[:1]:
                for part in ((cand.get("content") or {}).get("parts") or []):
                    if isinstance(part, dict) and not part.get("thought"):
                        out.append(str(part.get("text", "")))
    return "".join(out)


READERS = {"anthropic": _anthropic, "chat": _chat, "responses": _responses, "gemini": _gemini}


def gateway_steps(path: Path) -> list[Step] | None:
    """The agent's steps from the gateway log (None: no call to rebuild them from)."""
    call = _last_call(path)
    if call is None:
        return None
    b = StepBuilder()
    READERS[call["wire"]](call["request"], b)
    response = call.get("response")
    if isinstance(response, dict | list):
        b.close()
        b.text(_answer_text(call["wire"], response, bool(call.get("stream"))))
    return b.done()


