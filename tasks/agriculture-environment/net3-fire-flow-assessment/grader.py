"""Grader of net3-fire-flow-assessment: fire flows, requirements and deficiencies against the
reference bisection on EPANET (the value at each hydrant is unique: pressure falls
monotonically with the added demand in the steady-state snapshot)."""

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
    rows_by,
    same_set,
)

# The search is asked to 2 % or 25 gpm, whichever is larger: bisection on a flow up to 5000 gpm
# stops at a few gpm, and hydrant flows are reported to the gallon.
FLOW_REL, FLOW_ABS = 0.02, 25.0
# Coarse bound of the crux gate: a residual criterion, a unit or a multiplier misapplied moves
# the flows by 20 % or more; 6 of 8 hydrants within 10 % leaves room for one odd hydrant.
COARSE_REL, COARSE_MIN_HYDRANTS = 0.10, 6
REQUIRED_ABS = 1.0  # required flows converted from L/s, asked to 0.1 gpm


def yes_no(value: object) -> bool | None:
    text = str(value).strip().lower()
    return {"yes": True, "no": False, "true": True, "false": False}.get(text)


def names(value: object) -> object:
    """Junction ids as text (a JSON list may hold numbers); anything else is passed on as is."""
    return [str(v) for v in value] if isinstance(value, list) else value


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    hydrants = ref["hydrants"]

    rows, rows_ok = load_csv(ctx.out("fireflow.csv"),
                             required_columns=["hydrant", "required_gpm", "available_gpm", "meets_requirement"])
    summary, summary_ok = load_json(ctx.out("summary.json"))
    readable = [r.gate("fireflow.csv has columns hydrant, required_gpm, available_gpm, meets_requirement", rows_ok),
                r.gate("summary.json parses as a JSON object", summary_ok)]
    if not all(readable):
        return r
    seen = rows_by(rows, "hydrant")
    r.gate("one row per hydrant of the sheet", seen.coverage(sorted(hydrants)))

    close = [h for h, want in hydrants.items()
             if (got := as_number(get(seen.get(h), "available_gpm"))) is not None
             and abs(got - want["available_gpm"]) <= COARSE_REL * want["available_gpm"]]
    r.gate("available fire flows near the reference EPANET values (6 of 8 within 10 %)", Outcome(
        len(close) >= COARSE_MIN_HYDRANTS, f"{len(close)} of {len(hydrants)} hydrants within 10 %",
        expected=f">= {COARSE_MIN_HYDRANTS}", seen=sorted(close)))

    expected_flow = {h: {"available_gpm": v["available_gpm"]} for h, v in hydrants.items()}
    r.check("available fire flow at 20 psi residual, every hydrant", 3,
            match_rows(seen, expected_flow, ["available_gpm"], rel=FLOW_REL, abs=FLOW_ABS))
    expected_required = {h: {"required_gpm": v["required_gpm"]} for h, v in hydrants.items()}
    r.check("required fire flows in gpm (sheet units converted)", 1,
            match_rows(seen, expected_required, ["required_gpm"], abs=REQUIRED_ABS))
    r.check("meets_requirement for every hydrant", 2, all_of([
        (h, Outcome(yes_no(get(seen.get(h), "meets_requirement")) is v["meets"],
                    "", expected="yes" if v["meets"] else "no", seen=str(get(seen.get(h), "meets_requirement"))))
        for h, v in sorted(hydrants.items())]))
    deficient = sorted(h for h, v in hydrants.items() if not v["meets"])
    r.check("summary: deficient hydrants", 1, same_set(names(get(summary, "deficient_hydrants")), deficient))
    r.check("summary: junctions below 20 psi at max day without fire flow", 1,
            same_set(names(get(summary, "low_pressure_junctions")), ref["low_pressure_junctions"]))
    return r
