"""Full Pass Rate and Mean Score, overall and by tier and cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lastexam.analysis.rows import TrialRow
from lastexam.store.models import TrialRecord
from lastexam.task.spec import TIERS
from lastexam.taxonomy import load_taxonomy


def _fpr_ms(trials: list[TrialRecord]) -> dict[str, Any]:
    n = len(trials)
    if n == 0:
        return {"trials": 0, "fpr": None, "ms": None}
    fpr = sum(t.full_pass for t in trials) / n
    ms = sum(t.score or 0.0 for t in trials) / n
    return {"trials": n, "fpr": round(fpr, 4), "ms": round(ms, 4)}


def _group(trials: list[TrialRecord], key: Callable[[TrialRecord], str], order: Iterable[str]) -> dict:
    groups: dict[str, list[TrialRecord]] = {}
    for t in trials:
        groups.setdefault(key(t), []).append(t)
    ordered = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
    return {k: _fpr_ms(groups[k]) for k in ordered}


def counts(t: TrialRecord | TrialRow) -> bool:
    """The error policy's decision: does this trial's score count toward FPR and MS."""
    return t.counts if isinstance(t, TrialRow) else bool(t.policy.get("counts", True))


def summarize(all_trials: list[TrialRecord] | list[TrialRow]) -> dict[str, Any]:
    """FPR and MS over the trials that count (infrastructure failures do not: they are in
    `statuses` and `excluded`; a grader failure counts as 0)."""
    clusters = [c.id for c in load_taxonomy().clusters]
    statuses: dict[str, int] = {}
    for t in all_trials:
        statuses[t.status] = statuses.get(t.status, 0) + 1
    trials = [t for t in all_trials if counts(t)]
    return {
        **_fpr_ms(trials),
        "excluded": len(all_trials) - len(trials),
        "statuses": statuses,
        "by_tier": _group(trials, lambda t: t.tier, TIERS),
        "by_cluster": _group(trials, lambda t: t.cluster, clusters),
    }
