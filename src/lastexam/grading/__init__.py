"""The grading library that task graders import. Standard library only (openpyxl and pypdf are
imported lazily by the XLSX and PDF loaders); it runs inside the grading sandbox.

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
        ["Loaded", "column", "contains_all", "exists", "hash_is", "inputs_untampered", "load_csv",
         "load_json", "load_xlsx", "pdf_text", "read_text", "sha256_file", "size_between",
         "zip_is_sane"],
        "files",
    ),
    "is_error_value": "office",
    "recalculate_xlsx": "office",
    **dict.fromkeys(["Check", "Outcome", "Rubric", "full_pass_of", "score_of"], "rubric"),
    **dict.fromkeys(
        ["MISSING", "all_near", "as_number", "equal", "get", "near", "same_set", "within"], "values"
    ),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'lastexam.grading' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lastexam.grading.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from lastexam.grading.context import GradeContext
    from lastexam.grading.files import (
        Loaded,
        column,
        contains_all,
        exists,
        hash_is,
        inputs_untampered,
        load_csv,
        load_json,
        load_xlsx,
        pdf_text,
        read_text,
        sha256_file,
        size_between,
        zip_is_sane,
    )
    from lastexam.grading.office import is_error_value, recalculate_xlsx
    from lastexam.grading.rubric import Check, Outcome, Rubric, full_pass_of, score_of
    from lastexam.grading.values import (
        MISSING,
        all_near,
        as_number,
        equal,
        get,
        near,
        same_set,
        within,
    )

__all__ = [
    "MISSING",
    "Check",
    "GradeContext",
    "Loaded",
    "Outcome",
    "Rubric",
    "all_near",
    "as_number",
    "column",
    "contains_all",
    "equal",
    "exists",
    "full_pass_of",
    "get",
    "hash_is",
    "inputs_untampered",
    "is_error_value",
    "load_csv",
    "load_json",
    "load_xlsx",
    "near",
    "pdf_text",
    "read_text",
    "recalculate_xlsx",
    "same_set",
    "score_of",
    "sha256_file",
    "size_between",
    "within",
    "zip_is_sane",
]
