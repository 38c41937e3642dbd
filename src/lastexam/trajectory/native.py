"""Trajectory steps from each agent's native log (one JSON object per line on its stdout).

Claude Code: `--output-format stream-json --verbose`; Codex: `exec --json`; Gemini CLI:
`--output-format stream-json`; lastexam-agent: its own events. Lines that are not JSON or
not understood are skipped: a trajectory is evidence, never a reason for a trial to fail.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lastexam.trajectory.computer import action_name, mcp_name, result_content
from lastexam.trajectory.schema import (
    ContentPart,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
)
from lastexam.untrusted import iter_lines

MAX_TEXT = 100_000
# The agent writes its log, up to its write cap, and each tiny event can open a step: what is
# kept of one log is capped, in steps, texts, calls and results and in bytes read.
MAX_ITEMS = 20_000
MAX_LOG_BYTES = 128 * 1024 * 1024
CUT = (f"the agent's log was cut: it holds more than {MAX_ITEMS} steps, texts, tool calls and "
       f"results, or more than {MAX_LOG_BYTES} bytes; the rest is not shown")


def _events(path: Path, b: StepBuilder) -> Iterator[dict[str, Any]]:
    # The agent writes this log: lines are bounded (iter_lines) and may be anything.
    read = 0
    for line in iter_lines(path):
        read += len(line) + 1
        if read > MAX_LOG_BYTES or not b.take(0):
            b.cut = CUT
            return
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict):
            yield event


def count(value: Any) -> int:
    """A token count as a log gives it: a finite number >= 0, else 0 (as when absent)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, int(value))


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _clip(text: Any) -> str:
    if not isinstance(text, str):
        text = json.dumps(text) if text is not None else ""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... [{len(text) - MAX_TEXT} cut]"


def _clip_content(content: str | list[ContentPart]) -> str | list[ContentPart]:
    if isinstance(content, str):
        return _clip(content)
    return [p.model_copy(update={"text": _clip(p.text)}) if p.text is not None else p
            for p in content]


class StepBuilder:
    """Collects agent steps: text, reasoning and tool calls join the open step until it has
    received an observation (or `close()` is called); then a new step opens."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._open: Step | None = None
        self._by_call: dict[str, Step] = {}
        self._names: dict[str, str] = {}  # call id -> the tool's name in the trajectory
        self.items = 0  # texts, calls and results taken in
        self.cut: str | None = None  # why the log was not read to its end

    def take(self, n: int = 1) -> bool:
        """Count n more items; False (and the log marked cut) once they and the steps would
        pass the cap, and from then on: the rest of the log is not read."""
        if self.cut is not None or self.items + len(self.steps) + n > MAX_ITEMS:
            self.cut = CUT
            return False
        self.items += n
        return True

    def done(self) -> list[Step]:
        """The steps, ending with a note when the log was cut."""
        if self.cut is None:
            return self.steps
        return [*self.steps, Step(source="system", message=self.cut)]

    def open_step(self, timestamp: Any = None) -> Step:
        """The step being written, or a new one. What the client logs is not trusted to be
        of the right kind: a timestamp that is no string is left out."""
        if self._open is None or self._open.observation is not None:
            self._open = Step(source="agent", timestamp=timestamp if isinstance(timestamp, str) else None)
            self.steps.append(self._open)
        return self._open

    def close(self) -> None:
        self._open = None

    def text(self, text: Any, timestamp: Any = None) -> None:
        if text and self.take():
            step = self.open_step(timestamp)
            step.message = _clip(step.message + _clip(text))

    def reasoning(self, text: Any) -> None:
        if text and self.take():
            step = self.open_step()
            step.reasoning_content = _clip((step.reasoning_content or "") + _clip(text))

    def call(self, call_id: str, name: str, arguments: Any, timestamp: Any = None) -> None:
        """A tool call; a computer tool's is named by its action (`click`), whatever the
        client calls it."""
        if not self.take():
            return
        step = self.open_step(timestamp)
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        name = action_name(name)
        step.tool_calls = step.tool_calls or []
        step.tool_calls.append(ToolCall(tool_call_id=call_id, function_name=name, arguments=args))
        self._by_call[call_id] = step
        self._names[call_id] = name

    def result(self, call_id: str, content: Any, extra: dict[str, Any] | None = None) -> None:
        """A tool result: text, or content blocks whose images are left out (a saved
        screenshot's is referenced by its path)."""
        if not self.take():
            return
        step = self._by_call.get(call_id)
        if step is None:
            return
        kept, note = result_content(content, self._names.get(call_id) == "screenshot")
        if note:
            extra = {**(extra or {}), **note}
        obs = step.observation or Observation()
        obs.results.append(ObservationResult(source_call_id=call_id, content=_clip_content(kept),
                                             extra=extra))
        step.observation = obs

    def metrics(self, metrics: Metrics) -> None:
        if self._open is not None:
            self._open.metrics = metrics


def _anthropic_metrics(u: dict[str, Any]) -> Metrics:
    cached = count(u.get("cache_read_input_tokens"))
    written = count(u.get("cache_creation_input_tokens"))
    return Metrics(prompt_tokens=count(u.get("input_tokens")) + cached + written,
                   completion_tokens=count(u.get("output_tokens")), cached_tokens=cached,
                   extra={"cache_write_tokens": written} if written else None)


def claude_code_steps(path: Path) -> list[Step] | None:
    b = StepBuilder()
    seen = False
    current_id = None
    for e in _events(path, b):
        kind = e.get("type")
        if kind == "assistant":
            seen = True
            msg = as_dict(e.get("message"))
            if msg.get("id") != current_id:
                b.close()
                current_id = msg.get("id")
            for block in as_list(msg.get("content")):
                t = as_dict(block).get("type")
                if t == "text":
                    b.text(block.get("text", ""))
                elif t == "thinking":
                    b.reasoning(block.get("thinking", ""))
                elif t == "tool_use":
                    b.call(block.get("id", ""), block.get("name", ""), block.get("input") or {})
            if isinstance(msg.get("usage"), dict):
                b.metrics(_anthropic_metrics(msg["usage"]))
        elif kind == "user":
            for block in as_list(as_dict(e.get("message")).get("content")):
                if as_dict(block).get("type") == "tool_result":
                    b.result(block.get("tool_use_id", ""), block.get("content"),
                             {"is_error": True} if block.get("is_error") else None)
    return b.done() if seen else None


def codex_steps(path: Path) -> list[Step] | None:
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        if e.get("type") != "item.completed":
            continue
        item = as_dict(e.get("item"))
        kind, item_id = item.get("type"), str(item.get("id", ""))
        seen = True
        if kind == "reasoning":
            b.close()
            b.reasoning(item.get("text", ""))
        elif kind == "agent_message":
            b.text(item.get("text", ""))
            b.close()
        elif kind == "command_execution":
            b.call(item_id, "exec_command", {"cmd": item.get("command", "")})
            b.result(item_id, item.get("aggregated_output", ""),
                     {"exit_code": item.get("exit_code")})
        elif kind == "mcp_tool_call":
            b.call(item_id, mcp_name(str(item.get("server", "")), str(item.get("tool", ""))),
                   item.get("arguments") or {})
            result, error = item.get("result"), item.get("error")
            if isinstance(result, dict):
                b.result(item_id, result.get("content"),
                         None if item.get("status") == "completed" else {"status": item.get("status")})
            else:
                b.result(item_id, error.get("message") if isinstance(error, dict) else error,
                         {"status": item.get("status")})
        elif kind in ("file_change", "web_search", "todo_list"):
            args = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
            b.call(item_id, kind, args)
            b.result(item_id, item.get("status", ""))
    return b.done() if seen else None


def gemini_cli_steps(path: Path) -> list[Step] | None:
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        kind, ts = e.get("type"), e.get("timestamp")
        if kind == "message" and e.get("role") == "assistant":
            seen = True
            b.text(str(e.get("content", "")), ts)
        elif kind == "tool_use":
            seen = True
            b.call(str(e.get("tool_id", "")), str(e.get("tool_name", "")),
                   e.get("parameters") or {}, ts)
        elif kind == "tool_result":
            output = e.get("output")
            if output is None and e.get("error"):
                output = e["error"].get("message") if isinstance(e["error"], dict) else e["error"]
            b.result(str(e.get("tool_id", "")), output,
                     {"status": e.get("status")} if e.get("status") != "success" else None)
    return b.done() if seen else None


def lastexam_agent_steps(path: Path) -> list[Step] | None:
    b = StepBuilder()
    seen = False
    for e in _events(path, b):
        kind = e.get("type")
        if kind == "assistant":
            seen = True
            b.close()
            b.reasoning(e.get("reasoning") or "")
            b.text(e.get("text") or "")
            for c in e.get("tool_calls") or []:
                b.call(c.get("id", ""), c.get("name", ""), c.get("arguments") or {})
            b.open_step()
            usage = e.get("usage") or {}
            if "prompt_tokens" in usage:
                cached = count(as_dict(usage.get("prompt_tokens_details")).get("cached_tokens"))
                b.metrics(Metrics(prompt_tokens=count(usage.get("prompt_tokens")),
                                  completion_tokens=count(usage.get("completion_tokens")),
                                  cached_tokens=cached))
            elif usage:
                b.metrics(_anthropic_metrics(usage))
        elif kind == "tool_result":
            # A computer tool's images are counted in "images", not logged; a saved
            # screenshot's path is read from the output's text, as for every client.
            images = e.get("images") if isinstance(e.get("images"), int) else 0
            content = [{"type": "text", "text": str(e.get("output", ""))},
                       *[{"type": "image"}] * max(0, min(images, 100))]
            b.result(e.get("id", ""), content, {"is_error": True} if e.get("is_error") else None)
    return b.done() if seen else None
