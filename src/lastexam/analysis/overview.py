"""Everything a reader of results needs, computed once from trial rows: used by
`lastexam show --json`, the HTML report and the exports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lastexam.analysis import metrics as m
from lastexam.analysis.failures import failure_report
from lastexam.analysis.rows import TrialRow
from lastexam.task.spec import TIERS
from lastexam.taxonomy import load_taxonomy


def _ordered(groups: dict[str, list[TrialRow]], order: Sequence[str]) -> list[str]:
    return [k for k in order if k in groups] + sorted(k for k in groups if k not in order)


def leaderboard(rows: Sequence[TrialRow]) -> list[dict[str, Any]]:
    """One entry per agent x model: FPR and MS with CIs, per tier, cost and time."""
    entries = []
    for cell, group in m.group_by(rows, lambda r: r.cell).items():
        tiers = m.group_by(group, lambda r: r.tier)
        attempts = max((r.attempt for r in group), default=1)
        counts = m.task_counts(group)
        entries.append({
            "cell": cell,
            "agent": group[0].agent,
            "model": group[0].model,
            **m.headline(group),
            "by_tier": {t: m.headline(tiers[t]) for t in _ordered(tiers, TIERS)},
            "pass_at_k": {k: m.pass_at_k(counts, k) for k in range(1, attempts + 1)},
            "pass_hat_k": {k: m.pass_hat_k(counts, k) for k in range(1, attempts + 1)},
            "costs": m.costs(group),
            "statuses": m.status_shares(group),
        })
    return sorted(entries, key=lambda e: (-(e["fpr"]["value"] or 0), -(e["ms"]["value"] or 0), e["cell"]))


def grouped(rows: Sequence[TrialRow], attr: str, order: Sequence[str]) -> dict[str, dict[str, Any]]:
    groups = m.group_by(rows, lambda r: getattr(r, attr))
    return {k: m.headline(groups[k]) for k in _ordered(groups, order)}


def cluster_matrix(rows: Sequence[TrialRow]) -> dict[str, dict[str, float]]:
    """cell -> cluster -> FPR (point estimates), for the heatmap."""
    out: dict[str, dict[str, float]] = {}
    for cell, group in m.group_by(rows, lambda r: r.cell).items():
        out[cell] = {
            c: round(sum(r.full_pass for r in g) / len(g), 4)
            for c, g in m.group_by(group, lambda r: r.cluster).items()
        }
    return out


def overview(all_rows: Sequence[TrialRow]) -> dict[str, Any]:
    """Scores over the trials the error policy counts; statuses, failures and costs over all."""
    tax = load_taxonomy()
    rows = [r for r in all_rows if r.counts]
    return {
        "overall": {**m.headline(rows), "excluded": len(all_rows) - len(rows)},
        "leaderboard": leaderboard(rows),
        "by_tier": grouped(rows, "tier", TIERS),
        "by_cluster": grouped(rows, "cluster", [c.id for c in tax.clusters]),
        "by_subdomain": grouped(rows, "subdomain", [s.id for s in tax.subdomains]),
        "cluster_matrix": cluster_matrix(rows),
        "costs": m.costs(all_rows),
        "statuses": m.status_shares(all_rows),
        "failures": failure_report(all_rows),
        "software_usage": m.software_usage(rows),
        "harness_vs_model": m.harness_model_spread(rows),
        "grader_versions": sorted({r.grader_version for r in all_rows if r.grader_version}),
    }
