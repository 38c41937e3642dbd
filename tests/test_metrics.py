"""Metrics against hand-computed values, and failure attribution on crafted trials."""

from __future__ import annotations

import pytest

from lastexam.analysis.failures import CATEGORIES, attribute, failure_report
from lastexam.analysis.metrics import (
    costs,
    fpr,
    headline,
    mcnemar_exact,
    mean_score,
    paired_comparison,
    pass_at_k,
    pass_hat_k,
)
from lastexam.analysis.view import metrics_view, statuses
from lastexam.store.rows import TrialRow


def row(task: str, attempt: int, full: bool, score: float | None, **kw) -> TrialRow:
    base = dict(
        trial_id=f"{task}-{attempt}-{kw.get('agent', 'a')}", task_id=task, agent="a", model="",
        attempt=attempt, tier="near-term", cluster="other", subdomain="sports",
        status="completed", score=score, full_pass=full, checks_total=4,
        checks_passed=4 if full else 1,
    )
    base.update(kw)
    return TrialRow(**base)


# A: pass, pass   B: pass, fail (0.5)   C: fail (0), fail (0.2)
ROWS = [
    row("A", 1, True, 1.0), row("A", 2, True, 1.0),
    row("B", 1, True, 1.0), row("B", 2, False, 0.5),
    row("C", 1, False, 0.0), row("C", 2, False, 0.2),
]


def test_point_estimates() -> None:
    assert fpr(ROWS).value == pytest.approx(3 / 6)
    assert mean_score(ROWS).value == pytest.approx(3.7 / 6)


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(ROWS, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert pass_at_k(ROWS, 2) == pytest.approx((1 + 1 + 0) / 3)  # B: 1 - C(1,2)/C(2,2) = 1
    assert pass_hat_k(ROWS, 2) == pytest.approx((1 + 0 + 0) / 3)  # A: C(2,2)/C(2,2) = 1
    assert pass_at_k(ROWS, 3) is None  # no task has 3 attempts


def test_bootstrap_ci_by_hand() -> None:
    # Two tasks with means 1 and 0: a resample holds (A,A), (A,B) or (B,B) with probabilities
    # 1/4, 1/2, 1/4, so the means are 1, 0.5, 0 and the 95% interval is [0, 1].
    two = [row("A", 1, True, 1.0), row("B", 1, False, 0.0)]
    est = fpr(two)
    assert (est.value, est.low, est.high) == (0.5, 0.0, 1.0)
    # Identical tasks: every resample has the same mean, the interval collapses to it.
    same = [row(t, 1, True, 0.8) for t in "ABCD"]
    est = mean_score(same)
    assert (est.value, est.low, est.high) == pytest.approx((0.8, 0.8, 0.8))
    # One task: no interval.
    assert fpr([row("A", 1, True, 1.0)]).low is None


def test_bootstrap_clusters_attempts_by_task() -> None:
    # Task A: 9 passing attempts, task B: 1 failing. Resampling tasks gives means 1, 0.9 or 0,
    # so the lower bound is 0; resampling trials would give a lower bound near 0.7.
    rows = [row("A", i, True, 1.0) for i in range(1, 10)] + [row("B", 1, False, 0.0)]
    est = fpr(rows)
    assert est.value == pytest.approx(0.9)
    assert est.low == 0.0 and est.high == 1.0


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(3, 0) == pytest.approx(2 * 1 / 8)
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def test_paired_comparison() -> None:
    a = [row(t, 1, True, 1.0, agent="a") for t in "ABC"] + [row("D", 1, True, 1.0, agent="a")]
    b = [row(t, 1, False, 0.25, agent="b") for t in "ABC"]
    cmp = paired_comparison(a, b)
    assert cmp["shared_tasks"] == 3  # D is not shared
    assert cmp["fpr_diff"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert cmp["ms_diff"]["value"] == pytest.approx(0.75)
    assert cmp["mcnemar"] == {"pairs": 3, "a_only": 3, "b_only": 0, "p_value": pytest.approx(0.25)}


def test_costs_keep_unknown_apart() -> None:
    rows = [
        row("A", 1, True, 1.0, cost_usd=0.5, model_calls=3, input_tokens=100, duration_s=10.0),
        row("B", 1, True, 1.0, cost_usd=None, model_calls=2, input_tokens=50, duration_s=20.0),
        row("C", 1, True, 1.0, duration_s=30.0),  # no model at all: not "unknown"
    ]
    c = costs(rows)
    assert c["cost_usd_total"] == 0.5 and c["trials_with_unknown_cost"] == 1
    assert c["tokens"]["input_tokens"] == 150 and c["model_calls"] == 5
    assert c["wall_s_per_trial"] == 20.0
    assert costs([row("A", 1, True, 1.0)])["cost_usd_total"] is None


def test_statuses_and_headline() -> None:
    rows = [*ROWS, row("D", 1, False, None, status="infra_error")]
    assert statuses(rows) == {"completed": 6, "infra_error": 1}
    assert headline(rows)["tasks"] == 4


def test_view_gives_tiers_and_clusters_per_agent_only() -> None:
    """Two agents on the same tasks: each one's own figures, never their pool."""
    rows = [row(t, 1, True, 1.0, agent="oracle", tier=tier) for t, tier in (("A", "near-term"), ("B", "last-exam"))]
    rows += [row(t, 1, False, 0.0, agent="nop", tier=tier) for t, tier in (("A", "near-term"), ("B", "last-exam"))]
    rows.append(row("C", 1, False, None, agent="nop", status="infra_error", counts=False))
    view = metrics_view(rows)
    board = {e["agent"]: e for e in view["leaderboard"]}
    for agent, value in (("oracle", 1.0), ("nop", 0.0)):
        assert {t: g["fpr"]["value"] for t, g in board[agent]["by_tier"].items()} == {
            "near-term": value, "last-exam": value}
        assert board[agent]["by_cluster"]["other"]["fpr"]["value"] == value
    assert board["nop"]["trials"] == 2 and board["nop"]["excluded"] == 1
    assert board["nop"]["statuses"] == {"completed": 2, "infra_error": 1}
    assert not {"by_tier", "by_cluster", "by_subdomain"} & set(view)
    assert view["overall"]["fpr"]["value"] == 0.5 and view["overall"]["excluded"] == 1


CRAFTED = {
    "infra_error": dict(status="infra_error", score=None),
    "grader_error": dict(status="grader_error", score=None),
    "budget_exhausted": dict(status="budget_exhausted", ended_by="budget_exhausted"),
    "timeout": dict(status="timeout", ended_by="timeout"),
    "agent_error": dict(status="agent_error", ended_by="memory"),
    "no_deliverable": dict(missing_outputs=1, gates_failed=1),
    "execution": dict(gates_failed=1),
    "partial": dict(score=0.75, checks_passed=3),
    "approach": dict(score=0.25, checks_passed=1),
}


@pytest.mark.parametrize("category", CATEGORIES)
def test_failure_attribution_of_each_category(category: str) -> None:
    kw = {"score": 0.0, **CRAFTED[category]}
    found = attribute(row("A", 1, False, **kw))
    assert found is not None and found[0] == category
    assert found[1]  # evidence is never empty


def test_full_pass_is_not_a_failure_and_report_aggregates() -> None:
    assert attribute(row("A", 1, True, 1.0)) is None
    rows = [row(f"T{c}", 1, False, **{"score": 0.0, **kw}) for c, kw in CRAFTED.items()]
    rows.append(row("OK", 1, True, 1.0))
    report = failure_report(rows)
    assert report["failed_trials"] == len(CRAFTED)
    assert all(v == 1 for v in report["by_category"].values())
    assert sum(report["by_tier"]["near-term"].values()) == len(CRAFTED)
