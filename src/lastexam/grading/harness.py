"""Entry point inside the grading sandbox: python3 -m lastexam.grading.harness CONTEXT RESULT.

Loads the task's grader.py, calls grade(ctx), prepends the input-tamper gate and writes the
rubric as JSON. A grader that raises, or returns something other than a Rubric, produces an
"error" result: the harness records it as grader_error, never as a score of 0.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import traceback
from pathlib import Path

from lastexam.grading.context import GradeContext
from lastexam.grading.files import inputs_untampered
from lastexam.grading.rubric import Rubric

TAMPER_GATE = "inputs untampered"


def run_grader(ctx: GradeContext) -> Rubric:
    grader_path = ctx.task / "grader.py"
    spec = importlib.util.spec_from_file_location("lastexam_task_grader", grader_path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {grader_path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ctx.task))
    spec.loader.exec_module(module)
    grade = getattr(module, "grade", None)
    if not callable(grade):
        raise TypeError(f"{grader_path} defines no function grade(ctx)")
    rubric = grade(ctx)
    if not isinstance(rubric, Rubric):
        raise TypeError(f"grade(ctx) returned {type(rubric).__name__}, expected a Rubric")
    tamper = Rubric()
    tamper.gate(TAMPER_GATE, inputs_untampered(ctx.inputs_after, ctx.inputs))
    rubric.checks[:0] = tamper.checks
    return rubric


def _finite(value: object) -> object:
    """Evidence may hold NaN or infinities read from agent output; JSON has no such numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def main(argv: list[str]) -> int:
    context_path, result_path = Path(argv[0]), Path(argv[1])
    ctx = GradeContext.from_json(json.loads(context_path.read_text()))
    try:
        result = {"status": "ok", "rubric": run_grader(ctx).to_dict()}
        text = json.dumps(_finite(result), allow_nan=False, default=repr)
        code = 0
    except BaseException:  # the grader's failure, whatever it is, is reported, not hidden
        text = json.dumps({"status": "error", "error": traceback.format_exc(limit=20)[-8000:]})
        code = 3
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, result_path)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
