"""The warm worker's rehearsal (grading/rehearsal.py): a whole grading by the library's own
grader that passes, and leaves sys.path, the task grader's module name and the disk as they
were (the modules it imports stay: loading them is its point)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from lastexam.grading.rehearsal import rehearse


def test_the_rehearsal_grades_in_full_and_leaves_nothing_behind() -> None:
    path = list(sys.path)
    before = set(Path(tempfile.gettempdir()).glob("lastexam-rehearsal-*"))
    result = rehearse()
    assert result["status"] == "ok"
    rubric = result["rubric"]
    assert rubric["score"] == 1.0 and rubric["full_pass"], rubric
    assert len(rubric["checks"]) >= 9  # the tamper gate and every check of its grader
    assert sys.path == path and "lastexam_task_grader" not in sys.modules
    assert set(Path(tempfile.gettempdir()).glob("lastexam-rehearsal-*")) == before
