"""Grader for aml-monitoring-screening.

The reference holds the alerts, the screening hits and the cases that the bank's rules give
on the cleaned ledger. Alerts are keyed by (customer, scenario, trigger transaction), hits by
(customer, list entry), cases by customer; every set must be exact. The cases are also
re-derived from the agent's own alerts and hits, so a wrong alert is charged once.
"""

from __future__ import annotations

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    load_csv,
    match_rows,
    rows_by,
)

ALERT_COLS = ["customer_id", "scenario", "trigger_txn_id", "txn_ids", "total_usd"]
HIT_COLS = ["customer_id", "entry_id", "score", "disposition"]
CASE_COLS = ["customer_id", "alert_count", "scenarios", "sanctions_confirmed", "priority"]
# Totals are stated to the cent; a cent of rounding on each converted deposit of a
# three-deposit alert is allowed.
USD_ABS = 0.03
# Scores are asked to at least 3 decimals (0.0005 of rounding). The usual Jaro-Winkler
# variants (match window max//2-1 or max//2, min-length window, DuckDB's built-in, the 0.7
# boost threshold) give the same score on every pair of these names at or above 0.88, so
# 0.005 leaves room for rounding without letting one constant pass for every match.
SCORE_ABS = 0.005
# Coarse cruxes, one per half of the job: the monitoring found most of the alerts (the
# structuring scenario, where the data traps are, is half of them: leaving it out fails),
# and the screening found some of the matches (none at all, or everyone, fails).
CRUX_ALERT_F1 = 0.7
CRUX_MATCH_F1 = 0.25


def cell(row: dict, name: str) -> str:
    value = row.get(name)
    return value.strip() if isinstance(value, str) else ""


def id_set(text: str) -> str:
    return ";".join(sorted({t.strip() for t in text.replace(",", ";").split(";") if t.strip()}))


def flag(text: str) -> str:
    t = text.strip().lower()
    return "true" if t in ("true", "1", "yes", "y") else "false" if t in ("false", "0", "no", "n", "") else t


def f1(seen: set, want: set) -> float:
    if not seen and not want:
        return 1.0
    return 2 * len(seen & want) / (len(seen) + len(want))


def alert_rows(rows: list[dict]) -> list[dict]:
    return [{"key": (cell(r, "customer_id"), cell(r, "scenario").upper(), cell(r, "trigger_txn_id")),
             "txn_ids": id_set(cell(r, "txn_ids")), "total_usd": cell(r, "total_usd")} for r in rows]


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    alerts, a_ok = load_csv(ctx.out("alerts.csv"), required_columns=ALERT_COLS)
    r.gate("alerts.csv has the required columns", a_ok)
    hits, h_ok = load_csv(ctx.out("screening_hits.csv"), required_columns=HIT_COLS)
    r.gate("screening_hits.csv has the required columns", h_ok)
    cases, c_ok = load_csv(ctx.out("cases.csv"), required_columns=CASE_COLS)
    r.gate("cases.csv has the required columns", c_ok)

    seen_alerts = rows_by(alert_rows(alerts or []), lambda row: row["key"] if all(row["key"]) else None)
    want_alerts = {(a["customer_id"], a["scenario"], a["trigger_txn_id"]):
                   {"txn_ids": ";".join(a["txn_ids"]), "total_usd": a["total_usd"]} for a in ref["alerts"]}
    seen_hits = rows_by(hits or [], ("customer_id", "entry_id"))
    want_hits = {(h["customer_id"], h["entry_id"]): h for h in ref["hits"]}
    confirmed_seen = {k for k, row in seen_hits.items() if cell(row, "disposition").upper() == "CONFIRMED"}
    confirmed_want = {k for k, h in want_hits.items() if h["disposition"] == "CONFIRMED"}
    alert_f1 = f1(set(seen_alerts), set(want_alerts))
    r.gate(f"monitoring done: alerts F1 at least {CRUX_ALERT_F1}",
           Outcome(alert_f1 >= CRUX_ALERT_F1, f"F1 {alert_f1:.3f}", CRUX_ALERT_F1, round(alert_f1, 3)))
    match_f1 = f1(set(seen_hits), set(want_hits))
    r.gate(f"screening done: sanctions matches F1 at least {CRUX_MATCH_F1}",
           Outcome(match_f1 >= CRUX_MATCH_F1, f"F1 {match_f1:.3f}", CRUX_MATCH_F1, round(match_f1, 3)))

    for scenario, weight in (("STRUCTURING", 2.0), ("RAPID_MOVEMENT", 1.5), ("HIGH_RISK_CORRIDOR", 1.0)):
        want = {k for k in want_alerts if k[1] == scenario}
        seen = {k: v for k, v in seen_alerts.items() if k[1] == scenario}
        sub = rows_by(seen.values(), lambda row: row["key"])
        sub.duplicates.extend(k for k in seen_alerts.duplicates if k[1] == scenario)
        r.check(f"{scenario} alerts exactly (customer and trigger transaction)", weight, sub.coverage(want))
    want_struct = {k: v for k, v in want_alerts.items() if k[1] != "HIGH_RISK_CORRIDOR"}
    r.check("transactions of each structuring and rapid-movement alert", 1.0,
            match_rows(seen_alerts, want_struct, ["txn_ids"], exact=True))
    r.check("USD total of every alert (as-of FX, cents)", 1.0,
            match_rows(seen_alerts, want_alerts, ["total_usd"], abs=USD_ABS))

    r.check("screening matches at or above 0.92 exactly (customer and list entry)", 1.5,
            seen_hits.coverage(want_hits))
    r.check("disposition of every match (DOB, year-only DOB, nationality)", 1.5, all_of(
        [equal(sorted(confirmed_seen & set(want_hits)), sorted(confirmed_want)),
         match_rows({k: {"disposition": cell(v, "disposition").upper()} for k, v in seen_hits.items()},
                    want_hits, ["disposition"], exact=True)]))
    r.check(f"match scores within {SCORE_ABS}", 0.5, match_rows(seen_hits, want_hits, ["score"], abs=SCORE_ABS))

    seen_cases = rows_by(cases or [], "customer_id")
    want_cases = {c["customer_id"]: {"alert_count": c["alert_count"], "scenarios": c["scenarios"],
                                     "sanctions_confirmed": str(c["sanctions_confirmed"]).lower(),
                                     "priority": c["priority"]} for c in ref["cases"]}
    norm_cases = {k: {"alert_count": as_number(cell(v, "alert_count")),
                      "scenarios": id_set(cell(v, "scenarios").upper()),
                      "sanctions_confirmed": flag(cell(v, "sanctions_confirmed")),
                      "priority": cell(v, "priority").upper()} for k, v in seen_cases.items()}
    r.check("one case per customer with an alert or a confirmed hit", 1.0, seen_cases.coverage(want_cases))
    r.check("case alert count, scenarios, sanctions flag and priority", 1.0, match_rows(
        norm_cases, want_cases, ["alert_count", "scenarios", "sanctions_confirmed", "priority"], exact=True))
    r.check("cases consistent with the reported alerts and hits", 0.5,
            consistency(norm_cases, seen_alerts, confirmed_seen))
    return r


def consistency(cases: dict, alerts: dict, confirmed: set) -> Outcome:
    """The case file the agent's own alerts and hits call for, by the stated rules."""
    per: dict[str, list[str]] = {}
    for key in alerts:
        per.setdefault(key[0], []).append(key[1])
    hit_custs = {k[0] for k in confirmed}
    own = {}
    for cust in set(per) | hit_custs:
        scen = sorted(set(per.get(cust, [])))
        own[cust] = {"alert_count": len(per.get(cust, [])), "scenarios": ";".join(scen),
                     "sanctions_confirmed": "true" if cust in hit_custs else "false",
                     "priority": "HIGH" if cust in hit_custs or len(scen) >= 2 else "MEDIUM"}
    if not own:
        return Outcome(False, "no alerts or confirmed hits reported")
    return match_rows(cases, own, ["alert_count", "scenarios", "sanctions_confirmed", "priority"],
                      exact=True, only=True)
