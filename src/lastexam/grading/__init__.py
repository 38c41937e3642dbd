"""The grading library that task graders import. Standard library only (openpyxl is imported
lazily by the XLSX loader); it runs inside the grading sandbox.

    from lastexam.grading import GradeContext, Rubric, load_json, near

    def grade(ctx: GradeContext) -> Rubric:
        r = Rubric()
        summary, parsed = load_json(ctx.out("summary.json"))
        r.gate("summary.json parses", parsed)
        r.check("NPV within 0.1%", 3, near(get(summary, "npv"), 1234.5, rel=1e-3))
        return r
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported on first use (PEP 562): a grader pays only for the loaders it calls,
# which matters because every grading starts a fresh Python in a fresh sandbox.
_MODULE_OF = {
    "GradeContext": "context",
    **dict.fromkeys(
        ["column", "inputs_untampered", "is_file", "load_csv", "load_json", "load_xlsx", "load_xml",
         "read_text"],
        "files",
    ),
    **dict.fromkeys(["Recalculated", "is_error_value", "recalculate_xlsx"], "office"),
    **dict.fromkeys(["Check", "Outcome", "Rubric", "full_pass_of", "score_of"], "rubric"),
    **dict.fromkeys(
        ["MISSING", "as_number", "equal", "get", "is_empty", "near", "same_set", "within"], "values"
    ),
    **dict.fromkeys(["all_of", "no_problems"], "combine"),
    **dict.fromkeys(["Keyed", "match_rows", "rows_by"], "tables"),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'lastexam.grading' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lastexam.grading.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from lastexam.grading.combine import all_of, no_problems
    from lastexam.grading.context import GradeContext
    from lastexam.grading.files import (
        column,
        inputs_untampered,
        is_file,
        load_csv,
        load_json,
        load_xlsx,
        load_xml,
        read_text,
    )
    from lastexam.grading.office import Recalculated, is_error_value, recalculate_xlsx
    from lastexam.grading.rubric import Check, Outcome, Rubric, full_pass_of, score_of
    from lastexam.grading.tables import Keyed, match_rows, rows_by
    from lastexam.grading.values import (
        MISSING,
        as_number,
        equal,
        get,
        is_empty,
        near,
        same_set,
        within,
    )

__all__ = [
    "MISSING",
    "Check",
    "GradeContext",
    "Keyed",
    "Outcome",
    "Recalculated",
    "Rubric",
    "all_of",
    "as_number",
    "column",
    "equal",
    "full_pass_of",
    "get",
    "inputs_untampered",
    "is_empty",
    "is_error_value",
    "is_file",
    "load_csv",
    "load_json",
    "load_xlsx",
    "load_xml",
    "match_rows",
    "near",
    "no_problems",
    "read_text",
    "recalculate_xlsx",
    "rows_by",
    "same_set",
    "score_of",
    "within",
]
