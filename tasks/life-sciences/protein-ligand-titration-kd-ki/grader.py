"""Grader for protein-ligand-titration-kd-ki.

The reference is an exact least-squares analysis of seeded data, so any correct route (another
optimiser, K fitted linearly with the interval taken on log10 K) reaches the same minimum to far
better than the tolerances, which are fractions of the reference's own uncertainty:
- per-series K: 0.25 reference standard errors of log10 K (about 0.6 % here). Skipping the
  inner-filter correction moves Kd by about 8 standard errors, keeping the mis-pipetted point
  moves series B by about 3.5; rounding to 4 significant figures costs 0.05 %.
- f_free / f_bound: 1 % (they absorb the inner-filter and dilution errors, 2-30 %).
- global K: 0.1 x the reference log10 interval width (about 0.4 standard errors); interval
  bounds 0.05 x that width. The interval's method is checked apart from its position: its
  log10 width within 0.5 % of the reference width (a z quantile makes it 2.4 % narrower) and
  its log10 asymmetry about the reported K within 0.005 x the width (an interval symmetric on
  K in uM is 1.4-2 % asymmetric); 4 significant figures cost at most 0.15 %.
The crux gate is coarse (30 %): the free-equals-total hyperbola puts Kd 2.8 times too high.
"""

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
    same_set,
)

FIT_COLUMNS = ["experiment", "series", "n_used", "excluded_steps", "K_uM", "f_free", "f_bound"]
GATE_REL = 0.30
SERIES_SE_FRACTION = 0.25
COEF_REL = 0.01
GLOBAL_WIDTH_FRACTION, BOUND_WIDTH_FRACTION = 0.1, 0.05
INTERVAL_SHAPE_FRACTION = 0.005


def log10_of(value: object) -> float | None:
    x = as_number(value)
    return math.log10(x) if x is not None and x > 0 else None


def log_near(seen: object, expected: float, tol: float) -> Outcome:
    lx = log10_of(seen)
    if lx is None:
        return Outcome(False, "not a positive number", expected=expected, seen=str(seen)[:80])
    return near(lx, math.log10(expected), abs=tol)


def steps_key(text: object) -> str:
    parts = [p.strip() for p in str(text or "").replace(",", ";").split(";") if p.strip()]
    numbers = [as_number(p) for p in parts]
    parts = [str(int(n)) if n is not None and n == int(n) else p for p, n in zip(parts, numbers, strict=True)]
    return ";".join(sorted(parts, key=lambda p: (len(p), p)))


def point_keys(points: object) -> list[str]:
    if not isinstance(points, list):
        return ["<not a list>"]
    keys = []
    for p in points:
        step = as_number(get(p, "step", None)) if isinstance(p, dict) else None
        keys.append(f"{get(p, 'experiment', '?')}|{get(p, 'series', '?')}|{int(step) if step is not None else '?'}"
                    if isinstance(p, dict) else "<not an object>")
    return keys


def interval(summary: object, name: str, ref: list[float], width: float) -> Outcome:
    ci = get(summary, f"{name}_ci95_uM", None)
    if not isinstance(ci, list) or len(ci) != 2:
        return Outcome(False, f"{name}_ci95_uM is not a [low, high] list", expected=ref, seen=str(ci)[:80])
    low, high, value = log10_of(ci[0]), log10_of(ci[1]), log10_of(get(summary, f"{name}_uM", None))
    shape = Outcome(False, "bounds or value not positive numbers", expected=ref, seen=str(ci)[:80])
    if low is not None and high is not None and value is not None:
        shape = all_of([("log10 width (t quantile)", near(high - low, width, rel=INTERVAL_SHAPE_FRACTION)),
                        ("symmetric on log10 K", near((high - value) - (value - low), 0.0,
                                                      abs=INTERVAL_SHAPE_FRACTION * width))])
    tol = BOUND_WIDTH_FRACTION * width
    return all_of([("low", log_near(ci[0], ref[0], tol)), ("high", log_near(ci[1], ref[1], tol)),
                   ("shape", shape)])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    series_ref = ref["series"]

    summary, parsed = load_json(ctx.out("summary.json"))
    r.gate("summary.json parses as a JSON object", parsed)
    r.gate("ligand-depletion models: global Kd and Ki within 30 % of the reference", all_of([
        ("Kd", near(get(summary, "Kd_uM"), ref["Kd_uM"], rel=GATE_REL)),
        ("Ki", near(get(summary, "Ki_uM"), ref["Ki_uM"], rel=GATE_REL)),
    ]))

    rows, ok = load_csv(ctx.out("fits.csv"), required_columns=FIT_COLUMNS)
    fits = rows_by(rows, lambda row: f"{row['experiment'].strip().lower()}|{row['series'].strip().upper()}")
    r.check("fits.csv: one row per experiment and series", 1,
            fits.coverage(series_ref) if ok else ok)
    r.check("mis-pipetted point(s) found by the outlier rule", 2,
            same_set(point_keys(get(summary, "excluded_points", None)),
                     point_keys(ref["excluded_points"])))
    r.check("per-series points used and steps excluded", 1, all_of([
        (key, all_of([near(get(fits.get(key, {}), "n_used"), exp["n_used"], abs=0),
                      Outcome(steps_key(get(fits.get(key, {}), "excluded_steps", "")) == exp["excluded_steps"],
                              "excluded steps", expected=exp["excluded_steps"],
                              seen=str(get(fits.get(key, {}), "excluded_steps", ""))[:80])]))
        for key, exp in sorted(series_ref.items())]))
    for exp_name, label in (("direct", "Kd"), ("competition", "Ki")):
        r.check(f"per-series {label} of the {exp_name} titrations (0.25 standard errors, log10)", 2, all_of([
            (key, log_near(get(fits.get(key, {}), "K_uM"), exp["K_uM"], SERIES_SE_FRACTION * exp["se_log10K"]))
            for key, exp in sorted(series_ref.items()) if key.startswith(exp_name + "|")]))
    r.check("per-series signal coefficients f_free and f_bound (1 %)", 1,
            match_rows(fits, series_ref, ["f_free", "f_bound"], rel=COEF_REL))
    for name, weight in (("Kd", 3), ("Ki", 3)):
        ci = ref[f"{name}_ci95_uM"]
        width = math.log10(ci[1]) - math.log10(ci[0])
        r.check(f"global {name} (0.1 x the log10 interval width)", weight,
                log_near(get(summary, f"{name}_uM"), ref[f"{name}_uM"], GLOBAL_WIDTH_FRACTION * width))
        r.check(f"95 % interval of {name} (Wald on log10 K, t quantile)", 1,
                interval(summary, name, ci, width))
    return r
