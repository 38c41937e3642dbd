"""Grader for adjuvant-colon-dfs-sap.

Every number is double-programmed against R survival run on the source records of the trial.
Tolerances (the instruction asks for >= 6 significant digits, i.e. <= 5e-6 relative rounding):
- Counts exact.
- Hazard ratios and their CIs 2e-5 relative: coxph converges to ~1e-9 on log-HR, while the
  Efron instead of Breslow ties moves the arm log-HRs by 1.8e-4 to 3.3e-4, and a different
  model or population by far more.
- p-values and chi-squares 1e-3 relative (they are reported to 6 digits; the Efron variant
  moves the adjusted arm p by 6e-3 relative).
- KM medians and their CI limits 0.002 months: they are observed event times; a one-day shift
  (forgetting the +1 of the day count) is 0.033 months, 30.4167-day months 0.025 months.
- KM probabilities and CIs 1e-4 absolute: the log instead of log-log transform moves the
  36-month limits by 2e-3 to 6e-3.
- RMST and its SE 1e-3 months (relative 1e-4 on values near 40); difference and CI 2e-3.
"""

from __future__ import annotations

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    get,
    load_csv,
    load_json,
    near,
    rows_by,
)

ARMS = ("OBS", "LEV", "LEV5FU")
FOREST_COLUMNS = ["SUBGROUP", "LEVEL", "N", "EVENTS", "HR", "LCL", "UCL", "P_INTERACTION"]


def unflatten(flat: dict) -> dict:
    tree: dict = {}
    for key, value in flat.items():
        *path, leaf = key.split(".")
        node = tree
        for p in path:
            node = node.setdefault(p, {})
        node[leaf] = value
    return tree


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    want = unflatten(ref["results"])
    res, ok = load_json(ctx.out("results.json"))
    r.gate("results.json parses as a JSON object", ok)

    def value(path: str, expected, **tolerance) -> tuple[str, Outcome]:
        """results.json at `path` against the reference; no tolerance means exact."""
        return path, near(get(res, path), expected, **tolerance)

    r.check("ITT subjects and DFS events (recurrence or death) per arm", 2, all_of(
        [value(f"itt_n.{a}", want["itt_n"][a]) for a in ARMS]
        + [value(f"dfs_events.{a}", want["dfs_events"][a]) for a in ARMS]))
    r.check("KM median DFS (months) with log-log 95% CI per arm, null when not reached", 2, all_of(
        [value(f"dfs_km.{a}.{k}", want["dfs_km"][a][k], abs=0.002)
         for a in ARMS for k in ("median", "median_lcl", "median_ucl")]))
    r.check("KM DFS probability at 36 months with log-log 95% CI", 1, all_of(
        [value(f"dfs_km.{a}.{k}", want["dfs_km"][a][k], abs=1e-4)
         for a in ARMS for k in ("surv_36", "surv_36_lcl", "surv_36_ucl")]))

    # The stratified analyses (log-rank, adjusted and sensitivity Cox, PH test, OS) outweigh the
    # rest: an analysis that skips the stratification scores below half.
    lr = want["dfs_logrank_stratified"]
    r.check(
        "stratified log-rank test LEV5FU vs OBS (pooled invasion depth x surgery interval)",
        3,
        all_of([value(f"dfs_logrank_stratified.{k}", lr[k], rel=1e-3) for k in ("chisq", "p")]),
    )

    def cox_values(key):
        out = []
        for a in ("LEV", "LEV5FU"):
            out += [value(f"{key}.{k}.{a}", want[key][k][a], rel=2e-5) for k in ("hr", "lcl", "ucl")]
            if "p" in want[key]:
                out.append(value(f"{key}.p.{a}", want[key]["p"][a], rel=1e-3))
        return out

    ca = want["dfs_cox_adjusted"]
    r.check("adjusted Cox: complete-case N and events", 1,
            all_of([value(f"dfs_cox_adjusted.{k}", ca[k]) for k in ("n", "events")]))
    r.check("adjusted stratified Cox (Breslow ties): HR, 95% CI and p for LEV and LEV5FU", 4,
            all_of(cox_values("dfs_cox_adjusted")))

    ph = want["ph_test"]
    seen_viol = get(res, "ph_test.violating", None)
    viol_ok = isinstance(seen_viol, list) and sorted(map(str, seen_viol)) == sorted(ph["violating"])
    r.check(
        "proportional-hazards test (cox.zph): global p, arm p and violating covariates",
        2,
        all_of([value("ph_test.global_p", ph["global_p"], rel=1e-3), value("ph_test.arm_p", ph["arm_p"], rel=1e-3),
                ("ph_test.violating", Outcome(viol_ok, "matches" if viol_ok else "differs",
                                              expected=ph["violating"], seen=seen_viol))]),
    )

    sens = want["dfs_cox_sensitivity"]
    seen_strata = get(res, "dfs_cox_sensitivity.strata_added", None)
    strata_ok = isinstance(seen_strata, list) and sorted(map(str, seen_strata)) == sorted(sens["strata_added"])
    r.check(
        "sensitivity Cox with PH-violating covariates moved into the strata",
        2,
        all_of([*cox_values("dfs_cox_sensitivity"),
                ("dfs_cox_sensitivity.strata_added", Outcome(strata_ok, "matches" if strata_ok else "differs",
                                                             expected=sens["strata_added"], seen=seen_strata))]),
    )

    rm = want["dfs_rmst_60"]
    r.check("restricted mean DFS to 60 months with SE, OBS and LEV5FU", 1, all_of(
        [value(f"dfs_rmst_60.{a}.{k}", rm[a][k], abs=1e-3) for a in ("OBS", "LEV5FU") for k in ("rmst", "se")]))
    r.check("RMST difference LEV5FU - OBS with 95% CI", 1, all_of(
        [value(f"dfs_rmst_60.{k}", rm[k], abs=2e-3) for k in ("difference", "lcl", "ucl")]))

    os_ = want["os"]
    r.check("overall survival: deaths per arm and stratified HR with CI", 2, all_of(
        [value(f"os.events.{a}", os_["events"][a]) for a in ARMS] + cox_values("os")))

    rows, fok = load_csv(ctx.out("forest.csv"), required_columns=FOREST_COLUMNS)
    seen_rows = rows_by(rows, ("SUBGROUP", "LEVEL"))
    if not fok:
        for name, w in (("forest table: subgroup rows with N and events", 1), ("forest table: HR and 95% CI per subgroup level", 2), ("forest table: interaction p-values (likelihood-ratio)", 1)):
            r.check(name, w, Outcome(False, fok.message, expected=FOREST_COLUMNS))
        return r

    def forest(row: dict, column: str, **tolerance) -> tuple[str, Outcome]:
        label = f"{row['SUBGROUP']}/{row['LEVEL']} {column}"
        seen = seen_rows.get((row["SUBGROUP"], row["LEVEL"]), {}).get(column)
        return label, near(seen, float(row[column]), **tolerance)

    r.check("forest table: subgroup rows with N and events", 1, all_of(
        [("rows", seen_rows.coverage((row["SUBGROUP"], row["LEVEL"]) for row in ref["forest"]))]
        + [forest(row, k) for row in ref["forest"] for k in ("N", "EVENTS")]))
    r.check("forest table: HR and 95% CI per subgroup level", 2, all_of(
        [forest(row, k, rel=2e-5) for row in ref["forest"] for k in ("HR", "LCL", "UCL")]))
    r.check("forest table: interaction p-values (likelihood-ratio)", 1, all_of(
        [forest(row, "P_INTERACTION", rel=1e-3) for row in ref["forest"] if row["P_INTERACTION"] != ""]))
    return r
