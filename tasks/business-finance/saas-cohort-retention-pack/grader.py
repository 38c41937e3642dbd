"""Grader for saas-cohort-retention-pack: the cohort matrix and the SaaS metrics against the
simulated truth (recognised MRR per account and local month, known to the generator).

Tolerances (and why): counts are exact; the instruction asks for money to the cent and ratios
to 6 decimals, so MRR cells and totals pass within 0.01 (rounding of sums of twelfths of annual
invoices), ARR within 0.12 (12 x a rounded MRR), ARPA within 0.01; logo retention is a ratio of
counts, within 1e-5; revenue retention, NRR and GRR within 5e-4 / 1e-5 / 1e-5 (revenue retention
may be computed from cent-rounded cells, which moves a small cohort's ratio by up to ~3e-4);
LTV within 0.1 % (it divides by the 6-decimal churn rate).
"""

from __future__ import annotations

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

COLUMNS = ["cohort_month", "month_offset", "cohort_accounts", "active_accounts", "mrr", "logo_retention", "revenue_retention"]
# The crux gate: MRR recognised per month (amortised annual plans, no setup fees, no refunded or
# free periods, no test accounts). Cash-basis MRR is off by far more; a month-attribution slip
# of a few hours moves the reporting month's total by under 1 %.
CRUX_REL = 0.03


def _key(row):
    return (row["cohort_month"].strip(), int(as_number(row["month_offset"])))


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    truth = ref["metrics"]
    rows, rows_ok = load_csv(ctx.out("cohorts.csv"), required_columns=COLUMNS)
    metrics, metrics_ok = load_json(ctx.out("metrics.json"))
    r.gate("cohorts.csv has the required columns and metrics.json is a JSON object", all_of([rows_ok, metrics_ok]))
    r.gate("recognised MRR of the reporting month within 3 % of the truth",
           near(get(metrics, "mrr"), truth["mrr"], rel=CRUX_REL))

    cells = rows_by(rows, _key)
    want = {(c["cohort_month"], c["month_offset"]): c for c in ref["cells"]}
    r.check("one row per cohort and month offset, from each cohort's first month to the reporting month", 2,
            cells.coverage(want))
    r.check("cohort sizes and active accounts exact in every cell", 3,
            match_rows(cells, want, ["cohort_accounts", "active_accounts"], exact=True))
    r.check("cohort MRR to the cent in every cell", 2, match_rows(cells, want, ["mrr"], abs=0.01))
    r.check("logo and revenue retention in every cell", 2,
            all_of([("logo", match_rows(cells, want, ["logo_retention"], abs=1e-5)),
                    ("revenue", match_rows(cells, want, ["revenue_retention"], abs=5e-4))]))
    r.check("reporting-month MRR, ARR, active accounts and ARPA", 2, all_of([
        ("mrr", near(get(metrics, "mrr"), truth["mrr"], abs=0.01)),
        ("arr", near(get(metrics, "arr"), truth["arr"], abs=0.12)),
        ("active_accounts", near(get(metrics, "active_accounts"), truth["active_accounts"], abs=0)),
        ("arpa", near(get(metrics, "arpa"), truth["arpa"], abs=0.01)),
    ]))
    r.check("12-month NRR and GRR", 2, all_of([
        ("nrr_12m", near(get(metrics, "nrr_12m"), truth["nrr_12m"], abs=1e-5)),
        ("grr_12m", near(get(metrics, "grr_12m"), truth["grr_12m"], abs=1e-5)),
    ]))
    r.check("average monthly logo churn and LTV", 1, all_of([
        ("avg_monthly_logo_churn", near(get(metrics, "avg_monthly_logo_churn"), truth["avg_monthly_logo_churn"], abs=1e-5)),
        ("ltv", near(get(metrics, "ltv"), truth["ltv"], rel=1e-3)),
    ]))
    r.check("reporting_month is 2025-06", 1,
            Outcome(get(metrics, "reporting_month") == truth["reporting_month"], "as required",
                    expected=truth["reporting_month"], seen=str(get(metrics, "reporting_month"))))
    return r
