"""The trial lifecycle end to end through the real CLI: calibration agents, grader failures,
resume after SIGKILL, show and validate."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import (
    COLUMN_TOTAL,
    Point,
    processes_named,
    run_cli,
    run_command_agent,
    run_json,
    run_watching,
    trial_dir,
)
from lastexam.paths import lastexam_home

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_oracle_scores_one_and_nop_zero(tmp_path: Path) -> None:
    oracle = run_json("run", COLUMN_TOTAL, "--agent", "oracle", "--out", tmp_path / "o")
    nop = run_json("run", COLUMN_TOTAL, "--agent", "nop", "--out", tmp_path / "n")
    assert oracle["metrics"]["overall"]["fpr"]["value"] == 1.0 and oracle["trials"][0]["score"] == 1.0
    assert nop["metrics"]["overall"]["fpr"]["value"] == 0.0 and nop["trials"][0]["score"] == 0.0
    assert nop["trials"][0]["status"] == "completed"
    [cell] = oracle["metrics"]["leaderboard"]
    assert cell["by_tier"]["near-term"]["fpr"]["value"] == 1.0
    assert cell["by_cluster"]["other"]["trials"] == 1
    folder = trial_dir(tmp_path / "o", oracle["trials"][0])
    assert (folder / "output" / "result.json").is_file()
    assert (folder / "grader" / "result.json").is_file()
    repro = json.loads((folder / "trial.json").read_text())["repro"]
    for field in ("task_hash", "grader_version", "environment_fingerprint", "harness_version", "host",
                  "agent_version"):
        assert repro[field], field  # recorded, not left at its empty default


def _task_with_grader(tmp_path: Path, grader: str, extra_toml: str = "") -> Path:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    (task / "grader.py").write_text(grader)
    if extra_toml:
        (task / "task.toml").write_text((task / "task.toml").read_text() + extra_toml)
    return task


def test_grader_that_raises_is_grader_error_not_zero(tmp_path: Path) -> None:
    task = _task_with_grader(tmp_path, "def grade(ctx):\n    raise RuntimeError('broken grader')\n")
    trial = run_json("run", task, "--agent", "oracle", "--out", tmp_path / "run")["trials"][0]
    assert trial["status"] == "grader_error"
    assert trial["score"] is None
    assert "broken grader" in trial["error"]


def test_grader_that_hangs_is_stopped(tmp_path: Path) -> None:
    """A grader that never returns, with a child of its own, is stopped at its time limit: the
    trial ends (it would not otherwise) as a grader_error, and no process of the grader is left."""
    marker = f"{100_000 + os.getpid()}.{uuid.uuid4().int % 10**9:09d}"  # names its sleep
    task = _task_with_grader(
        tmp_path, "import subprocess\nimport time\n\n\ndef grade(ctx):\n"
        f"    subprocess.Popen(['sleep', '{marker}'])\n    while True:\n        time.sleep(1)\n",
        "\n[limits]\ngrader_timeout_s = 5\n",
    )
    at_record: list[list[str]] = []  # the grader's processes once grading is over

    def on_point(point: Point, _proc: subprocess.Popen) -> None:
        if point.phase == "record":
            at_record.append(processes_named(marker))

    watched = run_watching(["run", task, "--agent", "oracle", "--out", tmp_path / "run", "--json"],
                           tmp_path / "watch", on_point, delays={"record": 1})
    assert watched.returncode == 0, watched.stderr[-2000:]
    trial = json.loads(watched.stdout)["trials"][0]
    assert trial["status"] == "grader_error" and "timeout" in trial["error"]
    assert at_record == [[]]
    assert processes_named(marker) == []


def test_grader_returning_garbage_is_grader_error(tmp_path: Path) -> None:
    task = _task_with_grader(tmp_path, "def grade(ctx):\n    return 1.0\n")
    trial = run_json("run", task, "--agent", "oracle", "--out", tmp_path / "run")["trials"][0]
    assert trial["status"] == "grader_error" and "expected a Rubric" in trial["error"]


def test_grading_sandbox_is_read_only_but_its_scratch(tmp_path: Path) -> None:
    """The grader sees the outputs, the task and the system as a read-only file system (not
    merely folders it does not own: new files fail with EROFS), and writes to its scratch."""
    task = _task_with_grader(
        tmp_path, "import errno\n\n\ndef grade(ctx):\n    seen = []\n"
        "    for p in ('/grade/output/x', '/grade/task/x', '/x', '/usr/x', '/grade/scratch/x'):\n"
        "        try:\n            open(p, 'a').close()\n            seen.append(f'{p}: written')\n"
        "        except OSError as e:\n            seen.append(f'{p}: {errno.errorcode[e.errno]}')\n"
        "    raise RuntimeError('SEEN ' + ' | '.join(seen) + ' END')\n",
    )
    trial = run_json("run", task, "--agent", "oracle", "--out", tmp_path / "run")["trials"][0]
    seen = trial["error"].rsplit("SEEN ", 1)[1].split(" END", 1)[0].split(" | ")  # after its source line
    assert seen == [f"{p}: EROFS" for p in ("/grade/output/x", "/grade/task/x", "/x", "/usr/x")] + [
        "/grade/scratch/x: written"]


def test_score_is_recomputed_on_the_host_from_the_checks(tmp_path: Path) -> None:
    """A result that claims a score its checks do not earn is scored from its checks."""
    task = _task_with_grader(
        tmp_path, "import json\nimport os\nimport stat\n\n\ndef grade(ctx):\n"
        "    check = {'name': 'total', 'weight': 1, 'gate': False, 'passed': False, 'points': 0.0,\n"
        "             'message': 'wrong', 'evidence': {}}\n"
        "    rubric = {'score': 1.0, 'full_pass': True, 'checks': [check]}\n"
        "    text = json.dumps({'status': 'ok', 'rubric': rubric}).encode()\n"
        "    for fd in range(3, 64):  # the harness's result channel, written to directly\n"
        "        try:\n"
        "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "                os.write(fd, text)\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n",
    )
    trial = run_json("run", task, "--agent", "oracle", "--out", tmp_path / "run")["trials"][0]
    assert trial["status"] == "completed", trial["error"]
    assert trial["score"] == 0.0 and [c["passed"] for c in trial["checks"]] == [False]


def test_agent_exit_code_is_agent_error_and_still_graded(tmp_path: Path) -> None:
    cmd = "echo '{\"total\": 6.75, \"count\": 3}' > /task/output/result.json; exit 3"
    trial = run_command_agent(cmd, tmp_path / "run")
    assert trial["status"] == "agent_error" and trial["score"] == 1.0


def test_tampered_input_fails_the_gate(tmp_path: Path) -> None:
    cmd = (
        "printf 'x\\n1\\n' > /task/inputs/data.csv; "
        "echo '{\"total\": 1, \"count\": 1}' > /task/output/result.json"
    )
    trial = run_command_agent(cmd, tmp_path / "run")
    gate = next(c for c in trial["checks"] if c["name"] == "inputs untampered")
    assert not gate["passed"] and trial["score"] == 0.0


def test_show_matches_the_run(tmp_path: Path) -> None:
    ran = run_json("run", COLUMN_TOTAL, "--agent", "oracle", "--attempts", "2", "--out", tmp_path / "r")
    shown = run_json("show", tmp_path / "r")
    assert shown["metrics"] == ran["metrics"]
    assert [t["trial_id"] for t in shown["trials"]] == [t["trial_id"] for t in ran["trials"]]
    human = run_cli("show", tmp_path / "r").stdout
    assert "column-total" in human and "FPR" in human


def test_existing_run_dir_needs_resume(tmp_path: Path) -> None:
    run_json("run", COLUMN_TOTAL, "--agent", "nop", "--out", tmp_path / "r")
    again = run_cli("run", COLUMN_TOTAL, "--agent", "nop", "--out", tmp_path / "r", check=False)
    assert again.returncode == 2 and "--resume" in again.stderr


def _count_rows(run: Path) -> dict[str, int]:
    with sqlite3.connect(run / "results.db") as db:
        rows = db.execute("SELECT trial_id, COUNT(*) FROM trials GROUP BY trial_id").fetchall()
    return dict(rows)


def _records(run: Path) -> dict[str, tuple]:
    """Everything recorded of each trial: its row, its grades and checks, and the bytes of every
    file in its folder (trial.json included)."""
    with sqlite3.connect(run / "results.db") as db:
        ids = [r[0] for r in db.execute("SELECT trial_id FROM trials ORDER BY trial_id")]
        records = {}
        for trial_id in ids:
            row = db.execute("SELECT * FROM trials WHERE trial_id = ?", (trial_id,)).fetchall()
            grades = db.execute("SELECT * FROM grades WHERE trial_id = ? ORDER BY grade_id",
                                (trial_id,)).fetchall()
            checks = db.execute("SELECT * FROM checks WHERE grade_id IN (SELECT grade_id FROM grades "
                                "WHERE trial_id = ?) ORDER BY grade_id, idx", (trial_id,)).fetchall()
            folder = run / "trials" / trial_id
            files = {p.relative_to(folder).as_posix(): p.read_bytes()
                     for p in sorted(folder.rglob("*")) if p.is_file()}
            assert "trial.json" in files, trial_id
            records[trial_id] = (row, grades, checks, files)
    return records


# Each trial phase the harness marks with a fault point; the run is killed there, at the third
# time a trial reaches it (with two workers, so at least one trial is recorded by then).
TRIAL_PHASES = ("stage", "agent", "collect", "grade", "record", "commit", "cleanup")


@pytest.mark.parametrize("phase", TRIAL_PHASES)
def test_resume_after_sigkill_records_each_trial_once(tmp_path: Path, phase: str) -> None:
    run = tmp_path / "run"
    cmd = "echo '{\"total\": 6.75, \"count\": 3}' > /task/output/result.json"
    reached: list[Point] = []

    def on_point(point: Point, proc: subprocess.Popen) -> None:
        if point.phase == phase:
            reached.append(point)
            if len(reached) == 3:  # the harness waits 2 s at this point: the kill lands there
                proc.send_signal(signal.SIGKILL)

    killed = run_watching(["run", COLUMN_TOTAL, "--agent", "command", "--agent-arg", f"cmd={cmd}",
                           "--attempts", "8", "--concurrency", "2", "--out", run],
                          tmp_path / "watch", on_point, delays={phase: 2})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    victim = reached[2].trial_id
    before = _records(run)
    assert 1 <= len(before) < 8
    # A trial killed at clean-up was committed; one killed earlier was not.
    assert (victim in before) == (phase == "cleanup")
    resumed = run_json("run", "--resume", "--out", run)
    ids = [t["trial_id"] for t in resumed["trials"]]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert all(t["score"] == 1.0 for t in resumed["trials"])
    assert set(_count_rows(run).values()) == {1}
    after = _records(run)
    assert sorted(after) == sorted(ids)
    for trial_id, record in before.items():
        assert after[trial_id] == record, f"{trial_id}, recorded before the kill, changed on resume"
    folders = sorted(p.name for p in (run / "trials").iterdir())
    assert folders == sorted(ids)
    with sqlite3.connect(run / "results.db") as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    assert _sandboxes_of(run_id) == []
    assert not (lastexam_home() / "work" / run_id).exists()


def _sandboxes_of(run_id: str) -> list[str]:
    """bwrap processes still alive for this run: their mounts name its work area, whose folder
    is the run id."""
    alive = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
        except OSError:
            continue
        if b"bwrap" in text and f"/work/{run_id}/".encode() in text:
            alive.append(cmdline.parent.name)
    return alive


def test_validate_passes_good_task_and_fails_bad_fixture(tmp_path: Path) -> None:
    good = run_cli("validate", COLUMN_TOTAL, "--json")
    assert good.returncode == 0
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    fixture = task / "fixtures" / "negative" / "partial" / "fixture.toml"
    fixture.write_text(fixture.read_text().replace("score_min = 0.3", "score_min = 0.5").replace(
        "score_max = 0.4", "score_max = 0.6"))
    bad = run_cli("validate", task, "--json", check=False)
    assert bad.returncode == 1
    assert '"negative fixture partial"' in bad.stdout


def test_missing_environment_stops_before_any_agent(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('environment = "base"', 'environment = "nonexistent"'))
    proc = run_cli("run", task, "--agent", "oracle", "--out", tmp_path / "r", check=False)
    assert proc.returncode == 2 and "no environment named 'nonexistent'" in proc.stderr
