"""Trajectory steps from the native logs of opencode, Factory Droid, Grok CLI and Cline CLI
(Qwen Code's stream-json is Claude Code's: `native.claude_code_steps`). As in native.py, lines
that are not JSON or not understood are skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lastexam.trajectory.native import StepBuilder, _events, as_dict, as_list, count
from lastexam.trajectory.schema import Metrics, Step


def _ms_iso(ms: Any) -> str | None:
    """A millisecond epoch time as ISO 8601 (UTC)."""
    from datetime import UTC, datetime

    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def opencode_steps(path: Path) -> list[Step] | None:
    """`opencode run --format json`: one event per part of each model step."""
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        kind, part = e.get("type"), as_dict(e.get("part"))
        ts = _ms_iso(e.get("timestamp"))
        if kind == "step_start":
            seen = True
            b.close()
        elif kind == "text":
            b.text(str(part.get("text", "")), ts)
        elif kind == "reasoning":
            b.reasoning(str(part.get("text", "")))
        elif kind == "tool_use":
            state = as_dict(part.get("state"))
            call_id = str(part.get("callID", ""))
            b.call(call_id, str(part.get("tool", "")), state.get("input") or {}, ts)
            failed = state.get("status") == "error"
            b.result(call_id, state.get("error") if failed else state.get("output"),
                     {"status": state.get("status")} if failed else None)
        elif kind == "step_finish":
            tokens = as_dict(part.get("tokens"))
            cache = as_dict(tokens.get("cache"))
            cached = count(cache.get("read"))
            b.metrics(Metrics(prompt_tokens=count(tokens.get("input")) + cached,
                              completion_tokens=count(tokens.get("output")),
                              cached_tokens=cached))
    return b.done() if seen else None


def droid_steps(path: Path) -> list[Step] | None:
    """`droid exec --output-format stream-json`."""
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        kind, ts = e.get("type"), _ms_iso(e.get("timestamp"))
        if kind == "message" and e.get("role") == "assistant":
            seen = True
            b.text(str(e.get("text", "")), ts)
            b.close()
        elif kind == "tool_call":
            seen = True
            b.call(str(e.get("id", "")), str(e.get("toolName") or e.get("toolId") or ""),
                   e.get("parameters") or {}, ts)
        elif kind == "tool_result":
            b.result(str(e.get("id", "")), e.get("value"),
                     {"is_error": True} if e.get("isError") else None)
    return b.done() if seen else None


def grok_cli_steps(path: Path) -> list[Step] | None:
    """`grok --prompt`: the conversation as Chat Completions messages, one a line, at the end."""
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        role = e.get("role")
        if role == "assistant":
            seen = True
            b.close()
            b.text(e.get("content") if isinstance(e.get("content"), str) else "")
            for c in as_list(e.get("tool_calls")):
                fn = as_dict(as_dict(c).get("function"))
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except (TypeError, ValueError):
                    args = fn.get("arguments")
                b.call(str(as_dict(c).get("id", "")), str(fn.get("name", "")), args)
        elif role == "tool":
            b.result(str(e.get("tool_call_id", "")), e.get("content"))
    return b.done() if seen else None


def cline_steps(path: Path) -> list[Step] | None:
    """`cline --json`: agent events (iterations, content starts and ends, usage)."""
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        event, ts = as_dict(e.get("event")), e.get("ts") if isinstance(e.get("ts"), str) else None
        if e.get("type") != "agent_event":
            continue
        kind, content = event.get("type"), event.get("contentType")
        if kind == "iteration_start":
            seen = True
            b.close()
        elif kind == "content_start" and content == "tool":
            b.call(str(event.get("toolCallId", "")), str(event.get("toolName", "")),
                   event.get("input") or {}, ts)
        elif kind == "content_end" and content == "tool":
            output = event.get("output")
            failed = isinstance(output, list) and any(
                isinstance(o, dict) and o.get("success") is False for o in output)
            b.result(str(event.get("toolCallId", "")), _cline_output(output),
                     {"is_error": True} if failed else None)
        elif kind == "content_end" and content == "text":
            b.text(str(event.get("text", "")), ts)
        elif kind == "content_end" and content in ("reasoning", "thinking"):
            b.reasoning(str(event.get("text") or event.get("reasoning") or ""))
        elif kind == "usage":  # may come before the iteration's content
            b.open_step(ts)
            b.metrics(Metrics(prompt_tokens=count(event.get("inputTokens")),
                              completion_tokens=count(event.get("outputTokens"))))
    return b.done() if seen else None


def _cline_output(output: Any) -> Any:
    """A command tool's results (one per command) as text; any other output as it is."""
    if isinstance(output, list) and all(isinstance(o, dict) and "result" in o for o in output):
        return "\n".join(str(o.get("result", "")) for o in output)
    return output
