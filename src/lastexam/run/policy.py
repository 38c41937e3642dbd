"""The error policy: one table that decides, for each way a trial can end, its status,
whether to retry it (how often, with what backoff), whether to grade what it left, and
whether its score counts toward the metrics. Every trial records the decision taken.

Agent-side endings are the agent's result and always count, and so does a grader failure (as
0, until a regrade); infrastructure failures are the harness's or the machine's and never
count (they are retried, then reported apart).
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from dataclasses import dataclass

from lastexam.store.models import TrialStatus


@dataclass(frozen=True)
class Policy:
    status: TrialStatus
    retries: int  # at most this many further attempts (capped by --max-retries)
    backoff_s: float  # wait before retry n: backoff_s * 2**(n-1)
    grade: bool  # grade the outputs the agent left
    counts: bool  # the score counts toward FPR and MS
    abort_run: bool = False  # stop the whole run (nothing more can be recorded)


POLICY: dict[str, Policy] = {
    # the agent ran; its outputs are graded and its score counts
    "completed": Policy("completed", 0, 0.0, grade=True, counts=True),
    "agent_exit": Policy("agent_error", 0, 0.0, grade=True, counts=True),
    "agent_memory": Policy("agent_error", 0, 0.0, grade=True, counts=True),
    "agent_output_limit": Policy("agent_error", 0, 0.0, grade=True, counts=True),
    "timeout": Policy("timeout", 0, 0.0, grade=True, counts=True),
    # processes of the agent outlived SIGKILL and the teardown: what they may still write is
    # not graded, and the trial counts (as 0): whatever the agent can cause is its own doing
    "agent_survivors": Policy("agent_error", 0, 0.0, grade=False, counts=True),
    "budget_exhausted": Policy("budget_exhausted", 0, 0.0, grade=True, counts=True),
    # the grader failed on what the agent left: deterministic, so retrying will not help. It
    # counts as 0: output crafted to crash or hang a grader must not take a trial out of the
    # metrics (docs/integrity.md); a fixed grader's `lastexam regrade` replaces the 0.
    "grader_failed": Policy("grader_error", 0, 0.0, grade=False, counts=True),
    # infrastructure: not the agent's doing
    "sandbox_failed": Policy("infra_error", 2, 2.0, grade=False, counts=False),
    "staging_failed": Policy("infra_error", 2, 1.0, grade=False, counts=False),
    "task_missing": Policy("infra_error", 0, 0.0, grade=False, counts=False),
    "harness_error": Policy("infra_error", 1, 1.0, grade=False, counts=False),
    # --backend ray: the node or the worker process running the trial died (run/backends/)
    "node_lost": Policy("infra_error", 2, 0.0, grade=False, counts=False),
    "disk_full": Policy("infra_error", 0, 0.0, grade=False, counts=False, abort_run=True),
    # a sealed task's bundle cannot be opened (altered, truncated, wrong key): the operator's
    # to fix, and every trial of the task would fail the same way
    "bundle_damaged": Policy("infra_error", 0, 0.0, grade=False, counts=False, abort_run=True),
}

AGENT_ENDINGS = {
    "exit": "completed", "timeout": "timeout", "memory": "agent_memory",
    "output_limit": "agent_output_limit", "budget_exhausted": "budget_exhausted",
    "survivors": "agent_survivors",
}


def agent_kind(ended_by: str, exit_code: int | None) -> str:
    """The policy kind of an agent that ran to an end."""
    kind = AGENT_ENDINGS.get(ended_by, "agent_exit")
    if kind == "completed" and exit_code != 0:
        return "agent_exit"
    return kind


def infra_kind(exc: BaseException, task_exists: bool, stage: str) -> str:
    """The policy kind of an exception raised while running a trial."""
    from lastexam.pool.bundle import SealedBundleError
    from lastexam.sandbox.base import SandboxError

    if disk_full(exc):
        return "disk_full"
    if isinstance(exc, SealedBundleError):
        return "bundle_damaged"
    if not task_exists:
        return "task_missing"
    if isinstance(exc, SandboxError):
        return "sandbox_failed"
    if stage == "stage" and isinstance(exc, OSError):
        return "staging_failed"
    return "harness_error"


def disk_full(exc: BaseException) -> bool:
    """The one test for "the disk (or the quota) is full", whatever raised it."""
    if isinstance(exc, shutil.Error):  # copytree gathers its files' errors as (src, dst, why)
        return any(f"[Errno {n}]" in str(item) for item in exc.args[0]
                   for n in (errno.ENOSPC, errno.EDQUOT))
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


class RunAborted(Exception):
    """A failure after which no trial can be recorded (the results disk is full) or none
    should be (a sealed bundle cannot be opened)."""
