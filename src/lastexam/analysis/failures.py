"""Failure attribution without a model judge: one primary category per failed trial (any
trial that is not a full pass), decided by the first rule that matches, with its evidence.

| order | category         | rule                                                        |
|-------|------------------|-------------------------------------------------------------|
| 1     | infra_error      | the harness or machine failed; the trial was not graded     |
| 2     | grader_error     | the grader raised, hung or broke its limits                 |
| 3     | budget_exhausted | the gateway refused further model calls (cost or tokens)    |
| 4     | timeout          | the agent was still working at its time cap                 |
| 5     | agent_error      | the agent exited non-zero, or hit its memory/output limit   |
| 6     | no_deliverable   | a required output file is missing                           |
| 7     | execution        | a gate failed: unparseable or malformed deliverable, tampered inputs |
| 8     | partial          | the weighted score is at least 0.5: most of the work is right |
| 9     | approach         | deliverables present and well-formed, core checks failed    |

Rules 1 to 5 are operational: they say how the trial ended, not how good the work was.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from lastexam.store.rows import TrialRow

CATEGORIES = (
    "infra_error", "grader_error", "budget_exhausted", "timeout", "agent_error",
    "no_deliverable", "execution", "partial", "approach",
)
OPERATIONAL = frozenset(CATEGORIES[:5])
PARTIAL_SCORE = 0.5


def attribute(row: TrialRow) -> tuple[str, str] | None:
    """(category, evidence) for a failed trial; None for a full pass."""
    if row.full_pass:
        return None
    if row.status in ("infra_error", "grader_error"):
        return row.status, f"status {row.status}"
    if row.status == "budget_exhausted" or row.ended_by == "budget_exhausted":
        return "budget_exhausted", "the gateway's budget ended the trial's model access"
    if row.status == "timeout":
        return "timeout", "ended by the time cap"
    if row.status == "agent_error":
        how = row.ended_by if row.ended_by != "exit" else "a non-zero exit"
        return "agent_error", f"ended by {how}"
    if row.missing_outputs:
        return "no_deliverable", f"{row.missing_outputs} required output(s) missing"
    if row.gates_failed:
        return "execution", f"{row.gates_failed} gate(s) failed"
    score = row.score or 0.0
    detail = f"score {score:.2f}, {row.checks_passed}/{row.checks_total} checks passed"
    if score >= PARTIAL_SCORE:
        return "partial", detail
    return "approach", detail


def breakdown(
    rows: Sequence[TrialRow], key: Callable[[TrialRow], str],
    found: Sequence[tuple[str, str] | None] | None = None,
) -> dict[str, dict[str, int]]:
    """Counts of each category per group (agent x model, tier, cluster)."""
    found = found if found is not None else [attribute(r) for r in rows]
    table: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0))
    for row, f in zip(rows, found, strict=True):
        if f:
            table[key(row)][f[0]] += 1
    return {k: dict(v) for k, v in sorted(table.items())}


def failure_report(rows: Sequence[TrialRow]) -> dict[str, Any]:
    found = [attribute(r) for r in rows]
    totals = dict.fromkeys(CATEGORIES, 0)
    for f in found:
        if f:
            totals[f[0]] += 1
    return {
        "failed_trials": sum(1 for f in found if f),
        "by_category": totals,
        "by_cell": breakdown(rows, lambda r: r.cell, found),
        "by_tier": breakdown(rows, lambda r: r.tier, found),
        "by_cluster": breakdown(rows, lambda r: r.cluster, found),
        "trials": [
            {"trial_id": r.trial_id, "run": r.run, "category": f[0], "evidence": f[1]}
            for r, f in zip(rows, found, strict=True) if f
        ],
    }
