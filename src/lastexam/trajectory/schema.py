"""One trajectory schema for every agent, compatible with ATIF v1.6 (the Agent Trajectory
Interchange Format of the Harbor project): a trajectory is a list of steps, each from the
system, the user or the agent; an agent step carries its message, reasoning, tool calls,
their observations and the model call's metrics.

An observation's content is text, or (ATIF v1.6, multimodal) a list of parts: text, and
images referenced by a path relative to the trial folder (a screenshot: `screens/0003.png`).
Images are never inlined.

Token fields follow ATIF: `prompt_tokens` count every input token, cached or not, and
`cached_tokens` is the part read from a cache. What ATIF has no field for (cache writes,
reasoning tokens, the gateway's call numbers) goes in `extra`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = "ATIF-v1.6"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Model):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any] = {}


class ImageSource(_Model):
    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    path: str  # relative to the trial folder


class ContentPart(_Model):
    type: Literal["text", "image"]
    text: str | None = None
    source: ImageSource | None = None


class ObservationResult(_Model):
    source_call_id: str | None = None
    content: str | list[ContentPart] = ""
    extra: dict[str, Any] | None = None

    def images(self) -> list[str]:
        """The paths of the images this result references."""
        if isinstance(self.content, str):
            return []
        return [p.source.path for p in self.content if p.type == "image" and p.source]


class Observation(_Model):
    results: list[ObservationResult] = []


class Metrics(_Model):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] | None = None


class Step(_Model):
    step_id: int = 0  # numbered 1.. when the trajectory is assembled
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str = ""
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    extra: dict[str, Any] | None = None


class AgentInfo(_Model):
    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Model):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None  # None: the price of some call is unknown
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class Trajectory(_Model):
    schema_version: str = SCHEMA_VERSION
    session_id: str
    agent: AgentInfo
    steps: list[Step]
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    extra: dict[str, Any] | None = None

    def tool_calls(self) -> list[ToolCall]:
        return [c for s in self.steps for c in (s.tool_calls or [])]
