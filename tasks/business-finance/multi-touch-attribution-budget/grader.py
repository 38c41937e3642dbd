"""Grader for multi-touch-attribution-budget: the four attribution models, removal effects,
ROAS and the Q2 allocation, against the reference attribution of the cleaned journeys.

Tolerances (and why): attributed revenue within USD 1.00 (the instruction asks for cents; an
analyst who rounds each touch's share before summing drifts by a few tenths of a dollar over
~1,500 orders, while each planted problem moves a channel by USD 100 or more); removal effects
within 2e-6 and ROAS within 1e-4 (6 and 4 stated decimals); Q1 spend within 0.01 (a sum of
cents). The allocation is re-scored here with the reference curves, not compared to the
reference allocation, so any optimal split passes: its revenue must reach the optimum within
0.01 % (cents rounding of the allocation costs under 1e-7), the sum within USD 0.05 (five
amounts rounded to the cent) and each bound within USD 0.01.
"""

from __future__ import annotations

import math

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

COLUMNS = ["channel", "last_touch", "linear", "time_decay", "markov", "removal_effect", "spend", "roas"]
MONEY = 1.0
# The crux gate: Markov credit within 0.2 % of total revenue per channel (about USD 470, some
# 470 times the check's tolerance). Copying the linear or last-touch credit, deleting paths
# instead of redirecting them to Null, or building the chain without the non-converting
# journeys (off by up to 0.42 %) misses by more.
CRUX_SHARE = 0.002
BOUND_SLACK = 0.01
SUM_SLACK = 0.05
REVENUE_REL = 1e-4
BOUNDS = (0.6, 1.3)


def _revenue(alloc: dict, scale: dict, sat: dict) -> float:
    return sum(scale[c] * (1.0 - math.exp(-alloc[c] / sat[c])) for c in scale)


def _optimum(scale: dict, sat: dict, spend: dict) -> float:
    """Best revenue by the KKT condition, bisecting on the marginal return (not the oracle's code)."""
    lo = {c: BOUNDS[0] * spend[c] for c in scale}
    hi = {c: BOUNDS[1] * spend[c] for c in scale}
    total = sum(spend.values())

    def spend_at(mu: float) -> dict:
        return {c: min(hi[c], max(lo[c], sat[c] * (math.log(scale[c] / sat[c]) - mu))) for c in scale}

    a, z = -50.0, 50.0  # mu = log of the marginal revenue per dollar
    for _ in range(200):
        mid = (a + z) / 2
        a, z = (mid, z) if sum(spend_at(mid).values()) > total else (a, mid)
    return _revenue(spend_at((a + z) / 2), scale, sat)


def _allocation(budget: object, paid: list[str]) -> tuple[dict, Outcome]:
    raw = get(budget, "allocation")
    if not isinstance(raw, dict):
        return {}, Outcome(False, "budget.json has no allocation object", expected="object", seen=type(raw).__name__)
    alloc = {c: as_number(raw.get(c)) for c in paid}
    bad = sorted(c for c, v in alloc.items() if v is None)
    extra = sorted(str(k) for k in raw if k not in paid)
    ok = not bad and not extra
    return alloc, Outcome(ok, "one amount per paid channel" if ok else "missing or extra channels",
                          expected=paid, seen={"missing_or_not_numbers": bad, "extra": extra[:10]})


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    want = {row["channel"]: row for row in ref["rows"]}
    scale, sat, spend = ref["curve_scale"], ref["saturation"], ref["q1_spend"]
    paid = sorted(scale)
    total_rev = ref["total_revenue"]

    rows, rows_ok = load_csv(ctx.out("attribution.csv"), required_columns=COLUMNS)
    budget, budget_ok = load_json(ctx.out("budget.json"))
    r.gate("attribution.csv has the required columns and budget.json is a JSON object", all_of([rows_ok, budget_ok]))
    seen = rows_by(rows, lambda row: row["channel"].strip())
    r.gate("Markov-attributed revenue of every row, (direct) included, within 0.2 % of total Q1 revenue",
           match_rows(seen, want, ["markov"], abs=CRUX_SHARE * total_rev))
    alloc, alloc_ok = _allocation(budget, paid)
    r.gate("budget.json allocates an amount to each paid channel and nothing else", alloc_ok)

    r.check("one row per channel of the tagging guide plus (direct)", 1, seen.coverage(want))
    r.check("last-touch revenue per channel", 1, match_rows(seen, want, ["last_touch"], abs=MONEY))
    r.check("linear revenue per channel", 1, match_rows(seen, want, ["linear"], abs=MONEY))
    r.check("time-decay (7-day half-life) revenue per channel", 2, match_rows(seen, want, ["time_decay"], abs=MONEY))
    r.check("Markov removal-effect revenue per channel to the dollar", 3, match_rows(seen, want, ["markov"], abs=MONEY))
    r.check("removal effect of each channel", 2, match_rows(seen, want, ["removal_effect"], abs=2e-6))
    r.check("Q1 spend and Markov ROAS of each paid channel, empty for the others", 1, all_of([
        ("spend", match_rows(seen, want, ["spend"], abs=0.01)),
        ("roas", match_rows(seen, want, ["roas"], abs=1e-4)),
    ]))

    total = sum(spend.values())
    complete = alloc_ok.passed
    feasibility = all_of([
        ("total_budget", near(get(budget, "total_budget"), total, abs=SUM_SLACK)),
        ("sum", near(sum(alloc.values()) if complete else None, total, abs=SUM_SLACK) if complete
         else Outcome(False, "allocation incomplete")),
        *[(c, Outcome(complete and BOUNDS[0] * spend[c] - BOUND_SLACK <= alloc[c] <= BOUNDS[1] * spend[c] + BOUND_SLACK,
                      "within bounds", expected=[BOUNDS[0] * spend[c], BOUNDS[1] * spend[c]], seen=alloc.get(c)))
          for c in paid],
    ])
    r.check("allocation adds up to the Q1 paid total and keeps each channel within 60-130 % of its Q1 spend", 2, feasibility)
    # Only a feasible allocation is a budget: its revenue is scored (and, bounded, cannot overflow exp).
    best = _optimum(scale, sat, spend)
    achieved = _revenue(alloc, scale, sat) if feasibility.passed else None
    r.check("allocation reaches the best expected Q2 revenue within 0.01 %", 3,
            Outcome(achieved is not None and achieved >= best * (1 - REVENUE_REL),
                    "expected revenue of the allocation under the calibrated curves" if achieved is not None
                    else "allocation incomplete or infeasible",
                    expected=round(best, 2), seen=None if achieved is None else round(achieved, 2)))
    r.check("expected_revenue matches the allocation", 1,
            near(get(budget, "expected_revenue"), achieved, rel=REVENUE_REL) if achieved is not None
            else Outcome(False, "allocation incomplete or infeasible"))
    return r
