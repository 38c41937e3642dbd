"""The metrics view: everything a reader of results needs, computed once from trial rows.
`lastexam run` (its summary), `show`, `compare` and `report` (HTML, CSV, JSON) all print or
draw this one dictionary; none computes a metric of its own.

Scores (FPR, MS, pass@k) are over the trials the error policy counts; statuses, failures and
costs over all trials. Tier and cluster figures are given per agent x model only: pooled over
agents they would mix calibration agents with real ones and mean nothing. There are no
subdomain figures: per agent x model they took most of the view's time, and nothing shows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from lastexam.analysis import metrics as m
from lastexam.analysis.failures import failure_report
from lastexam.store.rows import TrialRow
from lastexam.task.spec import TIERS
from lastexam.taxonomy import load_taxonomy


def counted(rows: Sequence[TrialRow]) -> list[TrialRow]:
    """The trials whose score counts (the error policy's decision, stored per trial)."""
    return [r for r in rows if r.counts]


def statuses(rows: Sequence[TrialRow]) -> dict[str, int]:
    return dict(sorted(Counter(r.status for r in rows).items()))


def _ordered(groups: dict[str, list[TrialRow]], order: Sequence[str]) -> list[str]:
    return [k for k in order if k in groups] + sorted(k for k in groups if k not in order)


def grouped(rows: Sequence[TrialRow], attr: str, order: Sequence[str]) -> dict[str, dict[str, Any]]:
    groups = m.group_by(rows, lambda r: getattr(r, attr))
    return {k: m.headline(groups[k]) for k in _ordered(groups, order)}


def overall(all_rows: Sequence[TrialRow]) -> dict[str, Any]:
    rows = counted(all_rows)
    return {**m.headline(rows), "excluded": len(all_rows) - len(rows)}


def leaderboard(all_rows: Sequence[TrialRow]) -> list[dict[str, Any]]:
    """One entry per agent x model: FPR and MS with CIs overall, per tier and per cluster,
    pass@k and pass^k, costs and statuses."""
    tax = load_taxonomy()
    entries = []
    for cell, everything in m.group_by(all_rows, lambda r: r.cell).items():
        group = counted(everything)
        attempts = max((r.attempt for r in group), default=1)
        counts = m.task_counts(group)
        entries.append({
            "cell": cell,
            "agent": everything[0].agent,
            "model": everything[0].model,
            **overall(everything),
            "by_tier": grouped(group, "tier", TIERS),
            "by_cluster": grouped(group, "cluster", [c.id for c in tax.clusters]),
            "pass_at_k": {k: m.pass_at_k(counts, k) for k in range(1, attempts + 1)},
            "pass_hat_k": {k: m.pass_hat_k(counts, k) for k in range(1, attempts + 1)},
            "costs": m.costs(everything),
            "statuses": statuses(everything),
        })
    return sorted(entries, key=lambda e: (-(e["fpr"]["value"] or 0), -(e["ms"]["value"] or 0), e["cell"]))


def contamination(rows: Sequence[TrialRow]) -> list[dict[str, Any]]:
    """Per agent x model that ran private tasks: public against private FPR and MS."""
    if not any(r.visibility == "private" for r in rows):
        return []
    entries = []
    for cell, group in sorted(m.group_by(rows, lambda r: r.cell).items()):
        public = [r for r in group if r.visibility != "private"]
        private = [r for r in group if r.visibility == "private"]
        entries.append({"cell": cell, **m.visibility_gap(public, private)})
    return entries


def metrics_view(all_rows: Sequence[TrialRow]) -> dict[str, Any]:
    rows = counted(all_rows)
    return {
        "contamination": contamination(rows),
        "overall": overall(all_rows),
        "statuses": statuses(all_rows),
        "leaderboard": leaderboard(all_rows),
        "costs": m.costs(all_rows),
        "failures": failure_report(all_rows),
        "software_usage": m.software_usage(rows),
        "gui_usage": m.gui_usage(rows),
        "harness_vs_model": m.harness_model_spread(rows),
        "grader_versions": sorted({r.grader_version for r in all_rows if r.grader_version}),
    }


def comparison(a: Sequence[TrialRow], b: Sequence[TrialRow]) -> dict[str, Any]:
    """A versus B: each one's overall figures (as in its view), and the paired difference on
    the trials that count."""
    return {"a": overall(a), "b": overall(b), "a_minus_b": m.paired_comparison(counted(a), counted(b))}
