"""Grader for var-backtest-traffic-light.

The reference holds the 250 backtest days (VaR, hypothetical P&L, exception) and the
statistics. The statistics are re-derived here from the agent's own exception column too, so
that a wrong exception set is charged once (to the exceptions) and the tests are still
judged on whether they were computed right from it.
"""

from __future__ import annotations

import math

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

STAT_REL = 1e-4  # the instruction's relative tolerance on likelihood ratios and p-values
CENT = 0.01 + 1e-9  # VaR and P&L are stated to the cent
CRUX_REL = 0.05  # coarse: VaR within 5 % ...
CRUX_SHARE = 0.9  # ... on 90 % of the backtest days


def xlogy(x: float, y: float) -> float:
    return 0.0 if x == 0 else x * math.log(y)


def stats_from(seq: list[int]) -> dict:
    """Kupiec POF and Christoffersen independence / conditional coverage at p = 0.01."""
    n, x, p = len(seq), sum(seq), 0.01
    pof = -2 * (xlogy(n - x, 1 - p) + xlogy(x, p) - xlogy(n - x, 1 - x / n) - xlogy(x, x / n))
    t = {(a, b): 0 for a in (0, 1) for b in (0, 1)}
    for a, b in zip(seq, seq[1:], strict=False):
        t[(a, b)] += 1
    pi0 = t[(0, 1)] / max(1, t[(0, 0)] + t[(0, 1)])
    pi1 = t[(1, 1)] / (t[(1, 0)] + t[(1, 1)]) if t[(1, 0)] + t[(1, 1)] else 0.0
    pi = (t[(0, 1)] + t[(1, 1)]) / max(1, n - 1)
    ind = -2 * (xlogy(t[(0, 0)] + t[(1, 0)], 1 - pi) + xlogy(t[(0, 1)] + t[(1, 1)], pi)
                - xlogy(t[(0, 0)], 1 - pi0) - xlogy(t[(0, 1)], pi0)
                - xlogy(t[(1, 0)], 1 - pi1) - xlogy(t[(1, 1)], pi1))
    sf1 = math.erfc(math.sqrt(max(pof, 0.0) / 2))
    return {"kupiec_lr": pof, "kupiec_p": sf1,
            "christoffersen_ind_lr": ind, "christoffersen_ind_p": math.erfc(math.sqrt(max(ind, 0.0) / 2)),
            "cc_lr": pof + ind, "cc_p": math.exp(-(pof + ind) / 2)}


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    ref_rows = {row["date"]: row for row in ref["rows"]}
    rows, table_ok = load_csv(ctx.out("backtest.csv"),
                              required_columns=["date", "var_99", "hypothetical_pnl", "exception"])
    r.gate("backtest.csv has the required columns", table_ok)
    summary, parsed = load_json(ctx.out("summary.json"))
    r.gate("summary.json parses as a JSON object", parsed)
    by_date = rows_by(rows or [], "date")
    close = 0
    for day, want in ref_rows.items():
        got = as_number(by_date.get(day, {}).get("var_99")) if day in by_date else None
        if got is not None and abs(got - want["var_99"]) <= CRUX_REL * want["var_99"]:
            close += 1
    # Crux, coarse: the VaR model itself (split handling, window, rank) is right most days.
    r.gate(f"VaR within {CRUX_REL:.0%} of the model on {CRUX_SHARE:.0%} of the backtest days",
           Outcome(close >= CRUX_SHARE * len(ref_rows), f"{close} of {len(ref_rows)} days",
                   CRUX_SHARE * len(ref_rows), close))
    r.check("one row per backtest day, no duplicates or extra days", 1.0,
            all_of([by_date.coverage(sorted(ref_rows)),
                    equal(len(rows or []), len(ref_rows))]))
    r.check("VaR of every day within a cent", 3.0, match_rows(by_date, ref_rows, ["var_99"], abs=CENT))
    r.check("hypothetical P&L of every day within a cent (not actual P&L)", 1.0,
            match_rows(by_date, ref_rows, ["hypothetical_pnl"], abs=CENT))
    r.check("exceptions exactly", 2.0, match_rows(by_date, ref_rows, ["exception"], exact=True))
    x = ref["exceptions"]
    r.check("exception count, traffic-light zone and plus-factor", 1.5, all_of({
        "observations": near(get(summary, "observations"), len(ref_rows), abs=0),
        "exceptions": near(get(summary, "exceptions"), x, abs=0),
        "zone": equal(get(summary, "zone"), ref["zone"]),
        "plus_factor": near(get(summary, "plus_factor"), ref["plus_factor"], abs=1e-9),
    }))
    for label, keys, weight in (
            ("Kupiec POF statistic and p-value", ["kupiec_lr", "kupiec_p"], 1.0),
            ("Christoffersen independence statistic and p-value",
             ["christoffersen_ind_lr", "christoffersen_ind_p"], 1.0),
            ("conditional coverage statistic and p-value", ["cc_lr", "cc_p"], 1.0)):
        r.check(label, weight, all_of({k: near(get(summary, k), ref[k], rel=STAT_REL) for k in keys}))
    # The tests computed right from the agent's own exception column, whatever it holds.
    seq = []
    for day in sorted(ref_rows):
        v = as_number(by_date.get(day, {}).get("exception")) if day in by_date else None
        seq.append(1 if v == 1 else 0)
    own = stats_from(seq)
    r.check("statistics consistent with the reported exception column", 0.5, all_of(
        {k: near(get(summary, k), own[k], rel=STAT_REL) for k in own}))
    return r
