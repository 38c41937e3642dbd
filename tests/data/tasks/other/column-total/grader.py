"""Grader for column-total (a harness test task)."""

from lastexam.grading import GradeContext, Rubric, equal, get, load_json, near


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    result, parsed = load_json(ctx.out("result.json"))
    r.gate("result.json parses as a JSON object", parsed)
    r.check("total", 2, near(get(result, "total"), ref["total"], abs=1e-6))
    r.check("count", 1, equal(get(result, "count"), ref["count"]))
    return r
