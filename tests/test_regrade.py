"""regrade: stored outputs graded again with the current grader; old rubric kept, newest used."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import threading
import urllib.request
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_cli, run_json
from lastexam.store.db import Store
from lastexam.store.files import trial_document
from lastexam.store.models import SCHEMA_VERSION

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_regrade_keeps_old_grade_and_uses_new(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    run = tmp_path / "run"
    first = run_json("run", task, "--agent", "oracle", "--attempts", "2", "--out", run)
    assert first["metrics"]["overall"]["fpr"]["value"] == 1.0
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
    overall = shown["metrics"]["overall"]
    assert overall["ms"]["value"] == 0.75 and overall["fpr"]["value"] == 0.0
    assert shown["metrics"]["grader_versions"] == [regraded[0]["new_version"]]
    assert old_version != shown["metrics"]["grader_versions"]
    with sqlite3.connect(run / "results.db") as db:
        grades = db.execute("SELECT trial_id, score FROM grades ORDER BY grade_id").fetchall()
    assert [g[1] for g in grades] == [1.0, 1.0, 0.75, 0.75]  # both rubrics are kept
    folder = run / "trials" / regraded[0]["trial_id"] / "grades"
    assert len(list(folder.iterdir())) == 1
    store = Store(run)
    try:  # each trial's record carries its newest rubric's checks, once each
        names = [[c.name for c in t.grade.checks] for t in store.trials()]
    finally:
        store.close()
    assert len(names) == 2 and all(n.count("count is even") == 1 for n in names), names


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
    assert shown["metrics"]["statuses"] == {"grader_error": 1}
    # a grader failure counts as 0: output that breaks a grader must not leave the metrics
    overall = shown["metrics"]["overall"]
    assert overall["excluded"] == 0 and overall["ms"]["value"] == 0.0


def test_a_trial_the_policy_did_not_grade_is_not_regraded(tmp_path: Path) -> None:
    """Processes of the agent that survived the teardown may have written its output after
    the end: the error policy does not grade it (the trial counts as 0), nor may a regrade."""
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    run = tmp_path / "run"
    run_json("run", task, "--agent", "oracle", "--out", run)
    with sqlite3.connect(run / "results.db") as db:  # as trial.py records survivors
        db.execute(
            "UPDATE trials SET status='agent_error', score=NULL, full_pass=0, grade_id=NULL,"
            " policy_kind='agent_survivors', ended_by='survivors',"
            " record_json=json_set(record_json, '$.ended_by', 'survivors')"
        )
    [regraded] = run_json("regrade", run)
    assert regraded["new_score"] is None and "not graded" in regraded["note"], regraded
    shown = run_json("show", run)["metrics"]
    assert shown["statuses"] == {"agent_error": 1} and shown["overall"]["ms"]["value"] == 0.0


def _view_trial_page(run: Path, trial_id: str) -> str:
    """The viewer's trial page, served by the real viewer server (in this process)."""
    from lastexam.viewer.server import serve

    server = serve([run])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/run/{run.name}/trial/{trial_id}") as r:
            return r.read().decode()
    finally:
        server.shutdown()
        server.server_close()


def _pct(score: float | None) -> str:
    return "-" if score is None else f"{100 * score:.1f}%"


def assert_every_reader_says(run: Path, tmp_path: Path, status: str, score: float | None) -> None:
    """show, show --json, report (HTML, CSV, JSON), the viewer's trial page, trial.json and the
    store all tell the same story about the run's one trial."""
    shown = run_json("show", run)
    [trial] = shown["trials"]
    tid = trial["trial_id"]
    assert (trial["status"], trial["score"]) == (status, score)
    assert shown["metrics"]["statuses"] == {status: 1}
    assert shown["metrics"]["overall"]["ms"]["value"] == (score or 0.0)

    human = run_cli("show", run).stdout
    line = next(ln for ln in human.splitlines() if "column-total" in ln)
    assert status in line and _pct(score) in line

    html, board, metrics = tmp_path / "r.html", tmp_path / "b.csv", tmp_path / "m.json"
    run_cli("report", run, "--html", html, "--csv", board, "--json", metrics)
    text = html.read_text()
    assert re.findall(rf"{re.escape(tid)} &middot; (\w+) &middot; score ([^<&\s]+)", text) == [
        (status, _pct(score))
    ]
    [row] = list(csv.DictReader(board.open()))
    assert float(row["ms"]) == (score or 0.0)
    exported = json.loads(metrics.read_text())
    assert exported["statuses"] == {status: 1} and exported == shown["metrics"]

    page = _view_trial_page(run, tid)
    assert re.search(r"<td>status</td><td>(\w+)</td>", page)[1] == status
    assert re.search(r"<td>score</td><td><span class=\w+>([^<]+)</span>", page)[1] == _pct(score)
    assert ("<h2>Error</h2>" in page) == (status == "grader_error")

    kind = {"completed": "completed", "grader_error": "grader_failed"}[status]
    written = json.loads((run / "trials" / tid / "trial.json").read_text())
    assert (written["status"], written["score"], written["policy"]["kind"]) == (status, score, kind)
    assert "status" not in written["policy"]  # one status per trial
    store = Store(run)
    try:
        [record] = store.trials()
        assert (record.status, record.score, record.policy.kind) == (status, score, kind)
        assert (run / "trials" / tid / "trial.json").read_text() == trial_document(record)
        [body] = store.conn.execute("SELECT record_json FROM trials").fetchone()
    finally:
        store.close()
    assert not {"status", "score", "full_pass", "policy", "error"} & set(json.loads(body))


def test_regraded_grader_error_agrees_in_every_reader(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    good = (task / "grader.py").read_text()
    (task / "grader.py").write_text("def grade(ctx):\n    raise ValueError('grader is broken')\n")
    run = tmp_path / "run"
    run_json("run", task, "--agent", "oracle", "--out", run)
    assert_every_reader_says(run, tmp_path, "grader_error", None)

    (task / "grader.py").write_text(good)
    [regraded] = run_json("regrade", run)
    assert (regraded["status"], regraded["new_score"]) == ("completed", 1.0)
    assert_every_reader_says(run, tmp_path, "completed", 1.0)
    with sqlite3.connect(run / "results.db") as db:  # the failed grade stays in the history
        assert db.execute("SELECT ok, score FROM grades ORDER BY grade_id").fetchall() == [
            (0, None), (1, 1.0)
        ]


# A run recorded by schema 2 (lastexam before this change) of the story above: a grader_error
# regraded to completed, whose record_json and trial.json still said grader_error.
V2_STORE = Path(__file__).parent / "data" / "stores" / "v2-regraded"


def test_schema_2_store_is_migrated_and_agrees(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(V2_STORE / "trials", run / "trials")
    with sqlite3.connect(run / "results.db") as db:
        db.executescript((V2_STORE / "results.sql").read_text())
    stale = json.loads(next((run / "trials").glob("*/trial.json")).read_text())
    assert stale["status"] == "grader_error"  # the bug, as schema 2 left it
    assert_every_reader_says(run, tmp_path, "completed", 1.0)
    with sqlite3.connect(run / "results.db") as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert db.execute("SELECT policy_kind, retries FROM trials").fetchall() == [("completed", 0)]
        assert db.execute("SELECT ok FROM grades ORDER BY grade_id").fetchall() == [(0,), (1,)]


def test_schema_2_store_that_cannot_be_migrated_is_left_alone(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with sqlite3.connect(run / "results.db") as db:
        db.executescript((V2_STORE / "results.sql").read_text())
        db.execute("UPDATE trials SET record_json = '{not json'")
    shown = run_cli("show", run, check=False)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert f"cannot migrate the results store from schema 2 to {SCHEMA_VERSION}" in shown.stderr
    assert "results.db" in shown.stderr
    with sqlite3.connect(run / "results.db") as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("2",)
        assert "policy_kind" not in [c[1] for c in db.execute("PRAGMA table_info(trials)")]
