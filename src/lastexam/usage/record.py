"""Turn a trial's exec log into its usage record and the exec.jsonl artifact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lastexam.sandbox.base import SandboxError
from lastexam.usage.channel import ChannelResult
from lastexam.usage.declared import usage as declared_usage
from lastexam.usage.execlog import parse


class ShimNotLoaded(SandboxError):
    """The sandbox's first process did not report itself: the shim was not preloaded. The
    agent cannot cause this (its first process starts with the shim before any of its code
    runs), so it is the harness's fault."""


def record_usage(
    channel: ChannelResult | None, events_out: Path, software: list[str], first_argv0: str
) -> dict[str, Any]:
    """`channel` is None when the trial ran without the shim (no C compiler): usage unknown."""
    if channel is not None and channel.error:
        raise SandboxError(channel.error)
    log = parse(channel.source if channel else None, flooded=bool(channel and channel.flooded))
    if channel is not None and (not log.first_argv or log.first_argv[0] != first_argv0):
        raise ShimNotLoaded(
            f"the exec-log shim did not report the sandbox's first process ({first_argv0})"
        )
    with open(events_out, "w", encoding="utf-8") as f:
        for e in log.events:
            f.write(json.dumps({"pid": e.pid, "time": e.time, "path": e.path, "argv": e.argv,
                                "exit": e.exit_status}) + "\n")
    declared = declared_usage(software, log)
    known = [v for v in declared.values() if v is not None]
    return {
        **log.summary(),
        "declared_software": declared,
        # True when every declared software whose use can be seen was used; None: unknowable
        "used_declared": all(known) if known else None,
        "script_share": round(log.script_execs / log.total, 4) if log.total else None,
    }
