"""Grader for oats-split-plot-eonr.

The reference comes from R by a route independent of aov(Error()): whole-plot error from the 18
whole-plot means, sub-plot error from an lm on the 72 sub-plots, contrast SS from the
orthogonal-polynomial coefficients. Tolerances:
- df exact (they define the strata); Satterthwaite df 0.01 (a derived real number);
- F 0.01 % and p 0.1 %: unit-free and exact in any correct software (6 significant digits, the
  precision the instruction allows, are within them); the single-error-term mistake moves the
  variety F from 2.92 to 7.95 (p 0.10 -> 0.0009);
- SS, MS, SED, LSD, betas 0.05 %: allows the conversion factors rounded to 4 significant digits
  (squared for SS); leaving yields in quarter-pounds is a factor 22 (SS 500);
- means 0.5 kg/ha (~0.02 %): same reason;
- EONR 0.5 kg N/ha: a tenth of the 5 kg/ha granularity spreaders are set to, far below the
  20-60 kg/ha shifts of a wrong price ratio, a linear-plateau or an unconverted N axis;
- yield gain 2 kg/ha and net return 0.5 USD/ha: they follow from the betas and EONR above;
- the contrast SS adding up to the nitrogen SS: 2e-5 relative, the sum of four values each
  rounded to 6 significant digits (up to 5e-6 each) stays inside it.
"""

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    near,
    rows_by,
)

ANOVA_ROWS = [
    ("block", "Residuals"), ("whole_plot", "variety"), ("whole_plot", "Residuals"),
    ("sub_plot", "nitrogen"), ("sub_plot", "variety:nitrogen"), ("sub_plot", "Residuals"),
]
F_REL, P_REL, SS_REL = 1e-4, 1e-3, 5e-4
ADD_UP_REL = 2e-5
MEAN_ABS, EONR_ABS, GAIN_ABS, NET_ABS = 0.5, 0.5, 2.0, 0.5
COMPARISONS = ["variety_means", "nitrogen_means", "nitrogen_within_variety", "variety_within_nitrogen"]


def _p(seen, expected):
    # p-values span 1e-13..0.9: relative tolerance, with a floor for values printed as 0.
    return near(seen, expected, rel=P_REL, abs=1e-15)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")

    anova, anova_ok = load_csv(ctx.out("anova.csv"), required_columns=[
        "stratum", "term", "df", "sum_sq", "mean_sq", "f_value", "p_value"])
    r.gate("anova.csv parses with the required columns", anova_ok)
    contrasts, contrasts_ok = load_csv(ctx.out("contrasts.csv"), required_columns=[
        "contrast", "df", "sum_sq", "f_value", "p_value"])
    means, _ = load_csv(ctx.out("means.csv"), required_columns=["variety", "nitrogen_kg_ha", "yield_kg_ha"])
    comps, _ = load_csv(ctx.out("comparisons.csv"), required_columns=["comparison", "sed", "df", "lsd_5pct"])
    eonr, eonr_ok = load_json(ctx.out("eonr.json"))

    rows = rows_by(anova, ("stratum", "term"))

    def cell(stratum, term, col):
        return rows.get((stratum, term), {}).get(col)

    r.check("ANOVA has the three error strata with the right terms and df", 2, all_of([
        (f"{s}/{t}/df", near(cell(s, t, "df"), ref[s][t]["df"], abs=1e-9)) for s, t in ANOVA_ROWS]))
    r.check("variety tested against the whole-plot error (F, p)", 3, all_of([
        ("F", near(cell("whole_plot", "variety", "f_value"), ref["whole_plot"]["variety"]["f"], rel=F_REL)),
        ("p", _p(cell("whole_plot", "variety", "p_value"), ref["whole_plot"]["variety"]["p"])),
    ]))
    r.check("nitrogen and variety x nitrogen tested against the sub-plot error (F, p)", 2, all_of(
        [(f"{t}/F", near(cell("sub_plot", t, "f_value"), ref["sub_plot"][t]["f"], rel=F_REL))
         for t in ("nitrogen", "variety:nitrogen")]
        + [(f"{t}/p", _p(cell("sub_plot", t, "p_value"), ref["sub_plot"][t]["p"]))
           for t in ("nitrogen", "variety:nitrogen")]))
    r.check("sums of squares and mean squares in (kg/ha)^2", 2, all_of(
        [(f"{s}/{t}/sum_sq", near(cell(s, t, "sum_sq"), ref[s][t]["ss"], rel=SS_REL)) for s, t in ANOVA_ROWS]
        + [(f"{s}/{t}/mean_sq", near(cell(s, t, "mean_sq"), ref[s][t]["ss"] / ref[s][t]["df"], rel=SS_REL))
           for s, t in ANOVA_ROWS]))

    crow = rows_by(contrasts, "contrast")
    items = []
    for name in ("linear", "quadratic", "cubic"):
        exp = ref["contrast"][name]
        got = crow.get(name, {})
        items += [(f"{name}/df", near(got.get("df"), 1, abs=1e-9)),
                  (f"{name}/sum_sq", near(got.get("sum_sq"), exp["ss"], rel=SS_REL)),
                  (f"{name}/F", near(got.get("f_value"), exp["f"], rel=F_REL)),
                  (f"{name}/p", _p(got.get("p_value"), exp["p"]))]
    r.check("orthogonal polynomial contrasts of nitrogen (SS, F, p)", 2, all_of(items) if contrasts_ok else contrasts_ok)
    parts = [as_number(crow.get(n, {}).get("sum_sq")) for n in ("linear", "quadratic", "cubic")]
    total = as_number(cell("sub_plot", "nitrogen", "sum_sq"))
    r.check("the three contrast SS add up to the nitrogen SS in anova.csv", 1,
            near(sum(parts), total, rel=ADD_UP_REL) if None not in parts and total is not None
            else Outcome(False, "contrast or nitrogen SS missing", expected="three contrasts and the nitrogen row"))

    rate_of = dict(ref["rate"])

    def find_mean(variety, rate_key):
        for x in means or []:
            if x.get("variety") != variety:
                continue
            n = x.get("nitrogen_kg_ha")
            if rate_key == "all":
                if n == "all":
                    return x.get("yield_kg_ha")
            elif as_number(n) is not None and abs(as_number(n) - rate_of[rate_key]) <= 0.01:
                return x.get("yield_kg_ha")
        return None

    varieties = sorted(v for v in ref["mean"] if v != "all")
    rates = sorted(rate_of)
    r.check("variety x nitrogen cell means in kg/ha (rates in kg N/ha)", 2, all_of([
        (f"{v}@{n}", near(find_mean(v, n), ref["mean"][v][n], abs=MEAN_ABS)) for v in varieties for n in rates]))
    r.check("variety, nitrogen and grand means in kg/ha", 1, all_of(
        [(f"{v}@all", near(find_mean(v, "all"), ref["mean"][v]["all"], abs=MEAN_ABS)) for v in varieties]
        + [(f"all@{n}", near(find_mean("all", n), ref["mean"]["all"][n], abs=MEAN_ABS)) for n in rates]
        + [("all@all", near(find_mean("all", "all"), ref["mean"]["all"]["all"], abs=MEAN_ABS))]))

    crows = rows_by(comps, "comparison")

    def comparison(name, df_abs):
        exp, got = ref["sed"][name], crows.get(name, {})
        return [(f"{name}/sed", near(got.get("sed"), exp["sed"], rel=SS_REL)),
                (f"{name}/df", near(got.get("df"), exp["df"], abs=df_abs)),
                (f"{name}/lsd", near(got.get("lsd_5pct"), exp["lsd"], rel=SS_REL))]

    r.check("SED and LSD for variety means (whole-plot error) and nitrogen means (sub-plot error)", 2,
            all_of(comparison("variety_means", 1e-9) + comparison("nitrogen_means", 1e-9)))
    r.check("SED and LSD for nitrogen within a variety and for varieties at one rate (Satterthwaite df)", 2,
            all_of(comparison("nitrogen_within_variety", 1e-9) + comparison("variety_within_nitrogen", 0.01)))

    e = ref["eonr"]
    r.check("quadratic N response and economic optimum N rate", 3, all_of([
        ("beta_linear", near(get(eonr, "beta_linear"), e["beta_linear"], rel=SS_REL)),
        ("beta_quadratic", near(get(eonr, "beta_quadratic"), e["beta_quadratic"], rel=SS_REL)),
        ("price_ratio", near(get(eonr, "price_ratio"), e["price_ratio"], rel=1e-6)),
        ("eonr_kg_n_ha", near(get(eonr, "eonr_kg_n_ha"), e["eonr_kg_n_ha"], abs=EONR_ABS)),
        ("capped", Outcome(get(eonr, "capped") is bool(e["capped"]), "", expected=bool(e["capped"]),
                           seen=get(eonr, "capped", None))),
    ]) if eonr_ok else eonr_ok)
    r.check("yield gain and net return at the EONR", 1, all_of([
        ("yield_gain_kg_ha", near(get(eonr, "yield_gain_kg_ha"), e["yield_gain_kg_ha"], abs=GAIN_ABS)),
        ("net_return_usd_ha", near(get(eonr, "net_return_usd_ha"), e["net_return_usd_ha"], abs=NET_ABS)),
    ]) if eonr_ok else eonr_ok)
    return r
