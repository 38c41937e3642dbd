"""Grader for semester-gradebook. Tolerances: TODO (say why each is what it is)."""

from lastexam.grading import GradeContext, Rubric, get, load_json, near


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    result, parsed = load_json(ctx.out("result.json"))
    r.gate("result.json parses as a JSON object", parsed)
    r.check("TODO: a professional correctness check", 1, near(get(result, "value"), ref["value"], rel=1e-3))
    return r
