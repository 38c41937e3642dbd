"""A grading rehearsed by the warm grading worker before it forks its slots: the library's own
grader below, on files it writes to a temporary folder. What a first grading pays once (lazy
imports, first calls, compiled patterns, the objects a first call creates) is then paid in the
worker instead of in every slot, each a fresh fork that would pay it again (the harness test
task's grading in a fresh fork: 5.2 ms without a rehearsal, 1.3 ms after one; docs/performance.md).
No task's code runs here: the grader is this module's."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from lastexam.grading.context import GradeContext
from lastexam.grading.harness import ok_result, run_grader

GRADER = '''
from lastexam.grading import (
    Rubric, all_of, as_number, equal, get, load_csv, load_json, match_rows, near, no_problems,
    read_text, rows_by, same_set, within,
)


def grade(ctx):
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    result, parsed = load_json(ctx.out("result.json"))
    r.gate("result.json parses", parsed)
    r.check("total", 2, near(get(result, "total"), ref["total"], abs=1e-6))
    r.check("count", 1, equal(get(result, "count"), ref["count"]))
    r.check("tags", 1, same_set(get(result, "tags"), ref["tags"]))
    r.check("range", 1, within(get(result, "total"), 0, 100))
    rows, loaded = load_csv(ctx.out("table.csv"), required_columns=["id", "value"])
    r.check("rows", 1, match_rows(rows_by(rows, "id"), rows_by(ref["rows"], "id"), "value", rel=1e-6))
    text, _ = read_text(ctx.out("notes.txt"))
    r.check("text", 1, all_of({"number": as_number("1,234.5") is not None, "text": bool(text)}))
    r.check("problems", 1, no_problems([], "none"))
    return r
'''


def rehearse() -> dict:
    """Grade a made-up deliverable as a slot would; returns the result it would send (the
    caller only needs it to have run). sys.path and sys.modules are left as they were."""
    saved_path = list(sys.path)
    try:
        with tempfile.TemporaryDirectory(prefix="lastexam-rehearsal-") as tmp:
            root = Path(tmp)
            for name in ("task", "reference", "inputs", "output", "scratch"):
                (root / name).mkdir()
            (root / "task" / "grader.py").write_text(GRADER)
            rows = [{"id": "a", "value": 1.5}, {"id": "b", "value": 2.5}]
            (root / "reference" / "expected.json").write_text(
                json.dumps({"total": 4.0, "count": 2, "tags": ["x", "y"], "rows": rows}))
            data = b"id,value\na,1.5\nb,2.5\n"
            (root / "inputs" / "data.csv").write_bytes(data)
            (root / "output" / "result.json").write_text(
                json.dumps({"total": 4.0, "count": 2, "tags": ["y", "x"]}))
            (root / "output" / "table.csv").write_bytes(data)
            (root / "output" / "notes.txt").write_text("done\n")
            plain = GradeContext(root / "output", root / "reference", root / "inputs", root / "task",
                                 root / "scratch", inputs_after={"data.csv": hashlib.sha256(data).hexdigest()})
            ctx = GradeContext.from_json(json.loads(json.dumps(plain.to_json())))
            return json.loads(ok_result(ctx, run_grader(ctx)))
    finally:
        sys.path[:] = saved_path
        sys.modules.pop("lastexam_task_grader", None)
