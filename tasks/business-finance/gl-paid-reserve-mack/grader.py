"""Grader for gl-paid-reserve-mack: the paid triangle, chain-ladder factors and indications,
Mack standard errors, BF and Cape Cod, against the reference computed from the simulated
payments before the extract was made.

Tolerances (and why): triangle cells are sums of cents, within 0.02; factors, CDFs and ratios
are asked to 6 decimals, within 1e-6; money figures are asked to the cent from full-precision
factors, within USD 1.00 (summation order); Mack standard errors within 0.01 % relative (square
roots of sums over dozens of terms, reported to the cent). The crux gate is coarse on purpose:
total CL reserve within 2 % and total Mack s.e. within 10 %.
"""

from __future__ import annotations

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    is_empty,
    load_csv,
    load_json,
    match_rows,
    near,
    rows_by,
)

TRI_COLUMNS = ["accident_year", "dev_months", "cumulative_paid"]
RES_COLUMNS = ["accident_year", "paid_to_date", "cdf", "cl_ultimate", "cl_reserve", "mack_se", "bf_ultimate", "cc_ultimate"]
MONEY = 1.0
RATIO = 1e-6
MACK_REL = 1e-4
CRUX_RESERVE_REL = 0.02
CRUX_MACK_REL = 0.10


def _int_key(*names: str):
    def key(row: dict) -> tuple[int, ...]:
        values = [as_number(row[n]) for n in names]
        if any(v is None or v != int(v) for v in values):
            raise ValueError("not an integer key")
        return tuple(int(v) for v in values)
    return key


def _consistent(rows: dict, want: dict) -> Outcome:
    """Each accident year's CL ultimate = paid x CDF and reserve = ultimate - paid, on the agent's own figures."""
    problems = []
    for key in want:
        row = rows.get(key)
        if row is None:
            continue
        paid, cdf, ult, res = (as_number(row[c]) for c in ("paid_to_date", "cdf", "cl_ultimate", "cl_reserve"))
        if None in (paid, cdf, ult, res):
            problems.append(f"{key[0]}: a value is not a number")
            continue
        # the CDF is reported to 6 decimals: paid x CDF may differ from the ultimate by paid x 5e-7
        if abs(paid * cdf - ult) > paid * 5.1e-7 + MONEY or abs(ult - paid - res) > 0.02:
            problems.append(f"{key[0]}: paid {paid} x cdf {cdf} vs ultimate {ult}, reserve {res}")
    return Outcome(not problems and len(rows) > 0, "; ".join(problems[:6]) or "consistent",
                   expected="ultimate = paid x cdf, reserve = ultimate - paid", seen=problems[:6])


def _fully_developed_blank_as_zero(rows: dict, want: dict) -> dict:
    """A fully developed year has no reserve and so no Mack error: an empty cell there (chainladder
    reports NaN) is read as 0. Elsewhere an empty cell stays a miss."""
    view = {}
    for key, row in rows.items():
        ref = want.get(key)
        if ref is not None and ref["mack_se"] == 0 and is_empty(row.get("mack_se")):
            row = {**row, "mack_se": "0"}
        view[key] = row
    return view


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    tri_rows, tri_ok = load_csv(ctx.out("triangle.csv"), required_columns=TRI_COLUMNS)
    res_rows, res_ok = load_csv(ctx.out("reserves.csv"), required_columns=RES_COLUMNS)
    summary, summary_ok = load_json(ctx.out("summary.json"))
    r.gate("triangle.csv and reserves.csv have the required columns and summary.json is a JSON object",
           all_of([tri_ok, res_ok, summary_ok]))
    total = ref["total"]
    r.gate("total chain-ladder reserve within 2 % and total Mack s.e. within 10 %", all_of([
        ("cl_reserve", near(get(summary, "total.cl_reserve"), total["cl_reserve"], rel=CRUX_RESERVE_REL)),
        ("mack_se", near(get(summary, "total.mack_se"), total["mack_se"], rel=CRUX_MACK_REL)),
    ]))

    cells = rows_by(tri_rows, _int_key("accident_year", "dev_months"))
    want_cells = {(c["accident_year"], c["dev_months"]): c for c in ref["triangle"]}
    r.check("exactly the observed cells of the triangle (no cell past the valuation date)", 1,
            all_of([cells.coverage(want_cells), Outcome(set(cells) <= set(want_cells), "no extra cells",
                                                        seen=sorted(str(k) for k in set(cells) - set(want_cells))[:6])]))
    r.check("cumulative paid loss net of recoveries, without ALAE, in every cell", 3,
            match_rows(cells, want_cells, ["cumulative_paid"], abs=0.02))
    ldf = get(summary, "ldf")
    r.check("volume-weighted age-to-age factors", 2,
            all_of([(k, near(get(ldf, k) if isinstance(ldf, dict) else None, v, abs=RATIO)) for k, v in ref["ldf"].items()]))

    years = rows_by(res_rows, _int_key("accident_year"))
    want_years = {(o["accident_year"],): o for o in ref["origins"]}
    r.check("one row per accident year 2016-2025", 1, years.coverage(want_years))
    r.check("paid to date, CDFs and chain-ladder ultimates and reserves by accident year", 2, all_of([
        ("paid_to_date", match_rows(years, want_years, ["paid_to_date", "cl_ultimate", "cl_reserve"], abs=MONEY)),
        ("cdf", match_rows(years, want_years, ["cdf"], abs=RATIO)),
    ]))
    r.check("Mack standard error of each accident year", 3,
            match_rows(_fully_developed_blank_as_zero(years, want_years), want_years, ["mack_se"],
                       rel=MACK_REL, abs=0.01))
    r.check("Mack standard error and CV of all years together", 3, all_of([
        ("mack_se", near(get(summary, "total.mack_se"), total["mack_se"], rel=MACK_REL)),
        ("mack_cv", near(get(summary, "total.mack_cv"), total["mack_cv"], abs=RATIO)),
    ]))
    r.check("Bornhuetter-Ferguson ultimates and total reserve", 2, all_of([
        ("by year", match_rows(years, want_years, ["bf_ultimate"], abs=MONEY)),
        ("total", near(get(summary, "total.bf_reserve"), total["bf_reserve"], abs=MONEY)),
    ]))
    r.check("Cape Cod loss ratio, ultimates and total reserve", 2, all_of([
        ("elr", near(get(summary, "total.cape_cod_elr"), total["cape_cod_elr"], abs=RATIO)),
        ("by year", match_rows(years, want_years, ["cc_ultimate"], abs=MONEY)),
        ("total", near(get(summary, "total.cc_reserve"), total["cc_reserve"], abs=MONEY)),
    ]))
    r.check("totals: paid to date and chain-ladder reserve", 1, all_of([
        ("paid_to_date", near(get(summary, "total.paid_to_date"), total["paid_to_date"], abs=MONEY)),
        ("cl_reserve", near(get(summary, "total.cl_reserve"), total["cl_reserve"], abs=MONEY)),
    ]))
    r.check("ultimate = paid x CDF and reserve = ultimate - paid in every row", 1, _consistent(years, want_years))
    r.check("valuation date 2025-12-31", 1,
            Outcome(get(summary, "valuation_date") == "2025-12-31", "as required", expected="2025-12-31",
                    seen=str(get(summary, "valuation_date"))))
    return r
