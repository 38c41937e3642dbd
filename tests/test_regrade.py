"""regrade: stored outputs graded again with the current grader; old rubric kept, newest used."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_json

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_regrade_keeps_old_grade_and_uses_new(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    run = tmp_path / "run"
    first = run_json("run", task, "--agent", "oracle", "--attempts", "2", "--out", run)
    assert first["summary"]["fpr"] == 1.0
    old_version = run_json("show", run)["metrics"]["grader_versions"]

    grader = task / "grader.py"
    grader.write_text(grader.read_text().replace(
        '    return r\n',
        '    r.check("count is even", 1, get(result, "count") == 4)\n    return r\n',
    ))
    regraded = run_json("regrade", run)
    assert len(regraded) == 2
    assert all(r["old_score"] == 1.0 and r["new_score"] == 0.75 for r in regraded)
    assert all(r["old_version"] != r["new_version"] for r in regraded)

    shown = run_json("show", run)
    assert shown["summary"]["ms"] == 0.75 and shown["summary"]["fpr"] == 0.0
    assert shown["metrics"]["grader_versions"] == [regraded[0]["new_version"]]
    assert old_version != shown["metrics"]["grader_versions"]
    with sqlite3.connect(run / "results.db") as db:
        grades = db.execute("SELECT trial_id, score FROM grades ORDER BY grade_id").fetchall()
    assert [g[1] for g in grades] == [1.0, 1.0, 0.75, 0.75]  # both rubrics are kept
    folder = run / "trials" / regraded[0]["trial_id"] / "grades"
    assert len(list(folder.iterdir())) == 1


def test_regrade_one_task_and_grader_failure(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    run = tmp_path / "run"
    run_json("run", task, "--agent", "oracle", "--out", run)
    (task / "grader.py").write_text("def grade(ctx):\n    raise ValueError('new grader is broken')\n")
    assert run_json("regrade", run, "--task", "no-such-task") == []
    regraded = run_json("regrade", run, "--task", "column-total")
    assert regraded[0]["status"] == "grader_error" and regraded[0]["new_score"] is None
    shown = run_json("show", run)
    assert shown["summary"]["statuses"] == {"grader_error": 1}
    # a grader failure counts as 0: output that breaks a grader must not leave the metrics
    assert shown["summary"]["excluded"] == 0 and shown["summary"]["ms"] == 0.0
