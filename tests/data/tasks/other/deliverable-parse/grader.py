"""Grader for deliverable-parse (a harness test task): every deliverable goes through a library
loader, and the codes through a regular expression with nested quantifiers, a mistake graders
make. Crafted deliverables must end in failed checks or, when they exhaust the grader's time or
memory, in grader_error."""

import re

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    column,
    get,
    load_csv,
    load_json,
    load_xlsx,
    near,
    read_text,
    same_set,
)

# Backtracks exponentially on a long run of capitals that does not end in a code.
CODE = re.compile(r"([A-Z]+)*-[0-9]{3}")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    summary, parsed = load_json(ctx.out("summary.json"))
    r.gate("summary.json parses as a JSON object", parsed)
    # 1e-6: the amounts have two decimals; any sum order gives the same total to that precision.
    r.check("summary total", 2, near(get(summary, "total"), ref["total"], abs=1e-6))
    r.check("summary region count", 1, near(get(summary, "regions"), len(ref["regions"])))

    rows, table_ok = load_csv(ctx.out("regions.csv"), required_columns=["region", "amount"])
    r.check("regions.csv has region and amount", 1, table_ok)
    r.check("regions.csv lists every region", 1, same_set(column(rows, "region"), list(ref["regions"])))

    book, opened = load_xlsx(ctx.out("book.xlsx"))
    r.check("book.xlsx opens", 1, opened)
    total = None
    if book is not None and "Totals" in book.sheetnames:
        total = book["Totals"]["B1"].value
    r.check("book.xlsx Totals!B1 is the total", 2, near(total, ref["total"], abs=1e-6))

    text, _ = read_text(ctx.out("codes.txt"))
    codes = (text or "").split()
    well_formed = [c for c in codes if CODE.fullmatch(c)]
    r.check("codes.txt codes are well formed", 1,
            Outcome(bool(codes) and len(well_formed) == len(codes), f"{len(well_formed)} of {len(codes)} well formed"))
    r.check("codes.txt codes", 2, Outcome(codes == ref["codes"], "as expected" if codes == ref["codes"] else "differ",
                                          expected=ref["codes"], seen=codes[:10]))
    return r
