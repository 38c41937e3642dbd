"""What OpenAI's two APIs (Chat Completions, Responses) share: usage and error shapes."""

from __future__ import annotations

from typing import Any

from lastexam.gateway.models import Usage


def openai_usage(u: dict[str, Any], *, prompt_key: str, completion_key: str) -> Usage:
    """Usage from an OpenAI usage object. Chat Completions names its counts prompt_tokens and
    completion_tokens, Responses input_tokens and output_tokens; both put cached and reasoning
    tokens in "<key>_details". The prompt count includes the cached tokens."""
    prompt = int(u.get(prompt_key) or 0)
    cached = int((u.get(f"{prompt_key}_details") or {}).get("cached_tokens") or 0)
    reasoning = int((u.get(f"{completion_key}_details") or {}).get("reasoning_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(u.get(completion_key) or 0),
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def openai_error(status: int, message: str, **extra: Any) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 401: "authentication_error",
            429: "rate_limit_exceeded"}.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "code": kind, **extra}}
