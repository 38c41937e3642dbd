"""Assemble a trial's trajectory: the instruction, the agent's steps from its native log, and
the gateway's record of every model call, which is the authority on tokens and cost."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from lastexam.gateway.models import MAX_LOG_LINE, CallRecord, SessionSummary
from lastexam.trajectory.schema import AgentInfo, FinalMetrics, Metrics, Step, Trajectory
from lastexam.untrusted import iter_lines

# Reading a gateway log stops past this many bytes (the gateway stops logging bodies at 512 MB).
MAX_LOG_READ = 1024 * 1024 * 1024


def read_calls(path: Path, max_total: int = MAX_LOG_READ) -> list[CallRecord]:
    """The calls of a gateway log, without their bodies: of a request, only whether it
    declared tools is kept ({"tools": true|false}); its response is dropped."""
    calls = []
    try:
        for line in iter_lines(path, MAX_LOG_LINE, max_total):
            try:
                call = CallRecord.model_validate_json(line)
            except ValidationError:
                continue
            req = call.request if isinstance(call.request, dict) else {}
            calls.append(call.model_copy(
                update={"request": {"tools": bool(req.get("tools"))}, "response": None}))
    except OSError:
        return []
    return calls


def _declares_tools(call: CallRecord) -> bool:
    req = call.request if isinstance(call.request, dict) else {}
    return bool(req.get("tools"))


def _call_metrics(call: CallRecord) -> Metrics:
    u = call.usage
    extra: dict[str, object] = {"gateway_call": call.seq, "latency_ms": call.latency_ms}
    if u is None:
        return Metrics(cost_usd=call.cost_usd, extra=extra)
    if u.cache_write_tokens:
        extra["cache_write_tokens"] = u.cache_write_tokens
    if u.reasoning_tokens:
        extra["reasoning_tokens"] = u.reasoning_tokens
    return Metrics(prompt_tokens=u.prompt_tokens, completion_tokens=u.output_tokens,
                   cached_tokens=u.cache_read_tokens, cost_usd=call.cost_usd, extra=extra)


def _answered_at(call: CallRecord) -> str | None:
    try:
        start = datetime.fromisoformat(call.started_at)
    except ValueError:
        return None
    return (start + timedelta(milliseconds=call.latency_ms)).isoformat(timespec="milliseconds")


def reconcile(steps: list[Step], calls: list[CallRecord]) -> str:
    """Give each agent step the metrics of the model call that produced it, when the calls
    and the steps can be paired one to one; says how it went."""
    agent_steps = [s for s in steps if s.source == "agent"]
    answered = [c for c in calls if c.counted and c.status < 400]
    for candidates in ([c for c in answered if _declares_tools(c)], answered):
        if candidates and len(candidates) == len(agent_steps):
            for step, call in zip(agent_steps, candidates, strict=True):
                step.metrics = _call_metrics(call)
                step.model_name = call.model
                # A step the agent's log gives no time (Codex's, Claude Code's) is dated when
                # its answer was complete: what a recording of the screen is matched on.
                step.timestamp = step.timestamp or _answered_at(call)
            return f"per-step metrics from the gateway ({len(candidates)} calls paired with steps)"
    return (
        f"{len(answered)} answered model calls and {len(agent_steps)} agent steps could not be "
        "paired: per-step metrics are the agent's own; totals are the gateway's"
    )


def check_images(steps: list[Step], trial_root: Path) -> str | None:
    """Drop each image reference to a file the trial folder does not hold (a screenshot the
    agent claims but the harness did not collect); says how many were dropped."""
    missing = 0
    for step in steps:
        for res in step.observation.results if step.observation else []:
            if isinstance(res.content, str):
                continue
            kept = []
            for part in res.content:
                path = part.source.path if part.source else None
                if path is not None and not _regular_file(trial_root, path):
                    missing += 1
                    res.extra = {**(res.extra or {}), "missing_image": path}
                    continue
                kept.append(part)
            res.content = kept
    if not missing:
        return None
    return f"{missing} screenshot(s) named by tool results are not in the trial folder"


def _regular_file(root: Path, rel: str) -> bool:
    path = root / rel
    return not path.is_symlink() and path.is_file() and path.resolve().is_relative_to(root.resolve())


def build_trajectory(
    *,
    session_id: str,
    agent: str,
    agent_version: str,
    model: str,
    instruction: str,
    native: list[Step] | None,
    calls: list[CallRecord],
    summary: SessionSummary | None,
    duration_s: float | None,
    trial_root: Path | None = None,
    from_gateway: bool = False,
) -> Trajectory:
    """`trial_root`: the trial folder the trajectory's image paths are relative to (their
    files are checked there). `from_gateway`: the agent's log could not be read and `native`
    holds the steps rebuilt from the gateway log (gateway_log.py), if any."""
    steps: list[Step] = [Step(source="user", message=instruction)]
    notes = []
    if native is None or from_gateway:
        notes.append("no native agent log could be read: " + (
            "the steps hold the instruction only" if native is None
            else "the steps are rebuilt from the conversation in the gateway log"))
    if native is not None:
        steps += native
        if summary is not None:
            notes.append(reconcile(native, calls))
        if trial_root is not None and (missing := check_images(native, trial_root)):
            notes.append(missing)
    for i, step in enumerate(steps, start=1):
        step.step_id = i
    final = FinalMetrics(total_steps=len(steps), extra={"duration_s": duration_s})
    if summary is not None:
        u = summary.usage
        final = FinalMetrics(
            total_prompt_tokens=u.prompt_tokens,
            total_completion_tokens=u.output_tokens,
            total_cached_tokens=u.cache_read_tokens,
            total_cost_usd=summary.cost_usd,
            total_steps=len(steps),
            extra={
                "input_tokens": u.input_tokens,
                "cache_read_tokens": u.cache_read_tokens,
                "cache_write_tokens": u.cache_write_tokens,
                "output_tokens": u.output_tokens,
                "reasoning_tokens": u.reasoning_tokens,
                "model_calls": summary.model_calls,
                "failed_calls": summary.failed_calls,
                "refused_calls": summary.refused_calls,
                "budget_exhausted": summary.budget_exhausted,
                "price_table": summary.price_table,
                "duration_s": duration_s,
            },
        )
    return Trajectory(
        session_id=session_id,
        agent=AgentInfo(name=agent, version=agent_version, model_name=model or None),
        steps=steps,
        notes="; ".join(notes) or None,
        final_metrics=final,
    )


def write_trajectory(trajectory: Trajectory, path: Path) -> None:
    data = trajectory.model_dump(mode="json", exclude_none=True)
    if trajectory.final_metrics is not None:
        # An unknown cost is written as null, not left out: unknown is not zero.
        data["final_metrics"]["total_cost_usd"] = trajectory.final_metrics.total_cost_usd
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
