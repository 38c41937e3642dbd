"""The one place that maps how a trial went to its status."""

from __future__ import annotations

from lastexam.store.models import GradeRecord, TrialStatus


def trial_status(
    ended_by: str, exit_code: int | None, grade: GradeRecord | None, infra_failed: bool
) -> TrialStatus:
    """ended_by: exit | timeout | memory | output_limit | budget_exhausted | not_started.

    An infrastructure failure at any step outranks everything (the trial is not graded); a
    grader failure outranks the agent's ending (the score is unknown until regraded)."""
    if infra_failed or ended_by == "not_started":
        return "infra_error"
    if grade is not None and not grade.ok:
        return "grader_error"
    if ended_by == "timeout":
        return "timeout"
    if ended_by == "budget_exhausted":  # the gateway refused further model calls
        return "budget_exhausted"
    if ended_by in ("memory", "output_limit") or exit_code != 0:
        return "agent_error"
    return "completed"
