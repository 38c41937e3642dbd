"""Grader for wedding-outbreak-cohort.

The expected statistics are computed here from the true cohort (reference/truth.json: who is
in the cohort, who is a case, what each guest ate), with the methods the instruction names.

Tolerances: ratios, proportions and limits within 0.1 % relative (the instruction asks for at
least 4 significant digits; rounding there costs at most 0.05 %). Fisher p within 1 % relative
(implementations differ in how they sum tables of equal probability) or 1e-9 absolute for tiny
p. Incubation periods within 0.01 h (onsets are recorded to the minute, 0.017 h). Counts exact.

The 2x2 counts are checked against the true cohort; the attack rates, risk ratios, limits and
Fisher p of each row are checked against what the named methods give for that row's own counts,
so one guest misclassified costs the cleaning checks, not every statistic computed after it.
"""

import math
from statistics import median

from scipy.stats import fisher_exact

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

ITEMS = ["bruschetta", "caesar_salad", "salmon", "chicken", "roast_potatoes", "green_beans",
         "tiramisu", "fruit_salad", "coffee", "wine"]
TABLE_COLUMNS = ["item", "exp_cases", "exp_total", "ar_exp", "unexp_cases", "unexp_total", "ar_unexp",
                 "rr", "rr_lcl", "rr_ucl", "fisher_p"]
REL = 1e-3
Z = 1.959963984540054
CRUX_AGREEMENT = 0.9
MAX_COUNT = 10**6  # agent counts above this are not a guest list's; nor worth an exact test


def two_by_two(cohort: dict, item: str, among: dict | None = None) -> tuple[int, int, int, int]:
    a = n1 = c = n0 = 0
    for g in (among or cohort).values():
        if g["ate"][item] == "Y":
            a, n1 = a + g["case"], n1 + 1
        elif g["ate"][item] == "N":
            c, n0 = c + g["case"], n0 + 1
    return a, n1, c, n0


def statistics(a: int, n1: int, c: int, n0: int) -> dict:
    rr = (a / n1) / (c / n0)
    se = math.sqrt(1 / a - 1 / n1 + 1 / c - 1 / n0)  # Katz log method
    return {"exp_cases": a, "exp_total": n1, "ar_exp": a / n1, "unexp_cases": c, "unexp_total": n0,
            "ar_unexp": c / n0, "rr": rr, "rr_lcl": rr * math.exp(-Z * se), "rr_ucl": rr * math.exp(Z * se),
            "fisher_p": float(fisher_exact([[a, n1 - a], [c, n0 - c]])[1])}


def expected_table(cohort: dict) -> dict:
    return {it: statistics(*two_by_two(cohort, it)) for it in ITEMS}


def own_counts_table(items: dict, table: dict) -> dict:
    """The statistics of each item from the agent's own 2x2 counts; the true row where those
    counts are not whole numbers that every statistic is defined for."""
    out = {}
    for it, want in table.items():
        row = items.get(it) if isinstance(items.get(it), dict) else {}
        counts = [as_number(row.get(f)) for f in ("exp_cases", "exp_total", "unexp_cases", "unexp_total")]
        whole = all(isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) <= MAX_COUNT and x == int(x)
                    for x in counts)
        a, n1, c, n0 = (int(x) for x in counts) if whole else (0, 0, 0, 0)
        out[it] = statistics(a, n1, c, n0) if whole and 0 < a < n1 and 0 < c < n0 else want
    return out


def mantel_haenszel(cohort: dict, item: str, by: str) -> tuple[float, float, float]:
    num = den = var = 0.0
    for level in ("Y", "N"):
        stratum = {k: g for k, g in cohort.items() if g["ate"][by] == level}
        a, n1, b, n0 = two_by_two(cohort, item, stratum)
        t = n1 + n0
        num, den = num + a * n0 / t, den + b * n1 / t
        var += ((a + b) * n1 * n0 - a * b * t) / t**2
    rr, se = num / den, math.sqrt(var / (num * den))  # Greenland-Robins variance
    return rr, rr * math.exp(-Z * se), rr * math.exp(Z * se)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    cohort = ctx.reference_json("truth.json")["cohort"]
    table = expected_table(cohort)
    ranked = sorted(table, key=lambda it: -table[it]["rr"])
    cases = {k: g for k, g in cohort.items() if g["case"]}
    inc = [g["incubation_h"] for g in cases.values()]

    rows, ok_c = load_csv(ctx.out("cohort.csv"), required_columns=["guest_id", "case", "incubation_h"])
    trows, ok_t = load_csv(ctx.out("food_table.csv"), required_columns=TABLE_COLUMNS)
    summary, ok_s = load_json(ctx.out("summary.json"))
    r.gate("cohort.csv, food_table.csv and summary.json are readable with the required columns",
           all_of([("cohort.csv", ok_c), ("food_table.csv", ok_t), ("summary.json", ok_s)]))
    seen = rows_by(rows, "guest_id")
    agree = sum(1 for k, g in cohort.items() if k in seen and as_number(seen[k].get("case")) == g["case"])
    r.gate("the vehicle is identified and the case definition applied (>= 90 % of the cohort classified right)",
           all_of([("vehicle", equal(get(summary, "vehicle", None), ranked[0])),
                   ("classification", Outcome(agree >= CRUX_AGREEMENT * len(cohort),
                                              f"{agree} of {len(cohort)} guests classified as expected",
                                              expected=len(cohort), seen=agree))]))

    r.check("cohort: one row per eligible respondent, duplicates and exclusions removed", 2, seen.coverage(cohort))
    r.check("case classification (clinical and time criteria)", 2, match_rows(
        seen, {k: {"case": g["case"]} for k, g in cohort.items()}, ["case"], exact=True))
    r.check("incubation period of each case from the meal start", 1, match_rows(
        seen, {k: {"incubation_h": g["incubation_h"]} for k, g in cases.items()}, ["incubation_h"], abs=0.01))

    items = rows_by(trows, "item")
    r.check("food table: 2x2 counts per item (missing answers excluded per item)", 2, all_of([
        ("items", items.coverage(table)),
        ("counts", match_rows(items, table, ["exp_cases", "exp_total", "unexp_cases", "unexp_total"], exact=True))]))
    own = own_counts_table(items, table)
    r.check("food table: attack rates and risk ratios of each row's 2x2 counts", 1,
            match_rows(items, own, ["ar_exp", "ar_unexp", "rr"], rel=REL))
    r.check("food table: 95 % confidence limits of the risk ratio (log method) of each row's counts", 1,
            match_rows(items, own, ["rr_lcl", "rr_ucl"], rel=REL))
    r.check("food table: two-sided Fisher exact p of each row's counts", 1,
            match_rows(items, own, ["fisher_p"], rel=1e-2, abs=1e-9))

    r.check("cohort size, cases and overall attack rate", 1, all_of([
        ("cohort_size", equal(get(summary, "cohort_size", None), len(cohort))),
        ("cases", equal(get(summary, "cases", None), len(cases))),
        ("attack_rate", near(get(summary, "attack_rate", None), len(cases) / len(cohort), rel=REL))]))
    r.check("incubation median and range", 1, all_of([
        ("median", near(get(summary, "incubation_median_h", None), median(inc), abs=0.01)),
        ("min", near(get(summary, "incubation_min_h", None), min(inc), abs=0.01)),
        ("max", near(get(summary, "incubation_max_h", None), max(inc), abs=0.01))]))
    mh = mantel_haenszel(cohort, ranked[1], ranked[0])
    r.check("second item and its Mantel-Haenszel RR stratified by the vehicle (Greenland-Robins CI)", 2, all_of([
        ("second_item", equal(get(summary, "second_item", None), ranked[1])),
        ("rr", near(get(summary, "second_mh_rr", None), mh[0], rel=REL)),
        ("lcl", near(get(summary, "second_mh_lcl", None), mh[1], rel=REL)),
        ("ucl", near(get(summary, "second_mh_ucl", None), mh[2], rel=REL))]))
    bins = [int(h // 6) for h in inc]
    curve = [bins.count(k) for k in range(max(bins) + 1)]
    r.check("epidemic curve in 6-hour intervals from the meal start", 1,
            equal(get(summary, "epi_curve_6h", None), curve))
    return r
